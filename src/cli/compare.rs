use clap::Args;
use std::path::PathBuf;

/// `--format` and `--out` of the commands that print a comparison (`compare`, `history`,
/// `bisect`), declared once: the formats that can show one, and where it goes.
#[derive(Debug, Args)]
pub struct PrintedComparison {
    /// Output format.
    #[arg(long, default_value = "table", value_parser = super::choices::comparison_format_parser())]
    pub format: &'static crate::report::OutputFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Inputs to compare, the first being the base: files in any format latkit reads (`-` for
    /// standard input; `LABEL=FILE` heads the file's column LABEL, as benchstat's) or stored runs (`@latest`, `@-1`, `@ID`, `@COMMIT`, `@tag:NAME`,
    /// `@branch:NAME`).
    #[arg(value_name = "INPUT", required = true, num_args = 1..)]
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub input: super::InputArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Compare families of benchmarks, as google/benchmark's compare.py `filters` and
    /// `benchmarksfiltered` modes do: each input keeps the benchmarks whose name matches its
    /// REGEX, the matched part replaced by `[A vs. B]` so the families pair up. One per input,
    /// or two with a single input to compare two families of one file.
    #[arg(long, value_name = "REGEX")]
    pub family: Vec<String>,
    /// Keep only the results (and units) that match EXPR, in benchstat's filter syntax:
    /// `.name:Encode`, `/size:(512 OR 4KB)`, `.unit:ns/op`, `pkg:/crc/`, `-/align:1`, terms
    /// joined by AND (or a space), OR, `-` and parentheses (`-filter` is accepted too).
    #[arg(long, value_name = "EXPR", value_parser = crate::spec::filter::Filter::parse)]
    pub filter: Option<crate::spec::filter::Filter>,
    /// Group results into tables by KEYS, compared each apart (benchstat's `-table`; KEYS
    /// as for --row). Without it, inputs from different settings are refused or marked.
    #[arg(long, value_name = "KEYS", value_parser = crate::spec::projection::Projection::parse)]
    pub table: Option<crate::spec::projection::Projection>,
    /// Group results into rows by KEYS (benchstat's `-row`; default `.fullname`): keys
    /// separated by commas or spaces, from `.name`, `.fullname`, `.file`, `/KEY`,
    /// `/gomaxprocs`, a file configuration key or `.config`, each optionally sorted `@alpha`,
    /// `@num` or `@(v1 v2 …)` (which also drops other values).
    #[arg(long, value_name = "KEYS", value_parser = crate::spec::projection::Projection::parse)]
    pub row: Option<crate::spec::projection::Projection>,
    /// Compare across columns by KEYS (benchstat's `-col`; default `.file`, each input a
    /// column): `--col /format` compares one file's formats, the first value the base.
    #[arg(long, value_name = "KEYS", value_parser = crate::spec::projection::Projection::parse)]
    pub col: Option<crate::spec::projection::Projection>,
    /// Compare only this metric (`ns/op`, `real_time`, `latency`, ...).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Statistics compared for distributions (timer, net, frame results).
    #[arg(long, value_name = "LIST", value_delimiter = ',',
          default_value = "p50,p99,p99.9,max", value_parser = statistic)]
    pub statistics: Vec<String>,
    /// Compare although the inputs come from different machines or settings; the
    /// differences are listed in every format.
    #[arg(long)]
    pub allow_env_mismatch: bool,
    /// Settings whose differences are neither refused nor reported, as benchstat's `-ignore`
    /// (`--ignore note,goversion`; `-ignore` is accepted too).
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// What the geomean row summarises: `medians`, each benchmark's (benchstat's), or
    /// `repetitions`, every repetition of every benchmark (google/benchmark's compare.py
    /// OVERALL_GEOMEAN).
    #[arg(long, value_name = "OF", default_value = "medians", value_parser = geomean_of)]
    pub geomean: crate::analyze::compare::GeomeanOf,
    /// Pool the last N stored runs of the same benchmarks (in the same environment) as the
    /// base; the inputs are then all compared against that pool.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub against_history: Option<u32>,
    #[command(flatten)]
    pub db: super::DbArgs,
    #[command(flatten)]
    pub printed: super::compare::PrintedComparison,
    /// Also write the --fail-on verdict as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// No warnings on stderr; the report still carries every note.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub plots: super::PlotArgs,
}

/// How a comparison decides: shared by `compare` and the A/B runs of `go` and `gbench`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Significance level of the Mann-Whitney U test.
    #[arg(long, default_value = "0.05", value_parser = alpha)]
    pub alpha: f64,
    /// Fail (exit 1) on a significant change beyond a threshold: `METRIC:+N%` (worse when
    /// higher), `METRIC:-N%` (worse when lower) or `METRIC:N%` (the metric's own direction).
    /// METRIC is a metric name or a distribution statistic (`p99`). Repeatable.
    #[arg(long = "fail-on", value_name = "RULE", value_parser = rule)]
    pub fail_on: Vec<crate::analyze::compare::RegressionRule>,
    /// Also fail when a change beyond a --fail-on threshold is within noise.
    // `--strict`, its old name, stays accepted but unlisted: elsewhere it rejects malformed
    // input lines, and one flag name should mean one thing.
    #[arg(long, alias = "strict")]
    pub fail_within_noise: bool,
    /// This machine's noise floor (`latkit calibrate --save FILE`): warn when a --fail-on
    /// threshold is below the change the runs can detect here, and say the runs it needs.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
}

impl From<GateArgs> for crate::commands::Gate {
    fn from(args: GateArgs) -> Self {
        crate::commands::Gate {
            alpha: args.alpha,
            fail_on: args.fail_on,
            fail_within_noise: args.fail_within_noise,
            calibration: args.calibration,
        }
    }
}

impl From<InterleaveArgs> for crate::commands::Interleave {
    fn from(args: InterleaveArgs) -> Self {
        crate::commands::Interleave {
            base: args.interleave,
            runs: args.runs,
            min_runs: args.min_runs,
            max_runs: args.max_runs,
            gate: args.gate.into(),
        }
    }
}

impl From<CompareArgs> for crate::commands::CompareOptions {
    fn from(args: CompareArgs) -> Self {
        crate::commands::CompareOptions {
            inputs: args.inputs,
            reading: args.input.into(),
            gate: args.gate.into(),
            families: args.family,
            filter: args.filter,
            projections: crate::spec::projection::Projections {
                table: args.table,
                row: args.row,
                col: args.col,
                ignore: args.ignore.clone(),
            },
            metric: args.metric,
            statistics: args.statistics,
            allow_env_mismatch: args.allow_env_mismatch,
            ignore: args.ignore,
            geomean: args.geomean,
            against_history: args.against_history.map(|n| n as usize),
            db: args.db.db,
            format: args.printed.format,
            out: args.printed.out,
            junit: args.junit,
            quiet: args.quiet,
            plots: args.plots.into(),
        }
    }
}

fn geomean_of(text: &str) -> Result<crate::analyze::compare::GeomeanOf, String> {
    use crate::analyze::compare::GeomeanOf;
    match text {
        "medians" => Ok(GeomeanOf::Medians),
        "repetitions" => Ok(GeomeanOf::Repetitions),
        _ => Err(format!("`{text}`: give `medians` or `repetitions`")),
    }
}

/// A/B runs against a base revision; shared by `go` and `gbench`.
#[derive(Debug, Args)]
pub struct InterleaveArgs {
    /// Also run the benchmarks of git revision REV (checked out in a temporary worktree),
    /// alternating with the working tree's (A B, B A, ...), one repetition each per round, so
    /// that host drift and going first hit both alike; then compare them (the --count / --repetitions are the
    /// rounds; --fail-on gates the result). `merge-base[:BRANCH]` is the commit where HEAD
    /// left BRANCH (default: origin/HEAD, else main).
    #[arg(long, value_name = "REV")]
    pub interleave: Option<String>,
    /// With --interleave: the rounds to run (as --count / --repetitions), or `auto`: add
    /// rounds until every --fail-on gate is decided, a change beyond its threshold or one
    /// shown within it, by a sequential test that keeps false alarms within --alpha however
    /// often it looks; still undecided after --max-runs rounds exits 3.
    #[arg(long, value_name = "N|auto", requires = "interleave", value_parser = super::runs_or_auto)]
    pub runs: Option<crate::commands::Runs>,
    /// With --runs auto: rounds before the first look [default: 3, the fewest a paired test
    /// can use].
    #[arg(long, value_name = "N", requires = "runs",
          value_parser = clap::value_parser!(u32).range(3..=10_000))]
    pub min_runs: Option<u32>,
    /// With --runs auto: the most rounds [default: 30].
    #[arg(long, value_name = "N", requires = "runs",
          value_parser = clap::value_parser!(u32).range(3..=10_000))]
    pub max_runs: Option<u32>,
    #[command(flatten)]
    pub gate: GateArgs,
}

pub(super) fn alpha(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("`{text}` is not a significance level between 0 and 1"))
}

fn statistic(text: &str) -> Result<String, String> {
    use crate::model::Statistic;
    match Statistic::parse_among(text, &Statistic::OF_DISTRIBUTION) {
        Some(_) => Ok(text.to_string()),
        None => Err(format!(
            "`{text}` is not a statistic of a distribution; expected one of {}",
            Statistic::all_names(&Statistic::OF_DISTRIBUTION)
        )),
    }
}

fn rule(text: &str) -> Result<crate::analyze::compare::RegressionRule, String> {
    crate::analyze::compare::RegressionRule::parse(text)
}
