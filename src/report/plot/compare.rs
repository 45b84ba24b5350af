//! `latkit compare`: each benchmark's change against the base.

use super::bars::{Bar, horizontal_bars};
use super::*;
use crate::report::{Cell, ChangeVerdict, keys};

/// Each row's change against the base: coloured when significant (vermillion worse, blue
/// better), grey when within noise.
pub(super) fn compare(table: &Table) -> io::Result<Option<(String, String)>> {
    if column(table, keys::CHANGE_POINT).is_some() {
        return Ok(None);
    }
    let base = column(table, &keys::value_of(0));
    let value_of = |cell: &Cell| match cell {
        Cell::Value { value, .. } => Some(*value),
        _ => None,
    };
    let mut bars: Vec<Bar> = Vec::new();
    for row in &table.rows {
        for (i, cell) in row.cells.iter().enumerate() {
            if let Cell::Change(change) = cell
                && let Some(p) = change.percent
                && p.is_finite()
                && row.benchmark != "geomean"
            {
                let c = match change.verdict {
                    ChangeVerdict::Significant | ChangeVerdict::Exact if change.is_worse() => WORSE,
                    ChangeVerdict::Significant | ChangeVerdict::Exact => BETTER,
                    _ => GREY,
                };
                // The new side's 95 % interval, as a change from the base's median.
                let key = &table.columns[i].key;
                let ci = keys::input_of_change(key).and_then(|n| column(table, &keys::ci95_of(n)));
                let interval = interval_in(row, ci);
                let whisker = match (base.and_then(|b| value_of(&row.cells[b])), interval) {
                    (Some(b), Some((lo, hi))) if b != 0.0 => {
                        Some(((lo / b - 1.0) * 100.0, (hi / b - 1.0) * 100.0))
                    }
                    _ => None,
                };
                bars.push((row_label(row), vec![(0.0, p, c)], whisker));
            }
        }
    }
    if bars.is_empty() {
        return Ok(None);
    }
    let title = format!(
        "{}: change against the base",
        table.title.as_deref().unwrap_or("comparison")
    );
    let legend = [
        ("significant, worse", WORSE),
        ("significant, better", BETTER),
        ("~ within noise", GREY),
    ];
    let x_desc = "change from the base median (%), whiskers: the new median's 95% CI";
    horizontal_bars(&title, x_desc, &bars, &legend).map(|svg| Some((title, svg)))
}

/// A row as the table names it: its text cells (`thread0 · p99` in a distribution's
/// comparison, where every row is one benchmark's statistic), else its benchmark.
fn row_label(row: &crate::report::Row) -> String {
    let texts: Vec<&str> = row
        .cells
        .iter()
        .filter_map(|c| match c {
            Cell::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match texts.is_empty() {
        true => row.benchmark.clone(),
        false => texts.join(" · "),
    }
}
