//! Summaries of repeated measurements. Nothing is assumed about the distribution: the centre
//! is the median and its confidence interval comes from order statistics (as benchstat does).

pub use crate::model::{Interval, Summary};
use statrs::distribution::{Binomial, DiscreteCDF};

/// The confidence level reports use.
pub const CONFIDENCE: f64 = 0.95;

impl Summary {
    /// Summarizes `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / n as f64;
        let stddev = (n > 1).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        Some(Summary {
            n,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            median: median_of_sorted(&sorted),
            stddev,
            median_ci: median_ci(&sorted, CONFIDENCE),
        })
    }
}

pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Coverage of [x(k), x(n+1−k)] (1-based order statistics) for the population median:
/// P(k ≤ B ≤ n−k) with B ~ Binomial(n, ½), the count of samples below the median.
fn coverage(n: usize, k: usize) -> f64 {
    // n ≥ 1 and p = ½ are always valid parameters.
    let b = Binomial::new(0.5, n as u64).expect("p=0.5 is a valid binomial parameter");
    1.0 - 2.0 * b.cdf((k - 1) as u64)
}

/// The narrowest symmetric order-statistics interval whose coverage reaches `level`.
pub fn median_ci(sorted: &[f64], level: f64) -> Option<Interval> {
    let n = sorted.len();
    if n < 2 || coverage(n, 1) < level {
        return None;
    }
    // Coverage falls as k grows: find the largest k that still reaches the level.
    let (mut good, mut bad) = (1, n / 2 + 1);
    while bad - good > 1 {
        let mid = (good + bad) / 2;
        if coverage(n, mid) >= level {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(Interval {
        low: sorted[good - 1],
        high: sorted[n - good],
        level,
        coverage: coverage(n, good),
    })
}

/// The fewest samples for which a median interval at `level` exists.
pub fn min_samples_for_ci(level: f64) -> usize {
    (2..=64).find(|&n| coverage(n, 1) >= level).unwrap_or(64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_three() {
        let s = Summary::of(&[10712.0, 10668.0, 10590.0]).unwrap();
        assert_eq!(s.median, 10668.0);
        assert_eq!(s.min, 10590.0);
        assert_eq!(s.max, 10712.0);
        assert!((s.mean - 10656.666666666666).abs() < 1e-9);
        assert!((s.stddev.unwrap() - 61.78457196852086).abs() < 1e-9);
        assert_eq!(s.median_ci, None, "3 samples cannot give a 95% interval");
    }

    #[test]
    fn six_samples_is_the_minimum_at_95_percent() {
        assert_eq!(min_samples_for_ci(0.95), 6);
        let ci = median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95).unwrap();
        assert_eq!((ci.low, ci.high), (1.0, 6.0));
        assert!((ci.coverage - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).is_none());
    }

    #[test]
    fn interval_narrows_with_more_samples() {
        // For n = 20 the textbook 95% interval is [x(6), x(15)] (coverage 0.9586).
        let sorted: Vec<f64> = (1..=20).map(f64::from).collect();
        let ci = median_ci(&sorted, 0.95).unwrap();
        assert_eq!((ci.low, ci.high), (6.0, 15.0));
        assert!((ci.coverage - 0.9586).abs() < 1e-4);
        assert!(ci.relative_spread(10.5) > 0.0);
    }

    #[test]
    fn even_count_median_and_single_value() {
        assert_eq!(Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.median, one.stddev), (7.0, None));
        assert!(Summary::of(&[]).is_none());
    }
}
