//! Derived statistics of a metric's repetitions (computed by `analyze::stats`).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1); absent for fewer than two values.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stddev: Option<f64>,
    /// Confidence interval of the median; absent when there are too few values for one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub median_ci: Option<Interval>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// The level asked for.
    pub level: f64,
    /// The coverage the chosen order statistics actually give (≥ level).
    pub coverage: f64,
}

impl Interval {
    /// Half the width relative to `centre`, as benchstat's "± x%": the larger side.
    pub fn relative_spread(&self, centre: f64) -> f64 {
        if centre == 0.0 {
            return 0.0;
        }
        ((centre - self.low).max(self.high - centre) / centre.abs()) * 100.0
    }
}

/// Tail percentiles of a distribution, in its metric's base unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

/// Sorts `values` in `f64::total_cmp`'s order, as integer keys that order alike: a comparison
/// of keys is one instruction, where `total_cmp` transforms both values each time, so a large
/// sample sorts in about half the time. Values already in order (the logarithms of a sorted
/// sample) are left as they are after one pass.
pub fn sort_floats(values: &mut [f64]) {
    if values.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
        return;
    }
    // total_cmp's own transform (a negative value's magnitude bits flipped, its own inverse),
    // with the sign bit flipped too so that the keys order as unsigned integers.
    const SIGN: u64 = 1 << 63;
    let flip_magnitude = |bits: u64| bits ^ ((((bits as i64) >> 63) as u64) >> 1);
    let mut keys: Vec<u64> = values
        .iter()
        .map(|v| flip_magnitude(v.to_bits()) ^ SIGN)
        .collect();
    keys.sort_unstable();
    for (value, key) in values.iter_mut().zip(keys) {
        *value = f64::from_bits(flip_magnitude(key ^ SIGN));
    }
}

/// The median of values already sorted (not empty).
pub fn sorted_median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n % 2 {
        1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The median of `values` and their spread as a normal's standard deviation, estimated from
/// the median absolute deviation (1.4826 of it): neither moves with a few wild values.
/// `values` is reordered; empty gives NaN for both.
pub fn median_and_robust_sd(values: &mut [f64]) -> (f64, f64) {
    let centre = median(values);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    (centre, 1.4826 * median(&mut deviations))
}

/// The median of `values` (reordered in place); NaN-free input expected, empty gives NaN.
pub fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    // A selection, not a sort: linear time; `values` is left partly reordered.
    let (below, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    match n % 2 {
        1 => upper,
        // Everything below the middle is no larger: its largest is the lower middle.
        _ => {
            (below
                .iter()
                .copied()
                .max_by(f64::total_cmp)
                .unwrap_or(upper)
                + upper)
                / 2.0
        }
    }
}

/// A modified Z-score beyond this marks an outlier (hyperfine's threshold).
pub const OUTLIER_SCORE: f64 = 14.0;

/// Modified Z-scores (0.6745 · (x − median) / MAD), as hyperfine flags outliers.
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    modified_z_scores_about(values, median(&mut values.to_vec()))
}

/// As [`modified_z_scores`], about the values' median `m`, known already.
pub fn modified_z_scores_about(values: &[f64], m: f64) -> Vec<f64> {
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = median(&mut deviations);
    values
        .iter()
        .map(|&v| {
            if mad > 0.0 {
                modified_z(v, m, mad)
            } else {
                0.0
            }
        })
        .collect()
}

/// The modified Z-score of `v` about the median `m`, whose median deviation is `mad` (> 0).
fn modified_z(v: f64, m: f64, mad: f64) -> f64 {
    0.6745 * (v - m) / mad
}

/// How many of `sorted` (ascending) have a modified Z-score beyond [`OUTLIER_SCORE`], as
/// counting [`modified_z_scores_about`] their median would, without a vector of either.
/// Sorted values make both steps cheap: the median deviation is merged from the middle out,
/// and the score rises with the value, so the outliers are a prefix and a suffix.
pub fn outliers_in_sorted(sorted: &[f64]) -> usize {
    let n = sorted.len();
    if n == 0 {
        return 0;
    }
    let m = sorted_median(sorted);
    // Infinities (or NaN) order no deviations: scored one by one.
    if sorted.iter().any(|v| !v.is_finite()) {
        let scores = modified_z_scores_about(sorted, m);
        return scores.iter().filter(|z| z.abs() > OUTLIER_SCORE).count();
    }
    let mad = sorted_deviation_median(sorted, m);
    if mad <= 0.0 {
        return 0;
    }
    let low = sorted.partition_point(|&v| modified_z(v, m, mad) < -OUTLIER_SCORE);
    let high = sorted.partition_point(|&v| modified_z(v, m, mad) <= OUTLIER_SCORE);
    low + (n - high)
}

/// The median of the deviations `|v − m|` of finite `sorted` values (not empty) from their
/// median `m`: they fall to the left of `m` and rise to its right, so the middle ones are
/// merged from there outwards, in half a pass and no vector.
fn sorted_deviation_median(sorted: &[f64], m: f64) -> f64 {
    let n = sorted.len();
    let deviation = |i: usize| (sorted[i] - m).abs();
    // The (n/2)-th smallest deviation (0-based) and the one before it, merged in order from
    // the first value at or above the median (rightwards) and the last below it (leftwards).
    let mut left = sorted.partition_point(|&v| v < m);
    let mut right = left;
    let (mut before, mut at) = (0.0, 0.0);
    for _ in 0..=n / 2 {
        let take_left = right == n || (left > 0 && deviation(left - 1) <= deviation(right));
        before = at;
        at = if take_left {
            left -= 1;
            deviation(left)
        } else {
            right += 1;
            deviation(right - 1)
        };
    }
    if n % 2 == 1 { at } else { (before + at) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::sort_floats;

    #[test]
    fn the_robust_sd_is_scaled_mads_and_ignores_a_wild_value() {
        // Median 3; deviations 2, 1, 0, 1, 97: their median 1.
        let (centre, sd) = super::median_and_robust_sd(&mut [1.0, 2.0, 3.0, 4.0, 100.0]);
        assert_eq!((centre, sd), (3.0, 1.4826));
        let (centre, sd) = super::median_and_robust_sd(&mut []);
        assert!(centre.is_nan() && sd.is_nan());
    }

    proptest::proptest! {
        /// The count from sorted values is the count of the scores: samples of odd and even
        /// sizes, with ties (few levels), a zero MAD, far outliers on either side.
        #[test]
        fn outliers_of_sorted_values_are_those_the_scores_flag(
            levels in proptest::collection::vec(0u32..40, 1..60),
            far in proptest::collection::vec(proptest::option::weighted(0.1, -1e5..1e6f64), 60),
        ) {
            use super::{OUTLIER_SCORE, modified_z_scores, outliers_in_sorted};
            let mut values: Vec<f64> = (levels.iter().zip(&far))
                .map(|(&level, far)| far.unwrap_or(10.0 + f64::from(level) * 0.1))
                .collect();
            sort_floats(&mut values);
            let m = super::sorted_median(&values);
            let mut deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
            proptest::prop_assert_eq!(
                super::sorted_deviation_median(&values, m).to_bits(),
                super::median(&mut deviations).to_bits()
            );
            let scores = modified_z_scores(&values);
            let expected = scores.iter().filter(|z| z.abs() > OUTLIER_SCORE).count();
            proptest::prop_assert_eq!(outliers_in_sorted(&values), expected);
        }
    }

    #[test]
    fn outliers_of_no_values_or_infinite_ones() {
        use super::outliers_in_sorted;
        assert_eq!(outliers_in_sorted(&[]), 0);
        assert_eq!(outliers_in_sorted(&[1.0, 1.0, 1.0, 50.0, f64::INFINITY]), 0);
    }

    /// Bit for bit the order `total_cmp` gives: signed zeros, both NaNs, infinities,
    /// subnormals and a generated sample (fixed seed) with repeats.
    #[test]
    fn floats_sort_as_total_cmp_orders_them() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut values: Vec<f64> = (0..5000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 2001) as f64 / 10.0 - 100.0
            })
            .collect();
        values.extend([
            -0.0,
            0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE / 4.0,
            -f64::MIN_POSITIVE / 4.0,
            f64::MAX,
            f64::MIN,
        ]);
        let mut expected = values.clone();
        expected.sort_unstable_by(f64::total_cmp);
        sort_floats(&mut values);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&values), bits(&expected));
        // In order already: left as it is; equal under `<=` but not in total order: sorted.
        sort_floats(&mut values);
        assert_eq!(bits(&values), bits(&expected));
        let mut zeros = [0.0, -0.0];
        sort_floats(&mut zeros);
        assert_eq!(bits(&zeros), bits(&[-0.0, 0.0]));
    }
}
