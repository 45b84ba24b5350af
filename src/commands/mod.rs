//! What each subcommand does, from parsed arguments to a written report.

mod go;
mod net;
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
        Command::Frame(args) => frame(args),
        Command::Net(args) => net::run(args),
        Command::Doctor(args) => doctor(args),
        Command::Check(args) => check(args),
    }
}

fn frame(args: crate::cli::FrameArgs) -> Result<()> {
    let run = crate::probe::frame::run(&crate::probe::frame::FrameConfig {
        width: args.width,
        height: args.height,
        pixfmt: args.pixfmt,
        op: args.op,
        iterations: args.iterations,
        warmup: args.warmup,
    })?;
    probe_report(run, &args.output)
}

/// Reports a probe's run like `parse` does, then gates it when a targets file is given.
pub(crate) fn probe_report(run: Run, output: &crate::cli::ProbeOutputArgs) -> Result<()> {
    let args = ReportArgs {
        format: output.format,
        out: output.out.clone(),
        baseline: None,
        suite: None,
        metric: None,
        per_run: false,
        quiet: true,
    };
    let report = build_report(vec![run], Vec::new(), &EnrichOptions::default())?;
    write_report(&report, &args)?;
    match output.check.as_deref() {
        Some(path) => {
            let targets = crate::targets::Targets::load(path)?;
            gate(
                &targets,
                &report.runs,
                crate::cli::CheckFormat::Table,
                None,
                &mut io::stderr(),
            )
        }
        None => Ok(()),
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

fn check(args: crate::cli::CheckArgs) -> Result<()> {
    let targets = crate::targets::Targets::load(&args.targets)?;
    let (runs, notes) = read_inputs(&args.inputs, args.input_format, false)?;
    let report = build_report(runs, notes, &EnrichOptions::default())?;
    let mut stdout = io::stdout().lock();
    gate(
        &targets,
        &report.runs,
        args.format,
        args.junit.as_deref(),
        &mut stdout,
    )
}

/// Evaluates targets against runs, prints the verdict, writes JUnit when asked, and fails
/// (exit 1) unless everything passed.
pub fn gate(
    targets: &crate::targets::Targets,
    runs: &[Run],
    format: crate::cli::CheckFormat,
    junit: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let verdict = crate::analyze::gate::evaluate(targets, runs)?;
    let text = match format {
        crate::cli::CheckFormat::Table => crate::report::gate::terminal(&verdict),
        crate::cli::CheckFormat::Markdown => crate::report::gate::markdown(&verdict),
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("output", e))?;
    if let Some(path) = junit {
        std::fs::write(path, crate::report::gate::junit(&verdict))
            .map_err(|e| Error::io(&path.display().to_string(), e))?;
    }
    if verdict.passed() {
        Ok(())
    } else {
        let missed = verdict
            .targets
            .iter()
            .filter(|t| t.status != crate::analyze::gate::Status::Pass)
            .count()
            + verdict
                .budget
                .iter()
                .filter(|b| b.status != crate::analyze::gate::Status::Pass)
                .count();
        Err(Error::Failed(format!(
            "{missed} target(s) missed or not measured"
        )))
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
