//! The one resolver of the figures users name (a target's or a budget stage's `metric`): a
//! name resolves to exactly one figure of a benchmark, or to an error that says what the
//! benchmark has. Never a line's first metric, never a median standing in for a maximum.
//!
//! - `METRIC` names that metric: the median of its repetitions, or, when the metric is itself a
//!   statistic (a `BENCH` line's `min`, `avg`, `max`), that statistic over the runs: the max of
//!   the maxima, the min of the minima, the mean of the averages, the rule said with it.
//! - `METRIC:STATISTIC` (`latency:p99`, `ns/op:mean`) names a statistic of one metric.
//! - A bare statistic (`p99`, `mean`) names a timer test's own summary figure, else the metric
//!   spelled by another of its names (`mean` is a `BENCH` line's `avg`), else the statistic of
//!   the benchmark's one distribution, or of its one time (Go's `ns/op`, a command's wall time),
//!   or of its one metric; google/benchmark's `real_time` and `cpu_time` are two.
//!   Where that is not one, the name is ambiguous, and the error says which metrics there are.

use crate::model::{Benchmark, Dimension, Metric, MetricKind, Statistic, Unit, vocab};
use serde::Serialize;

/// A measured figure in its metric's base unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measured {
    pub value: f64,
    pub unit: Unit,
    /// How the figure was taken from several values (`max of 3 runs`), shown beside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Measured {
    pub fn new(value: f64, unit: Unit) -> Measured {
        Measured {
            value,
            unit,
            rule: None,
        }
    }

    pub fn text(&self) -> String {
        self.unit.format_scaled(self.value)
    }
}

/// Why a name resolves to no figure of a benchmark.
#[derive(Clone, Debug, PartialEq)]
pub enum Unresolved {
    /// The benchmark has nothing of that name; these are the figures it has.
    Absent { has: Vec<String> },
    /// The name fits several figures; these.
    Ambiguous { among: Vec<String> },
    /// The metric exists but has no such statistic (three repetitions have no p99).
    NoSuchStatistic { metric: String, has: String },
}

impl Unresolved {
    /// The reason, for a message that has already named the figure and the benchmark.
    pub fn reason(&self) -> String {
        match self {
            Unresolved::Absent { has } if has.is_empty() => "it has no figures".into(),
            Unresolved::Absent { has } => format!("its figures are {}", has.join(", ")),
            Unresolved::Ambiguous { among } => format!(
                "that could be any of {}: name one, or a statistic of one (METRIC:STATISTIC, \
                 e.g. `{}:mean`)",
                among.join(", "),
                among.first().map_or("", String::as_str)
            ),
            Unresolved::NoSuchStatistic { metric, has } => {
                format!("`{metric}` has no such statistic (it has {has})")
            }
        }
    }
}

/// The figure `name` of `bench`, as the module says.
pub fn resolve(bench: &Benchmark, name: &str) -> Result<Measured, Unresolved> {
    let name = name.trim();
    if let Some(metric) = figure_metric(bench, name) {
        return match Statistic::parse(name) {
            Some(own) => own_statistic(metric, own),
            None => whole(metric),
        };
    }
    if let Some((metric, statistic)) = name.rsplit_once(':')
        && let (Some(metric), Some(statistic)) =
            (figure_metric(bench, metric), Statistic::parse(statistic))
    {
        return statistic_of(metric, statistic);
    }
    let Some(statistic) = Statistic::parse(name) else {
        return Err(absent(bench));
    };
    if let Some(figure) = timer_figure(bench, statistic) {
        return Ok(figure);
    }
    let figures = || {
        bench
            .metrics
            .iter()
            .filter(|m| m.kind != MetricKind::Series)
    };
    // A metric that is this statistic by another name: `mean` of `avg=38us`.
    let named: Vec<&Metric> = figures()
        .filter(|m| Statistic::parse(&m.name) == Some(statistic))
        .collect();
    match named[..] {
        [metric] => return own_statistic(metric, statistic),
        [] => {}
        _ => return Err(ambiguous(&named)),
    }
    // A line of statistics side by side (min, avg, max) has none other: a median of its
    // `min` would be a figure nobody measured.
    if figures().any(|m| Statistic::parse(&m.name).is_some()) {
        return Err(absent(bench));
    }
    // The benchmark's one distribution, else its one time (Go's ns/op beside B/op and
    // allocs/op; a command's wall time beside the CPU times it used), else its one figure.
    let distributions: Vec<&Metric> = figures().filter(|m| m.percentiles.is_some()).collect();
    let times: Vec<&Metric> = figures()
        .filter(|m| m.unit.dimension == Dimension::Time)
        .filter(|m| !vocab::COMMAND_RESOURCES.contains(&m.name.as_str()))
        .collect();
    let candidates: Vec<&Metric> = match (distributions.is_empty(), times.is_empty()) {
        (false, _) => distributions,
        (true, false) => times,
        (true, true) => figures().collect(),
    };
    match candidates[..] {
        [metric] => statistic_of(metric, statistic),
        [] => Err(absent(bench)),
        _ => Err(ambiguous(&candidates)),
    }
}

/// A figure of a timer test: its own summary, never bucket edges or per-second series.
pub fn timer_figure(bench: &Benchmark, statistic: Statistic) -> Option<Measured> {
    let t = bench.timer.as_ref()?;
    let time = |ns: f64| Measured::new(ns, Unit::new(Dimension::Time));
    let counted =
        |n: u64, what: &str| Measured::new(n as f64, Unit::new(Dimension::Count(what.to_string())));
    match statistic {
        Statistic::Min => Some(time(t.min_ns as f64)),
        Statistic::Mean => Some(time(t.avg_ns)),
        Statistic::Max => Some(time(t.max_ns as f64)),
        Statistic::Count => t.samples.map(|n| counted(n, "")),
        Statistic::Overruns => t.overruns.map(|n| counted(n, "overruns")),
        _ => None,
    }
}

/// The names a benchmark's figures can be given by, for messages.
pub fn figure_names(bench: &Benchmark) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if bench.timer.is_some() {
        names.extend(["min", "avg", "max", "samples", "overruns"].map(String::from));
    }
    for m in bench
        .metrics
        .iter()
        .filter(|m| m.kind != MetricKind::Series)
    {
        match m.percentiles.is_some() {
            true => names.push(format!("{}:p50…p99.99", m.name)),
            false => names.push(m.name.clone()),
        }
    }
    names
}

fn figure_metric<'a>(bench: &'a Benchmark, name: &str) -> Option<&'a Metric> {
    bench.metric(name).filter(|m| m.kind != MetricKind::Series)
}

fn absent(bench: &Benchmark) -> Unresolved {
    Unresolved::Absent {
        has: figure_names(bench),
    }
}

fn ambiguous(metrics: &[&Metric]) -> Unresolved {
    Unresolved::Ambiguous {
        among: metrics.iter().map(|m| m.name.clone()).collect(),
    }
}

/// A metric named alone: the median of its repetitions (a distribution needs a statistic).
fn whole(metric: &Metric) -> Result<Measured, Unresolved> {
    if metric.percentiles.is_some() {
        return Err(Unresolved::NoSuchStatistic {
            metric: metric.name.clone(),
            has: format!(
                "a distribution: name one of its statistics, e.g. {}:p99",
                metric.name
            ),
        });
    }
    let s = summary(metric)?;
    let rule = (s.n > 1).then(|| format!("median of {} runs", s.n));
    Ok(Measured {
        rule,
        ..Measured::new(s.median, metric.unit.clone())
    })
}

/// A metric that is itself a statistic of each run, taken over the runs by that statistic.
fn own_statistic(metric: &Metric, statistic: Statistic) -> Result<Measured, Unresolved> {
    if metric.percentiles.is_some() {
        return statistic_of(metric, statistic);
    }
    let s = summary(metric)?;
    let (value, how) = match statistic {
        Statistic::Min => (s.min, "min"),
        Statistic::Max => (s.max, "max"),
        Statistic::Mean => (s.mean, "mean"),
        _ => (s.median, "median"),
    };
    let rule = (s.n > 1).then(|| format!("{how} of {} runs' {}", s.n, metric.name));
    Ok(Measured {
        rule,
        ..Measured::new(value, metric.unit.clone())
    })
}

/// A statistic of one metric: of its distribution, or of its repetitions' summary.
fn statistic_of(metric: &Metric, statistic: Statistic) -> Result<Measured, Unresolved> {
    let (percentiles, summary) = (metric.percentiles.as_ref(), metric.summary.as_ref());
    if statistic == Statistic::Count {
        let n = percentiles.map(|p| p.count).or(summary.map(|s| s.n as u64));
        if let Some(n) = n {
            return Ok(Measured::new(
                n as f64,
                Unit::new(Dimension::Count(String::new())),
            ));
        }
    }
    let value = percentiles
        .and_then(|p| statistic.of_percentiles(p))
        .or_else(|| statistic.of_summary(summary?));
    let Some(value) = value else {
        let has = match percentiles {
            Some(_) => "min, p50…p99.99, max, count",
            None => "min, mean, median, max, stddev, count: a few runs have no percentiles",
        };
        return Err(Unresolved::NoSuchStatistic {
            metric: metric.name.clone(),
            has: has.into(),
        });
    };
    let n = summary.map_or(0, |s| s.n);
    let rule = (percentiles.is_none() && n > 1).then(|| {
        let of = format!("{} runs' {}", n, metric.name);
        format!("{} of {of}", statistic.name())
    });
    Ok(Measured {
        rule,
        ..Measured::new(value, metric.unit.clone())
    })
}

fn summary(metric: &Metric) -> Result<&crate::model::Summary, Unresolved> {
    metric
        .summary
        .as_ref()
        .ok_or_else(|| Unresolved::NoSuchStatistic {
            metric: metric.name.clone(),
            has: "no values".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, Environment, RunBuilder, Source, new_run};

    /// A benchmark with `metrics` (name, unit, repetitions), summarised.
    fn bench(metrics: &[(&str, &str, &[f64])]) -> Benchmark {
        let mut builder = RunBuilder::default();
        let b = builder.benchmark("b", None, BenchName::plain);
        for (name, unit, values) in metrics {
            for v in *values {
                builder.record(b, name, unit, *v);
            }
        }
        let source = Source::unnamed_file("test");
        let mut runs = vec![new_run(source, Environment::default(), Vec::new(), builder)];
        crate::analyze::enrich::summarize_all(&mut runs);
        runs.remove(0).benchmarks.remove(0)
    }

    fn value(bench: &Benchmark, name: &str) -> Result<f64, Unresolved> {
        resolve(bench, name).map(|m| m.value)
    }

    #[test]
    fn a_name_is_one_figure_or_an_error_naming_them() {
        let line = bench(&[
            ("min", "us", &[36.0, 41.0, 38.0]),
            ("avg", "us", &[6000.0, 6100.0, 5900.0]),
            ("max", "us", &[34600.0, 4400.0, 28200.0]),
        ]);
        assert_eq!(value(&line, "mean"), Ok(6.0e6));
        assert_eq!(value(&line, "max"), Ok(34.6e6));
        assert_eq!(value(&line, "min"), Ok(36e3));
        assert!(matches!(
            resolve(&line, "median"),
            Err(Unresolved::Absent { .. })
        ));
        let rule = resolve(&line, "max").unwrap().rule;
        assert_eq!(rule.as_deref(), Some("max of 3 runs' max"));
        // A command's mean is its wall time's, beside the CPU times it used.
        let command = bench(&[
            ("time", "s", &[1.0, 3.0]),
            ("user", "s", &[0.5, 0.5]),
            ("system", "s", &[0.1, 0.1]),
        ]);
        assert_eq!(value(&command, "mean"), Ok(2e9));
        assert_eq!(value(&command, "user:mean"), Ok(0.5e9));
        // google/benchmark's two times are both headline figures: name one.
        let gbench = bench(&[("real_time", "ns", &[10.0]), ("cpu_time", "ns", &[9.0])]);
        let Err(Unresolved::Ambiguous { among }) = resolve(&gbench, "p50") else {
            panic!("real_time and cpu_time are two figures");
        };
        assert_eq!(among, ["real_time", "cpu_time"]);
        assert_eq!(value(&gbench, "cpu_time:median"), Ok(9.0));
        assert!(matches!(
            resolve(&gbench, "real_time:p99"),
            Err(Unresolved::NoSuchStatistic { .. })
        ));
    }
}
