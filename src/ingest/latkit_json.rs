//! latkit's own JSON (`--format json`): its runs come back as they were written, after the same
//! checks every other input gets.

use super::{Input, InputFormat, Named, read_json_document, validate};
use crate::error::{Error, Result};
use crate::model::{JSON_SCHEMA, MetricKind, Note, Run, vocab};
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use std::io::BufRead;

pub struct LatkitJson;

impl InputFormat for LatkitJson {
    fn name(&self) -> &'static str {
        "latkit"
    }

    fn describe(&self) -> &'static str {
        "latkit's own JSON, `latkit parse --format json`"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{') && head.contains("\"latkit.result.")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        read_latkit_json(input.path, reader)
    }
}

/// latkit's own JSON: its runs come back as they were written (summaries are derived again),
/// after the same checks every other input gets. Read as it streams, into runs directly: a
/// document of a million benchmarks never becomes a tree of JSON values first.
fn read_latkit_json(path: &str, reader: &mut dyn BufRead) -> Result<Input> {
    let doc: Document = read_json_document(path, reader, "a latkit JSON result")?;
    let Some(schema) = doc.schema else {
        return Err(Error::Input(format!(
            "{path}: not a latkit JSON result: no `schema`"
        )));
    };
    let v1 = schema == SCHEMA_V1;
    if schema != JSON_SCHEMA && !v1 {
        return Err(Error::Input(format!(
            "{path}: schema `{schema}` is not `{JSON_SCHEMA}` (or `{SCHEMA_V1}`), which this latkit reads"
        )));
    }
    let mut runs = doc.runs;
    for run in &mut runs {
        if v1 {
            migrate_v1(run);
        }
        validate::run(run).map_err(|e| Error::Input(format!("{path}: {e}")))?;
        run.infer_missing_peer_metrics();
    }
    let mut notes = doc.notes;
    if v1 {
        notes.push(Note::info(format!(
            "{path}: a {SCHEMA_V1} document, read as {JSON_SCHEMA}: timer per-interval \
             figures are series again; it has no tool's own overall summary, so timer \
             minimum, average and maximum come from the distribution"
        )));
    }
    Ok(Input {
        runs,
        notes,
        malformed: 0,
    })
}

/// What a latkit JSON result holds for reading back; its other fields (the report's tables,
/// the version that wrote it) are passed over.
struct Document {
    schema: Option<String>,
    runs: Vec<Run>,
    /// What the reader of these numbers must know (how a tool's figures were read): kept, so
    /// that a report read back says what the first one said.
    notes: Vec<Note>,
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_map(DocumentFields)
    }
}

struct DocumentFields;

impl<'de> Visitor<'de> for DocumentFields {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object with `schema` and `runs`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Document, A::Error> {
        let mut doc = Document {
            schema: None,
            runs: Vec::new(),
            notes: Vec::new(),
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema" => doc.schema = Some(map.next_value()?),
                // A schema named first and not one this latkit reads: its runs may not have
                // the shape of ours, so they are passed over and the schema is what is refused.
                "runs"
                    if doc
                        .schema
                        .as_deref()
                        .is_some_and(|s| s != JSON_SCHEMA && s != SCHEMA_V1) =>
                {
                    map.next_value::<IgnoredAny>()?;
                }
                "runs" => doc.runs = map.next_value()?,
                "notes" => doc.notes = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(doc)
    }
}

/// The first schema, which stored a timer's per-interval figures as repetitions.
const SCHEMA_V1: &str = "latkit.result.v1";

/// A v1 run as v2 has it: metrics with a timer series' name, in a timer run, are series (v1
/// had no `kind`, so they read as repetitions, one "repetition" per interval).
fn migrate_v1(run: &mut Run) {
    if run.timer.is_none() {
        return;
    }
    const SERIES: [&str; 5] = [
        vocab::INTERVAL_MIN,
        vocab::INTERVAL_AVG,
        vocab::INTERVAL_MAX,
        vocab::OVERRUNS,
        vocab::MODE_SWITCHES,
    ];
    for metric in run
        .benchmarks
        .iter_mut()
        .flat_map(|b| b.metrics.iter_mut())
        .filter(|m| SERIES.contains(&m.name.as_str()))
    {
        metric.kind = MetricKind::Series;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match read_latkit_json("doc.json", &mut text.as_bytes()) {
            Ok(_) => panic!("read: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_schema_named_first_is_refused_before_runs_of_another_shape() {
        let newer = r#"{"schema": "latkit.result.v9", "runs": [{"shape": "new"}], "notes": []}"#;
        let err = refusal(newer);
        assert!(
            err.contains("schema `latkit.result.v9` is not `latkit.result.v2`"),
            "{err}"
        );
        let unnamed = r#"{"runs": []}"#;
        let err = refusal(unnamed);
        assert!(err.contains("no `schema`"), "{err}");
    }
}
