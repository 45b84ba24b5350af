//! How far counted repetitions lie apart, and whether they agree: what decides whether a
//! counted figure's changes are decided by size. Here, below both the runners (which count
//! until the counts show it) and the comparisons (which decide by it).

use super::summary::median;

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

/// Whether counted repetitions agree within the floor: two at least, since one count agrees
/// with itself whatever the next would be.
pub fn agree(values: &[f64]) -> bool {
    values.len() >= 2 && spread_percent(values) <= FLOOR_PERCENT
}
