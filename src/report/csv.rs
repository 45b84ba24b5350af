//! CSV: one header row (the union of every table's columns), one row per table row, numbers
//! in the harness's units at full precision; notes follow as `#` comment lines.

use super::{Cell, Column, Reader, Reporter, note_lines};
use crate::analyze::Report;
use crate::analyze::view::Row;
use crate::model::format_exact;
use rayon::prelude::*;
use std::io::{self, Write};

pub struct Csv;

/// Rows one core writes at a time.
const ROWS_PER_PIECE: usize = 2048;

/// Pieces written side by side before they are joined: what waits in memory at a time.
const PIECES_PER_BATCH: usize = 16;

/// A field quoted where CSV needs it; control characters (from benchmark names) are shown as
/// symbols, since CSV is read on terminals too. A field a spreadsheet would take for a
/// formula (`=`, `+`, `-` or `@` first, and no number) is written as text, as OWASP's CSV
/// rule says: a `'` before it, and quoted.
pub(super) fn quote(field: &str) -> String {
    let field = crate::error::visible(field);
    let formula = field.starts_with(['=', '+', '-', '@'])
        && field.len() > 1
        && field.trim().parse::<f64>().is_err();
    if formula {
        format!("\"'{}\"", field.replace('"', "\"\""))
    } else if field.contains([',', '"']) {
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
            let start = format!("{title},{cycle}");
            let line = |row: &Row, text: &mut Vec<u8>| {
                text.extend_from_slice(start.as_bytes());
                for at in &placed {
                    text.push(b',');
                    if let Some(i) = at {
                        let cell = quote(&value(&row.cells[*i], &table.columns[*i]));
                        text.extend_from_slice(cell.as_bytes());
                    }
                }
                text.push(b'\n');
            };
            let piece = |rows: &[Row]| {
                let mut text = Vec::with_capacity(rows.len() * 64);
                rows.iter().for_each(|row| line(row, &mut text));
                text
            };
            // A table of one piece is written here: starting the cores' threads would cost more.
            if table.rows.len() <= ROWS_PER_PIECE {
                out.write_all(&piece(&table.rows))?;
                continue;
            }
            // Lines are written on every core, a batch at a time, and joined in order: a table
            // can have 100,000s of rows, and the batch bounds what waits in memory.
            for batch in table.rows.chunks(ROWS_PER_PIECE * PIECES_PER_BATCH) {
                let pieces: Vec<Vec<u8>> = batch.par_chunks(ROWS_PER_PIECE).map(piece).collect();
                pieces.iter().try_for_each(|piece| out.write_all(piece))?;
            }
        }
        for note in note_lines(report, &reader) {
            writeln!(out, "# {}", note.replace('\n', " "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::view::{Table, keys};

    /// Rows written on every core, in batches, come out in the table's order, each once.
    #[test]
    fn a_field_a_spreadsheet_would_run_is_written_as_text() {
        assert_eq!(quote("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(quote("@SUM(A1)"), "\"'@SUM(A1)\"");
        assert_eq!(quote("+cmd|' /C calc'!A0"), "\"'+cmd|' /C calc'!A0\"");
        // Numbers, and a lone dash, stay as they are.
        assert_eq!(quote("-5.25"), "-5.25");
        assert_eq!(quote("+1e3"), "+1e3");
        assert_eq!(quote("-"), "-");
        assert_eq!(quote("BenchmarkA/n=1"), "BenchmarkA/n=1");
    }

    #[test]
    fn lines_written_on_every_core_keep_the_rows_order() {
        let rows = ROWS_PER_PIECE * PIECES_PER_BATCH * 2 + 7;
        let table = Table {
            title: Some("ns/op".into()),
            run: 0,
            cycle: None,
            columns: vec![
                Column::new("Benchmark", keys::BENCHMARK),
                Column::new("Runs", keys::RUNS),
            ],
            rows: (0..rows)
                .map(|i| Row {
                    benchmark: format!("B{i}"),
                    cells: vec![
                        Cell::Text {
                            text: format!("B{i}"),
                        },
                        Cell::Count { count: i as u64 },
                    ],
                })
                .collect(),
        };
        let report = Report {
            generated: None,
            runs: Vec::new(),
            tables: vec![table],
            notes: Vec::new(),
            verdict: None,
        };
        let mut out = Vec::new();
        Csv.render(&report, Reader::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("table,cycle,Benchmark,Runs"));
        let expected = (0..rows).map(|i| format!("ns/op,,B{i},{i}"));
        assert!(lines.map(str::to_string).eq(expected));
    }
}
