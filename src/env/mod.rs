//! The outside world's parts as runners, probes and sinks reach them: the console, the clock
//! and the interrupt. `commands::Env` holds them with the processes commands start (built
//! once in `main`, or scripted in a test); engines never see them.

mod clock;
mod console;

pub use clock::{Clock, CpuReading, SystemClock};
pub use console::{Console, Reader, Stdin, Stream};

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
