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
