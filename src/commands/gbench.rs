use super::Env;
use super::interleave::{self, AaRun, Side, refuse_comparison};
use super::{Interleave, ReportOptions};
use super::{enrich_options, load_suite, output_sinks, report_outcome};
use crate::error::{Error, Result};
use crate::runner::gbench::GbenchRun;
use std::path::{Path, PathBuf};

/// A google/benchmark binary's run.
pub struct GbenchOptions {
    pub binary: PathBuf,
    /// `--benchmark_filter`.
    pub filter: Option<String>,
    /// `--benchmark_repetitions`, or rounds with `--interleave`, when given.
    pub repetitions: Option<u32>,
    /// `--benchmark_min_time`, as the binary takes it.
    pub min_time: Option<String>,
    /// Time, counted instructions, or both.
    pub measure: crate::runner::counts::Measure,
    /// Keep the binary's JSON here.
    pub raw: Option<PathBuf>,
    /// Extra arguments for the binary.
    pub extra: Vec<String>,
    /// With `--interleave`: the shell command that builds the binary in each tree.
    pub build: Option<String>,
    pub interleave: Interleave,
    pub report: ReportOptions,
}

pub fn run(args: GbenchOptions, env: &Env) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output, env)?;
    interleave::refuse_stray_gate(&args.interleave)?;
    if let Some(rev) = args.interleave.base.clone() {
        interleave::check_flags(&args.report.output)?;
        if args.raw.is_some() {
            return Err(Error::Input(
                "--raw keeps one run's output; it cannot be combined with --interleave".into(),
            ));
        }
        return interleaved(args, rev, env);
    }
    let run = GbenchRun {
        binary: args.binary,
        filter: args.filter,
        repetitions: args.repetitions.unwrap_or(1),
        min_time: args.min_time,
        extra: args.extra,
        raw: args.raw,
        progress: env.console.progress(args.report.output.quiet).cloned(),
        measure: args.measure,
        counted: args.repetitions,
    };
    let outcome = run.run(env.reach())?;
    let nothing = format!(
        "{} ran no benchmark{}",
        run.binary.display(),
        run.filter
            .as_deref()
            .map(|f| format!(" matching `{f}`"))
            .unwrap_or_default()
    );
    report_outcome(
        outcome,
        &run.binary.display().to_string(),
        &nothing,
        &args.report.output,
        &opts,
        sinks,
        &env.console,
    )
}

/// Runs the `--build` command in `dir` (one tree), its output on stderr (stdout is the
/// report); a failure is exit 1 naming the tree, an interrupt stops it (exit 130).
fn run_build(command: &str, dir: &Path, env: &Env) -> Result<()> {
    let status = crate::interrupt::status_of(
        std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::io::stderr()),
    )
    .map_err(|e| Error::Environment(format!("could not run sh for --build: {e}")))?;
    if env.interrupt.requested() {
        return Err(Error::Interrupted);
    }
    if !status.success() {
        return Err(Error::Peer(format!(
            "--build `{command}` failed in {} ({status})",
            dir.display()
        )));
    }
    Ok(())
}

/// `--interleave REV`: the base revision's binary (built with `--build`) and the working
/// tree's take turns, one repetition each per round.
fn interleaved(args: GbenchOptions, rev: String, env: &Env) -> Result<()> {
    let round = GbenchRun {
        binary: args.binary.clone(),
        filter: args.filter,
        repetitions: 1,
        min_time: args.min_time,
        extra: args.extra,
        raw: None,
        progress: env.console.progress(args.report.output.quiet).cloned(),
        measure: args.measure,
        counted: Some(1),
    };
    let here = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let build = |dir: &Path| match &args.build {
        Some(command) => run_build(command, dir, env),
        None => Ok(()),
    };
    interleave::run_rounds(
        &args.interleave,
        interleave::BaseRev {
            rev: &rev,
            within: &here,
        },
        interleave::Plan::of(
            &args.interleave,
            rounds(args.repetitions, args.measure),
            None,
        )?,
        &args.report.output,
        env,
        |base| {
            build(&base.counterpart(&here)?)?;
            build(&here)
        },
        |side| match side {
            Side::Working => round.run(env.reach()),
            Side::Base(base) => {
                let binary = base.counterpart(&args.binary)?;
                if !binary.exists() {
                    return Err(Error::Input(format!(
                        "{} does not exist in the base checkout: give --build with the \
                         command that builds it",
                        binary.display()
                    )));
                }
                GbenchRun {
                    binary,
                    ..round.clone()
                }
                .run(env.reach())
            }
        },
    )
}

/// The rounds of `--interleave`: the repetitions given, else one (counted instructions: enough
/// to show whether counts agree).
fn rounds(given: Option<u32>, measure: crate::runner::counts::Measure) -> u32 {
    given.unwrap_or(match measure.counts_only() {
        true => crate::runner::counts::COUNTED_RUNS,
        false => 1,
    })
}

/// `latkit calibrate -- gbench …`: the binary against itself, one repetition an arm a round;
/// the runs a side are the repetitions the run takes alone.
pub fn against_itself(args: GbenchOptions, rounds: u32, env: &Env) -> Result<AaRun> {
    refuse_comparison(args.interleave.comparing())?;
    refuse_comparison(args.raw.as_ref().map(|_| "--raw"))?;
    refuse_comparison(args.build.as_ref().map(|_| "--build"))?;
    let sinks = output_sinks(&args.report.output, env)?;
    let quiet = args.report.output.quiet;
    let progress = env.console.progress(quiet).cloned();
    let round = GbenchRun {
        binary: args.binary,
        filter: args.filter,
        repetitions: 1,
        min_time: args.min_time,
        extra: args.extra,
        raw: None,
        progress,
        measure: args.measure,
        counted: Some(1),
    };
    let talk = round.progress.is_some().then_some(&env.console);
    Ok(AaRun {
        done: interleave::against_itself(rounds, talk, |_| round.run(env.reach()))?,
        runs: u64::from(args.repetitions.unwrap_or(1)),
        sinks,
        quiet,
    })
}
