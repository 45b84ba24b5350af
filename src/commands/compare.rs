use super::Env;
use super::store::{LazyStore, ReadInput, labelled_file, read_file_input, read_input};
use super::{Gate, Plots, Reading, say_warnings};
use crate::analyze::compare::{self as analysis, CompareInput, Family, ProjectedTable, compare};
use crate::analyze::envdiff;
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::{Note, identities};
use crate::report::sink::{Destination, FanOut, Junit, Rendered};
use crate::store::{Store, StoredRef};
use std::path::PathBuf;

/// What `latkit compare` compares, how it decides and where the report goes.
pub struct CompareOptions {
    /// Files or stored runs; the first is the base.
    pub inputs: Vec<String>,
    pub reading: Reading,
    pub gate: Gate,
    /// One family pattern per input (or two with one input), as compare.py's filters.
    pub families: Vec<String>,
    /// benchstat's `-filter`: the results and units kept.
    pub filter: Option<crate::spec::filter::Filter>,
    /// benchstat's `-table`, `-row` and `-col`: where each result goes.
    pub projections: crate::spec::projection::Projections,
    /// Compare only this metric.
    pub metric: Option<String>,
    /// The statistics compared for distributions.
    pub statistics: Vec<String>,
    pub allow_env_mismatch: bool,
    /// Settings whose differences are ignored.
    pub ignore: Vec<String>,
    /// What the geomean row summarises.
    pub geomean: analysis::GeomeanOf,
    /// Pool the last N matching stored runs as the base.
    pub against_history: Option<usize>,
    /// The history store's location.
    pub db: Option<String>,
    pub format: &'static crate::report::OutputFormat,
    /// The report's file; `None` is standard output.
    pub out: Option<PathBuf>,
    /// Also the `--fail-on` verdict as JUnit XML.
    pub junit: Option<PathBuf>,
    pub quiet: bool,
    pub plots: Plots,
}

/// An input's notes for a comparison of several: each names the input it came from, and those
/// that restate a check of its runs' environment (other processes kept the CPUs busy) or what
/// counted figures miss are left to the comparison, which says them once.
fn attributed(label: &str, runs: &[crate::model::Run], notes: Vec<Note>) -> Vec<Note> {
    let checks: Vec<&str> = runs
        .iter()
        .flat_map(|r| &r.environment.checks)
        .map(|c| c.found.as_str())
        .filter(|found| !found.is_empty())
        .collect();
    notes
        .into_iter()
        .filter(|n| !checks.iter().any(|found| n.message.contains(found)))
        .filter(|n| n.message != crate::analyze::counted::WHAT_COUNTS_MISS)
        .map(|n| Note {
            file: n.file.or_else(|| Some(label.to_string())),
            ..n
        })
        .collect()
}

/// Compares inputs against the first: tables on stdout (or `--out`), the `--fail-on`
/// verdict on stderr and in JUnit; exit 1 on a significant regression.
pub fn run(args: CompareOptions, env: &Env) -> Result<()> {
    let console = &env.console;
    let mut sinks = FanOut::new(args.quiet, console, env.report_time()?);
    sinks.push(Rendered::new(
        args.format,
        Destination::open(args.out.as_deref(), &console.stdout)?,
    ));
    sinks.push_verdict_if(!args.gate.fail_on.is_empty());
    sinks.push_plots(&args.plots.pairs()?)?;
    if let Some(path) = &args.junit {
        sinks.push(Junit(Destination::open(
            Some(path),
            &sinks.console().stdout,
        )?));
    }
    let mut store = LazyStore::new(args.db.as_deref(), &env.vars);
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    for read in read_all(&args.inputs, &args.reading, &mut store, console) {
        let (label, runs, read_notes) = read?;
        notes.extend(attributed(&label, &runs, read_notes));
        inputs.push(CompareInput { label, runs });
    }
    if !args.families.is_empty() {
        inputs = families(inputs, &args.families)?;
    }
    if let Some(filter) = &args.filter {
        filtered(&mut inputs, filter)?;
    }
    if let Some(n) = args.against_history {
        let (pool, note) = history_pool(store.existing()?, &inputs, n)?;
        notes.extend(note);
        inputs.insert(0, pool);
    }
    let opts = analysis::CompareOptions {
        metric: args.metric.clone(),
        statistics: args.statistics.clone(),
        allow_env_mismatch: args.allow_env_mismatch,
        ignore: args.ignore.clone(),
        geomean: args.geomean,
        change_interval: sinks.show_change_interval(),
        ..args.gate.options(env)?
    };
    let tables = match args.projections.any() {
        true => {
            let (tables, pooled) = analysis::project(inputs, &args.projections);
            notes.extend(pooled);
            tables
        }
        false => vec![ProjectedTable {
            heading: String::new(),
            columns: inputs,
        }],
    };
    let mut report = compared_tables(tables, &opts)?;
    notes.append(&mut report.notes);
    report.notes = notes;
    if !args.quiet && (args.out.is_some() || !console.stdout.at_terminal()) {
        say_warnings(&report.notes, console);
    }
    super::deliver(report, sinks)
}

/// Each table compared, one report of them all: the tables' headings lead their titles (and
/// their gate's benchmark names), runs are numbered across them.
fn compared_tables(
    tables: Vec<ProjectedTable>,
    opts: &analysis::CompareOptions,
) -> Result<crate::analyze::view::Report> {
    if tables.is_empty() {
        return Err(Error::Input(
            "--table/--row/--col: no result has a value the fixed orders list".into(),
        ));
    }
    let mut merged: Option<crate::analyze::view::Report> = None;
    for table in tables {
        let heading = table.heading;
        let mut report = compare(table.columns, opts).map_err(|e| match heading.is_empty() {
            true => e,
            false => Error::Input(format!("table {heading}: {e}")),
        })?;
        if !heading.is_empty() {
            for t in &mut report.tables {
                t.title = Some(match &t.title {
                    Some(title) => format!("{heading} · {title}"),
                    None => heading.clone(),
                });
            }
            for target in report.verdict.iter_mut().flat_map(|v| &mut v.targets) {
                target.bench = format!("{heading}: {}", target.bench);
            }
        }
        let Some(all) = &mut merged else {
            merged = Some(report);
            continue;
        };
        for t in &mut report.tables {
            t.run += all.runs.len();
        }
        all.runs.append(&mut report.runs);
        all.tables.append(&mut report.tables);
        all.notes.append(&mut report.notes);
        if let Some(verdict) = report.verdict {
            match &mut all.verdict {
                Some(v) => v.targets.extend(verdict.targets),
                None => all.verdict = Some(verdict),
            }
        }
    }
    Ok(merged.expect("at least one table"))
}

/// Every input in order; files are read each on a thread of its own, so that two large
/// files take the time of one (stored runs and stdin in turn, as they come).
fn read_all(
    specs: &[String],
    reading: &Reading,
    store: &mut LazyStore,
    console: &Console,
) -> Vec<Result<ReadInput>> {
    std::thread::scope(|scope| {
        let files: Vec<_> = specs
            .iter()
            .map(|spec| {
                let file = spec != "-" && StoredRef::parse(spec).is_ok_and(|r| r.is_none());
                file.then(|| {
                    scope.spawn(move || {
                        let (label, path) = labelled_file(spec);
                        let (file_label, runs, notes) = read_file_input(path, reading, console)?;
                        Ok((label.map_or(file_label, str::to_string), runs, notes))
                    })
                })
            })
            .collect();
        specs
            .iter()
            .zip(files)
            .map(|(spec, file)| match file {
                Some(thread) => thread.join().expect("a reading thread panicked"),
                None => read_input(spec, reading, store, console),
            })
            .collect()
    })
}

/// `--filter`: each benchmark keeps the units the filter keeps, and goes when none is left.
fn filtered(inputs: &mut [CompareInput], filter: &crate::spec::filter::Filter) -> Result<()> {
    use crate::spec::filter::Subject;
    for input in inputs.iter_mut() {
        for run in &mut input.runs {
            let config = run.config.clone();
            for bench in &mut run.benchmarks {
                let kept: Vec<bool> = (bench.metrics.iter())
                    .map(|m| {
                        filter.keeps(&Subject {
                            bench,
                            unit: &m.name,
                            file: &input.label,
                            config: &config,
                        })
                    })
                    .collect();
                let mut kept = kept.into_iter();
                bench.metrics.retain(|_| kept.next().unwrap_or(false));
            }
            run.benchmarks.retain(|b| !b.metrics.is_empty());
        }
        if input.runs.iter().all(|r| r.benchmarks.is_empty()) {
            return Err(Error::Input(format!(
                "--filter: nothing of {} matches it",
                input.label
            )));
        }
    }
    Ok(())
}

/// `--family`: each input narrowed to its family (a single input serves both of two).
fn families(mut inputs: Vec<CompareInput>, patterns: &[String]) -> Result<Vec<CompareInput>> {
    let families: Vec<Family> = patterns
        .iter()
        .map(|p| Family::new(p))
        .collect::<Result<_>>()?;
    if inputs.len() == 1 && families.len() == 2 {
        let copy = CompareInput {
            label: inputs[0].label.clone(),
            runs: inputs[0].runs.clone(),
        };
        inputs.push(copy);
    }
    if families.len() != inputs.len() {
        return Err(Error::Input(format!(
            "--family given {} times for {} inputs: give one per input, or two with a single input",
            families.len(),
            inputs.len()
        )));
    }
    let replacement = format!("[{}]", patterns.join(" vs. "));
    inputs
        .into_iter()
        .zip(&families)
        .map(|(input, family)| {
            let runs = family.select(input.runs, &replacement);
            if runs.iter().all(|r| r.benchmarks.is_empty()) {
                return Err(Error::Input(format!(
                    "--family {}: no benchmark of {} matches it",
                    family.pattern(),
                    input.label
                )));
            }
            Ok(CompareInput {
                label: format!("{} ({})", input.label, family.pattern()),
                runs,
            })
        })
        .collect()
}

/// How many stored runs sharing a benchmark `--against-history` decodes at most while
/// looking for a matching environment.
const SEARCH_LIMIT: usize = 1000;

/// The newest `n` stored runs that share a benchmark with the inputs and come from a
/// matching environment, pooled into one base.
fn history_pool(
    store: &mut Store,
    inputs: &[CompareInput],
    n: usize,
) -> Result<(CompareInput, Option<Note>)> {
    let Some(reference) = inputs.iter().flat_map(|i| &i.runs).next() else {
        return Err(Error::Input(
            "--against-history: the inputs hold no run".into(),
        ));
    };
    // Only runs that share a benchmark are decoded: the figures index finds them.
    let mut names: Vec<&str> = inputs
        .iter()
        .flat_map(|i| &i.runs)
        .flat_map(|r| identities(&r.benchmarks.iter().map(|b| &b.name).collect::<Vec<_>>()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let candidates = store.runs_with_benches(&names, SEARCH_LIMIT)?;
    let mut pool = Vec::new();
    let mut ids = Vec::new();
    for candidate in candidates {
        if pool.len() == n {
            break;
        }
        let Some((_, run, _)) = store.load(candidate.id)? else {
            continue;
        };
        if envdiff::differences(&run, reference).is_empty() {
            ids.push(format!("#{}", candidate.id));
            pool.push(run);
        }
    }
    if pool.is_empty() {
        return Err(Error::Input(format!(
            "--against-history: {} holds no run of these benchmarks from a matching environment",
            store.describe()
        )));
    }
    let note = (pool.len() < n).then(|| {
        Note::warning(format!(
            "--against-history {n}: only {} matching stored runs",
            pool.len()
        ))
    });
    ids.reverse();
    let label = format!("history ({} runs: {})", pool.len(), ids.join(" "));
    Ok((CompareInput { label, runs: pool }, note))
}
