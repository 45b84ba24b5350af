//! Counted figures (instructions counted by valgrind) are near-exact: the same binary and input
//! count the same instructions whatever else the machine does. Repetitions that agree within
//! [`FLOOR_PERCENT`] need no test: a change beyond the floor is a change, decided by its size,
//! and one within it is none. Counts that spread beyond the floor are not exact, and are tested
//! as any figure is.

use crate::model::summary::median;
use crate::model::{Assume, Note, Run, vocab};

/// The floor, in percent of the median: counts closer than this agree, and a change smaller
/// than this is within counting noise (Go's differenced counts moved by 0.016 % here).
pub const FLOOR_PERCENT: f64 = 0.1;

/// How far apart `values` lie, in percent of their median: (max − min) / median.
pub fn spread_percent(values: &[f64]) -> f64 {
    let (low, high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let centre = median(&mut values.to_vec());
    match values.len() {
        0 | 1 => 0.0,
        _ if centre == 0.0 => {
            if high == low {
                0.0
            } else {
                f64::INFINITY
            }
        }
        _ => (high - low) / centre.abs() * 100.0,
    }
}

/// Whether counted repetitions agree within the floor (one count agrees with itself).
pub fn agree(values: &[f64]) -> bool {
    spread_percent(values) <= FLOOR_PERCENT
}

/// Whether a stored figure of `metric` moved from counts `before` to `after` is decided by its
/// size: a counted metric (the store keeps its name, not how it was measured) whose counts on
/// both sides agree.
pub fn decided(metric: &str, before: &[f64], after: &[f64]) -> bool {
    [vocab::INSTRUCTIONS, vocab::INSTRUCTIONS_PER_OP].contains(&metric)
        && !before.is_empty()
        && !after.is_empty()
        && agree(before)
        && agree(after)
}

/// The least change that counts decide, in %: the floor, or a larger `threshold`.
pub fn least_change(threshold: f64) -> f64 {
    FLOOR_PERCENT.max(threshold)
}

/// Whether a change of `percent` lies beyond the floor.
pub fn beyond_floor(percent: f64) -> bool {
    percent.abs() > FLOOR_PERCENT
}

/// What every report with counted figures says once.
pub const WHAT_COUNTS_MISS: &str = "instructions are counted by valgrind: the same binary and \
    input count the same whatever else the machine does, so a change of more than 0.1 % is \
    decided by its size (`counted`); counts do not see memory stalls, I/O, system calls, \
    contention or the CPU's frequency, which the time measures";

/// What a run's counted figures need said: what counts miss, once, and each figure whose
/// repetitions spread beyond the floor (`label` names the run).
pub fn notes(run: &Run, label: &str) -> Vec<Note> {
    let mut notes = Vec::new();
    for bench in &run.benchmarks {
        for metric in bench.metrics.iter().filter(|m| m.assume == Assume::Counted) {
            if notes.is_empty() {
                notes.push(Note::info(WHAT_COUNTS_MISS));
            }
            let spread = spread_percent(&metric.values);
            if spread > FLOOR_PERCENT {
                notes.push(Note::warning(format!(
                    "{label}: {} {}: the counts of its {} runs spread by {spread:.3}%, more than \
                     the {FLOOR_PERCENT}% that counts of the same work do: the runs did \
                     different work (input, randomness, threads), and comparisons test them as \
                     they would times",
                    bench.name.full_name,
                    metric.name,
                    metric.values.len()
                )));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_within_the_floor() {
        assert!(agree(&[2_271_950.0, 2_272_312.0]));
        assert!(agree(&[43_211.0]));
        assert!(!agree(&[43_211.0, 43_611.0]));
        assert_eq!(spread_percent(&[0.0, 0.0]), 0.0);
        assert!(beyond_floor(1.0) && !beyond_floor(-0.05));
    }

    #[test]
    fn a_stored_count_is_decided_by_size_only_when_counted_and_agreeing() {
        let (a, b) = ([437_494_353.0, 437_494_353.0], [491_724_302.0]);
        assert!(decided("instructions", &a, &b));
        assert!(decided("instructions/op", &b, &a));
        // A time, counts that spread, or no counts at all are tested as figures are.
        assert!(!decided("ns/op", &a, &b));
        assert!(!decided("instructions", &[100.0, 120.0], &b));
        assert!(!decided("instructions", &[], &b));
    }
}
