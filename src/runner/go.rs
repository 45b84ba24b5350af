//! Runs `go test -bench` and parses its output while it streams.

use super::counts::Measure;
use super::go_counts;
use super::launch::Reach;
use super::output::{Outcome, Tail, spinner, wait_for};
use crate::atomic_file::OutputFile;
use crate::env::Interrupt;
use crate::error::{Error, Result};
use crate::ingest::for_each_line;
use crate::ingest::go::{GoParser, LineKind};
use crate::interrupt;
use crate::model::{ConfigEntry, Source, timestamp};
use indicatif::ProgressBar;
use std::io::{BufReader, LineWriter, Read, Write};
use std::path::PathBuf;

#[derive(Clone)]
pub struct GoTest {
    pub package: String,
    pub dir: Option<PathBuf>,
    pub bench: String,
    pub count: u32,
    /// `-benchtime`; `None` leaves go's own (one second per sample).
    pub benchtime: Option<String>,
    pub extra: Vec<String>,
    pub raw: Option<PathBuf>,
    /// Where progress is drawn, if anywhere.
    pub progress: Option<crate::env::Stream>,
    /// Time (go's own ns/op, B/op, allocs/op), counted instructions, or both.
    pub measure: Measure,
    /// How many times each benchmark's instructions are counted: until they are enough
    /// ([`crate::runner::counts::enough`]) unless given.
    pub counted: Option<u32>,
}

impl GoTest {
    /// The `go test` arguments, flags first, extra arguments after the package.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "test",
            "-run",
            "^$",
            "-bench",
            &self.bench,
            "-benchmem",
            "-count",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(self.count.to_string());
        if let Some(benchtime) = &self.benchtime {
            args.extend(["-benchtime".to_string(), benchtime.clone()]);
        }
        args.extend(["-p".to_string(), "1".to_string(), self.package.clone()]);
        args.extend(self.extra.iter().cloned());
        args
    }

    /// Runs `go test` in `reach` (the real processes, or a test double), then, when
    /// instructions are measured, counts each benchmark it ran (`go_counts`): beside the times,
    /// or, measuring instructions alone, instead of a run at one iteration each.
    pub fn run(&self, reach: Reach) -> Result<Outcome> {
        if !self.measure.instructions {
            return self.run_timed(reach);
        }
        let version = reach.harness.valgrind()?;
        let listing = GoTest {
            benchtime: Some("1x".into()),
            count: 1,
            raw: None,
            ..self.clone()
        };
        let outcome = match self.measure.time {
            true => self.run_timed(reach)?,
            false => listing.run_timed(reach)?,
        };
        let input = match outcome.input {
            Some(input) if outcome.status.success() && !outcome.interrupted => input,
            input => return Ok(Outcome { input, ..outcome }),
        };
        let benches = go_counts::counting(&input);
        let scratch = tempfile::Builder::new()
            .prefix("latkit-go-count-")
            .tempdir()
            .map_err(|e| Error::Environment(format!("a temporary directory: {e}")))?;
        let how = (self.dir.as_deref(), &self.extra[..]);
        let built = go_counts::build(reach, &benches, how, scratch.path())?;
        let progress = self.progress.as_ref();
        let counts = match go_counts::count_all(reach, &built, &benches, self.counted, progress) {
            Err(Error::Interrupted) => {
                let input = Some(input).filter(|_| self.measure.time);
                return Ok(Outcome {
                    input,
                    interrupted: true,
                    ..outcome
                });
            }
            counts => counts?,
        };
        let input = go_counts::with_counts(input, counts, self.measure.time, &version);
        Ok(Outcome {
            input: Some(input),
            ..outcome
        })
    }

    /// Runs `go test` itself: its benchmarks timed as go times them.
    fn run_timed(&self, reach: Reach) -> Result<Outcome> {
        // Written line by line as it arrives, renamed into place when go is done.
        let mut raw = self
            .raw
            .as_deref()
            .map(|path| OutputFile::create(path).map(LineWriter::new))
            .transpose()?;
        let args = self.args();
        reach.interrupt.install();
        let started = reach.clock.now();
        // Counts do not see other processes: a counted run carries no busy-machine check.
        let cpu = reach.clock.cpu().filter(|_| !self.measure.counts_only());
        let mut child = reach
            .harness
            .spawn("go", &args, self.dir.as_deref())
            .map_err(not_started)?;
        interrupt::set_child_group(child.group());

        let tail = Tail::default();
        let stderr = child.take_stderr().map(|stderr| tail.follow(stderr));
        let progress = spinner(self.progress.as_ref(), "go test", "building…");
        let mut parser = GoParser::new("go test");
        let mut raw_error = None;
        if let Some(stdout) = child.take_stdout() {
            let copies = Copies {
                raw: raw.as_mut(),
                raw_error: &mut raw_error,
                tail: &tail,
                progress: &progress,
                interrupt: reach.interrupt,
            };
            stream(stdout, &mut parser, copies)?;
        }
        let status = wait_for(child.as_mut(), "go test", stderr, &progress)?;
        if let (Some(e), Some(path)) = (raw_error, &self.raw) {
            return Err(Error::writing(&path.display().to_string(), e));
        }
        if let Some(file) = raw {
            let file = file
                .into_inner()
                .map_err(|e| Error::writing("--raw", e.into_error()))?;
            file.commit()?;
        }

        let out = parser.finish();
        let tail = tail.lines();
        let input = (!out.builder.is_empty()).then(|| {
            let mut environment = reach.environment_since(cpu);
            environment.toolchains = reach
                .harness
                .output("go", &["env", "GOVERSION"])
                .map(|value| ConfigEntry {
                    key: "go".to_string(),
                    value,
                })
                .into_iter()
                .collect();
            let source = Source {
                kind: crate::model::SourceKind::Command,
                format: "go".to_string(),
                path: self.dir.as_ref().map(|d| d.display().to_string()),
                command: std::iter::once("go".to_string()).chain(args).collect(),
            };
            let mut input = out.into_input(source, environment);
            input.runs[0].started = Some(timestamp(started));
            input.runs[0].ended = Some(timestamp(reach.clock.now()));
            input
        });
        Ok(Outcome {
            input,
            status,
            tail,
            interrupted: reach.interrupt.requested(),
        })
    }
}

/// Why `go` did not start, and what to do about it.
fn not_started(e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::Environment(
            "`go` was not found on PATH: install Go, or save the output of `go test -bench` and \
             use `latkit parse`"
                .to_string(),
        ),
        _ => Error::Environment(format!("could not start `go test`: {e}")),
    }
}

/// Where each line of go's output goes besides the parser.
struct Copies<'a> {
    raw: Option<&'a mut LineWriter<OutputFile>>,
    /// The first error writing `raw`, reported once go is done.
    raw_error: &'a mut Option<std::io::Error>,
    tail: &'a Tail,
    progress: &'a ProgressBar,
    interrupt: &'a dyn Interrupt,
}

/// Feeds go's standard output to the parser line by line as it arrives, copying each line to
/// the raw file and the failure tail and counting results on the progress line.
fn stream(stdout: Box<dyn Read + Send>, parser: &mut GoParser, mut copies: Copies) -> Result<()> {
    let mut results = 0usize;
    for_each_line(&mut BufReader::new(stdout), |line| {
        // An over-long line is kept as an empty one, so line numbers still match.
        let text = line.unwrap_or_default();
        if let Some(raw) = copies.raw.as_mut()
            && copies.raw_error.is_none()
            && let Err(e) = raw.write_all(text).and_then(|_| raw.write_all(b"\n"))
        {
            *copies.raw_error = Some(e);
        }
        copies.tail.push(String::from_utf8_lossy(text).into_owned());
        // After Ctrl-C go prints its reaction (a result line cut by `signal: interrupt`,
        // `FAIL pkg`): kept in the raw file, not read as results or failures.
        if copies.interrupt.requested() {
            return;
        }
        if let LineKind::Result { name } = parser.feed(line) {
            results += 1;
            copies
                .progress
                .set_message(format!("{results} results · {name}"));
        }
    })
    .map_err(|e| Error::io("go test output", e))
}

#[cfg(test)]
mod tests {
    use super::super::executor::{Executor, Process};
    use super::*;
    use std::cell::RefCell;
    use std::io::{Cursor, Read};
    use std::os::unix::process::ExitStatusExt;
    use std::path::Path;
    use std::process::ExitStatus;

    /// A `go` that prints what it is given and exits with `code`; or none at all.
    struct Scripted {
        stdout: &'static str,
        stderr: &'static str,
        code: i32,
        installed: bool,
        started: RefCell<Vec<Started>>,
    }

    /// What was started: program, arguments, directory.
    type Started = (String, Vec<String>, Option<PathBuf>);

    struct Finished {
        stdout: Option<&'static str>,
        stderr: Option<&'static str>,
        code: i32,
    }

    impl Process for Finished {
        fn take_stdout(&mut self) -> Option<Box<dyn Read + Send>> {
            self.stdout
                .take()
                .map(|s| Box::new(Cursor::new(s)) as Box<dyn Read + Send>)
        }

        fn take_stderr(&mut self) -> Option<Box<dyn Read + Send>> {
            self.stderr
                .take()
                .map(|s| Box::new(Cursor::new(s)) as Box<dyn Read + Send>)
        }

        fn group(&self) -> u32 {
            0
        }

        fn wait(&mut self) -> std::io::Result<ExitStatus> {
            Ok(ExitStatus::from_raw(self.code << 8))
        }
    }

    /// The scripted processes, with the system's clock, signals and host.
    fn on(exec: &Scripted) -> Reach<'_> {
        Reach {
            harness: exec,
            ..Reach::system()
        }
    }

    impl Executor for Scripted {
        fn spawn(
            &self,
            program: &str,
            args: &[String],
            dir: Option<&Path>,
        ) -> std::io::Result<Box<dyn Process>> {
            if !self.installed {
                return Err(std::io::ErrorKind::NotFound.into());
            }
            self.started.borrow_mut().push((
                program.to_string(),
                args.to_vec(),
                dir.map(Path::to_path_buf),
            ));
            Ok(Box::new(Finished {
                stdout: Some(self.stdout),
                stderr: Some(self.stderr),
                code: self.code,
            }))
        }

        fn output(&self, _program: &str, _args: &[&str]) -> Option<String> {
            Some("go1.99.0".to_string())
        }

        fn count(
            &self,
            _count: &crate::runner::counts::Count,
        ) -> std::io::Result<crate::runner::counts::Counted> {
            Err(std::io::ErrorKind::Unsupported.into())
        }
    }

    fn go(stdout: &'static str, stderr: &'static str, code: i32) -> Scripted {
        Scripted {
            stdout,
            stderr,
            code,
            installed: true,
            started: RefCell::new(Vec::new()),
        }
    }

    fn test_in(dir: &str, raw: Option<PathBuf>) -> GoTest {
        GoTest {
            package: "./...".into(),
            dir: Some(dir.into()),
            bench: ".".into(),
            count: 2,
            benchtime: Some("100x".into()),
            extra: Vec::new(),
            raw,
            progress: None,
            measure: Measure::TIME,
            counted: Some(1),
        }
    }

    #[test]
    fn streams_results_keeps_the_raw_output_and_records_the_toolchain() {
        let output = "goos: linux\npkg: example.com/p\nBenchmarkA-2 100 12.5 ns/op\nBenchmarkA-2 100 13 ns/op\nPASS\n";
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("raw.txt");
        let exec = go(output, "", 0);
        let outcome = test_in("/src/p", Some(raw.clone())).run(on(&exec)).unwrap();
        let (program, args, cwd) = exec.started.borrow()[0].clone();
        assert_eq!(program, "go");
        assert_eq!(
            args.join(" "),
            "test -run ^$ -bench . -benchmem -count 2 -benchtime 100x -p 1 ./..."
        );
        assert_eq!(cwd.as_deref(), Some(Path::new("/src/p")));
        assert!(outcome.status.success() && !outcome.interrupted);
        let input = outcome.input.unwrap();
        let run = &input.runs[0];
        assert_eq!(run.benchmarks[0].metrics[0].values, [12.5, 13.0]);
        assert_eq!(run.source.kind, crate::model::SourceKind::Command);
        assert_eq!(run.environment.toolchains[0].value, "go1.99.0");
        assert_eq!(run.config[1].value, "example.com/p");
        assert_eq!(std::fs::read_to_string(&raw).unwrap(), output);
    }

    #[test]
    fn a_failing_go_test_keeps_the_tail_of_both_streams() {
        let exec = go(
            "BenchmarkA-2 100 5 ns/op\n--- FAIL: BenchmarkB\n",
            "exit status 1\n",
            1,
        );
        let outcome = test_in(".", None).run(on(&exec)).unwrap();
        assert!(!outcome.status.success());
        assert!(outcome.tail.iter().any(|l| l == "--- FAIL: BenchmarkB"));
        assert!(outcome.tail.iter().any(|l| l == "exit status 1"));
        let input = outcome.input.unwrap();
        assert!(
            input
                .notes
                .iter()
                .any(|n| n.message.contains("go test reported: --- FAIL"))
        );
    }

    #[test]
    fn no_result_and_no_go_are_told_apart() {
        let outcome = test_in(".", None).run(on(&go("PASS\n", "", 0))).unwrap();
        assert!(outcome.input.is_none() && outcome.status.success());
        let missing = Scripted {
            installed: false,
            ..go("", "", 0)
        };
        let Err(err) = test_in(".", None).run(on(&missing)) else {
            panic!("ran without go");
        };
        assert!(
            err.to_string().contains("`go` was not found on PATH"),
            "{err}"
        );
    }

    #[test]
    fn builds_the_go_test_command() {
        let t = GoTest {
            package: "./e2e".into(),
            dir: None,
            bench: "Delay".into(),
            count: 3,
            benchtime: Some("1000x".into()),
            extra: vec!["-cpu".into(), "1,2".into()],
            raw: None,
            progress: None,
            measure: Measure::TIME,
            counted: Some(1),
        };
        assert_eq!(
            t.args().join(" "),
            "test -run ^$ -bench Delay -benchmem -count 3 -benchtime 1000x -p 1 ./e2e -cpu 1,2"
        );
    }
}
