//! A program that prints `BENCH` lines (RootStream's benches), run a number of times as its
//! CI runs it: every run's lines are repetitions of one run, so `max` over them is the max of
//! the runs' maxima and each run's figures are kept.

use super::launch::Reach;
use super::output::{Tail, spinner, wait_for};
use crate::env::Stream;
use crate::error::{Error, Result, visible_lines};
use crate::ingest::Input;
use crate::ingest::bench::BenchParser;
use crate::interrupt;
use crate::model::{Note, Source, SourceKind, redact};
use std::io::BufReader;
use std::process::ExitStatus;

/// A program and how many times to run it.
pub struct BenchProgram<'a> {
    pub command: &'a [String],
    pub runs: usize,
    pub progress: Option<&'a Stream>,
}

impl BenchProgram<'_> {
    /// Runs the program `runs` times in `reach`, reading its BENCH lines. A run that prints
    /// none is the program's failure (exit 6, with its last lines); one that prints them and
    /// exits non-zero (RootStream's benches exit 1 on their own target) is judged by its lines,
    /// and said. An interrupt keeps the runs that finished.
    pub fn run(&self, reach: Reach) -> Result<(Input, bool)> {
        let shown = redact::command_line(self.command).join(" ");
        let mut parser = BenchParser::new(&shown);
        let mut notes = Vec::new();
        reach.interrupt.install();
        let cpu = reach.clock.cpu();
        let mut interrupted = false;
        for run in 1..=self.runs {
            if reach.interrupt.requested() {
                interrupted = true;
                break;
            }
            let before = parser.results();
            let (status, tail) = self.once(reach, &mut parser, run)?;
            interrupted |= reach.interrupt.requested();
            if parser.results() == before && !interrupted {
                return Err(Error::Peer(format!(
                    "`{shown}` (run {run} of {}) printed no BENCH line ({status}); the last of \
                     what it said:\n{}",
                    self.runs,
                    visible_lines(&tail)
                )));
            }
            if !status.success() && !interrupted {
                notes.push(Note::warning(format!(
                    "`{shown}` (run {run} of {}) ended with {status} after printing its BENCH \
                     lines: they are judged as the others",
                    self.runs
                )));
            }
        }
        let source = Source {
            kind: SourceKind::Command,
            format: "bench".into(),
            path: None,
            command: self.command.to_vec(),
        };
        let mut input = parser.into_input(source)?;
        input.runs[0].environment = reach.environment_since(cpu);
        input.notes.extend(notes);
        Ok((input, interrupted))
    }

    /// One run: its output read into `parser`; its exit and its last lines.
    fn once(
        &self,
        reach: Reach,
        parser: &mut BenchParser,
        run: usize,
    ) -> Result<(ExitStatus, Vec<String>)> {
        let (program, args) = (self.command.split_first())
            .ok_or_else(|| Error::Input("check --runs: no command after `--`".into()))?;
        let mut child = reach
            .harness
            .spawn(program, args, None)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    Error::Environment(format!("`{program}` was not found"))
                }
                _ => Error::Environment(format!("could not start `{program}`: {e}")),
            })?;
        interrupt::set_child_group(child.group());
        let tail = Tail::default();
        let stderr = child.take_stderr().map(|stderr| tail.follow(stderr));
        let what = format!("run {run} of {}", self.runs);
        let progress = spinner(self.progress, program, &what);
        if let Some(stdout) = child.take_stdout() {
            let mut reader = BufReader::new(stdout);
            crate::ingest::for_each_text_line(&mut reader, program, |line| {
                if let Some(line) = line {
                    tail.push(line.to_string());
                }
                parser.feed(line);
            })?;
        }
        let status = wait_for(child.as_mut(), program, stderr, &progress)?;
        Ok((status, tail.lines()))
    }
}
