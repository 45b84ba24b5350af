//! criterion.rs results, read two ways: the directory criterion writes (`target/criterion`, each
//! benchmark's `new/{benchmark,sample,estimates}.json`), and `cargo criterion
//! --message-format=json` lines. Either way each sample becomes one repetition of the time per
//! iteration (the sample's time / its iteration count), so latkit's statistics and `compare`
//! test criterion's samples themselves; a declared throughput becomes a rate per sample.

use super::problems::Skipped;
use super::{Input, InputFormat, Named, Parsed, for_each_numbered_line};
use crate::error::{Error, Result};
use crate::model::{BenchName, Dimension, Environment, Note, RunBuilder, Unit, fits_base_unit};
use serde::Deserialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub struct Criterion;

const EXAMPLE_MESSAGE: &str = r#"{"reason":"benchmark-complete","id":"fib 20","iteration_count":[...],"measured_values":[...],"unit":"ns",...}"#;
/// How deep below the given directory `new` directories are looked for: criterion nests
/// group / function / parameter / `new`, and no deeper, so a directory that merely contains a
/// criterion tree somewhere far below is not taken for one.
const MAX_DEPTH: usize = 4;
/// The most directories the walk visits; beyond is surely not a criterion tree.
const MAX_VISITED: usize = 100_000;

/// `benchmark.json`: the benchmark's identity and throughput.
#[derive(Deserialize)]
struct BenchmarkFile {
    full_id: String,
    #[serde(default)]
    throughput: Option<DeclaredThroughput>,
}

/// criterion's `Throughput` as it serialises it: `{"Bytes": 4096}`.
#[derive(Deserialize, Clone, Copy)]
enum DeclaredThroughput {
    Bytes(u64),
    BytesDecimal(u64),
    Bits(u64),
    Elements(u64),
}

impl DeclaredThroughput {
    /// What one iteration processes, and the unit of the rate it gives.
    fn per_iteration(self) -> (u64, &'static str) {
        match self {
            Self::Bytes(n) | Self::BytesDecimal(n) => (n, "B/s"),
            Self::Bits(n) => (n, "bits/s"),
            Self::Elements(n) => (n, "elements/s"),
        }
    }
}

/// `sample.json`: each sample's iteration count and total time (ns for wall time).
#[derive(Deserialize)]
struct SampleFile {
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// One `cargo criterion --message-format=json` line.
#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    iteration_count: Option<Vec<f64>>,
    #[serde(default)]
    measured_values: Option<Vec<f64>>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    throughput: Vec<MessageThroughput>,
    #[serde(default)]
    change: Option<Change>,
}

#[derive(Deserialize)]
struct MessageThroughput {
    per_iteration: u64,
    unit: String,
}

/// criterion's own verdict against its previous run.
#[derive(Deserialize)]
struct Change {
    change: String,
    mean: ChangeEstimate,
}

#[derive(Deserialize)]
struct ChangeEstimate {
    estimate: f64,
}

/// One benchmark's samples, from either form.
struct Samples<'a> {
    id: &'a str,
    iters: &'a [f64],
    times: &'a [f64],
    /// The unit of `times` (criterion's wall time is ns).
    unit: &'a str,
    throughput: Option<(u64, &'static str)>,
}

/// Records every sample of `s` as a repetition; the reason when the samples cannot be read.
fn record(builder: &mut RunBuilder, s: &Samples) -> std::result::Result<(), String> {
    if s.iters.len() != s.times.len() || s.iters.is_empty() {
        return Err(format!(
            "`{}`: {} iteration counts for {} sample times (criterion writes one of each per sample)",
            s.id,
            s.iters.len(),
            s.times.len()
        ));
    }
    if let Some(n) = s.iters.iter().find(|n| !(n.is_finite() && **n >= 1.0)) {
        return Err(format!(
            "`{}`: iteration count {n} is not a positive number",
            s.id
        ));
    }
    if let Some(t) = s.times.iter().find(|t| !(t.is_finite() && **t >= 0.0)) {
        return Err(format!(
            "`{}`: sample time {t} is negative or not a number",
            s.id
        ));
    }
    let time_unit = format!("{}/iter", s.unit);
    let metric = match Unit::parse(&time_unit).unit.dimension {
        Dimension::Time => "time",
        // A custom criterion measurement (cycles, instructions) keeps the unit as its name.
        _ => s.unit,
    };
    let to_base = Unit::parse(&time_unit).to_base;
    let per_iteration: Vec<f64> = s.iters.iter().zip(s.times).map(|(n, t)| t / n).collect();
    // A rate per sample, when every sample took time (a zero would have no rate to pair).
    let rates = s
        .throughput
        .filter(|_| metric == "time")
        .and_then(|(amount, unit)| {
            let rates = per_iteration.iter().map(|t| {
                let seconds = t * to_base * 1e-9;
                (seconds > 0.0).then(|| amount as f64 / seconds)
            });
            Some((rates.collect::<Option<Vec<f64>>>()?, unit))
        });
    // Every value is checked before any is kept: a sample is read whole or refused whole.
    let too_large = |values: &[f64], unit: &str| {
        values
            .iter()
            .find(|v| !fits_base_unit(**v, unit))
            .map(|v| format!("`{}`: {v:e} {unit} is too large to store", s.id))
    };
    if let Some(e) = too_large(&per_iteration, &time_unit)
        .or_else(|| rates.as_ref().and_then(|(r, unit)| too_large(r, unit)))
    {
        return Err(e);
    }
    let bench = builder.benchmark(s.id, None, BenchName::parse_path);
    for (value, iters) in per_iteration.iter().zip(s.iters) {
        builder.record_checked(bench, metric, &time_unit, *value)?;
        builder.record_iterations(bench, *iters as u64);
    }
    for (rate, unit) in rates
        .iter()
        .flat_map(|(r, unit)| r.iter().map(move |v| (v, unit)))
    {
        builder.record_checked(bench, "throughput", unit, *rate)?;
    }
    Ok(())
}

fn samples_note() -> Note {
    Note::info(
        "criterion: `time` holds each sample's time per iteration (sample time / iterations); \
         criterion's headline figure is a regression slope over the samples (linear sampling) \
         or their mean, so it can differ slightly from latkit's median",
    )
}

impl InputFormat for Criterion {
    fn name(&self) -> &'static str {
        "criterion"
    }

    fn describe(&self) -> &'static str {
        "criterion's `target/criterion` directory (`new/sample.json` per benchmark), or \
         `cargo criterion --message-format=json` lines (`{\"reason\":\"benchmark-complete\", ...}`)"
    }

    fn detect(&self, head: &str) -> bool {
        let lines = || head.lines().map(str::trim_start);
        let messages = lines().any(|l| {
            l.starts_with(r#"{"reason":"benchmark-complete""#)
                || l.starts_with(r#"{"reason":"group-complete""#)
        });
        // A fresh build puts cargo's own messages first, often more of them than detection
        // reads; `cargo criterion --message-format=json` is what writes them to a results
        // file, unless libtest's bench lines follow (`cargo bench --message-format=json`).
        let cargo_messages = lines().any(|l| l.starts_with(r#"{"reason":"compiler-artifact""#))
            && !lines().any(|l| l.starts_with("test ") && l.contains(" ... bench:"));
        messages || cargo_messages
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut builder = RunBuilder::default();
        let mut skipped = Skipped::default();
        let mut verdicts = Vec::new();
        for_each_numbered_line(reader, path, &mut skipped, |skipped, line_number, line| {
            // `2>&1` mixes criterion's progress text in: only JSON lines are messages.
            if !line.trim_start().starts_with('{') {
                return;
            }
            let message: Message = match serde_json::from_str(line) {
                Ok(m) => m,
                Err(e) => {
                    return skipped.line(
                        path,
                        line_number,
                        format!("not a criterion message ({e}); line skipped"),
                    );
                }
            };
            if message.reason != "benchmark-complete" {
                return;
            }
            let (Some(id), Some(iters), Some(times)) = (
                message.id.as_deref(),
                message.iteration_count.as_deref(),
                message.measured_values.as_deref(),
            ) else {
                return skipped.line(
                    path,
                    line_number,
                    format!("a benchmark-complete message without `id`, `iteration_count` or `measured_values`; line skipped (expected e.g. `{EXAMPLE_MESSAGE}`)"),
                );
            };
            let throughput = message.throughput.first().map(|t| match t.unit.as_str() {
                "bytes" => (t.per_iteration, "B/s"),
                "bits" => (t.per_iteration, "bits/s"),
                _ => (t.per_iteration, "elements/s"),
            });
            let samples = Samples {
                id,
                iters,
                times,
                unit: message
                    .unit
                    .as_deref()
                    .filter(|u| !u.is_empty())
                    .unwrap_or("ns"),
                throughput,
            };
            if let Err(reason) = record(&mut builder, &samples) {
                return skipped.line(path, line_number, format!("{reason}; line skipped"));
            }
            if let Some(change) = message.change.filter(|c| c.change != "NoChange")
                && verdicts.len() < super::problems::LISTED
            {
                verdicts.push(Note::info(format!(
                    "criterion judged `{id}` {} against its previous run (mean {:+.2} %)",
                    change.change,
                    change.mean.estimate * 100.0
                )));
            }
        })?;
        if builder.is_empty() {
            return Err(Error::Input(format!(
                "{path}: no criterion results found. A `cargo criterion --message-format=json` result looks like:\n  {EXAMPLE_MESSAGE}"
            )));
        }
        verdicts.push(samples_note());
        let parsed = Parsed::of_results(builder, skipped, path, verdicts);
        Ok(parsed.into_input(input.source(self), Environment::default()))
    }

    fn detect_directory(&self, dir: &Path) -> bool {
        benchmark_dirs(dir).is_ok_and(|walk| !walk.found.is_empty())
    }

    fn read_directory(&self, input: &Named, dir: &Path) -> Result<Input> {
        let path = input.path;
        let Walk {
            found: dirs,
            unread,
        } = benchmark_dirs(dir).map_err(|e| Error::io(path, e))?;
        let mut notes: Vec<Note> = unread.into_iter().map(Note::warning).collect();
        if dirs.is_empty() {
            return Err(Error::Input(format!(
                "{path}: no criterion benchmarks below it (criterion writes \
                 target/criterion/<benchmark>/new/sample.json)"
            )));
        }
        let mut builder = RunBuilder::default();
        for bench_dir in &dirs {
            let file = |name: &str| bench_dir.join(name);
            let benchmark: BenchmarkFile = read_file(
                &file("benchmark.json"),
                "criterion benchmark.json: {\"full_id\", \"throughput\", ...}",
            )?;
            let sample_path = file("sample.json");
            if !sample_path.is_file() {
                notes.push(Note::warning(format!(
                    "{}: no sample.json (criterion writes one with every run): `{}` skipped",
                    bench_dir.display(),
                    benchmark.full_id
                )));
                continue;
            }
            let sample: SampleFile = read_file(
                &sample_path,
                "criterion sample.json: {\"sampling_mode\", \"iters\": [...], \"times\": [...]}",
            )?;
            let samples = Samples {
                id: &benchmark.full_id,
                iters: &sample.iters,
                times: &sample.times,
                unit: "ns",
                throughput: benchmark.throughput.map(DeclaredThroughput::per_iteration),
            };
            record(&mut builder, &samples)
                .map_err(|reason| Error::Input(format!("{}: {reason}", sample_path.display())))?;
        }
        if builder.is_empty() {
            return Err(Error::Input(format!(
                "{path}: criterion benchmarks without samples"
            )));
        }
        notes.push(samples_note());
        let parsed = Parsed::of_results(builder, Skipped::default(), path, notes);
        Ok(parsed.into_input(input.source(self), Environment::default()))
    }
}

/// One of criterion's JSON files, whole; an error names the file, the line and what was expected.
fn read_file<T: for<'de> Deserialize<'de>>(file: &Path, expected: &str) -> Result<T> {
    let name = file.display().to_string();
    let opened = std::fs::File::open(file).map_err(|e| Error::io(&name, e))?;
    super::read_json_document(&name, &mut std::io::BufReader::new(opened), expected)
}

/// What the walk for benchmark directories found.
struct Walk {
    /// Directories holding one benchmark's latest results, sorted.
    found: Vec<PathBuf>,
    /// Directories below that could not be read, and why (a warning each, not an abort).
    unread: Vec<String>,
}

/// The directories holding one benchmark's latest results: `dir` itself when it holds a
/// `benchmark.json` (a baseline directory such as `.../new` or `.../base`), else every `new`
/// directory within [`MAX_DEPTH`] below `dir` (or below `dir/criterion`, for a cargo target
/// directory). Symbolic links are not followed, so a loop cannot trap the walk.
fn benchmark_dirs(dir: &Path) -> std::io::Result<Walk> {
    let mut walk = Walk {
        found: Vec::new(),
        unread: Vec::new(),
    };
    if dir.join("benchmark.json").is_file() {
        walk.found.push(dir.to_path_buf());
        return Ok(walk);
    }
    let nested = dir.join("criterion");
    let root = if nested.is_dir() {
        nested
    } else {
        dir.to_path_buf()
    };
    // Paths, not open handles, wait their turn: a wide tree must not exhaust descriptors.
    let mut pending = vec![(root, 1usize)];
    let mut visited = 0;
    while let Some((current, depth)) = pending.pop() {
        visited += 1;
        if visited > MAX_VISITED {
            return Err(std::io::Error::other(format!(
                "more than {MAX_VISITED} directories: not a criterion tree"
            )));
        }
        let entries = match std::fs::read_dir(&current) {
            Ok(entries) => entries,
            // The directory given must be readable; below it, what cannot be is reported.
            Err(e) if visited == 1 => return Err(e),
            Err(e) => {
                walk.unread.push(format!(
                    "{}: {e}: benchmarks below it are not read",
                    current.display()
                ));
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            let name = entry.file_name();
            if name == "new" {
                if path.join("benchmark.json").is_file() {
                    walk.found.push(path);
                }
            } else if depth < MAX_DEPTH
                && !matches!(name.to_str(), Some("base" | "change" | "report"))
            {
                pending.push((path, depth + 1));
            }
        }
    }
    walk.found.sort();
    Ok(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(samples: &Samples) -> std::result::Result<crate::model::Benchmark, String> {
        let mut builder = RunBuilder::default();
        record(&mut builder, samples)?;
        Ok(builder.finish().remove(0))
    }

    #[test]
    fn each_sample_is_a_time_per_iteration_with_its_rate() {
        let bench = read(&Samples {
            id: "copy/clone/64",
            iters: &[10.0, 20.0],
            times: &[1000.0, 3000.0],
            unit: "ns",
            throughput: Some((64, "B/s")),
        })
        .unwrap();
        assert_eq!(bench.name.path, ["copy", "clone", "64"]);
        assert_eq!(bench.iterations, [10, 20]);
        assert_eq!(bench.metrics[0].name, "time");
        assert_eq!(bench.metrics[0].values, [100.0, 150.0]);
        assert_eq!(bench.metrics[1].name, "throughput");
        assert_eq!(
            bench.metrics[1].values,
            [64.0 / (100.0 * 1e-9), 64.0 / (150.0 * 1e-9)]
        );
    }

    #[test]
    fn a_custom_measurement_keeps_its_unit_as_the_metric() {
        let bench = read(&Samples {
            id: "f",
            iters: &[4.0],
            times: &[400.0],
            unit: "cycles",
            throughput: Some((1, "elements/s")),
        })
        .unwrap();
        assert_eq!(bench.metrics.len(), 1, "no rate from cycles");
        assert_eq!(bench.metrics[0].name, "cycles");
        assert_eq!(bench.metrics[0].values, [100.0]);
    }

    #[test]
    fn inconsistent_samples_are_refused_with_the_reason() {
        let refused = |iters: &[f64], times: &[f64]| {
            read(&Samples {
                id: "f",
                iters,
                times,
                unit: "ns",
                throughput: None,
            })
            .err()
            .unwrap()
        };
        assert!(refused(&[1.0], &[1.0, 2.0]).contains("1 iteration counts for 2"));
        assert!(refused(&[], &[]).contains("0 iteration counts"));
        assert!(refused(&[0.0], &[1.0]).contains("not a positive number"));
        assert!(refused(&[f64::NAN], &[1.0]).contains("not a positive number"));
        assert!(refused(&[1.0], &[-1.0]).contains("negative"));
        assert!(refused(&[1.0], &[f64::INFINITY]).contains("not a number"));
    }
}
