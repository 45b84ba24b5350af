//! Runners: start a harness, stream its output into the model.

pub mod go;
