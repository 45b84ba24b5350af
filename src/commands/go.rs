use super::Env;
use super::interleave::{self, AaRun, Side, refuse_comparison};
use super::{Interleave, ReportOptions};
use super::{enrich_options, load_suite, output_sinks, report_outcome};
use crate::env::Stream;
use crate::error::{Error, Result};
use crate::runner::go::GoTest;
use std::path::PathBuf;

/// A `go test -bench` run; what is not given comes from the suite file's `[go]`, then
/// defaults that give figures worth comparing: go's own time per sample, benchstat's count.
pub struct GoOptions {
    /// Package pattern (default `./...`).
    pub package: Option<String>,
    /// Where `go test` runs.
    pub dir: Option<PathBuf>,
    /// `-bench` (default `.`).
    pub bench: Option<String>,
    /// `-count`, or rounds with `--interleave` (default 6).
    pub count: Option<u32>,
    /// `-benchtime` (default: go's own, one second per sample).
    pub benchtime: Option<String>,
    /// Time, counted instructions, or both.
    pub measure: crate::runner::counts::Measure,
    /// Keep go test's raw output here.
    pub raw: Option<PathBuf>,
    /// Extra `go test` arguments after the package.
    pub extra: Vec<String>,
    pub interleave: Interleave,
    pub report: ReportOptions,
}

/// Repetitions when none are asked for: the fewest that give the median a 95 % interval, as
/// benchstat asks for.
const DEFAULT_COUNT: u32 = 6;

impl GoOptions {
    /// The `go test` run asked for, what is not given taken from `suite`; whether the count
    /// was given.
    fn test(
        &mut self,
        suite: &crate::spec::suite::Suite,
        progress: Option<&Stream>,
    ) -> Result<(GoTest, bool)> {
        let defaults = &suite.go;
        let count_given = self.count.or(defaults.count).is_some();
        let test = GoTest {
            package: self
                .package
                .take()
                .or_else(|| defaults.package.clone())
                .unwrap_or_else(|| "./...".into()),
            dir: self.dir.take().or_else(|| defaults.dir.clone()),
            bench: self
                .bench
                .take()
                .or_else(|| defaults.bench.clone())
                .unwrap_or_else(|| ".".into()),
            count: self.count.or(defaults.count).unwrap_or(DEFAULT_COUNT),
            benchtime: self.benchtime.take().or_else(|| defaults.benchtime.clone()),
            extra: match std::mem::take(&mut self.extra) {
                extra if extra.is_empty() => defaults.args.clone(),
                extra => extra,
            },
            raw: self.raw.take(),
            progress: progress.cloned(),
            measure: self.measure,
            // Counted until they show whether they agree, unless a count is asked for.
            counted: self.count.or(defaults.count),
        };
        if let Some(dir) = test.dir.as_deref().filter(|dir| !dir.is_dir()) {
            // Spawning in a missing directory fails as a missing `go` would.
            return Err(Error::Input(format!(
                "--dir {}: no such directory",
                dir.display()
            )));
        }
        if test.count == 0 {
            return Err(Error::Input("--count must be at least 1".into()));
        }
        Ok((test, count_given))
    }
}

pub fn run(mut args: GoOptions, env: &Env) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let progress = env.console.progress(args.report.output.quiet);
    let (test, count_given) = args.test(&suite, progress)?;
    interleave::refuse_stray_gate(&args.interleave)?;
    if let Some(rev) = &args.interleave.base {
        interleave::check_flags(&args.report.output)?;
        if test.raw.is_some() {
            return Err(Error::Input(
                "--raw keeps one run's output; it cannot be combined with --interleave".into(),
            ));
        }
        return interleaved(
            test,
            count_given,
            &args.interleave,
            rev,
            &args.report.output,
            env,
        );
    }
    let opts = enrich_options(&args.report, &suite)?;
    let sinks = output_sinks(&args.report.output, env)?;
    let outcome = test.run(env.reach())?;
    if let Some(raw) = test.raw.as_deref().filter(|_| !args.report.output.quiet) {
        env.console.say(&format!("latkit: wrote {}", raw.display()));
    }
    let nothing = format!("go test ran no benchmark matching `{}`", test.bench);
    report_outcome(
        outcome,
        "go test",
        &nothing,
        &args.report.output,
        &opts,
        sinks,
        &env.console,
    )
}

/// `--interleave REV`: the base revision's tree and the working tree take turns, one
/// repetition each per round.
fn interleaved(
    test: GoTest,
    count_given: bool,
    args: &Interleave,
    rev: &str,
    output: &super::Output,
    env: &Env,
) -> Result<()> {
    let here = test.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let plan = if count_given {
        interleave::Plan::of(args, test.count, Some("--count"))?
    } else {
        let rounds = match test.measure.counts_only() {
            true => crate::runner::counts::COUNTED_RUNS,
            false => interleave::DEFAULT_ROUNDS,
        };
        interleave::Plan::of(args, rounds, None)?
    };
    let round = GoTest {
        count: 1,
        counted: Some(1),
        ..test
    };
    interleave::run_rounds(
        args,
        interleave::BaseRev { rev, within: &here },
        plan,
        output,
        env,
        |_| Ok(()),
        |side| match side {
            Side::Working => round.run(env.reach()),
            Side::Base(base) => GoTest {
                dir: Some(base.counterpart(&here)?),
                ..round.clone()
            }
            .run(env.reach()),
        },
    )
}

/// `latkit calibrate -- go …`: the working tree against itself, one repetition an arm a
/// round; the runs a side are the count the run takes alone.
pub fn against_itself(mut args: GoOptions, rounds: u32, env: &Env) -> Result<AaRun> {
    let suite = load_suite(&args.report)?;
    let progress = env.console.progress(args.report.output.quiet);
    let (test, _) = args.test(&suite, progress)?;
    refuse_comparison(args.interleave.comparing())?;
    refuse_comparison(test.raw.as_ref().map(|_| "--raw"))?;
    let sinks = output_sinks(&args.report.output, env)?;
    let round = GoTest {
        count: 1,
        counted: Some(1),
        ..test.clone()
    };
    let talk = progress.is_some().then_some(&env.console);
    Ok(AaRun {
        done: interleave::against_itself(rounds, talk, |_| round.run(env.reach()))?,
        runs: u64::from(test.count),
        sinks,
        quiet: args.report.output.quiet,
    })
}
