//! GitHub-flavoured markdown: numbers right-aligned, written as the harness wrote them, and
//! latkit's own seconds and bytes in the unit that suits each column, as hyperfine's markdown.

use super::{Cell, Reader, Reporter, Table, note_lines};
use crate::analyze::Report;
use crate::model::Unit;
use std::io::{self, Write};

pub struct Markdown;

/// A table cell's text with its `|` escaped, control characters shown as symbols, a `<`
/// that would open an HTML tag or an autolink (`<script>`, `<http://…>`) written as `&lt;`
/// (`< 5 ms` stays as it is), and what would open a link, an image or a code span (`[`, `]`,
/// `` ` ``, and `\` itself) escaped: a benchmark name from a repository's `go test` output
/// rendered as an image fetched when the page was viewed.
pub fn escape(text: &str) -> String {
    escaped(text, true)
}

/// A note's text, escaped as [`escape`] does except its backticks, which are latkit's own code
/// spans (`--fail-on`): with `[` and `]` escaped, nothing in one opens a link or an image.
pub fn escape_prose(text: &str) -> String {
    escaped(text, false)
}

fn escaped(text: &str, ticks: bool) -> String {
    let text = crate::error::visible(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' if !ticks => out.push(c),
            '|' | '[' | ']' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
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

/// `text` as a code span: fenced by one backtick more than its longest run of them (a
/// backtick in a command closed a one-backtick span), with `|` escaped (GFM splits a table's
/// cells first), control characters shown as symbols, and a space inside the fence where the
/// text starts or ends with a backtick, as CommonMark asks.
pub fn code(text: &str) -> String {
    let text = crate::error::visible(text).replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = match text.starts_with('`') || text.ends_with('`') {
        true => " ",
        false => "",
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `table` with each column in plain seconds or bytes (what latkit and hyperfine record)
/// rescaled to the unit in which its smallest value reads 1 or more: `time (ms)` with
/// `11.76`, not `time (s)` with `0.01176`. Units a harness chose are kept.
fn readable(table: &Table) -> Table {
    let mut table = table.clone();
    for (i, column) in table.columns.iter_mut().enumerate() {
        let Some(unit) = column.unit.as_deref().filter(|u| matches!(*u, "s" | "B")) else {
            continue;
        };
        let smallest = table
            .rows
            .iter()
            .filter_map(|row| match &row.cells[i] {
                Cell::Value {
                    value, source_unit, ..
                } if source_unit == unit && *value > 0.0 => Some(*value),
                _ => None,
            })
            .fold(f64::INFINITY, f64::min);
        if !smallest.is_finite() {
            continue;
        }
        let (_, symbol) = Unit::parse(unit).unit.scale(smallest);
        for row in &mut table.rows {
            if let Cell::Value { source_unit, .. } = &mut row.cells[i]
                && source_unit == unit
            {
                *source_unit = symbol.clone();
            }
        }
        column.unit = Some(symbol);
    }
    table
}

fn write_table(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let table = &readable(table);
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
            for line in note_lines(report, &reader) {
                writeln!(out, "- {}", escape_prose(&line))?;
            }
        }
        Ok(())
    }
}
