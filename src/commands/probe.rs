//! What the measuring probes share: report the run like `parse`, then gate it if asked.

use super::{check::gate, open_output, write_report};
use crate::analyze::{EnrichOptions, build_report};
use crate::atomic_file::OutputFile;
use crate::error::Result;
use crate::model::Run;
use std::io::{self, IsTerminal};
use std::time::Duration;

/// Runs `work` behind a spinner with `what` and the elapsed time, when stderr is a terminal.
pub fn with_progress<T>(what: &str, work: impl FnOnce() -> T) -> T {
    if !io::stderr().is_terminal() {
        return work();
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        spinner.set_style(style);
    }
    spinner.set_message(what.to_string());
    spinner.enable_steady_tick(Duration::from_millis(120));
    let result = work();
    spinner.finish_and_clear();
    result
}

pub fn frame(args: crate::cli::FrameArgs) -> Result<()> {
    let out = open_output(&args.output.out)?;
    let run = with_progress("frame", || {
        crate::probe::frame::run(&crate::probe::frame::FrameConfig {
            width: args.width as usize,
            height: args.height as usize,
            pixfmt: args.pixfmt.into(),
            op: args.op.into(),
            iterations: args.iterations,
            warmup: args.warmup,
        })
    })?;
    probe_report(run, &args.output, out)
}

/// Reports a probe's run like `parse` does (to `out`, opened before measuring), then gates
/// it when a targets file is given.
pub fn probe_report(
    run: Run,
    output: &crate::cli::ProbeOutputArgs,
    out: Option<OutputFile>,
) -> Result<()> {
    let report = build_report(vec![run], Vec::new(), &EnrichOptions::default())?;
    write_report(&report, output.format.into(), out)?;
    match output.check.as_deref() {
        Some(path) => {
            let targets = crate::targets::Targets::load(path)?;
            gate(
                &targets,
                &report,
                crate::cli::CheckFormat::Table,
                None,
                &mut io::stderr(),
            )
        }
        None => Ok(()),
    }
}
