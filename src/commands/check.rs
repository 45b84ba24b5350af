use super::read_inputs;
use crate::analyze::{EnrichOptions, build_report};
use crate::error::{Error, Result};
use crate::model::Run;
use std::io::{self, Write};

pub fn run(args: crate::cli::CheckArgs) -> Result<()> {
    let targets = crate::targets::Targets::load(&args.targets)?;
    let (runs, notes) = read_inputs(&args.inputs, args.input_format, false)?;
    let report = build_report(runs, notes, &EnrichOptions::default())?;
    let mut stdout = io::stdout().lock();
    gate(
        &targets,
        &report.runs,
        args.format,
        args.junit.as_deref(),
        &mut stdout,
    )
}

/// Evaluates targets against runs, prints the verdict, writes JUnit when asked, and fails
/// (exit 1) unless everything passed.
pub fn gate(
    targets: &crate::targets::Targets,
    runs: &[Run],
    format: crate::cli::CheckFormat,
    junit: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let verdict = crate::analyze::gate::evaluate(targets, runs)?;
    let text = match format {
        crate::cli::CheckFormat::Table => crate::report::gate::terminal(&verdict),
        crate::cli::CheckFormat::Markdown => crate::report::gate::markdown(&verdict),
    };
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("output", e))?;
    if let Some(path) = junit {
        std::fs::write(path, crate::report::gate::junit(&verdict))
            .map_err(|e| Error::io(&path.display().to_string(), e))?;
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
