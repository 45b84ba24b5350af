//! `latkit history`: the trend of each benchmark across stored runs, or with `--regressions`
//! the changes that hold in the whole history, regressions first and newest first, with the
//! exit code of a gate when any is a regression.

use super::Env;
use super::Plots;
use super::store::LazyStore;
use super::survey::{self, Selection};
use crate::analyze::Report;
use crate::analyze::history::trend;
use crate::analyze::regressions::Finding;
use crate::analyze::view::{Cell, Change, ChangeVerdict, Column, Row, Table, keys};
use crate::error::{Error, Result};
use crate::model::Note;
use crate::report::sink::{Destination, FanOut, Rendered};
use std::path::PathBuf;

/// How many of the newest runs a trend shows when `--last` does not say.
pub const DEFAULT_LAST: usize = 20;

/// The trends `latkit history` shows, or with `regressions` the changes that hold.
pub struct HistoryOptions {
    /// The series (`last`: `None` is [`DEFAULT_LAST`] for trends, every run for regressions).
    pub selection: Selection,
    /// List the changes that hold instead of the trends, and fail when any is a regression.
    pub regressions: bool,
    /// Significance level: of changes between consecutive runs, or of the family.
    pub alpha: f64,
    pub format: &'static crate::report::OutputFormat,
    /// The report's file; `None` is standard output.
    pub out: Option<PathBuf>,
    /// The history store's location.
    pub db: Option<String>,
    pub plots: Plots,
}

/// `latkit history`: one trend table per matching benchmark.
pub fn run(args: HistoryOptions, env: &Env) -> Result<()> {
    if args.regressions {
        return regressions(args, env);
    }
    let mut sinks = FanOut::new(false, &env.console, env.report_time()?);
    sinks.push(Rendered::new(
        args.format,
        Destination::open(args.out.as_deref(), &env.console.stdout)?,
    ));
    sinks.push_plots(&args.plots.pairs()?)?;
    let mut lazy = LazyStore::new(args.db.as_deref(), &env.vars);
    let store = lazy.existing()?;
    // Changes are found in each series' whole history, as --regressions and the site find
    // them; the newest `last` runs (after the --since run) are shown.
    let last = args.selection.last.unwrap_or(DEFAULT_LAST);
    let selection = Selection {
        last: None,
        ..args.selection.clone()
    };
    let (findings, shown, mut notes) = survey::regressions(
        store,
        &selection,
        args.alpha,
        |bench, points, _, from_base| {
            let base = usize::from(from_base);
            let start = base.max(points.len().saturating_sub(last));
            let places: Vec<usize> = (0..base).chain(start..points.len()).collect();
            let points: Vec<_> = places.iter().map(|&i| points[i].clone()).collect();
            (bench.to_string(), points, places, from_base)
        },
    )?;
    let tables = shown
        .iter()
        .map(|(bench, points, places, from_base)| {
            let own: Vec<&Finding> = findings.iter().filter(|f| &f.bench == bench).collect();
            trend(bench, points, places, &own, args.alpha, *from_base)
        })
        .collect();
    // With --since, the series (and so the changes found in them) start at that run.
    let judged_over = match selection.since {
        Some(_) => "runs from the --since run on",
        None => "whole stored history",
    };
    notes.insert(
        0,
        Note::info(format!(
            "Change: ▲/▼ a step at its run and ↗/↘ a steady trend over its runs, found in each \
             series' {judged_over} (--regressions lists them); `vs previous` tests each run \
             against the one before it"
        )),
    );
    if selection.since.is_some() {
        notes.push(Note::info(
            "`vs base` is each later run's change from the --since run, tested as consecutive \
             runs are",
        ));
    }
    let mut report = Report {
        generated: None,
        runs: Vec::new(),
        tables,
        notes,
        verdict: None,
    };
    sinks.finish(&mut report)
}

fn regressions(args: HistoryOptions, env: &Env) -> Result<()> {
    if !args.plots.files.is_empty() {
        return Err(Error::Input(
            "--plot draws trends; --regressions lists changes and has none to draw (`latkit \
             site` draws every trend with its changes)"
                .into(),
        ));
    }
    let mut sinks = FanOut::new(false, &env.console, env.report_time()?);
    sinks.push(Rendered::new(
        args.format,
        Destination::open(args.out.as_deref(), &env.console.stdout)?,
    ));
    let mut lazy = LazyStore::new(args.db.as_deref(), &env.vars);
    let (findings, _, notes) = survey::regressions(
        lazy.existing()?,
        &args.selection,
        args.alpha,
        |_, _, _, _| (),
    )?;
    let (worse, better): (Vec<&Finding>, Vec<&Finding>) = findings.iter().partition(|f| f.worse());
    let mut tables = vec![table("Regressions", &worse)];
    if !better.is_empty() {
        tables.push(table("Improvements", &better));
    }
    let mut report = Report {
        generated: None,
        runs: Vec::new(),
        tables,
        notes,
        verdict: None,
    };
    sinks.finish(&mut report)?;
    match worse.len() {
        0 => Ok(()),
        n => Err(Error::Failed(format!(
            "{n} regression(s) in the stored history"
        ))),
    }
}

fn table(title: &str, findings: &[&Finding]) -> Table {
    let text = |text: String| Cell::Text { text };
    let rows = findings
        .iter()
        .map(|f| Row {
            benchmark: f.bench.clone(),
            cells: vec![
                text(f.bench.clone()),
                text(f.what.clone()),
                Cell::Change(Box::new(Change {
                    percent: Some(f.percent),
                    p: Some(f.adjusted),
                    interval: f.interval,
                    n_base: f.runs_before as u64,
                    n: f.runs as u64,
                    verdict: ChangeVerdict::Significant,
                    better: f.better,
                    diagnostics: Vec::new(),
                })),
                text(f.interval_text()),
                text(match f.commits {
                    Some(_) => format!("{} ({})", f.commit_range(), f.commits_text()),
                    None => f.commit_range(),
                }),
                text(format!("#{}", f.after.id)),
                text(f.after.stored_at.clone()),
                text(f.found_by()),
            ],
        })
        .collect();
    Table {
        title: Some(title.to_string()),
        run: 0,
        cycle: None,
        columns: vec![
            Column::new("Benchmark", keys::BENCHMARK),
            Column::new("Figure", keys::FIGURE).dropped_at(2),
            Column::new("Change (p adj., runs)", keys::CHANGE),
            Column::new("95% CI", keys::CI95).dropped_at(1),
            Column::new("Commits", keys::COMMIT),
            Column::new("First run", keys::STORED_RUN).dropped_at(3),
            Column::new("Stored", keys::STORED_AT).dropped_at(3),
            Column::new("Found by", keys::FOUND_BY).dropped_at(2),
        ],
        rows,
    }
}
