use super::{enrich_options, load_suite, output_sinks, report_outcome};
use crate::cli::GbenchArgs;
use crate::error::Result;
use crate::runner::gbench::GbenchRun;
use std::io::{IsTerminal, stderr};

pub fn run(args: GbenchArgs) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output)?;
    let run = GbenchRun {
        binary: args.binary,
        filter: args.filter,
        repetitions: args.repetitions,
        min_time: args.min_time,
        extra: args.extra,
        raw: args.raw,
        progress: !args.report.output.quiet && stderr().is_terminal(),
    };
    let outcome = run.run()?;
    let nothing = format!(
        "{} ran no benchmark{}",
        run.binary.display(),
        run.filter
            .as_deref()
            .map(|f| format!(" matching `{f}`"))
            .unwrap_or_default()
    );
    report_outcome(
        outcome,
        &run.binary.display().to_string(),
        &nothing,
        &args.report.output,
        &opts,
        sinks,
    )
}
