//! A table made to fit a terminal's width: first folded as benchstat prints it (a figure and
//! its spread in one cell, short headers, changes without their counts), then the columns a
//! reader needs least left out and named, and only then cells wrapped.

use super::{Cell, ChangeVerdict, Table};
use crate::error::visible;
use unicode_width::UnicodeWidthStr;

/// A cell as people read it: units scaled, binary units kept.
pub(super) fn text(cell: &Cell) -> String {
    match cell {
        // A figure the harness gave in binary units keeps them: MiB/s is not MB/s.
        Cell::Value {
            value, source_unit, ..
        } if source_unit.contains("iB") => {
            let in_source = value / crate::model::Unit::parse(source_unit).to_base;
            format!(
                "{} {source_unit}",
                crate::model::format_significant(in_source, 4)
            )
        }
        Cell::Value { value, unit, .. } => unit.format_scaled(*value),
        // An interval wider than the median itself says nothing about the figure but that
        // the samples scatter: say that, with the width.
        Cell::Spread {
            relative_percent: Some(p),
            ..
        } if *p >= TOO_NOISY_PERCENT => format!("too noisy (± {p:.0}%)"),
        Cell::Spread {
            relative_percent: Some(p),
            ..
        } => format!("± {p:.2}%"),
        other => other.plain(),
    }
}

/// A confidence interval at least this wide, in % of the median, is shown as too noisy.
const TOO_NOISY_PERCENT: f64 = 100.0;

/// A column as the terminal prints it.
pub(super) struct Shown {
    pub header: String,
    pub cells: Vec<String>,
    /// Figures are right-aligned; text (names) left.
    pub figures: bool,
    drop_rank: u8,
    /// Index in the table's columns.
    position: usize,
    /// Columns its widest line takes, measured once: fitting sums it many times, and a
    /// table may have 100,000 rows.
    pub width: usize,
}

/// What a terminal of some width can show of a table.
pub(super) struct Fitted {
    pub columns: Vec<Shown>,
    /// Headers of the columns left out, in table order.
    pub left_out: Vec<String>,
    /// The width cells must wrap to, when even the fewest columns are too wide.
    pub wrap_to: Option<usize>,
    /// The path every name shared (`BenchmarkDecode/`), taken out of the names to go beside
    /// the table's title, so that the names left can be shown whole.
    pub shared: Option<String>,
}

pub(super) fn fit(table: &Table, width: Option<usize>) -> Fitted {
    let (whole, _) = shown(table, false);
    let Some(width) = width.filter(|&w| table_width(&whole) > w) else {
        return Fitted {
            columns: whole,
            left_out: Vec::new(),
            wrap_to: None,
            shared: None,
        };
    };
    let (mut columns, shared) = shown(table, true);
    let mut left_out = Vec::new();
    while table_width(&columns) > width {
        let Some(i) = (0..columns.len())
            .filter(|&i| columns[i].drop_rank > 0)
            .max_by_key(|&i| (columns[i].drop_rank, i))
        else {
            break;
        };
        left_out.push(columns.remove(i));
    }
    // A narrow column left out early may fit beside the fewer columns that stayed.
    for back in std::mem::take(&mut left_out).into_iter().rev() {
        let at = columns.partition_point(|c| c.position < back.position);
        columns.insert(at, back);
        if table_width(&columns) > width {
            left_out.push(columns.remove(at));
        }
    }
    left_out.sort_by_key(|c| c.position);
    let left_out = left_out.into_iter().map(|c| c.header).collect();
    shorten_names(&mut columns, width);
    let wrap_to = (table_width(&columns) > width).then_some(width);
    Fitted {
        columns,
        left_out,
        wrap_to,
        shared,
    }
}

/// The table's columns as text: whole, or folded for a narrow terminal (with the path the
/// names share, taken out of them).
fn shown(table: &Table, folded: bool) -> (Vec<Shown>, Option<String>) {
    let mut out: Vec<Shown> = Vec::new();
    let mut last_holds_values = false;
    for (i, column) in table.columns.iter().enumerate() {
        let cells: Vec<&Cell> = table
            .rows
            .iter()
            .map(|r| r.cells.get(i).unwrap_or(&Cell::Empty))
            .collect();
        let holds = |kind: fn(&Cell) -> bool| {
            cells.iter().all(|c| kind(c) || **c == Cell::Empty)
                && cells.iter().any(|c| **c != Cell::Empty)
        };
        let spreads = holds(|c| matches!(c, Cell::Spread { .. }));
        if let (true, true, Some(figures)) = (folded, spreads && last_holds_values, out.last_mut())
        {
            for (text, cell) in figures.cells.iter_mut().zip(&cells) {
                text.push_str(&folded_spread(cell));
            }
            continue;
        }
        last_holds_values = holds(|c| matches!(c, Cell::Value { .. }));
        let header = match (&column.narrow.header, folded) {
            (Some(short), true) => short,
            _ => &column.header,
        };
        out.push(Shown {
            header: visible(header).into_owned(),
            cells: cells
                .iter()
                .map(|c| visible(&if folded { folded_text(c) } else { text(c) }).into_owned())
                .collect(),
            figures: !cells.iter().any(|c| c.is_text()),
            drop_rank: column.narrow.drop_rank,
            position: i,
            width: 0,
        });
    }
    let shared = out
        .first_mut()
        .filter(|c| folded && !c.figures)
        .and_then(factor_out_prefix);
    for column in &mut out {
        column.width = widest_line(column);
    }
    (out, shared)
}

/// Names that share a path (`BenchmarkDecode/size=1k/…`) shown without it, the path
/// returned to go beside the title; a row outside it (`geomean`) stays whole.
fn factor_out_prefix(names: &mut Shown) -> Option<String> {
    let nested: Vec<&String> = names.cells.iter().filter(|c| c.contains('/')).collect();
    let (first, rest) = nested.split_first().filter(|(_, rest)| !rest.is_empty())?;
    let mut shared = first.rfind('/').map_or("", |end| &first[..=end]);
    for name in rest {
        while !name.starts_with(shared) {
            shared = shared[..shared.len() - 1]
                .rfind('/')
                .map_or("", |end| &shared[..=end]);
        }
    }
    if shared.is_empty() {
        return None;
    }
    let shared = shared.to_string();
    for cell in &mut names.cells {
        if let Some(short) = cell.strip_prefix(&shared) {
            *cell = short.to_string();
        }
    }
    Some(shared)
}

/// ` ± 3%` after the figure, as benchstat prints it; nothing where there is no interval.
fn folded_spread(cell: &Cell) -> String {
    match cell {
        Cell::Spread {
            relative_percent: Some(p),
            ..
        } => format!(" ± {p:.0}%"),
        _ => String::new(),
    }
}

/// A cell in fewer characters: a change without its counts (`+12.30% (p=0.002)`).
fn folded_text(cell: &Cell) -> String {
    match cell {
        Cell::Change(change) => match (change.verdict, change.p) {
            (ChangeVerdict::Noise, Some(p)) => format!("~ (p={p:.3})"),
            (ChangeVerdict::Significant, Some(p)) => change.percent.map_or_else(
                || format!("? (p={p:.3})"),
                |c| format!("{c:+.2}% (p={p:.3})"),
            ),
            (ChangeVerdict::Counted, _) => match change.percent {
                Some(c) if crate::analyze::counted::beyond_floor(c) => {
                    format!("{c:+.2}% (counted)")
                }
                Some(c) => format!("~ (counted, {c:+.2}%)"),
                None => "? (counted)".into(),
            },
            (ChangeVerdict::Untested, _) if change.n.min(change.n_base) == 1 => change
                .percent
                .map_or_else(|| "? (1 value)".into(), |c| format!("{c:+.2}% (1 value)")),
            _ => text(cell),
        },
        _ => text(cell),
    }
}

/// The fewest columns a figure column is wrapped to, so that the names can stay whole.
const NARROWEST_FIGURES: usize = 10;

/// When the columns still do not fit, the other columns' cells wrap and the names (the first
/// column, when it is text) stay whole, so that a reader can copy one into `-bench` or
/// `--filter`; only a name wider than the terminal leaves the figures gives up its middle,
/// `Benchmark_Gam…Client-Write`, rather than wrap mid-word.
fn shorten_names(columns: &mut [Shown], width: usize) {
    let Some((names, others)) = columns.split_first_mut().filter(|(c, _)| !c.figures) else {
        return;
    };
    let figures: usize = others
        .iter()
        .map(|c| c.width.min(NARROWEST_FIGURES) + 3)
        .sum();
    let target = width.saturating_sub(figures + 4).max(NARROWEST_FIGURES);
    if names.width <= target {
        return;
    }
    for text in names
        .cells
        .iter_mut()
        .chain(std::iter::once(&mut names.header))
    {
        if text.width() > target {
            *text = elide_middle(text, target);
        }
    }
    names.width = widest_line(names);
}

/// `text` in at most `width` columns, its middle replaced by `…`.
fn elide_middle(text: &str, width: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let keep = width.saturating_sub(1);
    let (mut head, mut tail) = (String::new(), String::new());
    let (mut front, mut back) = (0, chars.len());
    // Alternate ends, the end first: a sub-benchmark's last part tells it apart.
    while front < back {
        let room = keep.saturating_sub(head.width() + tail.width());
        let from_back = chars[back - 1];
        if tail.width() <= head.width() && from_back.to_string().width() <= room {
            tail.insert(0, from_back);
            back -= 1;
        } else if chars[front].to_string().width() <= room {
            head.push(chars[front]);
            front += 1;
        } else {
            break;
        }
    }
    format!("{head}…{tail}")
}

/// Columns printed by [`super::terminal`]'s style: `│ a ┆ b │`.
fn table_width(columns: &[Shown]) -> usize {
    1 + columns.iter().map(|c| c.width + 3).sum::<usize>()
}

fn widest_line(column: &Shown) -> usize {
    std::iter::once(&column.header)
        .chain(&column.cells)
        .flat_map(|t| t.lines())
        .map(UnicodeWidthStr::width)
        .max()
        .unwrap_or(0)
}

/// `line` broken between words into lines of at most `width` columns (a longer word stands
/// alone), the lines after the first indented by `indent` spaces.
pub fn wrap(line: &str, width: Option<usize>, indent: usize) -> Vec<String> {
    let Some(width) = width.filter(|&w| w > indent && line.width() > w) else {
        return vec![line.to_string()];
    };
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let needed = current.width() + 1 + word.width();
        if !current.trim_start().is_empty() && needed > width {
            lines.push(std::mem::replace(&mut current, " ".repeat(indent)));
        } else if !current.is_empty() && !current.trim_start().is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::super::terminal::Terminal;
    use super::super::{Column, Reader, Reporter, Row};
    use super::*;
    use crate::analyze::Report;
    use proptest::prelude::*;

    /// A table under a title of `title_words` words: the names, then figures of the given
    /// widths, each left out at the given rank.
    fn table(name_width: usize, columns: &[(usize, u8)], title_words: usize) -> Table {
        let mut header = vec![Column::new("Benchmark", "benchmark")];
        header.extend(
            columns.iter().enumerate().map(|(i, &(_, rank))| {
                Column::new(format!("c{i}"), format!("c{i}")).dropped_at(rank)
            }),
        );
        let rows = (0..3)
            .map(|r| Row {
                benchmark: format!("b{r}"),
                cells: std::iter::once(Cell::Text {
                    text: "n".repeat(name_width),
                })
                .chain(columns.iter().map(|&(width, _)| Cell::Text {
                    text: "9".repeat(width),
                }))
                .collect(),
            })
            .collect();
        Table {
            title: Some("title ".repeat(title_words)),
            run: 0,
            cycle: None,
            columns: header,
            rows,
        }
    }

    proptest! {
        /// Whatever the table, nothing is wider than the terminal, and every column is either
        /// shown or named as left out.
        #[test]
        fn a_fitted_table_is_never_wider_and_loses_no_column_silently(
            name_width in 1usize..60,
            columns in proptest::collection::vec((1usize..30, 1u8..5), 0..14),
            kept in 0usize..3,
            width in 40usize..200,
            title_words in 0usize..50,
        ) {
            let mut columns = columns;
            for c in columns.iter_mut().take(kept) {
                c.1 = 0;
            }
            let report = Report {
                generated: None,
                runs: Vec::new(),
                tables: vec![table(name_width, &columns, title_words)],
                notes: Vec::new(),
                verdict: None,
            };
            let reader = Reader { width: Some(width), at_terminal: true, ..Default::default() };
            let mut out = Vec::new();
            Terminal.render(&report, reader, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            let widest = text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0);
            prop_assert!(widest <= width, "{widest} > {width}:\n{text}");
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for i in 0..columns.len() {
                let header = text.lines().find(|l| l.starts_with("│ Benchmark"));
                let shown = header.is_some_and(|h| h.contains(&format!(" c{i} ")));
                let named = flat.contains(&format!(" c{i},")) || flat.contains(&format!(" c{i};"));
                prop_assert!(shown != named, "c{i} shown {shown}, named {named}:\n{text}");
            }
        }
    }

    #[test]
    fn names_give_up_their_middle_not_a_line_break() {
        assert_eq!(
            elide_middle("Benchmark_Gamepad_Delay/1_Go-Client-Write", 20),
            "Benchmark…ient-Write"
        );
        assert_eq!(elide_middle("abcdef", 5).width(), 5);
        let report = Report {
            generated: None,
            runs: Vec::new(),
            tables: vec![table(70, &[(10, 0), (10, 0)], 0)],
            notes: Vec::new(),
            verdict: None,
        };
        let mut out = Vec::new();
        let reader = Reader {
            width: Some(60),
            at_terminal: true,
            ..Default::default()
        };
        Terminal.render(&report, reader, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Three rows, one line each: no name wrapped onto a second line.
        assert_eq!(
            text.lines().filter(|l| l.contains('…')).count(),
            3,
            "{text}"
        );
        assert!(text.lines().all(|l| l.width() <= 60), "{text}");
    }

    #[test]
    fn notes_wrap_between_words_with_a_hanging_indent() {
        let lines = wrap("note: one two three four five", Some(14), 2);
        assert_eq!(lines, ["note: one two", "  three four", "  five"]);
        assert_eq!(wrap("short", Some(14), 2), ["short"]);
        assert_eq!(
            wrap("a unbreakablewordlonger", Some(8), 2),
            ["a", "  unbreakablewordlonger"]
        );
        assert_eq!(wrap("no limit at all", None, 2), ["no limit at all"]);
    }
}
