use super::read_inputs;
use crate::analyze::{EnrichOptions, build_report};
use crate::error::{Error, Result};
use crate::model::{Level, Note};
use crate::report::Report;
use std::io::{self, Write};

pub fn run(args: crate::cli::CheckArgs) -> Result<()> {
    let targets = crate::targets::Targets::load(&args.targets)?;
    let (runs, notes) = read_inputs(
        &args.inputs,
        crate::cli::input_format(&args.input_format),
        args.strict,
    )?;
    let report = build_report(runs, notes, &EnrichOptions::default())?;
    let mut stdout = io::stdout().lock();
    gate(
        &targets,
        &report,
        args.format,
        args.junit.as_deref(),
        &mut stdout,
    )
}

/// Evaluates targets against a report's runs, prints the verdict with the input lines that
/// could not be read, writes JUnit when asked, and fails (exit 1) unless everything passed.
pub fn gate(
    targets: &crate::targets::Targets,
    report: &Report,
    format: crate::cli::CheckFormat,
    junit: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let verdict = crate::analyze::gate::evaluate(targets, &report.runs)?;
    let skipped: Vec<&Note> = report
        .notes
        .iter()
        .filter(|n| n.level == Level::Warning && n.line.is_some())
        .collect();
    let text = match format {
        crate::cli::CheckFormat::Table => crate::report::gate::terminal(&verdict, &skipped),
        crate::cli::CheckFormat::Markdown => crate::report::gate::markdown(&verdict, &skipped),
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("output", e))?;
    if let Some(path) = junit {
        crate::atomic_file::write_file(path, crate::report::gate::junit(&verdict).as_bytes())?;
    }
    if verdict.passed() {
        Ok(())
    } else {
        let missed = verdict
            .targets
            .iter()
            .filter(|t| t.status != crate::analyze::gate::Status::Pass)
            .count()
            + verdict
                .budget
                .iter()
                .filter(|b| b.status != crate::analyze::gate::Status::Pass)
                .count();
        Err(Error::Failed(format!(
            "{missed} target(s) missed or not measured"
        )))
    }
}
