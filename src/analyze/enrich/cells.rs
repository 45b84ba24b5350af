//! The cells of a table: a row's value and spread, its share of the baseline, its ratio to
//! the best row, and the names rows are shown by.

use crate::analyze::attribution::Pattern;
use crate::analyze::view::{Cell, Column, Ratio};
use crate::model::{Assume, Benchmark, Better, Metric, Note};

/// The value a row shows and how it was derived.
pub(super) struct RowValue {
    pub(super) value: Option<f64>,
    /// The number of values the figure is the median of.
    pub(super) runs: Cell,
    pub(super) count: Cell,
    pub(super) spread: Option<Cell>,
}

/// A table's rows: benchmarks, their display names and values, in order.
pub(super) struct Rows<'a> {
    pub(super) members: &'a [&'a Benchmark],
    pub(super) names: &'a [String],
    pub(super) values: &'a [RowValue],
}

/// The value that is 100 % and the label of its column: the row `pattern` names (one, as the
/// table's builder checked), or else the largest value, as lat_bench.go takes it, with a note.
pub(super) fn resolve_baseline(
    pattern: &Pattern,
    label: &Option<String>,
    rows: &Rows,
    title: &Option<String>,
    notes: &mut Vec<Note>,
) -> (f64, String) {
    let (names, values) = (rows.names, rows.values);
    let within = title
        .as_deref()
        .map(|t| format!(" in {t}"))
        .unwrap_or_default();
    let matches: Vec<(&String, f64)> = rows
        .members
        .iter()
        .zip(names)
        .zip(values)
        .filter(|((b, _), _)| pattern.names_own(&b.name))
        .filter_map(|((_, name), v)| Some((name, v.value.filter(|&x| x != 0.0)?)))
        .collect();
    if let [(name, value)] = matches[..] {
        return (value, label.clone().unwrap_or_else(|| name.to_string()));
    }
    let (i, largest) = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.value.map(|x| (i, x)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f64::NAN));
    let name = names.get(i).cloned().unwrap_or_default();
    notes.push(Note::info(format!(
        "baseline `{}` not found{within}: using the largest value ({name}) as 100%",
        pattern.glob
    )));
    (largest, name)
}

/// Distinct names of the metrics that `keep` accepts, in order of first appearance.
pub(super) fn metric_names<'a>(
    members: &[&'a Benchmark],
    keep: impl Fn(&Metric) -> bool,
) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for m in members.iter().flat_map(|b| &b.metrics).filter(|m| keep(m)) {
        if !names.contains(&m.name.as_str()) {
            names.push(&m.name);
        }
    }
    names
}

/// A column for the metric `name`; formats that print numbers as written get its unit,
/// unless the name is the unit already (Go's `ns/op`).
pub(super) fn metric_column(members: &[&Benchmark], name: &str) -> Column {
    let unit = source_unit_of(members, name);
    Column::new(name, name).in_unit(if unit == name { "" } else { unit })
}

/// The unit a metric's values are written in, as the harness wrote them.
pub(super) fn source_unit_of<'a>(members: &[&'a Benchmark], metric: &str) -> &'a str {
    members
        .iter()
        .find_map(|b| b.metric(metric))
        .map_or("", |m| m.source_unit.as_str())
}

pub(super) fn percent(value: Option<f64>) -> Cell {
    match value {
        Some(p) if p.is_finite() => Cell::Percent { percent: p },
        _ => Cell::Empty,
    }
}

pub(super) fn row_value(bench: &Benchmark, metric: &str, cycle: Option<usize>) -> RowValue {
    let m = bench.metric(metric);
    match cycle {
        Some(c) => RowValue {
            value: m.and_then(|m| m.values.get(c).copied()),
            runs: Cell::Empty,
            count: bench
                .iterations
                .get(c)
                .map_or(Cell::Empty, |&count| Cell::Count { count }),
            spread: None,
        },
        // A count's repeatability is what tells whether its changes are decided by size.
        None if m.is_some_and(|m| m.assume == Assume::Counted) => {
            let values = m.map_or(&[][..], |m| &m.values[..]);
            let summary = m.and_then(|m| m.summary.as_ref());
            RowValue {
                runs: Cell::Count {
                    count: values.len() as u64,
                },
                value: summary.map(|s| s.median),
                count: Cell::Empty,
                spread: (values.len() > 1)
                    .then(|| percent(Some(crate::analyze::counted::spread_percent(values)))),
            }
        }
        None => {
            let summary = m.and_then(|m| m.summary.clone());
            let spread = summary.as_ref().map(|s| Cell::Spread {
                n: s.n,
                relative_percent: s.median_ci.as_ref().map(|ci| ci.relative_spread(s.median)),
                interval: s.median_ci.clone(),
            });
            RowValue {
                runs: summary
                    .as_ref()
                    .map_or(Cell::Empty, |s| Cell::Count { count: s.n as u64 }),
                value: summary.map(|s| s.median),
                count: iterations_cell(&bench.iterations),
                spread,
            }
        }
    }
}

/// The iteration count when every repetition ran the same number, else its range.
pub(super) fn iterations_cell(iterations: &[u64]) -> Cell {
    let min = iterations.iter().min();
    let max = iterations.iter().max();
    match (min, max) {
        (Some(&a), Some(&b)) if a == b => Cell::Count { count: a },
        (Some(a), Some(b)) => Cell::Text {
            text: format!("{a}–{b}"),
        },
        _ => Cell::Empty,
    }
}

/// Names as every view gives them (`BenchmarkSortInts`, as go's `-bench` and compare know it;
/// a sub-benchmark by its path below the group the table is titled with), disambiguated where
/// the same name ran several ways: by GOMAXPROCS, else by the benchmark's parameters (a command
/// that does not spell its `-L` value).
pub(super) fn display_names(members: &[&Benchmark]) -> Vec<String> {
    let short: Vec<String> = members
        .iter()
        .map(|b| match b.name.parent() {
            Some(_) => b.name.short_name().into_owned(),
            None => b.name.path.first().unwrap_or(&b.name.name).clone(),
        })
        .collect();
    // Counted once, not per row: a table may have 100,000 rows.
    let mut uses: rustc_hash::FxHashMap<&str, usize> = Default::default();
    for name in &short {
        *uses.entry(name).or_default() += 1;
    }
    let clashing: Vec<bool> = short.iter().map(|name| uses[name.as_str()] > 1).collect();
    // A name that clashes with none is shown as it is: moved, not copied.
    short
        .into_iter()
        .zip(members)
        .zip(clashing)
        .map(|((name, bench), clashes)| {
            let params = &bench.name.params;
            match (clashes, bench.name.param("procs")) {
                (true, Some(procs)) => format!("{name}-{procs}"),
                (true, None) if !params.is_empty() => {
                    let values: Vec<String> = params
                        .iter()
                        .map(|p| format!("{}={}", p.key, p.value))
                        .collect();
                    format!("{name} ({})", values.join(", "))
                }
                _ => name,
            }
        })
        .collect()
}

/// The "Relative" cells of a table: each row's median of `metric` (one repetition's value with
/// `cycle`) against the best row's (the lowest, or the highest where higher is better) or the
/// row named `reference`, as hyperfine's relative speed, with the ratio's 95 % confidence
/// interval: the same statistic as the table's, so the figure is the quotient of the two
/// values shown (below 1 for a row better than the reference).
pub(super) fn relative_cells(
    members: &[&Benchmark],
    metric: &str,
    cycle: Option<usize>,
    reference: Option<&str>,
) -> Vec<Cell> {
    // Each row's values, direction and median (taken once: the best row is found by them).
    let samples: Vec<Option<(&[f64], Better, f64)>> = members
        .iter()
        .map(|b| {
            let m = b.metric(metric)?;
            let values = match cycle {
                Some(c) => std::slice::from_ref(m.values.get(c)?),
                None => &m.values[..],
            };
            let middle = || crate::model::summary::median(&mut values.to_vec());
            (!values.is_empty()).then(|| (values, m.better, middle()))
        })
        .collect();
    let named = members
        .iter()
        .zip(&samples)
        .find(|(b, _)| Some(b.name.full_name.as_str()) == reference)
        .and_then(|(_, s)| s.as_ref())
        .filter(|(_, _, middle)| *middle > 0.0);
    let best = named.or_else(|| {
        samples
            .iter()
            .flatten()
            .filter(|(_, _, middle)| *middle > 0.0)
            .min_by(|(_, better, a), (_, _, b)| match better {
                Better::Lower => a.total_cmp(b),
                Better::Higher => b.total_cmp(a),
            })
    });
    samples
        .iter()
        .map(|s| match (s, best) {
            (Some((values, ..)), Some((best, ..))) if std::ptr::eq(*values, *best) => {
                Cell::Ratio(Ratio {
                    ratio: 1.0,
                    interval: None,
                })
            }
            (Some((values, better, _)), Some((best, ..))) => {
                let (worse, better_side) = match better {
                    Better::Lower => (*values, *best),
                    Better::Higher => (*best, *values),
                };
                crate::analyze::ratio::ratio_of_medians(worse, better_side)
                    .map_or(Cell::Empty, Cell::Ratio)
            }
            _ => Cell::Empty,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, RunBuilder};

    /// Benchmarks named by `parse`, each with `values` of `metric` in `unit`.
    fn benches(
        parse: fn(&str) -> BenchName,
        rows: &[(&str, &[f64])],
        metric: &str,
        unit: &str,
    ) -> Vec<Benchmark> {
        let mut builder = RunBuilder::default();
        for (name, values) in rows {
            let bench = builder.benchmark(name, None, parse);
            for &v in *values {
                builder.record(bench, metric, unit, v);
            }
        }
        builder.finish()
    }

    fn value(value: f64) -> RowValue {
        RowValue {
            value: Some(value),
            runs: Cell::Empty,
            count: Cell::Empty,
            spread: None,
        }
    }

    /// `resolve_baseline` over rows A = 10, B = 20, C = 40 and another B = 30.
    fn baseline(glob: &str, label: Option<&str>) -> ((f64, String), Vec<Note>) {
        let members = benches(
            BenchName::plain,
            &[
                ("A", &[10.0]),
                ("B", &[20.0]),
                ("C", &[40.0]),
                ("B2", &[30.0]),
            ],
            "ns/op",
            "ns/op",
        );
        let members: Vec<&Benchmark> = members.iter().collect();
        let names: Vec<String> = ["A", "B", "C", "B2"].map(String::from).to_vec();
        let values: Vec<RowValue> = [10.0, 20.0, 40.0, 30.0].map(value).into();
        let rows = Rows {
            members: &members,
            names: &names,
            values: &values,
        };
        let mut notes = Vec::new();
        let pattern = Pattern::new(glob).unwrap();
        let title = Some("the group".to_string());
        let found = resolve_baseline(
            &pattern,
            &label.map(String::from),
            &rows,
            &title,
            &mut notes,
        );
        (found, notes)
    }

    #[test]
    fn the_baseline_is_the_row_its_pattern_names() {
        let ((value, label), notes) = baseline("B", None);
        assert_eq!((value, label.as_str()), (20.0, "B"));
        assert!(notes.is_empty(), "{notes:?}");
        // A label given with the baseline heads its column instead of the name.
        let ((_, label), _) = baseline("C", Some("reference"));
        assert_eq!(label, "reference");
    }

    #[test]
    fn a_baseline_not_found_is_the_largest_value_with_a_note() {
        let ((value, label), notes) = baseline("Missing", None);
        assert_eq!((value, label.as_str()), (40.0, "C"));
        let said = notes[0].to_string();
        assert!(said.contains("`Missing` not found in the group"), "{said}");
        assert!(said.contains("largest value (C)"), "{said}");
    }

    fn ratios(cells: &[Cell]) -> Vec<Option<f64>> {
        cells
            .iter()
            .map(|c| match c {
                Cell::Ratio(r) => Some(r.ratio),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn relative_cells_divide_by_the_best_row_in_the_metrics_direction() {
        let rows: [(&str, &[f64]); 3] = [
            ("fast", &[9.0, 9.5, 10.0, 10.5, 11.0]),
            ("slow", &[29.0, 29.5, 30.0, 30.5, 31.0]),
            ("empty", &[]),
        ];
        let lower = benches(BenchName::plain, &rows, "time", "ms");
        let members: Vec<&Benchmark> = lower.iter().collect();
        let cells = relative_cells(&members, "time", None, None);
        assert_eq!(ratios(&cells), [Some(1.0), Some(3.0), None]);
        // The best row has no interval of its own; another's (5 values a side) is around
        // its ratio.
        let Cell::Ratio(slow) = &cells[1] else {
            unreachable!()
        };
        let (low, high) = slow.interval.unwrap();
        assert!(low <= 3.0 && 3.0 <= high, "{low}..{high}");
        // Higher is better for a rate: the best is the largest, the slow row's ratio is 3.
        let higher = benches(BenchName::plain, &rows, "throughput", "MB/s");
        let members: Vec<&Benchmark> = higher.iter().collect();
        let cells = relative_cells(&members, "throughput", None, None);
        assert_eq!(ratios(&cells), [Some(3.0), Some(1.0), None]);
        // One repetition: that cycle's values only (11 and 31).
        let cells = relative_cells(&members, "throughput", Some(4), None);
        assert_eq!(ratios(&cells), [Some(31.0 / 11.0), Some(1.0), None]);
        // A reference (`exec --reference`) divides instead of the best: the faster row reads
        // below 1; a reference with no values leaves the best in its place.
        let members: Vec<&Benchmark> = lower.iter().collect();
        let cells = relative_cells(&members, "time", None, Some("slow"));
        assert_eq!(ratios(&cells), [Some(1.0 / 3.0), Some(1.0), None]);
        let cells = relative_cells(&members, "time", None, Some("empty"));
        assert_eq!(ratios(&cells), [Some(1.0), Some(3.0), None]);
    }

    #[test]
    fn clashing_names_are_told_apart_by_procs_then_parameters() {
        let go = benches(
            BenchName::parse_go,
            &[
                ("BenchmarkSort-2", &[1.0]),
                ("BenchmarkSort-8", &[1.0]),
                ("BenchmarkOnly-8", &[1.0]),
            ],
            "ns/op",
            "ns/op",
        );
        let members: Vec<&Benchmark> = go.iter().collect();
        assert_eq!(
            display_names(&members),
            ["BenchmarkSort-2", "BenchmarkSort-8", "BenchmarkOnly"]
        );
    }

    #[test]
    fn iterations_show_one_count_or_their_range() {
        assert!(matches!(iterations_cell(&[5, 5]), Cell::Count { count: 5 }));
        assert!(matches!(
            iterations_cell(&[3, 9, 5]),
            Cell::Text { text } if text == "3–9"
        ));
        assert!(matches!(iterations_cell(&[]), Cell::Empty));
    }
}
