use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Targets file (TOML: [[target]] bench/metric/below/above, an optional [budget], and
    /// [[regression]] rules judged against --base).
    #[arg(long, value_name = "FILE")]
    pub targets: PathBuf,
    /// Results in any format latkit reads, or latkit JSON; `-` or nothing reads stdin.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// How to print the verdict.
    #[arg(long, value_enum, default_value = "table")]
    pub format: super::choices::CheckFormatArg,
    /// Also write the verdict as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Fail (exit 2) when an input has a line latkit could not read, instead of listing it
    /// under the verdict.
    #[arg(long)]
    pub strict: bool,
    /// The base the targets file's [[regression]] rules compare the inputs with: a file in
    /// any format latkit reads, or a stored run (`@latest`, `@branch:main`, ...).
    #[arg(long, value_name = "INPUT")]
    pub base: Option<String>,
    /// Judge [[regression]] rules although the base comes from a different machine or
    /// settings (the differences are listed).
    #[arg(long)]
    pub allow_env_mismatch: bool,
    #[command(flatten)]
    pub db: super::DbArgs,
    /// Write the verdict to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub plots: super::PlotArgs,
    /// With a program after `--`: run it this many times and judge the BENCH lines of all the
    /// runs together (`max` is the max of the runs' maxima, `avg` the mean of their averages).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub runs: u32,
    /// No progress on the terminal while the program runs.
    #[arg(short, long)]
    pub quiet: bool,
    /// A program that prints `BENCH name: key=value` lines (RootStream's benches), run
    /// `--runs` times instead of reading INPUTs: `latkit check --targets t.toml --runs 6 --
    /// ./build/encode_latency_bench`.
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

impl From<CheckArgs> for crate::commands::CheckOptions {
    fn from(args: CheckArgs) -> Self {
        crate::commands::CheckOptions {
            targets: args.targets,
            inputs: args.inputs,
            reading: args.input.into(),
            format: args.format.into(),
            junit: args.junit,
            reject_malformed: args.strict,
            base: args.base,
            allow_env_mismatch: args.allow_env_mismatch,
            db: args.db.db,
            out: args.out,
            plots: args.plots.into(),
            command: args.command,
            runs: args.runs as usize,
            quiet: args.quiet,
        }
    }
}
