use super::{load_suite, read_inputs, report};
use crate::cli::ParseArgs;
use crate::error::Result;
use crate::ingest::merge;

pub fn run(args: ParseArgs) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let (mut runs, notes) = read_inputs(&args.files, args.input_format, args.strict)?;
    if args.merge {
        runs = merge(runs).into_iter().collect();
    }
    report(runs, notes, &args.report, &suite)
}
