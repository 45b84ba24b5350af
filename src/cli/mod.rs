//! The command line: arguments and their help, each flag parsed and checked once, then
//! handed to `crate::commands` as plain options (no command sees clap).

mod bisect;
mod calibrate;
mod check;
mod choices;
mod compare;
mod docs;
mod exec;
mod frame;
mod gbench;
mod go;
mod net;
mod overlap;
mod page;
mod parse;
mod site;
mod store;
mod timer;

use check::CheckArgs;
use compare::{CompareArgs, InterleaveArgs};
use docs::Shell;
use exec::ExecArgs;
use frame::FrameArgs;
use gbench::GbenchArgs;
use go::GoArgs;
use net::NetArgs;
use page::PageArgs;
use parse::ParseArgs;
use store::{HistoryArgs, StoreArgs};
use timer::TimerArgs;

use crate::commands::{self, Output, Plots, Reading, ReportOptions, Storing};
use crate::error::Result;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "latkit",
    version,
    about = "Latency benchmarking toolkit: measure, run and read harnesses, decide.",
    long_about = "latkit measures latency with its own probes (timer wake-up, network round trip \
                  and throughput, frame-stage cost) and times whole commands, runs and reads the \
                  harnesses you already have (Go benchmarks, google/benchmark, Xenomai latency, \
                  cyclictest, BENCH lines, hyperfine, criterion, Rust libtest, pytest-benchmark), and turns \
                  the numbers into decisions: medians with confidence intervals, shares of a \
                  baseline, stage attribution, percentiles, run-to-run comparison with real \
                  statistics, a history store (SQLite or PostgreSQL), targets and budgets as a \
                  CI gate, and reports from terminal tables to HTML with plots.\n\n\
                  Exit codes: 0 success; 1 a target, gate or threshold failed; 2 bad usage \
                  or unreadable input; 3 a --runs auto comparison still undecided after \
                  --max-runs rounds; 4 an output could not be written (a full disk, no \
                  permission, a missing folder); 5 the environment refused (a missing tool, \
                  no permission); 6 a peer failed (the measured command, go test, a build, \
                  a net server); 130 interrupted (after the summary was printed and the \
                  results were written)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read benchmark output (files or stdin) and report it.
    Parse(ParseArgs),
    /// Run `go test -bench` with latency-suite settings and report the results.
    Go(GoArgs),
    /// Run a google/benchmark binary (JSON to a file, repetitions kept) and report the results.
    Gbench(GbenchArgs),
    /// Measure periodic timer wake-up latency (Xenomai `latency` / cyclictest class): user
    /// thread, kernel thread or timer IRQ (`-t 0|1|2`).
    #[command(mut_arg("format", |a| a
        .default_value("xenomai")
        .help("Output format; `xenomai` prints the per-second lines live")))]
    Timer(TimerArgs),
    /// Time whole commands, as hyperfine does: wall, user and system time and max RSS per
    /// run, warm-up, parameters, several commands compared.
    #[command(
        after_help = "Ctrl-C or SIGTERM: the run in progress is discarded, every \
finished run is printed, written and stored, exit 130; a command still running 3 s later \
is killed. --out/--json files are written as each command finishes."
    )]
    Exec(Box<ExecArgs>),
    /// Network round trip, rate and throughput: client, server, or both on loopback.
    Net(NetArgs),
    /// Time one pipeline stage on a video frame (copy, or YUV to RGBA conversion).
    Frame(FrameArgs),
    /// Check whether this host can measure latency well, with advice for each problem.
    Doctor(DoctorArgs),
    /// Gate results against targets and a latency budget (exit 1 when any misses).
    Check(CheckArgs),
    /// Did it get slower? Compare inputs with the first (medians with 95% CIs, Mann-Whitney U
    /// p-values, distributions by percentile bounds), after checking their environments
    /// match; `--fail-on` gates on significant regressions.
    Compare(CompareArgs),
    /// The trend of benchmarks across stored runs, with change points marked.
    History(HistoryArgs),
    /// A static dashboard of the history store in a directory: the changes that hold,
    /// regressions first, then every benchmark, and a page per benchmark with its trend.
    /// Plain files that open from file:// or any static host and fetch nothing.
    Site(site::SiteArgs),
    /// The history store: add results, list, show, delete or export stored runs.
    Store(StoreArgs),
    /// Generate a performance page ("At a glance", "Health check", environment, caveats)
    /// from a spec and results, with numbers, verdicts and caveats computed.
    Page(PageArgs),
    /// The noise floor of this machine: runs a go, gbench or exec suite against itself
    /// (A/A, the arms taking turns) and says per figure how much it varies run to run, the
    /// smallest change a gate can detect with the runs the suite takes, and the runs a named
    /// change needs.
    #[command(
        after_help = "Example: latkit calibrate --effect 2% --save calibration.json -- \
exec 'sleep 0.01'\n\nThen `--calibration calibration.json` on compare, go, gbench or exec \
gates warns when a threshold is below what this machine can tell."
    )]
    Calibrate(calibrate::CalibrateArgs),
    /// Which commit made it slower: a binary search between --good and --bad in which each
    /// tested commit is measured interleaved with both ends until the signed-rank test places it.
    #[command(
        after_help = "Exit 0 when a first bad commit is named, 1 when bad is shown better than \
good or worse by less than --threshold (no commit is blamed), 2 for bad usage, 3 when the ends \
or a commit cannot be told apart in --max-rounds (undecided, never a guess), 6 when an end \
fails to build or run, 130 when interrupted (the table so far is printed; every checkout is \
removed)."
    )]
    Bisect(bisect::BisectArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell) for latkit.
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print latkit's man page (roff), generated from the same definitions as --help.
    Man,
}

/// The command line of this process, parsed, checked (no output may name a file the command
/// also reads or writes otherwise) and converted; clap's own errors and `--help` exit here.
pub fn command_line() -> Result<commands::Command> {
    parse(std::env::args_os())
}

/// A command line, parsed as [`command_line`] parses this process's.
fn parse(
    args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Result<commands::Command> {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command();
    let matches = command.clone().get_matches_from(benchstat_spellings(args));
    overlap::refuse_overlaps(&command, &matches)?;
    Cli::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .into_command()
}

/// benchstat's single-dash options (`-filter`, `-alpha`, `-ignore`, `-row`, `-col`, `-table`) as `compare` takes them, so that a
/// benchstat command line works after `latkit compare` as typed.
fn benchstat_spellings(
    args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Vec<std::ffi::OsString> {
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let comparing = args.get(1).is_some_and(|a| a == "compare");
    args.into_iter()
        .map(|arg| match arg.to_str() {
            Some(single)
                if comparing
                    && ["-filter", "-alpha", "-ignore", "-row", "-col", "-table"]
                        .iter()
                        .any(|flag| {
                            single
                                .strip_prefix(flag)
                                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
                        }) =>
            {
                format!("-{single}").into()
            }
            _ => arg,
        })
        .collect()
}

/// The command `latkit calibrate` runs against itself: a latkit command line (`go …`,
/// `gbench …`, `exec …`), parsed and checked as if typed alone, its outputs also against
/// calibrate's `--save`.
fn inner_command(line: &[String], save: Option<&std::path::Path>) -> Result<commands::Command> {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command();
    let argv = std::iter::once("latkit").chain(line.iter().map(String::as_str));
    let matches = command.clone().get_matches_from(argv);
    let save: Vec<_> = save
        .map(|path| ("--save", path.as_os_str()))
        .into_iter()
        .collect();
    overlap::refuse_overlaps_with(&command, &matches, &save)?;
    let inner = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match inner.command {
        Command::Go(_) | Command::Gbench(_) | Command::Exec(_) => inner.into_command(),
        _ => Err(crate::error::Error::Input(format!(
            "latkit calibrate runs `go`, `gbench` or `exec` against itself, not `{}`",
            line[0]
        ))),
    }
}

impl Cli {
    /// What the command line asks for, every option checked and converted.
    pub fn into_command(self) -> Result<commands::Command> {
        use commands::Command as C;
        Ok(match self.command {
            Command::Parse(args) => C::Parse(args.into()),
            Command::Go(args) => C::Go(args.into()),
            Command::Gbench(args) => C::Gbench(args.into()),
            Command::Timer(args) => C::Timer(args.into()),
            Command::Exec(args) => C::Exec(args.into_options()?),
            Command::Net(args) => C::Net(args.mode.into()),
            Command::Frame(args) => C::Frame(args.into()),
            Command::Doctor(args) => C::Doctor(args.format.into()),
            Command::Check(args) => C::Check(args.into()),
            Command::Compare(args) => C::Compare(args.into()),
            Command::Bisect(args) => C::Bisect(args.into_options()?),
            Command::Calibrate(args) => C::Calibrate(args.into_options()?),
            Command::History(args) => C::History(args.into()),
            Command::Site(args) => C::Site(args.into()),
            Command::Store(args) => {
                let db = args.db.db.clone();
                C::Store(args.action.into(), db)
            }
            Command::Page(args) => C::Page(args.into()),
            Command::Completions { shell } => C::Print(docs::completion_script(shell)),
            Command::Man => {
                C::Print(docs::man_page().map_err(|e| crate::error::Error::io("man page", e))?)
            }
        })
    }
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: choices::DoctorFormatArg,
}

/// Where a result goes and how it is gated: defined once, shared by every command that
/// produces results.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "table",
          value_parser = choices::output_format_parser())]
    pub format: &'static crate::report::OutputFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the whole result as latkit JSON to FILE, whatever --format shows.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the tables as markdown to FILE (hyperfine's option of the same name).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write the tables as CSV to FILE (hyperfine's option of the same name).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Gate the result against a targets file (see `latkit check`); the verdict goes to stderr.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// No progress and no warnings on stderr; the report still carries every note.
    #[arg(short, long)]
    pub quiet: bool,
    /// Also save every run in the history store, with its git commit, branch and dirty flag
    /// (see `latkit history` and `latkit store`).
    #[arg(long)]
    pub store: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// Tag the stored run, so that `@tag:NAME` names it.
    #[arg(long, value_name = "NAME", requires = "store")]
    pub tag: Option<String>,
    #[command(flatten)]
    pub plots: PlotArgs,
}

/// Single plots as SVG files; shared by every command that reports.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Also draw a plot as an SVG file (repeatable). Each pairs with a --plot-kind in order
    /// (one kind serves them all); without a kind, the first kind the result has is drawn.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Vec<PathBuf>,
    /// What --plot draws.
    #[arg(long, value_enum, value_name = "KIND")]
    pub plot_kind: Vec<choices::PlotKindArg>,
}

impl From<OutputArgs> for Output {
    fn from(args: OutputArgs) -> Output {
        Output {
            format: args.format,
            out: args.out,
            json: args.json,
            exports: [
                (
                    crate::report::output_format("markdown"),
                    args.export_markdown,
                ),
                (crate::report::output_format("csv"), args.export_csv),
            ]
            .into_iter()
            .filter_map(|(format, path)| Some((format?, path?)))
            .collect(),
            hyperfine: Vec::new(),
            style: crate::commands::Style::Default,
            check: args.check,
            quiet: args.quiet,
            store: args.store.then_some(Storing {
                db: args.db.db,
                tag: args.tag,
            }),
            plots: args.plots.into(),
        }
    }
}

impl From<PlotArgs> for Plots {
    fn from(args: PlotArgs) -> Plots {
        Plots {
            files: args.plot,
            kinds: args.plot_kind.into_iter().map(Into::into).collect(),
        }
    }
}

/// Where the history store is; shared by every command that reads or writes it.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// History database: a SQLite file path or a `postgres://` URL (default: LATKIT_DB, else
    /// $XDG_DATA_HOME/latkit/history.db).
    #[arg(long, value_name = "URL", global = true)]
    pub db: Option<String>,
}

/// Which input format to read; shared by the commands that read results.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Input format.
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = choices::input_format_parser())]
    pub input_format: String,
    /// Which way is better for METRIC where the input does not say (a Bencher measure, a
    /// github-action-benchmark or custom unit): `free-memory=higher`. Repeatable.
    #[arg(long, value_name = "METRIC=higher|lower")]
    pub better: Vec<crate::model::BetterOverride>,
}

impl From<InputArgs> for Reading {
    fn from(args: InputArgs) -> Reading {
        Reading {
            format: choices::input_format(&args.input_format),
            better: args.better,
        }
    }
}

/// How read or harness results are analysed and reported.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub output: OutputArgs,
    /// Benchmark (name or glob) whose value is 100% in a "% of" column. A glob without `/`
    /// is matched against each benchmark's own name (its last path element), one with `/`
    /// against the whole name; one that names several benchmarks of a table is exit 2. When
    /// it names none, the largest value is used and a note says so.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Suite file (latkit.toml) with attribution roles and defaults; see docs/tables.md.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Metric to tabulate (default: the first the harness reports, ns/op for Go).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// One table per repetition (cycle) instead of medians across repetitions.
    #[arg(long)]
    pub per_run: bool,
    /// A "Relative" column: each row's mean against the best row's (1.00), with the ratio's
    /// 95 % confidence interval, as hyperfine's relative speed. On by default for `exec` with
    /// several commands.
    #[arg(long)]
    pub relative: bool,
}

impl From<ReportArgs> for ReportOptions {
    fn from(args: ReportArgs) -> ReportOptions {
        ReportOptions {
            output: args.output.into(),
            baseline: args.baseline,
            suite: args.suite,
            metric: args.metric,
            per_run: args.per_run,
            relative: args.relative,
            relative_to: None,
        }
    }
}

/// The longest run a duration option accepts: one year, in seconds.
pub const MAX_SECONDS: u64 = 31_536_000;

/// A latency threshold in µs (`--break`, `--max`): finite, from 0 to an hour.
fn latency_us(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|us| (0.0..=3.6e9).contains(us))
        .ok_or_else(|| format!("`{text}` is not a latency in µs from 0 to 3600000000"))
}

/// Seconds (`--duration`, `--warmup`): finite, from 0 to a day.
fn seconds(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| (0.0..=86_400.0).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0 to 86400"))
}

/// `--runs N|auto`.
pub(super) fn runs_or_auto(text: &str) -> std::result::Result<commands::Runs, String> {
    match text {
        "auto" => Ok(commands::Runs::Auto),
        _ => text
            .parse::<u32>()
            .ok()
            .filter(|&n| (1..=10_000_000).contains(&n))
            .map(commands::Runs::Count)
            .ok_or_else(|| {
                format!("`{text}` is neither a number of runs (1 to 10000000) nor `auto`")
            }),
    }
}

#[cfg(test)]
mod in_process;
