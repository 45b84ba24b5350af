//! google/benchmark's JSON (`json_schema_version` 1, as 1.6–1.9 write it): a `context` object
//! and a `benchmarks` array of rows.

use super::{Context, Problem, Recorder, Row, RowKind, cache_size};
use crate::error::{Error, Result};
use crate::ingest::json_stream::{Position, Tracked};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::Source;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::io::BufRead;
use std::rc::Rc;

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
        read_from(input.path, reader, input.source(self))
    }
}

/// A google/benchmark JSON document, streamed, as the run it describes.
pub fn read_from(path: &str, reader: &mut dyn BufRead, source: Source) -> Result<Input> {
    let mut tracked = Tracked::new(reader);
    let document = Document {
        position: tracked.position(),
        context: Context::default(),
        recorder: Recorder::new(path),
    };
    let mut de = serde_json::Deserializer::from_reader(&mut tracked);
    let read = de
        .deserialize_map(document)
        .and_then(|document| de.end().map(|()| document));
    drop(de);
    let document = read.map_err(|e| tracked.error(path, EXPECTED, e))?;
    if document.recorder.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no google/benchmark results in `benchmarks`"
        )));
    }
    Ok(document.context.into_input(document.recorder, source))
}

const EXPECTED: &str = "a google/benchmark JSON document ({\"context\", \"benchmarks\": [...]})";

/// The document as it is read: the context kept, every row handed to the recorder as it
/// comes (never the whole array at once), other fields skipped.
struct Document {
    position: Rc<Position>,
    context: Context,
    recorder: Recorder,
}

impl<'de> Visitor<'de> for Document {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object with `context` and `benchmarks`")
    }

    fn visit_map<A: MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> std::result::Result<Document, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "context" => self.context = read_context(&map.next_value()?),
                "benchmarks" => map.next_value_seed(Rows(&mut self))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(self)
    }
}

/// The `benchmarks` array, row by row.
struct Rows<'a>(&'a mut Document);

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> std::result::Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of benchmark rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let Document {
            position, recorder, ..
        } = self.0;
        while let Some(value) = seq.next_element::<Value>()? {
            // The document is depth 0, `benchmarks` 1, a row 2.
            let line = position.started_at(2);
            match value {
                Value::Object(fields) => match row(line, &fields) {
                    Ok(row) => recorder.add(row),
                    Err(why) => recorder.skip(line, format!("{why}; row skipped")),
                },
                _ => recorder.skip(line, "a row that is not an object; skipped".into()),
            }
        }
        Ok(())
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

/// Field `key` of row `name` as a number of at least `min` (times are never negative; a
/// user counter may be); `None` when absent.
fn field(
    f: &Map<String, Value>,
    name: &str,
    key: &str,
    min: f64,
) -> std::result::Result<Option<f64>, String> {
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
}

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
    let value = |key: &str, min: f64| field(f, name, key, min);
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
    fn rows_are_named_by_the_line_they_start_on() {
        let text = "{\"context\": {\"num_cpus\": 2, \"note\": \"{[\"},\n\"benchmarks\": [\n\
                    {\"name\": \"BM_A\", \"iterations\": 1, \"real_time\": 1, \"cpu_time\": 1, \"time_unit\": \"ns\"},\n\
                    {\"name\": \"BM_B\",\n \"iterations\": 1, \"real_time\": -1, \"cpu_time\": 1, \"time_unit\": \"ns\"},\n\
                    7\n]}";
        let source = Source {
            kind: crate::model::SourceKind::File,
            format: "gbench-json".into(),
            path: None,
            command: Vec::new(),
        };
        let input = read_from("g.json", &mut text.as_bytes(), source).unwrap();
        let notes: Vec<String> = input.notes.iter().map(ToString::to_string).collect();
        assert!(
            notes.iter().any(|n| n.starts_with("g.json:4: BM_B")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("g.json:6: a row that is not")),
            "{notes:?}"
        );
    }
}
