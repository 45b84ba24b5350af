//! What each subcommand does, from parsed arguments to a written report.

mod check;
mod compare;
mod docs;
mod doctor;
mod exec;
mod frame;
mod gbench;
mod go;
mod interleave;
mod net;
mod page;
mod parse;
mod probe;
mod store;
mod timer;

use crate::analyze::EnrichOptions;
use crate::cli::{Cli, Command, InputArgs, OutputArgs, ReportArgs};
use crate::error::{Error, Result};
use crate::model::{BetterOverride, Level, Note, Run};
use crate::report::Report;
use crate::report::sink::{Destination, FanOut, Rendered};
use crate::spec::suite::Suite;
use crate::spec::targets::Targets;
use std::io::{self, IsTerminal};
use std::path::Path;

pub fn run(cli: Cli) -> Result<()> {
    crate::interrupt::report_oversized_writes();
    match cli.command {
        Command::Parse(args) => parse::run(args),
        Command::Go(args) => go::run(args),
        Command::Gbench(args) => gbench::run(args),
        Command::Timer(args) => timer::run(args),
        Command::Frame(args) => frame::run(args),
        Command::Exec(args) => exec::run(args),
        Command::Net(args) => net::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Check(args) => check::run(args),
        Command::Compare(args) => compare::run(args),
        Command::History(args) => store::history(args),
        Command::Store(args) => store::run(args),
        Command::Page(args) => page::run(args),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man => docs::man(),
    }
}

/// How inputs are read: their format (`None`: detected) and the directions `--better` sets.
pub struct Reading {
    format: Option<&'static dyn crate::ingest::InputFormat>,
    better: Vec<BetterOverride>,
}

impl Reading {
    fn of(args: &InputArgs) -> Reading {
        Reading {
            format: crate::cli::input_format(&args.input_format),
            better: args.better.clone(),
        }
    }

    /// Applies `--better` to runs read from `what`; an override that names no metric of
    /// any of them is a note, since a misspelt name would otherwise change nothing quietly.
    fn directions(&self, runs: &mut [Run], what: &str, notes: &mut Vec<Note>) {
        for over in &self.better {
            let mut found = false;
            for run in runs.iter_mut() {
                found |= run.override_better(over);
            }
            if !found {
                notes.push(Note::warning(format!(
                    "--better {}: {what} has no metric called `{}`",
                    over.metric, over.metric
                )));
            }
        }
    }
}

/// Refuses an output that is one of the inputs (`parse c.txt --out c.txt` would replace the
/// results it reads with the report of them).
fn refuse_overwriting_inputs(inputs: &[String], outputs: &[Option<&Path>]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let identity = |path: &Path| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    for output in outputs.iter().flatten() {
        let Some(out) = identity(output).filter(|_| output.as_os_str() != "-") else {
            continue;
        };
        if let Some(input) = inputs
            .iter()
            .find(|i| identity(Path::new(i.as_str())) == Some(out))
        {
            return Err(Error::Input(format!(
                "{}: is also an input ({input}); writing the report there would replace the \
                 results it reads: choose another output",
                output.display()
            )));
        }
    }
    Ok(())
}

/// Reads every input (stdin when there are none). With `strict`, a malformed line is an error.
fn read_inputs(files: &[String], reading: &Reading, strict: bool) -> Result<(Vec<Run>, Vec<Note>)> {
    let stdin = ["-".to_string()];
    let files = if files.is_empty() {
        if io::stdin().is_terminal() {
            // Otherwise it would wait without a word for what is typed or pasted.
            crate::error::say(
                "latkit: reading results from standard input (Ctrl-D ends them); give files \
                 to read those instead",
            );
        }
        &stdin[..]
    } else {
        files
    };
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for file in files {
        let mut input = crate::ingest::read_path(file, reading.format)?;
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
        reading.directions(&mut input.runs, file, &mut input.notes);
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

/// The sinks `OutputArgs` ask for, opened before any work: the report (`--format`, `--out`),
/// the whole result as JSON (`--json`), and the verdict on stderr (`--check`).
fn output_sinks(output: &OutputArgs) -> Result<FanOut> {
    let mut sinks = FanOut::default();
    sinks.push(Rendered::new(
        crate::cli::output_format(&output.format)?,
        Destination::open(output.out.as_deref())?,
    ));
    add_extras(&mut sinks, output)?;
    sinks.push_verdict_if(output.check.is_some());
    Ok(sinks)
}

/// `--json FILE`: the whole result as latkit JSON beside whatever else is shown; `--store`:
/// every run saved in the history store.
fn add_extras(sinks: &mut FanOut, output: &OutputArgs) -> Result<()> {
    if let Some(path) = &output.json {
        sinks.push(Rendered::new(
            crate::cli::output_format("json")?,
            Destination::open(Some(path))?,
        ));
    }
    sinks.push_plots(&output.plots.pairs()?)?;
    if output.store {
        let location = crate::store::default_location(output.db.db.as_deref())?;
        sinks.push(crate::report::store::Stored::open(
            &location,
            output.tag.clone(),
            output.quiet,
        )?);
    }
    Ok(())
}

/// Loads the targets file a `--check` names.
fn targets(check: Option<&Path>) -> Result<Option<Targets>> {
    check.map(Targets::load).transpose()
}

/// Analysis options from the report arguments and the suite file.
fn enrich_options(args: &ReportArgs, suite: &Suite) -> Result<EnrichOptions> {
    Ok(EnrichOptions {
        metric: args.metric.clone().or_else(|| suite.report.metric.clone()),
        baseline: args
            .baseline
            .clone()
            .or_else(|| suite.report.baseline.clone()),
        attribution: suite.attribution.clone(),
        per_run: args.per_run,
        targets: targets(args.output.check.as_deref())?,
        relative: args.relative,
    })
}

/// The one way every command ends: the report goes to every sink, then a verdict that did
/// not pass is exit 1.
fn deliver(report: &Report, sinks: FanOut) -> Result<()> {
    sinks.finish(report)?;
    verdict_exit(report)
}

/// Exit 1 when the report's verdict did not pass.
fn verdict_exit(report: &Report) -> Result<()> {
    match &report.verdict {
        Some(verdict) if !verdict.passed() => Err(Error::Failed(format!(
            "{} target(s) missed or not measured",
            verdict.missed()
        ))),
        _ => Ok(()),
    }
}

/// Warnings also go to stderr when the report itself will not be read on this terminal.
fn warn_on_stderr(report: &Report, output: &OutputArgs) {
    if output.quiet || (output.out.is_none() && io::stdout().is_terminal()) {
        return;
    }
    say_warnings(&report.notes);
}

/// The warnings among `notes`, on stderr.
fn say_warnings(notes: &[Note]) {
    for note in notes.iter().filter(|n| n.level == Level::Warning) {
        crate::error::say_warning(&note.to_string());
    }
}

/// How a harness run ends: what it finished is reported (interrupted or not), then an
/// interrupt is 130, a failing harness or one that ran nothing is 1 with its last lines.
fn report_outcome(
    outcome: crate::runner::output::Outcome,
    harness: &str,
    nothing_ran: &str,
    output: &OutputArgs,
    opts: &EnrichOptions,
    sinks: FanOut,
) -> Result<()> {
    let ran_any = outcome.input.is_some();
    if let Some(input) = outcome.input {
        let report = crate::analyze::build_report(input.runs, input.notes, opts)?;
        warn_on_stderr(&report, output);
        if outcome.interrupted || !outcome.status.success() {
            // The harness's own failure decides the exit code; the report is still written.
            sinks.finish(&report)?;
        } else {
            deliver(&report, sinks)?;
        }
    }
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let tail = outcome.tail.join("\n");
    if !outcome.status.success() {
        return Err(Error::Failed(format!(
            "{harness} failed ({}); last lines of its output:\n{tail}",
            outcome.status
        )));
    }
    if !ran_any {
        return Err(Error::Failed(format!(
            "{nothing_ran}; last lines of its output:\n{tail}"
        )));
    }
    Ok(())
}
