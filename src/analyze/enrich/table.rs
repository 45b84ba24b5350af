//! One table of a run: its columns decided once (the layout), then a row per benchmark, for
//! medians, one repetition, or a timer's distribution.

use crate::analyze::attribution::{Attribution, Pattern};
use crate::analyze::stats::CONFIDENCE;
use crate::analyze::view::{Cell, Column, Row, Table, keys};
use crate::model::{
    Benchmark, Dimension, Metric, MetricKind, Note, Statistic, TimerSummary, Unit, vocab,
};

use super::cells::*;

#[derive(Clone)]
pub(super) struct TableContext<'a> {
    pub(super) run_index: usize,
    /// The run is a timer latency test: show distributions, not repetitions.
    pub(super) timer: bool,
    /// Benchmarks report different metrics (BENCH lines): one column per metric.
    pub(super) wide: bool,
    pub(super) title: Option<String>,
    pub(super) metric: Option<&'a str>,
    /// The baseline's pattern and the label its column is headed with (`None`: the name of
    /// the benchmark it matched).
    pub(super) baseline: Option<(&'a Pattern, Option<String>)>,
    pub(super) attribution: Option<&'a Attribution>,
    pub(super) relative: bool,
    pub(super) relative_to: Option<&'a str>,
}

impl TableContext<'_> {
    pub(super) fn table(
        &self,
        members: &[&Benchmark],
        cycle: Option<(usize, usize)>,
        notes: &mut Vec<Note>,
    ) -> Table {
        let metric_name = self
            .metric
            .map(str::to_string)
            .or_else(|| {
                members
                    .iter()
                    .find_map(|b| b.primary_metric(None))
                    .map(|m| m.name.clone())
            })
            .unwrap_or_default();
        let distributions = members.iter().any(|b| {
            b.metric(&metric_name)
                .is_some_and(|m| m.percentiles.is_some())
        });
        if distributions || self.timer {
            return self.distribution_table(members, &metric_name);
        }
        if self.wide && self.metric.is_none() {
            return self.wide_table(members, cycle.map(|c| c.0), notes);
        }
        self.median_table(members, &metric_name, cycle, notes)
    }

    /// Each benchmark's median (or one cycle's value), with the columns the data allow.
    fn median_table(
        &self,
        members: &[&Benchmark],
        metric_name: &str,
        cycle: Option<(usize, usize)>,
        notes: &mut Vec<Note>,
    ) -> Table {
        let values: Vec<RowValue> = members
            .iter()
            .map(|b| row_value(b, metric_name, cycle.map(|c| c.0)))
            .collect();
        let title = match (cycle, &self.title) {
            (Some((c, k)), Some(t)) => Some(format!("{t} · cycle {}/{k}", c + 1)),
            (Some((c, k)), None) => Some(format!("cycle {}/{k}", c + 1)),
            (None, t) => t.clone(),
        };
        let show_spread = cycle.is_none() && members.iter().any(|b| b.repetitions() > 1);
        // One run's iteration count is Go's `Count`; over repetitions, or for a command
        // (which has no iterations), what counts is the number of runs.
        let iterated = iterated(members, metric_name);
        let show_runs = cycle.is_none() && (show_spread || !iterated);
        let beside = command_resources(members, metric_name);
        if show_spread && beside.iter().any(|r| vocab::counted_in_ticks(r)) {
            notes.push(Note::info(MEANS_OF_TICKS));
        }
        let names = display_names(members);
        let baseline = self.baseline.as_ref().map(|(pattern, label)| {
            let rows = Rows {
                members,
                names: &names,
                values: &values,
            };
            resolve_baseline(pattern, label, &rows, &title, notes)
        });
        let mut relative = self
            .relative
            .then(|| relative_cells(members, metric_name, cycle.map(|c| c.0), self.relative_to))
            .map(Vec::into_iter);
        let part_value = self.attribution.and_then(|a| {
            members
                .iter()
                .zip(&values)
                .find(|(b, _)| a.role_of(&b.name) == Some(crate::analyze::attribution::Role::Part))
                .and_then(|(_, v)| v.value)
        });
        let layout = Layout {
            metric: metric_name,
            show_runs,
            iterated,
            show_spread,
            counted: counted(members, metric_name),
            beside,
            cycle: cycle.map(|c| c.0),
            baseline: baseline.as_ref().map(|(value, _)| *value),
            part_value,
            title: title.as_deref(),
        };
        let columns = self.median_columns(
            members,
            &layout,
            baseline.as_ref().map(|(_, label)| label.as_str()),
            relative.is_some(),
        );
        let rows = members
            .iter()
            .zip(values)
            .zip(names)
            .map(|((bench, v), name)| {
                let relative = relative.as_mut().and_then(Iterator::next);
                self.median_row(&layout, bench, v, name, relative, notes)
            })
            .collect();
        Table {
            title,
            run: self.run_index,
            cycle: cycle.map(|c| c.0 + 1),
            columns,
            rows,
        }
    }

    /// A median table's columns, in the order [`Self::median_row`] fills them.
    fn median_columns(
        &self,
        members: &[&Benchmark],
        layout: &Layout,
        baseline_label: Option<&str>,
        relative: bool,
    ) -> Vec<Column> {
        let mut columns = vec![Column::new("Benchmark", keys::BENCHMARK)];
        if layout.show_runs {
            columns.push(Column::new("Runs", keys::RUNS).dropped_at(3));
        }
        if layout.iterated {
            let header = if layout.show_runs {
                "Iterations"
            } else {
                "Count"
            };
            columns.push(Column::new(header, keys::COUNT).dropped_at(3));
        }
        // Over repetitions each figure is a median: the header says so, once.
        let mut figure = metric_column(members, layout.metric);
        if layout.show_spread {
            figure.header = format!("median {}", figure.header);
        }
        columns.push(figure);
        if layout.show_spread && !layout.counted {
            columns.push(
                Column::new(format!("± {:.0}% CI", CONFIDENCE * 100.0), keys::CI95).dropped_at(2),
            );
        } else if layout.show_spread {
            columns.push(Column::new("Spread %", keys::SPREAD).dropped_at(2));
        }
        columns.extend(layout.beside.iter().map(|r| {
            let mut column = metric_column(members, r).dropped_at(3);
            if vocab::counted_in_ticks(r) && layout.cycle.is_none() && layout.show_spread {
                column.header = format!("mean {}", column.header);
            }
            column
        }));
        if let Some(label) = baseline_label {
            columns.push(Column::new(format!("% of {label}"), keys::PCT_OF_BASELINE).dropped_at(1));
        }
        if relative {
            columns.push(Column::new("Relative", keys::RELATIVE).dropped_at(1));
        }
        if let Some(a) = self.attribution {
            columns.push(
                Column::new(format!("{} Share %", a.part_label), keys::SHARE_PART).dropped_at(1),
            );
            columns.push(
                Column::new(format!("{} Share %", a.rest_label), keys::SHARE_REST).dropped_at(1),
            );
        }
        columns
    }

    /// One row of a median table, its cells in `layout`'s columns.
    fn median_row(
        &self,
        layout: &Layout,
        bench: &Benchmark,
        v: RowValue,
        name: String,
        relative: Option<Cell>,
        notes: &mut Vec<Note>,
    ) -> Row {
        // Sized to its columns: a table can have millions of rows.
        let columns = 2
            + usize::from(layout.show_runs)
            + usize::from(layout.iterated)
            + usize::from(layout.show_spread)
            + layout.beside.len()
            + usize::from(layout.baseline.is_some())
            + usize::from(relative.is_some())
            + 2 * usize::from(self.attribution.is_some());
        let shares = self
            .attribution
            .map(|a| Attribution::shares(a.role_of(&bench.name), v.value, layout.part_value));
        if let (Some(a), Some((part, _))) = (self.attribution, shares.flatten())
            && part > 100.0
        {
            notes.push(Note::warning(format!(
                "{name}{}: the {} part measured alone exceeds this composite ({part:.2}%); \
                 the runs are too noisy to attribute, or a role matches the wrong benchmark",
                layout.title.map(|t| format!(" in {t}")).unwrap_or_default(),
                a.part_label
            )));
        }
        let mut cells = Vec::with_capacity(columns);
        cells.push(Cell::Text { text: name });
        if layout.show_runs {
            cells.push(v.runs);
        }
        if layout.iterated {
            cells.push(v.count);
        }
        cells.push(match (v.value, bench.metric(layout.metric)) {
            (Some(value), Some(m)) => Cell::value_of(value, m),
            _ => Cell::Empty,
        });
        if layout.show_spread {
            cells.push(v.spread.unwrap_or(Cell::Empty));
        }
        cells.extend(layout.beside.iter().map(|r| {
            let value = bench.metric(r).and_then(|m| {
                let value = match layout.cycle {
                    Some(c) => m.values.get(c).copied(),
                    None if vocab::counted_in_ticks(r) => m.summary.as_ref().map(|s| s.mean),
                    None => m.summary.as_ref().map(|s| s.median),
                };
                Some((value?, m))
            });
            value.map_or(Cell::Empty, |(value, m)| Cell::value_of(value, m))
        }));
        if let Some(base) = layout.baseline {
            cells.push(percent(v.value.map(|x| x / base * 100.0)));
        }
        cells.extend(relative);
        if let Some(shares) = shares {
            cells.push(percent(shares.map(|s| s.0)));
            cells.push(percent(shares.map(|s| s.1)));
        }
        Row {
            benchmark: bench.name.full_name.clone(),
            cells,
        }
    }
}

/// Whether a table of `metric` has an iterations column: the members ran iterations, and the
/// figure is of them (a counted figure is per iteration of its own counted runs).
fn iterated(members: &[&Benchmark], metric: &str) -> bool {
    !counted(members, metric) && members.iter().any(|b| !b.iterations.is_empty())
}

/// Whether a table's figure is counted (instructions).
fn counted(members: &[&Benchmark], metric: &str) -> bool {
    members.iter().any(|b| {
        b.metric(metric)
            .is_some_and(|m| m.assume == crate::model::Assume::Counted)
    })
}

/// Why a command's user and system times are means.
const MEANS_OF_TICKS: &str = "user and system are means over the runs, as hyperfine reports \
     them: the kernel splits a process's CPU time between user and system by timer-tick \
     samples (1-10 ms apart), so one run's split is coarse and a median of them can read 0";

/// Which columns a median table has, decided once for all its rows.
struct Layout<'a> {
    metric: &'a str,
    show_runs: bool,
    iterated: bool,
    show_spread: bool,
    /// The figure is counted: its spread run to run is shown, not an interval.
    counted: bool,
    /// A command's resources shown beside its wall time.
    beside: Vec<&'a str>,
    /// The repetition shown (0-based), for a table of one cycle.
    cycle: Option<usize>,
    /// The baseline's value, when there is a "% of" column.
    baseline: Option<f64>,
    /// The attribution part's value, for the share columns.
    part_value: Option<f64>,
    title: Option<&'a str>,
}

impl TableContext<'_> {
    /// A table over all repetitions (not one cycle) from each benchmark's cells.
    fn whole_run_table(&self, columns: Vec<Column>, rows: Vec<(&&Benchmark, Vec<Cell>)>) -> Table {
        Table {
            title: self.title.clone(),
            run: self.run_index,
            cycle: None,
            columns,
            rows: rows
                .into_iter()
                .map(|(bench, cells)| Row {
                    benchmark: bench.name.full_name.clone(),
                    cells,
                })
                .collect(),
        }
    }

    /// One row per benchmark, one column per metric any of them reports: each figure as
    /// `check` names it (a median; a `BENCH` line's `max` the max of the runs' maxima), or one
    /// cycle's values.
    fn wide_table(
        &self,
        members: &[&Benchmark],
        cycle: Option<usize>,
        notes: &mut Vec<Note>,
    ) -> Table {
        let names = metric_names(members, |m| m.kind != MetricKind::Series);
        let mut columns = vec![Column::new("Benchmark", keys::BENCHMARK)];
        // The first metric is the benchmark's own; a narrow terminal drops the others first.
        columns.extend(names.iter().enumerate().map(|(i, n)| {
            let rank = if i == 0 { 0 } else { 3 };
            metric_column(members, n).dropped_at(rank)
        }));
        let rows = members
            .iter()
            .zip(display_names(members))
            .map(|(bench, name)| {
                let mut cells = vec![Cell::Text { text: name }];
                cells.extend(names.iter().map(|n| {
                    let m = bench.metric(n);
                    let value = match cycle {
                        Some(c) => m.and_then(|m| m.values.get(c).copied()),
                        None => crate::analyze::figure::resolve(bench, n)
                            .ok()
                            .map(|f| f.value),
                    };
                    match (m, value) {
                        (Some(m), Some(value)) => Cell::value_of(value, m),
                        _ => Cell::Empty,
                    }
                }));
                (bench, cells)
            })
            .collect();
        let repeated = members.iter().any(|b| b.repetitions() > 1);
        if cycle.is_none() && repeated && names.iter().any(|n| Statistic::parse(n).is_some()) {
            notes.push(Note::info(
                "over several runs a figure is their median, and one that is a statistic of each \
                 run is taken by it: min the min of the runs' minima, max the max of their \
                 maxima, avg the mean of their averages",
            ));
        }
        let mut table = self.whole_run_table(columns, rows);
        table.cycle = cycle;
        table
    }

    /// One row per distribution: sample count, the tool's own min/avg/max where it reports
    /// them (a timer test's summary), tail percentiles and overruns. A benchmark with several
    /// distributions (a round trip and its half) gets a row for each.
    fn distribution_table(&self, members: &[&Benchmark], metric_name: &str) -> Table {
        let mut columns = vec![
            Column::new("Benchmark", keys::BENCHMARK),
            Column::new("Samples", "samples").dropped_at(2),
        ];
        // What a narrow terminal keeps longest: the extremes, the median and p99.
        let drop_ranks = [0, 2, 0, 2, 0, 2, 4, 0];
        columns.extend(
            (Statistic::OF_DISTRIBUTION.iter())
                .zip(drop_ranks)
                .map(|(s, rank)| {
                    Column::new(s.name(), s.name())
                        .in_unit("ns")
                        .dropped_at(rank)
                }),
        );
        let with_overruns = members
            .iter()
            .any(|b| b.timer.as_ref().is_some_and(|t| t.overruns.is_some()));
        if with_overruns {
            columns.push(Column::new("Overruns", "overruns").dropped_at(1));
        }
        // Other single figures (a probe's bandwidth, frame size) get a column each.
        let extras = metric_names(members, |m| {
            m.kind == MetricKind::Repetitions && m.values.len() == 1 && m.histogram.is_none()
        });
        columns.extend(
            extras
                .iter()
                .map(|n| metric_column(members, n).dropped_at(3)),
        );
        let mut rows = Vec::new();
        for (bench, name) in members.iter().zip(display_names(members)) {
            let shown: Vec<Option<&Metric>> = match bench.metric(metric_name) {
                Some(m) => std::iter::once(m)
                    .chain(bench.metrics.iter().filter(|o| {
                        o.name != metric_name
                            && o.percentiles.is_some()
                            && o.unit.dimension == Dimension::Time
                    }))
                    .map(Some)
                    .collect(),
                None => vec![None],
            };
            for (k, metric) in shown.into_iter().enumerate() {
                let label = match (k, metric) {
                    (0, _) | (_, None) => name.clone(),
                    (_, Some(m)) => format!("{name} · {}", m.name),
                };
                let mut cells = vec![Cell::Text { text: label }];
                // Only the main distribution is the benchmark's: its timer summary applies.
                let timer = bench.timer.as_ref().filter(|_| k == 0);
                cells.extend(distribution_cells(metric, timer, bench));
                if with_overruns {
                    cells.push(
                        timer
                            .and_then(|t| t.overruns)
                            .map_or(Cell::Empty, |count| Cell::Count { count }),
                    );
                }
                cells.extend(extras.iter().map(|n| {
                    match bench.metric(n) {
                        Some(m) if k == 0 => m
                            .values
                            .first()
                            .map_or(Cell::Empty, |&v| Cell::value_of(v, m)),
                        _ => Cell::Empty,
                    }
                }));
                rows.push((bench, cells));
            }
        }
        self.whole_run_table(columns, rows)
    }
}

/// Samples, min, avg, p50…p99.99 and max of a distribution: the timer tool's own count, min,
/// avg and max where there is a summary (percentiles are already clamped to them).
fn distribution_cells(
    metric: Option<&Metric>,
    timer: Option<&TimerSummary>,
    bench: &Benchmark,
) -> Vec<Cell> {
    let p = metric.and_then(|m| m.percentiles.as_ref());
    let mean = metric.and_then(|m| m.summary.as_ref()).map(|s| s.mean);
    let samples = timer
        .and_then(|t| t.samples)
        .or(p.map(|p| p.count))
        .or_else(|| bench.iterations.first().copied());
    let figures = Statistic::OF_DISTRIBUTION.map(|statistic| match statistic {
        Statistic::Min => timer.map(|t| t.min_ns as f64).or(p.map(|p| p.min)),
        Statistic::Mean => timer.map(|t| t.avg_ns).or(mean),
        Statistic::Max => timer.map(|t| t.max_ns as f64).or(p.map(|p| p.max)),
        percentile => p.and_then(|p| percentile.of_percentiles(p)),
    });
    let unit = metric.map_or_else(|| Unit::new(Dimension::Time), |m| m.unit.clone());
    let mut cells = vec![samples.map_or(Cell::Empty, |count| Cell::Count { count })];
    cells.extend(figures.into_iter().map(|figure| {
        figure.map_or(Cell::Empty, |value| Cell::Value {
            value,
            unit: unit.clone(),
            source_unit: "ns".to_string(),
        })
    }));
    cells
}

/// A command's user and system time and peak memory, shown beside its wall time (and only
/// there: beside its counted instructions they would read as counted too).
fn command_resources<'a>(members: &[&Benchmark], shown: &str) -> Vec<&'a str> {
    vocab::COMMAND_RESOURCES
        .into_iter()
        .filter(|_| shown == vocab::WALL_TIME)
        .filter(|&r| members.iter().any(|b| b.metric(r).is_some()))
        .collect()
}
