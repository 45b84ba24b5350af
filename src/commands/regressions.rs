//! `latkit history --regressions`: the changes that hold in the stored history, regressions
//! first and newest first, as a report; exit 1 when any is a regression, as a gate fails.

use super::Env;
use super::store::HistoryOptions;
use super::survey;
use crate::analyze::Report;
use crate::analyze::regressions::{Finding, Kind};
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

/// `3f2a9c1d40..8be0a1c7d2`: the commits after the run before the change up to the first
/// run after it, as `git log` takes them.
pub fn commit_range(finding: &Finding) -> String {
    let short = |run: &crate::store::StoredRun| {
        run.short_commit().unwrap_or_else(|| format!("#{}", run.id))
    };
    format!("{}..{}", short(&finding.before), short(&finding.after))
}

/// How a change was found, in words: `change point`, `newest 3 runs`.
pub fn found_by(finding: &Finding) -> String {
    match (finding.kind, finding.runs) {
        (Kind::ChangePoint, _) => "change point".into(),
        (Kind::Recent, 1) => "newest run".into(),
        (Kind::Recent, n) => format!("newest {n} runs"),
    }
}

/// `+23.1% … +26.4%`.
pub fn interval_text(finding: &Finding) -> String {
    finding
        .interval
        .map(|(low, high)| format!("{low:+.1}% … {high:+.1}%"))
        .unwrap_or_default()
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
                text(interval_text(f)),
                text(commit_range(f)),
                text(format!("#{}", f.after.id)),
                text(f.after.stored_at.clone()),
                text(found_by(f)),
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
