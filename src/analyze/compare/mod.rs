//! Did it get slower? Inputs side by side, the first as the base: repetitions are compared
//! with the Mann-Whitney U test (benchstat's verdicts and p-values), distributions by
//! order-statistic bounds on their percentiles. Environments are diffed first, and
//! regression rules turn the changes into a gate.

mod regression;

use super::envdiff::{self, Difference};
use super::gate::{Measured, measure};
use super::stats::geometric_mean;
use super::stats::{CONFIDENCE, Interval, min_samples_for_ci};
use super::utest::{mann_whitney, min_samples_to_detect};
use super::view::{Cell, Change, ChangeVerdict, Column, Diagnostic, Report, Row, Table, keys};
use crate::error::{Error, Result};
use crate::model::{
    Assume, Benchmark, Better, Metric, MetricKind, Note, Run, Summary, Unit, format_exact,
    identities, vocab,
};
pub use crate::spec::targets::RegressionRule;
use hdrhistogram::Histogram;
pub(crate) use regression::relative_noise;
use rustc_hash::{FxHashMap, FxHashSet};

/// A family of benchmarks (`--family`): the names a pattern matches, renamed with the match
/// replaced so that two families line up row by row (compare.py's `filter_benchmark`).
pub struct Family(regex::Regex);

impl Family {
    pub fn new(pattern: &str) -> Result<Family> {
        regex::Regex::new(pattern).map(Family).map_err(|e| {
            Error::Input(format!(
                "--family `{pattern}`: not a regular expression: {e}"
            ))
        })
    }

    pub fn pattern(&self) -> &str {
        self.0.as_str()
    }

    /// The runs with only this family's benchmarks, each match in their names replaced.
    pub fn select(&self, mut runs: Vec<Run>, replacement: &str) -> Vec<Run> {
        for run in &mut runs {
            run.benchmarks
                .retain(|b| self.0.is_match(&b.name.full_name));
            for bench in &mut run.benchmarks {
                let name = &mut bench.name;
                name.full_name = self
                    .0
                    .replace_all(&name.full_name, replacement)
                    .into_owned();
                name.name = self.0.replace_all(&name.name, replacement).into_owned();
                name.path = name.name.split('/').map(str::to_string).collect();
            }
        }
        runs
    }
}

/// One column of the comparison: the runs read from one input (a file or a stored run).
pub struct CompareInput {
    pub label: String,
    pub runs: Vec<Run>,
}

#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Significance level of the U test.
    pub alpha: f64,
    /// Only this metric (by name); default every metric the inputs share.
    pub metric: Option<String>,
    /// Statistics compared for distributions (`p50`, `p99`, `p99.9`, `max`, ...).
    pub statistics: Vec<String>,
    pub rules: Vec<RegressionRule>,
    /// Compare although the environments differ (the differences mark the report).
    pub allow_env_mismatch: bool,
    /// This machine's noise floor (`latkit calibrate`): gates warn of thresholds below it.
    pub floors: Vec<crate::analyze::noise_floor::Floor>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            alpha: 0.05,
            metric: None,
            statistics: DEFAULT_STATISTICS.iter().map(|s| s.to_string()).collect(),
            rules: Vec::new(),
            allow_env_mismatch: false,
            floors: Vec::new(),
        }
    }
}

pub const DEFAULT_STATISTICS: [&str; 4] = ["p50", "p99", "p99.9", "max"];
/// Statistics a distribution can be compared on.
pub const DISTRIBUTION_STATISTICS: [&str; 9] = [
    "min", "p50", "median", "p90", "p99", "p99.9", "p99.99", "max", "avg",
];

/// One compared figure: what the gate and the JSON report read.
#[derive(Clone, Debug)]
struct Compared {
    bench: String,
    /// The metric, or `metric p99` for a distribution's statistic.
    figure: String,
    /// Names a rule can use: the metric, and the statistic for distributions.
    names: Vec<String>,
    better: Better,
    unit: Unit,
    column: String,
    value: f64,
    change: Change,
    /// For repetitions: their pooled standard deviation relative to the base's centre, from
    /// which the gate says how many repetitions a noisy change would need.
    noise: Option<f64>,
    /// What makes either side's repetitions unfit to decide on (a drift, two modes), said as
    /// a note says it.
    unfit: Option<String>,
    /// The repetitions base and new, which a gate tests in its own direction.
    repetitions: Option<[Vec<f64>; 2]>,
}

/// Compares `inputs` (the first is the base) into a report of one table per metric.
pub fn compare(mut inputs: Vec<CompareInput>, opts: &CompareOptions) -> Result<Report> {
    if inputs.is_empty() {
        return Err(Error::Input("compare needs an input".into()));
    }
    for input in &mut inputs {
        super::enrich::summarize_all(&mut input.runs);
    }
    let mut notes = Vec::new();
    let columns: Vec<Side<'_>> = inputs.iter().map(Side::of).collect();
    let differences = environment_differences(&inputs, &columns);
    if !differences.is_empty() {
        let list: Vec<String> = differences
            .iter()
            .map(|d| format!("  {}", crate::error::visible(&d.to_string())))
            .collect();
        if !opts.allow_env_mismatch {
            return Err(Error::Input(format!(
                "the inputs come from different environments, which can move the numbers \
                 (--allow-env-mismatch compares anyway):\n{}",
                list.join("\n")
            )));
        }
        for d in &differences {
            notes.push(Note::warning(format!("environment differs: {d}")));
        }
    }
    for input in &inputs {
        for run in &input.runs {
            notes.extend(super::diagnose::machine_during(run, &input.label));
        }
    }
    let mut tables = Vec::new();
    let mut compared = Vec::new();
    let mut footnotes = Footnotes::default();
    for (table, mut figures, notes) in metric_tables(&columns, opts) {
        footnotes.absorb(notes);
        if !table.rows.is_empty() {
            tables.push(table);
            compared.append(&mut figures);
        }
    }
    if tables.is_empty() {
        return Err(Error::Input(
            "the inputs have no benchmark and metric in common to compare".into(),
        ));
    }
    if !differences.is_empty() {
        for table in &mut tables {
            if let Some(title) = &mut table.title {
                title.push_str(" (environments differ)");
            }
        }
    }
    notes.extend(footnotes.notes(&columns, opts.alpha));
    let verdict = if opts.rules.is_empty() {
        None
    } else {
        Some(regression::gate(
            &compared,
            &inputs[0].label,
            opts,
            &mut notes,
        )?)
    };
    drop(columns);
    let runs = inputs.into_iter().flat_map(|i| i.runs).collect();
    Ok(Report {
        runs,
        tables,
        notes,
        verdict,
    })
}

/// Each metric's table, its figures for the gate and its footnotes, in the metrics' order;
/// the metrics are compared on every core (a U test of large samples is a sort of each).
fn metric_tables(
    columns: &[Side],
    opts: &CompareOptions,
) -> Vec<(Table, Vec<Compared>, Footnotes)> {
    let table = |metric: &MetricName| {
        let mut footnotes = Footnotes::default();
        let (table, figures) = match metric.kind {
            Kind::Repetitions => repetition_table(columns, metric, opts.alpha, &mut footnotes),
            Kind::Distribution => distribution_table(columns, metric, opts, &mut footnotes),
        };
        (table, figures, footnotes)
    };
    let metrics = metric_names(columns, opts);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || metrics.len() < 2 {
        return metrics.iter().map(table).collect();
    }
    let per_thread = metrics.len().div_ceil(cores);
    std::thread::scope(|scope| {
        let table = &table;
        let threads: Vec<_> = metrics
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(table).collect::<Vec<_>>()))
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().expect("a comparison thread panicked"))
            .collect()
    })
}

fn environment_differences(inputs: &[CompareInput], columns: &[Side]) -> Vec<String> {
    let Some(base) = inputs[0].runs.first() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for (input, column) in inputs[1..].iter().zip(&columns[1..]) {
        let (a, b) = (columns[0].procs(), column.procs());
        if !a.is_empty() && !b.is_empty() && a != b {
            out.push(format!(
                "GOMAXPROCS: {} ({}) vs {} ({})",
                a.join(","),
                inputs[0].label,
                b.join(","),
                input.label
            ));
        }
        for run in &input.runs {
            for Difference {
                what,
                base: b,
                other,
            } in envdiff::differences(base, run)
            {
                let line = format!(
                    "{what}: {b} ({}) vs {other} ({})",
                    inputs[0].label, input.label
                );
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
    }
    out
}

/// One side of the comparison: an input's benchmarks by name, repetitions of one name pooled
/// across its runs. Every lookup is by hash: a suite can hold tens of thousands of benchmarks,
/// and a benchmark tens of thousands of metrics.
struct Side<'a> {
    label: &'a str,
    /// Keys in the order the input first gives them, each with its benchmarks.
    benchmarks: Vec<(String, Vec<&'a Benchmark>)>,
    /// Key → its place in `benchmarks`.
    places: FxHashMap<String, usize>,
    /// Metric name → its number here.
    metric_numbers: FxHashMap<&'a str, usize>,
    /// (place of a key, metric number) → the key's benchmarks that have the metric, with it.
    metrics: FxHashMap<(usize, usize), Vec<(&'a Benchmark, &'a Metric)>>,
    /// By metric number: every benchmark's metric of that name, in key order.
    by_metric: Vec<Vec<(&'a Benchmark, &'a Metric)>>,
}

/// Adds `(bench, metric)` to `list` unless `bench` already has a metric there (a benchmark's
/// first metric of a name is the one read, as [`Benchmark::metric`] reads it).
fn push_first<'a>(
    list: &mut Vec<(&'a Benchmark, &'a Metric)>,
    bench: &'a Benchmark,
    m: &'a Metric,
) {
    if !list.last().is_some_and(|(b, _)| std::ptr::eq(*b, bench)) {
        list.push((bench, m));
    }
}

impl<'a> Side<'a> {
    /// Keys are names without the GOMAXPROCS suffix, so `-8` pairs with `-4` when each input
    /// ran one setting (the environment check reports the difference); an input that ran
    /// several (`-cpu 1,2`) keeps them apart.
    fn of(input: &'a CompareInput) -> Side<'a> {
        let all: Vec<&Benchmark> = input.runs.iter().flat_map(|r| &r.benchmarks).collect();
        let names = identities(&all.iter().map(|b| &b.name).collect::<Vec<_>>());
        let first_package = all.first().and_then(|b| b.package.as_deref());
        let packages = all.iter().any(|b| b.package.as_deref() != first_package);
        let mut benchmarks: Vec<(String, Vec<&Benchmark>)> = Vec::new();
        let mut places: FxHashMap<String, usize> = FxHashMap::default();
        for (bench, name) in all.iter().copied().zip(names) {
            let key = match &bench.package {
                Some(pkg) if packages => format!("{pkg}: {name}"),
                _ => name.to_string(),
            };
            match places.get(&key) {
                Some(&at) => benchmarks[at].1.push(bench),
                None => {
                    places.insert(key.clone(), benchmarks.len());
                    benchmarks.push((key, vec![bench]));
                }
            }
        }
        let mut metric_numbers: FxHashMap<&str, usize> = FxHashMap::default();
        let mut metrics: FxHashMap<_, Vec<_>> = FxHashMap::default();
        let mut by_metric: Vec<Vec<_>> = Vec::new();
        for (at, (_, benches)) in benchmarks.iter().enumerate() {
            for &bench in benches {
                for m in &bench.metrics {
                    let number = *metric_numbers.entry(&m.name).or_insert_with(|| {
                        by_metric.push(Vec::new());
                        by_metric.len() - 1
                    });
                    push_first(metrics.entry((at, number)).or_default(), bench, m);
                    push_first(&mut by_metric[number], bench, m);
                }
            }
        }
        Side {
            label: &input.label,
            benchmarks,
            places,
            metric_numbers,
            metrics,
            by_metric,
        }
    }

    /// The GOMAXPROCS values the input ran with, for the environment check.
    fn procs(&self) -> Vec<&'a str> {
        let mut procs: Vec<&str> = self
            .benchmarks
            .iter()
            .flat_map(|(_, b)| b)
            .filter_map(|b| b.name.param("procs"))
            .collect();
        procs.sort_unstable();
        procs.dedup();
        procs
    }

    /// Whether `key` is an aggregate of another benchmark's repetitions.
    fn is_aggregate(&self, key: &str) -> bool {
        self.places
            .get(key)
            .is_some_and(|&at| self.benchmarks[at].1.iter().any(|b| b.aggregate.is_some()))
    }

    /// The benchmarks of `key` that have `metric`, each with it.
    fn with_metric(&self, key: &str, metric: &str) -> &[(&'a Benchmark, &'a Metric)] {
        let at = self.places.get(key);
        let number = self.metric_numbers.get(metric);
        at.zip(number)
            .and_then(|(&at, &number)| self.metrics.get(&(at, number)))
            .map_or(&[], Vec::as_slice)
    }

    /// Every benchmark's metric named `metric`, in key order.
    fn all_named(&self, metric: &str) -> &[(&'a Benchmark, &'a Metric)] {
        self.metric_numbers
            .get(metric)
            .map_or(&[], |&number| self.by_metric[number].as_slice())
    }

    /// Every repetition of `metric` of the benchmark `key`.
    fn values(&self, key: &str, metric: &str) -> Option<(Vec<f64>, &'a Metric)> {
        let mut values = Vec::new();
        let mut first = None;
        for &(_, m) in self.with_metric(key, metric) {
            if m.kind == MetricKind::Repetitions && !m.values.is_empty() {
                values.extend(m.values.iter().copied().filter(|v| v.is_finite()));
                first.get_or_insert(m);
            }
        }
        first.filter(|_| !values.is_empty()).map(|m| (values, m))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Repetitions,
    Distribution,
}

struct MetricName {
    name: String,
    kind: Kind,
}

/// The metrics to compare, in the order the base reports them.
fn metric_names(columns: &[Side], opts: &CompareOptions) -> Vec<MetricName> {
    let mut names: Vec<MetricName> = Vec::new();
    let mut seen: FxHashSet<(&str, Kind)> = FxHashSet::default();
    for column in columns {
        for bench in column.benchmarks.iter().flat_map(|(_, b)| b) {
            for m in &bench.metrics {
                let kind = if m.kind == MetricKind::Series {
                    continue;
                } else if !m.values.is_empty() {
                    Kind::Repetitions
                } else if m.histogram.is_some() {
                    Kind::Distribution
                } else {
                    continue;
                };
                if opts.metric.as_ref().is_some_and(|only| *only != m.name) {
                    continue;
                }
                if seen.insert((&m.name, kind)) {
                    names.push(MetricName {
                        name: m.name.clone(),
                        kind,
                    });
                }
            }
        }
    }
    names
}

/// Every benchmark key in the order inputs first mention it.
fn keys(columns: &[Side]) -> Vec<String> {
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    columns
        .iter()
        .flat_map(|c| &c.benchmarks)
        .filter(|(key, _)| seen.insert(key))
        .map(|(key, _)| key.clone())
        .collect()
}

/// What the notes under the tables must say.
#[derive(Default)]
struct Footnotes {
    /// A median without a confidence interval was shown.
    too_few_for_ci: bool,
    /// A comparison could not have reached significance.
    too_few_to_detect: bool,
    /// Both sides held one value repeated: nothing to test.
    all_equal: bool,
    /// Benchmarks missing from some inputs: (benchmark, labels of the inputs that have it),
    /// once per metric table that found it so.
    partial: Vec<(String, Vec<String>)>,
    distributions: bool,
    /// Exact values (assume=exact) that vary: warnings, one per benchmark and input.
    inexact: Vec<String>,
    /// An exact p-value where scipy's U test (google/benchmark's compare.py) would take the
    /// normal approximation: ties, or more than 8 values on each side.
    exact_beyond_scipy: bool,
    /// A geomean over benchmark sets that differ from the base's.
    geomean_sets_differ: bool,
    /// A geomean left out for a zero or negative figure.
    geomean_not_positive: bool,
    /// Findings on figures' repetitions (`bench figure`, the finding): warnings.
    diagnosed: Vec<(String, Diagnostic)>,
}

impl Footnotes {
    /// Takes in the footnotes of the metric compared after the ones already here.
    fn absorb(&mut self, other: Footnotes) {
        // Every field named, so that a new one cannot be forgotten here.
        let Footnotes {
            too_few_for_ci,
            too_few_to_detect,
            all_equal,
            partial,
            distributions,
            inexact,
            exact_beyond_scipy,
            geomean_sets_differ,
            geomean_not_positive,
            diagnosed,
        } = other;
        self.too_few_for_ci |= too_few_for_ci;
        self.too_few_to_detect |= too_few_to_detect;
        self.all_equal |= all_equal;
        self.partial.extend(partial);
        self.distributions |= distributions;
        self.inexact.extend(inexact);
        self.exact_beyond_scipy |= exact_beyond_scipy;
        self.geomean_sets_differ |= geomean_sets_differ;
        self.geomean_not_positive |= geomean_not_positive;
        self.diagnosed.extend(diagnosed);
    }

    fn notes(&self, columns: &[Side], alpha: f64) -> Vec<Note> {
        let mut notes = Vec::new();
        if self.too_few_for_ci {
            notes.push(Note::info(format!(
                "need >= {} samples for a confidence interval at level {CONFIDENCE}",
                min_samples_for_ci(CONFIDENCE)
            )));
        }
        if self.too_few_to_detect {
            let need = min_samples_to_detect(alpha)
                .map_or_else(|| "more".to_string(), |n| format!(">= {n}"));
            notes.push(Note::info(format!(
                "need {need} samples to detect a difference at alpha {alpha}"
            )));
        }
        if self.all_equal {
            notes.push(Note::info(
                "all samples are equal where a figure never varied (p=1.000): nothing to test",
            ));
        }
        // A benchmark missing from an input is missing from every metric's table: said once,
        // as the first table found it.
        let mut said: FxHashSet<&str> = FxHashSet::default();
        for (bench, present) in self.partial.iter().filter(|(b, _)| said.insert(b)) {
            let absent: Vec<&str> = columns
                .iter()
                .map(|c| c.label)
                .filter(|l| !present.iter().any(|p| p == l))
                .collect();
            notes.push(Note::info(format!(
                "{bench}: missing from {}; compared where present",
                absent.join(", ")
            )));
        }
        notes.extend(self.inexact.iter().map(Note::warning));
        notes.extend(self.diagnosed.iter().map(|(figure, d)| {
            Note::warning(format!("{figure}: {}: {}", d.reason, d.kind.advice()))
        }));
        if self.exact_beyond_scipy {
            notes.push(Note::info(
                "p-values count the U test's exact distribution (up to 25 values with ties, 50 \
                 without, as benchstat does); google/benchmark's compare.py (scipy) takes the \
                 normal approximation where values tie or both sides exceed 8, so its p-values \
                 differ there",
            ));
        }
        if self.geomean_sets_differ {
            notes.push(Note::warning(
                "geomean: the benchmark set differs from the base's; geomeans may not be comparable",
            ));
        }
        if self.geomean_not_positive {
            notes.push(Note::info(
                "geomean: figures must be > 0 to compute a geomean",
            ));
        }
        if self.distributions {
            notes.push(Note::info(
                "distributions: each percentile's 95% bounds are order statistics of the \
                 samples (distribution-free, but they assume independent samples: consecutive \
                 timer and network samples are correlated, so treat narrow bounds with care); \
                 a change counts when the bounds do not overlap; a maximum is one sample and \
                 is never called significant",
            ));
        }
        notes
    }

    /// What the repetitions of each of `sides` (values, label) of `bench`'s `metric` say about
    /// their fitness to be compared, kept for the notes.
    fn diagnose(
        &mut self,
        bench: &str,
        metric: &Metric,
        sides: &[(&[f64], &str)],
    ) -> Vec<Diagnostic> {
        let scale = Unit::parse(&metric.source_unit).to_base;
        let show = |v: f64| format!("{} {}", format_exact(v / scale), metric.source_unit);
        let found: Vec<Diagnostic> = sides
            .iter()
            .flat_map(|(values, label)| super::diagnose::diagnose(values, label, &show))
            .collect();
        let figure = format!("{bench} {}", metric.name);
        self.diagnosed
            .extend(found.iter().map(|d| (figure.clone(), d.clone())));
        found
    }

    /// benchstat's warning for exact values that vary.
    fn inexact(&mut self, bench: &str, label: &str, metric: &Metric, (low, high): (f64, f64)) {
        let scale = Unit::parse(&metric.source_unit).to_base;
        self.inexact.push(format!(
            "{bench} {} ({label}): exact values expected (assume=exact), but they range from {} to {}",
            metric.name,
            format_exact(low / scale),
            format_exact(high / scale)
        ));
    }

    fn partial(&mut self, bench: &str, columns: &[Side], present: impl Fn(&Side) -> bool) {
        let have: Vec<String> = columns
            .iter()
            .filter(|c| present(c))
            .map(|c| c.label.to_string())
            .collect();
        if have.len() < columns.len() {
            self.partial.push((bench.to_string(), have));
        }
    }
}

fn header_columns(columns: &[Side], unit: &str, first: &[(&str, &str)]) -> Vec<Column> {
    let mut out: Vec<Column> = first.iter().map(|(h, k)| Column::new(*h, *k)).collect();
    let labels: Vec<&str> = columns.iter().map(|c| c.label).collect();
    let short = short_labels(&labels);
    for (i, (c, short)) in columns.iter().zip(short).enumerate() {
        out.push(
            Column::new(c.label.to_string(), keys::value_of(i))
                .in_unit(unit)
                .narrow_header(short),
        );
        out.push(Column::new(format!("± 95% CI ({})", c.label), keys::ci95_of(i)).dropped_at(2));
        if i > 0 {
            out.push(
                Column::new(format!("{} vs base", c.label), keys::change_of(i))
                    .narrow_header("vs base"),
            );
        }
    }
    out
}

/// The labels without the ending they all share (`old`, `new` for `old.txt`, `new.txt`),
/// each kept whole where that would leave nothing.
fn short_labels(labels: &[&str]) -> Vec<String> {
    let shared_ending = match labels {
        [first, rest @ ..] if !rest.is_empty() => first
            .char_indices()
            .map(|(i, _)| &first[i..])
            .find(|ending| ending.starts_with('.') && rest.iter().all(|l| l.ends_with(ending)))
            .unwrap_or(""),
        _ => "",
    };
    labels
        .iter()
        .map(|l| match l.strip_suffix(shared_ending) {
            Some(short) if !short.is_empty() => short.to_string(),
            _ => l.to_string(),
        })
        .collect()
}

fn spread(n: usize, interval: Option<super::stats::Interval>, centre: f64) -> Cell {
    Cell::Spread {
        n,
        relative_percent: interval.as_ref().map(|ci| ci.relative_spread(centre)),
        interval,
    }
}

fn percent_change(base: f64, new: f64) -> Option<f64> {
    if base == new {
        Some(0.0)
    } else if base == 0.0 {
        None
    } else {
        Some((new / base - 1.0) * 100.0)
    }
}

/// Which way is better and what may be assumed of `metric`'s values, taken from every input:
/// a direction any input declares (`Unit X better=higher`, `--better`) over the unit's own,
/// and exact when any input says so, as benchstat reads unit metadata from all its files.
fn metadata(columns: &[Side], metric: &str) -> (Better, Assume) {
    let metrics: Vec<&Metric> = columns
        .iter()
        .flat_map(|c| c.all_named(metric).iter().map(|(_, m)| *m))
        .collect();
    let better = metrics
        .iter()
        .find(|m| m.better != m.unit.better())
        .or(metrics.first())
        .map_or(Better::Lower, |m| m.better);
    let assume = if metrics.iter().any(|m| m.assume == Assume::Exact) {
        Assume::Exact
    } else {
        Assume::Nothing
    };
    (better, assume)
}

/// One column's figure of a benchmark: the median with its confidence interval, or for exact
/// values the mode with the range (benchstat's summaries).
struct Figure {
    centre: f64,
    interval: Option<Interval>,
    n: usize,
    /// For exact values that vary: their range.
    varies: Option<(f64, f64)>,
}

fn figure(values: &[f64], assume: Assume) -> Option<Figure> {
    match assume {
        Assume::Nothing => Summary::of(values).map(|s| Figure {
            centre: s.median,
            interval: s.median_ci,
            n: s.n,
            varies: None,
        }),
        Assume::Exact => {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            let (&low, &high) = (sorted.first()?, sorted.last()?);
            // The most frequent value, the smallest among equally frequent ones.
            let mut mode = (low, 0);
            for run in sorted.chunk_by(|a, b| a == b) {
                if run.len() > mode.1 {
                    mode = (run[0], run.len());
                }
            }
            Some(Figure {
                centre: mode.0,
                interval: Some(Interval {
                    low,
                    high,
                    level: 1.0,
                    coverage: 1.0,
                }),
                n: values.len(),
                varies: (low != high).then_some((low, high)),
            })
        }
    }
}

fn repetition_table(
    columns: &[Side],
    metric: &MetricName,
    alpha: f64,
    footnotes: &mut Footnotes,
) -> (Table, Vec<Compared>) {
    let decide = Decide::for_metric(columns, &metric.name, alpha);
    let mut rows = Vec::new();
    let mut compared = Vec::new();
    let mut unit_info: Option<(&Metric, String)> = None;
    let mut geomean = Geomean::new(columns.len());
    for key in keys(columns) {
        let samples: Vec<Option<(Vec<f64>, &Metric)>> = columns
            .iter()
            .map(|c| c.values(&key, &metric.name))
            .collect();
        if samples.iter().all(Option::is_none) {
            continue;
        }
        footnotes.partial(&key, columns, |c| c.values(&key, &metric.name).is_some());
        let figures: Vec<Option<Figure>> = samples
            .iter()
            .map(|s| s.as_ref().and_then(|(v, _)| figure(v, decide.assume)))
            .collect();
        let some_metric = samples.iter().flatten().next().map(|(_, m)| *m);
        if let (None, Some(m)) = (&unit_info, some_metric) {
            unit_info = Some((m, m.source_unit.clone()));
        }
        let mut cells = vec![Cell::Text { text: key.clone() }];
        for (i, (sample, fig)) in samples.iter().zip(&figures).enumerate() {
            let metric_of = sample.as_ref().map(|(_, m)| *m);
            cells.extend(figure_cells(
                metric_of,
                fig.as_ref(),
                footnotes,
                &key,
                columns[i].label,
            ));
            if i == 0 {
                continue;
            }
            let change = match (&samples[0], sample, &figures[0], fig) {
                (Some((a, _)), Some((b, m)), Some(fa), Some(fb)) => {
                    let mut change = decide.change(a, b, fa, fb, footnotes);
                    let sides = [(a.as_slice(), columns[0].label), (b, columns[i].label)];
                    change.diagnostics = footnotes.diagnose(&key, m, &sides);
                    let at = (key.as_str(), columns[i].label);
                    compared.push(decide.compared(&metric.name, m, at, (a, b, fa, fb), &change));
                    Cell::Change(change)
                }
                _ => Cell::Empty,
            };
            cells.push(change);
        }
        // A statistic of another row's repetitions (a mean, a stddev, a fit) is no benchmark
        // of its own, as compare.py leaves aggregates out of its geomean.
        if !columns.iter().any(|c| c.is_aggregate(&key)) {
            geomean.add(&figures);
        }
        rows.push(Row {
            benchmark: key,
            cells,
        });
    }
    let source_unit = unit_info.as_ref().map_or(String::new(), |(_, u)| u.clone());
    if let Some((m, _)) = unit_info
        && geomean.rows > 1
    {
        rows.push(geomean.row(m, decide.better, footnotes));
    }
    let table = Table {
        title: Some(metric.name.clone()),
        run: 0,
        cycle: None,
        columns: header_columns(columns, &source_unit, &[("Benchmark", keys::BENCHMARK)]),
        rows,
    };
    (table, compared)
}

/// A column's figure and its spread, or two empty cells; notes what the footnotes say of it.
fn figure_cells(
    metric: Option<&Metric>,
    figure: Option<&Figure>,
    footnotes: &mut Footnotes,
    key: &str,
    label: &str,
) -> [Cell; 2] {
    match (metric, figure) {
        (Some(m), Some(f)) => {
            footnotes.too_few_for_ci |= f.interval.is_none();
            if let Some(range) = f.varies {
                footnotes.inexact(key, label, m, range);
            }
            [
                Cell::value_of(f.centre, m),
                spread(f.n, f.interval.clone(), f.centre),
            ]
        }
        _ => [Cell::Empty, Cell::Empty],
    }
}

/// How a repetition table decides a change: the metric's direction, what may be assumed of
/// its values, and the significance level.
struct Decide {
    better: Better,
    assume: Assume,
    alpha: f64,
    /// google/benchmark's real or CPU time, which compare.py tests too.
    gbench_time: bool,
}

impl Decide {
    fn for_metric(columns: &[Side], metric: &str, alpha: f64) -> Decide {
        let (better, assume) = metadata(columns, metric);
        Decide {
            better,
            assume,
            alpha,
            gbench_time: [vocab::REAL_TIME, vocab::CPU_TIME].contains(&metric),
        }
    }

    /// What the gate reads of one decided change of benchmark `at.0` in column `at.1`, from
    /// base samples `a` to `b` (their figures `fa`, `fb`).
    fn compared(
        &self,
        metric: &str,
        m: &Metric,
        at: (&str, &str),
        (a, b, fa, fb): (&[f64], &[f64], &Figure, &Figure),
        change: &Change,
    ) -> Compared {
        Compared {
            bench: at.0.to_string(),
            figure: metric.to_string(),
            names: vec![metric.to_string()],
            better: self.better,
            unit: m.unit.clone(),
            column: at.1.to_string(),
            value: fb.centre,
            change: change.clone(),
            noise: regression::relative_noise(a, b, fa.centre),
            unfit: unfit_reasons(&change.diagnostics),
            repetitions: Some([a.to_vec(), b.to_vec()]),
        }
    }

    /// The change from base samples `a` to `b` (their figures `fa`, `fb`).
    fn change(
        &self,
        a: &[f64],
        b: &[f64],
        fa: &Figure,
        fb: &Figure,
        footnotes: &mut Footnotes,
    ) -> Change {
        match self.assume {
            Assume::Exact => Change {
                better: self.better,
                percent: percent_change(fa.centre, fb.centre),
                p: None,
                interval: None,
                n_base: a.len() as u64,
                n: b.len() as u64,
                verdict: ChangeVerdict::Exact,
                diagnostics: Vec::new(),
            },
            Assume::Nothing => {
                let test = mann_whitney(a, b);
                let all_equal = a.iter().chain(b).all(|v| *v == a[0]);
                footnotes.all_equal |= all_equal;
                footnotes.exact_beyond_scipy |= self.gbench_time
                    && test.is_some_and(|t| {
                        t.exact && !all_equal && (t.ties || (a.len() > 8 && b.len() > 8))
                    });
                let p = test.map_or(1.0, |t| t.p);
                // benchstat's rule: the p-value alone decides, so equal medians
                // with p ≤ alpha are a significant 0.00 %.
                let significant = p <= self.alpha;
                let need = min_samples_to_detect(self.alpha).unwrap_or(usize::MAX);
                footnotes.too_few_to_detect |= !significant && a.len() < need && b.len() < need;
                let interval = crate::analyze::ratio::ratio_of_medians(b, a)
                    .and_then(|r| r.interval)
                    .map(|(low, high)| ((low - 1.0) * 100.0, (high - 1.0) * 100.0));
                Change {
                    better: self.better,
                    percent: percent_change(fa.centre, fb.centre),
                    p: Some(p),
                    interval,
                    n_base: a.len() as u64,
                    n: b.len() as u64,
                    verdict: if significant {
                        ChangeVerdict::Significant
                    } else {
                        ChangeVerdict::Noise
                    },
                    diagnostics: Vec::new(),
                }
            }
        }
    }
}

/// The reasons of the findings that make a comparison unfit to decide, or `None`.
fn unfit_reasons(diagnostics: &[Diagnostic]) -> Option<String> {
    let reasons: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.unfit)
        .map(|d| d.reason.as_str())
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// benchstat's geomean row: each column's geometric mean over the benchmarks it has, and its
/// change as the geometric mean of the per-benchmark ratios to the base (no test: it
/// summarises the rows above).
struct Geomean {
    /// Each column's centres.
    centres: Vec<Vec<f64>>,
    /// Each column's ratios to the base, where both have the benchmark; `None` for a zero base
    /// under a non-zero value.
    ratios: Vec<Vec<Option<f64>>>,
    /// Benchmarks the base has.
    in_base: usize,
    /// Benchmarks in it.
    rows: usize,
}

impl Geomean {
    fn new(columns: usize) -> Self {
        Geomean {
            centres: vec![Vec::new(); columns],
            ratios: vec![Vec::new(); columns],
            in_base: 0,
            rows: 0,
        }
    }

    fn add(&mut self, figures: &[Option<Figure>]) {
        let base = figures[0].as_ref().map(|f| f.centre);
        self.in_base += usize::from(base.is_some());
        self.rows += 1;
        for (i, figure) in figures.iter().enumerate() {
            let Some(f) = figure else { continue };
            self.centres[i].push(f.centre);
            if let (true, Some(b)) = (i > 0, base) {
                self.ratios[i].push(match (f.centre, b) {
                    (a, b) if a == b => Some(1.0),
                    (_, 0.0) => None,
                    (a, b) => Some(a / b),
                });
            }
        }
    }

    fn row(&self, metric: &Metric, better: Better, footnotes: &mut Footnotes) -> Row {
        let mut cells = vec![Cell::Text {
            text: "geomean".into(),
        }];
        for (i, centres) in self.centres.iter().enumerate() {
            match geometric_mean(centres) {
                Some(mean) => cells.push(Cell::value_of(mean, metric)),
                None => {
                    footnotes.geomean_not_positive = true;
                    cells.push(Cell::Empty);
                }
            }
            cells.push(Cell::Empty);
            if i == 0 {
                continue;
            }
            let ratios = &self.ratios[i];
            footnotes.geomean_sets_differ |= ratios.len() != self.in_base;
            let ratio = ratios
                .iter()
                .copied()
                .collect::<Option<Vec<f64>>>()
                .and_then(|r| geometric_mean(&r));
            cells.push(Cell::Change(Change {
                better,
                percent: ratio.map(|r| (r - 1.0) * 100.0),
                p: None,
                interval: None,
                n_base: self.in_base as u64,
                n: centres.len() as u64,
                verdict: ChangeVerdict::Summary,
                diagnostics: Vec::new(),
            }));
        }
        Row {
            benchmark: "geomean".into(),
            cells,
        }
    }
}

/// A statistic of a distribution with its 95 % order-statistic bounds.
pub(super) struct Bounded {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub samples: u64,
}

pub(super) fn quantile_of(statistic: &str) -> Option<f64> {
    Some(match statistic {
        "p50" | "median" => 0.5,
        "p90" => 0.9,
        "p99" => 0.99,
        "p99.9" => 0.999,
        "p99.99" => 0.9999,
        _ => return None,
    })
}

/// The statistic (the tool's own min/avg/max where it reported them) and, for percentiles,
/// the ranks `n·q ± 1.96·√(n·q·(1−q))` read back from the histogram, widened to the
/// histogram's resolution; extremes and the mean get no bounds.
pub(super) fn bounded(bench: &Benchmark, metric: &Metric, statistic: &str) -> Option<Bounded> {
    let h: &Histogram<u64> = &metric.histogram.as_ref()?.histogram();
    if h.is_empty() {
        return None;
    }
    let is_main = bench
        .metrics
        .iter()
        .find(|m| m.percentiles.is_some())
        .map(|m| &m.name)
        == Some(&metric.name);
    let value = match (is_main, measure(bench, statistic)) {
        (true, Some(Measured { value, .. })) => value,
        _ => match statistic {
            "min" => h.min() as f64,
            "max" => h.max() as f64,
            "avg" => h.mean(),
            s => h.value_at_quantile(quantile_of(s)?) as f64,
        },
    };
    let n = h.len();
    let (low, high) = match quantile_of(statistic) {
        Some(q) => {
            let centre = n as f64 * q;
            let half = 1.96 * (centre * (1.0 - q)).sqrt();
            let rank_low = (centre - half).floor().max(1.0);
            let rank_high = (centre + half).ceil().min(n as f64);
            let at = |rank: f64| h.value_at_quantile(rank / n as f64);
            (
                h.lowest_equivalent(at(rank_low)) as f64,
                h.highest_equivalent(at(rank_high)) as f64,
            )
        }
        None => (value, value),
    };
    Some(Bounded {
        value,
        low: low.min(value),
        high: high.max(value),
        samples: n,
    })
}

impl Bounded {
    /// The figure and its bounds as a spread.
    fn cells(&self, m: &Metric) -> [Cell; 2] {
        let interval = (self.low < self.high).then_some(super::stats::Interval {
            low: self.low,
            high: self.high,
            level: CONFIDENCE,
            coverage: CONFIDENCE,
        });
        [
            Cell::value_of(self.value, m),
            spread(self.samples as usize, interval, self.value),
        ]
    }

    /// The change to `b`: significant when the bounds do not overlap (a percentile's; other
    /// statistics are untested).
    fn change_to(&self, b: &Bounded, better: Better, statistic: &str) -> Change {
        let tested = quantile_of(statistic).is_some();
        let apart = b.low > self.high || b.high < self.low;
        Change {
            better,
            percent: percent_change(self.value, b.value),
            p: None,
            interval: None,
            n_base: self.samples,
            n: b.samples,
            verdict: match (tested, apart) {
                (false, _) => ChangeVerdict::Untested,
                (true, true) => ChangeVerdict::Significant,
                (true, false) => ChangeVerdict::Noise,
            },
            diagnostics: Vec::new(),
        }
    }
}

/// Each column's distribution of `metric` for benchmark `key`, with its benchmark.
fn distributions_of<'a>(
    columns: &'a [Side],
    key: &str,
    metric: &str,
) -> Vec<Option<(&'a Benchmark, &'a Metric)>> {
    columns
        .iter()
        .map(|c| {
            c.with_metric(key, metric)
                .iter()
                .find(|(_, m)| m.values.is_empty() && m.histogram.is_some())
                .copied()
        })
        .collect()
}

fn distribution_table(
    columns: &[Side],
    metric: &MetricName,
    opts: &CompareOptions,
    footnotes: &mut Footnotes,
) -> (Table, Vec<Compared>) {
    let mut rows = Vec::new();
    let mut compared = Vec::new();
    let mut source_unit = String::new();
    for key in keys(columns) {
        let metrics = distributions_of(columns, &key, &metric.name);
        if metrics.iter().all(Option::is_none) {
            continue;
        }
        footnotes.partial(&key, columns, |c| {
            !c.with_metric(&key, &metric.name).is_empty()
        });
        footnotes.distributions = true;
        for statistic in &opts.statistics {
            let figures: Vec<Option<(Bounded, &Metric)>> = metrics
                .iter()
                .map(|bm| bm.and_then(|(b, m)| bounded(b, m, statistic).map(|x| (x, m))))
                .collect();
            let Some((_, m)) = figures.iter().flatten().next() else {
                continue;
            };
            source_unit = m.source_unit.clone();
            let mut cells: Vec<Cell> = [&key, statistic]
                .map(|text| Cell::Text { text: text.clone() })
                .into();
            for (i, figure) in figures.iter().enumerate() {
                match figure {
                    Some((f, m)) => cells.extend(f.cells(m)),
                    None => cells.extend([Cell::Empty, Cell::Empty]),
                }
                if i == 0 {
                    continue;
                }
                let cell = match (&figures[0], figure) {
                    (Some((a, _)), Some((b, m))) => {
                        let change = a.change_to(b, m.better, statistic);
                        compared.push(Compared {
                            bench: key.clone(),
                            figure: format!("{} {statistic}", metric.name),
                            names: vec![metric.name.clone(), statistic.clone()],
                            better: m.better,
                            unit: m.unit.clone(),
                            column: columns[i].label.to_string(),
                            value: b.value,
                            change: change.clone(),
                            noise: None,
                            // Distributions are samples within one run, not repetitions.
                            unfit: None,
                            repetitions: None,
                        });
                        Cell::Change(change)
                    }
                    _ => Cell::Empty,
                };
                cells.push(cell);
            }
            rows.push(Row {
                benchmark: key.clone(),
                cells,
            });
        }
    }
    let table = Table {
        title: Some(format!("{} (distribution)", metric.name)),
        run: 0,
        cycle: None,
        columns: header_columns(
            columns,
            &source_unit,
            &[("Benchmark", keys::BENCHMARK), ("Statistic", "statistic")],
        ),
        rows,
    };
    (table, compared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::view::Finding;
    use crate::model::{BenchName, Environment, RunBuilder, Source, new_run};

    /// A run with one latency distribution of `n` samples spread over [low, low·1.5).
    fn distribution_run(low: f64, tail: f64, n: u64) -> Run {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for i in 0..n {
            let x = i as f64 / n as f64;
            // Body uniform over [low, 1.5·low); the top 2 % reaches `tail`·low.
            let v = if x < 0.98 {
                low * (1.0 + 0.5 * x)
            } else {
                low * tail * (1.0 + x - 0.98)
            };
            h.record(v as u64).unwrap();
        }
        let mut builder = RunBuilder::default();
        builder.benchmark("thread0", None, BenchName::plain);
        let mut run = new_run(
            Source {
                kind: crate::model::SourceKind::Probe,
                format: "timer".into(),
                path: None,
                command: Vec::new(),
            },
            Environment::default(),
            Vec::new(),
            builder,
        );
        run.benchmarks[0]
            .metrics
            .push(Metric::time_distribution("latency", h));
        run
    }

    fn verdicts(base: Run, other: Run) -> Vec<(String, ChangeVerdict)> {
        let inputs = vec![
            CompareInput {
                label: "a".into(),
                runs: vec![base],
            },
            CompareInput {
                label: "b".into(),
                runs: vec![other],
            },
        ];
        let report = compare(inputs, &CompareOptions::default()).unwrap();
        report.tables[0]
            .rows
            .iter()
            .map(|r| match (&r.cells[1], &r.cells[6]) {
                (Cell::Text { text }, Cell::Change(c)) => (text.clone(), c.verdict),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_shifted_tail_is_found_and_identical_distributions_are_noise() {
        use ChangeVerdict::*;
        let same = verdicts(
            distribution_run(10_000.0, 3.0, 100_000),
            distribution_run(10_000.0, 3.0, 100_000),
        );
        let names: Vec<&str> = same.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, ["p50", "p99", "p99.9", "max"]);
        assert_eq!(
            same.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
            [Noise, Noise, Noise, Untested]
        );
        // The tail 20 % higher, the body unchanged.
        let tail = verdicts(
            distribution_run(10_000.0, 3.0, 100_000),
            distribution_run(10_000.0, 3.6, 100_000),
        );
        assert_eq!(
            tail.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
            [Noise, Significant, Significant, Untested]
        );
    }

    #[test]
    fn few_samples_give_wide_bounds() {
        use ChangeVerdict::*;
        // 50 samples: the p99 bounds reach the maximum, so a 5 % shift is not evidence.
        let v = verdicts(
            distribution_run(10_000.0, 3.0, 50),
            distribution_run(10_500.0, 3.15, 50),
        );
        assert_eq!(v[1].1, Noise);
    }

    /// A run of `benches`, each with `metrics` metrics (`m0`, `m1`, ..., recorded last to first
    /// when `reversed`),
    /// three repetitions each of about `scale` times the metric's number.
    fn wide_run(benches: &[&str], metrics: usize, reversed: bool, scale: f64) -> Run {
        let mut builder = RunBuilder::default();
        for name in benches {
            let bench = builder.benchmark(name, None, BenchName::plain);
            for rep in 0..3 {
                for m in 0..metrics {
                    let m = if reversed { metrics - 1 - m } else { m };
                    let value = scale * (m + 1) as f64 * (1.0 + rep as f64 * 0.001);
                    builder.record(bench, &format!("m{m}"), "ns", value);
                }
            }
        }
        let source = Source {
            kind: crate::model::SourceKind::File,
            format: "go".into(),
            path: None,
            command: Vec::new(),
        };
        new_run(source, Environment::default(), Vec::new(), builder)
    }

    /// One benchmark `B` with these ns/op repetitions, in order.
    fn repetitions(label: &str, values: &[f64]) -> CompareInput {
        let mut builder = RunBuilder::default();
        let bench = builder.benchmark("B", None, BenchName::plain);
        for v in values {
            builder.record(bench, "ns/op", "ns/op", *v);
        }
        let source = Source {
            kind: crate::model::SourceKind::File,
            format: "go".into(),
            path: None,
            command: Vec::new(),
        };
        CompareInput {
            label: label.into(),
            runs: vec![new_run(source, Environment::default(), Vec::new(), builder)],
        }
    }

    #[test]
    fn a_gate_on_drifting_repetitions_says_they_are_unfit() {
        let level = [
            100.0, 102.0, 99.0, 101.0, 100.5, 99.5, 101.5, 100.2, 99.8, 100.8,
        ];
        let rising: Vec<f64> = (0..10).map(|i| 100.0 + 3.0 * i as f64).collect();
        let options = CompareOptions {
            rules: vec![RegressionRule::parse("ns/op:+50%").unwrap()],
            ..CompareOptions::default()
        };
        let report = compare(
            vec![repetitions("old", &level), repetitions("new", &rising)],
            &options,
        )
        .unwrap();
        let target = &report.verdict.unwrap().targets[0];
        // Within +50 %, so it passes: but not silently.
        assert_eq!(target.status, crate::analyze::gate::Status::Pass);
        assert!(
            target.shown.contains("unfit: in new, the values rise"),
            "{}",
            target.shown
        );
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.message.contains("measures the drift")),
            "{:?}",
            report.notes
        );
        // The change's 95 % interval is given beside it, around the change.
        let Cell::Change(change) = &report.tables[0].rows[0].cells[5] else {
            panic!("{:?}", report.tables[0].rows[0]);
        };
        let (low, high) = change.interval.unwrap();
        assert!(low < change.percent.unwrap() && change.percent.unwrap() < high);
        // Level repetitions on both sides: no drift said.
        let report = compare(
            vec![repetitions("old", &level), repetitions("new", &level)],
            &options,
        )
        .unwrap();
        assert!(!report.verdict.unwrap().targets[0].shown.contains("unfit"));
        let Cell::Change(change) = &report.tables[0].rows[0].cells[5] else {
            panic!("{:?}", report.tables[0].rows[0]);
        };
        assert!(change.diagnostics.is_empty(), "{:?}", change.diagnostics);
    }

    #[test]
    fn two_modes_make_a_gate_unfit_and_outliers_are_said_in_the_change() {
        // The new side switches between 100 and 130 out of order: no drift, two modes.
        let level = [
            100.0, 102.0, 99.0, 101.0, 100.5, 99.5, 101.5, 100.2, 99.8, 100.8,
        ];
        let switching = [
            100.0, 130.0, 101.0, 131.0, 100.5, 129.0, 99.5, 130.5, 100.2, 129.5,
        ];
        let options = CompareOptions {
            rules: vec![RegressionRule::parse("ns/op:+50%").unwrap()],
            ..CompareOptions::default()
        };
        let report = compare(
            vec![repetitions("old", &level), repetitions("new", &switching)],
            &options,
        )
        .unwrap();
        let target = &report.verdict.unwrap().targets[0];
        assert!(
            target
                .shown
                .contains("unfit: in new, the values fall in two modes (5 near"),
            "{}",
            target.shown
        );
        let Cell::Change(change) = &report.tables[0].rows[0].cells[5] else {
            panic!("{:?}", report.tables[0].rows[0]);
        };
        let kinds: Vec<_> = change
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.unfit))
            .collect();
        assert_eq!(kinds, [(Finding::Bimodal, true)]);
        // One wild value on the base: said, in the change and the notes, but not unfit.
        let mut wild = level;
        wild[3] = 400.0;
        let report = compare(
            vec![repetitions("old", &wild), repetitions("new", &level)],
            &options,
        )
        .unwrap();
        assert!(!report.verdict.unwrap().targets[0].shown.contains("unfit"));
        let Cell::Change(change) = &report.tables[0].rows[0].cells[5] else {
            panic!("{:?}", report.tables[0].rows[0]);
        };
        assert_eq!(change.diagnostics[0].kind, Finding::Outliers);
        assert_eq!(change.diagnostics[0].input, "old");
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.message.contains("1 of 10 values are outliers"))
        );
    }

    #[test]
    fn wide_benchmarks_pair_every_metric_by_name_and_say_a_missing_one_once() {
        let metrics = 40;
        let inputs = vec![
            CompareInput {
                label: "a".into(),
                runs: vec![wide_run(&["A", "B"], metrics, false, 1.0)],
            },
            CompareInput {
                label: "b".into(),
                runs: vec![wide_run(&["A"], metrics, true, 2.0)],
            },
        ];
        let report = compare(inputs, &CompareOptions::default()).unwrap();
        assert_eq!(report.tables.len(), metrics);
        for (m, table) in report.tables.iter().enumerate() {
            assert_eq!(table.title.as_deref(), Some(format!("m{m}").as_str()));
            let Cell::Change(change) = &table.rows[0].cells[5] else {
                panic!("{:?}", table.rows[0]);
            };
            assert!((change.percent.unwrap() - 100.0).abs() < 0.01, "{change:?}");
        }
        let missing: Vec<String> = report
            .notes
            .iter()
            .map(|n| n.to_string())
            .filter(|n| n.contains("missing from"))
            .collect();
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].contains("B: missing from b"), "{missing:?}");
    }

    #[test]
    fn rules_parse_with_and_without_a_direction() {
        let r = RegressionRule::parse("ns/op:+5%").unwrap();
        assert_eq!(
            (r.metric.as_str(), r.percent, r.increase_is_bad),
            ("ns/op", 5.0, Some(true))
        );
        let r = RegressionRule::parse("throughput:-2.5%").unwrap();
        assert_eq!((r.percent, r.increase_is_bad), (2.5, Some(false)));
        let r = RegressionRule::parse("p99:10%").unwrap();
        assert!(r.is_regression(11.0, Better::Lower));
        assert!(!r.is_regression(-11.0, Better::Lower));
        assert!(r.is_regression(-11.0, Better::Higher));
        for bad in ["ns/op", "ns/op:5", ":5%", "x:+nan%", "x:+inf%", "x:++5%"] {
            assert!(RegressionRule::parse(bad).is_err(), "{bad}");
        }
    }
}
