use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct PageArgs {
    /// The page spec: "At a glance" rows, "Health check" rules, micro/realistic pairs
    /// (see docs/page.md).
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// Result files (any format latkit reads); several are pooled as one run. `-` or nothing
    /// reads standard input.
    #[arg(value_name = "INPUT")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub input: super::InputArgs,
    /// Page format (HTML comes with the HTML reports).
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: super::choices::PageFormatArg,
    /// Write the page to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl From<PageArgs> for crate::commands::PageOptions {
    fn from(args: PageArgs) -> Self {
        crate::commands::PageOptions {
            spec: args.spec,
            files: args.files,
            reading: args.input.into(),
            format: args.format.into(),
            out: args.out,
        }
    }
}
