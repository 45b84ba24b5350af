//! Runs a google/benchmark binary: its JSON goes to a file (every figure, the context), its
//! console table is read as it streams (progress, and what finished if the run is cut short).

use super::counts::Measure;
use super::gbench_counts;
use super::launch::Reach;
use super::output::{Outcome, Tail, spinner, wait_for};
use crate::atomic_file::OutputFile;
use crate::error::{Error, Result};
use crate::ingest::gbench::console::ConsoleParser;
use crate::ingest::gbench::json;
use crate::ingest::{Input, for_each_line};
use crate::interrupt;
use crate::model::{Note, Source, timestamp};
use std::io::BufReader;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

#[derive(Clone)]
pub struct GbenchRun {
    pub binary: PathBuf,
    /// `--benchmark_filter`.
    pub filter: Option<String>,
    /// `--benchmark_repetitions`: every repetition is kept, the aggregates only as a fallback.
    pub repetitions: u32,
    /// `--benchmark_min_time`, as the binary takes it (`0.5`, or `0.5s` / `100x` from 1.8).
    pub min_time: Option<String>,
    pub extra: Vec<String>,
    /// Keep the binary's JSON here.
    pub raw: Option<PathBuf>,
    /// Where progress is drawn, if anywhere.
    pub progress: Option<crate::env::Stream>,
    /// Time (the binary's own real and CPU time), counted instructions, or both.
    pub measure: Measure,
    /// How many times each benchmark's instructions are counted: until they are enough
    /// ([`crate::runner::counts::enough`]) unless given.
    pub counted: Option<u32>,
}

impl GbenchRun {
    /// The binary's arguments: JSON to `out`, plain console on stdout, then the extra ones.
    pub fn args(&self, out: &Path) -> Vec<String> {
        let mut args = vec![
            format!("--benchmark_out={}", out.display()),
            "--benchmark_out_format=json".to_string(),
            "--benchmark_color=false".to_string(),
            format!("--benchmark_repetitions={}", self.repetitions),
        ];
        if let Some(filter) = &self.filter {
            args.push(format!("--benchmark_filter={filter}"));
        }
        if let Some(min_time) = &self.min_time {
            args.push(format!("--benchmark_min_time={min_time}"));
        }
        args.extend(self.extra.iter().cloned());
        args
    }

    /// The binary as it is started: a bare name would be looked up on PATH, and a benchmark
    /// binary is a file here.
    fn program(&self) -> String {
        let program = self.binary.display().to_string();
        match self.binary.components().count() {
            1 => format!("./{program}"),
            _ => program,
        }
    }

    /// Runs the binary in `reach` (the real process, or a test double), then, when
    /// instructions are measured, counts each benchmark it runs (`gbench_counts`): beside the
    /// times, or alone.
    pub fn run(&self, reach: Reach) -> Result<Outcome> {
        if !self.measure.instructions {
            return self.run_timed(reach);
        }
        let version = reach.harness.valgrind()?;
        let timed = match self.measure.time {
            true => Some(self.run_timed(reach)?),
            false => None,
        };
        let (input, status, tail) = match timed {
            Some(t) if !t.status.success() || t.interrupted || t.input.is_none() => return Ok(t),
            Some(t) => (t.input, t.status, t.tail),
            None => (None, ExitStatus::from_raw(0), Vec::new()),
        };
        let program = self.program();
        let listed = gbench_counts::list(reach, &program, self.filter.as_deref())?;
        let progress = self.progress.as_ref();
        let counts = gbench_counts::count_all(reach, &program, &listed, self.counted, progress);
        let counts = match counts {
            Err(Error::Interrupted) => {
                return Ok(Outcome {
                    input,
                    status,
                    tail,
                    interrupted: true,
                });
            }
            counts => counts?,
        };
        let (counts, notes) = counts;
        let mut input = gbench_counts::with_counts(input, &listed, counts, reach, &version);
        input.notes.extend(notes);
        Ok(Outcome {
            input: Some(input),
            status,
            tail,
            interrupted: false,
        })
    }

    /// Runs the binary itself: its benchmarks timed as google/benchmark times them.
    fn run_timed(&self, reach: Reach) -> Result<Outcome> {
        // Counts do not see other processes: a counted run carries no busy-machine check.
        let cpu = reach.clock.cpu().filter(|_| !self.measure.counts_only());
        let out = JsonOut::open(self.raw.as_deref())?;
        let json_path = out.path().to_path_buf();
        let args = self.args(&json_path);
        let program = self.program();
        reach.interrupt.install();
        let started = reach.clock.now();
        let mut child = reach
            .harness
            .spawn(&program, &args, None)
            .map_err(|e| Error::starting(&e, not_started(&program, &e)))?;
        interrupt::set_child_group(child.group());
        let tail = Tail::default();
        let stderr = child.take_stderr().map(|stderr| tail.follow(stderr));
        let progress = spinner(self.progress.as_ref(), &program, "starting…");
        let mut console = ConsoleParser::new(&program);
        if let Some(stdout) = child.take_stdout() {
            for_each_line(&mut BufReader::new(stdout), |line| {
                let text = line.map(String::from_utf8_lossy);
                tail.push(text.as_deref().unwrap_or_default().to_string());
                if let Some(name) = console.feed(text.as_deref()) {
                    progress.set_message(format!("{} results · {name}", console.results()));
                }
            })
            .map_err(|e| Error::io(&program, e))?;
        }
        let status = wait_for(child.as_mut(), &program, stderr, &progress)?;

        let source = Source {
            kind: crate::model::SourceKind::Command,
            format: "gbench-json".to_string(),
            path: None,
            command: std::iter::once(program.clone()).chain(args).collect(),
        };
        let finished = status.success() && !reach.interrupt.requested();
        let from_json = finished
            .then(|| read_json(&json_path, &out.name(&program), source.clone()))
            .and_then(|json| json.ok());
        let input = match from_json {
            Some(input) => Some(input),
            None if console.is_empty() => None,
            None => {
                let mut input = console.into_input(Source {
                    format: "gbench".to_string(),
                    ..source
                });
                input.notes.push(Note::info(
                    "the run did not finish: these figures are from its console table, rounded to the digits printed",
                ));
                Some(input)
            }
        };
        let input = input.map(|mut input| {
            let run = &mut input.runs[0];
            // This host, as latkit sees it; google/benchmark's context stays in the config.
            run.environment = reach.environment_since(cpu);
            run.started = Some(timestamp(started));
            run.ended = Some(timestamp(reach.clock.now()));
            input
        });
        out.keep()?;
        Ok(Outcome {
            input,
            status,
            tail: tail.lines(),
            interrupted: reach.interrupt.requested(),
        })
    }
}

/// Where the binary writes its JSON: the temporary file a regular `--raw` file is renamed
/// from, or a private one (removed when done, and copied into a `--raw` that is a device or a
/// pipe, which the binary could not be read back from).
enum JsonOut {
    Raw(OutputFile),
    Copied(tempfile::NamedTempFile, OutputFile),
    Scratch(tempfile::NamedTempFile),
}

impl JsonOut {
    fn open(raw: Option<&Path>) -> Result<JsonOut> {
        let scratch = || {
            tempfile::Builder::new()
                .prefix("latkit-gbench-")
                .suffix(".json")
                .tempfile()
                .map_err(|e| Error::Environment(format!("creating a temporary file: {e}")))
        };
        Ok(match raw.map(OutputFile::create).transpose()? {
            Some(file) if file.temp_path().is_some() => JsonOut::Raw(file),
            Some(file) => JsonOut::Copied(scratch()?, file),
            None => JsonOut::Scratch(scratch()?),
        })
    }

    fn path(&self) -> &Path {
        match self {
            JsonOut::Raw(file) => file
                .temp_path()
                .expect("a regular file has a temporary path"),
            JsonOut::Copied(scratch, _) | JsonOut::Scratch(scratch) => scratch.path(),
        }
    }

    /// What messages call the JSON: the `--raw` file, or the binary's output.
    fn name(&self, program: &str) -> String {
        match self {
            JsonOut::Raw(file) | JsonOut::Copied(_, file) => file.name(),
            JsonOut::Scratch(_) => format!("{program} --benchmark_out"),
        }
    }

    /// Puts `--raw` in place; the private file goes.
    fn keep(self) -> Result<()> {
        match self {
            JsonOut::Raw(file) => file.commit(),
            JsonOut::Copied(scratch, mut file) => {
                let name = file.name();
                std::io::copy(
                    &mut scratch.reopen().map_err(|e| Error::io(&name, e))?,
                    &mut file,
                )
                .map_err(|e| Error::writing(&name, e))?;
                file.commit()
            }
            JsonOut::Scratch(_) => Ok(()),
        }
    }
}

fn read_json(path: &Path, name: &str, source: Source) -> Result<Input> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(name, e))?;
    json::read_from(name, &mut std::io::BufReader::new(file), source)
}

/// Why the benchmark binary did not start, in words that say what to do.
fn not_started(program: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{program}: no such benchmark binary"),
        std::io::ErrorKind::PermissionDenied => {
            format!("{program}: not executable (chmod +x, or build it first)")
        }
        _ => format!("could not start {program}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_benchmark_command() {
        let run = GbenchRun {
            binary: "./bm".into(),
            filter: Some("Lookup".into()),
            repetitions: 6,
            min_time: Some("0.05".into()),
            extra: vec!["--benchmark_enable_random_interleaving=true".into()],
            raw: None,
            progress: None,
            measure: Measure::TIME,
            counted: Some(1),
        };
        assert_eq!(
            run.args(Path::new("/tmp/o.json")).join(" "),
            "--benchmark_out=/tmp/o.json --benchmark_out_format=json --benchmark_color=false \
             --benchmark_repetitions=6 --benchmark_filter=Lookup --benchmark_min_time=0.05 \
             --benchmark_enable_random_interleaving=true"
        );
    }
}
