//! The changes that matter in a stored history, for `history --regressions` and `latkit site`:
//! the change points of every benchmark's series, and a change in its newest runs that no
//! change point can show yet, each decided with the family-wise error held at alpha over all
//! the series judged together, so that a project of hundreds of benchmarks over hundreds of
//! commits does not list noise.
//!
//! A steady drift is a trend, not a staircase: change points are scored once each span's
//! trend is taken out, and a segment between change points whose figures rise or fall with
//! the run (Mann–Kendall, Bonferroni over segments and series) is listed as a trend with its
//! slope per run (Theil–Sen) and the runs it spans. A step's size is the jump at its run,
//! each side's trend carried to it.
//!
//! Change points are found on each run's figure (the median of its repetitions), not on the
//! repetitions pooled: runs of one commit scatter from run to run more than repetitions within
//! a run do (a build's layout, the machine's state), and a test that took the repetitions as
//! independent would mark that scatter as change. One figure a run needs about ten runs after
//! a change to tell it among hundreds of series; the newest runs are therefore also tested
//! against the runs before them, with the scatter of whole runs that the history shows as the
//! noise (Holm over the series), so that a slowdown is listed from the first run after it.

use super::changes::{ChangePoint, change_points};
use super::compare::regression::holm;
use super::ratio::ratio_of_medians;
use super::stats::CONFIDENCE;
use super::trend::{mann_kendall, theil_sen};
use crate::model::summary::median;
use crate::model::{Better, Metric, Unit};
use crate::store::{Point, StoredRun};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// At most this many of the newest runs are tested together as a recent change.
pub const RECENT_RUNS: usize = 10;
/// Against at most this many runs before them.
const RECENT_BEFORE: usize = 20;
/// Recent runs are tested only with at least this many runs before them in their segment.
const RECENT_MIN_BEFORE: usize = 3;
/// The fewest runs on either side of a change point.
const MIN_SEGMENT: usize = 2;
/// The fewest runs a segment needs to be tested for a trend.
const MIN_TREND: usize = 5;
/// Beside a trend, a step's size is read from this many runs on each side of it.
const NEAR_A_TREND: usize = 8;

/// How a change was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A change point of the series.
    ChangePoint,
    /// The newest runs against the runs before them.
    Recent,
    /// A steady trend over a segment's runs.
    Trend,
}

/// One change that holds up.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub bench: String,
    /// The figure followed: `ns/op`, `latency p99`.
    pub what: String,
    pub source_unit: String,
    pub kind: Kind,
    /// The series' index of the first run after the change, how many runs it has, and how
    /// many before it were tested against them.
    pub at: usize,
    pub runs: usize,
    pub runs_before: usize,
    /// The last run before the change and the first after it: the change happened in the
    /// commits after `before`'s, up to and including `after`'s.
    pub before: StoredRun,
    pub after: StoredRun,
    /// The figure after the change in percent of the figure before, less 100, with its 95 %
    /// interval when the samples give one.
    pub percent: f64,
    pub interval: Option<(f64, f64)>,
    /// The test's p-value, and that value adjusted for every test made in the family.
    pub p: f64,
    pub adjusted: f64,
    /// Which way is an improvement for the figure.
    pub better: Better,
    /// How many commits the range holds, when the repository can say (1: the commit is
    /// `after`'s).
    pub commits: Option<usize>,
    /// A trend's slope: percent per run (`percent` is then its change over the runs it spans,
    /// from `before`, its first run, to `after`, its last).
    pub slope: Option<f64>,
}

impl Finding {
    /// Whether the change goes the wrong way for the figure.
    pub fn worse(&self) -> bool {
        match self.better {
            Better::Lower => self.percent > 0.0,
            Better::Higher => self.percent < 0.0,
        }
    }

    /// `3f2a9c1d40..8be0a1c7d2`: the commits after the run before the change up to the first
    /// run after it, as `git log` takes them.
    pub fn commit_range(&self) -> String {
        let short = |run: &StoredRun| run.short_commit().unwrap_or_else(|| format!("#{}", run.id));
        format!("{}..{}", short(&self.before), short(&self.after))
    }

    /// `1 commit`, `7 commits`, or nothing when the repository could not say.
    pub fn commits_text(&self) -> String {
        match self.commits {
            Some(1) => "1 commit".into(),
            Some(n) => format!("{n} commits"),
            None => String::new(),
        }
    }

    /// How the change was found, in words: `change point`, `newest 3 runs`, `trend +1.50%/run
    /// over 40 runs`.
    pub fn found_by(&self) -> String {
        match (self.kind, self.runs) {
            (Kind::ChangePoint, _) => "change point".into(),
            (Kind::Recent, 1) => "newest run".into(),
            (Kind::Recent, n) => format!("newest {n} runs"),
            (Kind::Trend, n) => format!(
                "trend {:+.2}%/run over {n} runs",
                self.slope.unwrap_or(f64::NAN)
            ),
        }
    }

    /// `+23.1% … +26.4%`, or nothing without an interval.
    pub fn interval_text(&self) -> String {
        self.interval
            .map(|(low, high)| format!("{low:+.1}% … {high:+.1}%"))
            .unwrap_or_default()
    }
}

/// What one series shows: its change points and trends (already decided: Bonferroni over the
/// series of the family) and, when its newest runs are tested, that test (decided with the
/// others by [`Family::decide`]).
#[derive(Clone, Debug, Default)]
pub struct SeriesChanges {
    pub change_points: Vec<Finding>,
    pub trends: Vec<Finding>,
    pub recent: Option<Finding>,
}

impl SeriesChanges {
    /// The series' segments between change points, as ranges of run indices.
    pub fn segments(&self, runs: usize) -> Vec<std::ops::Range<usize>> {
        let mut bounds: Vec<usize> = vec![0];
        bounds.extend(self.change_points.iter().map(|f| f.at));
        bounds.push(runs);
        bounds.windows(2).map(|w| w[0]..w[1]).collect()
    }
}

/// The series judged together, and the family-wise error rate they share.
pub struct Family {
    pub alpha: f64,
    /// How many series the family holds (the Bonferroni factor of change points).
    pub series: usize,
}

impl Family {
    /// The changes of one series (`points` oldest first).
    pub fn judge(&self, bench: &str, points: &[Point]) -> SeriesChanges {
        let Some(series) = Series::of(bench, points) else {
            return SeriesChanges::default();
        };
        let runs: Vec<Vec<f64>> = series.values.iter().map(|&v| vec![v]).collect();
        let mut found = change_points(&runs, self.alpha, self.series, MIN_SEGMENT);
        let mut changes = SeriesChanges::default();
        // Each segment's slope where its trend holds, else none (0). A segment whose trend
        // holds but whose figures one step fits better than a line jumped once: that is a
        // change at one run (with the trend test's evidence), and the segments are split there.
        let (segments, slopes) = loop {
            let segments = segments_between(&found, points.len());
            let mut slopes = vec![0.0; segments.len()];
            let mut steps = Vec::new();
            changes.trends.clear();
            for (i, segment) in segments.iter().enumerate() {
                let Some((trend, slope)) = series.trend(segment.clone(), self, segments.len())
                else {
                    continue;
                };
                match series.one_step(segment.clone()) {
                    Some(at) => steps.push(ChangePoint {
                        at,
                        percent: trend.percent,
                        p: trend.p,
                        adjusted: trend.adjusted,
                    }),
                    None => {
                        slopes[i] = slope;
                        changes.trends.push(trend);
                    }
                }
            }
            if steps.is_empty() {
                break (segments, slopes);
            }
            found.extend(steps);
            found.sort_by_key(|c| c.at);
        };
        for (i, point) in found.iter().enumerate() {
            let sides = [segments[i].clone(), segments[i + 1].clone()];
            changes
                .change_points
                .push(series.step(point, sides, [slopes[i], slopes[i + 1]]));
        }
        let last = segments.len() - 1;
        let start = segments[last].start;
        let carried = series.carried(segments[last].clone(), slopes[last], 0.0);
        changes.recent = recent(&carried).map(|test| {
            let at = points.len() - test.runs;
            let before = &carried[(at - start).saturating_sub(RECENT_BEFORE)..at - start];
            let after = &carried[at - start..];
            Finding {
                percent: test.percent,
                interval: Some(test.interval),
                ..series.finding(Kind::Recent, at, (test.p, test.p), after, before)
            }
        });
        changes
    }

    /// The findings of every series: change points, and the recent tests that hold after
    /// Holm's adjustment over every series of the family; regressions first, newest first.
    pub fn decide(&self, series: Vec<SeriesChanges>) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut recent = Vec::new();
        for changes in series {
            found.extend(changes.change_points);
            found.extend(changes.trends);
            recent.extend(changes.recent);
        }
        // Every series of the family counts, tested or not: a series whose newest runs lie
        // within the runs before them was looked at too.
        let mut ps: Vec<f64> = recent.iter().map(|f| f.p).collect();
        ps.resize(self.series.max(ps.len()), 1.0);
        let adjusted = holm(&ps);
        for (mut finding, adjusted) in recent.into_iter().zip(adjusted) {
            finding.adjusted = adjusted;
            if adjusted <= self.alpha {
                found.push(finding);
            }
        }
        found.sort_by(|a, b| {
            b.worse()
                .cmp(&a.worse())
                .then(b.after.id.cmp(&a.after.id))
                .then(a.bench.cmp(&b.bench))
        });
        found
    }
}

/// The runs between consecutive change points, the first from run 0, the last to `runs`.
fn segments_between(found: &[ChangePoint], runs: usize) -> Vec<std::ops::Range<usize>> {
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|c| c.at))
        .chain(std::iter::once(runs))
        .collect();
    bounds.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Where one step (two levels, each side at least [`MIN_SEGMENT`] runs) splits `values` with
/// less left unexplained than a straight line leaves: `None` when the line fits as well.
fn one_step(values: &[f64]) -> Option<usize> {
    let n = values.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let squares = |part: &[f64]| {
        let mean = part.iter().sum::<f64>() / part.len() as f64;
        part.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
    };
    let (x_mean, y_mean) = ((n - 1) as f64 / 2.0, values.iter().sum::<f64>() / n as f64);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in values.iter().enumerate() {
        sxy += (i as f64 - x_mean) * (v - y_mean);
        sxx += (i as f64 - x_mean).powi(2);
    }
    let slope = sxy / sxx;
    let line: f64 = (values.iter().enumerate())
        .map(|(i, v)| (v - y_mean - slope * (i as f64 - x_mean)).powi(2))
        .sum();
    (MIN_SEGMENT..=n - MIN_SEGMENT)
        .map(|at| (at, squares(&values[..at]) + squares(&values[at..])))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|&(_, step)| step < line)
        .map(|(at, _)| at)
}

/// One series being judged: its points, figures, and what they are.
struct Series<'a> {
    bench: &'a str,
    points: &'a [Point],
    values: Vec<f64>,
    scale: Scale,
    what: String,
    better: Better,
}

impl<'a> Series<'a> {
    fn of(bench: &'a str, points: &'a [Point]) -> Option<Series<'a>> {
        let figure = &points.first()?.figure;
        let unit = Unit::parse(&figure.source_unit);
        let values: Vec<f64> = points.iter().map(|p| p.figure.value).collect();
        Some(Series {
            bench,
            points,
            scale: Scale::of(&values),
            values,
            what: figure.label(),
            better: Metric::new(&figure.metric, &unit, &figure.source_unit).better,
        })
    }

    /// A change found by `kind` from run `at` (its p-value and the adjusted one), `after` and
    /// `before` the figures on each side.
    fn finding(
        &self,
        kind: Kind,
        at: usize,
        (p, adjusted): (f64, f64),
        after: &[f64],
        before: &[f64],
    ) -> Finding {
        let ratio = ratio_of_medians(after, before);
        // A figure that can be zero or negative has no ratio interval, but its medians still
        // compare.
        let percent = ratio.as_ref().map_or_else(
            || {
                let m0 = median(&mut before.to_vec());
                (median(&mut after.to_vec()) / m0 - 1.0) * 100.0 * m0.signum()
            },
            |r| (r.ratio - 1.0) * 100.0,
        );
        Finding {
            bench: self.bench.to_string(),
            what: self.what.clone(),
            source_unit: self.points[0].figure.source_unit.clone(),
            kind,
            at,
            runs: after.len(),
            runs_before: before.len(),
            before: self.points[at.max(1) - 1].run.clone(),
            after: self.points[at].run.clone(),
            percent,
            interval: ratio
                .and_then(|r| r.interval)
                .map(|(low, high)| ((low - 1.0) * 100.0, (high - 1.0) * 100.0)),
            p,
            adjusted,
            better: self.better,
            commits: None,
            slope: None,
        }
    }

    /// The trend of `segment` when it holds among `segments` segments and the family's series,
    /// with its slope on the series' scale.
    fn trend(
        &self,
        segment: std::ops::Range<usize>,
        family: &Family,
        segments: usize,
    ) -> Option<(Finding, f64)> {
        let (slope, p) = self.scale.trend(&self.values[segment.clone()])?;
        let adjusted = (p * segments as f64 * family.series.max(1) as f64).min(1.0);
        if adjusted > family.alpha {
            return None;
        }
        let (first, last) = (segment.start, segment.end - 1);
        let from = self.values[first];
        let trend = Finding {
            at: first,
            runs: segment.len(),
            runs_before: segment.len(),
            before: self.points[first].run.clone(),
            after: self.points[last].run.clone(),
            percent: self.scale.percent(slope * (last - first) as f64, from),
            interval: None,
            slope: Some(self.scale.percent(slope, from)),
            ..self.finding(Kind::Trend, first.max(1), (p, adjusted), &[], &[])
        };
        Some((trend, slope))
    }

    /// Where one step explains `segment` better than its trend (see [`one_step`]), as a run
    /// of the series.
    fn one_step(&self, segment: std::ops::Range<usize>) -> Option<usize> {
        let scaled: Vec<f64> = self.values[segment.clone()]
            .iter()
            .map(|&v| self.scale.scaled(v))
            .collect();
        one_step(&scaled).map(|at| segment.start + at)
    }

    /// The change point `point` between the segments `sides`, whose trends are `slopes`.
    fn step(
        &self,
        point: &ChangePoint,
        [before, after]: [std::ops::Range<usize>; 2],
        slopes: [f64; 2],
    ) -> Finding {
        let tested = (point.p, point.adjusted);
        if slopes == [0.0, 0.0] {
            let (before, after) = (&self.values[before], &self.values[after]);
            return self.finding(Kind::ChangePoint, point.at, tested, after, before);
        }
        // Beside a trend, the runs nearest the change carried along their side's trend to it
        // (half-way between the runs): a jump, not the segments' medians, which the drift would
        // move. Its interval would leave out the slopes' own error, so there is none.
        let meet = point.at as f64 - 0.5;
        let before = before.end.saturating_sub(NEAR_A_TREND).max(before.start)..before.end;
        let after = after.start..(after.start + NEAR_A_TREND).min(after.end);
        let before = self.carried(before, slopes[0], meet);
        let after = self.carried(after, slopes[1], meet);
        Finding {
            interval: None,
            ..self.finding(Kind::ChangePoint, point.at, tested, &after, &before)
        }
    }

    /// The figures of `range`, each carried along `slope` (per run) to run `to`.
    fn carried(&self, range: std::ops::Range<usize>, slope: f64, to: f64) -> Vec<f64> {
        self.scale.carried(&self.values, range, slope, to)
    }
}

/// How a series' figures are scaled for trends: logarithms when all are positive (a drift
/// compounds), else as they are.
#[derive(Clone, Copy)]
struct Scale {
    log: bool,
}

impl Scale {
    fn of(values: &[f64]) -> Scale {
        Scale {
            log: values.iter().all(|&v| v > 0.0),
        }
    }

    fn scaled(&self, v: f64) -> f64 {
        if self.log { v.ln() } else { v }
    }

    /// A segment's trend: its slope per run on this scale and Mann–Kendall's p; `None` when
    /// too short to test.
    fn trend(&self, values: &[f64]) -> Option<(f64, f64)> {
        if values.len() < MIN_TREND {
            return None;
        }
        let scaled: Vec<f64> = values.iter().map(|&v| self.scaled(v)).collect();
        Some((theil_sen(&scaled)?, mann_kendall(&scaled)?))
    }

    /// A change of `by` on this scale from `from`, in percent.
    fn percent(&self, by: f64, from: f64) -> f64 {
        match self.log {
            true => (by.exp() - 1.0) * 100.0,
            false if from != 0.0 => by / from.abs() * 100.0,
            false => f64::NAN,
        }
    }

    /// The figures of `range`, each carried along `slope` (per run) to run `to`.
    fn carried(
        &self,
        values: &[f64],
        range: std::ops::Range<usize>,
        slope: f64,
        to: f64,
    ) -> Vec<f64> {
        values[range.clone()]
            .iter()
            .zip(range)
            .map(|(&v, i)| {
                let by = slope * (to - i as f64);
                match self.log {
                    true => v * by.exp(),
                    false => v + by,
                }
            })
            .collect()
    }
}

/// A test of the newest runs: how many, the p-value (Bonferroni over the counts tried), and
/// the change in percent with its 95 % interval.
struct Recent {
    runs: usize,
    p: f64,
    percent: f64,
    interval: (f64, f64),
}

/// The strongest test of the newest `k` runs of `segment` (the figures since its last change
/// point, its trend taken out) against up to [`RECENT_BEFORE`] runs before them, over k = 1
/// ..= [`RECENT_RUNS`]: Student's t on the logarithms of the runs' figures, so that the noise
/// a change must stand out of is the scatter of whole runs the history shows, not the
/// repetitions' within one run. A k is tried only when every one of its runs lies beyond
/// every run before them.
fn recent(segment: &[f64]) -> Option<Recent> {
    let most = RECENT_RUNS.min(segment.len().saturating_sub(RECENT_MIN_BEFORE));
    let logs: Vec<f64> = segment.iter().map(|v| v.ln()).collect();
    if logs.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut best: Option<Recent> = None;
    for k in 1..=most {
        let split = logs.len() - k;
        let (before, after) = (
            &logs[split.saturating_sub(RECENT_BEFORE)..split],
            &logs[split..],
        );
        let (low, high) = before
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        let beyond = after.iter().all(|&v| v > high) || after.iter().all(|&v| v < low);
        if let Some(test) = beyond.then(|| student(before, after)).flatten()
            && best.as_ref().is_none_or(|b| test.p < b.p)
        {
            best = Some(Recent { runs: k, ..test });
        }
    }
    best.map(|b| Recent {
        p: (b.p * most as f64).min(1.0),
        ..b
    })
}

/// Student's two-sample t test of the means of `after` and `before` (logarithms), with the
/// pooled variance; `runs` is left 0.
fn student(before: &[f64], after: &[f64]) -> Option<Recent> {
    let (n1, n2) = (before.len() as f64, after.len() as f64);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let squares = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let (m1, m2) = (mean(before), mean(after));
    let freedom = n1 + n2 - 2.0;
    let variance = (squares(before, m1) + squares(after, m2)) / freedom;
    let error = (variance * (1.0 / n1 + 1.0 / n2)).sqrt();
    if freedom < 1.0 || error <= 0.0 || !error.is_finite() {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, freedom).ok()?;
    let shift = m2 - m1;
    let reach = t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0) * error;
    let percent = |log: f64| (log.exp() - 1.0) * 100.0;
    Some(Recent {
        runs: 0,
        p: 2.0 * t.sf(shift.abs() / error),
        percent: percent(shift),
        interval: (percent(shift - reach), percent(shift + reach)),
    })
}

#[cfg(test)]
mod tests;
