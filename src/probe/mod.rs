//! Probes: code that measures.

pub mod timer;
