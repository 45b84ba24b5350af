use super::ReportArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GoArgs {
    /// Package pattern to benchmark [default: ./...].
    #[arg(value_name = "PKG")]
    pub package: Option<String>,
    /// Directory to run `go test` in (the module containing the package).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Benchmark regular expression (`go test -bench`) [default: .].
    #[arg(long, value_name = "REGEX")]
    pub bench: Option<String>,
    /// Repetitions of each benchmark (`-count`; rounds with --interleave) [default: 6, the
    /// fewest that give a median its 95 % interval, as benchstat asks].
    #[arg(long, value_name = "N")]
    pub count: Option<u32>,
    /// Time or iterations per sample (`-benchtime`: `1s`, `1000x`) [default: go's own, 1s].
    /// A sample shorter than 100 ms is reported as too short to trust.
    #[arg(long, value_name = "T")]
    pub benchtime: Option<String>,
    /// What each benchmark measures: `time` (go's ns/op, B/op, allocs/op), `instructions`
    /// (instructions/op: one iteration of its loop, counted by valgrind over the whole test
    /// binary, which load does not move; three times, six when they spread, unless --count
    /// says), or `time,instructions`.
    #[arg(long, value_name = "WHAT", default_value = "time",
          value_parser = crate::runner::counts::Measure::parse)]
    pub measure: crate::runner::counts::Measure,
    /// Keep go test's raw output in FILE (written as it arrives).
    #[arg(long, value_name = "FILE")]
    pub raw: Option<PathBuf>,
    /// Extra arguments passed to `go test` after the package; its build flags (`-tags`,
    /// `-gcflags`, `-race`) build the binary that is counted too.
    #[arg(last = true, value_name = "GO_TEST_ARGS")]
    pub extra: Vec<String>,
    #[command(flatten)]
    pub interleave: super::InterleaveArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl From<GoArgs> for crate::commands::GoOptions {
    fn from(args: GoArgs) -> Self {
        crate::commands::GoOptions {
            package: args.package,
            dir: args.dir,
            bench: args.bench,
            count: args.count,
            benchtime: args.benchtime,
            measure: args.measure,
            raw: args.raw,
            extra: args.extra,
            interleave: args.interleave.into(),
            report: args.report.into(),
        }
    }
}
