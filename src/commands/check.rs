use super::Env;
use super::{Plots, Reading};
use super::{deliver, read_inputs};
use crate::analyze::compare::{CompareInput, CompareOptions, compare};
use crate::analyze::{EnrichOptions, build_report};
use crate::error::{Error, Result};
use crate::report::sink::{Destination, FanOut, Junit, Rendered, Verdict};
use crate::runner::bench::BenchProgram;
use crate::spec::targets::Targets;
use std::path::PathBuf;

/// How `check` prints its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    /// Terminal table.
    Table,
    /// GitHub markdown.
    Markdown,
    /// One self-contained HTML file: the verdict, the budget plot, the results' plots and
    /// tables.
    Html,
}

/// What `latkit check` judges against what, and where the verdict goes.
pub struct CheckOptions {
    /// The targets file (targets, budget, regression rules).
    pub targets: PathBuf,
    /// Results files; none (or `-`) is standard input.
    pub inputs: Vec<String>,
    pub reading: Reading,
    pub format: CheckFormat,
    /// Also the verdict as JUnit XML.
    pub junit: Option<PathBuf>,
    /// A malformed result line is an error instead of a note under the verdict.
    pub reject_malformed: bool,
    /// What `[[regression]]` rules compare the inputs with: a file or a stored run.
    pub base: Option<String>,
    /// Judge regression rules across different environments.
    pub allow_env_mismatch: bool,
    /// The history store's location, for a stored base.
    pub db: Option<String>,
    /// The verdict's file; `None` is standard output.
    pub out: Option<PathBuf>,
    pub plots: Plots,
    /// A program that prints BENCH lines, run `runs` times and judged instead of inputs.
    pub command: Vec<String>,
    pub runs: usize,
    /// No progress on the terminal.
    pub quiet: bool,
}

/// Judges results against a targets file: the verdict on stdout (and JUnit), exit 1 unless
/// everything passed. `[[regression]]` rules compare the results with `--base`.
pub fn run(args: CheckOptions, env: &Env) -> Result<()> {
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
    let mut sinks = FanOut::new(false, &env.console, env.report_time()?);
    let dest = Destination::open(args.out.as_deref(), &env.console.stdout)?;
    match args.format {
        CheckFormat::Html => sinks.push(Rendered::new(&crate::report::HTML, dest)),
        format => sinks.push(Verdict {
            dest,
            markdown: format == CheckFormat::Markdown,
        }),
    }
    sinks.push_plots(&args.plots.pairs()?)?;
    if let Some(path) = &args.junit {
        sinks.push(Junit(Destination::open(
            Some(path),
            &sinks.console().stdout,
        )?));
    }
    let reading = &args.reading;
    let (runs, notes, interrupted) = results(&args, env)?;
    let regression = match &args.base {
        Some(base) => {
            let mut store = super::store::LazyStore::new(args.db.as_deref(), &env.vars);
            let (label, base_runs, _) =
                super::store::read_input(base, reading, &mut store, &env.console)?;
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
    deliver(report, sinks)?;
    match interrupted {
        true => Err(Error::Interrupted),
        false => Ok(()),
    }
}

/// The results to judge: the program's BENCH lines over its runs, or the inputs read; and
/// whether an interrupt cut the runs short.
fn results(
    args: &CheckOptions,
    env: &Env,
) -> Result<(Vec<crate::model::Run>, Vec<crate::model::Note>, bool)> {
    if args.command.is_empty() {
        let reading = &args.reading;
        let (runs, notes) =
            read_inputs(&args.inputs, reading, args.reject_malformed, &env.console)?;
        return Ok((runs, notes, false));
    }
    if !args.inputs.is_empty() {
        return Err(Error::Input(format!(
            "check: give result files or a program after `--`, not both ({} and `{}`)",
            args.inputs.join(" "),
            args.command[0]
        )));
    }
    let program = BenchProgram {
        command: &args.command,
        runs: args.runs,
        progress: env.console.progress(args.quiet),
    };
    let (input, interrupted) = program.run(env.reach())?;
    if args.reject_malformed && input.malformed > 0 {
        let lines: Vec<String> = input.notes.iter().map(|n| n.to_string()).collect();
        return Err(Error::Input(format!(
            "{} line(s) of `{}` could not be read (--strict):\n{}",
            input.malformed,
            args.command[0],
            lines.join("\n")
        )));
    }
    Ok((input.runs, input.notes, interrupted))
}
