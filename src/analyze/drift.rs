//! Drift across a run: do the repetitions rise or fall with their order? A machine warming up,
//! a cache filling or another tenant arriving moves later samples away from earlier ones, and
//! a comparison of such samples measures the drift as much as the change. The test is Mann
//! and Kendall's: Kendall's τ between the values and their order, its p-value by the normal
//! approximation with the tie correction.

use statrs::distribution::{ContinuousCDF, Normal};

/// Fewer repetitions than this cannot show a trend strongly enough to be called one.
const FEWEST: usize = 8;
/// The test compares every pair of values: beyond this many, evenly spaced ones (in order)
/// stand for the rest, so that its cost follows no input's length.
const MOST: usize = 2000;
/// Only a strong trend is reported: a suite compares many figures, and a note on every
/// tenth of them by chance would cry wolf.
const LEVEL: f64 = 0.001;

/// A trend across a run's repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drift {
    /// Kendall's τ between value and order: +1 every value above the one before.
    pub tau: f64,
    /// Two-sided p-value of "no trend".
    pub p: f64,
}

impl Drift {
    /// `values` in the order they were measured: a trend strong enough to report, or `None`.
    pub fn of(values: &[f64]) -> Option<Drift> {
        if values.len() < FEWEST {
            return None;
        }
        let last = (values.len() - 1) as f64;
        let thinned: Vec<f64>;
        let values = if values.len() > MOST {
            thinned = (0..MOST)
                .map(|i| values[(i as f64 * last / (MOST - 1) as f64).round() as usize])
                .collect();
            &thinned
        } else {
            values
        };
        let n = values.len();
        // Normalised so that -0 ties with 0, as the comparison of values does.
        let mut sorted: Vec<f64> = values.iter().map(|v| v + 0.0).collect();
        let falls = strict_inversions(&mut sorted);
        let (tied_pairs, ties) =
            sorted
                .chunk_by(|a, b| a == b)
                .fold((0u64, 0.0f64), |(pairs, ties), group| {
                    let t = group.len() as u64;
                    let tf = t as f64;
                    (
                        pairs + t * (t - 1) / 2,
                        ties + tf * (tf - 1.0) * (2.0 * tf + 5.0),
                    )
                });
        // S = rises − falls over every pair in order; pairs of equal values count neither.
        let pairs = (n as u64) * (n as u64 - 1) / 2;
        let s = pairs as i64 - tied_pairs as i64 - 2 * falls as i64;
        let n = n as f64;
        let variance = (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0;
        if variance <= 0.0 {
            return None;
        }
        // Continuity correction: S moves in steps of two.
        let z = (s.abs() as f64 - 1.0).max(0.0) / variance.sqrt();
        let p = 2.0 * Normal::standard().sf(z);
        let tau = s as f64 / (n * (n - 1.0) / 2.0);
        (p <= LEVEL).then_some(Drift { tau, p })
    }

    /// How it reads in a note: `rise across the run (Kendall τ=0.71, p=0.0002)`.
    pub fn text(&self) -> String {
        let way = if self.tau > 0.0 { "rise" } else { "fall" };
        format!(
            "the values {way} across the run (Kendall τ={:.2} over their order, p={:.4})",
            self.tau, self.p
        )
    }
}

/// Sorts `values` and returns how many pairs fell (a later value strictly below an earlier
/// one), counted while sorting, so that Kendall's S costs O(n log n) instead of a pass over
/// every pair: short runs by insertion (each shift past a larger earlier value is a fall),
/// then merges of runs, to and fro between `values` and one scratch buffer.
fn strict_inversions(values: &mut [f64]) -> u64 {
    const RUN: usize = 16;
    let mut falls = 0u64;
    for run in values.chunks_mut(RUN) {
        for k in 1..run.len() {
            let value = run[k];
            let mut at = k;
            while at > 0 && run[at - 1] > value {
                run[at] = run[at - 1];
                at -= 1;
            }
            run[at] = value;
            falls += (k - at) as u64;
        }
    }
    let mut scratch = vec![0.0; values.len()];
    let (mut width, mut in_values) = (RUN, true);
    while width < values.len() {
        falls += match in_values {
            true => merge_pairs(values, &mut scratch, width),
            false => merge_pairs(&scratch, values, width),
        };
        in_values = !in_values;
        width *= 2;
    }
    if !in_values {
        values.copy_from_slice(&scratch);
    }
    falls
}

/// Merges each two neighbouring sorted runs of `width` from `from` into `to`; the falls
/// between them.
fn merge_pairs(from: &[f64], to: &mut [f64], width: usize) -> u64 {
    let mut falls = 0u64;
    for start in (0..from.len()).step_by(2 * width) {
        let middle = (start + width).min(from.len());
        let end = (start + 2 * width).min(from.len());
        let (left, right) = (&from[start..middle], &from[middle..end]);
        let (mut i, mut j) = (0, 0);
        for slot in &mut to[start..end] {
            // An equal value is taken from the left: a tie is no fall.
            if j == right.len() || (i < left.len() && left[i] <= right[j]) {
                *slot = left[i];
                i += 1;
            } else {
                *slot = right[j];
                j += 1;
                falls += (left.len() - i) as u64;
            }
        }
    }
    falls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_climb_is_drift_and_noise_is_not() {
        let climb: Vec<f64> = (0..12).map(|i| 100.0 + i as f64).collect();
        let drift = Drift::of(&climb).unwrap();
        assert_eq!(drift.tau, 1.0);
        // S = 66 of 66, variance 12·11·29/18 = 212.67: z = 65/14.58, p about 8e-6.
        assert!((drift.p - 8.25e-6).abs() < 1e-6, "{}", drift.p);
        assert!(drift.text().contains("rise"));
        let falling: Vec<f64> = climb.iter().rev().copied().collect();
        assert!(Drift::of(&falling).unwrap().tau < 0.0);
        // A zig-zag about a level: no trend.
        let level = [5.0, 7.0, 4.0, 6.0, 5.5, 6.5, 4.5, 7.5, 5.0, 6.0];
        assert_eq!(Drift::of(&level), None);
        assert_eq!(Drift::of(&[1.0; 20]), None);
        assert_eq!(Drift::of(&climb[..7]), None);
        // A million values are thinned, not compared pair by pair, and keep their trend.
        let long: Vec<f64> = (0..1_000_000).map(|i| i as f64).collect();
        assert_eq!(Drift::of(&long).unwrap().tau, 1.0);
    }

    /// The falls counted while merging are those of every pair, ties and -0 included.
    #[test]
    fn merged_falls_are_the_pairwise_count() {
        let mut state = 0x5eed_u64;
        for n in [0, 1, 2, 7, 15, 16, 17, 33, 64, 301, 1000] {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) % 9) as f64 - 4.0
                })
                .map(|v| if v == 0.0 { -0.0 } else { v })
                .collect();
            let pairwise = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .filter(|&(i, j)| values[j] < values[i])
                .count() as u64;
            let mut sorted = values.clone();
            assert_eq!(strict_inversions(&mut sorted), pairwise, "n = {n}");
            assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
