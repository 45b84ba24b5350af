use super::DbArgs;
use super::store::SeriesArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The directory to write the site into: created, or replaced whole when latkit wrote it
    /// before; any other directory is refused.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The index page's title.
    #[arg(long, value_name = "TEXT", default_value = "Benchmark history")]
    pub title: String,
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Significance level of the whole family of series: how often, at most, a site of
    /// unchanged benchmarks lists any change.
    #[arg(long, default_value = "0.05", value_parser = super::compare::alpha)]
    pub alpha: f64,
    #[command(flatten)]
    pub db: DbArgs,
    /// No summary line on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

impl From<SiteArgs> for crate::commands::SiteOptions {
    fn from(args: SiteArgs) -> Self {
        crate::commands::SiteOptions {
            selection: args.series.into(),
            alpha: args.alpha,
            out: args.out,
            title: args.title,
            db: args.db.db,
            quiet: args.quiet,
        }
    }
}
