//! How many times one sample's typical value is another's: the ratio of the medians, with the
//! distribution-free confidence interval of the shift between the samples on a log scale (the
//! interval that inverts the Mann-Whitney test, as Hodges and Lehmann gave it). Nothing is
//! assumed about the distributions, so a table of medians and its "Relative" column tell the
//! same story: the relative figure is the quotient of the two medians shown beside it.

use super::stats::CONFIDENCE;
use super::view::Ratio;
use crate::model::summary::{sort_floats, sorted_median};
use statrs::distribution::{ContinuousCDF, Normal};
use std::borrow::Cow;

/// Largest sample size for which the exact null distribution of U sets the interval's ranks.
const EXACT_LIMIT: usize = 50;
/// Candidates drawn to choose a selection's pivots.
const PIVOT_SAMPLE: usize = 2048;

/// `median(a) / median(b)` with its [`CONFIDENCE`] interval; the interval is `None` when the
/// samples are too small to give one (three against three cannot reach 95 %). `None` when a
/// value is not positive and finite, as a ratio of times or sizes needs.
///
/// ```
/// use latkit::analyze::ratio::ratio_of_medians;
///
/// let a = [20.0, 21.0, 22.0, 20.5, 21.5, 20.8, 21.2, 20.9];
/// let b = [10.0, 10.5, 11.0, 10.2, 10.8, 10.4, 10.6, 10.1];
/// let r = ratio_of_medians(&a, &b).unwrap();
/// assert!((r.ratio - 20.95 / 10.45).abs() < 1e-12);
/// let (low, high) = r.interval.unwrap();
/// assert!(low < r.ratio && r.ratio < high && low > 1.8 && high < 2.2);
/// ```
pub fn ratio_of_medians(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let positive = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !positive(a) || !positive(b) {
        return None;
    }
    // Callers mostly hold their samples sorted already: then nothing is copied.
    let (a, b) = (sorted(a), sorted(b));
    let ratio = sorted_median(&a) / sorted_median(&b);
    let interval = log_shift_interval(&logs(&a), &logs(&b)).map(|(low, high)| {
        // The quotient of medians and the shift estimate part only in odd samples: the
        // interval then reaches the figure shown rather than excluding it.
        (low.exp().min(ratio), high.exp().max(ratio))
    });
    Some(Ratio { ratio, interval })
}

/// `values` in ascending order, copied only when they are not.
fn sorted(values: &[f64]) -> Cow<'_, [f64]> {
    if values.is_sorted() {
        return Cow::Borrowed(values);
    }
    let mut copy = values.to_vec();
    sort_floats(&mut copy);
    Cow::Owned(copy)
}

/// The natural logarithms of sorted positive `values`: sorted too, as the logarithm ascends.
fn logs(sorted: &[f64]) -> Vec<f64> {
    sorted.iter().map(|v| v.ln()).collect()
}

/// The interval of the shift `x − y` that the two-sided Mann-Whitney test at [`CONFIDENCE`]
/// does not reject: the `k`-th smallest and largest of the pairwise differences, selected
/// among all n·m of them without forming them ([`Pairwise::select`]).
fn log_shift_interval(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let (n, m) = (x.len(), y.len());
    let k = interval_rank(n, m, 1.0 - CONFIDENCE)?;
    // Every difference alike (a count that never changed): nothing to select among.
    let (least, most) = (x[0] - y[m - 1], x[n - 1] - y[0]);
    if least == most {
        return Some((least, least));
    }
    Some(Pairwise::new(x, y).select_both(k, n * m + 1 - k))
}

/// Every difference `x[i] − y[j]` of two sorted samples as a matrix whose rows and columns
/// ascend (`y` taken from its largest), searched for its k-th smallest element the way
/// Monahan's algorithm finds the Hodges-Lehmann estimate: pivots drawn from the candidates
/// left are counted against every row in one pass of two pointers and discard most of them,
/// so a selection costs O((n + m) log(n·m)) time and O(n + m) memory.
struct Pairwise<'a> {
    x: &'a [f64],
    y_falling: Vec<f64>,
    /// Per row, the candidates' columns `lo..hi`: both only fall as the rows go on, since
    /// every bound is a count of a row's differences below a pivot.
    lo: Vec<usize>,
    hi: Vec<usize>,
    /// The rows that still hold candidates (those outside hold none).
    rows: std::ops::Range<usize>,
    /// Scratch: per row, the candidates' bound below a pivot and up to one.
    below: Vec<usize>,
    upto: Vec<usize>,
    /// Scratch: a pivot sample, or the candidates listed for a final selection.
    values: Vec<f64>,
    /// Picks pivots; any choice gives the same element, this one keeps runs reproducible.
    state: u64,
}

impl<'a> Pairwise<'a> {
    fn new(x: &'a [f64], y: &[f64]) -> Pairwise<'a> {
        let n = x.len();
        Pairwise {
            x,
            y_falling: y.iter().rev().copied().collect(),
            lo: vec![0; n],
            hi: vec![0; n],
            rows: 0..n,
            below: vec![0; n],
            upto: vec![0; n],
            values: Vec::new(),
            state: 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.x[i] - self.y_falling[j]
    }

    /// How many candidates are left: the count a selection carries, checked in debug builds.
    fn left(&self) -> usize {
        self.rows.clone().map(|i| self.hi[i] - self.lo[i]).sum()
    }

    /// Every difference a candidate again.
    fn reset(&mut self) {
        self.lo.fill(0);
        self.hi.fill(self.y_falling.len());
        self.rows = 0..self.x.len();
    }

    /// The `k1`-th and `k2`-th smallest differences (1-based, `k1 ≤ k2`), as two selections
    /// that share their first step: one pass keeps the candidates between a pivot below the
    /// `k1`-th and one above the `k2`-th (an interval's ends lie close together), and each
    /// selection goes on from there.
    fn select_both(&mut self, k1: usize, k2: usize) -> (f64, f64) {
        self.reset();
        let left = self.x.len() * self.y_falling.len();
        // Few enough to list: fewer than one pivot sample would draw.
        if left <= PIVOT_SAMPLE {
            self.list_candidates();
            let first = *self.values.select_nth_unstable_by(k1 - 1, f64::total_cmp).1;
            return (
                first,
                *self.values.select_nth_unstable_by(k2 - 1, f64::total_cmp).1,
            );
        }
        let (low, ..) = self.pivots(k1, left);
        let (.., high) = self.pivots(k2, left);
        let (below, upto) = self.tally(low, high);
        if below < k1 && k2 <= upto {
            self.keep(Keep::Between);
            let (lo, hi, rows) = (self.lo.clone(), self.hi.clone(), self.rows.clone());
            let first = self.select(k1 - below, upto - below);
            (self.lo, self.hi, self.rows) = (lo, hi, rows);
            return (first, self.select(k2 - below, upto - below));
        }
        self.reset();
        let first = self.select(k1, left);
        self.reset();
        (first, self.select(k2, left))
    }

    /// The `k`-th smallest (1-based) of the `left` candidates left.
    fn select(&mut self, mut k: usize, mut left: usize) -> f64 {
        let (n, m) = (self.x.len(), self.y_falling.len());
        loop {
            debug_assert_eq!(left, self.left());
            // A selection among twice the rows and columns, or fewer candidates than a pivot
            // sample would draw, costs less than a narrowing pass.
            if left <= (2 * (n + m)).max(PIVOT_SAMPLE) {
                self.list_candidates();
                return *self.values.select_nth_unstable_by(k - 1, f64::total_cmp).1;
            }
            let (low, middle, high) = self.pivots(k, left);
            let narrowed = match self.narrow(low, high, k, left) {
                // Every candidate lies between the two: one pivot still removes its equals.
                Narrowed::Stuck => self.narrow(middle, middle, k, left),
                narrowed => narrowed,
            };
            match narrowed {
                Narrowed::Found(value) => return value,
                Narrowed::Rank(rank, kept) => (k, left) = (rank, kept),
                Narrowed::Stuck => unreachable!("one pivot always finds or narrows"),
            }
        }
    }

    /// Every candidate left, into `values`, a row's at a time.
    fn list_candidates(&mut self) {
        self.values.clear();
        for i in self.rows.clone() {
            let a = self.x[i];
            let columns = &self.y_falling[self.lo[i]..self.hi[i]];
            self.values.extend(columns.iter().map(|y| a - y));
        }
    }

    /// Two pivots that bracket the `k`-th of the `left` candidates with high probability, and
    /// one between them: order statistics of a random sample of the candidates (as Floyd and
    /// Rivest choose theirs), so that a step keeps a few per cent of them, not half.
    ///
    /// The sample is stratified: one candidate drawn from each of [`PIVOT_SAMPLE`] equal runs
    /// of them in row order, so that one walk over the rows finds them all, and its order
    /// statistics stray less than those of independent draws.
    fn pivots(&mut self, k: usize, left: usize) -> (f64, f64, f64) {
        debug_assert!(left > PIVOT_SAMPLE);
        let mut sample = std::mem::take(&mut self.values);
        sample.clear();
        let (mut i, mut before) = (self.rows.start, 0);
        let stratum = |s: usize| (left as u128 * s as u128 / PIVOT_SAMPLE as u128) as usize;
        for s in 0..PIVOT_SAMPLE {
            let (start, end) = (stratum(s), stratum(s + 1));
            let r = start + self.draw() % (end - start);
            while before + (self.hi[i] - self.lo[i]) <= r {
                before += self.hi[i] - self.lo[i];
                i += 1;
            }
            sample.push(self.at(i, self.lo[i] + r - before));
        }
        let p = k as f64 / left as f64;
        let at = p * PIVOT_SAMPLE as f64;
        // Two standard deviations of independent draws (more than the stratified sample
        // strays): a step keeps under 5 % of the candidates, and seldom does a pivot miss the
        // k-th, when the step keeps the whole side beyond it.
        let spread = 2.0 * (PIVOT_SAMPLE as f64 * p * (1.0 - p)).sqrt() + 1.0;
        let index = |rank: f64| (rank.max(0.0) as usize).min(PIVOT_SAMPLE - 1);
        let (low, middle, high) = (index(at - spread), index(at), index(at + spread));
        // Three selections, not a sort: each in the part the one before left beyond it.
        let middle_value = *sample.select_nth_unstable_by(middle, f64::total_cmp).1;
        let (below, above) = sample.split_at_mut(middle);
        let low_value = match low < middle {
            true => *below.select_nth_unstable_by(low, f64::total_cmp).1,
            false => middle_value,
        };
        let high_value = match high > middle {
            true => {
                *above
                    .select_nth_unstable_by(high - middle, f64::total_cmp)
                    .1
            }
            false => middle_value,
        };
        self.values = sample;
        (low_value, middle_value, high_value)
    }

    /// Keeps the `left` candidates that may still be the `k`-th, given `low ≤ high`: those
    /// below `low`, above `high`, or between them, whichever side it is on.
    fn narrow(&mut self, low: f64, high: f64, k: usize, left: usize) -> Narrowed {
        let (below, upto) = self.tally(low, high);
        if k <= below {
            self.keep(Keep::Below);
            Narrowed::Rank(k, below)
        } else if k > upto {
            self.keep(Keep::Above);
            Narrowed::Rank(k - upto, left - upto)
        } else if low == high {
            Narrowed::Found(low)
        } else if below == 0 && upto == left {
            Narrowed::Stuck
        } else {
            self.keep(Keep::Between);
            Narrowed::Rank(k - below, upto - below)
        }
    }

    /// How many candidates lie below `low` and how many up to `high`, each row's bounds kept
    /// for [`Pairwise::keep`].
    fn tally(&mut self, low: f64, high: f64) -> (usize, usize) {
        let y = &self.y_falling;
        let (mut below, mut upto) = (y.len(), y.len());
        let (mut below_total, mut upto_total) = (0, 0);
        // The bounds and the counts only fall as the rows go on, so each row's walk starts
        // where the last row's ended: a pass costs the rows plus the columns, and its two
        // walks, independent, run side by side.
        for i in self.rows.clone() {
            let (a, lo, hi) = (self.x[i], self.lo[i], self.hi[i]);
            below = below.min(hi);
            while below > lo && a - y[below - 1] >= low {
                below -= 1;
            }
            self.below[i] = below;
            below_total += below - lo;
            upto = upto.min(hi);
            while upto > lo && a - y[upto - 1] > high {
                upto -= 1;
            }
            self.upto[i] = upto;
            upto_total += upto - lo;
        }
        (below_total, upto_total)
    }

    /// Narrows every row's candidates to one side of the last [`Pairwise::tally`].
    fn keep(&mut self, keep: Keep) {
        let rows = self.rows.clone();
        let (lo, hi) = match keep {
            Keep::Below => (None, Some(&self.below)),
            Keep::Between => (Some(&self.below), Some(&self.upto)),
            Keep::Above => (Some(&self.upto), None),
        };
        if let Some(lo) = lo {
            self.lo[rows.clone()].copy_from_slice(&lo[rows.clone()]);
        }
        if let Some(hi) = hi {
            self.hi[rows.clone()].copy_from_slice(&hi[rows]);
        }
        // Rows left without candidates at either end drop out of every later pass.
        while !self.rows.is_empty() && self.lo[self.rows.start] == self.hi[self.rows.start] {
            self.rows.start += 1;
        }
        while !self.rows.is_empty() && self.lo[self.rows.end - 1] == self.hi[self.rows.end - 1] {
            self.rows.end -= 1;
        }
    }

    /// xorshift64: reproducible pivots, no dependence on the input's order.
    fn draw(&mut self) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state as usize
    }
}

/// Which candidates a step keeps, against its two pivots.
#[derive(Clone, Copy)]
enum Keep {
    Below,
    Between,
    Above,
}

/// What one step of [`Pairwise::select`] found.
enum Narrowed {
    Found(f64),
    /// The rank sought among the candidates kept, and how many they are.
    Rank(usize, usize),
    /// Every candidate lies between the pivots: nothing was removed.
    Stuck,
}

/// The largest `k` with P(U ≤ k − 1) ≤ α/2 under the null hypothesis, for samples of `n` and
/// `m`: exact up to [`EXACT_LIMIT`], by the normal approximation beyond. `None` when even the
/// most extreme split is more likely than α/2.
fn interval_rank(n: usize, m: usize, alpha: f64) -> Option<usize> {
    let k = if n <= EXACT_LIMIT && m <= EXACT_LIMIT {
        let counts = u_counts(n, m);
        let total: f64 = counts.iter().sum();
        let mut below = 0.0;
        let mut k = 0;
        for count in &counts {
            below += count / total;
            if below > alpha / 2.0 {
                break;
            }
            k += 1;
        }
        k
    } else {
        let (n, m) = (n as f64, m as f64);
        let z = Normal::standard().inverse_cdf(1.0 - alpha / 2.0);
        (n * m / 2.0 - z * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor() as usize
    };
    (k >= 1).then_some(k)
}

/// How many of the C(n + m, n) splits give each U from 0 to n·m: the coefficients of the
/// Gaussian binomial, by `c(n, m, u) = c(n − 1, m, u − m) + c(n, m − 1, u)`.
fn u_counts(n: usize, m: usize) -> Vec<f64> {
    let width = n * m + 1;
    // previous[j][u]: counts for (i − 1, j); row by row over i.
    let mut previous: Vec<Vec<f64>> = (0..=m)
        .map(|_| {
            let mut row = vec![0.0; width];
            row[0] = 1.0;
            row
        })
        .collect();
    for _ in 1..=n {
        let mut current: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        current.push({
            let mut row = vec![0.0; width];
            row[0] = 1.0;
            row
        });
        for j in 1..=m {
            let row: Vec<f64> = (0..width)
                .map(|u| {
                    let from_x = if u >= j { previous[j][u - j] } else { 0.0 };
                    from_x + current[j - 1][u]
                })
                .collect();
            current.push(row);
        }
        previous = current;
    }
    previous.swap_remove(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_counts_are_the_mann_whitney_null_distribution() {
        // Two against two: U = 0, 1, 2, 2, 3, 4 over the six splits.
        assert_eq!(u_counts(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
        // Every count sums to C(n + m, n).
        let total: f64 = u_counts(10, 7).iter().sum();
        assert_eq!(total, 19448.0);
    }

    #[test]
    fn interval_ranks_match_the_published_tables() {
        // Critical values of U for a two-sided 5 % test (k = U_crit + 1): n = m = 6 → 5 + 1,
        // n = m = 10 → 23 + 1, n = 8, m = 12 → 22 + 1.
        assert_eq!(interval_rank(6, 6, 0.05), Some(6));
        assert_eq!(interval_rank(10, 10, 0.05), Some(24));
        assert_eq!(interval_rank(8, 12, 0.05), Some(23));
        // Three against three cannot reach 95 %.
        assert_eq!(interval_rank(3, 3, 0.05), None);
        // The normal approximation joins the exact ranks at the limit.
        let exact = interval_rank(50, 50, 0.05).unwrap() as f64;
        let normal = {
            let z = Normal::standard().inverse_cdf(0.975);
            (2500.0 / 2.0 - z * (2500.0 * 101.0 / 12.0f64).sqrt()).floor()
        };
        assert!((exact - normal).abs() <= 2.0, "{exact} against {normal}");
    }

    #[test]
    fn the_interval_covers_the_true_ratio_as_often_as_it_says() {
        // 1,000 pairs of log-normal samples (10 against 10) whose true ratio of medians is 1.5,
        // from a fixed-seed generator: the 95 % interval covers 1.5 in 93–97 % of them.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u, v) = (uniform().max(1e-300), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut covered = 0;
        for _ in 0..1000 {
            let a: Vec<f64> = (0..10).map(|_| 1.5 * (0.1 * normal()).exp()).collect();
            let b: Vec<f64> = (0..10).map(|_| (0.1 * normal()).exp()).collect();
            let (low, high) = ratio_of_medians(&a, &b).unwrap().interval.unwrap();
            covered += usize::from(low <= 1.5 && 1.5 <= high);
        }
        assert!((930..=970).contains(&covered), "covered {covered} of 1000");
    }

    #[test]
    fn large_samples_are_selected_in_full_and_bad_values_give_nothing() {
        let a: Vec<f64> = (0..100_000)
            .map(|i| 2.0 + (i % 100) as f64 * 1e-3)
            .collect();
        let b: Vec<f64> = (0..100_000)
            .map(|i| 1.0 + (i % 100) as f64 * 1e-3)
            .collect();
        let r = ratio_of_medians(&a, &b).unwrap();
        let (low, high) = r.interval.unwrap();
        assert!(low <= r.ratio && r.ratio <= high && high - low < 0.05);
        assert!(ratio_of_medians(&[1.0, 0.0], &[1.0]).is_none());
        assert!(ratio_of_medians(&[1.0], &[f64::NAN]).is_none());
        assert!(ratio_of_medians(&[], &[1.0]).is_none());
        assert_eq!(ratio_of_medians(&[2.0], &[1.0]).unwrap().interval, None);
    }

    /// Every k-th difference the selection gives is the one sorting all n·m of them gives,
    /// ties and equal samples included, on generated samples of many sizes.
    #[test]
    fn the_selection_is_the_sorted_pairwise_difference() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = |levels: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % levels) as f64 * 0.25
        };
        for (n, m, levels) in [
            (1, 1, 5),
            (3, 40, 7),
            (60, 60, 3),
            (97, 131, 1000),
            (200, 5, 2),
            (40, 30, 1),
            (3000, 2000, 40),
        ] {
            let mut x: Vec<f64> = (0..n).map(|_| next(levels)).collect();
            let mut y: Vec<f64> = (0..m).map(|_| next(levels)).collect();
            x.sort_by(f64::total_cmp);
            y.sort_by(f64::total_cmp);
            let mut all: Vec<f64> = x
                .iter()
                .flat_map(|a| y.iter().map(move |b| a - b))
                .collect();
            all.sort_by(f64::total_cmp);
            let mut pairwise = Pairwise::new(&x, &y);
            let nm = n * m;
            for (k1, k2) in [(1, nm), (2, 2), (nm / 3 + 1, nm / 2 + 1), (nm / 2 + 1, nm)] {
                let (k1, k2) = (k1.min(nm), k2.min(nm));
                let both = (all[k1 - 1], all[k2 - 1]);
                assert_eq!(
                    pairwise.select_both(k1, k2),
                    both,
                    "{n}×{m}, k = {k1}, {k2}"
                );
            }
            if let Some(k) = interval_rank(n, m, 0.05) {
                let ends = (all[k - 1], all[nm - k]);
                assert_eq!(log_shift_interval(&x, &y), Some(ends), "{n}×{m}");
            }
        }
    }
}
