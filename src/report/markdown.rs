//! GitHub-flavoured markdown: numbers right-aligned, written as the harness wrote them.

use super::{Reader, Reporter, Table, note_lines};
use crate::analyze::Report;
use std::io::{self, Write};

pub struct Markdown;

/// A table cell's text with its `|` escaped, control characters shown as symbols, and a `<`
/// that would open an HTML tag (`<script>`) written as `&lt;` (`< 5 ms` stays as it is).
pub fn escape(text: &str) -> String {
    let text = crate::error::visible(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => out.push_str("\\|"),
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) =>
            {
                out.push_str("&lt;")
            }
            c => out.push(c),
        }
    }
    out
}

fn write_table(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    if let Some(title) = &table.title {
        writeln!(out, "### {}\n", escape(title))?;
    }
    let headers: Vec<String> = table
        .columns
        .iter()
        .map(|c| escape(&c.header_with_unit()))
        .collect();
    writeln!(out, "| {} |", headers.join(" | "))?;
    // Align by what the first row holds: text left, numbers right.
    let first = table.rows.first();
    let rule: Vec<&str> = (0..table.columns.len())
        .map(|i| match first.map(|r| r.cells[i].is_text()) {
            Some(false) => "---:",
            _ => "---",
        })
        .collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in &table.rows {
        let cells: Vec<String> = row
            .cells
            .iter()
            .zip(&table.columns)
            .map(|(cell, column)| escape(&cell.plain_under(column)))
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

impl Reporter for Markdown {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        for (i, table) in report.tables.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write_table(table, out)?;
        }
        if !report.notes.is_empty() {
            writeln!(out)?;
            for line in note_lines(&report.notes, reader) {
                writeln!(out, "- {}", escape(&line))?;
            }
        }
        Ok(())
    }
}
