use super::{deliver, enrich_options, load_suite, output_sinks, warn_on_stderr};
use crate::analyze::build_report;
use crate::cli::ExecArgs;
use crate::error::{Error, Result};
use crate::model::ConfigEntry;
use crate::runner::exec::{Exec, Planned};
use std::io::{IsTerminal, stderr};

/// The values a parameter takes: `-L NAME a,b,c` or `-P NAME MIN MAX`.
fn parameter(args: &ExecArgs) -> Result<Option<(String, Vec<String>)>> {
    if let [name, values] = &args.parameter_list[..] {
        return Ok(Some((
            name.clone(),
            values.split(',').map(str::to_string).collect(),
        )));
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
        return Ok(Some((
            name.clone(),
            (min..=max).map(|v| v.to_string()).collect(),
        )));
    }
    Ok(None)
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
    let planned = match parameter(args)? {
        None => named
            .into_iter()
            .map(|(command, name)| Planned {
                command,
                name,
                params: Vec::new(),
            })
            .collect(),
        Some((key, values)) => {
            let placeholder = format!("{{{key}}}");
            named
                .iter()
                .flat_map(|(command, name)| {
                    values.iter().map(|value| Planned {
                        command: command.replace(&placeholder, value),
                        name: name.replace(&placeholder, value),
                        params: vec![ConfigEntry {
                            key: key.clone(),
                            value: value.clone(),
                        }],
                    })
                })
                .collect()
        }
    };
    Ok(planned)
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
    let sinks = output_sinks(&args.report.output)?;
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
    let (input, interrupted) = exec.run()?;
    let report = build_report(input.runs, input.notes, &opts)?;
    warn_on_stderr(&report, &args.report.output);
    if interrupted {
        sinks.finish(&report)?;
        return Err(Error::Interrupted);
    }
    deliver(&report, sinks)
}
