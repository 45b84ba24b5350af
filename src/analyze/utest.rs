//! The Mann-Whitney U test: does one sample tend to be larger than the other? Nothing is
//! assumed about the distributions. Exact for small samples (the null distribution of U is
//! counted over every way of splitting the pooled ranks, ties included) and by the normal
//! approximation with tie and continuity corrections beyond, at the same sizes as benchstat
//! (x/perf benchmath), so that both tools reach the same p-values on the same data.

use statrs::distribution::{ContinuousCDF, Normal};

/// Largest sample size for which the exact distribution is used without ties.
const EXACT_LIMIT: usize = 50;
/// Largest sample size for which the exact distribution is used with ties.
const TIES_EXACT_LIMIT: usize = 25;

/// The two-sided test of `a` against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UTest {
    /// U of the first sample.
    pub u: f64,
    /// The two-sided p-value; 1 when every value is equal.
    pub p: f64,
    pub exact: bool,
    /// Whether any values tie.
    pub ties: bool,
}

/// Tests whether `a` and `b` differ in location (two-sided). `None` when a sample is empty.
/// When every value of both samples is equal the p-value is 1.
///
/// ```
/// use latkit::analyze::utest::mann_whitney;
///
/// // Four against four with no overlap: the smallest possible p, 2 / C(8, 4).
/// let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
/// assert!((t.p - 2.0 / 70.0).abs() < 1e-15);
/// assert_eq!(t.u, 0.0);
/// ```
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<UTest> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Each sample sorted on its own as integers ordered as the numbers are (two sorts of
    // plain keys beat one of tagged pairs), then walked together into tie groups in rank
    // order: (size, members from `a`, twice the mid-rank).
    let (a, b) = (sorted_keys(a), sorted_keys(b));
    let mut groups: Vec<(usize, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let key = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => unreachable!(),
        };
        let first = i + j;
        let from_a = a[i..].iter().take_while(|&&k| k == key).count();
        let from_b = b[j..].iter().take_while(|&&k| k == key).count();
        (i, j) = (i + from_a, j + from_b);
        // Ranks are 1-based: the group spans first+1 ..= i+j.
        groups.push((from_a + from_b, from_a, first + 1 + i + j));
    }
    let twice_r1: usize = groups.iter().map(|&(_, m, twice)| m * twice).sum();
    let twice_u1 = twice_r1 - n1 * (n1 + 1);
    let u1 = twice_u1 as f64 / 2.0;
    let ties = groups.iter().any(|g| g.0 > 1);
    if groups.len() == 1 {
        return Some(UTest {
            u: u1,
            p: 1.0,
            exact: true,
            ties,
        });
    }
    let u2 = (n1 * n2) as f64 - u1;
    let limit = if ties { TIES_EXACT_LIMIT } else { EXACT_LIMIT };
    if n1 <= limit && n2 <= limit {
        let sizes: Vec<(usize, usize)> = groups.iter().map(|&(t, _, tw)| (t, tw)).collect();
        let p = if u1 == u2 {
            1.0
        } else {
            exact_two_sided(&sizes, n1, twice_r1)
        };
        return Some(UTest {
            u: u1,
            p,
            exact: true,
            ties,
        });
    }
    let n = (n1 + n2) as f64;
    let tie_term: f64 = groups.iter().map(|g| (g.0.pow(3) - g.0) as f64).sum();
    let mean = (n1 * n2) as f64 / 2.0;
    let sigma = ((n1 * n2) as f64 * ((n + 1.0) - tie_term / (n * (n - 1.0))) / 12.0).sqrt();
    let diff = u1 - mean;
    // Continuity correction towards the mean, none when U is the mean (benchstat's sign(0) = 0:
    // identical large samples give p = 1, not 0.999).
    let correction = if diff == 0.0 {
        0.0
    } else {
        diff.signum() * 0.5
    };
    let z = (diff - correction) / sigma;
    let normal = Normal::standard();
    let p = 2.0 * normal.cdf(z).min(1.0 - normal.cdf(z));
    Some(UTest {
        u: u1,
        p,
        exact: false,
        ties,
    })
}

/// The values as integers in the numbers' order (`f64::total_cmp`'s), sorted; -0 is 0, so
/// that equal numbers tie.
fn sorted_keys(values: &[f64]) -> Vec<u64> {
    let mut keys: Vec<u64> = values
        .iter()
        .map(|&v| {
            let bits = if v == 0.0 { 0 } else { v.to_bits() };
            if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            }
        })
        .collect();
    keys.sort_unstable();
    keys
}

/// The two-sided p-value of a first sample of `n1` whose mid-ranks sum to `twice_r1 / 2`,
/// for the pooled tie groups `(size, twice the mid-rank)`: the share of the C(N, n1) ways to
/// pick the first sample's members whose rank sum lies at least as far from its mean. Counted
/// over the distance, not as twice one tail: with ties the distribution is not symmetric (one
/// value above seven equal ones can only sit at U = 3 or 7, and 2·P(U ≤ 0) would be 0).
fn exact_two_sided(groups: &[(usize, usize)], n1: usize, twice_r1: usize) -> f64 {
    let n: usize = groups.iter().map(|g| g.0).sum();
    let max_twice_r: usize = groups.iter().map(|&(t, tw)| t * tw).sum();
    let width = max_twice_r + 1;
    // ways[k * width + s]: ways to pick k members so far with twice their rank sum s.
    let mut ways = vec![0.0f64; (n1 + 1) * width];
    ways[0] = 1.0;
    // Per k, the sums `s` that may hold ways so far (empty when lowest > highest): the walk
    // skips the rest of each row, which is most of it, in the order it took them all.
    let mut lowest = vec![usize::MAX; n1 + 1];
    let mut highest = vec![0; n1 + 1];
    lowest[0] = 0;
    let mut seen = 0;
    let mut next = vec![0.0f64; ways.len()];
    for &(size, twice_rank) in groups {
        let (mut next_lowest, mut next_highest) = (lowest.clone(), highest.clone());
        // C(size, m) for m members of this group, once per group rather than per sum.
        let mut choose = vec![1.0];
        for m in 0..size.min(n1) {
            choose.push(choose[m] * (size - m) as f64 / (m + 1) as f64);
        }
        for k in 0..=n1.min(seen) {
            for s in lowest[k]..=highest[k] {
                let w = ways[k * width + s];
                if w == 0.0 {
                    continue;
                }
                for (m, choose) in choose.iter().enumerate().take(n1 - k + 1) {
                    let to = s + m * twice_rank;
                    next[(k + m) * width + to] += w * choose;
                    next_lowest[k + m] = next_lowest[k + m].min(to);
                    next_highest[k + m] = next_highest[k + m].max(to);
                }
            }
        }
        // The old counts' rows are cleared where they held sums, to take the next group's.
        for k in 0..=n1 {
            if lowest[k] <= highest[k] {
                ways[k * width + lowest[k]..=k * width + highest[k]].fill(0.0);
            }
        }
        std::mem::swap(&mut ways, &mut next);
        (lowest, highest) = (next_lowest, next_highest);
        seen += size;
    }
    // Twice the mean rank sum, n1·(N + 1), is an integer: distances compare exactly.
    let centre = n1 * (n + 1);
    let observed = twice_r1.abs_diff(centre);
    let as_far: f64 = ways[n1 * width..(n1 + 1) * width]
        .iter()
        .enumerate()
        .filter(|(s, _)| s.abs_diff(centre) >= observed)
        .map(|(_, w)| w)
        .sum();
    (as_far / binomial(n, n1)).min(1.0)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The fewest values per sample with which a difference can reach significance at `alpha`
/// (the smallest two-sided exact p-value for n against n is 2 / C(2n, n)).
pub fn min_samples_to_detect(alpha: f64) -> Option<usize> {
    (1..=EXACT_LIMIT).find(|&n| 2.0 / binomial(2 * n, n) <= alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U from ranks over one sorted, tagged pool (how it was counted before the samples were
    /// sorted apart): the reference for the walk over two sorted samples.
    fn pooled_u(a: &[f64], b: &[f64]) -> f64 {
        let mut pooled: Vec<(f64, bool)> = a.iter().map(|&v| (v, true)).collect();
        pooled.extend(b.iter().map(|&v| (v, false)));
        pooled.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
        let (mut i, mut rank_sum) = (0, 0.0);
        while i < pooled.len() {
            let first = i;
            while i < pooled.len() && pooled[i].0 == pooled[first].0 {
                i += 1;
            }
            let mid_rank = (first + 1 + i) as f64 / 2.0;
            rank_sum += mid_rank * pooled[first..i].iter().filter(|p| p.1).count() as f64;
        }
        rank_sum - (a.len() * (a.len() + 1)) as f64 / 2.0
    }

    #[test]
    fn ranks_over_two_sorted_samples_are_those_of_the_pool() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..2000 {
            // Few distinct values (many ties), both signs, and both zeros.
            let mut sample = |len: u64| -> Vec<f64> {
                (0..1 + next(len))
                    .map(|_| match next(12) {
                        0 => -0.0,
                        1 => 0.0,
                        k => (k as f64 - 6.0) * 1.5,
                    })
                    .collect()
            };
            let (a, b) = (sample(40), sample(40));
            assert_eq!(
                mann_whitney(&a, &b).unwrap().u,
                pooled_u(&a, &b),
                "{a:?} {b:?}"
            );
        }
    }

    fn p(a: &[f64], b: &[f64]) -> f64 {
        mann_whitney(a, b).unwrap().p
    }

    #[test]
    fn small_cases_by_hand() {
        // 3 vs 3, separated: 2 / C(6, 3) = 0.1.
        assert!((p(&[-1.0, -1.0, -1.0], &[1.0, 1.0, 1.0]) - 0.1).abs() < 1e-15);
        // 4 vs 4 with one swap each way: U = 3, P(U ≤ 3) = 17 / 70, two-sided 34 / 70.
        let got = p(&[1.0, -1.0, -1.0, -1.0], &[-1.0, 1.0, 1.0, 1.0]);
        assert!((got - 0.4857142857142857).abs() < 1e-12, "{got}");
        // Identical samples.
        assert_eq!(p(&[1.0; 4], &[1.0; 4]), 1.0);
        // U = n1·n2/2 exactly: p = 1.
        assert_eq!(p(&[1.0, 4.0], &[2.0, 3.0]), 1.0);
    }

    #[test]
    fn exact_without_ties_matches_counting_by_hand() {
        // a = {1, 2, 4}, b = {3, 5, 6}: U1 = 1. Of the 20 ways, U ≤ 1 happens twice
        // ({1,2,3} → 0, {1,2,4} → 1), so p = 2 · 2/20 = 0.2.
        let t = mann_whitney(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]).unwrap();
        assert_eq!(t.u, 1.0);
        assert!((t.p - 0.2).abs() < 1e-15);
        assert!(t.exact);
    }

    #[test]
    fn ties_use_mid_ranks() {
        // a = {1, 2, 2}, b = {2, 3, 4}: ranks 1, 3, 3 | 3, 5, 6; R1 = 7, U1 = 1.
        let t = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]).unwrap();
        assert_eq!(t.u, 1.0);
        // Splits with U ≤ 1: {1,2,2}-type picks. Count: first-sample sets of 3 from
        // {1, 2a, 2b, 2c, 3, 4} with 2R ≤ 2·(1+6)=14 → {1,2,2} (3 ways, R = 7). 2·3/20 = 0.3.
        assert!((t.p - 0.3).abs() < 1e-12, "{}", t.p);
    }

    #[test]
    fn ties_that_make_the_distribution_lopsided_are_counted_by_distance() {
        // One value against seven equal ones: U1 is 3 (the value among the tied ones) in 7 of
        // the 8 ways, 7 in one. As far from the mean (3.5) as the observed 7: 1 in 8.
        let t = mann_whitney(&[177.0], &[5.0; 7]).unwrap();
        assert_eq!(t.u, 7.0);
        assert!((t.p - 0.125).abs() < 1e-15, "{}", t.p);
        // Against a listing of every split, on samples with lopsided ties.
        let (a, b) = ([1.0, 1.0, 2.0, 9.0], [1.0, 1.0, 1.0, 3.0, 3.0]);
        let pooled: Vec<f64> = a.iter().chain(&b).copied().collect();
        let rank = |v: f64| {
            let below = pooled.iter().filter(|&&x| x < v).count() as f64;
            let equal = pooled.iter().filter(|&&x| x == v).count() as f64;
            below + (equal + 1.0) / 2.0
        };
        let observed: f64 = a.iter().map(|&v| rank(v)).sum();
        let centre = 4.0 * 10.0 / 2.0;
        let (mut as_far, mut total) = (0.0, 0.0);
        for mask in 0u32..1 << 9 {
            if mask.count_ones() != 4 {
                continue;
            }
            let sum: f64 = (0..9)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| rank(pooled[i]))
                .sum();
            total += 1.0;
            as_far += f64::from(u8::from(
                (sum - centre).abs() >= (observed - centre).abs() - 1e-9,
            ));
        }
        let got = mann_whitney(&a, &b).unwrap().p;
        assert!(
            (got - as_far / total).abs() < 1e-12,
            "{got} {}",
            as_far / total
        );
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (30..90).map(f64::from).collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert!(!t.exact);
        assert!(t.p < 1e-6);
        let same = mann_whitney(&a, &a).unwrap();
        assert_eq!(same.p, 1.0, "U at its mean: no continuity correction");
    }

    #[test]
    fn four_samples_are_needed_at_five_percent() {
        assert_eq!(min_samples_to_detect(0.05), Some(4));
        assert_eq!(min_samples_to_detect(0.01), Some(5));
    }
}
