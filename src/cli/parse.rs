use super::ReportArgs;
use super::choices::InputFormatArg;
use clap::Args;

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Input files; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Input format.
    #[arg(long, value_enum, default_value = "auto")]
    pub input_format: InputFormatArg,
    /// Treat all inputs as one run: repetitions of the same benchmark are pooled.
    #[arg(long)]
    pub merge: bool,
    /// Fail (exit 2) on the first malformed result line instead of skipping it.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub report: ReportArgs,
}
