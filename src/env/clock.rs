//! The time of day and CPU time, as runs are stamped and checked for other work with them.

pub use crate::host::busy::CpuReading;
use std::time::SystemTime;

/// Where a command reads the time.
pub trait Clock: Send + Sync {
    /// The time of day: a run's start and end.
    fn now(&self) -> SystemTime;
    /// CPU time so far, to tell what other processes did during a run; `None` where the
    /// machine does not say.
    fn cpu(&self) -> Option<CpuReading>;
}

/// The system's clocks.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn cpu(&self) -> Option<CpuReading> {
        CpuReading::read()
    }
}
