//! The one model every source produces and every sink reads.

mod builder;
pub mod counts;
mod distribution;
mod environment;
mod inline;
mod name;
pub mod redact;
pub mod secrets;
mod statistic;
pub mod summary;
mod timer;
mod unit;
mod v2_encoding;
pub mod vocab;

pub use builder::{RunBuilder, new_run};
pub use distribution::{Distribution, Recorder};
pub use environment::{Check, CheckStatus, Environment};
use inline::{inline_counts, inline_values};
pub use name::{BenchName, bench_line_name, from_bench_line_name, identities};
pub use statistic::Statistic;
pub use summary::{Interval, Percentiles, Summary};
pub use timer::{
    BreakHit, BucketStats, LinearHistogram, RunningOverall, Second, TimerInfo, TimerOverall,
    TimerSummary,
};
pub use unit::{
    Better, BetterOverride, Dimension, ParsedUnit, Unit, fits_base_unit, format_exact,
    format_significant, number_prefix, parse_quantity,
};
pub use v2_encoding::decode_histogram;

use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// The version of latkit's JSON document. v2: metrics say what they are (`kind`), and timer
/// benchmarks carry the tool's own summary (`timer`).
pub const JSON_SCHEMA: &str = "latkit.result.v2";

/// One invocation of a harness or probe, or one input file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Run {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub started: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ended: Option<String>,
    pub latkit_version: String,
    pub source: Source,
    pub environment: Environment,
    /// The harness's own configuration lines (`goos: linux`, `pkg: ...`), first value of each key.
    pub config: Vec<ConfigEntry>,
    pub benchmarks: Vec<Benchmark>,
    /// Set for timer latency tests (measured or read from their tools' output).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timer: Option<TimerInfo>,
    /// Each benchmark's metrics are figures of equal standing (a BENCH line's `min`, `avg`,
    /// `max`; a network test's throughput and byte counts), not one headline figure with
    /// extras as Go's ns/op is: tables show them side by side.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub peer_metrics: bool,
}

impl Run {
    /// This run with no benchmarks, for a writer that writes them apart from the rest.
    pub fn without_benchmarks(&self) -> Run {
        // Every field named, so that a new one is not left out silently.
        let Run {
            id,
            started,
            ended,
            latkit_version,
            source,
            environment,
            config,
            benchmarks: _,
            timer,
            peer_metrics,
        } = self;
        Run {
            id: id.clone(),
            started: started.clone(),
            ended: ended.clone(),
            latkit_version: latkit_version.clone(),
            source: source.clone(),
            environment: environment.clone(),
            config: config.clone(),
            benchmarks: Vec::new(),
            timer: timer.clone(),
            peer_metrics: *peer_metrics,
        }
    }

    /// Sets the direction of every metric an override names; returns whether any did.
    pub fn override_better(&mut self, over: &BetterOverride) -> bool {
        let mut found = false;
        for metric in self
            .benchmarks
            .iter_mut()
            .flat_map(|b| b.metrics.iter_mut())
            .filter(|m| m.name == over.metric)
        {
            metric.better = over.better;
            found = true;
        }
        found
    }

    /// Documents written before `peer_metrics` existed lack it; their BENCH and network runs
    /// were the ones with peer metrics. Called by everything that reads stored documents.
    pub fn infer_missing_peer_metrics(&mut self) {
        self.peer_metrics |= matches!(self.source.format.as_str(), "bench" | "net");
    }
}

impl Source {
    /// A file of `format` read under no name, as tests read their text.
    #[cfg(test)]
    pub fn unnamed_file(format: &str) -> Source {
        Source {
            kind: SourceKind::File,
            format: format.into(),
            path: None,
            command: Vec::new(),
        }
    }
}

/// How a run's numbers reached latkit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// Read from a file.
    File,
    /// Read from standard input.
    Stdin,
    /// A harness or command latkit ran (go test, a google/benchmark binary, `exec`).
    Command,
    /// One of latkit's own probes measured them.
    Probe,
    /// A kind a newer latkit wrote; kept readable.
    #[serde(other)]
    Other,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::File => "file",
            SourceKind::Stdin => "stdin",
            SourceKind::Command => "command",
            SourceKind::Probe => "probe",
            SourceKind::Other => "other",
        }
    }
}

/// Where a run's numbers came from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    pub kind: SourceKind,
    /// The input format (`go`, ...).
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    /// The command line that produced it; written and read with its secrets redacted.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        default,
        serialize_with = "redact::serialize_command",
        deserialize_with = "redact::deserialize_command"
    )]
    pub command: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigEntry {
    pub key: String,
    pub value: String,
}

/// One benchmark (one full name) with every repetition of every metric.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Benchmark {
    #[serde(flatten)]
    pub name: BenchName,
    /// The package or module the benchmark belongs to, when the harness says.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub package: Option<String>,
    /// Iterations (`b.N`) of each repetition, in order.
    #[serde(serialize_with = "inline_counts")]
    pub iterations: Vec<u64>,
    pub metrics: Vec<Metric>,
    /// Fixed-bucket histograms as timer tools count them.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub histograms: Vec<LinearHistogram>,
    /// Configuration lines in force for these results that differ from the run's first values
    /// (a Go file whose `commit:` changes midway): part of the benchmark's identity, so results
    /// under another configuration are never pooled with these.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub config: Vec<ConfigEntry>,
    /// A timer test's own overall figures for this benchmark (thread).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timer: Option<TimerSummary>,
    /// Set when this is a statistic over another benchmark's repetitions or a fit to them, as
    /// the harness reported it (google/benchmark's `_mean`, `_stddev`, `_cv`, `_BigO`, `_RMS`
    /// rows), not a benchmark of its own: shown and compared, left out of geomeans.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aggregate: Option<String>,
    /// Set when the harness gave only aggregates of this benchmark's repetitions (google/
    /// benchmark's `--benchmark_report_aggregates_only`): its figures are this statistic of
    /// them, never repetitions, so compare.py's geomean of repetitions leaves it out.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stands_in: Option<String>,
    /// A timed command's exit code at each run, in order (`None`: ended by a signal), as
    /// hyperfine's `exit_codes`; empty for harness results.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub exit_codes: Vec<Option<i32>>,
}

/// What a metric's values are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// One value per repetition of the benchmark: their median is the benchmark's figure.
    #[default]
    Repetitions,
    /// One value per interval of a single run (a timer's per-second minimum): a time series,
    /// never a figure of the whole run.
    Series,
}

impl MetricKind {
    fn is_default(&self) -> bool {
        *self == MetricKind::Repetitions
    }
}

/// What may be assumed about a metric's repetitions (benchstat's `Unit X assume=...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assume {
    /// Nothing: they vary, so medians, order-statistic intervals and the U test.
    #[default]
    Nothing,
    /// They are exact (a binary's size, a count): the value itself, any difference is real,
    /// and differing repetitions are a warning.
    Exact,
    /// Counted by an instruction counter (valgrind): near-exact, so a change is decided by its
    /// size where the repetitions agree within the counting floor, and tested where they do
    /// not.
    Counted,
}

impl Assume {
    fn is_default(&self) -> bool {
        *self == Assume::Nothing
    }
}

/// A measured quantity of a benchmark: one value per repetition, in the unit's base unit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Metric {
    /// The harness's name for the metric; for Go benchmarks the unit as written (`ns/op`).
    pub name: String,
    pub unit: Unit,
    /// The unit as the harness wrote it, so reports can print values the way they were given.
    pub source_unit: String,
    pub better: Better,
    #[serde(skip_serializing_if = "MetricKind::is_default", default)]
    pub kind: MetricKind,
    #[serde(skip_serializing_if = "Assume::is_default", default)]
    pub assume: Assume,
    #[serde(serialize_with = "inline_values")]
    pub values: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub histogram: Option<Box<Distribution>>,
    /// Derived from `values` (or the histogram) by analysis before reporting; never the only
    /// thing stored, so never read back (a mean past f64's range is written as `null`).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub summary: Option<Summary>,
    /// The harness's own summary of repetitions it did not keep (pytest-benchmark saved
    /// without `data`): these are the figures, never re-derived from the value standing in.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reported: Option<Box<Summary>>,
    /// Derived from `histogram` by analysis before reporting, so never read back.
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub percentiles: Option<Box<Percentiles>>,
}

impl Metric {
    pub fn new(name: &str, parsed: &ParsedUnit, source_unit: &str) -> Self {
        Metric {
            name: name.to_string(),
            unit: parsed.unit.clone(),
            source_unit: source_unit.to_string(),
            better: parsed.unit.better(),
            kind: MetricKind::Repetitions,
            assume: Assume::Nothing,
            values: Vec::new(),
            histogram: None,
            summary: None,
            reported: None,
            percentiles: None,
        }
    }

    /// A time metric holding a distribution of samples in ns, and no repetition values.
    pub fn time_distribution(name: &str, samples: impl Into<Distribution>) -> Self {
        let ns = ParsedUnit {
            unit: Unit::new(Dimension::Time),
            to_base: 1.0,
        };
        Metric {
            histogram: Some(Box::new(samples.into())),
            ..Metric::new(name, &ns, "ns")
        }
    }
}

impl Benchmark {
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The metric reports lead with: the one named, or else the first the harness reported
    /// that describes the whole run (not a per-interval series).
    pub fn primary_metric(&self, preferred: Option<&str>) -> Option<&Metric> {
        match preferred {
            Some(name) => self.metric(name),
            None => self.metrics.iter().find(|m| m.kind != MetricKind::Series),
        }
    }

    pub fn repetitions(&self) -> usize {
        self.iterations.len().max(
            self.metrics
                .iter()
                .map(|m| m.values.len())
                .max()
                .unwrap_or(0),
        )
    }
}

/// Something the reader of a report must know: a fallback, a skipped line, a missing role.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Note {
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Info,
    Warning,
}

impl Note {
    /// A note; any secret its text quotes (a URL's password, `TOKEN=x`) is redacted, since
    /// every note may be recorded.
    pub fn info(message: impl Into<String>) -> Self {
        Note {
            level: Level::Info,
            message: redact::in_text(&message.into()),
            file: None,
            line: None,
        }
    }

    pub fn warning_at(file: &str, line: u64, message: impl Into<String>) -> Self {
        Note {
            level: Level::Warning,
            message: redact::in_text(&message.into()),
            file: Some(file.to_string()),
            line: Some(line),
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Note {
            level: Level::Warning,
            ..Note::info(message)
        }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// RFC 3339 timestamp of `t`, to the second.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}
