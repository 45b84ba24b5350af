//! Each input as one side of the comparison: its benchmarks by name, repetitions pooled
//! across its runs, and the metrics the tables compare.

use super::*;

/// One side of the comparison: an input's benchmarks by name, repetitions of one name pooled
/// across its runs. Every lookup is by hash: a suite can hold tens of thousands of benchmarks,
/// and a benchmark tens of thousands of metrics.
pub(super) struct Side<'a> {
    pub(super) label: &'a str,
    /// Keys in the order the input first gives them, each with its benchmarks.
    pub(super) benchmarks: Vec<(String, Vec<&'a Benchmark>)>,
    /// Key → its place in `benchmarks`.
    pub(super) places: FxHashMap<String, usize>,
    /// Metric name → its number here.
    pub(super) metric_numbers: FxHashMap<&'a str, usize>,
    /// (place of a key, metric number) → the key's benchmarks that have the metric, with it.
    pub(super) metrics: FxHashMap<(usize, usize), Vec<(&'a Benchmark, &'a Metric)>>,
    /// By metric number: every benchmark's metric of that name, in key order.
    pub(super) by_metric: Vec<Vec<(&'a Benchmark, &'a Metric)>>,
}

/// Adds `(bench, metric)` to `list` unless `bench` already has a metric there (a benchmark's
/// first metric of a name is the one read, as [`Benchmark::metric`] reads it).
pub(super) fn push_first<'a>(
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
    pub(super) fn of(input: &'a CompareInput) -> Side<'a> {
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
    pub(super) fn procs(&self) -> Vec<&'a str> {
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
    pub(super) fn is_aggregate(&self, key: &str) -> bool {
        self.places
            .get(key)
            .is_some_and(|&at| self.benchmarks[at].1.iter().any(|b| b.aggregate.is_some()))
    }

    /// Whether `key` is given only as an aggregate of its repetitions (a median standing in).
    pub(super) fn stands_in(&self, key: &str) -> bool {
        self.places
            .get(key)
            .is_some_and(|&at| self.benchmarks[at].1.iter().any(|b| b.stands_in.is_some()))
    }

    /// The benchmarks of `key` that have `metric`, each with it.
    pub(super) fn with_metric(&self, key: &str, metric: &str) -> &[(&'a Benchmark, &'a Metric)] {
        let at = self.places.get(key);
        let number = self.metric_numbers.get(metric);
        at.zip(number)
            .and_then(|(&at, &number)| self.metrics.get(&(at, number)))
            .map_or(&[], Vec::as_slice)
    }

    /// Every benchmark's metric named `metric`, in key order.
    pub(super) fn all_named(&self, metric: &str) -> &[(&'a Benchmark, &'a Metric)] {
        self.metric_numbers
            .get(metric)
            .map_or(&[], |&number| self.by_metric[number].as_slice())
    }

    /// Every finite repetition of `metric` of the benchmark `key`: borrowed when one metric
    /// holds them all (the common case, and a copy of millions of values otherwise).
    pub(super) fn values(&self, key: &str, metric: &str) -> Option<(Cow<'a, [f64]>, &'a Metric)> {
        let mut repeated = self
            .with_metric(key, metric)
            .iter()
            .map(|&(_, m)| m)
            .filter(|m| m.kind == MetricKind::Repetitions && !m.values.is_empty());
        let first = repeated.next()?;
        let rest: Vec<&Metric> = repeated.collect();
        let all_finite = |m: &Metric| m.values.iter().all(|v| v.is_finite());
        let values = if rest.is_empty() && all_finite(first) {
            Cow::Borrowed(first.values.as_slice())
        } else {
            let every = std::iter::once(first).chain(rest);
            let finite = every.flat_map(|m| m.values.iter().copied().filter(|v| v.is_finite()));
            Cow::Owned(finite.collect())
        };
        (!values.is_empty()).then_some((values, first))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Repetitions,
    Distribution,
}

pub(super) struct MetricName {
    pub(super) name: String,
    pub(super) kind: Kind,
}

/// The metrics to compare, in the order the base reports them.
pub(super) fn metric_names(columns: &[Side], opts: &CompareOptions) -> Vec<MetricName> {
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
pub(super) fn keys(columns: &[Side]) -> Vec<String> {
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    columns
        .iter()
        .flat_map(|c| &c.benchmarks)
        .filter(|(key, _)| seen.insert(key))
        .map(|(key, _)| key.clone())
        .collect()
}

/// What differs between the base's environment and each other input's (GOMAXPROCS, the
/// machine, settings), a line naming both sides each; settings in `ignore` left out.
pub(super) fn environment_differences(
    inputs: &[CompareInput],
    columns: &[Side],
    ignore: &[String],
) -> Vec<String> {
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
                if ignore.contains(&what) {
                    continue;
                }
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
