use super::{deliver, enrich_options, load_suite, output_sinks, warn_on_stderr};
use crate::analyze::build_report;
use crate::cli::ExecArgs;
use crate::error::{Error, Result};
use crate::model::ConfigEntry;
use crate::runner::exec::{Ending, Exec, Planned};
use std::io::{IsTerminal, stderr};

/// The most commands a parameter scan may plan.
const MAX_COMBINATIONS: usize = 100_000;

/// The values each parameter takes: `-L NAME a,b,c` (repeatable) or `-P NAME MIN MAX`.
fn parameters(args: &ExecArgs) -> Result<Vec<(String, Vec<String>)>> {
    if !args.parameter_list.is_empty() {
        let mut lists: Vec<(String, Vec<String>)> = Vec::new();
        for pair in args.parameter_list.chunks(2) {
            let [name, values] = pair else {
                return Err(Error::Input("--parameter-list takes NAME VALUES".into()));
            };
            if lists.iter().any(|(n, _)| n == name) {
                return Err(Error::Input(format!(
                    "--parameter-list {name} given twice: give each parameter once"
                )));
            }
            lists.push((
                name.clone(),
                values.split(',').map(str::to_string).collect(),
            ));
        }
        let combinations = lists
            .iter()
            .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
            .filter(|n| *n <= MAX_COMBINATIONS);
        if combinations.is_none() {
            return Err(Error::Input(format!(
                "--parameter-list: more than {MAX_COMBINATIONS} combinations of values"
            )));
        }
        return Ok(lists);
    }
    if let [name, min, max] = &args.parameter_scan[..] {
        let bound = |text: &str| {
            text.parse::<i64>()
                .map_err(|_| Error::Input(format!("--parameter-scan: `{text}` is not an integer")))
        };
        let (min, max) = (bound(min)?, bound(max)?);
        if max < min || max - min > 100_000 {
            return Err(Error::Input(format!(
                "--parameter-scan {name} {min} {max}: expected MIN <= MAX, at most 100000 apart"
            )));
        }
        return Ok(vec![(
            name.clone(),
            (min..=max).map(|v| v.to_string()).collect(),
        )]);
    }
    Ok(Vec::new())
}

/// Every combination of the parameters' values, the first parameter varying fastest, in the
/// order hyperfine runs `-L a 1,2 -L b 3,4`: a=1 b=3, a=2 b=3, a=1 b=4, a=2 b=4.
fn combinations(parameters: &[(String, Vec<String>)]) -> Vec<Vec<ConfigEntry>> {
    // Nested from the last parameter (outermost) to the first, then listed first to last.
    let nested = parameters
        .iter()
        .rev()
        .fold(vec![Vec::new()], |done, (key, values)| {
            done.iter()
                .flat_map(|prefix| {
                    values.iter().map(move |value| {
                        let mut next = prefix.clone();
                        next.push(ConfigEntry {
                            key: key.clone(),
                            value: value.clone(),
                        });
                        next
                    })
                })
                .collect::<Vec<Vec<ConfigEntry>>>()
        });
    nested
        .into_iter()
        .map(|mut c| {
            c.reverse();
            c
        })
        .collect()
}

/// Every command once per parameter value, `{NAME}` replaced (in its name too).
fn plan(args: &ExecArgs) -> Result<Vec<Planned>> {
    let mut commands = args.commands.clone();
    if !args.argv.is_empty() {
        commands.push(
            shlex::try_join(args.argv.iter().map(String::as_str))
                .map_err(|e| Error::Input(format!("the command after -- cannot be quoted: {e}")))?,
        );
    }
    if commands.is_empty() {
        return Err(Error::Input(
            "nothing to time: give -c 'CMD' (repeatable) or -- CMD ARGS...".into(),
        ));
    }
    if args.command_names.len() > commands.len() {
        return Err(Error::Input(format!(
            "{} --command-name for {} command(s): give at most one name per command",
            args.command_names.len(),
            commands.len()
        )));
    }
    // As hyperfine: names go to the commands in order; the rest are named by their text.
    let named: Vec<(String, String)> = commands
        .into_iter()
        .enumerate()
        .map(|(i, command)| {
            let name = args.command_names.get(i).unwrap_or(&command).clone();
            (command, name)
        })
        .collect();
    let combinations = combinations(&parameters(args)?);
    let substituted = |text: &str, params: &[ConfigEntry]| {
        params.iter().fold(text.to_string(), |text, p| {
            text.replace(&format!("{{{}}}", p.key), &p.value)
        })
    };
    Ok(named
        .iter()
        .flat_map(|(command, name)| {
            combinations.iter().map(|params| Planned {
                command: substituted(command, params),
                name: substituted(name, params),
                params: params.clone(),
            })
        })
        .collect())
}

pub fn run(args: ExecArgs) -> Result<()> {
    if let Some(max) = args.max_runs
        && max < args.min_runs
        && args.runs.is_none()
    {
        return Err(Error::Input(format!(
            "--max-runs {max} is below --min-runs {}",
            args.min_runs
        )));
    }
    let suite = load_suite(&args.report)?;
    let mut opts = enrich_options(&args.report, &suite)?;
    let mut sinks = output_sinks(&args.report.output)?;
    let commands = plan(&args)?;
    // Several commands are run to be compared: how many times slower than the fastest.
    opts.relative |= commands.len() > 1;
    let exec = Exec {
        commands,
        runs: args.runs,
        min_runs: args.min_runs,
        max_runs: args.max_runs,
        min_time: args.min_time,
        warmup: args.warmup,
        prepare: args.prepare.clone(),
        setup: args.setup.clone(),
        cleanup: args.cleanup.clone(),
        ignore_failure: args.ignore_failure,
        shell: args.shell.clone().filter(|_| !args.no_shell),
        progress: !args.report.output.quiet && stderr().is_terminal(),
    };
    // Each finished command is written at once (as hyperfine exports), so that a failure or
    // an interrupt later on cannot lose it.
    let timed = exec.run(&mut |so_far| {
        let report = build_report(so_far.runs.clone(), so_far.notes.clone(), &opts)?;
        sinks.checkpoint(&report)
    })?;
    let Some(input) = timed.input else {
        return Err(match timed.ending {
            Ending::Failed(failure) => failure,
            _ => Error::Interrupted,
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
