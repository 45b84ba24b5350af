//! Turns runs into enriched tables: a value per benchmark (median or one cycle), its spread, a
//! share of a baseline and the part/rest attribution.

use super::attribution::{Attribution, Pattern};
use super::stats::{CONFIDENCE, Percentiles, Summary};
use super::view::{Cell, Column, Ratio, Report, Row, Table, keys};
use crate::error::Result;
use crate::model::{
    Benchmark, Better, ConfigEntry, Dimension, Metric, MetricKind, Note, Run, TimerSummary, Unit,
    vocab,
};
use crate::spec::suite::{AttributionSpec, input_latency_preset};
use crate::spec::targets::Targets;

/// Where a run's attribution roles come from.
#[derive(Clone, Debug, Default)]
pub enum AttributionChoice {
    /// A suite file's `[attribution]`, for every run.
    Given(AttributionSpec),
    /// The built-in input-latency preset, for each run that has its part and another role;
    /// a note says when it applied.
    #[default]
    Preset,
}

#[derive(Clone, Debug, Default)]
pub struct EnrichOptions {
    /// Metric the tables show; default: the first each benchmark reports.
    pub metric: Option<String>,
    /// Benchmark name or glob whose value is 100%.
    pub baseline: Option<String>,
    /// Which stage-share attribution the tables get.
    pub attribution: AttributionChoice,
    /// One table per repetition instead of medians.
    pub per_run: bool,
    /// Targets and a budget to judge the runs against.
    pub targets: Option<Targets>,
    /// A "Relative" column: each row's mean against the best row's, with a 95 % CI.
    pub relative: bool,
}

/// Benchmarks that belong in one table: same package, top-level benchmark, variant and
/// GOMAXPROCS, so that baselines and shares compare like with like.
struct Group<'a> {
    package: Option<&'a str>,
    parent: Option<&'a str>,
    variant: Option<&'a str>,
    procs: Option<&'a str>,
    /// Configuration lines that differ from the run's first (a changed `commit:`); a
    /// benchmark's own parameters (`exec -L`) are rows of one table, not tables apart.
    config: Vec<&'a ConfigEntry>,
    members: Vec<&'a Benchmark>,
}

fn groups(run: &Run) -> Vec<Group<'_>> {
    let mut groups: Vec<Group> = Vec::new();
    for bench in &run.benchmarks {
        let key = (
            bench.package.as_deref(),
            bench.name.parent(),
            bench.name.variant.as_deref(),
            bench.name.param("procs"),
            bench
                .config
                .iter()
                .filter(|c| !bench.name.params.contains(c))
                .collect::<Vec<_>>(),
        );
        match groups.iter_mut().find(|g| {
            (g.package, g.parent, g.variant, g.procs) == (key.0, key.1, key.2, key.3)
                && g.config == key.4
        }) {
            Some(g) => g.members.push(bench),
            None => groups.push(Group {
                package: key.0,
                parent: key.1,
                variant: key.2,
                procs: key.3,
                config: key.4,
                members: vec![bench],
            }),
        }
    }
    groups
}

/// Builds the report: summaries on every metric, tables, and notes.
pub fn build_report(
    mut runs: Vec<Run>,
    mut notes: Vec<Note>,
    opts: &EnrichOptions,
) -> Result<Report> {
    summarize_all(&mut runs);
    for run in &runs {
        let label = run
            .source
            .path
            .clone()
            .unwrap_or_else(|| run.source.format.clone());
        notes.extend(super::diagnose::machine_during(run, &label));
    }
    let (given, preset) = match &opts.attribution {
        AttributionChoice::Given(spec) => (Some(Attribution::compile(spec)?), None),
        AttributionChoice::Preset => (None, Some(Attribution::compile(&input_latency_preset())?)),
    };
    let baseline = match &opts.baseline {
        Some(glob) => Some(Pattern::new(glob)?),
        None => None,
    };
    let mut tables = Vec::new();
    for (run_index, run) in runs.iter().enumerate() {
        let fitting = preset.as_ref().filter(|p| p.fits(&run.benchmarks));
        if let Some(p) = fitting {
            notes.push(Note::info(format!(
                "attribution: the built-in {} (names match its roles; a suite file's \
                 [attribution] replaces it)",
                p.name
            )));
        }
        let attribution = given.as_ref().or(fitting);
        let run_tables = RunTables {
            run_index,
            run,
            run_label: (runs.len() > 1).then(|| run_label(run)),
            opts,
            baseline: baseline.as_ref(),
            attribution,
        };
        run_tables.push_into(&mut tables, &mut notes);
    }
    if !opts.per_run {
        super::sampling::note_too_few(&runs, opts.metric.as_deref(), &mut notes);
        super::sampling::note_too_short(&runs, opts.metric.as_deref(), &mut notes);
    }
    dedup(&mut notes);
    let verdict = match &opts.targets {
        Some(targets) => Some(super::gate::evaluate(targets, &runs)?),
        None => None,
    };
    Ok(Report {
        runs,
        tables,
        notes,
        verdict,
    })
}

/// One run's tables: one per benchmark group, or per repetition with `--per-run`.
struct RunTables<'a> {
    run_index: usize,
    run: &'a Run,
    run_label: Option<String>,
    opts: &'a EnrichOptions,
    baseline: Option<&'a Pattern>,
    attribution: Option<&'a Attribution>,
}

impl RunTables<'_> {
    fn push_into(&self, tables: &mut Vec<Table>, notes: &mut Vec<Note>) {
        let groups = groups(self.run);
        let packages = groups
            .iter()
            .filter_map(|g| g.package)
            .collect::<std::collections::BTreeSet<_>>();
        let several_procs = groups
            .iter()
            .filter_map(|g| g.procs)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1;
        for group in &groups {
            let ctx = TableContext {
                run_index: self.run_index,
                timer: self.run.timer.is_some(),
                wide: self.run.peer_metrics,
                title: title(
                    self.run_label.as_deref(),
                    (packages.len() > 1).then_some(group.package).flatten(),
                    group,
                    several_procs,
                ),
                metric: self.opts.metric.as_deref(),
                baseline: self.baseline.map(|p| (p, None)).or_else(|| {
                    self.attribution
                        .and_then(|a| a.baseline.as_ref().map(|(p, l)| (p, Some(l.clone()))))
                }),
                attribution: self.attribution,
                relative: self.opts.relative,
            };
            if let Some(a) = self.attribution {
                note_missing_roles(a, &ctx, group, notes);
            }
            // A timer's seconds or a wide table's metrics are not repetitions to tabulate apart.
            if self.opts.per_run && !ctx.timer && !ctx.wide {
                let cycles = group
                    .members
                    .iter()
                    .map(|b| b.repetitions())
                    .max()
                    .unwrap_or(0);
                for cycle in 0..cycles {
                    tables.push(ctx.table(&group.members, Some((cycle, cycles)), notes));
                }
            } else {
                tables.push(ctx.table(&group.members, None, notes));
                if !ctx.timer && !ctx.wide && ctx.metric.is_none() {
                    for unit in other_units(&group.members) {
                        // Each unit its own table, as benchstat shows them; shares of time
                        // say nothing of bytes.
                        let per_unit = TableContext {
                            title: Some(match &ctx.title {
                                Some(t) => format!("{t} · {unit}"),
                                None => unit.to_string(),
                            }),
                            metric: Some(unit),
                            attribution: None,
                            baseline: ctx.baseline.clone(),
                            ..ctx
                        };
                        tables.push(per_unit.table(&group.members, None, notes));
                    }
                }
            }
        }
    }
}

/// A command's user and system time and peak memory, shown beside its wall time.
fn command_resources<'a>(members: &[&Benchmark], shown: &str) -> Vec<&'a str> {
    vocab::COMMAND_RESOURCES
        .into_iter()
        .filter(|&r| r != shown && members.iter().any(|b| b.metric(r).is_some()))
        .collect()
}

/// Every unit the benchmarks report besides the one their table shows first (go's B/op,
/// allocs/op, MB/s, `b.ReportMetric` units), in the order they appear; a command's resources
/// are columns of its own table instead, as hyperfine prints them.
fn other_units<'a>(members: &[&'a Benchmark]) -> Vec<&'a str> {
    let main = members.iter().find_map(|b| b.primary_metric(None));
    let mut units: Vec<&str> = Vec::new();
    for m in members.iter().flat_map(|b| &b.metrics) {
        let scalar = m.kind != MetricKind::Series && m.percentiles.is_none();
        let other = main.is_none_or(|main| main.name != m.name)
            && !vocab::COMMAND_RESOURCES.contains(&m.name.as_str());
        if scalar && other && !units.contains(&m.name.as_str()) {
            units.push(&m.name);
        }
    }
    units
}

/// An info note naming the attribution roles no benchmark of `group` plays.
fn note_missing_roles(a: &Attribution, ctx: &TableContext, group: &Group, notes: &mut Vec<Note>) {
    let names: Vec<_> = group.members.iter().map(|b| &b.name).collect();
    let missing = a.missing_roles(&names);
    if !missing.is_empty() {
        notes.push(Note::info(format!(
            "{}{}: no benchmark for role {}",
            a.name,
            ctx.title
                .as_deref()
                .map(|t| format!(" in {t}"))
                .unwrap_or_default(),
            missing.join(", ")
        )));
    }
}

/// Derives every metric's summary and percentiles from what was measured, spread over the
/// available cores.
pub fn summarize_all(runs: &mut [Run]) {
    let mut metrics: Vec<(&mut Metric, Option<&TimerSummary>)> = runs
        .iter_mut()
        .flat_map(|r| r.benchmarks.iter_mut())
        .flat_map(|b| {
            let timer = b.timer.as_ref();
            b.metrics.iter_mut().map(move |m| (m, timer))
        })
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = metrics.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        for share in metrics.chunks_mut(per_thread) {
            scope.spawn(move || {
                let mut work = Vec::new();
                for (metric, timer) in share {
                    metric.summary = match (&metric.reported, &metric.histogram) {
                        (Some(reported), _) => Some(reported.clone()),
                        (None, Some(h)) if metric.values.is_empty() => {
                            Summary::of_histogram(&h.histogram())
                        }
                        _ => Summary::of_using(&metric.values, &mut work),
                    };
                    metric.percentiles = metric
                        .histogram
                        .as_ref()
                        .and_then(|h| Percentiles::of(&h.histogram()))
                        .map(|p| match timer {
                            Some(t) if metric.unit.dimension == Dimension::Time => {
                                p.within(t.min_ns as f64, t.max_ns as f64)
                            }
                            _ => p,
                        });
                }
            });
        }
    });
}

/// What tells a run from the others of one report: its file, else what it measured first
/// (`probe · net/tcp-rtt/64B` for each of `net`'s tests).
fn run_label(run: &Run) -> String {
    run.source.path.clone().unwrap_or_else(|| {
        let kind = run.source.kind.name();
        match run.benchmarks.first() {
            Some(first) => format!("{kind} · {}", first.name.name),
            None => kind.to_string(),
        }
    })
}

fn title(
    run: Option<&str>,
    package: Option<&str>,
    group: &Group,
    several_procs: bool,
) -> Option<String> {
    let variant = group.variant.map(|v| format!("variant {v}"));
    let procs = group
        .procs
        .filter(|_| several_procs)
        .map(|p| format!("GOMAXPROCS {p}"));
    let config = (!group.config.is_empty()).then(|| {
        group
            .config
            .iter()
            .map(|c| format!("{}: {}", c.key, c.value))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let parts: Vec<&str> = [
        run,
        package,
        group.parent,
        variant.as_deref(),
        procs.as_deref(),
        config.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

fn dedup(notes: &mut Vec<Note>) {
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.to_string()));
}

struct TableContext<'a> {
    run_index: usize,
    /// The run is a timer latency test: show distributions, not repetitions.
    timer: bool,
    /// Benchmarks report different metrics (BENCH lines): one column per metric.
    wide: bool,
    title: Option<String>,
    metric: Option<&'a str>,
    /// The baseline's pattern and the label its column is headed with (`None`: the name of
    /// the benchmark it matched).
    baseline: Option<(&'a Pattern, Option<String>)>,
    attribution: Option<&'a Attribution>,
    relative: bool,
}

/// The value a row shows and how it was derived.
struct RowValue {
    value: Option<f64>,
    /// The number of values the figure is the median of.
    runs: Cell,
    count: Cell,
    spread: Option<Cell>,
}

impl TableContext<'_> {
    fn table(
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
            return self.wide_table(members);
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
        let repeated = members.iter().any(|b| b.repetitions() > 1);
        let show_spread = cycle.is_none() && repeated;
        // One run's iteration count is Go's `Count`; over repetitions, or for a command
        // (which has no iterations), what counts is the number of runs.
        let iterated = members.iter().any(|b| !b.iterations.is_empty());
        let show_runs = cycle.is_none() && (repeated || !iterated);
        let beside = command_resources(members, metric_name);
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
            .then(|| relative_cells(members, metric_name, cycle.map(|c| c.0)))
            .map(Vec::into_iter);
        let part_value = self.attribution.and_then(|a| {
            members
                .iter()
                .zip(&values)
                .find(|(b, _)| a.role_of(&b.name) == Some(super::attribution::Role::Part))
                .and_then(|(_, v)| v.value)
        });
        let layout = Layout {
            metric: metric_name,
            show_runs,
            iterated,
            show_spread,
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
        if layout.show_spread {
            columns.push(
                Column::new(format!("± {:.0}% CI", CONFIDENCE * 100.0), keys::CI95).dropped_at(2),
            );
        }
        columns.extend(
            layout
                .beside
                .iter()
                .map(|r| metric_column(members, r).dropped_at(3)),
        );
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
        let mut cells = vec![Cell::Text { text: name.clone() }];
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
        if let Some(a) = self.attribution {
            let shares = Attribution::shares(a.role_of(&bench.name), v.value, layout.part_value);
            if let Some((part, _)) = shares.filter(|s| s.0 > 100.0) {
                notes.push(Note::warning(format!(
                    "{name}{}: the {} part measured alone exceeds this composite ({part:.2}%); \
                     the runs are too noisy to attribute, or a role matches the wrong benchmark",
                    layout.title.map(|t| format!(" in {t}")).unwrap_or_default(),
                    a.part_label
                )));
            }
            cells.push(percent(shares.map(|s| s.0)));
            cells.push(percent(shares.map(|s| s.1)));
        }
        Row {
            benchmark: bench.name.full_name.clone(),
            cells,
        }
    }
}

/// Which columns a median table has, decided once for all its rows.
struct Layout<'a> {
    metric: &'a str,
    show_runs: bool,
    iterated: bool,
    show_spread: bool,
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

    /// One row per benchmark, one column per metric any of them reports (medians).
    fn wide_table(&self, members: &[&Benchmark]) -> Table {
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
                    match bench.metric(n).and_then(|m| Some((m, m.summary.as_ref()?))) {
                        Some((m, s)) => Cell::value_of(s.median, m),
                        None => Cell::Empty,
                    }
                }));
                (bench, cells)
            })
            .collect();
        self.whole_run_table(columns, rows)
    }

    /// One row per distribution: sample count, the tool's own min/avg/max where it reports
    /// them (a timer test's summary), tail percentiles and overruns. A benchmark with several
    /// distributions (a round trip and its half) gets a row for each.
    fn distribution_table(&self, members: &[&Benchmark], metric_name: &str) -> Table {
        let mut columns = vec![
            Column::new("Benchmark", keys::BENCHMARK),
            Column::new("Samples", "samples").dropped_at(2),
        ];
        let stats = ["min", "avg", "p50", "p90", "p99", "p99.9", "p99.99", "max"];
        // What a narrow terminal keeps longest: the extremes, the median and p99.
        let drop_ranks = [0, 2, 0, 2, 0, 2, 4, 0];
        columns.extend(
            stats
                .iter()
                .zip(drop_ranks)
                .map(|(s, rank)| Column::new(*s, *s).in_unit("ns").dropped_at(rank)),
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
    let figures = [
        timer.map(|t| t.min_ns as f64).or(p.map(|p| p.min)),
        timer.map(|t| t.avg_ns).or(mean),
        p.map(|p| p.p50),
        p.map(|p| p.p90),
        p.map(|p| p.p99),
        p.map(|p| p.p99_9),
        p.map(|p| p.p99_99),
        timer.map(|t| t.max_ns as f64).or(p.map(|p| p.max)),
    ];
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

/// A table's rows: benchmarks, their display names and values, in order.
struct Rows<'a> {
    members: &'a [&'a Benchmark],
    names: &'a [String],
    values: &'a [RowValue],
}

/// The value that is 100 % and the label of its column: the first row `pattern` matches (a
/// warning lists the others when it matches several), or else the largest value, with a note.
fn resolve_baseline(
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
        .filter(|((b, _), _)| pattern.matches(&b.name))
        .filter_map(|((_, name), v)| Some((name, v.value.filter(|&x| x != 0.0)?)))
        .collect();
    if matches.len() > 1 {
        notes.push(Note::warning(format!(
            "baseline `{}` matches {} benchmarks{within} ({}): using the first, {}",
            pattern.glob,
            matches.len(),
            matches
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            matches[0].0
        )));
    }
    if let Some((name, value)) = matches.first() {
        return (*value, label.clone().unwrap_or_else(|| name.to_string()));
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
fn metric_names<'a>(members: &[&'a Benchmark], keep: impl Fn(&Metric) -> bool) -> Vec<&'a str> {
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
fn metric_column(members: &[&Benchmark], name: &str) -> Column {
    let unit = source_unit_of(members, name);
    Column::new(name, name).in_unit(if unit == name { "" } else { unit })
}

/// The unit a metric's values are written in, as the harness wrote them.
fn source_unit_of<'a>(members: &[&'a Benchmark], metric: &str) -> &'a str {
    members
        .iter()
        .find_map(|b| b.metric(metric))
        .map_or("", |m| m.source_unit.as_str())
}

fn percent(value: Option<f64>) -> Cell {
    match value {
        Some(p) if p.is_finite() => Cell::Percent { percent: p },
        _ => Cell::Empty,
    }
}

fn row_value(bench: &Benchmark, metric: &str, cycle: Option<usize>) -> RowValue {
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
fn iterations_cell(iterations: &[u64]) -> Cell {
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
fn display_names(members: &[&Benchmark]) -> Vec<String> {
    let short: Vec<String> = members
        .iter()
        .map(|b| match b.name.parent() {
            Some(_) => b.name.short_name(),
            None => b.name.path.first().unwrap_or(&b.name.name).clone(),
        })
        .collect();
    // Counted once, not per row: a table may have 100,000 rows.
    let mut uses: rustc_hash::FxHashMap<&str, usize> = Default::default();
    for name in &short {
        *uses.entry(name).or_default() += 1;
    }
    short
        .iter()
        .zip(members)
        .map(|(name, bench)| {
            let clashes = uses[name.as_str()] > 1;
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
                _ => name.clone(),
            }
        })
        .collect()
}

/// The "Relative" cells of a table: each row's median of `metric` (one repetition's value with
/// `cycle`) against the best row's (the lowest, or the highest where higher is better), as
/// hyperfine's relative speed, with the ratio's 95 % confidence interval: the same statistic
/// as the table's, so the figure is the quotient of the two values shown.
fn relative_cells(members: &[&Benchmark], metric: &str, cycle: Option<usize>) -> Vec<Cell> {
    let samples: Vec<Option<(&[f64], Better)>> = members
        .iter()
        .map(|b| {
            let m = b.metric(metric)?;
            let values = match cycle {
                Some(c) => std::slice::from_ref(m.values.get(c)?),
                None => &m.values[..],
            };
            (!values.is_empty()).then_some((values, m.better))
        })
        .collect();
    let middle = |v: &[f64]| crate::model::summary::median(&mut v.to_vec());
    let best = samples
        .iter()
        .flatten()
        .filter(|(v, _)| middle(v) > 0.0)
        .min_by(|(a, better), (b, _)| {
            let (a, b) = (middle(a), middle(b));
            match better {
                Better::Lower => a.total_cmp(&b),
                Better::Higher => b.total_cmp(&a),
            }
        });
    samples
        .iter()
        .map(|s| match (s, best) {
            (Some((values, _)), Some((best, _))) if std::ptr::eq(*values, *best) => {
                Cell::Ratio(Ratio {
                    ratio: 1.0,
                    interval: None,
                })
            }
            (Some((values, better)), Some((best, _))) => {
                let (worse, better_side) = match better {
                    Better::Lower => (*values, *best),
                    Better::Higher => (*best, *values),
                };
                super::ratio::ratio_of_medians(worse, better_side).map_or(Cell::Empty, Cell::Ratio)
            }
            _ => Cell::Empty,
        })
        .collect()
}
