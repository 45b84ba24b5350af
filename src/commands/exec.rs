use super::{
    Gate, ReportOptions, deliver_rounds, enrich_options, load_suite, output_sinks, warn_on_stderr,
};
use crate::analyze::auto_gate::{Against, AutoGate, Round};
use crate::analyze::build_report;
use crate::analyze::sequential::{Decision, Design};
use crate::error::{Error, Result};
use crate::model::Note;
use crate::report::sink::LiveEvent;
use crate::runner::exec::{CommandOutput, Ending, Exec, Processes, Timing};
use crate::runner::plan::plan;
use std::io::{IsTerminal, stderr};

/// Commands to time, hyperfine's way.
pub struct ExecOptions {
    /// Command lines, as a shell would split them.
    pub commands: Vec<String>,
    /// Names for the commands at the same positions.
    pub names: Vec<String>,
    /// Each parameter's values, `{NAME}` replaced in commands and names.
    pub parameters: Vec<(String, Vec<String>)>,
    pub timing: Timing,
    /// Where the timed commands' output goes.
    pub output: CommandOutput,
    /// `--runs auto`: rounds until the gates are decided, within the timing's run bounds.
    pub auto: bool,
    pub gate: Gate,
    pub report: ReportOptions,
}

/// The sequential design of `--runs auto`, refused where it cannot decide; `None` without it.
fn sequential_design(args: &ExecOptions) -> Result<Option<Design>> {
    let (gate, timing) = (&args.gate, &args.timing);
    if let Some(max) = timing.max_runs
        && max < timing.min_runs
        && timing.runs.is_none()
    {
        return Err(Error::Input(format!(
            "--max-runs {max} is below --min-runs {}",
            timing.min_runs
        )));
    }
    if !args.auto {
        return match gate.fail_on.first() {
            Some(rule) => Err(Error::Input(format!(
                "--fail-on {} on exec gates --runs auto, which runs the commands in rounds \
                 until the gate is decided; to gate fixed runs, store them and use `latkit \
                 compare --fail-on`",
                rule.text
            ))),
            None => Ok(None),
        };
    }
    if gate.fail_on.is_empty() {
        return Err(Error::Input(
            "--runs auto runs until a --fail-on gate is decided: give one, e.g. \
             --fail-on time:+5%"
                .into(),
        ));
    }
    if gate.fail_within_noise {
        return Err(super::interleave::fail_within_noise_refused());
    }
    Ok(Some(Design {
        alpha: gate.alpha,
        min_rounds: timing.min_runs as usize,
        max_rounds: timing.max_runs.unwrap_or(u64::MAX) as usize,
    }))
}

pub fn run(args: ExecOptions) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let mut opts = enrich_options(&args.report, &suite)?;
    let mut sinks = output_sinks(&args.report.output)?;
    let design = sequential_design(&args)?;
    let commands = plan(args.commands, &args.names, &args.parameters)?;
    // Several commands are run to be compared: how many times slower than the fastest.
    opts.relative |= commands.len() > 1;
    if design.is_some() && commands.len() < 2 {
        return Err(Error::Input(
            "--runs auto compares the commands after the first against it: give two or more".into(),
        ));
    }
    let reference = commands[0].name.clone();
    let exec = Exec {
        commands,
        timing: args.timing,
        spawner: Box::new(Processes::new(args.output)?),
        progress: !args.report.output.quiet && stderr().is_terminal(),
    };
    let mut auto = design.map(|design| {
        let rules = args.gate.options().rules;
        (
            AutoGate::new(design, rules, Against::Reference(reference)),
            design,
        )
    });
    let mut rounds: Vec<Round> = Vec::new();
    let timed = match &mut auto {
        Some((gate, design)) => exec.run_rounds(design.max_rounds as u64, &mut |run| {
            rounds.push((vec![run.clone()], vec![run]));
            Ok(gate.look(&rounds)? != Decision::Continue)
        })?,
        // Each finished command is written at once (as hyperfine exports), so that a failure
        // or an interrupt later on cannot lose it.
        None => exec.run(&mut |so_far| {
            let report = build_report(so_far.runs.clone(), so_far.notes.clone(), &opts)?;
            sinks
                .live(&LiveEvent::Partial(&report))
                .map_err(|(name, e)| Error::io(&name, e))
        })?,
    };
    let Some(input) = timed.input else {
        return Err(match timed.ending {
            Ending::Failed(failure) => failure,
            _ => {
                crate::error::say(
                    "latkit: interrupted before any command finished a timed run: nothing was \
                     measured, so nothing is reported or written",
                );
                Error::Interrupted
            }
        });
    };
    let mut report = build_report(input.runs, input.notes, &opts)?;
    if let Some((gate, design)) = &auto {
        report.notes.push(Note::info(gate.note(design)));
        report.verdict = Some(gate.verdict("", &rounds));
        sinks.push_verdict_if(true);
    }
    warn_on_stderr(&report, &args.report.output);
    match timed.ending {
        Ending::Done => deliver_rounds(&report, sinks, rounds.len()),
        // What finished is reported, written and stored; the exit code says how it ended.
        Ending::Interrupted => {
            sinks.finish(&report)?;
            Err(Error::Interrupted)
        }
        Ending::Failed(failure) => {
            sinks.finish(&report)?;
            Err(failure)
        }
    }
}
