//! CSV: one header row (the union of every table's columns), one row per table row, numbers
//! in the harness's units at full precision; notes follow as `#` comment lines.

use super::{Cell, Column, Reader, Reporter, note_lines};
use crate::analyze::Report;
use crate::model::format_exact;
use std::io::{self, Write};

pub struct Csv;

/// A field quoted where CSV needs it; control characters (from benchmark names) are shown as
/// symbols, since CSV is read on terminals too.
pub(super) fn quote(field: &str) -> String {
    let field = crate::error::visible(field);
    if field.contains([',', '"']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

fn value(cell: &Cell, column: &Column) -> String {
    match cell {
        Cell::Spread {
            relative_percent, ..
        } => relative_percent.map(format_exact).unwrap_or_default(),
        Cell::Percent { percent } => format_exact(*percent),
        other => other.plain_under(column),
    }
}

impl Reporter for Csv {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        let mut headers: Vec<String> = Vec::new();
        for column in report.tables.iter().flat_map(|t| &t.columns) {
            let header = column.header_with_unit();
            if !headers.contains(&header) {
                headers.push(header);
            }
        }
        let mut line: Vec<String> = vec!["table".into(), "cycle".into()];
        line.extend(headers.iter().map(|h| quote(h)));
        writeln!(out, "{}", line.join(","))?;
        for table in &report.tables {
            // Each header's column in this table, found once for all its rows (a table may
            // have 100,000, and a header is made anew each time it is asked for).
            let placed: Vec<Option<usize>> = headers
                .iter()
                .map(|h| {
                    table
                        .columns
                        .iter()
                        .position(|c| c.header_with_unit() == *h)
                })
                .collect();
            let title = quote(table.title.as_deref().unwrap_or(""));
            let cycle = table.cycle.map(|c| c.to_string()).unwrap_or_default();
            for row in &table.rows {
                write!(out, "{title},{cycle}")?;
                for at in &placed {
                    match at {
                        Some(i) => write!(
                            out,
                            ",{}",
                            quote(&value(&row.cells[*i], &table.columns[*i]))
                        )?,
                        None => out.write_all(b",")?,
                    }
                }
                writeln!(out)?;
            }
        }
        for note in note_lines(report, &reader) {
            writeln!(out, "# {}", note.replace('\n', " "))?;
        }
        Ok(())
    }
}
