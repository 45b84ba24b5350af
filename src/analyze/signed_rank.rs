//! Wilcoxon's signed-rank test on paired differences: is the first of each pair larger? The
//! pairs are the rounds of an interleaved measurement (the commit and an end, run in the same
//! round in an order drawn at random), so that load which comes and goes hits both members of
//! a round alike, and whatever it does not cancel it cannot turn into a bias: with the order
//! random, under "no difference" each round's difference is as likely positive as negative
//! whatever the machine did, which is all the test assumes. Ranks, not values: one round that
//! a burst of load wrecked counts as one large rank, not as a sum that outweighs every other
//! round. Exact (every sign pattern counted, ties at their mid-rank) up to [`EXACT_UP_TO`]
//! pairs, the normal approximation with the tie correction beyond.

use statrs::distribution::{ContinuousCDF, Normal};

/// Pairs up to this are counted exactly.
const EXACT_UP_TO: usize = 60;
/// Differences closer to zero than this (relative to the largest) are no difference.
const ZERO: f64 = 1e-12;

/// The one-sided p-value that `differences` lie above zero (zero differences set aside, as
/// Wilcoxon did); `None` when none is left or one is not finite.
///
/// ```
/// use latkit::analyze::signed_rank::above;
///
/// // Seven rounds, every one the same way: 1 / 2^7 of the sign patterns are as extreme.
/// let p = above(&[0.3, 0.5, 0.1, 0.2, 0.4, 0.6, 0.7]).unwrap();
/// assert!((p - 1.0 / 128.0).abs() < 1e-15);
/// ```
pub fn above(differences: &[f64]) -> Option<f64> {
    if differences.iter().any(|d| !d.is_finite()) {
        return None;
    }
    let largest = differences.iter().fold(0.0_f64, |m, d| m.max(d.abs()));
    let mut kept: Vec<f64> = differences
        .iter()
        .copied()
        .filter(|d| d.abs() > ZERO * largest)
        .collect();
    if kept.is_empty() {
        return None;
    }
    kept.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Twice each mid-rank (integers), and twice the rank sum of the positive differences.
    let mut twice_ranks = Vec::with_capacity(kept.len());
    let mut start = 0;
    while start < kept.len() {
        let end = start
            + kept[start..]
                .iter()
                .take_while(|d| d.abs() == kept[start].abs())
                .count();
        twice_ranks.extend(std::iter::repeat_n(start + 1 + end, end - start));
        start = end;
    }
    let observed: usize = kept
        .iter()
        .zip(&twice_ranks)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| r)
        .sum();
    Some(if kept.len() <= EXACT_UP_TO {
        exact_at_least(&twice_ranks, observed)
    } else {
        normal_at_least(&twice_ranks, observed)
    })
}

/// P(twice the positive rank sum ≥ `observed`) over the 2^n equally likely sign patterns.
fn exact_at_least(twice_ranks: &[usize], observed: usize) -> f64 {
    let total: usize = twice_ranks.iter().sum();
    // ways[s]: the share of sign patterns so far whose positive ranks sum (twice) to s.
    let mut ways = vec![0.0f64; total + 1];
    ways[0] = 1.0;
    let mut reach = 0;
    for &r in twice_ranks {
        reach += r;
        for s in (0..=reach).rev() {
            let with = if s >= r { ways[s - r] } else { 0.0 };
            ways[s] = (ways[s] + with) / 2.0;
        }
    }
    ways[observed.min(total + 1)..].iter().sum::<f64>().min(1.0)
}

/// The normal approximation of [`exact_at_least`], with the ties' correction of the variance
/// and a continuity correction.
fn normal_at_least(twice_ranks: &[usize], observed: usize) -> f64 {
    let ranks: Vec<f64> = twice_ranks.iter().map(|&r| r as f64 / 2.0).collect();
    let mean = ranks.iter().sum::<f64>() / 2.0;
    let variance = ranks.iter().map(|r| r * r).sum::<f64>() / 4.0;
    let w = observed as f64 / 2.0;
    let z = (w - mean - 0.5) / variance.sqrt();
    Normal::standard().sf(z)
}

/// The fewest pairs with which a difference can reach one-sided significance at `alpha`
/// (every pair the same way: p = 1 / 2^n).
pub fn min_pairs_to_detect(alpha: f64) -> usize {
    (1..=64).find(|&n| 0.5f64.powi(n) <= alpha).unwrap_or(64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The p-value by listing every sign pattern: what the count must equal.
    fn listed(differences: &[f64]) -> f64 {
        let kept: Vec<f64> = differences.iter().copied().filter(|d| *d != 0.0).collect();
        let rank = |i: usize| {
            let below = kept.iter().filter(|d| d.abs() < kept[i].abs()).count();
            let equal = kept.iter().filter(|d| d.abs() == kept[i].abs()).count();
            below as f64 + (equal as f64 + 1.0) / 2.0
        };
        let statistic = |signs: u32| -> f64 {
            (0..kept.len())
                .filter(|&i| (signs >> i & 1 == 1) == (kept[i] > 0.0))
                .map(rank)
                .sum()
        };
        let observed = statistic(u32::MAX);
        let patterns = 1u32 << kept.len();
        let at_least = (0..patterns)
            .filter(|&s| {
                let w: f64 = (0..kept.len()).filter(|&i| s >> i & 1 == 1).map(rank).sum();
                w >= observed - 1e-9
            })
            .count();
        at_least as f64 / f64::from(patterns)
    }

    #[test]
    fn the_count_equals_listing_every_sign_pattern_ties_and_zeros_included() {
        let cases: [&[f64]; 5] = [
            &[0.3, -0.1, 0.2, 0.5, -0.4, 0.6],
            &[1.0, 1.0, -1.0, 2.0, 2.0, -2.0, 3.0],
            &[0.0, 0.2, 0.2, -0.2, 0.1, 0.0, 0.4],
            &[-0.5, -0.1, -0.3, 0.2],
            &[5.0, 5.0, 5.0, 5.0, 5.0],
        ];
        for case in cases {
            let (got, want) = (above(case).unwrap(), listed(case));
            assert!((got - want).abs() < 1e-12, "{case:?}: {got} {want}");
        }
    }

    #[test]
    fn one_wrecked_round_counts_as_one_rank() {
        // Nine rounds 3-5 % worse and one that a burst made 300 % better: still decided.
        let mut rounds = vec![0.03, 0.05, 0.04, 0.035, 0.045, 0.03, 0.05, 0.04, 0.042];
        rounds.push(-3.0);
        let p = above(&rounds).unwrap();
        assert!(p < 0.05, "{p}");
    }

    #[test]
    fn nothing_to_test() {
        assert_eq!(above(&[]), None);
        assert_eq!(above(&[0.0, 0.0]), None);
        assert_eq!(above(&[1.0, f64::NAN]), None);
        assert_eq!(min_pairs_to_detect(0.05), 5);
        assert_eq!(min_pairs_to_detect(0.01), 7);
    }

    #[test]
    fn large_samples_follow_the_normal_approximation() {
        let rounds: Vec<f64> = (0..80).map(|i| f64::from(i % 9) - 3.5).collect();
        let exact_side = above(&rounds[..60]).unwrap();
        assert!(exact_side > 0.01 && exact_side < 0.99, "{exact_side}");
        let p = above(&rounds).unwrap();
        assert!(p > 0.01 && p < 0.2, "{p}");
        let shifted: Vec<f64> = rounds.iter().map(|d| d + 2.0).collect();
        assert!(above(&shifted).unwrap() < 1e-6);
    }
}
