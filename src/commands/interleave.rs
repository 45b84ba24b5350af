//! A/B runs for `go --interleave` and `gbench --interleave`: the base revision (a git
//! worktree) and the working tree take turns, one repetition each per round (A B, then B A),
//! so that host drift (other tenants, thermal state, frequency) and going first hit both
//! alike; the two pooled runs are then compared as `latkit compare` would.

use super::Env;
use super::{Interleave, Output, Runs, deliver_rounds, say_warnings};
use crate::analyze::auto_gate::{Against, AutoGate, Round};
use crate::analyze::compare::{CompareInput, CompareOptions, compare};
use crate::analyze::sequential::{Decision, Design};
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::{Note, Run};
use crate::report::sink::FanOut;
use crate::runner::output::Outcome;
use crate::runner::turn_order;
use crate::runner::worktree::Tree;
use std::path::Path;

/// Rounds when none are asked for: six samples a side give medians a confidence interval
/// and the U test room to find a difference at alpha 0.05.
pub const DEFAULT_ROUNDS: u32 = 6;
/// `--runs auto` bounds when none are given: a paired test needs three rounds to look at all;
/// thirty are enough to decide a change of the threshold's size under noise of about the
/// same size (docs/sequential.md).
pub const AUTO_MIN_ROUNDS: u64 = 3;
pub const AUTO_MAX_ROUNDS: u64 = 30;

/// How many rounds run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Plan {
    Fixed(u32),
    /// Until the gates are decided.
    Auto(Design),
}

impl Plan {
    /// The rounds, from `--runs`, `--min-runs`, `--max-runs` and the runner's own count
    /// (`rounds`, given as `count_flag` when the user gave it).
    pub fn of(args: &Interleave, rounds: u32, count_flag: Option<&str>) -> Result<Plan> {
        if let (Some(_), Some(flag)) = (args.runs, count_flag) {
            return Err(Error::Input(format!(
                "--runs and {flag} both set the rounds of --interleave: give one"
            )));
        }
        match args.runs {
            None | Some(Runs::Count(_)) if args.min_runs.is_some() || args.max_runs.is_some() => {
                Err(Error::Input(
                    "--min-runs and --max-runs bound --runs auto; with a fixed number of \
                     rounds give --runs N alone"
                        .into(),
                ))
            }
            None => Ok(Plan::Fixed(rounds)),
            Some(Runs::Count(n)) => Ok(Plan::Fixed(n)),
            Some(Runs::Auto) if args.gate.fail_within_noise => Err(fail_within_noise_refused()),
            Some(Runs::Auto) if args.gate.fail_on.is_empty() => Err(Error::Input(
                "--runs auto runs until a --fail-on gate is decided: give one, e.g. \
                 --fail-on ns/op:+5%"
                    .into(),
            )),
            Some(Runs::Auto) => {
                let min = args.min_runs.map_or(AUTO_MIN_ROUNDS, u64::from);
                let max = args.max_runs.map_or(AUTO_MAX_ROUNDS.max(min), u64::from);
                if max < min {
                    return Err(Error::Input(format!(
                        "--max-runs {max} is below --min-runs {min}"
                    )));
                }
                Ok(Plan::Auto(Design {
                    alpha: args.gate.alpha,
                    min_rounds: min as usize,
                    max_rounds: max as usize,
                }))
            }
        }
    }

    fn most(&self) -> u64 {
        match self {
            Plan::Fixed(n) => u64::from(*n),
            Plan::Auto(design) => design.max_rounds as u64,
        }
    }
}

/// `--fail-within-noise` asks a fixed design to fail what it cannot tell; a sequential one
/// tells it or ends undecided.
pub fn fail_within_noise_refused() -> Error {
    Error::Input(
        "--fail-within-noise has no meaning with --runs auto: a change is either decided or \
         the run ends undecided (exit 3)"
            .into(),
    )
}

/// Refuses what an A/B run cannot honour, before anything is built or run.
pub fn check_flags(output: &Output) -> Result<()> {
    if !output.format.can.compare {
        let offered: Vec<&str> = crate::report::FORMATS
            .iter()
            .filter(|f| f.can.compare)
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
    Base(&'a dyn Tree),
    Working,
}

/// The revision the working tree is compared with, and a directory inside its repository.
pub struct BaseRev<'a> {
    pub rev: &'a str,
    pub within: &'a Path,
}

/// Runs the rounds of base then working tree through `run`, then reports the comparison
/// through `sinks`.
pub fn run_rounds(
    args: &Interleave,
    BaseRev { rev, within }: BaseRev,
    plan: Plan,
    output: &Output,
    env: &Env,
    prepare: impl FnOnce(&dyn Tree) -> Result<()>,
    mut run: impl FnMut(&Side) -> Result<Outcome>,
) -> Result<()> {
    let console = &env.console;
    let mut sinks = super::output_sinks(output, env)?;
    sinks.push_verdict_if(!args.gate.fail_on.is_empty());
    let mut options = args.gate.options(env)?;
    options.change_interval = sinks.show_change_interval();
    // Before the checkout exists: from here an interrupt removes it on the way out.
    env.interrupt.install();
    let base = env.launch.checkout(within, rev)?;
    prepare(&*base)?;
    if env.interrupt.requested() {
        return Err(Error::Interrupted);
    }
    let talk = console.progress(output.quiet).map(|_| console);
    let mut auto = match plan {
        Plan::Auto(design) => {
            let gate = AutoGate::new(design, options.rules.clone(), Against::SameName);
            Some((gate, design))
        }
        Plan::Fixed(_) => None,
    };
    let turns = Turns {
        arms: [
            (Side::Base(&*base), format!("base {rev} ({})", base.short())),
            (Side::Working, "working tree".to_string()),
        ],
        plan,
        talk,
    };
    let Rounds {
        rounds,
        mut notes,
        interrupted,
    } = turns.alternate(auto.as_mut().map(|(gate, _)| gate), &mut run)?;
    let ran = rounds.len();
    let base_label = format!("{rev} ({})", base.short());
    let inputs = pooled_sides(&rounds, &base_label, interrupted, &mut notes)?;
    notes.push(Note::info(format!(
        "interleaved A/B: {rev} ({}) and the working tree ran alternately{}",
        base.commit(),
        if interrupted {
            ", interrupted: the rounds that finished are compared".to_string()
        } else {
            format!(", {ran} rounds")
        }
    )));
    if let Some((gate, design)) = &auto {
        notes.extend(auto_floor_notes(
            &options,
            design,
            &working_benchmarks(&rounds),
        ));
        // The sequential test decides, and its rows show its figures; a fixed-design test
        // after optional stopping would not hold its alpha.
        options.rules.clear();
        options.decided = gate.decided();
        notes.push(Note::info(gate.note(design)));
    }
    let mut report = compare(inputs, &options)?;
    if let Some((gate, _)) = &auto {
        report.verdict = Some(gate.verdict(&base_label, &rounds));
    }
    notes.append(&mut report.notes);
    report.notes = notes;
    if !output.quiet && (output.out.is_some() || !console.stdout.at_terminal()) {
        say_warnings(&report.notes, console);
    }
    if interrupted {
        sinks.finish(&mut report)?;
        return Err(Error::Interrupted);
    }
    deliver_rounds(report, sinks, ran)
}

/// What the calibration says `--runs auto`'s rounds cannot decide for the `gated` benchmarks.
pub fn auto_floor_notes(options: &CompareOptions, design: &Design, gated: &[&str]) -> Vec<Note> {
    let (floors, rules) = (&options.floors, &options.rules);
    let max = design.max_rounds as u64;
    crate::analyze::noise_floor::under_auto(floors, gated, rules, max, options.alpha)
        .into_iter()
        .map(Note::warning)
        .collect()
}

/// The benchmarks the working tree ran in the first round: those `--runs auto` gated.
fn working_benchmarks(rounds: &[Round]) -> Vec<&str> {
    (rounds.first().into_iter())
        .flat_map(|round| &round.1)
        .flat_map(|run| &run.benchmarks)
        .map(|bench| bench.name.full_name.as_str())
        .collect()
}

/// Each side's runs of every round, pooled into one run to compare; an error when a side ran
/// nothing (interrupted: exit 130).
fn pooled_sides(
    rounds: &[Round],
    base_label: &str,
    interrupted: bool,
    notes: &mut Vec<Note>,
) -> Result<Vec<CompareInput>> {
    let mut pooled = |runs: Vec<Run>, label: &str| -> Option<CompareInput> {
        let (run, merge_notes) = crate::ingest::merge(runs)?;
        notes.extend(merge_notes);
        Some(CompareInput {
            label: label.to_string(),
            runs: vec![run],
        })
    };
    let side = |pick: fn(&Round) -> &Vec<Run>| -> Vec<Run> {
        rounds
            .iter()
            .flat_map(|r| pick(r).iter().cloned())
            .collect()
    };
    match (
        pooled(side(|r| &r.0), base_label),
        pooled(side(|r| &r.1), "working tree"),
    ) {
        (Some(a), Some(b)) => Ok(vec![a, b]),
        _ if interrupted => Err(Error::Interrupted),
        _ => Err(Error::Peer(
            "a side ran no benchmark, so there is nothing to compare".into(),
        )),
    }
}

/// What the rounds ran: each round's runs of both sides, their notes, and whether an
/// interrupt cut them.
#[derive(Default)]
pub struct Rounds {
    pub rounds: Vec<Round>,
    pub notes: Vec<Note>,
    pub interrupted: bool,
}

/// What an A/A run of a runner gives: its rounds, the runs a side the runner takes when run
/// alone, and where its report goes.
pub struct AaRun {
    pub done: Rounds,
    pub runs: u64,
    pub sinks: FanOut,
    pub quiet: bool,
}

/// Refuses, for a calibration, what would make the run anything but the suite against itself.
pub fn refuse_comparison(flag: Option<&str>) -> Result<()> {
    match flag {
        Some(flag) => Err(Error::Input(format!(
            "latkit calibrate runs the suite against itself: {flag} has no place in it (give \
             the command as you run it alone)"
        ))),
        None => Ok(()),
    }
}

/// An A/A run for `latkit calibrate`: the working tree against itself, `rounds` rounds of two
/// arms taking turns.
pub fn against_itself(
    rounds: u32,
    talk: Option<&Console>,
    mut run: impl FnMut(&Side) -> Result<Outcome>,
) -> Result<Rounds> {
    let turns = Turns {
        arms: [
            (Side::Working, "working tree, first arm".to_string()),
            (Side::Working, "working tree, second arm".to_string()),
        ],
        plan: Plan::Fixed(rounds),
        talk,
    };
    turns.alternate(None, &mut run)
}

/// How the sides take turns: the two arms of a round, each with the name progress shows on
/// the console to `talk` to, if any.
struct Turns<'a> {
    arms: [(Side<'a>, String); 2],
    plan: Plan,
    talk: Option<&'a Console>,
}

impl Turns<'_> {
    /// Runs the arms in turn, round after round, until the plan's rounds ran or `auto`
    /// decided; a failing run stops everything, an interrupt keeps the rounds that finished.
    fn alternate(
        &self,
        mut auto: Option<&mut AutoGate>,
        run: &mut impl FnMut(&Side) -> Result<Outcome>,
    ) -> Result<Rounds> {
        let mut done = Rounds::default();
        for round in 1..=self.plan.most() {
            let finished = self.round(round, &mut done, run)?;
            if !finished {
                break;
            }
            if let Some(gate) = auto.as_deref_mut()
                && gate.look(&done.rounds)? != Decision::Continue
            {
                break;
            }
        }
        Ok(done)
    }

    /// One round, its arms in turn order (A B, then B A); whether both finished.
    fn round(
        &self,
        round: u64,
        done: &mut Rounds,
        run: &mut impl FnMut(&Side) -> Result<Outcome>,
    ) -> Result<bool> {
        let mut this: Round = Default::default();
        for arm in turn_order(round - 1, self.arms.len()) {
            let (side, name) = &self.arms[arm];
            if let Some(console) = self.talk {
                let of = match self.plan {
                    Plan::Fixed(n) => format!("{round}/{n}"),
                    Plan::Auto(d) => format!("{round} (until decided, at most {})", d.max_rounds),
                };
                console.say(&format!("latkit: round {of}: {name}"));
            }
            let outcome = run(side)?;
            done.interrupted = outcome.interrupted;
            if !done.interrupted && !outcome.status.success() {
                return Err(Error::Peer(format!(
                    "the {name} run failed ({}); last lines of its output:\n{}",
                    outcome.status,
                    crate::error::visible_lines(&outcome.tail)
                )));
            }
            if let Some(input) = outcome.input {
                done.notes.extend(input.notes);
                match arm {
                    0 => this.0.extend(input.runs),
                    _ => this.1.extend(input.runs),
                }
            }
            if done.interrupted {
                // What the cut round ran is kept (a fixed design pools it); the paired
                // test finds no pair in it.
                done.rounds.push(this);
                return Ok(false);
            }
        }
        done.rounds.push(this);
        Ok(true)
    }
}
