use super::DbArgs;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub action: StoreAction,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Save results files (any format latkit reads) as runs, with the working directory's
    /// git commit, branch and dirty flag.
    Add {
        /// Files to store; `-` reads standard input.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<String>,
        #[command(flatten)]
        input: super::InputArgs,
        /// Tag the stored runs, so that `@tag:NAME` names them.
        #[arg(long, value_name = "NAME")]
        tag: Option<String>,
        /// No warnings on stderr (what the files' readers noted is stored with the runs).
        #[arg(short, long)]
        quiet: bool,
    },
    /// List stored runs, newest first.
    List {
        /// Only the newest N.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        last: Option<u32>,
        /// Only runs on this branch.
        #[arg(long, value_name = "NAME")]
        branch: Option<String>,
        /// Only runs with this tag.
        #[arg(long, value_name = "NAME")]
        tag: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: super::choices::ListFormatArg,
        #[command(flatten)]
        quiet: Quiet,
    },
    /// Report a stored run as `latkit parse` would (`@latest`, `@-1`, `@ID`, `@COMMIT`, ...).
    Show {
        #[arg(value_name = "REF")]
        reference: String,
        #[command(flatten)]
        report: Box<super::ReportArgs>,
    },
    /// Delete stored runs.
    Rm {
        #[arg(value_name = "REF", required = true)]
        references: Vec<String>,
        /// No `removed #ID` line per run.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Write a stored run as latkit JSON, which reads back exactly.
    Export {
        #[arg(value_name = "REF")]
        reference: String,
        /// Write to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        quiet: Quiet,
    },
}

/// `-q` where there is nothing to silence: scripts pass it to every latkit command.
#[derive(Debug, Args)]
pub struct Quiet {
    /// Accepted as by every command: this one writes nothing on stderr but errors.
    #[arg(short = 'q', long = "quiet")]
    _quiet: bool,
}

/// Which stored series to read: shared by `history` and `site`.
#[derive(Debug, Args)]
pub struct SeriesArgs {
    /// Benchmarks to show (a name or glob; default all).
    #[arg(value_name = "BENCH-GLOB")]
    pub bench: Option<String>,
    /// The figure to follow: a metric (`ns/op`), `METRIC:STATISTIC` (`latency:p99`) or a
    /// statistic of the distribution (`p99`); default the first the benchmark reports.
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Only the newest N stored runs (default: 20 for `history`'s trends, every run for
    /// `history --regressions` and `site`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,
    /// Only runs on this branch.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// Start at a stored run and show every later run's change from it: `@merge-base` (where
    /// HEAD left the default branch), `@merge-base:BRANCH`, `@tag:NAME`, `@ID`, `@COMMIT`.
    /// The base run is shown whatever its branch; with --branch, the later runs are that
    /// branch's.
    #[arg(long, value_name = "@RUN")]
    pub since: Option<String>,
    /// Leave out benchmarks matching GLOB (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub ignore: Vec<String>,
    /// More globs to leave out, one a line (`#` starts a comment); default `.latkitignore`
    /// in the working directory when there is one.
    #[arg(long, value_name = "FILE")]
    pub ignore_file: Option<PathBuf>,
}

impl From<SeriesArgs> for crate::commands::Selection {
    fn from(args: SeriesArgs) -> Self {
        crate::commands::Selection {
            bench: args.bench,
            ignore: args.ignore,
            ignore_file: args.ignore_file,
            metric: args.metric,
            last: args.last.map(|n| n as usize),
            branch: args.branch,
            since: args.since,
        }
    }
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    /// List the changes that hold (change points and the newest runs' changes, family-wise
    /// controlled), regressions first and newest first, instead of the trends; exit 1 when
    /// any is a regression, as a gate fails.
    #[arg(long)]
    pub regressions: bool,
    /// Significance level: of each change between consecutive runs in the trends; of the whole
    /// family of series with --regressions.
    #[arg(long, default_value = "0.05", value_parser = super::compare::alpha)]
    pub alpha: f64,
    #[command(flatten)]
    pub printed: super::compare::PrintedComparison,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub plots: super::PlotArgs,
    #[command(flatten)]
    pub quiet: Quiet,
}

impl From<StoreAction> for crate::commands::StoreAction {
    fn from(action: StoreAction) -> Self {
        use crate::commands::StoreAction as A;
        match action {
            StoreAction::Add {
                files,
                input,
                tag,
                quiet,
            } => A::Add {
                files,
                reading: input.into(),
                tag,
                quiet,
            },
            StoreAction::List {
                last,
                branch,
                tag,
                format,
                ..
            } => A::List {
                query: crate::store::RunQuery {
                    branch,
                    tag,
                    last: last.map(|n| n as usize),
                },
                format: format.into(),
            },
            StoreAction::Show { reference, report } => A::Show {
                reference,
                report: Box::new((*report).into()),
            },
            StoreAction::Rm { references, quiet } => A::Remove { references, quiet },
            StoreAction::Export { reference, out, .. } => A::Export { reference, out },
        }
    }
}

impl From<HistoryArgs> for crate::commands::HistoryOptions {
    fn from(args: HistoryArgs) -> Self {
        crate::commands::HistoryOptions {
            selection: args.series.into(),
            regressions: args.regressions,
            alpha: args.alpha,
            format: args.printed.format,
            out: args.printed.out,
            db: args.db.db,
            plots: args.plots.into(),
        }
    }
}
