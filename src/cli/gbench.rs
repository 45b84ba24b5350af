use super::ReportArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GbenchArgs {
    /// The google/benchmark binary to run.
    #[arg(value_name = "BINARY")]
    pub binary: PathBuf,
    /// Benchmarks to run (`--benchmark_filter`, a regular expression).
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Repetitions of each benchmark (`--benchmark_repetitions`; rounds with --interleave);
    /// every repetition is kept, for medians with confidence intervals (6 or more give one).
    /// 1 unless given; counted instructions: 3, or 6 when those 3 differ.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repetitions: Option<u32>,
    /// Minimum time per benchmark (`--benchmark_min_time`: seconds, or `0.5s` / `100x` with
    /// google/benchmark 1.8 and later).
    #[arg(long, value_name = "T")]
    pub min_time: Option<String>,
    /// What each benchmark measures: `time` (its real and CPU time), `instructions`
    /// (instructions/op of its function, counted by valgrind: the same whatever else the
    /// machine does; counted 3 times, 6 when those differ, unless --repetitions says), or
    /// `time,instructions`.
    #[arg(long, value_name = "WHAT", default_value = "time",
          value_parser = crate::runner::counts::Measure::parse)]
    pub measure: crate::runner::counts::Measure,
    /// Keep the binary's own JSON output in FILE.
    #[arg(long, value_name = "FILE")]
    pub raw: Option<PathBuf>,
    /// Extra arguments passed to the binary.
    #[arg(last = true, value_name = "ARGS")]
    pub extra: Vec<String>,
    /// With --interleave: the command (run by `sh -c` in the current directory's counterpart
    /// of each tree) that builds BINARY, e.g. `cmake --build build --target bench`.
    #[arg(long, value_name = "CMD", requires = "interleave")]
    pub build: Option<String>,
    #[command(flatten)]
    pub interleave: super::InterleaveArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl From<GbenchArgs> for crate::commands::GbenchOptions {
    fn from(args: GbenchArgs) -> Self {
        crate::commands::GbenchOptions {
            binary: args.binary,
            filter: args.filter,
            repetitions: args.repetitions,
            min_time: args.min_time,
            measure: args.measure,
            raw: args.raw,
            extra: args.extra,
            build: args.build,
            interleave: args.interleave.into(),
            report: args.report.into(),
        }
    }
}
