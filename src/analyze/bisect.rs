//! Which commit made it slower: a binary search over the commits from a known-good to a
//! known-bad revision in which every tested commit is measured interleaved with both ends
//! (good, commit, bad, in rounds) and placed on one side by the U test — rounds are added
//! until the test says which end it belongs with, so noise does not pick the culprit.

use super::stats::geometric_mean;
use super::utest::{mann_whitney, min_samples_to_detect};
use crate::model::{Better, Run};
use statrs::distribution::{ContinuousCDF, Normal};

/// Which end a commit belongs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Good,
    Bad,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Good => "good",
            Side::Bad => "bad",
        }
    }
}

/// A commit's samples against both ends' samples of the same rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The end it belongs with; `None` while the test cannot tell.
    pub side: Option<Side>,
    /// U-test p-values against the good and the bad end.
    pub p_good: f64,
    pub p_bad: f64,
}

/// What the ends' rounds show about the change from good to bad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndsShow {
    /// Worse, beyond noise and the threshold: there is a commit to find.
    Worse,
    /// Better, beyond noise and the threshold: nothing got worse.
    Better,
    /// Not beyond noise, or not by the threshold.
    WithinNoise,
}

/// The ends compared: the change from good to bad (percent of good's median) and its p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ends {
    pub change: f64,
    pub p: f64,
    /// Whether the change is for the worse, significant or not.
    pub for_the_worse: bool,
    pub show: EndsShow,
}

/// Compares the ends once, after a fixed number of rounds: testing again after every added
/// round until they differ would raise the false-alarm rate well above `alpha`. Only a change
/// for the worse (by the metric's direction) is something to bisect.
pub fn compare_ends(good: &[f64], bad: &[f64], alpha: f64, threshold: f64, better: Better) -> Ends {
    let p = mann_whitney(good, bad).map_or(1.0, |t| t.p);
    let change = (median(bad) / median(good) - 1.0) * 100.0;
    let for_the_worse = change != 0.0 && (change > 0.0) == (better == Better::Lower);
    let show = if p > alpha || change.abs() < threshold || change == 0.0 {
        EndsShow::WithinNoise
    } else if for_the_worse {
        EndsShow::Worse
    } else {
        EndsShow::Better
    };
    Ends {
        change,
        p,
        for_the_worse,
        show,
    }
}

/// Places `mid` between `good` and `bad`: with one end when it differs significantly (at
/// `alpha`) from the other end and not from that one, and its median is nearer that end.
pub fn judge(good: &[f64], mid: &[f64], bad: &[f64], alpha: f64) -> Judged {
    let p = |a: &[f64], b: &[f64]| mann_whitney(a, b).map_or(1.0, |t| t.p);
    let (p_good, p_bad) = (p(good, mid), p(mid, bad));
    let side = match (p_good <= alpha, p_bad <= alpha) {
        (false, true) => Some(Side::Good),
        (true, false) => Some(Side::Bad),
        _ => None,
    }
    // The tests and the medians must agree: a commit whose median is nearer the other end is
    // not placed yet, whatever a noisy round made of the p-values.
    .filter(|&side| nearest(good, mid, bad) == side);
    Judged {
        side,
        p_good,
        p_bad,
    }
}

/// When the rounds run out undecided: the end whose median is nearer on a log scale.
pub fn nearest(good: &[f64], mid: &[f64], bad: &[f64]) -> Side {
    let log_median = |v: &[f64]| median(v).max(f64::MIN_POSITIVE).ln();
    let m = log_median(mid);
    if (m - log_median(good)).abs() <= (m - log_median(bad)).abs() {
        Side::Good
    } else {
        Side::Bad
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n => (v[(n - 1) / 2] + v[n / 2]) / 2.0,
    }
}

/// The search: commits in order, the first known good (index 0 at the start), the last
/// known bad, and those that could not be built or run.
pub struct Search {
    len: usize,
    good: usize,
    bad: usize,
    skipped: Vec<usize>,
}

impl Search {
    /// A search over `len` commits, the first good and the last bad.
    pub fn new(len: usize) -> Search {
        Search {
            len,
            good: 0,
            bad: len.saturating_sub(1),
            skipped: Vec::new(),
        }
    }

    /// The next commit to test: the untested one nearest the middle of the open range; `None`
    /// when none is left.
    pub fn next(&self) -> Option<usize> {
        let middle = (self.good + self.bad) / 2;
        (self.good + 1..self.bad)
            .filter(|i| !self.skipped.contains(i))
            .min_by_key(|&i| (i.abs_diff(middle), i))
    }

    pub fn mark(&mut self, commit: usize, side: Side) {
        match side {
            Side::Good => self.good = self.good.max(commit),
            Side::Bad => self.bad = self.bad.min(commit),
        }
    }

    /// A commit that does not build or run, as `git bisect skip`.
    pub fn skip(&mut self, commit: usize) {
        self.skipped.push(commit);
    }

    /// Untested commits left between the ends.
    pub fn remaining(&self) -> usize {
        (self.good + 1..self.bad)
            .filter(|i| !self.skipped.contains(i))
            .count()
    }

    /// About how many more steps a plain binary search needs.
    pub fn steps_left(&self) -> u32 {
        (self.remaining() + 1).next_power_of_two().trailing_zeros()
    }

    /// The first bad commit, and the skipped ones before it that might be it instead.
    pub fn culprit(&self) -> (usize, Vec<usize>) {
        let mut maybe: Vec<usize> = (self.good + 1..self.bad)
            .filter(|i| self.skipped.contains(i))
            .collect();
        maybe.sort_unstable();
        (self.bad, maybe)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The figure a run gives the search: the geometric mean of `metric` over the benchmarks
/// `bench` matches (their first value each); `None` when none has it.
pub fn figure(run: &Run, bench: &regex::Regex, metric: &str) -> Option<f64> {
    let firsts: Vec<f64> = run
        .benchmarks
        .iter()
        .filter(|b| bench.is_match(&b.name.full_name))
        .filter_map(|b| b.metric(metric)?.values.first().copied())
        .filter(|v| *v > 0.0)
        .collect();
    geometric_mean(&firsts)
}

/// Each repetition's figure in a pooled run (as the store keeps a bisection's or an A/B
/// run's rounds): the geometric mean of `metric` over the matching benchmarks' k-th values.
pub fn figures_per_repetition(run: &Run, bench: &regex::Regex, metric: &str) -> Vec<f64> {
    let columns: Vec<&Vec<f64>> = run
        .benchmarks
        .iter()
        .filter(|b| bench.is_match(&b.name.full_name))
        .filter_map(|b| b.metric(metric).map(|m| &m.values))
        .collect();
    let repetitions = columns.iter().map(|v| v.len()).min().unwrap_or(0);
    (0..repetitions)
        .filter_map(|k| geometric_mean(&columns.iter().map(|v| v[k]).collect::<Vec<_>>()))
        .collect()
}

/// The power at which bisect says how many rounds a noisy change of the ends would need.
const POWER: f64 = 0.8;
/// Beyond this many rounds a side the answer is "more than".
const MOST_ROUNDS: f64 = 100_000.0;

/// About how many rounds a side would tell the ends' change of `percent` out of `noise`
/// (relative standard deviation) at `alpha` with 80 % power: the normal approximation for the
/// two-sided test of the ends, scaled by π/3 for the U test's efficiency, and at least what
/// the exact U test needs to reach `alpha` at all.
pub fn rounds_needed(noise: f64, percent: f64, alpha: f64) -> Option<u64> {
    let effect = percent.abs() / 100.0;
    if effect == 0.0 || !noise.is_finite() || !(0.0..1.0).contains(&alpha) {
        return None;
    }
    let normal = Normal::standard();
    let z = normal.inverse_cdf(1.0 - alpha / 2.0) + normal.inverse_cdf(POWER);
    let n = (std::f64::consts::PI / 3.0 * 2.0 * (z * noise / effect).powi(2)).ceil();
    let floor = min_samples_to_detect(alpha).unwrap_or(0) as f64;
    Some(n.max(floor).clamp(2.0, MOST_ROUNDS) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_needed_grow_with_noise_and_the_family() {
        // 10 % noise, a 5 % change, alpha 0.05: 2·((1.960 + 0.842)·0.1 / 0.05)²·π/3 = 65.7.
        assert_eq!(rounds_needed(0.10, 5.0, 0.05), Some(66));
        assert!(rounds_needed(0.10, 5.0, 0.05 / 20.0).unwrap() > 66);
        assert!(rounds_needed(0.20, 5.0, 0.05).unwrap() > 100);
        // A clear change still needs what the exact U test needs to reach alpha at all.
        assert_eq!(
            rounds_needed(0.001, 50.0, 0.05),
            min_samples_to_detect(0.05).map(|n| n as u64)
        );
        assert_eq!(rounds_needed(0.1, 0.0, 0.05), None);
    }

    #[test]
    fn a_commit_goes_with_the_end_it_is_like() {
        let good = [100.0, 101.0, 99.0, 100.5, 100.2, 99.7];
        let bad = [140.0, 141.0, 139.0, 140.5, 140.2, 139.7];
        let like_bad = [139.5, 140.8, 140.1, 139.9, 141.2, 140.4];
        assert_eq!(judge(&good, &like_bad, &bad, 0.05).side, Some(Side::Bad));
        let like_good = [100.1, 99.9, 100.7, 100.3, 99.5, 101.2];
        assert_eq!(judge(&good, &like_good, &bad, 0.05).side, Some(Side::Good));
        // Unlike both, so the test cannot place it; the nearer median (on a log scale:
        // 116 is 15 % above 100 and 21 % below 140) decides.
        let between = [115.0, 117.0, 116.0, 116.5, 115.5, 118.0];
        assert_eq!(judge(&good, &between, &bad, 0.05).side, None);
        assert_eq!(nearest(&good, &between, &bad), Side::Good);
        // The U tests say good (unlike bad at p = 0.008, like good at p = 0.42), but the
        // median (130) is nearer bad's (140) than good's (100): not placed yet.
        let good = [100.0, 101.0, 99.0, 100.5, 100.2];
        let bad = [140.0, 141.0, 139.0, 140.5, 140.2];
        let skewed = [99.0, 101.5, 130.0, 130.5, 131.0];
        let judged = judge(&good, &skewed, &bad, 0.05);
        assert!(judged.p_good > 0.05 && judged.p_bad <= 0.05, "{judged:?}");
        assert_eq!(judged.side, None);
        // Too few rounds to tell anything.
        assert_eq!(
            judge(&good[..2], &like_bad[..2], &bad[..2], 0.05).side,
            None
        );
    }

    #[test]
    fn only_ends_that_got_worse_beyond_noise_and_threshold_are_bisected() {
        let fast = [100.0, 101.0, 99.0, 100.5, 100.2];
        let slow = [106.0, 107.0, 105.5, 106.4, 106.9];
        let lower = Better::Lower;
        let ends = compare_ends(&fast, &slow, 0.05, 0.0, lower);
        assert_eq!(ends.show, EndsShow::Worse);
        assert!((ends.change - 6.188).abs() < 0.01, "{ends:?}");
        assert!((ends.p - 0.0079).abs() < 0.001, "{ends:?}");
        // Faster at the bad end: nothing got worse (the CI A/A run that blamed c10 saw
        // -5.58 %, p=0.032).
        assert_eq!(
            compare_ends(&slow, &fast, 0.05, 0.0, lower).show,
            EndsShow::Better
        );
        // For a rate, higher is better: the same figures read the other way.
        let higher = Better::Higher;
        assert_eq!(
            compare_ends(&slow, &fast, 0.05, 0.0, higher).show,
            EndsShow::Worse
        );
        assert_eq!(
            compare_ends(&fast, &slow, 0.05, 0.0, higher).show,
            EndsShow::Better
        );
        // Significant, but below --threshold.
        assert_eq!(
            compare_ends(&fast, &slow, 0.05, 10.0, lower).show,
            EndsShow::WithinNoise
        );
        // Overlapping: within noise.
        let overlapping = [99.5, 101.5, 100.1, 100.8, 99.2];
        assert_eq!(
            compare_ends(&fast, &overlapping, 0.05, 0.0, lower).show,
            EndsShow::WithinNoise
        );
    }

    #[test]
    fn the_search_halves_skips_and_names_the_first_bad() {
        // Commits 0 (good) … 12 (bad); the change came with 7; 4 does not build.
        let mut search = Search::new(13);
        let mut tested = Vec::new();
        while let Some(i) = search.next() {
            tested.push(i);
            match i {
                4 => search.skip(i),
                i if i >= 7 => search.mark(i, Side::Bad),
                i => search.mark(i, Side::Good),
            }
        }
        assert_eq!(search.culprit(), (7, vec![]));
        assert!(tested.len() <= 5, "{tested:?}");
        // A skipped commit right before the first bad may be the culprit itself.
        let mut search = Search::new(4);
        search.skip(1);
        search.mark(2, Side::Bad);
        assert_eq!(search.next(), None);
        assert_eq!(search.culprit(), (2, vec![1]));
    }
}
