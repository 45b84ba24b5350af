//! What each subcommand does, from parsed arguments to a written report.

mod go;
mod parse;
mod timer;

use crate::analyze::{EnrichOptions, build_report};
use crate::cli::{Cli, Command, ReportArgs};
use crate::error::{Error, Result};
use crate::model::{Level, Note, Run};
use crate::report::{Report, reporter};
use crate::spec::Suite;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Parse(args) => parse::run(args),
        Command::Go(args) => go::run(args),
        Command::Timer(args) => timer::run(args),
        Command::Doctor(args) => doctor(args),
    }
}

fn doctor(args: crate::cli::DoctorArgs) -> Result<()> {
    let checks = crate::host::checks();
    let mut out = String::new();
    match args.format {
        crate::cli::DoctorFormat::Json => {
            out =
                serde_json::to_string_pretty(&checks).map_err(|e| Error::Failed(e.to_string()))?;
            out.push('\n');
        }
        crate::cli::DoctorFormat::Text => {
            for c in &checks {
                out.push_str(&format!(
                    "{:<5} {:<16} {}\n",
                    c.status.label(),
                    c.name,
                    c.found
                ));
                if !c.advice.is_empty() {
                    out.push_str(&format!("{:<22}→ {}\n", "", c.advice));
                }
            }
        }
    }
    io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Error::io("stdout", e))
}

fn load_suite(args: &ReportArgs) -> Result<Suite> {
    match &args.suite {
        Some(path) => Suite::load(path),
        None => Ok(Suite::default()),
    }
}

/// Enriches `runs` and writes the report where the arguments say.
fn report(runs: Vec<Run>, notes: Vec<Note>, args: &ReportArgs, suite: &Suite) -> Result<()> {
    let opts = EnrichOptions {
        metric: args.metric.clone().or_else(|| suite.report.metric.clone()),
        baseline: args
            .baseline
            .clone()
            .or_else(|| suite.report.baseline.clone()),
        attribution: suite.attribution.clone(),
        per_run: args.per_run,
    };
    let report = build_report(runs, notes, &opts)?;
    warn_on_stderr(&report, args);
    write_report(&report, args)
}

/// Warnings also go to stderr when the report itself will not be read on this terminal.
fn warn_on_stderr(report: &Report, args: &ReportArgs) {
    if args.quiet || (args.out.is_none() && io::stdout().is_terminal()) {
        return;
    }
    for note in report.notes.iter().filter(|n| n.level == Level::Warning) {
        eprintln!("latkit: warning: {note}");
    }
}

const OUTPUT_BUFFER: usize = 1 << 20;

fn write_report(report: &Report, args: &ReportArgs) -> Result<()> {
    let reporter = reporter(args.format);
    let (result, what) = match &args.out {
        Some(path) => {
            let what = path.display().to_string();
            let file = File::create(path).map_err(|e| Error::io(&what, e))?;
            let mut out = BufWriter::with_capacity(OUTPUT_BUFFER, file);
            (
                reporter.render(report, &mut out).and_then(|_| out.flush()),
                what,
            )
        }
        None => {
            let mut out = BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
            (
                reporter.render(report, &mut out).and_then(|_| out.flush()),
                "stdout".to_string(),
            )
        }
    };
    match result {
        // A reader that stops early (`| head`) is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io(&what, e)),
        Ok(()) => Ok(()),
    }
}
