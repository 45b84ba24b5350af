//! The machine latkit runs on: what it is (the environment every run records), whether it
//! can measure latency well (the doctor's checks), and the scheduling its threads ask for.

pub mod busy;
mod capture;
pub mod cpus;
pub mod doctor;
pub mod sched;
pub mod tracefs;

pub use capture::capture_basic;

/// Reads the facts about this host that affect latency numbers, with the doctor's checks.
/// Never fails: what cannot be read is left empty.
pub fn capture() -> crate::model::Environment {
    crate::model::Environment {
        checks: doctor::checks(),
        ..capture_basic()
    }
}
