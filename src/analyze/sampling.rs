//! Whether the samples can carry the figures shown: enough of them for an interval, each long
//! enough to be more than timer overhead and scheduling noise. Said in notes, never hidden.

use super::stats::{CONFIDENCE, min_samples_for_ci};
use crate::model::{Assume, Dimension, Note, Run};

/// A sample of a benchmark that counts iterations (`b.N`) shorter than this, in nanoseconds,
/// is dominated by timer overhead, frequency changes and scheduler ticks (go aims for 1 s).
const SHORTEST_TRUSTED_SAMPLE_NS: f64 = 100e6;
/// How many short benchmarks a note names before it counts the rest.
const NAMED: usize = 3;

/// Too few repetitions for the median's interval; one repetition of a harness that repeats
/// (go, google/benchmark) counts too, as benchstat asks for at least six. Counts need none:
/// they are decided by their spread.
pub(super) fn note_too_few(runs: &[Run], metric: Option<&str>, notes: &mut Vec<Note>) {
    let need = min_samples_for_ci(CONFIDENCE);
    let short = runs
        .iter()
        .flat_map(|r| &r.benchmarks)
        .filter_map(|b| {
            let m = b.primary_metric(metric)?;
            // A distribution's intervals come from its samples, not from repetitions.
            if m.histogram.is_some() {
                return None;
            }
            let n = m.values.len();
            let repeats = n > 1 || !b.iterations.is_empty();
            (repeats && m.assume != Assume::Counted).then_some(n)
        })
        .filter(|&n| n < need)
        .min();
    if let Some(n) = short {
        notes.push(Note::info(format!(
            "too few samples for a {:.0}% confidence interval of the median: need ≥ {need} \
             repetitions, have {n} (± shows —)",
            CONFIDENCE * 100.0
        )));
    }
}

/// Samples whose iterations times the time per iteration last under 100 ms: `-benchtime
/// 1000x` on a 20 ns benchmark reads half the time go's own default finds.
pub(super) fn note_too_short(runs: &[Run], metric: Option<&str>, notes: &mut Vec<Note>) {
    let mut short: Vec<(String, f64)> = Vec::new();
    for bench in runs.iter().flat_map(|r| &r.benchmarks) {
        let Some(m) = bench.primary_metric(metric) else {
            continue;
        };
        if m.unit.dimension != Dimension::Time || m.unit.per.is_none() {
            continue;
        }
        let shortest = bench
            .iterations
            .iter()
            .zip(&m.values)
            .map(|(&n, per_op)| n as f64 * per_op)
            .fold(f64::INFINITY, f64::min);
        if shortest < SHORTEST_TRUSTED_SAMPLE_NS {
            short.push((bench.name.name.clone(), shortest));
        }
    }
    let Some((name, lasted)) = short.first() else {
        return;
    };
    let others = match short.len() - 1 {
        0 => String::new(),
        n => format!(
            " (and {n} other benchmark{}: {})",
            if n == 1 { "" } else { "s" },
            short[1..]
                .iter()
                .take(NAMED)
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
                + if n > NAMED { ", …" } else { "" }
        ),
    };
    notes.push(Note::warning(format!(
        "{name}: a sample lasted only {} (iterations × time per iteration){others}: too short \
         to trust, as timer overhead, frequency changes and scheduler ticks weigh on it; give \
         each sample at least 100 ms (`-benchtime 1s`, go's default, or more iterations)",
        crate::model::Unit::new(Dimension::Time).format_scaled(*lasted)
    )));
}
