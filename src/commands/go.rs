use super::{enrich_options, load_suite, output_sinks, report_outcome};
use crate::cli::GoArgs;
use crate::error::{Error, Result};
use crate::runner::go::GoTest;
use std::io::{IsTerminal, stderr};

pub fn run(args: GoArgs) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let defaults = &suite.go;
    let test = GoTest {
        package: args
            .package
            .or_else(|| defaults.package.clone())
            .unwrap_or_else(|| "./...".into()),
        dir: args.dir.or_else(|| defaults.dir.clone()),
        bench: args
            .bench
            .or_else(|| defaults.bench.clone())
            .unwrap_or_else(|| ".".into()),
        count: args.count.or(defaults.count).unwrap_or(1),
        benchtime: args
            .benchtime
            .or_else(|| defaults.benchtime.clone())
            .unwrap_or_else(|| "1000x".into()),
        extra: if args.extra.is_empty() {
            defaults.args.clone()
        } else {
            args.extra
        },
        raw: args.raw,
        progress: !args.report.output.quiet && stderr().is_terminal(),
    };
    if test.count == 0 {
        return Err(Error::Input("--count must be at least 1".into()));
    }
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output)?;
    let outcome = test.run()?;
    let nothing = format!("go test ran no benchmark matching `{}`", test.bench);
    report_outcome(
        outcome,
        "go test",
        &nothing,
        &args.report.output,
        &opts,
        sinks,
    )
}
