//! Sinks: one file per output format behind one small trait. Every sink reads only a
//! [`Report`]: the runs (the model) plus the derived tables and notes.

mod bench;
mod csv;
mod fit;
pub mod gate;
pub mod hgrm;
pub mod html;
pub mod hyperfine;
mod json;
mod markdown;
pub mod page;
pub mod plot;
pub mod sink;
pub mod site;
pub mod store;
pub mod terminal;
mod trackers;
pub mod xenomai;

pub use crate::env::Reader;
pub use fit::wrap;

use crate::analyze::counted::beyond_floor;
use crate::model::{Unit, format_exact};
use std::io::{self, Write};

use crate::analyze::Report;
pub use crate::analyze::view::{Cell, Change, ChangeVerdict, Column, Ratio, Row, Table, keys};

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
    /// The cell as text under `column`, whose header names one unit: a value written in
    /// another unit of the same kind is converted to it (a 400 ms benchmark under
    /// `real_time (ns)` of a table led by nanoseconds reads 400000000, never 0.4), and one
    /// of another kind carries its own unit.
    fn plain_under(&self, column: &Column) -> String {
        match (self, &column.unit) {
            (
                Cell::Value {
                    value, source_unit, ..
                },
                Some(shown),
            ) if shown != source_unit => {
                let (header, own) = (Unit::parse(shown), Unit::parse(source_unit));
                if header.unit == own.unit {
                    format_exact(value / header.to_base)
                } else {
                    format!("{} {source_unit}", format_exact(value / own.to_base))
                }
            }
            _ => self.plain(),
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
            Cell::Change(change) => change_text(change),
            // hyperfine's `1.87 ± 0.02`, the ± reaching the farther end of the 95 % interval;
            // an interval lopsided enough that a ± would misstate it is printed as it is.
            Cell::Ratio(Ratio { ratio, interval }) => match interval {
                Some((low, high)) => {
                    let (below, above) = (ratio - low, high - ratio);
                    if below.min(above) >= 0.75 * below.max(above) {
                        format!("{ratio:.2} ± {:.2}", below.max(above))
                    } else {
                        format!("{ratio:.2} ({low:.2}–{high:.2})")
                    }
                }
                None => format!("{ratio:.2}"),
            },
            Cell::Empty => String::new(),
        }
    }

    fn is_text(&self) -> bool {
        matches!(self, Cell::Text { .. })
    }
}

/// `+12.30% (p=0.002 n=6)`, `~ (p=0.485 n=6+8)` as benchstat writes them; a distribution's
/// figures say whether their bounds are apart, and an untested figure (a maximum) says so, so
/// that no bare percentage reads as a verdict; the geomean row is a summary, bare as benchstat
/// prints it.
fn change_text(change: &Change) -> String {
    let n = if change.n == change.n_base {
        format!("n={}", change.n)
    } else {
        format!("n={}+{}", change.n_base, change.n)
    };
    let percent = change
        .percent
        .map_or_else(|| "?".to_string(), |p| format!("{p:+.2}%"));
    match (change.verdict, change.p) {
        (ChangeVerdict::Significant, Some(p)) => format!("{percent} (p={p:.3} {n})"),
        (ChangeVerdict::Noise, Some(p)) => format!("~ (p={p:.3} {n})"),
        (ChangeVerdict::Significant, None) => format!("{percent} (bounds apart)"),
        (ChangeVerdict::Noise, None) => format!("~ ({percent}, bounds overlap)"),
        (ChangeVerdict::Exact, _) => format!("{percent} ({n})"),
        (ChangeVerdict::Counted, _) if change.percent.is_some_and(beyond_floor) => {
            format!("{percent} (counted {n})")
        }
        (ChangeVerdict::Counted, _) => format!("~ (counted {n}, {percent})"),
        (ChangeVerdict::CountedOnce, _) => format!("{percent} (counted once)"),
        (ChangeVerdict::Untested, _) if change.n.min(change.n_base) == 1 => {
            format!("{percent} (not tested: 1 value)")
        }
        (ChangeVerdict::Untested, _) => format!("{percent} (untested)"),
        (ChangeVerdict::Summary, _) => percent,
    }
}

/// An output format.
pub trait Reporter {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()>;
}

/// A report format `--format` can name.
#[derive(Debug)]
pub struct OutputFormat {
    pub name: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    /// The renderer.
    pub reporter: fn() -> Box<dyn Reporter>,
    /// What it can do beyond rendering a finished report.
    pub can: Can,
}

/// A format's capabilities, which commands and sinks read instead of its name.
#[derive(Clone, Copy, Debug)]
pub struct Can {
    /// Show a comparison (each input's figures and the change between them), so `compare`,
    /// `--interleave` and `history` offer it.
    pub compare: bool,
    /// Be written while a timer test measures, a line a second (Xenomai's text); such a
    /// format shows timer results only.
    pub follow_a_timer: bool,
    /// Draw distribution sparklines under its tables for a person at a terminal.
    pub draw: bool,
    /// Show the interval of a comparison's change; a comparison none of whose outputs shows
    /// it does not select it (the selection costs more than the U test). Only the formats
    /// known to leave it out say no, so a new format gets it.
    pub change_interval: bool,
}

/// A format that renders the finished report and nothing more.
const RENDERS: Can = Can {
    compare: false,
    follow_a_timer: false,
    draw: false,
    change_interval: true,
};
/// One that shows comparisons too.
const COMPARES: Can = Can {
    compare: true,
    ..RENDERS
};
/// One that shows comparisons as benchstat's columns: each change with its p-value, no
/// interval.
const COMPARES_AS_COLUMNS: Can = Can {
    change_interval: false,
    ..COMPARES
};

/// latkit JSON, which `--json FILE` and `store export` write beside any other format.
pub static JSON: OutputFormat = OutputFormat {
    name: "json",
    help: "The full model, derived tables and notes (schema in docs/json-schema.md)",
    reporter: || Box::new(json::Json),
    can: COMPARES,
};

/// The self-contained HTML report, which `check --format html` writes too.
pub static HTML: OutputFormat = OutputFormat {
    name: "html",
    help: "One self-contained HTML file: SVG plots, the tables, notes and environment",
    reporter: || Box::new(html::Html),
    can: COMPARES,
};

/// Every report format, in `--help` order: a new one is one file behind [`Reporter`] and one
/// line here; `--format`, its help and every sink read this list.
pub static FORMATS: &[&OutputFormat] = &[
    &OutputFormat {
        name: "table",
        help: "Aligned terminal table with scaled units",
        reporter: || Box::new(terminal::Terminal),
        can: Can {
            draw: true,
            ..COMPARES_AS_COLUMNS
        },
    },
    &OutputFormat {
        name: "markdown",
        help: "GitHub markdown, numbers right-aligned, as the harness wrote them",
        reporter: || Box::new(markdown::Markdown),
        can: COMPARES_AS_COLUMNS,
    },
    &JSON,
    &HTML,
    &OutputFormat {
        name: "csv",
        help: "One CSV row per table row, with a header row",
        reporter: || Box::new(csv::Csv),
        can: COMPARES_AS_COLUMNS,
    },
    &OutputFormat {
        name: "xenomai",
        help: "Xenomai `latency` text (timer results only)",
        reporter: || {
            Box::new(xenomai::Xenomai {
                live_part_done: false,
                buckets: true,
            })
        },
        can: Can {
            follow_a_timer: true,
            ..RENDERS
        },
    },
    &OutputFormat {
        name: "bmf",
        help: "Bencher Metric Format JSON (`bencher run --adapter json`), latency in ns",
        reporter: || Box::new(trackers::Bmf),
        can: RENDERS,
    },
    &OutputFormat {
        name: "gab",
        help: "github-action-benchmark customSmallerIsBetter JSON (lower is better)",
        reporter: || {
            Box::new(trackers::Gab {
                better: crate::model::Better::Lower,
            })
        },
        can: RENDERS,
    },
    &OutputFormat {
        name: "gab-bigger",
        help: "github-action-benchmark customBiggerIsBetter JSON (higher is better)",
        reporter: || {
            Box::new(trackers::Gab {
                better: crate::model::Better::Higher,
            })
        },
        can: RENDERS,
    },
    &OutputFormat {
        name: "hgrm",
        help: "HdrHistogram percentile distribution (.hgrm, µs) of the first distribution",
        reporter: || Box::new(hgrm::Hgrm),
        can: RENDERS,
    },
    &OutputFormat {
        name: "bench",
        help: "`BENCH name: key=value<unit>` lines",
        reporter: || Box::new(bench::Bench),
        can: RENDERS,
    },
];

/// The report format called `name`.
pub fn output_format(name: &str) -> Option<&'static OutputFormat> {
    FORMATS.iter().copied().find(|f| f.name == name)
}

/// Notes as `level: text` lines, shared by the text formats; on the terminal, without the
/// warnings stderr already showed there.
fn note_lines<'a>(report: &'a Report, reader: &'a Reader) -> impl Iterator<Item = String> + 'a {
    report
        .notes_once()
        .into_iter()
        .filter(move |n| {
            !(reader.at_terminal
                && n.level == crate::model::Level::Warning
                && reader.said.holds(&n.to_string()))
        })
        .map(|n| {
            let level = match n.level {
                crate::model::Level::Info => "note",
                crate::model::Level::Warning => "warning",
            };
            format!("{level}: {}", crate::error::visible(&n.to_string()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_reads_with_a_plus_minus_unless_its_interval_is_lopsided() {
        let ratio = |interval| {
            Cell::Ratio(Ratio {
                ratio: 2.0,
                interval,
            })
        };
        assert_eq!(ratio(Some((1.9, 2.12))).plain(), "2.00 ± 0.12");
        assert_eq!(ratio(Some((1.5, 6.0))).plain(), "2.00 (1.50–6.00)");
        assert_eq!(ratio(None).plain(), "2.00");
    }

    /// A comparison skips the change's interval when every output says it leaves it out: the
    /// formats that say so write the same bytes with and without it, and JSON shows it.
    #[test]
    fn formats_that_leave_the_change_interval_out_show_nothing_of_it() {
        let report = |interval| Report {
            generated: None,
            runs: Vec::new(),
            tables: vec![Table {
                title: Some("ns/op".into()),
                run: 0,
                cycle: None,
                columns: vec![
                    Column::new("Benchmark", keys::BENCHMARK),
                    Column::new("new vs base", keys::change_of(1)),
                ],
                rows: vec![Row {
                    benchmark: "BenchmarkA".into(),
                    cells: vec![
                        Cell::Text {
                            text: "BenchmarkA".into(),
                        },
                        Cell::Change(Box::new(Change {
                            percent: Some(3.0),
                            p: Some(0.001),
                            interval,
                            n_base: 10,
                            n: 10,
                            verdict: ChangeVerdict::Significant,
                            better: crate::model::Better::Lower,
                            diagnostics: Vec::new(),
                        })),
                    ],
                }],
            }],
            notes: Vec::new(),
            verdict: None,
        };
        let render = |format: &OutputFormat, interval| {
            let mut out = Vec::new();
            (format.reporter)()
                .render(&report(interval), Reader::default(), &mut out)
                .unwrap();
            out
        };
        let leaving_it_out: Vec<&str> = (FORMATS.iter())
            .filter(|f| f.can.compare && !f.can.change_interval)
            .map(|f| {
                let shown = render(f, Some((2.5, 3.5)));
                assert_eq!(shown, render(f, None), "{} shows the interval", f.name);
                f.name
            })
            .collect();
        assert_eq!(leaving_it_out, ["table", "markdown", "csv"]);
        assert!(JSON.can.change_interval);
        assert_ne!(render(&JSON, Some((2.5, 3.5))), render(&JSON, None));
    }
}
