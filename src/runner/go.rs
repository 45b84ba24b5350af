//! Runs `go test -bench` and parses its output while it streams.

use crate::atomic_file::OutputFile;
use crate::error::{Error, Result};
use crate::ingest::go::{GoParser, LineKind};
use crate::ingest::{Input, for_each_line, new_run};
use crate::interrupt;
use crate::model::{ConfigEntry, Source, timestamp};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, LineWriter, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Lines of go's output kept to explain a failure.
const TAIL_LINES: usize = 25;

pub struct GoTest {
    pub package: String,
    pub dir: Option<PathBuf>,
    pub bench: String,
    pub count: u32,
    pub benchtime: String,
    pub extra: Vec<String>,
    pub raw: Option<PathBuf>,
    pub progress: bool,
}

pub struct Outcome {
    /// What was parsed; `None` when go printed no result at all.
    pub input: Option<Input>,
    pub status: ExitStatus,
    /// The last lines go printed (stdout and stderr), for failure messages.
    pub tail: Vec<String>,
    pub interrupted: bool,
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
        args.extend(["-benchtime".to_string(), self.benchtime.clone()]);
        args.extend(["-p".to_string(), "1".to_string(), self.package.clone()]);
        args.extend(self.extra.iter().cloned());
        args
    }

    pub fn run(&self) -> Result<Outcome> {
        // Written line by line as it arrives, renamed into place when go is done.
        let mut raw = self
            .raw
            .as_deref()
            .map(|path| OutputFile::create(path).map(LineWriter::new))
            .transpose()?;
        let args = self.args();
        let mut command = Command::new("go");
        command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: our interrupt handler decides when go stops, so that we
            // can still report what it finished.
            .process_group(0);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        interrupt::install();
        let started = SystemTime::now();
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Failed(
                "`go` was not found on PATH: install Go, or save the output of `go test -bench` \
                 and use `latkit parse`"
                    .to_string(),
            ),
            _ => Error::Failed(format!("could not start `go test`: {e}")),
        })?;
        interrupt::set_child_group(child.id());

        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
        let stderr = child.stderr.take().map(|stderr| {
            let tail = Arc::clone(&tail);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                    push_tail(&tail, line);
                }
            })
        });

        let progress = self.progress_bar();
        let mut parser = GoParser::new("go test");
        let mut results = 0usize;
        let mut raw_error = None;
        if let Some(stdout) = child.stdout.take() {
            let mut reader = BufReader::new(stdout);
            for_each_line(&mut reader, |line| {
                // An over-long line is kept as an empty one, so line numbers still match.
                let text = line.unwrap_or_default();
                if let Some(raw) = raw.as_mut()
                    && raw_error.is_none()
                    && let Err(e) = raw.write_all(text).and_then(|_| raw.write_all(b"\n"))
                {
                    raw_error = Some(e);
                }
                push_tail(&tail, String::from_utf8_lossy(text).into_owned());
                if let LineKind::Result { name } = parser.feed(line) {
                    results += 1;
                    progress.set_message(format!("{results} results · {name}"));
                }
            })
            .map_err(|e| Error::io("go test output", e))?;
        }
        let status = child
            .wait()
            .map_err(|e| Error::Failed(format!("waiting for go test: {e}")))?;
        interrupt::set_child_group(0);
        if let Some(handle) = stderr {
            let _ = handle.join();
        }
        progress.finish_and_clear();
        if let (Some(e), Some(path)) = (raw_error, &self.raw) {
            return Err(Error::io(&path.display().to_string(), e));
        }
        if let Some(file) = raw {
            let file = file
                .into_inner()
                .map_err(|e| Error::io("--raw", e.into_error()))?;
            file.commit()?;
        }

        let out = parser.finish();
        let tail = tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        let input = (!out.builder.is_empty()).then(|| {
            let mut environment = crate::host::capture();
            environment.toolchains = go_version().into_iter().collect();
            let source = Source {
                kind: "command".to_string(),
                format: "go".to_string(),
                path: self.dir.as_ref().map(|d| d.display().to_string()),
                command: std::iter::once("go".to_string()).chain(args).collect(),
            };
            let mut run = new_run(source, environment, out.config, out.builder);
            run.started = Some(timestamp(started));
            run.ended = Some(timestamp(SystemTime::now()));
            Input {
                runs: vec![run],
                notes: out.notes,
                malformed: out.malformed,
            }
        });
        Ok(Outcome {
            input,
            status,
            tail,
            interrupted: interrupt::requested(),
        })
    }

    fn progress_bar(&self) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} go test {elapsed} · {msg}") {
            bar.set_style(style);
        }
        bar.set_message("building…");
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }
}

fn push_tail(tail: &Mutex<VecDeque<String>>, line: String) {
    if let Ok(mut tail) = tail.lock() {
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// `go1.26.8`, from `go env GOVERSION`.
fn go_version() -> Option<ConfigEntry> {
    let out = Command::new("go")
        .args(["env", "GOVERSION"])
        .output()
        .ok()?;
    let version = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !version.is_empty()).then(|| ConfigEntry {
        key: "go".to_string(),
        value: version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_go_test_command() {
        let t = GoTest {
            package: "./e2e".into(),
            dir: None,
            bench: "Delay".into(),
            count: 3,
            benchtime: "1000x".into(),
            extra: vec!["-cpu".into(), "1,2".into()],
            raw: None,
            progress: false,
        };
        assert_eq!(
            t.args().join(" "),
            "test -run ^$ -bench Delay -benchmem -count 3 -benchtime 1000x -p 1 ./e2e -cpu 1,2"
        );
    }
}
