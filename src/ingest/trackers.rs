//! What benchmark-tracking services ingest, read back: Bencher Metric Format
//! (`{benchmark: {measure: {value, lower_value, upper_value}}}`) and github-action-benchmark's
//! custom JSON (`[{name, unit, value, range, extra}]`).

use crate::error::{Error, Result};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::{BenchName, Better, Dimension, Environment, Note, RunBuilder, Unit, new_run};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::io::BufRead;

fn finished(
    path: &str,
    named: &Named,
    format: &dyn InputFormat,
    builder: RunBuilder,
    note: &str,
) -> Result<Input> {
    if builder.is_empty() {
        return Err(Error::Input(format!("{path}: no benchmarks in it")));
    }
    let run = new_run(
        named.source(format),
        Environment::default(),
        Vec::new(),
        builder,
    );
    Ok(Input {
        runs: vec![run],
        notes: vec![Note::info(note)],
        malformed: 0,
    })
}

/// A figure in `unit`: a finite number, and not negative when it is a time.
fn figure(path: &str, what: &str, value: &Value, unit: &str) -> Result<f64> {
    let v = value
        .as_f64()
        .filter(|v| v.is_finite())
        .ok_or_else(|| Error::Input(format!("{path}: {what}: `{value}` is not a finite number")))?;
    if v < 0.0 && Unit::parse(unit).unit.dimension == Dimension::Time {
        return Err(Error::Input(format!(
            "{path}: {what}: `{value}` is a negative time, which a benchmark cannot take"
        )));
    }
    Ok(v)
}

pub struct Bmf;

impl InputFormat for Bmf {
    fn name(&self) -> &'static str {
        "bmf"
    }

    fn describe(&self) -> &'static str {
        "Bencher Metric Format JSON (`{\"bench\": {\"latency\": {\"value\": 1.0}}}`)"
    }

    fn detect(&self, head: &str) -> bool {
        let head = head.trim_start();
        head.starts_with('{')
            && head.contains("\"value\"")
            && !head.contains("\"results\"")
            && !head.contains("\"runs\"")
            && !head.contains("\"context\"")
            && !head.contains("\"thread\"")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let expected = "Bencher Metric Format: {\"benchmark\": {\"measure\": {\"value\": N}}}";
        let doc: Map<String, Value> = super::read_json_document(path, reader, expected)?;
        let mut builder = RunBuilder::default();
        for (name, measures) in &doc {
            let Value::Object(measures) = measures else {
                return Err(Error::Input(format!(
                    "{path}: `{name}`: expected {expected}"
                )));
            };
            let bench = builder.benchmark(name, None, BenchName::plain);
            // Latency first: the figure reports show by default.
            let mut ordered: Vec<(&String, &Value)> = measures.iter().collect();
            ordered.sort_by_key(|(measure, _)| !measure.starts_with("latency"));
            for (measure, figures) in ordered {
                let unit = measure_unit(measure);
                let what = format!("`{name}` {measure}");
                let value = figures
                    .get("value")
                    .ok_or_else(|| Error::Input(format!("{path}: {what}: no `value`")))?;
                builder
                    .record_checked(bench, measure, unit, figure(path, &what, value, unit)?)
                    .map_err(|e| Error::Input(format!("{path}: {what}: {e}")))?;
                for bound in ["lower_value", "upper_value"] {
                    if let Some(v) = figures.get(bound) {
                        let metric = format!("{measure} {}", &bound[..5]);
                        builder
                            .record_checked(bench, &metric, unit, figure(path, &what, v, unit)?)
                            .map_err(|e| Error::Input(format!("{path}: {what}: {e}")))?;
                    }
                }
            }
        }
        finished(
            path,
            input,
            self,
            builder,
            "Bencher Metric Format: `latency*` measures read as ns, `throughput*` as operations/s (higher is better), `build-time` as s, `file-size` as bytes, the others as plain numbers where lower is better (BMF carries no units: --better MEASURE=higher says otherwise); bounds as `<measure> lower` / `upper`",
        )
    }
}

/// The unit of a measure, from Bencher's built-in measures (BMF itself carries no units):
/// latency in ns, throughput in operations per second, build time in s, file size in bytes.
fn measure_unit(measure: &str) -> &'static str {
    match measure {
        m if m.starts_with("latency") => "ns",
        m if m.starts_with("throughput") => "ops/s",
        "build-time" => "s",
        "file-size" => "B",
        _ => "",
    }
}

/// github-action-benchmark's `customSmallerIsBetter` JSON (auto-detected).
pub struct Gab;

/// github-action-benchmark's `customBiggerIsBetter` JSON: the same shape, every figure higher
/// is better; the file cannot say which it is, so this is chosen by name.
pub struct GabBigger;

#[derive(Deserialize)]
struct GabEntry {
    name: String,
    unit: String,
    value: Value,
}

impl InputFormat for Gab {
    fn name(&self) -> &'static str {
        "gab"
    }

    fn describe(&self) -> &'static str {
        "github-action-benchmark custom JSON (`[{\"name\", \"unit\", \"value\"}]`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('[')
            && head.contains("\"name\"")
            && head.contains("\"unit\"")
            && head.contains("\"value\"")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        read_gab(input, reader, self, None)
    }
}

impl InputFormat for GabBigger {
    fn name(&self) -> &'static str {
        "gab-bigger"
    }

    fn describe(&self) -> &'static str {
        "github-action-benchmark `customBiggerIsBetter` JSON: every figure higher is better"
    }

    fn detect(&self, _head: &str) -> bool {
        false
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        read_gab(input, reader, self, Some(Better::Higher))
    }
}

/// `[{name, unit, value}]`, every figure `better` when the tool says so, else as its unit.
fn read_gab(
    input: &Named,
    reader: &mut dyn BufRead,
    format: &dyn InputFormat,
    better: Option<Better>,
) -> Result<Input> {
    let path = input.path;
    let entries: Vec<GabEntry> = super::read_json_document(
        path,
        reader,
        "github-action-benchmark JSON: [{\"name\", \"unit\", \"value\"}]",
    )?;
    let mut builder = RunBuilder::default();
    for e in &entries {
        let bench = builder.benchmark(&e.name, None, BenchName::plain);
        let what = format!("`{}`", e.name);
        // As Go names metrics, by their unit: `ns/op`, `MB/s`.
        builder
            .record_checked(
                bench,
                &e.unit,
                &e.unit,
                figure(path, &what, &e.value, &e.unit)?,
            )
            .map_err(|err| Error::Input(format!("{path}: {what}: {err}")))?;
    }
    let note = match better {
        Some(better) => {
            for e in &entries {
                builder.set_better(&e.unit, better);
            }
            "github-action-benchmark customBiggerIsBetter JSON: one value per benchmark, named by its unit; higher is better for every figure"
        }
        None => {
            "github-action-benchmark JSON: one value per benchmark, named by its unit; the better direction follows the unit (--input-format gab-bigger reads a customBiggerIsBetter file)"
        }
    };
    finished(path, input, format, builder, note)
}
