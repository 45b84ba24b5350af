//! Probes: code that measures.

pub mod frame;
pub mod net;
pub mod timer;
