//! Starting processes: the commands `exec` times, the harnesses `go` and `gbench` run, and the
//! checkouts `bisect` builds and measures.

use super::exec::{CommandOutput, Processes, Spawner};
use super::executor::{Executor, System};
use super::harness::{Checkouts, Repository};
use crate::error::Result;

/// Where a command gets the processes it starts.
pub trait Launch: Send + Sync {
    /// A spawner that times commands, their output going where `output` says.
    fn timer(&self, output: CommandOutput) -> Result<Box<dyn Spawner>>;
    /// Starts harnesses and asks tools one-line questions.
    fn harness(&self) -> &dyn Executor;
    /// The commits of `repository` and their checkouts, built and measured.
    fn checkouts(&self, repository: Repository) -> Box<dyn Checkouts>;
}

/// Real processes.
pub struct SystemLaunch;

impl Launch for SystemLaunch {
    fn timer(&self, output: CommandOutput) -> Result<Box<dyn Spawner>> {
        Ok(Box::new(Processes::new(output)?))
    }

    fn harness(&self) -> &dyn Executor {
        &System
    }

    /// git worktrees of the repository, built and measured by real processes.
    fn checkouts(&self, repository: Repository) -> Box<dyn Checkouts> {
        Box::new(repository)
    }
}
