//! Checks on runs read back from latkit JSON: the same bounds every other reader enforces, so
//! a hand-edited or hostile file cannot make analysis or reports misbehave.

use super::timer_common::{MAX_BUCKETS, MAX_SAMPLES};
use crate::model::{Dimension, Run};

pub fn run(run: &Run) -> Result<(), String> {
    for bench in &run.benchmarks {
        let name = crate::error::visible(&bench.name.full_name);
        let mut seen = rustc_hash::FxHashSet::default();
        for metric in &bench.metrics {
            // Every analysis finds a metric by its name: a second of the same name would be
            // silently left out.
            if !seen.insert(metric.name.as_str()) {
                return Err(format!(
                    "{name}: the metric `{}` appears twice",
                    metric.name
                ));
            }
            if let Some(v) = metric.values.iter().find(|v| !v.is_finite()) {
                return Err(format!("{name}: `{}` holds {v}", metric.name));
            }
            if metric.unit.dimension == Dimension::Time
                && metric.histogram.is_none()
                && metric.values.iter().any(|v| *v < 0.0)
                && run.timer.is_none()
            {
                return Err(format!(
                    "{name}: `{}` holds a negative time, which a benchmark cannot take",
                    metric.name
                ));
            }
        }
        for h in &bench.histograms {
            if h.counts.len() > MAX_BUCKETS || h.bucket_ns == 0 {
                return Err(format!(
                    "{name}: the `{}` histogram needs 1 to {MAX_BUCKETS} buckets of a width above 0",
                    h.of
                ));
            }
            let total = h
                .counts
                .iter()
                .try_fold(h.overflow, |sum, &n| sum.checked_add(n));
            if total.is_none_or(|t| t > MAX_SAMPLES) {
                return Err(format!(
                    "{name}: the `{}` histogram counts more than {MAX_SAMPLES} samples",
                    h.of
                ));
            }
            if h.reported
                .is_some_and(|s| !s.average.is_finite() || !s.stddev.is_finite())
            {
                return Err(format!(
                    "{name}: the `{}` histogram statistics are not finite",
                    h.of
                ));
            }
        }
        if let Some(t) = &bench.timer
            && (t.min_ns > t.max_ns || !t.avg_ns.is_finite())
        {
            return Err(format!(
                "{name}: timer summary min above max, or a non-finite average"
            ));
        }
    }
    Ok(())
}
