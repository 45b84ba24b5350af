//! Probes: code that measures.

pub mod frame;
pub mod net;
pub mod timer;

use crate::env::Stamp;
use crate::model::{Benchmark, ConfigEntry, Run, Source, timestamp};
use crate::model::{RunBuilder, new_run};
use std::time::SystemTime;

/// A run measured by the probe `format`, with its settings as config entries, stamped by
/// `stamp`: the host's environment captured now (after measuring, so the capture does not
/// disturb it) and the clock's time as its end.
pub fn probe_run(
    format: &str,
    settings: Vec<(&str, String)>,
    benchmarks: Vec<Benchmark>,
    started: SystemTime,
    stamp: Stamp,
) -> Run {
    let source = Source {
        kind: crate::model::SourceKind::Probe,
        format: format.to_string(),
        path: None,
        command: std::env::args().collect(),
    };
    let config = settings
        .into_iter()
        .map(|(key, value)| ConfigEntry {
            key: key.to_string(),
            value,
        })
        .collect();
    let mut run = new_run(
        source,
        stamp.host.capture(),
        config,
        RunBuilder::from_benchmarks(benchmarks),
    );
    run.started = Some(timestamp(started));
    run.ended = Some(timestamp(stamp.clock.now()));
    run
}
