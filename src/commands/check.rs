use super::{deliver, read_inputs};
use crate::analyze::compare::{CompareInput, CompareOptions, compare};
use crate::analyze::{EnrichOptions, build_report};
use crate::cli::{CheckArgs, CheckFormat};
use crate::error::{Error, Result};
use crate::report::sink::{Destination, FanOut, Junit, Rendered, Verdict};
use crate::spec::targets::Targets;

/// Judges results against a targets file: the verdict on stdout (and JUnit), exit 1 unless
/// everything passed. `[[regression]]` rules compare the results with `--base`.
pub fn run(args: CheckArgs) -> Result<()> {
    super::refuse_overwriting_inputs(&args.inputs, &[args.out.as_deref(), args.junit.as_deref()])?;
    let targets = Targets::load(&args.targets)?;
    match (&args.base, targets.regressions.is_empty()) {
        (None, false) => {
            return Err(Error::Input(format!(
                "{}: [[regression]] rules need a base to compare with (--base FILE or @ref)",
                targets.file
            )));
        }
        (Some(_), true) => {
            return Err(Error::Input(format!(
                "--base given but {} has no [[regression]] rule to judge with it",
                targets.file
            )));
        }
        _ => {}
    }
    let mut sinks = FanOut::default();
    let dest = Destination::open(args.out.as_deref())?;
    match args.format {
        CheckFormat::Html => sinks.push(Rendered::new(crate::cli::output_format("html")?, dest)),
        format => sinks.push(Verdict {
            dest,
            markdown: format == CheckFormat::Markdown,
        }),
    }
    sinks.push_plots(&args.plots.pairs()?)?;
    if let Some(path) = &args.junit {
        sinks.push(Junit(Destination::open(Some(path))?));
    }
    let reading = super::Reading::of(&args.input);
    let (runs, notes) = read_inputs(&args.inputs, &reading, args.strict)?;
    let regression = match &args.base {
        Some(base) => {
            let mut store = super::store::LazyStore::new(&args.db);
            let (label, base_runs, _) = super::store::read_input(base, &reading, &mut store)?;
            let inputs = vec![
                CompareInput {
                    label,
                    runs: base_runs,
                },
                CompareInput {
                    label: "results".into(),
                    runs: runs.clone(),
                },
            ];
            let opts = CompareOptions {
                rules: targets.regressions.clone(),
                allow_env_mismatch: args.allow_env_mismatch,
                ..CompareOptions::default()
            };
            Some(compare(inputs, &opts)?)
        }
        None => None,
    };
    let opts = EnrichOptions {
        targets: Some(targets),
        ..EnrichOptions::default()
    };
    let mut report = build_report(runs, notes, &opts)?;
    if let Some(compared) = regression {
        report.notes.extend(compared.notes);
        if let (Some(verdict), Some(judged)) = (&mut report.verdict, compared.verdict) {
            verdict.targets.extend(judged.targets);
        }
    }
    deliver(&report, sinks)
}
