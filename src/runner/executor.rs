//! The seam between runners and the processes they start: the real implementation spawns
//! processes in their own process group; tests drive runner logic (arguments, streaming,
//! failures, interrupts) with a scripted double instead, beside the real-process tests.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

/// A started harness.
pub trait Process {
    /// Its standard output, once.
    fn take_stdout(&mut self) -> Option<Box<dyn Read + Send>>;
    /// Its standard error, once.
    fn take_stderr(&mut self) -> Option<Box<dyn Read + Send>>;
    /// The process group an interrupt should stop (0: none).
    fn group(&self) -> u32;
    fn wait(&mut self) -> io::Result<ExitStatus>;
}

/// Starts harnesses and asks tools one-line questions.
pub trait Executor {
    /// Starts `program` with `args` in `dir`, stdin closed, stdout and stderr piped.
    fn spawn(
        &self,
        program: &str,
        args: &[String],
        dir: Option<&Path>,
    ) -> io::Result<Box<dyn Process>>;
    /// The trimmed standard output of a short command that succeeded.
    fn output(&self, program: &str, args: &[&str]) -> Option<String>;
    /// Counts the instructions `count` executes (valgrind); `NotFound` when valgrind is not
    /// there.
    fn count(&self, count: &super::counts::Count) -> io::Result<super::counts::Counted>;

    /// valgrind's version (`valgrind-3.19.0`); exit 5 when it is not there.
    fn valgrind(&self) -> crate::error::Result<String> {
        self.output("valgrind", &["--version"])
            .ok_or_else(|| crate::error::Error::Environment(super::counts::MISSING.into()))
    }

    /// Runs `count` once: the instructions, or why not: valgrind missing (exit 5), the
    /// program failing under it (exit 6, with the last of what valgrind and it said). `what`
    /// names the benchmark in messages.
    fn counted(
        &self,
        count: &super::counts::Count,
        what: &str,
    ) -> crate::error::Result<super::counts::Counted> {
        use crate::error::Error;
        let counted = self.count(count).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Error::Environment(super::counts::MISSING.into()),
            _ => Error::Peer(format!("{what}: could not count `{}`: {e}", count.line())),
        })?;
        if !counted.status.success() && !crate::interrupt::requested() {
            return Err(Error::Peer(format!(
                "{what}: `{}` failed under valgrind ({}); the last of what valgrind and it \
                 said:\n{}",
                count.line(),
                counted.status,
                crate::error::visible_lines(&counted.said)
            )));
        }
        Ok(counted)
    }
}

/// Real processes, each in its own process group: our interrupt handler decides when the
/// harness stops, so that what it finished can still be reported.
pub struct System;

struct Spawned(Child);

impl Process for Spawned {
    fn take_stdout(&mut self) -> Option<Box<dyn Read + Send>> {
        self.0
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>)
    }

    fn take_stderr(&mut self) -> Option<Box<dyn Read + Send>> {
        self.0
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>)
    }

    fn group(&self) -> u32 {
        self.0.id()
    }

    fn wait(&mut self) -> io::Result<ExitStatus> {
        self.0.wait()
    }
}

impl Executor for System {
    fn spawn(
        &self,
        program: &str,
        args: &[String],
        dir: Option<&Path>,
    ) -> io::Result<Box<dyn Process>> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        Ok(Box::new(Spawned(command.spawn()?)))
    }

    fn output(&self, program: &str, args: &[&str]) -> Option<String> {
        let out = Command::new(program).args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    }

    fn count(&self, count: &super::counts::Count) -> io::Result<super::counts::Counted> {
        super::counts::run(count)
    }
}
