//! What each subcommand does, from parsed arguments to a written report.

mod check;
mod doctor;
mod go;
mod net;
mod parse;
mod probe;
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
        Command::Frame(args) => probe::frame(args),
        Command::Net(args) => net::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Check(args) => check::run(args),
    }
}

/// Reads every input (stdin when there are none). With `strict`, a malformed line is an error.
fn read_inputs(
    files: &[String],
    format: crate::ingest::InputFormat,
    strict: bool,
) -> Result<(Vec<Run>, Vec<Note>)> {
    let stdin = ["-".to_string()];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for file in files {
        let input = crate::ingest::read_path(file, format)?;
        if strict && input.malformed > 0 {
            let first = input.notes.iter().find(|n| n.line.is_some());
            return Err(Error::Input(format!(
                "{} (--strict)",
                first.map_or_else(
                    || format!("{file}: malformed result line"),
                    |n| n.to_string()
                )
            )));
        }
        runs.extend(input.runs);
        notes.extend(input.notes);
    }
    Ok((runs, notes))
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
        crate::error::say(&format!("latkit: warning: {note}"));
    }
}

const OUTPUT_BUFFER: usize = 1 << 20;

fn write_report(report: &Report, args: &ReportArgs) -> Result<()> {
    if args.format == crate::report::OutputFormat::Xenomai
        && report.runs.iter().all(|r| r.timer.is_none())
    {
        return Err(Error::Input(
            "--format xenomai prints timer results (latkit timer, Xenomai latency, cyclictest), and the input holds none".into(),
        ));
    }
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
