//! Starting processes: the commands `exec` times, the harnesses `go` and `gbench` run, and the
//! checkouts `bisect` builds and measures.

use super::exec::{CommandIo, Processes, Spawner};
use super::executor::{Executor, System};
use super::harness::{Checkouts, Repository};
use super::worktree::{Tree, Worktree};
use crate::env::{Clock, CpuReading, Host, Interrupt, Signals, SystemClock, ThisHost};
use crate::error::Result;
use crate::model::Environment;
use std::path::Path;

/// Where a command gets the processes it starts.
pub trait Launch: Send + Sync {
    /// A spawner that times commands, their streams where `io` says.
    fn timer(&self, io: CommandIo) -> Result<Box<dyn Spawner>>;
    /// Starts harnesses and asks tools one-line questions.
    fn harness(&self) -> &dyn Executor;
    /// The commits of `repository` and their checkouts, built and measured.
    fn checkouts(&self, repository: Repository) -> Box<dyn Checkouts>;
    /// A checkout of `rev` of the repository `within` belongs to, removed when dropped.
    fn checkout(&self, within: &Path, rev: &str) -> Result<Box<dyn Tree>>;
}

/// What a harness run reaches outside itself: the processes it starts, the clock that stamps
/// it and reads the machine's CPU time, the interrupt that stops it, and the host it runs on.
#[derive(Clone, Copy)]
pub struct Reach<'a> {
    pub harness: &'a dyn Executor,
    pub clock: &'a dyn Clock,
    pub interrupt: &'a dyn Interrupt,
    pub host: &'a dyn Host,
}

impl Reach<'_> {
    /// Real processes, the system clock, this process's signals and this machine.
    pub fn system() -> Reach<'static> {
        Reach {
            harness: &System,
            clock: &SystemClock,
            interrupt: &Signals,
            host: &ThisHost,
        }
    }

    /// The host as a run found it, with what other processes did since `cpu` was read.
    pub fn environment_since(&self, cpu: Option<CpuReading>) -> Environment {
        let mut environment = self.host.capture();
        let busy = cpu.and_then(|started| started.others_busy(&self.clock.cpu()?));
        environment.checks.extend(busy);
        environment
    }
}

/// Real processes.
pub struct SystemLaunch;

impl Launch for SystemLaunch {
    fn timer(&self, io: CommandIo) -> Result<Box<dyn Spawner>> {
        Ok(Box::new(Processes::new(io)?))
    }

    fn harness(&self) -> &dyn Executor {
        &System
    }

    /// git worktrees of the repository, built and measured by real processes.
    fn checkouts(&self, repository: Repository) -> Box<dyn Checkouts> {
        Box::new(repository)
    }

    /// A git worktree.
    fn checkout(&self, within: &Path, rev: &str) -> Result<Box<dyn Tree>> {
        Ok(Box::new(Worktree::add(within, rev)?))
    }
}
