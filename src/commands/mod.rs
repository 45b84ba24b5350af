//! What each subcommand does, from parsed arguments to a written report.

mod bisect;
mod calibrate;
mod check;
mod compare;
mod docs;
mod doctor;
mod env;
mod exec;
mod frame;
mod gbench;
mod go;
mod history;
pub(crate) mod interleave;
mod net;
mod options;
mod page;
mod parse;
mod probe;
#[cfg(test)]
pub mod scripted;
mod site;
mod store;
mod survey;
mod timer;

pub use bisect::BisectOptions;
pub use calibrate::CalibrateOptions;
pub use check::{CheckFormat, CheckOptions};
pub use compare::CompareOptions;
pub use doctor::DoctorFormat;
pub use env::Env;
pub use exec::ExecOptions;
pub use frame::FrameOptions;
pub use gbench::GbenchOptions;
pub use go::GoOptions;
pub use history::HistoryOptions;
pub use net::{NetMode, NetTest, Token};
pub use options::{Gate, Interleave, Output, Plots, Reading, ReportOptions, Runs, Storing, Style};
pub use page::{PageFormat, PageOptions};
pub use parse::ParseOptions;
pub use site::SiteOptions;
pub use store::labelled_file;
pub use store::{ListFormat, StoreAction};
pub use survey::Selection;
pub use timer::TimerOptions;

use crate::analyze::EnrichOptions;
use crate::analyze::Report;
use crate::analyze::enrich::AttributionChoice;
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::{Level, Note, Run};
use crate::report::sink::{Destination, FanOut, Rendered};
use crate::spec::suite::Suite;
use crate::spec::targets::Targets;
use std::path::Path;

/// What to do, with every option parsed and checked: one variant per subcommand.
pub enum Command {
    Parse(ParseOptions),
    Go(GoOptions),
    Gbench(GbenchOptions),
    Timer(TimerOptions),
    Frame(FrameOptions),
    Exec(ExecOptions),
    Net(NetMode),
    Doctor(DoctorFormat),
    Check(CheckOptions),
    Compare(CompareOptions),
    History(HistoryOptions),
    Site(SiteOptions),
    /// A store action, on the store at this location (`None`: the default one).
    Store(StoreAction, Option<String>),
    Page(PageOptions),
    Bisect(BisectOptions),
    Calibrate(CalibrateOptions),
    /// Text generated from the argument definitions (completions, the man page), on stdout.
    Print(Vec<u8>),
}

/// Runs `command` in `env`, the world `main` built (or a test scripted).
pub fn run(command: Command, env: &Env) -> Result<()> {
    match command {
        Command::Parse(options) => parse::run(options, env),
        Command::Go(options) => go::run(options, env),
        Command::Gbench(options) => gbench::run(options, env),
        Command::Timer(options) => timer::run(options, env),
        Command::Frame(options) => frame::run(options, env),
        Command::Exec(options) => exec::run(options, env),
        Command::Net(mode) => net::run(mode, env),
        Command::Doctor(format) => doctor::run(format, env),
        Command::Check(options) => check::run(options, env),
        Command::Compare(options) => compare::run(options, env),
        Command::History(options) => history::run(options, env),
        Command::Site(options) => site::run(options, env),
        Command::Store(action, db) => store::run(action, db.as_deref(), env),
        Command::Page(options) => page::run(options, env),
        Command::Bisect(options) => bisect::run(options, env),
        Command::Calibrate(options) => calibrate::run(options, env),
        Command::Print(text) => docs::print(&text, env),
    }
}

/// Reads every input (stdin when there are none). With `strict`, a malformed line is an error.
fn read_inputs(
    files: &[String],
    reading: &Reading,
    strict: bool,
    console: &Console,
) -> Result<(Vec<Run>, Vec<Note>)> {
    let stdin = ["-".to_string()];
    let files = if files.is_empty() {
        if console.stdin.at_terminal {
            // Otherwise it would wait without a word for what is typed or pasted.
            console.say(
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
        let mut input = match file.as_str() {
            "-" => console
                .stdin
                .read(|stdin| crate::ingest::read_stream("-", stdin, reading.format))?,
            _ => crate::ingest::read_path(file, reading.format)?,
        };
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

fn load_suite(args: &ReportOptions) -> Result<Suite> {
    match &args.suite {
        Some(path) => Suite::load(path),
        None => Ok(Suite::default()),
    }
}

/// The sinks the output options ask for, opened before any work: the report (`--format`, `--out`),
/// the whole result as JSON (`--json`), and the verdict on stderr (`--check`).
fn output_sinks(output: &Output, env: &Env) -> Result<FanOut> {
    let console = &env.console;
    let mut sinks = FanOut::new(output.quiet, console, env.report_time()?);
    // `--style none` shows nothing on the terminal; a report file is still written.
    if output.style != Style::Silent || output.out.is_some() {
        let shown = Rendered::new(
            output.format,
            Destination::open(output.out.as_deref(), &console.stdout)?,
        );
        sinks.push(match output.style {
            Style::Plain => shown.without_pictures(),
            _ => shown,
        });
    }
    add_extras(&mut sinks, output, &env.vars)?;
    sinks.push_verdict_if(output.check.is_some());
    Ok(sinks)
}

/// `--json FILE`: the whole result as latkit JSON beside whatever else is shown, and each
/// `--export-*` format to its file; `--store`: every run saved in the history store.
fn add_extras(sinks: &mut FanOut, output: &Output, vars: &crate::env::Vars) -> Result<()> {
    let json = output.json.iter().map(|path| (&crate::report::JSON, path));
    let exports = output.exports.iter().map(|(format, path)| (*format, path));
    for (format, path) in json.chain(exports) {
        let dest = Destination::open(Some(path), &sinks.console().stdout)?;
        sinks.push(Rendered::new(format, dest));
    }
    for (export, path) in &output.hyperfine {
        let dest = Destination::open(Some(path), &sinks.console().stdout)?;
        sinks.push(Rendered::of(Box::new(*export), dest));
    }
    sinks.push_plots(&output.plots.pairs()?)?;
    if let Some(storing) = &output.store {
        let location = crate::store::default_location(storing.db.as_deref(), vars)?;
        let talk = (!output.quiet).then_some(sinks.console());
        let stored = crate::report::store::Stored::open(&location, storing.tag.clone(), talk)?;
        sinks.push_store(stored);
    }
    Ok(())
}

/// Loads the targets file a `--check` names.
fn targets(check: Option<&Path>) -> Result<Option<Targets>> {
    check.map(Targets::load).transpose()
}

/// Analysis options from the report arguments and the suite file.
fn enrich_options(args: &ReportOptions, suite: &Suite) -> Result<EnrichOptions> {
    Ok(EnrichOptions {
        metric: args.metric.clone().or_else(|| suite.report.metric.clone()),
        baseline: args
            .baseline
            .clone()
            .or_else(|| suite.report.baseline.clone()),
        attribution: suite
            .attribution
            .clone()
            .map_or(AttributionChoice::Preset, AttributionChoice::Given),
        per_run: args.per_run,
        targets: targets(args.output.check.as_deref())?,
        relative: args.relative,
        relative_to: args.relative_to.clone(),
    })
}

/// The one way every command ends: the report goes to every sink, then a verdict that did
/// not pass is exit 1.
fn deliver(report: Report, sinks: FanOut) -> Result<()> {
    deliver_after(report, sinks, None)
}

/// As [`deliver`], after `ran` rounds: an undecided `--runs auto` says how many.
fn deliver_rounds(report: Report, sinks: FanOut, ran: usize) -> Result<()> {
    deliver_after(report, sinks, Some(ran))
}

fn deliver_after(mut report: Report, sinks: FanOut, rounds: Option<usize>) -> Result<()> {
    sinks.finish(&mut report)?;
    let exit = verdict_exit(&report, rounds);
    free_aside(report);
    exit
}

/// Drops `report` on a thread of its own. The command ends once its report is delivered,
/// and freeing the report of a large input (a million values, a hundred thousand rows) took
/// a tenth of the command's time: the process's exit does not wait for that thread.
fn free_aside(report: Report) {
    // Were no thread to be had, the closure and the report in it are dropped here.
    let _ = std::thread::Builder::new().spawn(move || drop(report));
}

/// Exit 1 when the report's verdict did not pass; 3 when `--runs auto` left it undecided
/// after `rounds`.
fn verdict_exit(report: &Report, rounds: Option<usize>) -> Result<()> {
    match &report.verdict {
        Some(verdict) if verdict.undecided() => Err(Error::Undecided(format!(
            "inconclusive after {} (--runs auto): a gated figure is neither worse beyond its \
             threshold nor shown within it; more rounds (--max-runs) or a wider threshold can \
             decide it",
            rounds.map_or_else(|| "the most rounds".to_string(), |n| format!("{n} rounds"))
        ))),
        Some(verdict) if !verdict.passed() => Err(Error::Failed(format!(
            "{} target(s) missed or not measured",
            verdict.missed()
        ))),
        _ => Ok(()),
    }
}

/// Warnings also go to stderr when the report itself will not be read on this terminal.
fn warn_on_stderr(report: &Report, output: &Output, console: &Console) {
    if output.quiet || (output.out.is_none() && console.stdout.at_terminal()) {
        return;
    }
    say_warnings(&report.notes, console);
}

/// The warnings among `notes`, on stderr.
fn say_warnings(notes: &[Note], console: &Console) {
    let mut said = std::collections::HashSet::new();
    for note in notes.iter().filter(|n| n.level == Level::Warning) {
        if said.insert(note) {
            console.say_warning(&note.to_string());
        }
    }
}

/// How a harness run ends: what it finished is reported (interrupted or not), then an
/// interrupt is 130, a failing harness or one that ran nothing is 1 with its last lines.
fn report_outcome(
    outcome: crate::runner::output::Outcome,
    harness: &str,
    nothing_ran: &str,
    output: &Output,
    opts: &EnrichOptions,
    sinks: FanOut,
    console: &Console,
) -> Result<()> {
    let ran_any = outcome.input.is_some();
    if let Some(input) = outcome.input {
        let mut report = crate::analyze::build_report(input.runs, input.notes, opts)?;
        warn_on_stderr(&report, output, console);
        if outcome.interrupted || !outcome.status.success() {
            // The harness's own failure decides the exit code; the report is still written.
            sinks.finish(&mut report)?;
        } else {
            deliver(report, sinks)?;
        }
    }
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    let tail = crate::error::visible_lines(&outcome.tail);
    if !outcome.status.success() {
        return Err(Error::Peer(format!(
            "{harness} failed ({}); last lines of its output:\n{tail}",
            outcome.status
        )));
    }
    if !ran_any {
        return Err(Error::Peer(format!(
            "{nothing_ran}; last lines of its output:\n{tail}"
        )));
    }
    Ok(())
}
