use super::{deliver, read_inputs};
use crate::analyze::{EnrichOptions, build_report};
use crate::cli::{CheckArgs, CheckFormat};
use crate::error::Result;
use crate::report::sink::{Destination, FanOut, Junit, Verdict};
use crate::targets::Targets;

/// Judges results against a targets file: the verdict on stdout (and JUnit), exit 1 unless
/// everything passed.
pub fn run(args: CheckArgs) -> Result<()> {
    let targets = Targets::load(&args.targets)?;
    let mut sinks = FanOut::default();
    sinks.push(Verdict {
        dest: Destination::Stdout,
        markdown: args.format == CheckFormat::Markdown,
    });
    if let Some(path) = &args.junit {
        sinks.push(Junit(Destination::open(Some(path))?));
    }
    let format = crate::cli::input_format(&args.input.input_format);
    let (runs, notes) = read_inputs(&args.inputs, format, args.strict)?;
    let opts = EnrichOptions {
        targets: Some(targets),
        ..EnrichOptions::default()
    };
    deliver(&build_report(runs, notes, &opts)?, sinks)
}
