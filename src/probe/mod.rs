//! Probes: code that measures.

pub mod frame;
pub mod timer;
