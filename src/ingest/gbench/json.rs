//! google/benchmark's JSON (`json_schema_version` 1, as 1.6–1.9 write it): a `context` object
//! and a `benchmarks` array of rows.

use super::{Context, Problem, Recorder, Row, RowKind, cache_size};
use crate::error::{Error, Result};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::Source;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::io::{BufRead, Read};

/// The largest file read: the whole document is held while its rows are read.
const MAX_BYTES: u64 = 4 << 30;

pub struct GbenchJson;

impl InputFormat for GbenchJson {
    fn name(&self) -> &'static str {
        "gbench-json"
    }

    fn describe(&self) -> &'static str {
        "google/benchmark JSON, `--benchmark_format=json` or `--benchmark_out=FILE`"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{')
            && head.contains("\"context\"")
            && (head.contains("\"library_build_type\"")
                || head.contains("\"num_cpus\"")
                || head.contains("\"run_type\""))
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut bytes = Vec::new();
        reader
            .take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        if bytes.len() as u64 > MAX_BYTES {
            return Err(Error::Input(format!(
                "{path}: larger than {} GiB, the most a google/benchmark JSON file may be",
                MAX_BYTES >> 30
            )));
        }
        read_bytes(path, &bytes, input.source(self))
    }
}

/// A whole google/benchmark JSON document, held in memory, as the run it describes.
pub fn read_bytes(path: &str, bytes: &[u8], source: Source) -> Result<Input> {
    let (context, recorder) = read_document(path, bytes)?;
    Ok(context.into_input(recorder, source))
}

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(default)]
    context: Map<String, Value>,
    #[serde(borrow)]
    benchmarks: Vec<&'a RawValue>,
}

/// Reads the document and hands every row to a recorder.
fn read_document(path: &str, bytes: &[u8]) -> Result<(Context, Recorder)> {
    let doc: Document = serde_json::from_slice(bytes).map_err(|e| {
        Error::Input(format!(
            "{path}:{}: not a google/benchmark JSON document: {e}",
            e.line()
        ))
    })?;
    let context = read_context(&doc.context);
    let mut recorder = Recorder::new(path);
    let mut lines = LineCounter::new(bytes);
    for raw in doc.benchmarks {
        let line = lines.line_of(raw.get().as_ptr());
        match serde_json::from_str::<Map<String, Value>>(raw.get()) {
            Ok(fields) => match row(line, &fields) {
                Ok(row) => recorder.add(row),
                Err(why) => recorder.skip(line, format!("{why}; row skipped")),
            },
            Err(_) => recorder.skip(line, "a row that is not an object; skipped".into()),
        }
    }
    if recorder.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no google/benchmark results in `benchmarks`"
        )));
    }
    Ok((context, recorder))
}

/// Line numbers of positions in the document, counted forward as rows are read in order.
struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: u64,
}

impl<'a> LineCounter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        LineCounter {
            bytes,
            offset: 0,
            line: 1,
        }
    }

    /// The line of `at`, a pointer into the document at or after the last one asked about.
    fn line_of(&mut self, at: *const u8) -> u64 {
        let target = (at as usize)
            .saturating_sub(self.bytes.as_ptr() as usize)
            .clamp(self.offset, self.bytes.len());
        self.line += memchr::memchr_iter(b'\n', &self.bytes[self.offset..target]).count() as u64;
        self.offset = target;
        self.line
    }
}

fn read_context(fields: &Map<String, Value>) -> Context {
    let mut context = Context::default();
    for (key, value) in fields {
        let text = match (key.as_str(), value) {
            ("caches", Value::Array(caches)) => caches
                .iter()
                .filter_map(cache)
                .collect::<Vec<_>>()
                .join(", "),
            ("load_avg", Value::Array(loads)) => loads
                .iter()
                .filter_map(Value::as_f64)
                .map(|l| format!("{l:.2}"))
                .collect::<Vec<_>>()
                .join(" "),
            (_, Value::String(s)) => s.clone(),
            (_, Value::Number(n)) => n.to_string(),
            (_, Value::Bool(b)) => b.to_string(),
            // Nested values of custom keys are kept as JSON.
            (_, other) => other.to_string(),
        };
        context.set(key, text);
    }
    context
}

/// `L1 Data 32 KiB`, `L3 Unified 32 MiB (shared by 2)`.
fn cache(value: &Value) -> Option<String> {
    let level = value.get("level")?.as_u64()?;
    let kind = value.get("type")?.as_str()?;
    let size = cache_size(value.get("size")?.as_u64()?);
    Some(match value.get("num_sharing").and_then(Value::as_u64) {
        Some(n) if n > 1 => format!("L{level} {kind} {size} (shared by {n})"),
        _ => format!("L{level} {kind} {size}"),
    })
}

/// Fields every row has, and those that say what it is; everything else numeric is a counter.
const KNOWN: &[&str] = &[
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "label",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "big_o",
    "cpu_coefficient",
    "real_coefficient",
    "rms",
];

const TIME_UNITS: &[&str] = &["ns", "us", "ms", "s"];

fn row(line: u64, f: &Map<String, Value>) -> std::result::Result<Row, String> {
    let text = |key: &str| f.get(key).and_then(Value::as_str);
    let name = text("name").ok_or("no `name`")?;
    let run_name = text("run_name").unwrap_or(name);
    let kind = match (text("run_type"), text("aggregate_name")) {
        (Some("aggregate"), Some("BigO")) => RowKind::BigO(text("big_o").unwrap_or("f(N)").into()),
        (Some("aggregate"), Some("RMS")) => RowKind::Rms,
        (Some("aggregate"), Some(statistic)) => RowKind::Aggregate(statistic.to_string()),
        // Before `aggregate_name` existed, google/benchmark marked repetitions `aggregate`
        // too; compare.py reads them as repetitions, and so does latkit.
        _ => RowKind::Iteration,
    };
    let mut row = Row::new(line, run_name, kind);
    row.name = name.to_string();
    row.percentage = text("aggregate_unit") == Some("percentage");
    row.label = text("label").filter(|l| !l.is_empty()).map(str::to_string);
    if f.get("error_occurred").and_then(Value::as_bool) == Some(true) {
        row.problem = Some(Problem::Error(text("error_message").unwrap_or("").into()));
        return Ok(row);
    }
    if f.get("skipped").and_then(Value::as_bool) == Some(true) {
        row.problem = Some(Problem::Skipped(text("skip_message").unwrap_or("").into()));
        return Ok(row);
    }
    // Times are never negative; a user counter may be.
    let value = |key: &str, min: f64| -> std::result::Result<Option<f64>, String> {
        match f.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite() && *x >= min)
                .map(Some)
                .ok_or_else(|| {
                    let expected = if min == 0.0 {
                        "a non-negative number"
                    } else {
                        "a finite number"
                    };
                    format!("{name}: `{key}` is {v}, not {expected}")
                }),
        }
    };
    let number = |key: &str| value(key, 0.0);
    row.time_unit = text("time_unit").unwrap_or("ns").to_string();
    if !TIME_UNITS.contains(&row.time_unit.as_str()) {
        return Err(format!(
            "{name}: time_unit `{}` is not one of ns, us, ms, s",
            row.time_unit
        ));
    }
    match &row.kind {
        RowKind::BigO(_) => {
            row.real_time = number("real_coefficient")?;
            row.cpu_time = number("cpu_coefficient")?;
        }
        // The JSON keeps only the fit of the CPU times (the console shows both).
        RowKind::Rms => {
            row.real_time = None;
            row.cpu_time = number("rms")?;
        }
        RowKind::Iteration | RowKind::Aggregate(_) => {
            row.real_time =
                Some(number("real_time")?.ok_or_else(|| format!("{name}: no `real_time`"))?);
            row.cpu_time = number("cpu_time")?;
            row.iterations = match f.get("iterations") {
                None => None,
                Some(v) => Some(
                    v.as_u64()
                        .ok_or_else(|| format!("{name}: `iterations` is {v}, not a count"))?,
                ),
            };
        }
    }
    for (key, _) in f {
        if KNOWN.contains(&key.as_str()) {
            continue;
        }
        if let Some(v) = value(key, f64::MIN)? {
            row.counters.push((key.clone(), v));
        }
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_forward() {
        let text = b"{\n\"a\": [\n  1,\n  2\n]}";
        let mut lines = LineCounter::new(text);
        let at = |i: usize| text[i..].as_ptr();
        assert_eq!(lines.line_of(at(10)), 3);
        assert_eq!(lines.line_of(at(15)), 4);
        assert_eq!(lines.line_of(at(15)), 4);
    }
}
