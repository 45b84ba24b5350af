//! `latkit frame`: time one stage of a video-frame pipeline, reported as the other probes are.

use super::probe::{probe_report, probe_sinks, with_progress};
use crate::error::Result;

/// Times the stage the arguments name and reports it.
pub fn run(args: crate::cli::FrameArgs) -> Result<()> {
    let sinks = probe_sinks(&args.output)?;
    let run = with_progress("frame", args.output.quiet, || {
        crate::probe::frame::run(&crate::probe::frame::FrameConfig {
            width: args.width as usize,
            height: args.height as usize,
            pixfmt: args.pixfmt.into(),
            op: args.op.into(),
            iterations: args.iterations,
            warmup: args.warmup,
        })
    })?;
    probe_report(run, &args.output, sinks)
}
