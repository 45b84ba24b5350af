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
        let mut s = 0i64;
        for (i, a) in values.iter().enumerate() {
            for b in &values[i + 1..] {
                s += match b.partial_cmp(a) {
                    Some(std::cmp::Ordering::Greater) => 1,
                    Some(std::cmp::Ordering::Less) => -1,
                    _ => 0,
                };
            }
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let ties: f64 = sorted
            .chunk_by(|a, b| a == b)
            .map(|group| {
                let t = group.len() as f64;
                t * (t - 1.0) * (2.0 * t + 5.0)
            })
            .sum();
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
}
