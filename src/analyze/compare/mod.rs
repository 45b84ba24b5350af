//! Did it get slower? Inputs side by side, the first as the base: repetitions are compared
//! with the Mann-Whitney U test (benchstat's verdicts and p-values), distributions by
//! order-statistic bounds on their percentiles. Environments are diffed first, and
//! regression rules turn the changes into a gate.

#[cfg(test)]
mod counted_tests;
mod distribution;
mod footnotes;
mod geomean;
mod projected;
pub(crate) mod regression;
mod repetitions;
mod sides;
mod spawning;

pub(super) use distribution::bounded;
use distribution::*;
use footnotes::*;
use geomean::*;
pub use projected::{ProjectedTable, project};
use repetitions::*;
use sides::*;

use super::counted;
use super::envdiff::{self, Difference};
use super::stats::geometric_mean;
use super::stats::{CONFIDENCE, Interval, min_samples_for_ci};
use super::utest::{mann_whitney, min_samples_to_detect};
pub use super::view::Decided;
use super::view::{Cell, Change, ChangeVerdict, Column, Diagnostic, Report, Row, Table, keys};
use crate::error::{Error, Result};
use crate::model::{
    Assume, Benchmark, Better, Metric, MetricKind, Note, Run, Statistic, Summary, Unit,
    format_exact, identities, vocab,
};
pub use crate::spec::targets::RegressionRule;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

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
    /// Settings whose differences neither keep inputs apart nor are reported (benchstat's
    /// `-ignore note`).
    pub ignore: Vec<String>,
    /// This machine's noise floor (`latkit calibrate`): gates warn of thresholds below it.
    pub floors: Vec<crate::analyze::noise_floor::Floor>,
    /// Changes a gate decided on rounds of its own (`--runs auto`): their rows show them, not
    /// a test of their own, so that a row and the verdict on it are one statistic.
    pub decided: Vec<Decided>,
    /// What the geomean row is a geometric mean of.
    pub geomean: GeomeanOf,
    /// Select each change's interval (the Hodges-Lehmann bounds of the ratio), which no text
    /// table shows; a gate selects it anyway, as its verdict states it.
    pub change_interval: bool,
}

/// The values a geomean row summarises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GeomeanOf {
    /// Each benchmark's median, and the change as the geometric mean of the benchmarks'
    /// ratios (benchstat's).
    #[default]
    Medians,
    /// Every repetition of every benchmark, aggregates left out, and the change as the ratio of
    /// the two (google/benchmark's compare.py `OVERALL_GEOMEAN`).
    Repetitions,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            alpha: 0.05,
            metric: None,
            statistics: (Statistic::COMPARED_BY_DEFAULT.iter())
                .map(|s| s.name().to_string())
                .collect(),
            rules: Vec::new(),
            allow_env_mismatch: false,
            ignore: Vec::new(),
            floors: Vec::new(),
            decided: Vec::new(),
            geomean: GeomeanOf::Medians,
            change_interval: true,
        }
    }
}

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
    /// Counted (instructions): counts that vary are tested against the rule's threshold.
    counted: bool,
}

/// Compares `inputs` (the first is the base) into a report of one table per metric.
pub fn compare(mut inputs: Vec<CompareInput>, opts: &CompareOptions) -> Result<Report> {
    if inputs.is_empty() {
        return Err(Error::Input("compare needs an input".into()));
    }
    // Every input's metrics at once, spread over the cores together.
    super::enrich::summarize_all(inputs.iter_mut().flat_map(|i| &mut i.runs));
    let mut notes = Vec::new();
    let columns: Vec<Side<'_>> = inputs.iter().map(Side::of).collect();
    let differences = environment_differences(&inputs, &columns, &opts.ignore);
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
    notes.extend(spawning::notes(&inputs));
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
        generated: None,
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
            Kind::Repetitions => repetition_table(columns, metric, opts, &mut footnotes),
            Kind::Distribution => distribution_table(columns, metric, opts, &mut footnotes),
        };
        (table, figures, footnotes)
    };
    let metrics = metric_names(columns, opts);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || metrics.len() < 2 {
        return metrics.iter().map(table).collect();
    }
    // Each thread takes the next metric as it finishes one: metrics differ in cost (a time's
    // ratios against a count's all-equal zeros), so fixed shares leave a thread idle.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, _)> = std::thread::scope(|scope| {
        let (table, next, metrics) = (&table, &next, &metrics);
        let threads: Vec<_> = (0..cores.min(metrics.len()))
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(metric) = metrics.get(i) else {
                            return done;
                        };
                        done.push((i, table(metric)));
                    }
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().expect("a comparison thread panicked"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, table)| table).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::view::Finding;
    use crate::model::{BenchName, Environment, RunBuilder, Source, new_run};
    use hdrhistogram::Histogram;

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
        let source = Source::unnamed_file("go");
        new_run(source, Environment::default(), Vec::new(), builder)
    }

    /// One benchmark `B` with these ns/op repetitions, in order.
    fn repetitions(label: &str, values: &[f64]) -> CompareInput {
        let mut builder = RunBuilder::default();
        let bench = builder.benchmark("B", None, BenchName::plain);
        for v in values {
            builder.record(bench, "ns/op", "ns/op", *v);
        }
        let source = Source::unnamed_file("go");
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
        // Outputs that show no interval leave it unselected, the rest of the change alike; a
        // gate states it whatever the outputs.
        let inputs = || vec![repetitions("old", &level), repetitions("new", &rising)];
        let unshown = CompareOptions {
            change_interval: false,
            ..CompareOptions::default()
        };
        let report = compare(inputs(), &unshown).unwrap();
        let Cell::Change(without) = &report.tables[0].rows[0].cells[5] else {
            panic!("{:?}", report.tables[0].rows[0]);
        };
        assert_eq!(without.interval, None);
        assert_eq!((without.percent, without.p), (change.percent, change.p));
        let gated = CompareOptions {
            change_interval: false,
            ..options.clone()
        };
        let report = compare(inputs(), &gated).unwrap();
        assert!(report.verdict.unwrap().targets[0].shown.contains("95 % CI"));
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
