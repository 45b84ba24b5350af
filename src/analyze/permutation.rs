//! The regression gate's test: a two-sample permutation test on the mean of log values
//! (Fisher–Pitman). Under "no change" every split of the pooled values into the two sides is
//! as likely as the observed one, so the p-value is the share of splits whose new side sums at
//! least as high: exact at any sample size and for any distribution, with no assumption of
//! normality. On log-normal benchmark noise it has the power of a t test on logs, which the
//! rank-based U test has only at 3/π of the repetitions. One outlier cannot make it
//! significant: every split that puts the outlier on the new side sums high, and those are
//! about half of all splits.
//!
//! Up to [`EXACT_UP_TO`] values it counts every split (meet in the middle: the subset sums of
//! each half, sorted, matched by two pointers). Beyond, it draws random splits from a fixed
//! seed, so the same data give the same p-value, and stops early once [`ENOUGH_ABOVE`] of them
//! sum at least as high (Besag and Clifford's sequential p-value, exact as the full count is):
//! a large p is known after a few hundred draws, a small one is drawn [`DRAWS`] times.

/// Pooled sizes up to this are counted exactly (two halves of at most 2^16 subsets).
const EXACT_UP_TO: usize = 32;
/// The most random splits drawn beyond that: the p-value's resolution is about 1e-5.
const DRAWS: u32 = 100_000;
/// Drawing stops once this many splits sum at least as high as the observed one.
const ENOUGH_ABOVE: u32 = 200;
/// Sums closer than this (relative to the largest magnitude) are ties, which count as high.
const TIE: f64 = 1e-9;

/// The one-sided p-value that `b`'s values are higher than `a`'s, from a permutation test on
/// log values (raw values when any is not positive); `None` with fewer than two values a side
/// or a value that is not finite. That they are lower is `higher(b, a)`.
pub fn higher(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let positive = a.iter().chain(b).all(|&v| v > 0.0);
    let pooled: Vec<f64> = a
        .iter()
        .chain(b)
        .map(|&v| if positive { v.ln() } else { v })
        .collect();
    let observed: f64 = pooled[a.len()..].iter().sum();
    let scale = pooled.iter().fold(0.0_f64, |m, v| m.max(v.abs())) * pooled.len() as f64;
    let threshold = observed - TIE * scale.max(f64::MIN_POSITIVE);
    Some(if pooled.len() <= EXACT_UP_TO {
        let splits = Splits::of(&pooled, b.len());
        splits.at_least(threshold) / splits.total()
    } else {
        drawn(&pooled, b.len(), threshold)
    })
}

/// The subset sums of each half of the pooled values, by how many values they take.
struct Splits {
    /// `left[k]`: the sorted sums of the k-subsets of the first half.
    left: Vec<Vec<f64>>,
    right: Vec<Vec<f64>>,
    /// Values on the new side.
    size: usize,
}

impl Splits {
    fn of(pooled: &[f64], size: usize) -> Splits {
        let (left, right) = pooled.split_at(pooled.len() / 2);
        Splits {
            left: subset_sums(left),
            right: subset_sums(right),
            size,
        }
    }

    /// How many splits give the new side a sum of at least `threshold`.
    fn at_least(&self, threshold: f64) -> f64 {
        let mut count = 0.0;
        for (k, sums) in self.left.iter().enumerate() {
            let Some(others) = self.size.checked_sub(k).and_then(|r| self.right.get(r)) else {
                continue;
            };
            // As the left sum grows the right needs less: the pointer only moves down.
            let mut first = others.len();
            for s in sums {
                while first > 0 && s + others[first - 1] >= threshold {
                    first -= 1;
                }
                count += (others.len() - first) as f64;
            }
        }
        count
    }

    fn total(&self) -> f64 {
        self.left
            .iter()
            .enumerate()
            .filter_map(|(k, l)| {
                let r = self.size.checked_sub(k).and_then(|r| self.right.get(r))?;
                Some(l.len() as f64 * r.len() as f64)
            })
            .sum()
    }
}

/// Every subset's sum, grouped by its size and sorted. Built from the last value to the first:
/// the k-subsets of the values from `i` on are those of the values after `i` merged with the
/// (k-1)-subsets after `i` plus `values[i]`, both already sorted, so each step is linear and
/// the whole costs about two passes over the 2^n sums (sorting each group cost a log factor
/// more, most of a 16-against-16 test). A subset's sum adds its values from the last to the
/// first, the same additions in the same order at any size.
fn subset_sums(values: &[f64]) -> Vec<Vec<f64>> {
    let mut by_size = vec![vec![0.0]];
    for &value in values.iter().rev() {
        let none: &[f64] = &[];
        by_size = (0..=by_size.len())
            .map(|k| {
                let without = by_size.get(k).map_or(none, Vec::as_slice);
                let with = k.checked_sub(1).map_or(none, |k| &by_size[k]);
                merge_plus(without, with, value)
            })
            .collect();
    }
    by_size
}

/// The sorted `without` and the sorted `with`, each plus `value`, merged in order (adding
/// one value keeps a sorted list sorted: rounding is monotonic).
fn merge_plus(without: &[f64], with: &[f64], value: f64) -> Vec<f64> {
    let mut merged = Vec::with_capacity(without.len() + with.len());
    let (mut i, mut j) = (0, 0);
    while i < without.len() && j < with.len() {
        let plus = with[j] + value;
        if without[i].total_cmp(&plus).is_le() {
            merged.push(without[i]);
            i += 1;
        } else {
            merged.push(plus);
            j += 1;
        }
    }
    merged.extend_from_slice(&without[i..]);
    merged.extend(with[j..].iter().map(|s| s + value));
    merged
}

/// The p-value from random splits of a fixed seed: the share whose new side of `size` values
/// sums to at least `threshold`.
fn drawn(pooled: &[f64], size: usize, threshold: f64) -> f64 {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |bound: usize| {
        // splitmix64, then a multiply-shift into [0, bound).
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u128::from(z) * bound as u128) >> 64) as usize
    };
    let mut values = pooled.to_vec();
    let mut high = 0;
    for draws in 1..=DRAWS {
        // A partial Fisher–Yates shuffle: the first `size` places are a uniform split.
        let mut sum = 0.0;
        for i in 0..size {
            let j = i + next(values.len() - i);
            values.swap(i, j);
            sum += values[i];
        }
        high += u32::from(sum >= threshold);
        if high == ENOUGH_ABOVE {
            return f64::from(high) / f64::from(draws);
        }
    }
    // The observed split counts as one of its own: never below what the draws can show.
    f64::from(high + 1) / f64::from(DRAWS + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The p-value by listing every split: what the fast count must equal.
    fn listed(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).map(|v| v.ln()).collect();
        let observed: f64 = pooled[a.len()..].iter().sum();
        let (mut high, mut total) = (0.0, 0.0);
        for mask in 0u32..1 << pooled.len() {
            if mask.count_ones() as usize != b.len() {
                continue;
            }
            let sum: f64 = (0..pooled.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| pooled[i])
                .sum();
            total += 1.0;
            high += f64::from(u8::from(sum >= observed - 1e-9));
        }
        high / total
    }

    #[test]
    fn the_count_equals_listing_every_split() {
        let a = [101.0, 99.0, 103.0, 98.0, 100.0, 102.0, 97.0];
        let b = [104.0, 99.5, 106.0, 103.0, 101.0, 105.0];
        for (x, y) in [(&a[..], &b[..]), (&b[..], &a[..])] {
            let (got, want) = (higher(x, y).unwrap(), listed(x, y));
            assert!((got - want).abs() < 1e-12, "{got} {want}");
        }
        assert!(higher(&a, &b).unwrap() < 0.05 && higher(&b, &a).unwrap() > 0.95);
    }

    #[test]
    fn subset_sums_are_every_sum_sorted_bit_for_bit() {
        // Each subset summed from its last value to its first, then each size sorted: the
        // merged construction must give the very same floats, signed zeros included.
        let values = [
            0.1, -0.0, 3.7e-5, 0.0, -2.5, 1e300, 0.1, -0.3, 7.0, -1e-300, 2.0,
        ];
        let mut want = vec![Vec::new(); values.len() + 1];
        for mask in 0u32..1 << values.len() {
            let sum = (0..values.len())
                .rev()
                .filter(|i| mask >> i & 1 == 1)
                .fold(0.0, |sum, i| sum + values[i]);
            want[mask.count_ones() as usize].push(sum);
        }
        for sums in &mut want {
            sums.sort_by(f64::total_cmp);
        }
        let bits = |groups: &[Vec<f64>]| -> Vec<Vec<u64>> {
            groups
                .iter()
                .map(|g| g.iter().map(|s| s.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&subset_sums(&values)), bits(&want));
    }

    #[test]
    fn complete_separation_gives_the_smallest_p() {
        // 3 against 3, all of b above: 1 split of C(6,3) = 20.
        let a = [1.0, 2.0, 3.0];
        let b = [4.0, 5.0, 6.0];
        assert!((higher(&a, &b).unwrap() - 0.05).abs() < 1e-12);
        assert!((higher(&b, &a).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn equal_sides_are_no_evidence_either_way() {
        assert_eq!(higher(&[5.0; 4], &[5.0; 4]), Some(1.0));
    }

    #[test]
    fn one_outlier_cannot_make_a_change() {
        let a = [
            100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.1, 99.9, 100.3, 99.7,
        ];
        let mut b = a;
        b[3] = 10_000.0;
        let p = higher(&a, &b).unwrap();
        assert!(p > 0.25, "{p}");
    }

    #[test]
    fn drawn_splits_agree_with_the_exact_count() {
        // 16 against 16 is counted exactly; draws on the same data must agree, whether the
        // p-value is small (drawn to the end) or large (stopped early).
        let a: Vec<f64> = (0..16).map(|i| 100.0 + f64::from(i % 5)).collect();
        let b: Vec<f64> = (0..16).map(|i| 101.5 + f64::from(i % 5)).collect();
        for (x, y) in [(&a, &b), (&b, &a)] {
            let exact = higher(x, y).unwrap();
            let pooled: Vec<f64> = x.iter().chain(y).map(|v| v.ln()).collect();
            let observed: f64 = pooled[16..].iter().sum();
            let estimate = drawn(&pooled, 16, observed - 1e-9);
            // Within 15 % of the count, or the binomial error of 100,000 draws at p ≈ 0.01.
            let error = (estimate - exact).abs();
            assert!(
                error < 2e-3 || error < 0.15 * exact,
                "{estimate} vs {exact}"
            );
        }
        assert!(higher(&a, &b).unwrap() < 0.05);
    }

    #[test]
    fn too_few_or_not_finite_is_no_test() {
        assert_eq!(higher(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(higher(&[1.0, f64::NAN], &[2.0, 3.0]), None);
    }
}
