//! From numbers to decisions: statistics, baselines, attribution.

pub mod attribution;
pub mod enrich;
pub mod gate;
pub mod page;
pub mod stats;
pub mod view;

pub use enrich::{EnrichOptions, build_report};
