//! Sinks: one file per output format behind one small trait. Every sink reads only a
//! [`Report`]: the runs (the model) plus the derived tables and notes.

mod bench;
mod csv;
pub mod gate;
pub mod hgrm;
mod json;
mod markdown;
pub mod sink;
mod terminal;
pub mod xenomai;

use crate::model::{Note, Unit, format_exact};
use std::io::{self, Write};

pub use crate::analyze::view::{Cell, Column, Report, Row, Table};

impl Column {
    /// The header with its unit, for formats that print numbers raw.
    fn header_with_unit(&self) -> String {
        match &self.unit {
            Some(unit) => format!("{} ({unit})", self.header),
            None => self.header.clone(),
        }
    }
}

impl Cell {
    /// The cell as text for formats that print numbers as the harness wrote them.
    fn plain(&self) -> String {
        match self {
            Cell::Text { text } => text.clone(),
            Cell::Count { count } => count.to_string(),
            Cell::Value {
                value, source_unit, ..
            } => format_exact(value / Unit::parse(source_unit).to_base),
            Cell::Spread {
                relative_percent, ..
            } => relative_percent.map_or_else(|| "—".to_string(), |p| format!("±{p:.2}%")),
            Cell::Percent { percent } => format!("{percent:.2}"),
            Cell::Empty => String::new(),
        }
    }

    fn is_text(&self) -> bool {
        matches!(self, Cell::Text { .. })
    }
}

/// An output format.
pub trait Reporter {
    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned terminal table with scaled units.
    Table,
    /// GitHub-flavoured markdown, numbers right-aligned and as the harness wrote them.
    Markdown,
    /// The full model, derived tables and notes (schema in docs/json-schema.md).
    Json,
    /// One CSV row per table row, with a header row.
    Csv,
    /// Xenomai `latency` text (timer results only).
    Xenomai,
    /// `BENCH name: key=value<unit>` lines.
    Bench,
}

pub fn reporter(format: OutputFormat) -> Box<dyn Reporter> {
    match format {
        OutputFormat::Table => Box::new(terminal::Terminal),
        OutputFormat::Markdown => Box::new(markdown::Markdown),
        OutputFormat::Json => Box::new(json::Json),
        OutputFormat::Csv => Box::new(csv::Csv),
        OutputFormat::Xenomai => Box::new(xenomai::Xenomai {
            live_part_done: false,
            buckets: true,
        }),
        OutputFormat::Bench => Box::new(bench::Bench),
    }
}

/// Notes as `level: text` lines, shared by the text formats.
fn note_lines(notes: &[Note]) -> impl Iterator<Item = String> + '_ {
    notes.iter().map(|n| {
        let level = match n.level {
            crate::model::Level::Info => "note",
            crate::model::Level::Warning => "warning",
        };
        format!("{level}: {n}")
    })
}
