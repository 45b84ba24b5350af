//! An aligned terminal table with units scaled for reading.

use super::fit::{fit, wrap};
use super::{Reader, Reporter, note_lines};
use crate::analyze::Report;
use crate::error::visible;
use comfy_table::{CellAlignment, ContentArrangement, Table as Grid, presets};
use std::io::{self, Write};

pub struct Terminal;

/// An empty grid in the terminal tables' style, its cells wrapped to fit `width` if given.
pub fn grid(width: Option<usize>) -> Grid {
    let mut grid = Grid::new();
    grid.load_style(presets::UTF8_FULL_CONDENSED);
    match width {
        Some(width) => grid
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX)),
        None => grid.set_content_arrangement(ContentArrangement::Disabled),
    };
    grid
}

impl Reporter for Terminal {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        for (i, table) in report.tables.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            let fitted = fit(table, reader.width);
            // The path the names share heads the table, as `parse` titles its tables.
            let shared = fitted.shared.as_deref().map(|s| s.trim_end_matches('/'));
            let title = match (&table.title, shared) {
                (Some(title), Some(shared)) => Some(format!("{title} · {shared}")),
                (title, shared) => title.clone().or(shared.map(str::to_string)),
            };
            if let Some(title) = &title {
                for line in wrap(&visible(title), reader.width, 2) {
                    writeln!(out, "{line}")?;
                }
            }
            let mut grid = grid(fitted.wrap_to);
            grid.set_header(fitted.columns.iter().map(|c| c.header.as_str()));
            if let (Some(_), Some(names), Some(column)) = (
                fitted.wrap_to,
                fitted.columns.first().filter(|c| !c.figures),
                grid.column_mut(0),
            ) {
                // Wrapping falls on the figures: a name stays one line (its width and padding).
                let whole = u16::try_from(names.width + 2).unwrap_or(u16::MAX);
                column.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                    comfy_table::Width::Fixed(whole),
                ));
            }
            for row in 0..table.rows.len() {
                grid.add_row(fitted.columns.iter().map(|c| {
                    let alignment = match c.figures {
                        true => CellAlignment::Right,
                        false => CellAlignment::Left,
                    };
                    comfy_table::Cell::new(&c.cells[row]).set_alignment(alignment)
                }));
            }
            writeln!(out, "{grid}")?;
            if !fitted.left_out.is_empty() {
                let line = format!(
                    "(left out to fit {} columns: {}; --format markdown shows them all)",
                    reader.width.unwrap_or_default(),
                    fitted.left_out.join(", ")
                );
                for line in wrap(&line, reader.width, 1) {
                    writeln!(out, "{line}")?;
                }
            }
        }
        for note in note_lines(report, &reader) {
            for line in wrap(&note, reader.width, 2) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

/// Bars of a sparkline, lowest to highest.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const SPARK_BINS: usize = 32;

/// One line per distribution: its shape from the smallest value to p99.9 (or p99), counts on a log
/// scale so that the tail shows (`latency  1.485 µs ▁█▃▂▁▁ 9.007 µs (p99.9)`).
pub fn sparklines(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for run in &report.runs {
        for bench in &run.benchmarks {
            for metric in bench.metrics.iter().filter(|m| m.histogram.is_some()) {
                let Some(super::plot::Bins {
                    low,
                    high,
                    end,
                    counts,
                }) = super::plot::bins(metric, SPARK_BINS)
                else {
                    continue;
                };
                let top = counts.iter().copied().max().unwrap_or(0) as f64;
                let spark: String = counts
                    .iter()
                    .map(|&n| match n {
                        0 => ' ',
                        n => {
                            let level =
                                (n as f64).ln_1p() / top.ln_1p() * (LEVELS.len() - 1) as f64;
                            LEVELS[(level.round() as usize).min(LEVELS.len() - 1)]
                        }
                    })
                    .collect();
                lines.push(format!(
                    "{}  {} {spark} {} ({end})",
                    super::plot::dist_label(bench, metric, None),
                    metric.unit.format_scaled(low),
                    metric.unit.format_scaled(high)
                ));
            }
        }
    }
    lines
}
