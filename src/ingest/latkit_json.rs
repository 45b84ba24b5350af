//! latkit's own JSON (`--format json`): its runs come back as they were written, after the same
//! checks every other input gets.

use super::{Input, InputFormat, Named, read_json, validate};
use crate::error::{Error, Result};
use crate::model::{JSON_SCHEMA, Run};
use serde::Deserialize;
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
/// after the same checks every other input gets.
fn read_latkit_json(path: &str, reader: &mut dyn BufRead) -> Result<Input> {
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: String,
    }
    #[derive(serde::Deserialize)]
    struct Document {
        runs: Vec<Run>,
    }
    let value = read_json(path, reader)?;
    let not_latkit =
        |e: serde_json::Error| Error::Input(format!("{path}: not a latkit JSON result: {e}"));
    let schema = Schema::deserialize(&value).map_err(not_latkit)?.schema;
    if schema != JSON_SCHEMA {
        return Err(Error::Input(format!(
            "{path}: schema `{schema}` is not `{JSON_SCHEMA}`, which this latkit reads{}",
            if schema == "latkit.result.v1" {
                " (v1 files stored per-second series as timer figures: parse the original tool output again)"
            } else {
                ""
            }
        )));
    }
    let mut doc = Document::deserialize(value).map_err(not_latkit)?;
    for run in &mut doc.runs {
        validate::run(run).map_err(|e| Error::Input(format!("{path}: {e}")))?;
        run.infer_missing_peer_metrics();
    }
    Ok(Input {
        runs: doc.runs,
        notes: Vec::new(),
        malformed: 0,
    })
}
