//! Which commit made it worse: a binary search over the commits from a known-good to a
//! known-bad revision in which every tested commit is measured in rounds with both ends
//! (good, the commit and bad once each per round, in an order drawn for the round) and placed
//! by Wilcoxon's signed-rank test on each round's ratios. A commit worse than good is bad (the
//! first change, even when bad is worse still); one that bad is worse than is good; one that
//! neither test places within the most rounds is undecided, and the search stops there rather
//! than guess. Sizes are the median of the rounds' own ratios, so that a round measured under
//! a burst of load is set against the ends measured under the same burst.

use super::counted;
use super::signed_rank::{above, min_pairs_to_detect};
use super::stats::geometric_mean;
use super::utest::{mann_whitney, min_samples_to_detect};
use crate::model::summary::{median, median_and_robust_sd};
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

/// One round of a tested commit: the figures of good, the commit and bad, measured in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    pub good: f64,
    pub mid: f64,
    pub bad: f64,
}

/// How a figure is judged: which way is worse, and the least change that counts (percent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub better: Better,
    pub threshold: f64,
}

impl Scale {
    /// ln(new / old), positive when `new` is worse.
    fn worse_log(&self, new: f64, old: f64) -> f64 {
        let log = (new / old).ln();
        match self.better {
            Better::Lower => log,
            Better::Higher => -log,
        }
    }

    /// The threshold as a log ratio.
    fn log_threshold(&self) -> f64 {
        (1.0 + self.threshold / 100.0).ln()
    }

    /// The one-sided p-value that `new` is worse than `old` by more than the threshold, round
    /// by round; 1 when nothing can be tested.
    fn p_worse(&self, pairs: &[(f64, f64)]) -> f64 {
        self.p_beyond(pairs, self.log_threshold())
    }

    /// The one-sided p-value that `new` is worse than `old` by more than `shift` (a log ratio,
    /// negative for "better by less than"), round by round: the signed-rank test.
    fn p_beyond(&self, pairs: &[(f64, f64)], shift: f64) -> f64 {
        let differences: Vec<f64> = pairs
            .iter()
            .map(|&(new, old)| self.worse_log(new, old) - shift)
            .collect();
        above(&differences).unwrap_or(1.0)
    }

    /// The same for samples measured apart: the U test on the logarithms, `new`'s moved by
    /// `shift`; the one-sided p is half the two-sided one when the medians lie that way.
    fn p_beyond_apart(&self, new: &[f64], old: &[f64], shift: f64) -> f64 {
        let logs = |values: &[f64], by: f64| -> Vec<f64> {
            let kept = values.iter().filter(|v| v.is_finite() && **v > 0.0);
            kept.map(|&v| self.worse_log(v, 1.0) - by).collect()
        };
        let (new, old) = (logs(new, shift), logs(old, 0.0));
        if new.is_empty() || old.is_empty() || median(&mut new.clone()) <= median(&mut old.clone())
        {
            return 1.0;
        }
        mann_whitney(&old, &new).map_or(1.0, |t| t.p / 2.0)
    }
}

/// A commit's rounds against both ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The end it belongs with; `None` while neither test places it.
    pub side: Option<Side>,
    /// One-sided p-values: that the commit is worse than good, and that bad is worse than the
    /// commit, each by more than the threshold.
    pub p_good: f64,
    pub p_bad: f64,
    /// The commit's change from good and bad's, in percent: the medians of the rounds' own
    /// ratios.
    pub change: f64,
    pub bad_change: f64,
}

impl Judged {
    /// Bad, and bad worse still: the commit is a first change of its own size, not the one
    /// the ends show (counted: bad beyond the floor from it).
    pub fn first_of_two(&self, level: f64) -> bool {
        let bad_worse_still = match self.p_bad.is_nan() {
            true => counted::beyond_floor(
                (1.0 + self.bad_change / 100.0) / (1.0 + self.change / 100.0) * 100.0 - 100.0,
            ),
            false => self.p_bad <= level,
        };
        self.side == Some(Side::Bad) && bad_worse_still
    }
}

/// The rounds whose three figures are positive and finite: what a ratio can be taken of.
fn usable(rounds: &[Round]) -> impl Iterator<Item = &Round> {
    rounds.iter().filter(|r| {
        [r.good, r.mid, r.bad]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    })
}

/// The median over `pairs` of new / old, as a change in percent.
fn median_change(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let mut ratios: Vec<f64> = pairs.map(|(new, old)| new / old).collect();
    (median(&mut ratios) - 1.0) * 100.0
}

/// Places a commit by its rounds: bad when it is worse than good beyond the threshold at
/// `level` (one-sided), else good when bad is worse than it beyond the threshold at `level`;
/// `None` while neither holds.
pub fn judge(rounds: &[Round], level: f64, scale: Scale) -> Judged {
    let kept: Vec<&Round> = usable(rounds).collect();
    let pairs = |new: fn(&Round) -> f64, old: fn(&Round) -> f64| -> Vec<(f64, f64)> {
        kept.iter().map(|r| (new(r), old(r))).collect()
    };
    let p_good = scale.p_worse(&pairs(|r| r.mid, |r| r.good));
    let p_bad = scale.p_worse(&pairs(|r| r.bad, |r| r.mid));
    let side = if p_good <= level {
        Some(Side::Bad)
    } else if p_bad <= level {
        Some(Side::Good)
    } else {
        None
    };
    Judged {
        side,
        p_good,
        p_bad,
        change: median_change(kept.iter().map(|r| (r.mid, r.good))),
        bad_change: median_change(kept.iter().map(|r| (r.bad, r.good))),
    }
}

/// A guess for a commit the tests could not place (`--guess`): the end it moved less from,
/// by the medians of the rounds' ratios.
pub fn nearest(rounds: &[Round], scale: Scale) -> Side {
    let kept: Vec<&Round> = usable(rounds).collect();
    let mut from_good: Vec<f64> = kept
        .iter()
        .map(|r| scale.worse_log(r.mid, r.good).abs())
        .collect();
    let mut to_bad: Vec<f64> = kept
        .iter()
        .map(|r| scale.worse_log(r.bad, r.mid).abs())
        .collect();
    match median(&mut from_good) <= median(&mut to_bad) {
        true => Side::Good,
        false => Side::Bad,
    }
}

/// About how many rounds would place a commit the tests could not: of the two tests, the one
/// whose change beyond the threshold is the clearer, at one-sided `alpha`; `None` when neither
/// change goes past the threshold (more rounds would not place it: the change is spread over
/// commits, each below it).
pub fn rounds_to_place(rounds: &[Round], scale: Scale, alpha: f64) -> Option<u64> {
    let kept: Vec<&Round> = usable(rounds).collect();
    let needed = |pairs: Vec<(f64, f64)>| -> Option<u64> {
        let mut logs: Vec<f64> = pairs.iter().map(|&(n, o)| scale.worse_log(n, o)).collect();
        let beyond = median(&mut logs) - scale.log_threshold();
        if beyond <= 0.0 {
            return None;
        }
        let spread = log_spread(pairs.into_iter())?;
        rounds_needed(spread, (beyond.exp() - 1.0) * 100.0, alpha, true)
    };
    let from_good = needed(kept.iter().map(|r| (r.mid, r.good)).collect());
    let to_bad = needed(kept.iter().map(|r| (r.bad, r.mid)).collect());
    from_good.into_iter().chain(to_bad).min()
}

/// The order in which round `round` measures good (0), the commit (1) and bad (2): one of the
/// six drawn from `seed` and the round, so that no place in a round (the first after a
/// build, the one a burst of load tends to hit) belongs to one side, and the signed-rank test
/// stays valid whatever the load did.
pub fn order(seed: u64, round: usize) -> [usize; 3] {
    const ORDERS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    // splitmix64 of the seed and the round.
    let mut z = seed
        .wrapping_add((round as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ORDERS[(z % 6) as usize]
}

/// What the ends' rounds show about the change from good to bad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndsShow {
    /// Worse, beyond noise and the threshold: there is a commit to find.
    Worse,
    /// Better, beyond noise and the threshold: nothing got worse.
    Better,
    /// Worse by less than the threshold, beyond noise (counted: within the counting floor
    /// and the threshold): no change worth a search.
    Within,
    /// None of those: the rounds cannot tell whether bad is worse (a change below the noise
    /// is not shown to be absent, and a search on it would guess).
    Undecided,
}

/// The ends compared: the change from good to bad (percent) and its p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ends {
    pub change: f64,
    /// Two-sided; for [`EndsShow::Within`] the one-sided p that bad is worse by less than the
    /// threshold; NaN for counted ends, which their size decides ([`Ends::counted`]).
    pub p: f64,
    /// Whether the change is for the worse, significant or not.
    pub for_the_worse: bool,
    pub show: EndsShow,
    /// Whether the rounds were paired (measured together) or two samples (stored apart).
    pub paired: bool,
}

impl Ends {
    /// Whether the ends were compared by their counts, decided by size with no test.
    pub fn counted(&self) -> bool {
        self.p.is_nan()
    }
}

/// Compares the ends' rounds once, at two-sided `alpha`: testing again after every added
/// round until they differ would raise the false-alarm rate well above it. Measured ends are
/// paired round by round (the signed-rank test on each round's bad / good); stored ends,
/// measured apart, are two samples (the U test). Three one-sided tests at `alpha / 2`: worse
/// beyond the threshold, better beyond it, and (with a threshold) worse by less than it. Only
/// a change for the worse is bisected; when no test decides, the ends are undecided.
pub fn compare_ends(good: &[f64], bad: &[f64], paired: bool, alpha: f64, scale: Scale) -> Ends {
    let pairs: Vec<(f64, f64)> = bad
        .iter()
        .zip(good)
        .map(|(&b, &g)| (b, g))
        .filter(|&(b, g)| b > 0.0 && g > 0.0 && b.is_finite() && g.is_finite())
        .collect();
    let change = match paired {
        true => median_change(pairs.iter().copied()),
        false => (median(&mut bad.to_vec()) / median(&mut good.to_vec()) - 1.0) * 100.0,
    };
    // That bad (or good, `bad_new` false) is worse than the other by more than `shift`.
    let p = |bad_new: bool, shift: f64| match (paired, bad_new) {
        (true, true) => scale.p_beyond(&pairs, shift),
        (true, false) => {
            let reversed: Vec<(f64, f64)> = pairs.iter().map(|&(b, g)| (g, b)).collect();
            scale.p_beyond(&reversed, shift)
        }
        (false, true) => scale.p_beyond_apart(bad, good, shift),
        (false, false) => scale.p_beyond_apart(good, bad, shift),
    };
    let t = scale.log_threshold();
    let (p_worse, p_better) = (p(true, t), p(false, t));
    let for_the_worse = change != 0.0 && (change > 0.0) == (scale.better == Better::Lower);
    let two_sided = (2.0 * p_worse.min(p_better)).min(1.0);
    let p_within = match scale.threshold > 0.0 {
        true => p(false, -t),
        false => 1.0,
    };
    let (show, p) = if p_worse <= alpha / 2.0 {
        (EndsShow::Worse, two_sided)
    } else if p_better <= alpha / 2.0 {
        (EndsShow::Better, two_sided)
    } else if p_within <= alpha / 2.0 {
        (EndsShow::Within, p_within)
    } else {
        (EndsShow::Undecided, two_sided)
    };
    Ends {
        change,
        p,
        for_the_worse,
        show,
        paired,
    }
}

/// The ends compared by their counts (instructions): `None` unless each end's counts agree
/// within the counting floor, as counts of the same work do; else the change decided by its
/// size, worse or better when beyond the floor (and the threshold).
pub fn compare_counted_ends(good: &[f64], bad: &[f64], scale: Scale) -> Option<Ends> {
    if good.is_empty() || bad.is_empty() || !counted::agree(good) || !counted::agree(bad) {
        return None;
    }
    let (g, b) = (median(&mut good.to_vec()), median(&mut bad.to_vec()));
    let change = (b / g - 1.0) * 100.0;
    let least = counted::least_change(scale.threshold);
    let worse = scale.worse_log(b, g);
    let show = if worse > (1.0 + least / 100.0).ln() {
        EndsShow::Worse
    } else if -worse > (1.0 + least / 100.0).ln() {
        EndsShow::Better
    } else {
        EndsShow::Within
    };
    Some(Ends {
        change,
        p: f64::NAN,
        for_the_worse: worse > 0.0,
        show,
        paired: false,
    })
}

/// Places a commit by its count between the ends' counts: bad when it is worse than good by
/// more than the counting floor (and the threshold), else good when bad is worse than it by
/// as much; `None` when it lies within that of both (the change is spread over commits).
pub fn judge_counted(good: f64, mid: f64, bad: f64, scale: Scale) -> Judged {
    let least = (1.0 + counted::least_change(scale.threshold) / 100.0).ln();
    let side = if scale.worse_log(mid, good) > least {
        Some(Side::Bad)
    } else if scale.worse_log(bad, mid) > least {
        Some(Side::Good)
    } else {
        None
    };
    Judged {
        side,
        p_good: f64::NAN,
        p_bad: f64::NAN,
        change: (mid / good - 1.0) * 100.0,
        bad_change: (bad / good - 1.0) * 100.0,
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

    /// The commits that must hold the first bad one, given the steps decided so far: after
    /// the last good, up to and including the first bad.
    pub fn range(&self) -> std::ops::RangeInclusive<usize> {
        self.good + 1..=self.bad
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

/// The power at which bisect says how many rounds a change would need.
const POWER: f64 = 0.8;
/// Beyond this many rounds the answer is "more than".
const MOST_ROUNDS: f64 = 100_000.0;

/// The spread of log ratios (a standard deviation, from the median absolute deviation, so that
/// a round a burst wrecked does not set it).
pub fn log_spread(pairs: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let mut logs: Vec<f64> = pairs
        .filter(|&(new, old)| new > 0.0 && old > 0.0)
        .map(|(new, old)| (new / old).ln())
        .filter(|l| l.is_finite())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    Some(median_and_robust_sd(&mut logs).1)
}

/// About how many paired rounds tell a change of `percent` out of rounds whose log ratios
/// scatter by `spread` (a standard deviation) at one-sided `alpha` with 80 % power: the normal
/// approximation scaled by π/3 for the signed-rank test's efficiency, and at least what the
/// exact test needs to reach `alpha` at all. `paired: false` for two samples measured apart
/// (the U test: twice the variance, and its own least size).
pub fn rounds_needed(spread: f64, percent: f64, alpha: f64, paired: bool) -> Option<u64> {
    let effect = (1.0 + percent.abs() / 100.0).ln();
    if effect == 0.0 || !spread.is_finite() || !(0.0..1.0).contains(&alpha) || alpha == 0.0 {
        return None;
    }
    let normal = Normal::standard();
    let z = normal.inverse_cdf(1.0 - alpha) + normal.inverse_cdf(POWER);
    let variance_factor = if paired { 1.0 } else { 2.0 };
    let n = (std::f64::consts::PI / 3.0 * variance_factor * (z * spread / effect).powi(2)).ceil();
    let floor = match paired {
        true => min_pairs_to_detect(alpha),
        false => min_samples_to_detect(2.0 * alpha).unwrap_or(0),
    } as f64;
    Some(n.max(floor).clamp(2.0, MOST_ROUNDS) as u64)
}

#[cfg(test)]
mod tests;
