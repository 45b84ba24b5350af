//! google/benchmark's JSON (`json_schema_version` 1, as 1.6–1.9 write it): a `context` object
//! and a `benchmarks` array of rows.

use super::{Context, Problem, Recorder, Row, RowKind, cache_size};
use crate::error::{Error, Result};
use crate::ingest::json_split::{Layout, part_refused, split_rows};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::Source;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io::BufRead;

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

/// A google/benchmark JSON document, streamed, as the run it describes: the context kept,
/// every row handed to the recorder as it comes (never the whole array at once), other fields
/// skipped.
pub fn read_from(path: &str, reader: &mut dyn BufRead, source: Source) -> Result<Input> {
    let mut context = Context::default();
    let mut recorder = Recorder::new(path);
    split_rows(
        path,
        reader,
        Layout {
            rows: "benchmarks",
            keep: &["context"],
            streamed: &[],
            expected: EXPECTED,
        },
        |line, _, value| {
            let fields = serde_json::from_slice(value).map_err(|e| refused(path, line, e))?;
            context = read_context(&fields);
            Ok(())
        },
        |line, _, bytes| parse_row(path, line, bytes),
        |read| match read {
            (line, Err(why)) => recorder.skip(line, why),
            (_, Ok(row)) => recorder.add(row),
        },
    )?;
    if recorder.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no google/benchmark results in `benchmarks`"
        )));
    }
    Ok(context.into_input(recorder, source))
}

/// One element of `benchmarks`: a row, or why it is skipped (with its line); `Err` when it is
/// not JSON at all.
fn parse_row(
    path: &str,
    line: u64,
    bytes: &[u8],
) -> Result<(u64, std::result::Result<Row, String>)> {
    if bytes.first() != Some(&b'{') {
        serde_json::from_slice::<IgnoredAny>(bytes).map_err(|e| refused(path, line, e))?;
        return Ok((line, Err("a row that is not an object; skipped".into())));
    }
    let fields: Fields = serde_json::from_slice(bytes).map_err(|e| refused(path, line, e))?;
    Ok((
        line,
        row(line, &fields).map_err(|why| format!("{why}; row skipped")),
    ))
}

const EXPECTED: &str = "a google/benchmark JSON document ({\"context\", \"benchmarks\": [...]})";

/// A part of the document that does not parse, named by its line in the file (`line`: where
/// the part starts).
fn refused(path: &str, line: u64, e: serde_json::Error) -> Error {
    part_refused(path, line, EXPECTED, &e)
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

const TIME_UNITS: &[&str] = &["ns", "us", "ms", "s"];

/// A row's fields in order, each value as its JSON text: the row is parsed (and checked)
/// once, and only the fields read are decoded, without a map or a copy of each.
struct Fields<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a benchmark row (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Fields<'de>, A::Error> {
                let mut pairs = Vec::with_capacity(24);
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                Ok(Fields(pairs))
            }
        }
        de.deserialize_map(Pairs)
    }
}

impl<'a> Fields<'a> {
    /// The value of `key` (the last, when a row repeats a key, as a JSON map keeps it).
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    fn text(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key)
            .and_then(|v| serde_json::from_str(v.get()).ok())
    }

    fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| v.get() == "true")
    }

    /// Field `key` of row `name` as a number of at least `min` (times are never negative; a
    /// user counter may be); `None` when absent.
    fn number(&self, name: &str, key: &str, min: f64) -> std::result::Result<Option<f64>, String> {
        self.get(key).map(|v| number(v, name, key, min)).transpose()
    }
}

fn number(v: &RawValue, name: &str, key: &str, min: f64) -> std::result::Result<f64, String> {
    serde_json::from_str::<f64>(v.get())
        .ok()
        .filter(|x| x.is_finite() && *x >= min)
        .ok_or_else(|| {
            let expected = if min == 0.0 {
                "a non-negative number"
            } else {
                "a finite number"
            };
            format!("{name}: `{key}` is {}, not {expected}", v.get())
        })
}

fn row(line: u64, f: &Fields) -> std::result::Result<Row, String> {
    let name = f.text("name").ok_or("no `name`")?;
    let run_name = f.text("run_name").unwrap_or_else(|| name.clone());
    let kind = match (f.text("run_type").as_deref(), f.text("aggregate_name")) {
        (Some("aggregate"), Some(statistic)) => match statistic.as_ref() {
            "BigO" => RowKind::BigO(f.text("big_o").as_deref().unwrap_or("f(N)").into()),
            "RMS" => RowKind::Rms,
            _ => RowKind::Aggregate(statistic.into_owned()),
        },
        // Before `aggregate_name` existed, google/benchmark marked repetitions `aggregate`
        // too; compare.py reads them as repetitions, and so does latkit.
        _ => RowKind::Iteration,
    };
    let mut row = Row::new(line, &run_name, kind);
    row.name = name.to_string();
    row.percentage = f.text("aggregate_unit").as_deref() == Some("percentage");
    row.label = f
        .text("label")
        .filter(|l| !l.is_empty())
        .map(Cow::into_owned);
    if f.flag("error_occurred") {
        let message = f.text("error_message").unwrap_or_default();
        row.problem = Some(Problem::Error(message.into_owned()));
        return Ok(row);
    }
    if f.flag("skipped") {
        let message = f.text("skip_message").unwrap_or_default();
        row.problem = Some(Problem::Skipped(message.into_owned()));
        return Ok(row);
    }
    let figure = |key: &str| f.number(&name, key, 0.0);
    row.time_unit = f.text("time_unit").as_deref().unwrap_or("ns").to_string();
    if !TIME_UNITS.contains(&row.time_unit.as_str()) {
        return Err(format!(
            "{name}: time_unit `{}` is not one of ns, us, ms, s",
            row.time_unit
        ));
    }
    match &row.kind {
        RowKind::BigO(_) => {
            row.real_time = figure("real_coefficient")?;
            row.cpu_time = figure("cpu_coefficient")?;
        }
        // The JSON keeps only the fit of the CPU times (the console shows both).
        RowKind::Rms => {
            row.real_time = None;
            row.cpu_time = figure("rms")?;
        }
        RowKind::Iteration | RowKind::Aggregate(_) => {
            row.real_time =
                Some(figure("real_time")?.ok_or_else(|| format!("{name}: no `real_time`"))?);
            row.cpu_time = figure("cpu_time")?;
            row.iterations = match f.get("iterations") {
                None => None,
                Some(v) => Some(
                    serde_json::from_str::<u64>(v.get())
                        .map_err(|_| format!("{name}: `iterations` is {}, not a count", v.get()))?,
                ),
            };
        }
    }
    // Every other field is a counter (the last of a repeated key), in the order of the names:
    // sorted (stably, so a repeated key's last stays last), not searched, so that a row of
    // many fields costs n log n.
    let mut others: Vec<&(Cow<str>, &RawValue)> = f.0.iter().filter(|(k, _)| !known(k)).collect();
    others.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (key, v)) in others.iter().map(|p| (&p.0, p.1)).enumerate() {
        if others.get(i + 1).is_some_and(|next| next.0 == *key) {
            continue;
        }
        row.counters
            .push((key.to_string(), number(v, &name, key, f64::MIN)?));
    }
    Ok(row)
}

/// Fields every row has, and those that say what it is; everything else numeric is a counter.
fn known(key: &str) -> bool {
    matches!(
        key,
        "name"
            | "family_index"
            | "per_family_instance_index"
            | "run_name"
            | "run_type"
            | "repetitions"
            | "repetition_index"
            | "threads"
            | "iterations"
            | "real_time"
            | "cpu_time"
            | "time_unit"
            | "aggregate_name"
            | "aggregate_unit"
            | "label"
            | "error_occurred"
            | "error_message"
            | "skipped"
            | "skip_message"
            | "big_o"
            | "cpu_coefficient"
            | "real_coefficient"
            | "rms"
    )
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
        let source = Source::unnamed_file("gbench-json");
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

    #[test]
    fn counters_are_in_name_order_and_a_repeated_key_keeps_its_last_value() {
        let text = br#"{"name": "BM_A", "real_time": 1, "time_unit": "ns", "zeta": 1,
            "alpha": "not a number, but repeated", "mid": 2, "alpha": 3, "zeta": 4}"#;
        let fields: Fields = serde_json::from_slice(text).unwrap();
        let counters = row(1, &fields).unwrap().counters;
        let expected = [("alpha", 3.0), ("mid", 2.0), ("zeta", 4.0)];
        let expected: Vec<(String, f64)> =
            expected.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(counters, expected);
        // The last of a key is the one judged.
        let text = br#"{"name": "BM_A", "real_time": 1, "x": 1, "x": "two"}"#;
        let fields: Fields = serde_json::from_slice(text).unwrap();
        let err = row(1, &fields).unwrap_err();
        assert!(err.contains("`x` is \"two\""), "{err}");
    }
}
