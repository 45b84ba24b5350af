use super::ReportArgs;
use clap::Args;

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Input files, or a directory of a format kept as one (criterion's `target/criterion`);
    /// `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// Treat all inputs as one run: repetitions, distributions, timer histograms and summaries
    /// of the same benchmark are pooled; what cannot be pooled is left out with a warning.
    #[arg(long)]
    pub merge: bool,
    /// Fail (exit 2) on the first malformed result line instead of skipping it.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl From<ParseArgs> for crate::commands::ParseOptions {
    fn from(args: ParseArgs) -> Self {
        crate::commands::ParseOptions {
            files: args.files,
            reading: args.input.into(),
            merge: args.merge,
            reject_malformed: args.strict,
            report: args.report.into(),
        }
    }
}
