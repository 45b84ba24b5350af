//! Starting processes: the commands `exec` times and the harnesses `go` and `gbench` run.

use super::exec::{CommandOutput, Processes, Spawner};
use super::executor::{Executor, System};
use crate::error::Result;

/// Where a command gets the processes it starts.
pub trait Launch: Send + Sync {
    /// A spawner that times commands, their output going where `output` says.
    fn timer(&self, output: CommandOutput) -> Result<Box<dyn Spawner>>;
    /// Starts harnesses and asks tools one-line questions.
    fn harness(&self) -> &dyn Executor;
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
}
