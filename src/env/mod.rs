//! The outside world's parts as runners, probes and sinks reach them: the console, the clock,
//! the interrupt and the host. `commands::Env` holds them with the processes commands start (built
//! once in `main`, or scripted in a test); engines never see them.

mod clock;
mod console;
pub mod git;

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

/// The machine the work runs on, as every run records it.
pub trait Host: Send + Sync {
    /// Its facts and the doctor's checks.
    fn capture(&self) -> crate::model::Environment;
    /// Its name, as a calibration records where it was made.
    fn name(&self) -> Option<String>;
}

/// This machine ([`crate::host::capture`]).
pub struct ThisHost;

impl Host for ThisHost {
    fn capture(&self) -> crate::model::Environment {
        crate::host::capture()
    }

    fn name(&self) -> Option<String> {
        crate::host::capture_basic().hostname
    }
}
