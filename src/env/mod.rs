//! The outside world as commands reach it, built once in `main` and passed down: processes,
//! the console, the clock and the interrupt. Engines never see it; runners and sinks reach
//! the world only through it, so that a command can run in-process on a scripted world
//! (see [`scripted`]) with no process started, no time passing and its output captured.

mod clock;
mod console;
mod launch;
#[cfg(test)]
pub mod scripted;

pub use clock::{Clock, CpuReading, SystemClock};
pub use console::{Console, Reader, Stream};
pub use launch::{Launch, SystemLaunch};

use std::sync::Arc;

/// Ctrl-C and SIGTERM, as the work in progress asks about them.
pub trait Interrupt: Send + Sync {
    /// Starts listening (once per process; later calls do nothing).
    fn install(&self);
    /// Whether an interrupt came: the work stops, reports what finished and exits 130.
    fn requested(&self) -> bool;
}

/// The signals this process receives ([`crate::interrupt`]).
pub struct Signals;

impl Interrupt for Signals {
    fn install(&self) {
        crate::interrupt::install();
    }

    fn requested(&self) -> bool {
        crate::interrupt::requested()
    }
}

/// Everything a command reaches outside itself.
#[derive(Clone)]
pub struct Env {
    pub console: Console,
    pub clock: Arc<dyn Clock>,
    pub interrupt: Arc<dyn Interrupt>,
    pub launch: Arc<dyn Launch>,
}

impl Env {
    /// This process's world: its standard streams, the system clock, its signals and real
    /// processes.
    pub fn system() -> Env {
        Env {
            console: Console::system(),
            clock: Arc::new(SystemClock),
            interrupt: Arc::new(Signals),
            launch: Arc::new(SystemLaunch),
        }
    }
}
