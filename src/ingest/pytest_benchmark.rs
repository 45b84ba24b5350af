//! pytest-benchmark's `--benchmark-json`: one benchmark per test, every round's time kept as a
//! repetition when saved (`--benchmark-save-data`), else the median standing in with a note;
//! the machine into the environment, the commit into the configuration.

use crate::error::{Error, Result};
use crate::ingest::json_split::{Layout, part_refused, split_rows};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::{BenchName, ConfigEntry, Environment, Note, RunBuilder, Summary, new_run};
use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;

pub struct PytestBenchmark;

/// What a document is, in errors.
const EXPECTED: &str =
    "pytest-benchmark JSON: {\"machine_info\", \"benchmarks\": [{\"name\", \"stats\"}]}";

#[derive(Deserialize)]
struct Benchmark {
    name: String,
    fullname: Option<String>,
    stats: Stats,
}

#[derive(Deserialize)]
struct Stats {
    median: f64,
    min: Option<f64>,
    max: Option<f64>,
    mean: Option<f64>,
    stddev: Option<f64>,
    rounds: Option<u64>,
    ops: Option<f64>,
    /// Iterations in each round (pytest-benchmark calibrates it).
    iterations: Option<u64>,
    /// Every round's time (`--benchmark-save-data`); a shortened list carries a text marker.
    #[serde(default)]
    data: Option<Rounds>,
}

/// `stats.data` as it is parsed: the numbers straight into one vector (a list of JSON values
/// took four times the memory and a copy), or `Shortened` when an entry is no number.
enum Rounds {
    All(Vec<f64>),
    Shortened,
}

impl<'de> Deserialize<'de> for Rounds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Rounds, D::Error> {
        deserializer.deserialize_seq(RoundsVisitor)
    }
}

struct RoundsVisitor;

impl<'de> Visitor<'de> for RoundsVisitor {
    type Value = Rounds;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of round times")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Rounds, A::Error> {
        PARSED_ROUNDS.with_borrow_mut(|times| {
            times.clear();
            let mut all = true;
            // A number is a `Value` held inline; only a marker's text is kept, then dropped.
            while let Some(entry) = seq.next_element::<Value>()? {
                match entry.as_f64() {
                    Some(time) if all => times.push(time),
                    _ => all = false,
                }
            }
            Ok(match all {
                true if times.len() <= KEPT_ROUNDS => Rounds::All(times.to_vec()),
                true => Rounds::All(std::mem::take(times)),
                false => Rounds::Shortened,
            })
        })
    }
}

thread_local! {
    /// A parsing thread's round times as they are read, so that a benchmark's vector is made
    /// at its size, once: grown by doubling, forty rounds took five allocations and held
    /// sixty-four, and shrinking a hundred thousand of them cost the recording thread 75 ms.
    static PARSED_ROUNDS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Round times copied out of [`PARSED_ROUNDS`] at most: a longer list is handed over whole,
/// so that the thread does not keep its size.
const KEPT_ROUNDS: usize = 4096;

impl Stats {
    /// Every round's time, when `data` holds all of them as numbers (taken out of `self`).
    fn rounds(&mut self) -> Option<Vec<f64>> {
        match self.data.take()? {
            Rounds::All(times) if !times.is_empty() => Some(times),
            _ => None,
        }
    }

    /// The file's own summary, for a benchmark saved without its rounds.
    fn reported(&self) -> Option<Summary> {
        let n = self.rounds.filter(|n| *n > 0)? as usize;
        let times = [self.min?, self.max?, self.mean?, self.median];
        if times
            .iter()
            .any(|t| !t.is_finite() || *t < 0.0 || *t > MAX_SECONDS)
        {
            return None;
        }
        let ns = |s: f64| s * 1e9;
        Some(Summary {
            n,
            min: ns(times[0]),
            max: ns(times[1]),
            mean: ns(times[2]),
            median: ns(times[3]),
            stddev: self
                .stddev
                .filter(|s| s.is_finite() && *s >= 0.0 && *s <= MAX_SECONDS)
                .map(ns),
            median_ci: None,
        })
    }
}

/// Longer than any benchmark round, in s; a larger figure is refused as malformed.
const MAX_SECONDS: f64 = 1e9;

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

impl InputFormat for PytestBenchmark {
    fn name(&self) -> &'static str {
        "pytest-benchmark"
    }

    fn describe(&self) -> &'static str {
        "pytest-benchmark `--benchmark-json` (`machine_info`, `benchmarks[].stats`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{')
            && head.contains("\"machine_info\"")
            && head.contains("\"benchmarks\"")
    }

    /// Streamed: each benchmark is parsed on a worker as the document passes and recorded
    /// in order, so memory holds the figures and a few rows, never the document.
    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut kept: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        let mut rows = Rows::new(path);
        split_rows(
            path,
            reader,
            Layout {
                rows: "benchmarks",
                keep: &["machine_info", "commit_info"],
                streamed: &[],
                expected: EXPECTED,
            },
            |line, key, value| {
                let map = serde_json::from_slice(value)
                    .map_err(|e| part_refused(path, line, EXPECTED, &e))?;
                kept.insert(key.to_string(), map);
                Ok(())
            },
            |line, _, bytes| {
                serde_json::from_slice::<Benchmark>(bytes)
                    .map_err(|e| part_refused(path, line, EXPECTED, &e))
            },
            |benchmark| rows.add(benchmark),
        )?;
        let Rows {
            builder,
            summarised,
            failed,
            ..
        } = rows;
        if let Some(e) = failed {
            return Err(e);
        }
        if builder.is_empty() {
            return Err(Error::Input(format!(
                "{path}: pytest-benchmark JSON with no benchmarks"
            )));
        }
        let mut notes = Vec::new();
        if summarised > 0 {
            notes.push(Note::warning(format!(
                "{path}: {summarised} benchmark(s) without every round's time (`stats.data` absent \
                 or shortened): the file's own min, max, mean, median, stddev and rounds are the \
                 figures, so there is no confidence interval and compare cannot test them \
                 (pytest --benchmark-save-data keeps every round)"
            )));
        }
        let empty = BTreeMap::new();
        let environment = environment(kept.get("machine_info").unwrap_or(&empty));
        let commit = kept.get("commit_info").unwrap_or(&empty);
        let config: Vec<ConfigEntry> = ["id", "branch", "dirty", "project"]
            .iter()
            .filter_map(|key| {
                text(commit.get(*key)).map(|value| ConfigEntry {
                    key: format!("commit_{key}"),
                    value,
                })
            })
            .collect();
        let run = new_run(input.source(self), environment, config, builder);
        Ok(Input {
            runs: vec![run],
            notes,
            malformed: 0,
        })
    }
}

/// The benchmarks recorded so far, in the document's order.
struct Rows<'a> {
    path: &'a str,
    builder: RunBuilder,
    /// Benchmarks saved without every round's time.
    summarised: usize,
    /// The first benchmark refused: it ends the read.
    failed: Option<Error>,
}

impl<'a> Rows<'a> {
    fn new(path: &'a str) -> Rows<'a> {
        Rows {
            path,
            builder: RunBuilder::default(),
            summarised: 0,
            failed: None,
        }
    }

    fn add(&mut self, b: Benchmark) {
        if self.failed.is_none()
            && let Err(e) = self.record(b)
        {
            self.failed = Some(e);
        }
    }

    fn record(&mut self, mut b: Benchmark) -> Result<()> {
        let (path, builder) = (self.path, &mut self.builder);
        let name = b.fullname.as_deref().unwrap_or(&b.name);
        let bench = builder.benchmark(name, None, BenchName::plain);
        let rounds = b.stats.rounds();
        let summarised = rounds.is_none();
        let times = rounds.unwrap_or_else(|| {
            self.summarised += 1;
            vec![b.stats.median]
        });
        if times.iter().any(|t| !t.is_finite() || *t < 0.0) {
            return Err(Error::Input(format!(
                "{path}: `{name}`: a time that is negative or not a number"
            )));
        }
        let refused = |e| Error::Input(format!("{path}: `{name}`: {e}"));
        if let Some(n) = b.stats.iterations {
            builder.record_iterations_of(bench, n, times.len());
        }
        builder
            .record_all_checked(bench, "time", "s", times)
            .map_err(refused)?;
        if summarised {
            builder.set_reported(bench, "time", b.stats.reported());
        }
        // Files older than `ops` give it as pytest-benchmark computes it: 1 / mean.
        let ops = b.stats.ops.or_else(|| {
            let mean = b.stats.mean.filter(|m| *m > 0.0)?;
            Some(1.0 / mean)
        });
        if let Some(ops) = ops.filter(|o| o.is_finite() && *o >= 0.0) {
            builder
                .record_checked(bench, "ops", "ops/s", ops)
                .map_err(refused)?;
        }
        Ok(())
    }
}

/// The machine pytest-benchmark describes in `machine_info`.
fn environment(machine: &BTreeMap<String, Value>) -> Environment {
    let cpu = machine.get("cpu");
    Environment {
        hostname: text(machine.get("node")),
        os: text(machine.get("system")),
        kernel: text(machine.get("release")),
        arch: text(machine.get("machine")),
        cpu_model: text(cpu.and_then(|c| c.get("brand_raw"))),
        cores: cpu
            .and_then(|c| c.get("count"))
            .and_then(Value::as_u64)
            .map(|n| n as usize),
        toolchains: text(machine.get("python_version"))
            .map(|v| ConfigEntry {
                key: "python".into(),
                value: v,
            })
            .into_iter()
            .collect(),
        ..Environment::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(data: &str) -> Option<Vec<f64>> {
        let mut stats: Stats =
            serde_json::from_str(&format!(r#"{{"median": 1.5, "data": {data}}}"#)).unwrap();
        stats.rounds()
    }

    #[test]
    fn data_is_every_round_only_when_every_entry_is_a_number() {
        assert_eq!(
            rounds("[1.5, 2, -3, 4e-6]"),
            Some(vec![1.5, 2.0, -3.0, 4e-6])
        );
        // pytest-benchmark's marker for a shortened list, and any other non-number, anywhere.
        assert_eq!(rounds(r#"[1.5, "... 30 more ...", 2.5]"#), None);
        assert_eq!(rounds(r#"[1.5, [2.5], {"a": [1]}, true, null]"#), None);
        assert_eq!(rounds("[]"), None);
        assert_eq!(rounds("null"), None);
        assert!(serde_json::from_str::<Stats>(r#"{"median": 1, "data": 5}"#).is_err());
    }

    #[test]
    fn rounds_are_held_at_their_count_however_many_came_before() {
        let listed = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        for n in [3, KEPT_ROUNDS, KEPT_ROUNDS + 1, 40, 2] {
            let times = rounds(&format!("[{}]", listed(n))).unwrap();
            assert_eq!(times, (0..n).map(|i| i as f64).collect::<Vec<_>>());
            assert!(times.capacity() == n || n > KEPT_ROUNDS, "{n}");
        }
        assert_eq!(rounds(r#"[1, 2, "... 3 more ..."]"#), None);
        assert_eq!(rounds("[5]"), Some(vec![5.0]));
    }
}
