use clap::Args;
use std::path::PathBuf;

/// `latkit bisect --good REV --bad REV [OPTIONS] -- go [PKG] [FLAGS] | gbench BINARY [ARGS] |
/// exec CMD [ARGS]`.
#[derive(Debug, Args)]
pub struct BisectArgs {
    /// The known-good revision (faster), or a stored run of it (`@ID`, `@COMMIT`, `@tag:NAME`
    /// …): with both ends stored, their stored rounds show that they differ instead of new
    /// ones.
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// The known-bad revision (slower), or a stored run of it; it must descend from --good.
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// A directory in the repository; the harness's package, binary and command paths are
    /// relative to it in every checkout.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The benchmarks followed (a regular expression; Go's -bench, google/benchmark's
    /// filter); with several, the geometric mean of their figures is searched.
    #[arg(long, value_name = "REGEX", default_value = ".")]
    pub bench: String,
    /// The figure searched (default: ns/op for go, real_time for gbench, wall for exec).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Bisect only when bad is worse than good by at least N percent (and beyond noise).
    #[arg(long, value_name = "N%", value_parser = percent)]
    pub threshold: Option<f64>,
    /// Run before measuring each checkout, in its --dir (`sh -c`), e.g. `make bench`; a
    /// commit where it fails is skipped.
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Rounds (each end and the tested commit once each, in an order drawn for the round)
    /// before the first judgement; the ends are compared after this many and, if still
    /// unclear, after --max-rounds [default: 10].
    #[arg(long, visible_alias = "min-runs", value_name = "N",
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub rounds: Option<u32>,
    /// At most this many rounds per commit; a commit the tests still cannot place stops the
    /// search, undecided (exit 3), naming the commits that must hold the culprit
    /// [default: 30].
    #[arg(long, visible_alias = "max-runs", value_name = "N",
          value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub max_rounds: Option<u32>,
    /// Go on past a commit the tests cannot place within --max-rounds, with the end it moved
    /// less from: labelled a guess in the table and the notes, and the exit code stays 3.
    #[arg(long)]
    pub guess: bool,
    /// `auto` (the default): a commit is judged after every round from --min-runs until it
    /// is placed or --max-runs is reached, alpha spent over the looks as `--runs auto`
    /// spends it; N: exactly N rounds per commit, judged once.
    #[arg(long, value_name = "N|auto", value_parser = super::runs_or_auto)]
    pub runs: Option<crate::commands::Runs>,
    /// The chance of naming a wrong commit: half for the ends' comparison, half shared by the
    /// steps of the search.
    #[arg(long, default_value = "0.05", value_parser = super::compare::alpha)]
    pub alpha: f64,
    #[command(flatten)]
    pub printed: super::compare::PrintedComparison,
    /// Also write the result as latkit JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Save each measured commit's runs (the ends included) in the history store, filed
    /// under that commit, so `history` and `compare @COMMIT` can read them.
    #[arg(long)]
    pub store: bool,
    #[command(flatten)]
    pub db: super::DbArgs,
    /// Tag the stored runs.
    #[arg(long, value_name = "NAME", requires = "store")]
    pub tag: Option<String>,
    /// The harness: `go [PKG] [FLAGS]`, `gbench BINARY [ARGS]` or `exec CMD [ARGS]`.
    #[arg(last = true, required = true, value_name = "HARNESS")]
    pub harness: Vec<String>,
}

/// Rounds before the first look: a step's spent level (about 0.0015 one-sided at alpha 0.05
/// over 12 commits) is reached by ten rounds that all point one way.
const DEFAULT_ROUNDS: u32 = 10;
const DEFAULT_MAX_ROUNDS: u32 = 30;

pub(super) fn percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n > 0.0 && *n < 1e6)
        .ok_or_else(|| format!("`{text}` is not a percentage above 0 (e.g. 10%)"))
}

impl BisectArgs {
    /// The least and most rounds per commit, from --runs, --rounds and --max-rounds.
    fn rounds(&self) -> crate::error::Result<(u32, u32)> {
        use crate::commands::Runs;
        let refuse = |why: String| Err(crate::error::Error::Input(why));
        match (self.runs, self.rounds, self.max_rounds) {
            (Some(Runs::Count(n)), None, None) if n >= 2 => Ok((n, n)),
            (Some(Runs::Count(n)), None, None) => refuse(format!(
                "--runs {n}: a commit needs at least 2 rounds to be judged"
            )),
            (Some(Runs::Count(_)), _, _) => refuse(
                "--runs N fixes the rounds; --min-runs and --max-runs bound --runs auto".into(),
            ),
            (_, rounds, most) => {
                let rounds = rounds.unwrap_or(DEFAULT_ROUNDS);
                let most = most.unwrap_or(rounds.max(DEFAULT_MAX_ROUNDS));
                if most < rounds {
                    return refuse(format!("--max-rounds {most} is below --rounds {rounds}"));
                }
                Ok((rounds, most))
            }
        }
    }

    pub fn into_options(self) -> crate::error::Result<crate::commands::BisectOptions> {
        let (harness, measure) = crate::runner::harness::Harness::parse(&self.harness)
            .map_err(crate::error::Error::Input)?;
        let (rounds, max_rounds) = self.rounds()?;
        Ok(crate::commands::BisectOptions {
            good: self.good,
            bad: self.bad,
            dir: self.dir,
            bench: self.bench,
            metric: self.metric,
            threshold: self.threshold,
            build: self.build,
            rounds,
            max_rounds,
            guess: self.guess,
            alpha: self.alpha,
            harness,
            measure,
            store: self.store.then_some(crate::commands::Storing {
                db: self.db.db.clone(),
                tag: self.tag,
            }),
            db: self.db.db,
            output: crate::commands::Output {
                format: self.printed.format,
                out: self.printed.out,
                json: self.json,
                exports: Vec::new(),
                hyperfine: Vec::new(),
                style: crate::commands::Style::Default,
                check: None,
                quiet: self.quiet,
                store: None,
                plots: crate::commands::Plots {
                    files: Vec::new(),
                    kinds: Vec::new(),
                },
            },
        })
    }
}
