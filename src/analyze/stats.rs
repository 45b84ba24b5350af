//! Summaries of repeated measurements. Nothing is assumed about the distribution: the centre
//! is the median and its confidence interval comes from order statistics (as benchstat does).

use crate::model::Distribution;
pub use crate::model::{Interval, Percentiles, Summary};
use statrs::distribution::{Binomial, ContinuousCDF, Discrete, Normal};

/// The confidence level reports use.
pub const CONFIDENCE: f64 = 0.95;

impl Summary {
    /// Summarizes `values`; `None` when there are none. Order statistics are found by
    /// selection (linear time), not by sorting.
    ///
    /// ```
    /// use latkit::model::Summary;
    ///
    /// let s = Summary::of(&[103.0, 99.0, 100.0, 97.0, 101.0, 98.0, 102.0]).unwrap();
    /// assert_eq!(s.median, 100.0);
    /// // Seven repetitions give a distribution-free 95% interval: [x(1), x(7)].
    /// let ci = s.median_ci.unwrap();
    /// assert_eq!((ci.low, ci.high), (97.0, 103.0));
    /// assert!(ci.coverage >= 0.95);
    /// // Five do not.
    /// assert!(Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().median_ci.is_none());
    /// ```
    pub fn of(values: &[f64]) -> Option<Summary> {
        Summary::of_using(values, &mut Vec::new())
    }

    /// As [`Summary::of`], reusing `work` as scratch space across calls.
    pub fn of_using(values: &[f64], work: &mut Vec<f64>) -> Option<Summary> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        // In the order the selections use, so that each is the same value they would give.
        let (min, max) = values
            .iter()
            .fold((values[0], values[0]), |(low, high), &v| {
                let low = if v.total_cmp(&low).is_lt() { v } else { low };
                (low, if v.total_cmp(&high).is_gt() { v } else { high })
            });
        work.clear();
        work.extend_from_slice(values);
        // One selection of the middle; the interval's orders are then selected within the
        // half they lie in, which the first selection left on their side.
        let middle = n / 2;
        let (below, &mut upper_median, above) = work.select_nth_unstable_by(middle, f64::total_cmp);
        let median = if n % 2 == 1 {
            upper_median
        } else {
            // Everything below the middle is no larger: its maximum is x(n/2).
            let lower = below.iter().copied().fold(f64::MIN, f64::max);
            (lower + upper_median) / 2.0
        };
        let order = |k: usize| match k.cmp(&middle) {
            std::cmp::Ordering::Less => *below.select_nth_unstable_by(k, f64::total_cmp).1,
            std::cmp::Ordering::Equal => upper_median,
            std::cmp::Ordering::Greater => {
                *above
                    .select_nth_unstable_by(k - middle - 1, f64::total_cmp)
                    .1
            }
        };
        Some(Summary::with_orders(values, (min, max, median), order))
    }

    /// As [`Summary::of`], of `values` also given sorted: the orders are read, not selected.
    pub fn of_sorted(values: &[f64], sorted: &[f64]) -> Option<Summary> {
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let median = crate::model::summary::sorted_median(sorted);
        Some(Summary::with_orders(values, (min, max, median), |k| {
            sorted[k]
        }))
    }

    /// The summary of `values` (not empty) given their least, greatest and median, and
    /// `order(k)`, their `k`-th smallest from 0.
    fn with_orders(
        values: &[f64],
        (min, max, median): (f64, f64, f64),
        mut order: impl FnMut(usize) -> f64,
    ) -> Summary {
        let n = values.len();
        let median_ci = median_ci_orders(n, CONFIDENCE).map(|(lo, hi, coverage)| Interval {
            low: order(lo - 1),
            high: order(hi - 1),
            level: CONFIDENCE,
            coverage,
        });
        let mean = values.iter().sum::<f64>() / n as f64;
        let stddev = (n > 1).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        Summary {
            n,
            min,
            max,
            mean,
            median,
            stddev,
            median_ci,
        }
    }
}

impl Percentiles {
    /// Tail percentiles of every recorded sample; `None` for an empty histogram.
    pub fn of(h: &Distribution) -> Option<Percentiles> {
        (!h.is_empty()).then(|| {
            let q = |quantile: f64| h.value_at_quantile(quantile) as f64;
            Percentiles {
                count: h.len(),
                min: h.min() as f64,
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p99_9: q(0.999),
                p99_99: q(0.9999),
                max: h.max() as f64,
            }
        })
    }
}

impl Percentiles {
    /// The percentiles with the exact extremes a tool reported: HDR and bucket edges round,
    /// so no percentile may fall outside [min, max].
    pub fn within(self, min: f64, max: f64) -> Percentiles {
        let clamp = |v: f64| v.clamp(min, max.max(min));
        Percentiles {
            count: self.count,
            min,
            p50: clamp(self.p50),
            p90: clamp(self.p90),
            p99: clamp(self.p99),
            p99_9: clamp(self.p99_9),
            p99_99: clamp(self.p99_99),
            max,
        }
    }
}

impl Summary {
    /// Summarizes a distribution: centre and spread of every sample. There is no interval of
    /// the median here: the samples of one run are not independent repetitions.
    pub fn of_distribution(h: &Distribution) -> Option<Summary> {
        (!h.is_empty()).then(|| Summary {
            n: h.len() as usize,
            min: h.min() as f64,
            max: h.max() as f64,
            mean: h.mean(),
            median: h.value_at_quantile(0.5) as f64,
            stddev: (h.len() > 1).then(|| h.stdev()),
            median_ci: None,
        })
    }
}

/// The order statistics bounding the median's confidence interval at `level`, as benchstat
/// finds them (x/perf benchmath through go-moremath's `QuantileCI`): 1-based `[lo, hi]` with
/// the coverage they give. Up to 30 samples the binomial mass is grown outwards from the
/// median, the heavier neighbour first and the lower one on a tie, so the interval may be
/// one order statistic longer on one side than the other; beyond, the normal approximation
/// with a continuity correction, shortened on the right when that still reaches the level.
/// `None` when the interval would reach past the sample (too few values).
fn median_ci_orders(n: usize, level: f64) -> Option<(usize, usize, f64)> {
    if n < 2 {
        return None;
    }
    let n_i = n as i64;
    let (lo, hi, coverage) = if n <= 30 {
        let b = Binomial::new(0.5, n as u64).expect("p=0.5 is a valid binomial parameter");
        let pmf = |k: i64| {
            if (0..=n_i).contains(&k) {
                b.pmf(k as u64)
            } else {
                0.0
            }
        };
        let x = ((n + 1) as f64 * 0.5).ceil() as i64 - 1;
        let mut coverage = pmf(x);
        let (mut l, mut r) = (x, x + 1);
        let (mut lp, mut rp) = (pmf(l - 1), pmf(r));
        while coverage < level && (lp > 0.0 || rp > 0.0) {
            if lp >= rp {
                coverage += lp;
                l -= 1;
                lp = pmf(l - 1);
            } else {
                coverage += rp;
                r += 1;
                rp = pmf(r);
            }
        }
        (l, r, coverage)
    } else {
        let half = (n as f64 * 0.25).sqrt();
        let normal = Normal::new(n as f64 * 0.5, half).expect("a positive spread");
        let l1 = normal.inverse_cdf((1.0 - level) / 2.0);
        let r1 = n as f64 - l1;
        let l = ((l1 - 0.5).floor() + 0.5).floor() as i64 + 1;
        let mut r = ((r1 - 0.5).ceil() + 0.5).floor() as i64 + 1;
        let cdf = |l: i64, r: i64| normal.cdf(r as f64 - 0.5) - normal.cdf(l as f64 - 0.5);
        let mut coverage = cdf(l, r);
        let biased = cdf(l, r - 1);
        if biased >= level && biased < coverage {
            coverage = biased;
            r -= 1;
        }
        if l <= 0 && r > n_i {
            coverage = 1.0;
        }
        (l, r, coverage)
    };
    (lo >= 1 && hi <= n_i).then_some((lo as usize, hi as usize, coverage))
}

/// The fewest samples for which a median interval at `level` exists.
/// The geometric mean of positive values; `None` when empty or any is not positive.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty() && values.iter().all(|v| *v > 0.0))
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

pub fn min_samples_for_ci(level: f64) -> usize {
    (2..=64)
        .find(|&n| median_ci_orders(n, level).is_some())
        .unwrap_or(64)
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
        let ci = Summary::of(&[6.0, 2.0, 4.0, 1.0, 5.0, 3.0])
            .unwrap()
            .median_ci
            .unwrap();
        assert_eq!((ci.low, ci.high), (1.0, 6.0));
        assert!((ci.coverage - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        assert!(
            Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0])
                .unwrap()
                .median_ci
                .is_none()
        );
    }

    #[test]
    fn interval_narrows_with_more_samples() {
        // For n = 20 the textbook 95% interval is [x(6), x(15)] (coverage 0.9586).
        let shuffled: Vec<f64> = (0..20).map(|i| f64::from((i * 7) % 20 + 1)).collect();
        let s = Summary::of(&shuffled).unwrap();
        let ci = s.median_ci.unwrap();
        assert_eq!((ci.low, ci.high), (6.0, 15.0));
        assert!((ci.coverage - 0.9586).abs() < 1e-4);
        assert_eq!((s.min, s.max, s.median), (1.0, 20.0, 10.5));
        assert!(ci.relative_spread(10.5) > 0.0);
    }

    #[test]
    fn even_count_median_and_single_value() {
        assert_eq!(Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.median, one.stddev), (7.0, None));
        assert!(Summary::of(&[]).is_none());
    }

    use proptest::strategy::{Just, Strategy};

    /// Small whole numbers (many ties), any normal number, and negative zero.
    fn sample() -> impl Strategy<Value = f64> {
        proptest::prop_oneof![
            (-50i32..50).prop_map(f64::from),
            proptest::num::f64::NORMAL,
            Just(-0.0)
        ]
    }

    proptest::proptest! {
        /// Every order statistic is the value a full sort puts at its place, whichever way the
        /// selections reach it (ties, zeros of both signs, any count).
        #[test]
        fn order_statistics_are_those_of_a_sorted_copy(
            values in proptest::collection::vec(sample(), 1..300),
        ) {
            let s = Summary::of(&values).unwrap();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len();
            let at = |k: usize| sorted[k].to_bits();
            proptest::prop_assert_eq!((s.min.to_bits(), s.max.to_bits()), (at(0), at(n - 1)));
            let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
            proptest::prop_assert_eq!(s.median.to_bits(), median.to_bits());
            let orders = median_ci_orders(n, CONFIDENCE);
            let expected = orders.map(|(lo, hi, _)| (at(lo - 1), at(hi - 1)));
            let got = s.median_ci.as_ref().map(|ci| (ci.low.to_bits(), ci.high.to_bits()));
            proptest::prop_assert_eq!(got, expected);
            // Read from the sorted copy, the summary is the same, bit for bit.
            let read = format!("{:?}", Summary::of_sorted(&values, &sorted));
            proptest::prop_assert_eq!(read, format!("{:?}", Some(s)));
        }
    }
}
