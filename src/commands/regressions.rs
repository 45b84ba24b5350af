//! `latkit history --regressions`: the changes that hold in the stored history, regressions
//! first and newest first, as a report; exit 1 when any is a regression, as a gate fails.

use super::Env;
use super::store::HistoryOptions;
use super::survey;
use crate::analyze::Report;
use crate::analyze::regressions::Finding;
use crate::analyze::view::{Cell, Change, ChangeVerdict, Column, Row, Table, keys};
use crate::error::{Error, Result};
use crate::report::sink::{Destination, FanOut, Rendered};

pub fn list(args: HistoryOptions, env: &Env) -> Result<()> {
    if !args.plots.files.is_empty() {
        return Err(Error::Input(
            "--plot draws trends; --regressions lists changes and has none to draw (`latkit \
             site` draws every trend with its changes)"
                .into(),
        ));
    }
    let mut sinks = FanOut::new(false, &env.console);
    sinks.push(Rendered::new(
        args.format,
        Destination::open(args.out.as_deref(), &env.console.stdout)?,
    ));
    let (findings, _, notes) = survey::regressions(
        args.db.as_deref(),
        &args.selection,
        args.alpha,
        |_, _, _| (),
    )?;
    let (worse, better): (Vec<&Finding>, Vec<&Finding>) = findings.iter().partition(|f| f.worse());
    let mut tables = vec![table("Regressions", &worse)];
    if !better.is_empty() {
        tables.push(table("Improvements", &better));
    }
    let report = Report {
        runs: Vec::new(),
        tables,
        notes,
        verdict: None,
    };
    sinks.finish(&report)?;
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
                Cell::Change(Change {
                    percent: Some(f.percent),
                    p: Some(f.adjusted),
                    interval: f.interval,
                    n_base: f.runs_before as u64,
                    n: f.runs as u64,
                    verdict: ChangeVerdict::Significant,
                    better: f.better,
                    diagnostics: Vec::new(),
                }),
                text(f.interval_text()),
                text(f.commit_range()),
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
            Column::new("Figure", "figure").dropped_at(2),
            Column::new("Change (p adj., runs)", keys::CHANGE),
            Column::new("95% CI", keys::CI95).dropped_at(1),
            Column::new("Commits", keys::COMMIT),
            Column::new("First run", keys::STORED_RUN).dropped_at(3),
            Column::new("Stored", keys::STORED_AT).dropped_at(3),
            Column::new("Found by", "found_by").dropped_at(2),
        ],
        rows,
    }
}
