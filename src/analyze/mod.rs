//! From numbers to decisions: statistics, baselines, attribution, comparison, gates.

pub mod attribution;
pub mod auto_gate;
pub mod bisect;
pub mod changes;
pub mod compare;
pub mod counted;
pub mod diagnose;
pub mod downsample;
pub mod drift;
pub mod enrich;
pub mod envdiff;
pub mod figure;
pub mod gate;
pub mod history;
pub mod noise_floor;
pub mod page;
pub mod permutation;
pub mod ratio;
pub mod regressions;
mod sampling;
pub mod sequential;
pub mod signed_rank;
pub mod stats;
pub mod trend;
pub mod utest;
pub mod view;

pub use enrich::{EnrichOptions, build_report};
/// Runs and what analysis derived from them: what every report format renders.
pub use view::Report;
