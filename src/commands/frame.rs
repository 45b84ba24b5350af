//! `latkit frame`: time one stage of a video-frame pipeline, reported as the other probes are.

use super::Env;
use super::Output;
use super::probe::{probe_report, probe_sinks, with_progress};
use crate::error::Result;
use crate::model::Note;
use crate::probe::frame::{FrameConfig, Operation};

/// The stage to time and where its report goes.
pub struct FrameOptions {
    pub stage: FrameConfig,
    pub output: Output,
}

/// Times the stage the options name and reports it.
pub fn run(options: FrameOptions, env: &Env) -> Result<()> {
    let sinks = probe_sinks(&options.output, env)?;
    let progress = env.console.progress(options.output.quiet);
    let run = with_progress("frame", progress, || {
        crate::probe::frame::run(&options.stage, env.stamp())
    })?;
    // Which converter ran is part of what the figures mean.
    let notes = match options.stage.op {
        Operation::Convert => vec![Note::info(format!(
            "converter: {}",
            options.stage.converter.name()
        ))],
        Operation::Copy => Vec::new(),
    };
    probe_report(vec![run], notes, &options.output, sinks)
}
