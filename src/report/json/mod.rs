//! JSON: the model (every value and its summary), the derived tables and the notes.
//! The schema is documented in docs/json-schema.md; bump [`JSON_SCHEMA`] on breaking changes.

use super::{Reader, Reporter, Table};
use crate::analyze::Report;
use crate::analyze::gate::Verdict;
use crate::model::{Note, Run, timestamp};
use serde::Serialize;
use std::io::{self, Write};

use crate::model::JSON_SCHEMA;

mod benchmarks;

pub struct Json;

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    latkit_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    generated: Option<String>,
    runs: &'a [Run],
    tables: &'a [Table],
    notes: Vec<&'a Note>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<&'a Verdict>,
}

impl Reporter for Json {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        let shells: Vec<Run> = report.runs.iter().map(Run::without_benchmarks).collect();
        let document = Document {
            schema: JSON_SCHEMA,
            latkit_version: env!("CARGO_PKG_VERSION"),
            generated: report.generated.map(timestamp),
            runs: &shells,
            tables: &report.tables,
            notes: report.notes_once(),
            verdict: report.verdict.as_ref(),
        };
        let shell = serde_json::to_vec_pretty(&document)?;
        benchmarks::write_filled(&shell, &report.runs, out)?;
        writeln!(out)
    }
}
