//! What each subcommand does, from parsed arguments to a written report.

mod check;
mod doctor;
mod go;
mod net;
mod parse;
mod probe;
mod timer;

use crate::analyze::{EnrichOptions, build_report};
use crate::atomic_file::OutputFile;
use crate::cli::{Cli, Command, ReportArgs};
use crate::error::{Error, Result};
use crate::model::{Level, Note, Run};
use crate::report::{Report, reporter};
use crate::spec::Suite;
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
    format: Option<&'static dyn crate::ingest::InputFormat>,
    strict: bool,
) -> Result<(Vec<Run>, Vec<Note>)> {
    let stdin = ["-".to_string()];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for file in files {
        let input = crate::ingest::read_path(file, format)?;
        if strict && input.malformed > 0 {
            // The reader's note says what it did without --strict; here nothing is skipped.
            let first = input.notes.iter().find(|n| n.line.is_some());
            return Err(Error::Input(format!(
                "{} (--strict)",
                first.map_or_else(
                    || format!("{file}: malformed result line"),
                    |n| n.to_string().replace("skipped", "rejected")
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

/// Opens the `--out` file, if any, before the work that fills it: a bad path fails at once.
fn open_output(out: &Option<std::path::PathBuf>) -> Result<Option<OutputFile>> {
    out.as_deref().map(OutputFile::create).transpose()
}

/// Enriches `runs` and writes the report to `out` (opened early), or stdout.
fn report(
    runs: Vec<Run>,
    notes: Vec<Note>,
    args: &ReportArgs,
    suite: &Suite,
    out: Option<OutputFile>,
) -> Result<()> {
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
    write_report(&report, args.format.into(), out)
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

fn write_report(
    report: &Report,
    format: crate::report::OutputFormat,
    out: Option<OutputFile>,
) -> Result<()> {
    if format == crate::report::OutputFormat::Xenomai
        && report.runs.iter().all(|r| r.timer.is_none())
    {
        return Err(Error::Input(
            "--format xenomai prints timer results (latkit timer, Xenomai latency, cyclictest), and the input holds none".into(),
        ));
    }
    let reporter = reporter(format);
    match out {
        Some(mut file) => {
            let name = file.name();
            let mut out = BufWriter::with_capacity(OUTPUT_BUFFER, &mut file);
            reporter
                .render(report, &mut out)
                .and_then(|_| out.flush())
                .map_err(|e| Error::io(&name, e))?;
            drop(out);
            file.commit()
        }
        None => {
            let mut out = BufWriter::with_capacity(OUTPUT_BUFFER, io::stdout().lock());
            match reporter.render(report, &mut out).and_then(|_| out.flush()) {
                // A reader that stops early (`| head`) is not an error.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(Error::io("stdout", e)),
                Ok(()) => Ok(()),
            }
        }
    }
}
