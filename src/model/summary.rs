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
        .map(|v| {
            if mad > 0.0 {
                0.6745 * (v - m) / mad
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sort_floats;

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
