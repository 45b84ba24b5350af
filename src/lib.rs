//! latkit: measure latency, run and read benchmark harnesses, and turn the numbers into
//! decisions. Every source produces a [`model::Run`]; every sink reads a [`report::Report`].

pub mod analyze;
pub mod atomic_file;
pub mod cli;
pub mod commands;
pub mod env;
pub mod error;
pub mod host;
pub mod ingest;
pub mod interrupt;
pub mod model;
pub mod probe;
pub mod report;
pub mod runner;
pub mod spec;
pub mod store;
