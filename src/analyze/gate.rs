//! Targets and budgets as a CI gate: look each one up in the results, compare exactly in base
//! units, and say Pass, Fail or Not measured.

use super::attribution::Pattern;
use super::figure::{Unresolved, resolve};
use crate::error::{Error, Result};
use crate::model::{Benchmark, Dimension, Run, Source, Unit};
use crate::spec::targets::{Budget, Limit, Target, Targets};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    NotMeasured,
    /// `--runs auto` reached its most rounds before the comparison was decided.
    Undecided,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "✅ Pass",
            Status::Fail => "❌ Fail",
            Status::NotMeasured => "⚠️ Not measured",
            Status::Undecided => "❔ Undecided",
        }
    }
}

pub use super::figure::Measured;

#[derive(Clone, Debug, Serialize)]
pub struct TargetResult {
    pub bench: String,
    pub metric: String,
    pub value: Option<Measured>,
    /// `< 5 ms`, `> 100 MB/s`, or both, as the targets file writes them: the target's
    /// identity (a JUnit test case's name).
    pub target: String,
    /// The same in the units and precision values are shown in (`< 5.000 ms`).
    #[serde(skip)]
    pub shown: String,
    pub status: Status,
}

#[derive(Clone, Debug, Serialize)]
pub struct StageResult {
    pub name: String,
    pub bench: String,
    pub metric: String,
    pub value: Option<Measured>,
    /// The stage's share of the budget's total, in percent.
    pub share: Option<f64>,
    /// The stage's own limit, as shown (`< 5.000 ms`), and whether it held, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BudgetResult {
    pub name: String,
    pub total: String,
    /// The total in its unit's base unit, and that unit.
    pub total_value: f64,
    pub unit: Unit,
    pub stages: Vec<StageResult>,
    pub sum: Option<f64>,
    pub remainder: Option<f64>,
    pub status: Status,
}

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub targets: Vec<TargetResult>,
    pub budget: Option<BudgetResult>,
}

impl Verdict {
    /// How many targets (and the budget) missed or were not measured.
    pub fn missed(&self) -> usize {
        self.targets
            .iter()
            .filter(|t| t.status != Status::Pass)
            .count()
            + self
                .budget
                .iter()
                .filter(|b| b.status != Status::Pass)
                .count()
    }

    /// Nothing failed, but a comparison was left undecided.
    pub fn undecided(&self) -> bool {
        self.targets.iter().all(|t| t.status != Status::Fail)
            && self.targets.iter().any(|t| t.status == Status::Undecided)
    }

    /// Everything passed and was measured.
    pub fn passed(&self) -> bool {
        self.targets.iter().all(|t| t.status == Status::Pass)
            && self
                .budget
                .as_ref()
                .is_none_or(|b| b.status == Status::Pass)
    }
}

/// Whether a limit can be compared with a measured figure: the same dimension, or a bare
/// number against any count (overruns, lost packets).
fn comparable(measured: &Unit, limit: &Unit) -> bool {
    measured.dimension == limit.dimension
        || matches!(
            (&measured.dimension, &limit.dimension),
            (Dimension::Count(_), Dimension::Count(bare)) if bare.is_empty()
        )
}

fn check_dimension(file: &str, what: &str, measured: &Measured, limit: &Limit) -> Result<()> {
    if comparable(&measured.unit, &limit.unit) {
        return Ok(());
    }
    let line = limit.line;
    let written = match limit.unit.base_symbol().as_str() {
        "" => format!(
            "has no unit: write it with one, e.g. \"{} {}\"",
            limit.text,
            match measured.unit.dimension {
                Dimension::Time => "us".to_string(),
                _ => measured.unit.base_symbol(),
            }
        ),
        unit => format!("is in {unit}"),
    };
    Err(Error::Input(format!(
        "{file}:{line}: {what} is measured in {} but the limit `{}` {written}",
        measured.unit.base_symbol(),
        limit.text,
    )))
}

/// A timer test's own limits (`--break`, `--max`): why the result fails them, if it does.
pub fn timer_limits(runs: &[Run], break_us: Option<f64>, max_us: Option<f64>) -> Option<String> {
    let info = runs.first().and_then(|r| r.timer.as_ref())?;
    if let Some(hit) = &info.break_hit {
        return Some(format!(
            "break: thread {} woke {:.3} µs late {} (--break {} µs)",
            hit.thread,
            hit.latency_ns as f64 / 1000.0,
            hit.when(),
            break_us.unwrap_or_default()
        ));
    }
    let max_us_seen = info.overall.as_ref()?.max_ns as f64 / 1000.0;
    max_us
        .filter(|&limit| max_us_seen > limit)
        .map(|limit| format!("maximum latency {max_us_seen:.3} µs exceeded --max {limit} µs"))
}

/// Evaluates every target and the budget against `runs`.
pub fn evaluate(targets: &Targets, runs: &[Run]) -> Result<Verdict> {
    let stages = targets.budget.iter().flat_map(|b| &b.stages);
    let patterns = (targets.targets.iter().map(|t| &t.bench))
        .chain(stages.map(|s| &s.bench))
        .map(|glob| Pattern::new(glob))
        .collect::<Result<Vec<_>>>()?;
    let patterns: Vec<&Pattern> = patterns.iter().collect();
    let benchmarks = runs.iter().flat_map(|r| &r.benchmarks);
    let mut matched = Pattern::matching_each(&patterns, benchmarks)?.into_iter();
    let sources = Sources(runs);
    let mut results = Vec::new();
    for (target, found) in targets.targets.iter().zip(matched.by_ref()) {
        results.extend(evaluate_target(&targets.file, target, &sources, found)?);
    }
    let budget = match &targets.budget {
        Some(b) => Some(evaluate_budget(
            &targets.file,
            b,
            &sources,
            matched.collect(),
        )?),
        None => None,
    };
    Ok(Verdict {
        targets: results,
        budget,
    })
}

/// The runs a verdict reads, to name the input a benchmark came from when there are several.
struct Sources<'a>(&'a [Run]);

impl Sources<'_> {
    /// `bench`'s name, with its input's when several inputs were read.
    fn name(&self, bench: &Benchmark) -> String {
        let name = bench.name.full_name.clone();
        if self.0.len() < 2 {
            return name;
        }
        let run = self.0.iter().enumerate().find(|(_, r)| {
            r.benchmarks
                .as_ptr_range()
                .contains(&std::ptr::from_ref(bench))
        });
        match run {
            Some((
                _,
                Run {
                    source:
                        Source {
                            path: Some(path), ..
                        },
                    ..
                },
            )) => {
                format!("{name} ({path})")
            }
            Some((i, _)) => format!("{name} (run {})", i + 1),
            None => name,
        }
    }
}

/// The figure `metric` of each benchmark in `matched`: those that have it, or exit 2 naming
/// what they have when none does or when the name fits several figures.
fn resolve_all<'a>(
    file: &str,
    line: usize,
    metric: &str,
    sources: &Sources,
    matched: Vec<&'a Benchmark>,
) -> Result<Vec<(&'a Benchmark, Measured)>> {
    let mut found = Vec::new();
    let mut first_miss = None;
    for bench in matched {
        match resolve(bench, metric) {
            Ok(measured) => found.push((bench, measured)),
            Err(why @ Unresolved::Ambiguous { .. }) => first_miss = Some((bench, why, true)),
            Err(why) => {
                first_miss.get_or_insert((bench, why, false));
            }
        }
        if first_miss.as_ref().is_some_and(|m| m.2) {
            break;
        }
    }
    match first_miss {
        Some((bench, why, ambiguous)) if ambiguous || found.is_empty() => {
            Err(Error::Input(format!(
                "{file}:{line}: `{metric}` is not a figure of `{}`: {}",
                sources.name(bench),
                why.reason()
            )))
        }
        _ => Ok(found),
    }
}

/// One result per benchmark the target matches (`matched`), or one "not measured".
fn evaluate_target(
    file: &str,
    target: &Target,
    sources: &Sources,
    matched: Vec<&Benchmark>,
) -> Result<Vec<TargetResult>> {
    let (below, above) = (target.below.as_ref(), target.above.as_ref());
    let text = limits_text(below, above, |l| l.text.clone());
    // In the units and precision the measured values are shown in (`500 us` was shown
    // beside `43.00 µs`).
    let shown = limits_text(below, above, shown_limit);
    let found = resolve_all(file, target.line, &target.metric, sources, matched)?;
    if found.is_empty() {
        return Ok(vec![TargetResult {
            bench: target.bench.clone(),
            metric: target.metric.clone(),
            value: None,
            target: text,
            shown,
            status: Status::NotMeasured,
        }]);
    }
    let mut results = Vec::new();
    for (bench, measured) in found {
        let name = sources.name(bench);
        let what = format!("`{name}` {}", target.metric);
        let pass = within(file, &what, &measured, below, above)?;
        results.push(TargetResult {
            bench: name,
            metric: target.metric.clone(),
            value: Some(measured),
            target: text.clone(),
            shown: shown.clone(),
            status: if pass { Status::Pass } else { Status::Fail },
        });
    }
    Ok(results)
}

/// `> A and < B` of the limits there are, each written by `show`.
fn limits_text(below: Option<&Limit>, above: Option<&Limit>, show: fn(&Limit) -> String) -> String {
    [
        above.map(|l| format!("> {}", show(l))),
        below.map(|l| format!("< {}", show(l))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" and ")
}

fn shown_limit(limit: &Limit) -> String {
    limit.unit.format_scaled(limit.value)
}

/// Whether `measured` is within the limits (each checked to be of its dimension).
fn within(
    file: &str,
    what: &str,
    measured: &Measured,
    below: Option<&Limit>,
    above: Option<&Limit>,
) -> Result<bool> {
    let mut pass = true;
    if let Some(limit) = below {
        check_dimension(file, what, measured, limit)?;
        pass &= measured.value < limit.value;
    }
    if let Some(limit) = above {
        check_dimension(file, what, measured, limit)?;
        pass &= measured.value > limit.value;
    }
    Ok(pass)
}

/// Each stage's figure and share of the total, their sum, the remainder and whether it fits;
/// `matched` holds each stage's benchmarks, of which there must be one.
fn evaluate_budget(
    file: &str,
    b: &Budget,
    sources: &Sources,
    matched: Vec<Vec<&Benchmark>>,
) -> Result<BudgetResult> {
    let mut stages = Vec::new();
    for (stage, found) in b.stages.iter().zip(matched) {
        let found = resolve_all(file, stage.line, &stage.metric, sources, found)?;
        if found.len() > 1 {
            let names: Vec<String> = found.iter().map(|(b, _)| sources.name(b)).collect();
            return Err(Error::Input(format!(
                "{file}:{}: budget stage `{}` (`{}`) matches {} benchmarks ({}): a budget sums \
                 one figure per stage; name one benchmark, or check each input on its own",
                stage.line,
                stage.name,
                stage.bench,
                names.len(),
                names.join(", ")
            )));
        }
        let value = found.into_iter().next().map(|(_, v)| v);
        let (below, above) = (stage.below.as_ref(), stage.above.as_ref());
        let limit = Some(limits_text(below, above, shown_limit)).filter(|t| !t.is_empty());
        let mut status = limit.as_ref().map(|_| Status::NotMeasured);
        if let Some(v) = &value {
            let what = format!("stage `{}`", stage.name);
            check_dimension(file, &what, v, &b.total)?;
            let pass = within(file, &what, v, below, above)?;
            status = status.map(|_| if pass { Status::Pass } else { Status::Fail });
        }
        stages.push(StageResult {
            name: stage.name.clone(),
            bench: stage.bench.clone(),
            metric: stage.metric.clone(),
            share: value.as_ref().map(|v| v.value / b.total.value * 100.0),
            limit,
            status,
            value,
        });
    }
    let sum: Option<f64> = stages
        .iter()
        .map(|s| s.value.as_ref().map(|v| v.value))
        .sum();
    // A stage beyond its own limit fails the budget, whatever the others measured.
    let stage_failed = stages.iter().any(|s| s.status == Some(Status::Fail));
    let status = match sum {
        _ if stage_failed => Status::Fail,
        None => Status::NotMeasured,
        Some(s) if s <= b.total.value => Status::Pass,
        Some(_) => Status::Fail,
    };
    Ok(BudgetResult {
        name: b.name.clone(),
        total: b.total.text.clone(),
        total_value: b.total.value,
        unit: b.total.unit.clone(),
        remainder: sum.map(|s| b.total.value - s),
        sum,
        stages,
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        BenchName, Environment, Percentiles, RunBuilder, Source, TimerSummary, new_run,
    };

    /// A run with `encode` (ns/op over three repetitions: 100, 200, 300), `decode` (a
    /// latency distribution) and `timer` (a timer test's own summary).
    fn run() -> Run {
        let mut builder = RunBuilder::default();
        let encode = builder.benchmark("encode", None, BenchName::plain);
        for ns in [300.0, 100.0, 200.0] {
            builder.record(encode, "ns/op", "ns/op", ns);
        }
        let decode = builder.benchmark("decode", None, BenchName::plain);
        builder.record(decode, "latency", "ns", 1.0);
        builder.benchmark("timer", None, BenchName::plain);
        let source = Source::unnamed_file("test");
        let mut runs = vec![new_run(source, Environment::default(), Vec::new(), builder)];
        crate::analyze::enrich::summarize_all(&mut runs);
        let mut run = runs.remove(0);
        let latency = &mut run.benchmarks[1].metrics[0];
        latency.values.clear();
        latency.percentiles = Some(Box::new(Percentiles {
            count: 1000,
            min: 10.0,
            p50: 20.0,
            p90: 30.0,
            p99: 40.0,
            p99_9: 50.0,
            p99_99: 60.0,
            max: 70.0,
        }));
        run.benchmarks[2].timer = Some(TimerSummary {
            min_ns: 1000,
            avg_ns: 1500.0,
            max_ns: 9000,
            samples: Some(100),
            overruns: Some(2),
        });
        run
    }

    fn value(bench: &Benchmark, metric: &str) -> Option<f64> {
        resolve(bench, metric).ok().map(|m| m.value)
    }

    #[test]
    fn a_figure_is_a_metric_or_a_statistic_by_any_of_its_names() {
        let run = run();
        let [encode, decode, timer] = [0, 1, 2].map(|i| &run.benchmarks[i]);
        // A metric of repetitions is its median; statistics of the repetitions' summary.
        assert_eq!(value(encode, "ns/op"), Some(200.0));
        assert_eq!(value(encode, "mean"), Some(200.0));
        assert_eq!(value(encode, "avg"), Some(200.0));
        assert_eq!(value(encode, "max"), Some(300.0));
        assert_eq!(value(encode, "stddev"), Some(100.0));
        assert_eq!(value(encode, "samples"), Some(3.0));
        assert_eq!(value(encode, "p99"), None, "three repetitions have no p99");
        assert_eq!(value(encode, "B/op"), None);
        // A distribution's percentiles; its count is a count, not a time.
        assert_eq!(value(decode, "p99"), Some(40.0));
        assert_eq!(value(decode, "median"), Some(20.0));
        assert_eq!(value(decode, "p99.99"), Some(60.0));
        let count = resolve(decode, "count").unwrap();
        assert_eq!(
            (count.value, count.unit.dimension),
            (1000.0, Dimension::Count(String::new()))
        );
        // A timer test's own summary comes first.
        assert_eq!(value(timer, "min"), Some(1000.0));
        assert_eq!(value(timer, "mean"), Some(1500.0));
        assert_eq!(value(timer, "samples"), Some(100.0));
        let overruns = resolve(timer, "overruns").unwrap();
        assert_eq!(overruns.unit.dimension, Dimension::Count("overruns".into()));
        assert_eq!(value(timer, "p95"), None, "not a statistic");
    }

    #[test]
    fn targets_pass_fail_or_are_not_measured_and_a_budget_sums_its_stages() {
        let targets = Targets::parse(
            "t.toml",
            r#"
[[target]]
bench = "enc*"
metric = "ns/op"
below = "250 ns"
[[target]]
bench = "decode"
metric = "p99"
below = "35 ns"
[[target]]
bench = "missing"
metric = "p99"
below = "1 ms"
[budget]
name = "frame"
total = "300 ns"
[[budget.stage]]
name = "encode"
bench = "encode"
metric = "ns/op"
[[budget.stage]]
name = "decode"
bench = "decode"
metric = "p99"
"#,
        )
        .unwrap();
        let verdict = evaluate(&targets, &[run()]).unwrap();
        let statuses: Vec<Status> = verdict.targets.iter().map(|t| t.status).collect();
        assert_eq!(statuses, [Status::Pass, Status::Fail, Status::NotMeasured]);
        let budget = verdict.budget.as_ref().unwrap();
        assert_eq!(budget.sum, Some(240.0));
        assert_eq!(budget.remainder, Some(60.0));
        assert_eq!(budget.status, Status::Pass);
        // Each stage's share of the total, in percent: 200 ns and 40 ns of 300 ns.
        let shares: Vec<f64> = budget.stages.iter().map(|s| s.share.unwrap()).collect();
        assert!(
            (shares[0] - 66.667).abs() < 1e-3 && (shares[1] - 13.333).abs() < 1e-3,
            "{shares:?}"
        );
        assert_eq!(verdict.missed(), 2);
        assert!(!verdict.passed() && !verdict.undecided());
    }

    #[test]
    fn a_limit_in_another_dimension_is_refused_with_its_line() {
        let targets = Targets::parse(
            "t.toml",
            "[[target]]\nbench = \"decode\"\nmetric = \"count\"\nbelow = \"5 ms\"\n",
        )
        .unwrap();
        let Err(Error::Input(message)) = evaluate(&targets, &[run()]) else {
            panic!("a count against a time was accepted");
        };
        assert!(message.starts_with("t.toml:4:"), "{message}");
    }
}
