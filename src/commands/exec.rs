use super::{ReportOptions, deliver, enrich_options, load_suite, output_sinks, warn_on_stderr};
use crate::analyze::build_report;
use crate::error::{Error, Result};
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
    pub report: ReportOptions,
}

pub fn run(args: ExecOptions) -> Result<()> {
    let timing = &args.timing;
    if let Some(max) = timing.max_runs
        && max < timing.min_runs
        && timing.runs.is_none()
    {
        return Err(Error::Input(format!(
            "--max-runs {max} is below --min-runs {}",
            timing.min_runs
        )));
    }
    let suite = load_suite(&args.report)?;
    let mut opts = enrich_options(&args.report, &suite)?;
    let mut sinks = output_sinks(&args.report.output)?;
    let commands = plan(args.commands, &args.names, &args.parameters)?;
    // Several commands are run to be compared: how many times slower than the fastest.
    opts.relative |= commands.len() > 1;
    let exec = Exec {
        commands,
        timing: args.timing,
        spawner: Box::new(Processes::new(args.output)?),
        progress: !args.report.output.quiet && stderr().is_terminal(),
    };
    // Each finished command is written at once (as hyperfine exports), so that a failure or
    // an interrupt later on cannot lose it.
    let timed = exec.run(&mut |so_far| {
        let report = build_report(so_far.runs.clone(), so_far.notes.clone(), &opts)?;
        sinks
            .live(&LiveEvent::Partial(&report))
            .map_err(|(name, e)| Error::io(&name, e))
    })?;
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
    let report = build_report(input.runs, input.notes, &opts)?;
    warn_on_stderr(&report, &args.report.output);
    match timed.ending {
        Ending::Done => deliver(&report, sinks),
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
