use super::Env;
use super::{Reading, ReportOptions};
use super::{deliver, enrich_options, load_suite, output_sinks, read_inputs, warn_on_stderr};
use crate::analyze::build_report;
use crate::error::Result;
use crate::ingest::merge;

/// What `latkit parse` reads and how it reports it.
pub struct ParseOptions {
    /// Files or directories; none (or `-`) is standard input.
    pub files: Vec<String>,
    pub reading: Reading,
    /// Pool every input as one run.
    pub merge: bool,
    /// A malformed result line is an error instead of a note.
    pub reject_malformed: bool,
    pub report: ReportOptions,
}

pub fn run(args: ParseOptions, env: &Env) -> Result<()> {
    let console = &env.console;
    let suite = load_suite(&args.report)?;
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output, env)?;
    let strict = args.reject_malformed;
    let (mut runs, mut notes) = read_inputs(&args.files, &args.reading, strict, console)?;
    if args.merge
        && let Some((merged, merge_notes)) = merge(runs.clone())
    {
        runs = vec![merged];
        notes.extend(merge_notes);
    }
    let report = build_report(runs, notes, &opts)?;
    warn_on_stderr(&report, &args.report.output, console);
    deliver(report, sinks)
}
