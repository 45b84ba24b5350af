//! Counted figures (instructions counted by valgrind) are often near-exact: the same binary and
//! input count the same instructions whatever else the machine does. Often, not always: Go seeds
//! every map's hash at random, crypto/rand draws differ, an allocator's addresses feed a hash.
//! So repeatability is measured, never assumed: repetitions (two at least) that agree within
//! [`FLOOR_PERCENT`] need no test, and a change beyond the floor is decided by its size. One
//! count says nothing of its repeatability, and counts that spread beyond the floor are tested
//! as any figure is.

use crate::model::{Assume, Note, Run, vocab};

pub use crate::model::counts::{FLOOR_PERCENT, agree, spread_percent};

/// Whether either side was counted once: its repeatability is unknown, so the change is
/// decided neither by size nor by a test.
pub fn once(before: &[f64], after: &[f64]) -> bool {
    before.len() == 1 || after.len() == 1
}

/// Whether a stored figure of `metric` moved from counts `before` to `after` is decided by its
/// size: a counted metric (the store keeps its name, not how it was measured) whose counts on
/// both sides agree.
pub fn decided(metric: &str, before: &[f64], after: &[f64]) -> bool {
    stored_as_counted(metric) && agree(before) && agree(after)
}

/// Whether a stored figure of `metric` moved from `before` to `after` was counted once on a
/// side: neither decided by size nor tested.
pub fn stored_once(metric: &str, before: &[f64], after: &[f64]) -> bool {
    stored_as_counted(metric) && once(before, after)
}

/// Whether the store's `metric` is a counted one (it keeps the name, not how it was measured).
fn stored_as_counted(metric: &str) -> bool {
    vocab::COUNTED.contains(&metric)
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
pub const WHAT_COUNTS_MISS: &str = "instructions are counted by valgrind, whatever else the \
    machine does: a change between counts that agree run to run (within 0.1 %) is decided by \
    its size (`counted`), and counts that vary (random seeds, crypto/rand, hashed addresses) \
    are tested as times are; counts do not see memory stalls, I/O, system calls, contention \
    or the CPU's frequency, which the time measures";

/// What a run's counted figures need said: what counts miss, once; each figure whose
/// repetitions spread beyond the floor; and how many were counted once (`label` names the run).
pub fn notes(run: &Run, label: &str) -> Vec<Note> {
    let (mut notes, mut once) = (Vec::new(), 0);
    for bench in &run.benchmarks {
        for metric in bench.metrics.iter().filter(|m| m.assume == Assume::Counted) {
            if notes.is_empty() {
                notes.push(Note::info(WHAT_COUNTS_MISS));
            }
            let spread = spread_percent(&metric.values);
            if spread > FLOOR_PERCENT {
                notes.push(Note::warning(format!(
                    "{label}: {} {}: the counts of its {} runs spread by {spread:.3}%, more than \
                     the {FLOOR_PERCENT}% floor: the code does different work run to run \
                     (random seeds, crypto/rand, hashed addresses, input, threads), so \
                     comparisons test its counts as they would times",
                    bench.name.full_name,
                    metric.name,
                    metric.values.len()
                )));
            }
            once += usize::from(metric.values.len() == 1);
        }
    }
    if once > 0 {
        notes.push(Note::warning(format!(
            "{label}: {once} counted figure(s) counted once: repeatability unknown, so no \
             comparison decides their changes; count at least twice (latkit counts three times \
             unless told)"
        )));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_within_the_floor() {
        assert!(agree(&[2_271_950.0, 2_272_312.0]));
        // One count agrees with itself, and so shows nothing.
        assert!(!agree(&[43_211.0]));
        assert!(once(&[43_211.0], &[1.0, 1.0]) && !once(&[1.0, 1.0], &[1.0, 1.0]));
        assert!(!agree(&[43_211.0, 43_611.0]));
        assert_eq!(spread_percent(&[0.0, 0.0]), 0.0);
        assert!(beyond_floor(1.0) && !beyond_floor(-0.05));
    }

    #[test]
    fn a_stored_count_is_decided_by_size_only_when_counted_and_agreeing() {
        let (a, b) = (
            [437_494_353.0, 437_494_353.0],
            [491_724_302.0, 491_724_302.0],
        );
        assert!(decided("instructions", &a, &b));
        assert!(decided("instructions/op", &b, &a));
        // Counted once: repeatability unknown.
        assert!(!decided("instructions", &a, &[491_724_302.0]));
        assert!(stored_once("instructions", &a, &[491_724_302.0]));
        assert!(!stored_once("ns/op", &a, &[491_724_302.0]));
        // A time, counts that spread, or no counts at all are tested as figures are.
        assert!(!decided("ns/op", &a, &b));
        assert!(!decided("instructions", &[100.0, 120.0], &b));
        assert!(!decided("instructions", &[], &b));
    }
}
