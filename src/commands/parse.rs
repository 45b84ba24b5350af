use super::{deliver, enrich_options, load_suite, output_sinks, read_inputs, warn_on_stderr};
use crate::analyze::build_report;
use crate::cli::ParseArgs;
use crate::error::Result;
use crate::ingest::merge;

pub fn run(args: ParseArgs) -> Result<()> {
    let output = &args.report.output;
    super::refuse_overwriting_inputs(
        &args.files,
        &[output.out.as_deref(), output.json.as_deref()],
    )?;
    let suite = load_suite(&args.report)?;
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output)?;
    let reading = super::Reading::of(&args.input);
    let (mut runs, mut notes) = read_inputs(&args.files, &reading, args.strict)?;
    if args.merge
        && let Some((merged, merge_notes)) = merge(runs.clone())
    {
        runs = vec![merged];
        notes.extend(merge_notes);
    }
    let report = build_report(runs, notes, &opts)?;
    warn_on_stderr(&report, &args.report.output);
    deliver(&report, sinks)
}
