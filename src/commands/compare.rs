use super::{deliver, read_inputs, say_warnings};
use crate::analyze::compare::{CompareInput, CompareOptions, RegressionRule, compare};
use crate::cli::CompareArgs;
use crate::error::Result;
use crate::report::sink::{Destination, FanOut, Junit, Rendered};
use std::io::{self, IsTerminal};

/// Compares inputs against the first: tables on stdout (or `--out`), the `--fail-on`
/// verdict on stderr and in JUnit; exit 1 on a significant regression.
pub fn run(args: CompareArgs) -> Result<()> {
    let mut sinks = FanOut::default();
    sinks.push(Rendered::new(
        crate::cli::output_format(args.format.name())?,
        Destination::open(args.out.as_deref())?,
    ));
    sinks.push_verdict_if(!args.fail_on.is_empty());
    if let Some(path) = &args.junit {
        sinks.push(Junit(Destination::open(Some(path))?));
    }
    let format = crate::cli::input_format(&args.input.input_format);
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    for spec in &args.inputs {
        let (runs, read_notes) = read_inputs(std::slice::from_ref(spec), format, false)?;
        notes.extend(read_notes);
        inputs.push(CompareInput {
            label: label(spec),
            runs,
        });
    }
    let opts = CompareOptions {
        alpha: args.alpha,
        metric: args.metric.clone(),
        statistics: args.statistics.clone(),
        rules: args
            .fail_on
            .iter()
            .map(|rule| RegressionRule {
                strict: args.strict,
                ..rule.clone()
            })
            .collect(),
        allow_env_mismatch: args.allow_env_mismatch,
    };
    let mut report = compare(inputs, &opts)?;
    notes.append(&mut report.notes);
    report.notes = notes;
    if !args.quiet && (args.out.is_some() || !io::stdout().is_terminal()) {
        say_warnings(&report.notes);
    }
    deliver(&report, sinks)
}

/// A column's heading: the file name, as benchstat heads its columns.
pub(super) fn label(spec: &str) -> String {
    match spec {
        "-" => "stdin".to_string(),
        path => std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned()),
    }
}
