//! The outside world a command reaches, as one value `main` builds and passes down (a test
//! builds a scripted one instead: [`super::scripted`]).

use crate::env::{Clock, Console, Host, Interrupt, Signals, SystemClock, ThisHost, Vars};
use crate::runner::launch::{Launch, Reach, SystemLaunch};
use std::sync::Arc;

/// Everything a command reaches outside itself: the console, the clock, the interrupt, the
/// processes it starts and the host they run on.
#[derive(Clone)]
pub struct Env {
    pub console: Console,
    pub clock: Arc<dyn Clock>,
    pub interrupt: Arc<dyn Interrupt>,
    pub launch: Arc<dyn Launch>,
    pub host: Arc<dyn Host>,
    /// The environment variables it reads.
    pub vars: Vars,
}

impl Env {
    /// This process's world: its standard streams, the system clock, its signals, real
    /// processes and this machine.
    pub fn system() -> Env {
        Env {
            console: Console::system(),
            clock: Arc::new(SystemClock),
            interrupt: Arc::new(Signals),
            launch: Arc::new(SystemLaunch),
            host: Arc::new(ThisHost),
            vars: Vars::process(),
        }
    }

    /// The time a report says it was made: `SOURCE_DATE_EPOCH`, else the clock's now.
    pub fn report_time(&self) -> crate::error::Result<std::time::SystemTime> {
        self.vars
            .report_time(self.clock.now())
            .map_err(crate::error::Error::Input)
    }

    /// What stamps a measured run: this world's clock and host.
    pub fn stamp(&self) -> crate::env::Stamp<'_> {
        crate::env::Stamp {
            clock: &*self.clock,
            host: &*self.host,
        }
    }

    /// What a harness run reaches: this world's processes, clock, interrupt and host.
    pub fn reach(&self) -> Reach<'_> {
        Reach {
            harness: self.launch.harness(),
            clock: &*self.clock,
            interrupt: &*self.interrupt,
            host: &*self.host,
        }
    }
}
