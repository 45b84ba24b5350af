//! A/B runs for `go --interleave` and `gbench --interleave`: the base revision (a git
//! worktree) and the working tree take turns, A B A B, one repetition each per round, so
//! that host drift (other tenants, thermal state, frequency) hits both alike; the two pooled
//! runs are then compared as `latkit compare` would.

use super::{Interleave, Output, deliver, say_warnings};
use crate::analyze::compare::{CompareInput, compare};
use crate::error::{Error, Result};
use crate::model::{Note, Run};
use crate::runner::output::Outcome;
use crate::runner::worktree::Worktree;
use std::io::{IsTerminal, stderr};
use std::path::Path;

/// Rounds when none are asked for: six samples a side give medians a confidence interval
/// and the U test room to find a difference at alpha 0.05.
pub const DEFAULT_ROUNDS: u32 = 6;

/// Refuses what an A/B run cannot honour, before anything is built or run.
pub fn check_flags(output: &Output) -> Result<()> {
    if !output.format.comparison {
        let offered: Vec<&str> = crate::report::FORMATS
            .iter()
            .filter(|f| f.comparison)
            .map(|f| f.name)
            .collect();
        return Err(Error::Input(format!(
            "--interleave reports a comparison: --format must be one of {}",
            offered.join(", ")
        )));
    }
    if output.check.is_some() {
        return Err(Error::Input(
            "--interleave gates with --fail-on rules, not --check targets".into(),
        ));
    }
    if output.store.is_some() {
        return Err(Error::Input(
            "--interleave does not store: the base run would be filed under the working \
             tree's commit; store plain runs instead"
                .into(),
        ));
    }
    Ok(())
}

/// `--fail-on` without `--interleave` on a single run would silently gate nothing.
pub fn refuse_stray_gate(args: &Interleave) -> Result<()> {
    if args.base.is_none() && !args.gate.fail_on.is_empty() {
        return Err(Error::Input(
            "--fail-on compares against a base: give --interleave REV, or use `latkit compare`"
                .into(),
        ));
    }
    Ok(())
}

/// Which tree a round runs.
pub enum Side<'a> {
    Base(&'a Worktree),
    Working,
}

/// Runs `rounds` rounds of base then working tree through `run`, then reports the
/// comparison through `sinks`. `within` is a directory inside the repository.
pub fn run_rounds(
    args: &Interleave,
    rev: &str,
    within: &Path,
    rounds: u32,
    output: &Output,
    prepare: impl FnOnce(&Worktree) -> Result<()>,
    mut run: impl FnMut(&Side) -> Result<Outcome>,
) -> Result<()> {
    let sinks = {
        let mut sinks = super::output_sinks(output)?;
        sinks.push_verdict_if(!args.gate.fail_on.is_empty());
        sinks
    };
    // Before the checkout exists: from here an interrupt removes it on the way out.
    crate::interrupt::install();
    let base = Worktree::add(within, rev)?;
    prepare(&base)?;
    if crate::interrupt::requested() {
        return Err(Error::Interrupted);
    }
    let talk = !output.quiet && stderr().is_terminal();
    let Rounds {
        base_runs,
        working_runs,
        mut notes,
        interrupted,
    } = alternate(&base, rev, rounds, talk, &mut run)?;
    let pooled = |runs: Vec<Run>, label: String, notes: &mut Vec<Note>| -> Option<CompareInput> {
        let (run, merge_notes) = crate::ingest::merge(runs)?;
        notes.extend(merge_notes);
        Some(CompareInput {
            label,
            runs: vec![run],
        })
    };
    let base_label = format!("{rev} ({})", base.short());
    let inputs = match (
        pooled(base_runs, base_label, &mut notes),
        pooled(working_runs, "working tree".to_string(), &mut notes),
    ) {
        (Some(a), Some(b)) => vec![a, b],
        _ if interrupted => return Err(Error::Interrupted),
        _ => {
            return Err(Error::Failed(
                "a side ran no benchmark, so there is nothing to compare".into(),
            ));
        }
    };
    notes.push(Note::info(format!(
        "interleaved A/B: {rev} ({}) and the working tree ran alternately{}",
        base.commit,
        if interrupted {
            ", interrupted: the rounds that finished are compared".to_string()
        } else {
            format!(", {rounds} rounds")
        }
    )));
    let mut report = compare(inputs, &args.gate.options())?;
    notes.append(&mut report.notes);
    report.notes = notes;
    if !output.quiet && (output.out.is_some() || !std::io::stdout().is_terminal()) {
        say_warnings(&report.notes);
    }
    if interrupted {
        sinks.finish(&report)?;
        return Err(Error::Interrupted);
    }
    deliver(&report, sinks)
}

/// What the rounds ran: each side's runs, their notes, and whether an interrupt cut them.
#[derive(Default)]
struct Rounds {
    base_runs: Vec<Run>,
    working_runs: Vec<Run>,
    notes: Vec<Note>,
    interrupted: bool,
}

/// Runs base then working tree, `rounds` times; a failing run stops everything, an
/// interrupt keeps what finished.
fn alternate(
    base: &Worktree,
    rev: &str,
    rounds: u32,
    talk: bool,
    run: &mut impl FnMut(&Side) -> Result<Outcome>,
) -> Result<Rounds> {
    let mut done = Rounds::default();
    'rounds: for round in 1..=rounds {
        for side in [Side::Base(base), Side::Working] {
            let name = match side {
                Side::Base(_) => format!("base {rev} ({})", base.short()),
                Side::Working => "working tree".to_string(),
            };
            if talk {
                crate::error::say(&format!("latkit: round {round}/{rounds}: {name}"));
            }
            let outcome = run(&side)?;
            done.interrupted = outcome.interrupted;
            if !done.interrupted && !outcome.status.success() {
                return Err(Error::Failed(format!(
                    "the {name} run failed ({}); last lines of its output:\n{}",
                    outcome.status,
                    crate::error::visible_lines(&outcome.tail)
                )));
            }
            if let Some(input) = outcome.input {
                done.notes.extend(input.notes);
                match side {
                    Side::Base(_) => done.base_runs.extend(input.runs),
                    Side::Working => done.working_runs.extend(input.runs),
                }
            }
            if done.interrupted {
                break 'rounds;
            }
        }
    }
    Ok(done)
}
