use super::{load_suite, open_output, read_inputs, report};
use crate::cli::ParseArgs;
use crate::error::Result;
use crate::ingest::merge;

pub fn run(args: ParseArgs) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let out = open_output(&args.report.out)?;
    let (mut runs, mut notes) = read_inputs(
        &args.files,
        crate::cli::input_format(&args.input_format),
        args.strict,
    )?;
    if args.merge
        && let Some((merged, merge_notes)) = merge(runs.clone())
    {
        runs = vec![merged];
        notes.extend(merge_notes);
    }
    report(runs, notes, &args.report, &suite, out)
}
