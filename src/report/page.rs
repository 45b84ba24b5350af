//! The performance page as GitHub markdown, for a wiki or a docs folder.

use super::markdown::escape;
use crate::analyze::page::Page;
use std::io::{self, Write};

/// A titled table of three columns.
pub type Section<'a> = (&'a str, [&'a str; 3], &'a [[String; 3]]);

/// The page's tables, in order, whatever the format.
pub fn sections(page: &Page) -> [Section<'_>; 2] {
    [
        ("At a glance", ["Task", "Number", "Notes"], &page.glance),
        ("Health check", ["Area", "Verdict", "Why"], &page.health),
    ]
}

pub fn markdown(page: &Page, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# {}", escape(&page.title))?;
    for (title, headers, rows) in sections(page) {
        if rows.is_empty() {
            continue;
        }
        writeln!(out, "\n## {title}\n")?;
        writeln!(out, "| {} |\n|---|---|---|", headers.join(" | "))?;
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
    }
    writeln!(out, "\n## Environment\n")?;
    writeln!(out, "| | |\n|---|---|")?;
    for (key, value) in &page.environment {
        writeln!(out, "| {key} | {} |", escape(value))?;
    }
    if !page.caveats.is_empty() {
        writeln!(out, "\n## Caveats\n")?;
        for caveat in &page.caveats {
            writeln!(out, "- {caveat}")?;
        }
    }
    Ok(())
}
