//! What the measuring probes share: report the run like `parse`, then gate it if asked.

use super::{deliver, targets};
use crate::analyze::{EnrichOptions, build_report};
use crate::env::Stream;
use crate::error::Result;
use crate::model::Run;
use crate::report::sink::FanOut;
use std::time::Duration;

/// Runs `work` behind a spinner with `what` and the elapsed time, drawn on `progress` if any.
pub fn with_progress<T>(what: &str, progress: Option<&Stream>, work: impl FnOnce() -> T) -> T {
    let Some(stream) = progress else {
        return work();
    };
    let spinner = stream.progress_bar(None);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        spinner.set_style(style);
    }
    spinner.set_message(what.to_string());
    spinner.enable_steady_tick(Duration::from_millis(120));
    let result = work();
    spinner.finish_and_clear();
    result
}

/// A probe's outputs, opened before it measures: its report, and its verdict on stderr when
/// `--check` gates it.
pub fn probe_sinks(output: &super::Output, env: &super::Env) -> Result<FanOut> {
    super::output_sinks(output, env)
}

/// Reports a probe's runs like `parse` does, judged against `--check` targets.
pub fn probe_report(
    runs: Vec<Run>,
    notes: Vec<crate::model::Note>,
    output: &super::Output,
    sinks: FanOut,
) -> Result<()> {
    let opts = EnrichOptions {
        targets: targets(output.check.as_deref())?,
        ..EnrichOptions::default()
    };
    let report = build_report(runs, notes, &opts)?;
    if !output.quiet {
        super::say_warnings(&report.notes, sinks.console());
    }
    deliver(report, sinks)
}
