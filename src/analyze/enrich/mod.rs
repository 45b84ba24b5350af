//! Turns runs into enriched tables: a value per benchmark (median or one cycle), its spread, a
//! share of a baseline and the part/rest attribution.

use super::attribution::{Attribution, Pattern};
use super::stats::{Percentiles, Summary};
use super::view::{Report, Table};
use crate::error::Result;
use crate::model::{
    Benchmark, ConfigEntry, Dimension, Metric, MetricKind, Note, Run, TimerSummary, vocab,
};
use crate::spec::suite::{AttributionSpec, input_latency_preset};
use crate::spec::targets::Targets;

mod cells;
mod roles;
mod table;

use table::TableContext;

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
    /// The benchmark (full name) the Relative column divides by; `None`: the best row.
    pub relative_to: Option<String>,
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
        notes.extend(super::counted::notes(run, &label));
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
        let fitting = match &preset {
            Some(p) if p.fits(&run.benchmarks) => Some(p),
            _ => None,
        };
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
            preset: given.is_none(),
        };
        run_tables.push_into(&mut tables, &mut notes)?;
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
        generated: None,
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
    /// The attribution is the built-in preset, not the user's.
    preset: bool,
}

impl RunTables<'_> {
    fn push_into(&self, tables: &mut Vec<Table>, notes: &mut Vec<Note>) -> Result<()> {
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
                relative_to: self.opts.relative_to.as_deref(),
            };
            let ctx = roles::checked(ctx, group, self.preset, self.baseline, notes)?;
            // A timer's seconds or a wide table's metrics are not repetitions to tabulate apart.
            if self.opts.per_run && !ctx.timer {
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
                for (table, its_notes) in unit_tables(&ctx, &group.members) {
                    tables.push(table);
                    notes.extend(its_notes);
                }
            }
        }
        Ok(())
    }
}

/// A group's table of medians and, after it, one per other unit (each its own table, as
/// benchstat shows them; shares of time say nothing of bytes), each with its notes.
fn unit_tables(ctx: &TableContext, members: &[&Benchmark]) -> Vec<(Table, Vec<Note>)> {
    // A distribution's table shows its single figures (a probe's bandwidth, frame size) as
    // columns of its own rows already.
    let distribution = members.iter().any(|b| {
        b.primary_metric(None)
            .is_some_and(|m| m.histogram.is_some())
    });
    let others = match !ctx.timer && !ctx.wide && !distribution && ctx.metric.is_none() {
        true => other_units(members),
        false => Vec::new(),
    };
    let per_unit = others.iter().map(|unit| TableContext {
        title: Some(match &ctx.title {
            Some(t) => format!("{t} · {unit}"),
            None => unit.to_string(),
        }),
        metric: Some(unit),
        attribution: None,
        // A role's baseline is a time (Full): a share of it says nothing of bytes or a rate.
        baseline: ctx.baseline.clone().filter(|(_, role)| role.is_none()),
        ..ctx.clone()
    });
    let contexts: Vec<TableContext> = std::iter::once(ctx.clone()).chain(per_unit).collect();
    let mut built = build_tables(&contexts, members);
    // Beside tables of other units, the first says its own (`ns/op`) too.
    let first = members.iter().find_map(|b| b.primary_metric(None));
    if let (false, Some(first), Some((table, _))) = (others.is_empty(), first, built.first_mut()) {
        table.title = Some(match &ctx.title {
            Some(t) => format!("{t} · {}", first.name),
            None => first.name.clone(),
        });
    }
    built
}

/// The tables of `contexts` on `members`, each with its notes, in order. A large group's
/// tables (one per unit, each a row per benchmark) are built on every core at once.
fn build_tables(contexts: &[TableContext], members: &[&Benchmark]) -> Vec<(Table, Vec<Note>)> {
    let build = |ctx: &TableContext| {
        let mut notes = Vec::new();
        (ctx.table(members, None, &mut notes), notes)
    };
    if contexts.len() > 1 && members.len() >= PARALLEL_ROWS {
        use rayon::prelude::*;
        contexts.par_iter().map(build).collect()
    } else {
        contexts.iter().map(build).collect()
    }
}

/// Rows from which the tables of a group are built at once.
const PARALLEL_ROWS: usize = 4096;

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

/// Derives every metric's summary and percentiles from what was measured, spread over the
/// available cores.
pub fn summarize_all<'a>(runs: impl IntoIterator<Item = &'a mut Run>) {
    let mut metrics: Vec<(&mut Metric, Option<&TimerSummary>)> = runs
        .into_iter()
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
                        (Some(reported), _) => Some(Summary::clone(reported)),
                        (None, Some(h)) if metric.values.is_empty() => Summary::of_distribution(h),
                        _ => Summary::of_using(&metric.values, &mut work),
                    };
                    metric.percentiles = metric
                        .histogram
                        .as_ref()
                        .and_then(|h| Percentiles::of(h))
                        .map(|p| match timer {
                            Some(t) if metric.unit.dimension == Dimension::Time => {
                                p.within(t.min_ns as f64, t.max_ns as f64)
                            }
                            _ => p,
                        })
                        .map(Box::new);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::view::{Cell, keys};
    use crate::model::{BenchName, Environment, RunBuilder, Source, new_run};

    /// A Go run: each `(name, ns/op of each repetition)`.
    fn go_run(benches: &[(&str, &[f64])]) -> Run {
        let mut builder = RunBuilder::default();
        for (name, values) in benches {
            let bench = builder.benchmark(name, None, BenchName::parse_go);
            for &ns in *values {
                builder.record(bench, "ns/op", "ns/op", ns);
            }
        }
        let source = Source::unnamed_file("go");
        new_run(source, Environment::default(), Vec::new(), builder)
    }

    /// Each table's rows, by the name in their first cell.
    fn row_names(report: &Report) -> Vec<Vec<String>> {
        let name = |row: &crate::analyze::view::Row| match &row.cells[0] {
            Cell::Text { text } => text.clone(),
            other => panic!("a row named by {other:?}"),
        };
        report
            .tables
            .iter()
            .map(|t| t.rows.iter().map(name).collect())
            .collect()
    }

    /// The cell of `key` in each row of the first table.
    fn column(report: &Report, key: &str) -> Vec<Cell> {
        let table = &report.tables[0];
        let at = table.columns.iter().position(|c| c.key == key);
        let at = at.unwrap_or_else(|| panic!("no column {key}"));
        table.rows.iter().map(|r| r.cells[at].clone()).collect()
    }

    /// The first table's "% of" column.
    fn percents_of_baseline(report: &Report) -> Vec<f64> {
        column(report, keys::PCT_OF_BASELINE)
            .iter()
            .map(|c| match c {
                Cell::Percent { percent } => *percent,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_large_table_keeps_the_run_order_and_so_do_its_warnings() {
        // Composites 1, 3, 5... are faster than the part measured alone (each a warning, made
        // before its row's name moves into the row), the others slower.
        let part = ("BenchmarkP/1_Go-Client-Write", &[100.0][..]);
        let composites: Vec<(String, [f64; 1])> = (0..20_000)
            .map(|i| {
                (
                    format!("BenchmarkP/E2E-PressAndRelease_{i}"),
                    [if i % 2 == 1 { 50.0 } else { 400.0 }],
                )
            })
            .collect();
        let mut benches = vec![part];
        benches.extend(composites.iter().map(|(n, v)| (n.as_str(), &v[..])));
        let report = build_report(
            vec![go_run(&benches)],
            Vec::new(),
            &EnrichOptions::default(),
        )
        .unwrap();
        let expected: Vec<String> = std::iter::once("1_Go-Client-Write".to_string())
            .chain((0..20_000).map(|i| format!("E2E-PressAndRelease_{i}")))
            .collect();
        assert_eq!(row_names(&report), vec![expected]);
        let warned: Vec<&str> = report
            .notes
            .iter()
            .filter_map(|n| n.message.strip_suffix(" in BenchmarkP: the Client part measured alone exceeds this composite (400.00%); the runs are too noisy to attribute, or a role matches the wrong benchmark"))
            .collect();
        let odd: Vec<String> = (1..20_000)
            .step_by(2)
            .map(|i| format!("E2E-PressAndRelease_{i}"))
            .collect();
        assert_eq!(warned, odd);
    }

    #[test]
    fn a_large_groups_tables_of_each_unit_come_in_order() {
        // Past PARALLEL_ROWS, so the three tables are built on every core at once.
        let mut builder = RunBuilder::default();
        for i in 0..PARALLEL_ROWS + 10 {
            let bench = builder.benchmark(&format!("BenchmarkB{i}"), None, BenchName::parse_go);
            for (unit, value) in [("ns/op", 1e3), ("B/op", 16.0), ("allocs/op", 1.0)] {
                builder.record(bench, unit, unit, value * i as f64);
            }
        }
        let run = new_run(
            Source::unnamed_file("go"),
            Default::default(),
            vec![],
            builder,
        );
        let report = build_report(vec![run], vec![], &EnrichOptions::default()).unwrap();
        let titles: Vec<_> = report.tables.iter().map(|t| t.title.as_deref()).collect();
        assert_eq!(titles, [Some("ns/op"), Some("B/op"), Some("allocs/op")]);
        for (table, unit) in report.tables.iter().zip([1e3, 16.0, 1.0]) {
            let figures: Vec<Option<f64>> = (table.rows.iter())
                .map(|r| match r.cells[2] {
                    Cell::Value { value, .. } => Some(value),
                    _ => None,
                })
                .collect();
            let expected: Vec<_> = (0..PARALLEL_ROWS + 10)
                .map(|i| Some(unit * i as f64))
                .collect();
            assert_eq!(figures, expected, "{:?}", table.title);
        }
    }

    #[test]
    fn like_is_tabled_with_like_and_a_baseline_is_100_percent() {
        let run = go_run(&[
            ("BenchmarkEncode/small-8", &[100.0, 110.0, 90.0]),
            ("BenchmarkEncode/large-8", &[300.0, 330.0, 270.0]),
            ("BenchmarkDecode-8", &[50.0, 50.0, 50.0]),
            ("BenchmarkEncode/small-4", &[120.0, 120.0, 120.0]),
        ]);
        let opts = EnrichOptions {
            baseline: Some("BenchmarkEncode/small-8".into()),
            ..EnrichOptions::default()
        };
        let report = build_report(vec![run], Vec::new(), &opts).unwrap();
        let names = row_names(&report);
        // One table a top-level benchmark and GOMAXPROCS: -8 and -4 are not compared.
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[0].len(), 2, "{names:?}");
        let shares = percents_of_baseline(&report);
        assert_eq!(shares, [100.0, 300.0], "medians 100 and 300 ns");
    }

    #[test]
    fn relative_rows_are_against_the_best_and_per_run_tables_are_one_a_repetition() {
        let run = go_run(&[
            ("BenchmarkA-8", &[200.0, 210.0, 190.0]),
            ("BenchmarkB-8", &[100.0, 105.0, 95.0]),
        ]);
        let opts = EnrichOptions {
            relative: true,
            ..EnrichOptions::default()
        };
        let report = build_report(vec![run.clone()], Vec::new(), &opts).unwrap();
        let ratios: Vec<f64> = column(&report, keys::RELATIVE)
            .iter()
            .map(|c| match c {
                Cell::Ratio(r) => r.ratio,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            ratios,
            [2.0, 1.0],
            "B is the best row; A takes twice its time"
        );

        let opts = EnrichOptions {
            per_run: true,
            ..EnrichOptions::default()
        };
        let report = build_report(vec![run], Vec::new(), &opts).unwrap();
        let cycles: Vec<Option<usize>> = report.tables.iter().map(|t| t.cycle).collect();
        assert_eq!(cycles, [Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn a_baseline_that_matches_nothing_is_the_largest_value_and_said() {
        let run = go_run(&[
            ("BenchmarkA-8", &[1.0, 2.0, 3.0]),
            ("BenchmarkB-8", &[4.0, 4.0, 4.0]),
        ]);
        let opts = EnrichOptions {
            baseline: Some("BenchmarkNone*".into()),
            ..EnrichOptions::default()
        };
        let report = build_report(vec![run], Vec::new(), &opts).unwrap();
        let shares = percents_of_baseline(&report);
        assert_eq!(shares, [50.0, 100.0]);
        let said = report
            .notes
            .iter()
            .map(|n| n.message.as_str())
            .collect::<Vec<_>>();
        let expected = "baseline `BenchmarkNone*` not found";
        assert!(said.iter().any(|n| n.contains(expected)), "{said:?}");
    }
}
