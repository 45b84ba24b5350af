//! A steady trend in a series of runs: Mann–Kendall's test (does the figure tend to rise or
//! fall with the run's place, by the signs of every pair?) and Theil–Sen's slope (the median
//! of every pair's slope). Both rank-based: a run that a busy machine slowed counts as one
//! pair's sign, not as a weight on a least-squares line. Exact for short series without ties
//! (the distribution of inversions), the normal approximation with the ties' correction
//! beyond. Long series are thinned to [`MOST_POINTS`] evenly spaced runs, which keeps the
//! O(n²) pairs bounded and changes the answer only at the margin.

use statrs::distribution::{ContinuousCDF, Normal};

/// At most this many points enter the pairwise statistics.
const MOST_POINTS: usize = 1000;
/// Series up to this length without ties are tested exactly.
const EXACT_UP_TO: usize = 60;

/// At most [`MOST_POINTS`] of `values`, evenly spaced, with their places.
fn thinned(values: &[f64]) -> Vec<(f64, f64)> {
    let stride = values.len().div_ceil(MOST_POINTS).max(1);
    values
        .iter()
        .enumerate()
        .step_by(stride)
        .map(|(i, &v)| (i as f64, v))
        .collect()
}

/// Theil–Sen's slope of `values` against their places (per place); `None` with fewer than two
/// values or one that is not finite.
pub fn theil_sen(values: &[f64]) -> Option<f64> {
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let points = thinned(values);
    let mut slopes = Vec::with_capacity(points.len() * (points.len() - 1) / 2);
    for (i, &(x0, y0)) in points.iter().enumerate() {
        for &(x1, y1) in &points[i + 1..] {
            slopes.push((y1 - y0) / (x1 - x0));
        }
    }
    Some(crate::model::summary::median(&mut slopes))
}

/// Theil–Sen's slope of `values` from the pairs on the same side of `split` (both before it,
/// or both from it on): the trend of a series with a step at `split`, which pairs across it
/// would mistake for slope. `None` with no such pair.
pub fn theil_sen_beside(values: &[f64], split: usize) -> Option<f64> {
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let points = thinned(values);
    let side = |x: f64| x >= split as f64;
    let mut slopes = Vec::new();
    for (i, &(x0, y0)) in points.iter().enumerate() {
        for &(x1, y1) in points[i + 1..].iter().filter(|p| side(p.0) == side(x0)) {
            slopes.push((y1 - y0) / (x1 - x0));
        }
    }
    (!slopes.is_empty()).then(|| crate::model::summary::median(&mut slopes))
}

/// Mann–Kendall's two-sided p-value that `values` trend with their place; `None` with fewer
/// than three values or one that is not finite.
pub fn mann_kendall(values: &[f64]) -> Option<f64> {
    if values.len() < 3 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let points = thinned(values);
    let n = points.len();
    let mut s: i64 = 0;
    for (i, &(_, y0)) in points.iter().enumerate() {
        for &(_, y1) in &points[i + 1..] {
            s += match y1.partial_cmp(&y0) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted: Vec<f64> = points.iter().map(|p| p.1).collect();
    sorted.sort_by(f64::total_cmp);
    let ties: Vec<usize> = sorted
        .chunk_by(|a, b| a == b)
        .map(<[f64]>::len)
        .filter(|&t| t > 1)
        .collect();
    if ties.is_empty() && n <= EXACT_UP_TO {
        return Some(exact(n, s));
    }
    let t = |k: usize| (k * (k - 1) * (2 * k + 5)) as f64;
    let variance = (t(n) - ties.iter().map(|&k| t(k)).sum::<f64>()) / 18.0;
    if variance <= 0.0 {
        return Some(1.0);
    }
    // The continuity correction: S moves in steps of 2.
    let z = (s.unsigned_abs() as f64 - 1.0).max(0.0) / variance.sqrt();
    Some((2.0 * Normal::standard().sf(z)).min(1.0))
}

/// P(|S| ≥ |s|) for `n` distinct values in random order: S = pairs − 2·inversions, and the
/// inversions of a random permutation follow the Mahonian numbers.
fn exact(n: usize, s: i64) -> f64 {
    let pairs = n * (n - 1) / 2;
    // ways[k]: the share of permutations with k inversions, built one element at a time.
    let mut ways = vec![0.0f64; pairs + 1];
    ways[0] = 1.0;
    for m in 1..n {
        // Adding the (m+1)th element adds 0..=m inversions, each as likely.
        let mut next = vec![0.0f64; pairs + 1];
        let mut window = 0.0;
        for k in 0..=pairs {
            window += ways[k];
            if k > m {
                window -= ways[k - m - 1];
            }
            next[k] = window / (m + 1) as f64;
        }
        ways = next;
    }
    let observed = s.unsigned_abs();
    ways.iter()
        .enumerate()
        .filter(|&(k, _)| (pairs as i64 - 2 * k as i64).unsigned_abs() >= observed)
        .map(|(_, w)| w)
        .sum::<f64>()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_has_its_slope_and_the_smallest_p() {
        let line: Vec<f64> = (0..10).map(|i| 3.0 + 0.5 * f64::from(i)).collect();
        assert_eq!(theil_sen(&line), Some(0.5));
        // Every pair concordant: 2 of the 10! orders are as extreme.
        let p = mann_kendall(&line).unwrap();
        assert!((p - 2.0 / 3_628_800.0).abs() < 1e-15, "{p}");
    }

    #[test]
    fn the_exact_distribution_equals_listing_every_order() {
        // Four values: S of each of the 24 orders, counted by hand from the inversions
        // (1, 3, 5, 6, 5, 3, 1 orders with 0..6 inversions).
        let values = [1.0, 3.0, 2.0, 4.0]; // one inversion: S = 6 − 2 = 4
        let p = mann_kendall(&values).unwrap();
        // |S| ≥ 4: 0, 1, 5 or 6 inversions: (1 + 3 + 3 + 1) / 24.
        assert!((p - 8.0 / 24.0).abs() < 1e-15, "{p}");
    }

    #[test]
    fn a_step_does_not_leak_into_the_slope_beside_it() {
        let stepped: Vec<f64> = (0..12)
            .map(|i| if i < 6 { 100.0 } else { 120.0 } + 0.5 * f64::from(i))
            .collect();
        assert!(theil_sen(&stepped).unwrap() > 1.0);
        assert_eq!(theil_sen_beside(&stepped, 6), Some(0.5));
        assert_eq!(theil_sen_beside(&[1.0, 2.0], 1), None);
    }

    #[test]
    fn one_wild_run_moves_neither_the_slope_nor_the_test_much() {
        let mut flat: Vec<f64> = (0..30).map(|i| 100.0 + f64::from(i % 3)).collect();
        flat[29] = 10_000.0;
        assert!(theil_sen(&flat).unwrap().abs() < 0.1);
        assert!(mann_kendall(&flat).unwrap() > 0.05);
    }

    #[test]
    fn long_series_are_thinned_and_still_see_the_trend() {
        let rising: Vec<f64> = (0..5000)
            .map(|i| 100.0 + 0.001 * f64::from(i) + f64::from(i % 7) * 0.01)
            .collect();
        let slope = theil_sen(&rising).unwrap();
        assert!((slope - 0.001).abs() < 2e-4, "{slope}");
        assert!(mann_kendall(&rising).unwrap() < 1e-6);
        assert_eq!(mann_kendall(&[5.0; 40]), Some(1.0));
        assert_eq!(mann_kendall(&[1.0, 2.0]), None);
        assert_eq!(theil_sen(&[1.0, f64::NAN]), None);
    }
}
