//! Sinks: one file per output format behind one small trait. Every sink reads only a
//! [`Report`]: the runs (the model) plus the derived tables and notes.

mod bench;
mod csv;
pub mod gate;
pub mod hgrm;
mod json;
mod markdown;
mod terminal;
pub mod xenomai;

use crate::analyze::stats::Interval;
use crate::model::{Note, Run, Unit, format_exact};
use serde::Serialize;
use std::io::{self, Write};

/// Runs and what analysis derived from them.
pub struct Report {
    pub runs: Vec<Run>,
    pub tables: Vec<Table>,
    pub notes: Vec<Note>,
}

/// A derived table: one row per benchmark, columns chosen by analysis.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Index of the run in [`Report::runs`].
    pub run: usize,
    /// Repetition number (1-based) for per-run tables; absent for tables of medians.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<usize>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub header: String,
    /// Stable machine name: `benchmark`, `count`, the metric name, `ci95`, `pct_of_baseline`,
    /// `share_part`, `share_rest`.
    pub key: String,
    /// The unit of the column's numbers where formats print them raw (markdown, CSV); the
    /// terminal table scales every cell and prints its unit there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl Column {
    /// The header with its unit, for formats that print numbers raw.
    fn header_with_unit(&self) -> String {
        match &self.unit {
            Some(unit) => format!("{} ({unit})", self.header),
            None => self.header.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The benchmark's full name as the harness printed it.
    pub benchmark: String,
    pub cells: Vec<Cell>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Cell {
    Text {
        text: String,
    },
    Count {
        count: u64,
    },
    /// A measured value in its unit's base unit; `source_unit` is how the harness wrote it.
    Value {
        value: f64,
        unit: Unit,
        source_unit: String,
    },
    /// Spread of the median: the interval when there are enough samples for one.
    Spread {
        n: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        interval: Option<Interval>,
        #[serde(skip_serializing_if = "Option::is_none")]
        relative_percent: Option<f64>,
    },
    Percent {
        percent: f64,
    },
    Empty,
}

impl Cell {
    /// A value of `metric`, given in its base unit.
    pub fn value_of(value: f64, metric: &crate::model::Metric) -> Cell {
        Cell::Value {
            value,
            unit: metric.unit.clone(),
            source_unit: metric.source_unit.clone(),
        }
    }

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
