//! `latkit bisect`: which commit between a good and a bad revision made it slower. Both ends
//! are checked out and built once, shown to differ beyond noise, then each tested commit is
//! measured in rounds interleaved with both ends until the U test places it (see
//! `analyze::bisect`); a commit that does not build or run is skipped as `git bisect skip`.

use super::{Output, output_sinks};
use crate::analyze::Report;
use crate::analyze::bisect::{
    Ends, EndsShow, Judged, Round, Scale, Search, Side, compare_counted_ends, compare_ends, figure,
    figures_per_repetition, judge, judge_counted, log_spread, nearest, order, rounds_needed,
    rounds_to_place,
};
use crate::analyze::sequential::{Design, Sequential};
use crate::analyze::view::{Cell, Column, Row, Table, keys};
use crate::commands::Env;
use crate::env::CpuReading;
use crate::error::{Error, Result};
use crate::model::summary::median;
use crate::model::{Better, Note, Unit};
use crate::runner::harness::{Checkout, Checkouts, Harness, Repository};
use crate::runner::worktree::Commit;
use std::path::PathBuf;

mod ends;
mod search;

use ends::{StoredEnds, stored_ends};

pub struct BisectOptions {
    pub good: String,
    pub bad: String,
    /// A directory in the repository (the harness's paths are relative to it).
    pub dir: PathBuf,
    /// Benchmarks followed (a regular expression); their figures' geometric mean is searched.
    pub bench: String,
    pub metric: Option<String>,
    /// The least change (percent) worth bisecting, and that places a commit.
    pub threshold: Option<f64>,
    pub build: Option<String>,
    /// Rounds before the first judgement.
    pub rounds: u32,
    /// Rounds after which a commit the tests cannot place is undecided.
    pub max_rounds: u32,
    /// `--guess`: an undecided commit goes with the end it moved less from, and the search
    /// goes on (labelled a guess; the exit code stays 3).
    pub guess: bool,
    pub alpha: f64,
    pub harness: Harness,
    /// Time, counted instructions, or both.
    pub measure: crate::runner::counts::Measure,
    /// Where each measured commit's runs are filed (`--store`).
    pub store: Option<super::Storing>,
    /// The history store `@` ends are read from (`None`: the default one).
    pub db: Option<String>,
    pub output: Output,
}

/// How a commit's side was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Basis {
    /// The signed-rank test placed it (the ends: the user's word).
    Test,
    /// `--guess`: the end it moved less from, the tests undecided.
    Guess,
}

/// What one tested commit showed.
struct Tested {
    commit: usize,
    median: Option<f64>,
    judged: Option<Judged>,
    /// The level its last look tested at.
    level: f64,
    /// Good or bad, and how that was found; `None` for an undecided or skipped commit.
    side: Option<(Side, Basis)>,
    rounds: usize,
    /// About how many rounds would place an undecided commit.
    needed: Option<u64>,
    /// Why it was skipped: in short (`does not build`), and what the harness said.
    skipped: Option<(&'static str, String)>,
}

impl Tested {
    /// Commit `commit`, skipped: `short` says why in a word, `why` in full.
    fn skipped(commit: usize, short: &'static str, why: String) -> Tested {
        Tested {
            commit,
            median: None,
            judged: None,
            level: 0.0,
            side: None,
            rounds: 0,
            needed: None,
            skipped: Some((short, why)),
        }
    }

    /// Measured, and neither test placed it (nor a guess).
    fn undecided(&self) -> bool {
        self.judged.is_some() && self.side.is_none()
    }
}

/// One run of a checkout: the figure searched, the metric's unit, and the runs themselves
/// (for the store).
struct Sample {
    value: f64,
    unit: Option<(Unit, String)>,
    /// Whether the figure is counted (instructions): near-exact.
    counted: bool,
    runs: Vec<crate::model::Run>,
}

/// Why a round stopped.
enum Stop {
    /// The tested commit itself failed: skip it.
    Commit(String),
    /// An end failed, or the user interrupted: the bisection is over.
    Fatal(Error),
}

struct Bisection<'a> {
    args: &'a BisectOptions,
    bench: regex::Regex,
    metric: String,
    commits: Vec<Commit>,
    checkouts: Box<dyn Checkouts>,
    good: Box<dyn Checkout>,
    bad: Box<dyn Checkout>,
    unit: Option<(Unit, String)>,
    talk: bool,
    /// The console it talks on, the clock, and the interrupt that stops it.
    env: &'a Env,
    /// The machine's CPU time when the measuring began: whether other work shared it.
    started: Option<CpuReading>,
    /// `--store`: the history store and the tag, and the runs of good, the tested commit and
    /// bad measured since they were last filed.
    store: Option<(crate::store::Store, Option<String>)>,
    runs: [Vec<crate::model::Run>; 3],
    /// Both ends' stored rounds (`--good @…`, `--bad @…`), which replace the opening ones.
    stored_ends: Option<StoredEnds>,
    /// The ends' comparison, once made.
    ends: Option<Ends>,
    /// Whether the figure followed is counted (instructions), as its first sample says.
    counted: bool,
    /// The ends' counts, when each end's counts agreed: a commit is then counted once and
    /// placed between them by size.
    counted_ends: Option<[f64; 2]>,
}

pub fn run(args: BisectOptions, env: &Env) -> Result<()> {
    let bench = regex::Regex::new(&args.bench)
        .map_err(|e| Error::Input(format!("--bench `{}`: {e}", args.bench)))?;
    let sinks = output_sinks(&args.output, env)?;
    let store = match &args.store {
        Some(storing) => {
            let location = crate::store::default_location(storing.db.as_deref(), &env.vars)?;
            Some((crate::store::Store::open(&location)?, storing.tag.clone()))
        }
        None => None,
    };
    env.interrupt.install();
    let metric = args
        .metric
        .clone()
        .unwrap_or_else(|| args.harness.default_metric(args.measure).to_string());
    if args.measure.instructions {
        // No commit can be counted without it: exit 5 before anything is checked out.
        env.launch.harness().valgrind()?;
    }
    let (good, bad, stored_ends) = stored_ends(&args, &bench, &metric, &env.vars)?;
    let checkouts = env.launch.checkouts(Repository {
        dir: args.dir.clone(),
        harness: args.harness.clone(),
        build: args.build.clone(),
        bench: args.bench.clone(),
        measure: args.measure,
    });
    let commits = checkouts.between(&good, &bad)?;
    let ends = [&commits[0], &commits[commits.len() - 1]];
    // The ends' checkouts live as long as the bisection.
    let [good, bad] = [0, 1].map(|i| {
        checkouts.prepare(ends[i])?.map_err(|why| {
            Error::Input(format!(
                "the {} end {} does not build: {why}",
                ["good", "bad"][i],
                ends[i].short()
            ))
        })
    });
    let (good, bad) = (good?, bad?);
    let mut bisection = Bisection {
        args: &args,
        bench,
        metric,
        commits,
        checkouts,
        good,
        bad,
        unit: None,
        talk: !args.output.quiet,
        env,
        started: env.clock.cpu(),
        store,
        runs: Default::default(),
        stored_ends,
        ends: None,
        counted: false,
        counted_ends: None,
    };
    let (tested, notes, outcome) = bisection.search();
    // Nothing measured (an end that does not run): the error says it all.
    if !tested.is_empty() {
        sinks.finish(&mut bisection.report(&tested, notes))?;
    }
    outcome
}

/// A seed for the order of a commit's rounds: its hash's bytes, mixed.
fn seed_of(commit: &Commit) -> u64 {
    commit.hash.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Bisection<'_> {
    fn say(&self, what: &str) {
        if self.talk {
            self.env.console.say(&format!("latkit bisect: {what}"));
        }
    }

    /// The figure's direction and the threshold.
    fn scale(&self) -> Scale {
        Scale {
            better: self
                .unit
                .as_ref()
                .map_or(Better::Lower, |(u, _)| u.better()),
            threshold: self.args.threshold.unwrap_or(0.0),
        }
    }

    /// What other processes did to the machine since the measuring began, when they kept it
    /// busy: said with every verdict, since wall-clock rounds taken beside them are what a
    /// verdict rests on.
    fn busy(&self) -> Option<String> {
        if self.counted {
            return None;
        }
        let check = self.started?.others_busy(&self.env.clock.cpu()?)?;
        (check.status == crate::model::CheckStatus::Warn).then(|| {
            format!(
                "measured on a busy machine ({}): wall-clock rounds shared it, so a verdict \
                 takes more rounds and may stay undecided; counted instructions \
                 (`--measure instructions`) do not mind other work",
                check.found.trim_end_matches(" during the run")
            )
        })
    }

    /// One figure of a checkout, with the metric's unit as the harness reported it.
    fn sample(&self, checkout: &dyn Checkout) -> std::result::Result<Sample, String> {
        let input = checkout.measure()?;
        let metric = input
            .runs
            .iter()
            .flat_map(|r| &r.benchmarks)
            .find_map(|b| b.metric(&self.metric));
        let unit = metric.map(|m| (m.unit.clone(), m.source_unit.clone()));
        let counted = metric.is_some_and(|m| m.assume == crate::model::Assume::Counted);
        let value = input
            .runs
            .iter()
            .find_map(|run| figure(run, &self.bench, &self.metric));
        let Some(value) = value else {
            let mut there: Vec<&str> = (input.runs.iter().flat_map(|r| &r.benchmarks))
                .flat_map(|b| b.metrics.iter().map(|m| m.name.as_str()))
                .collect();
            there.sort_unstable();
            there.dedup();
            return Err(format!(
                "no benchmark matching `{}` reported `{}` (its metrics: {}; --metric names one)",
                self.bench,
                self.metric,
                there.join(", ")
            ));
        };
        Ok(Sample {
            value,
            unit,
            counted,
            runs: input.runs,
        })
    }

    /// Rounds of good, `mid` (when given; else its figure is NaN) and bad, each round in the
    /// order drawn from `seed`; from round `--rounds` on, `decided` says whether the rounds so
    /// far settle it; at most `--max-rounds`.
    fn rounds(
        &mut self,
        mid: Option<&dyn Checkout>,
        seed: u64,
        decided: impl Fn(&[Round], bool) -> bool,
    ) -> std::result::Result<Vec<Round>, Stop> {
        let mut rounds = Vec::new();
        for round in 0..self.args.max_rounds as usize {
            let mut figures = [f64::NAN; 3];
            for i in order(seed, round) {
                if self.env.interrupt.requested() {
                    return Err(Stop::Fatal(Error::Interrupted));
                }
                let checkout = match i {
                    0 => &*self.good,
                    1 => match mid {
                        Some(mid) => mid,
                        None => continue,
                    },
                    _ => &*self.bad,
                };
                match self.sample(checkout) {
                    Ok(sample) => {
                        figures[i] = sample.value;
                        if self.unit.is_none() {
                            self.unit = sample.unit;
                            self.counted = sample.counted;
                        }
                        if self.store.is_some() {
                            self.runs[i].extend(sample.runs);
                        }
                    }
                    // A run cut short by Ctrl-C (the harness gets the signal too) is the
                    // interruption, not a failure of the commit or the end.
                    Err(_) if self.env.interrupt.requested() => {
                        return Err(Stop::Fatal(Error::Interrupted));
                    }
                    Err(why) if i == 1 => return Err(Stop::Commit(why)),
                    Err(why) => {
                        let end = if i == 0 { "good" } else { "bad" };
                        return Err(Stop::Fatal(Error::Peer(format!(
                            "the {end} end failed to run: {why}"
                        ))));
                    }
                }
            }
            let [good, mid, bad] = figures;
            rounds.push(Round { good, mid, bad });
            let least = match self.counted {
                true => crate::runner::counts::COUNTED_RUNS as usize,
                false => self.args.rounds as usize,
            };
            if rounds.len() >= least && decided(&rounds, self.counted) {
                break;
            }
        }
        Ok(rounds)
    }

    /// `--store`: files the runs measured since the last call, each side's pooled into one
    /// run under its commit (`mid`: the tested commit's index).
    fn file(&mut self, mid: Option<usize>) -> Result<()> {
        let Some((store, tag)) = self.store.as_mut() else {
            return Ok(());
        };
        let last = self.commits.len() - 1;
        for (side, commit) in [(0, Some(0)), (1, mid), (2, Some(last))] {
            let runs = std::mem::take(&mut self.runs[side]);
            let (Some(commit), Some((run, _))) = (commit, crate::ingest::merge(runs)) else {
                continue;
            };
            let commit = &self.commits[commit];
            let provenance = crate::store::Provenance {
                commit: Some(commit.hash.clone()),
                branch: None,
                dirty: Some(false),
            };
            let figures = crate::analyze::history::figures(&run);
            let id = store.put(&run, &[], &provenance, tag.as_deref(), &figures)?;
            if self.talk {
                self.env.console.say(&format!(
                    "latkit bisect: stored run #{id} for {} in {}",
                    commit.short(),
                    store.describe()
                ));
            }
        }
        Ok(())
    }

    /// The steps a binary search of the range plans for (one more than it takes without a
    /// skip, as a skipped commit moves the middle).
    fn planned_steps(&self) -> usize {
        let untested = self.commits.len().saturating_sub(2);
        (untested + 1).next_power_of_two().trailing_zeros() as usize + 1
    }

    /// The chance a step may misplace its commit: the steps' half of alpha, shared by the
    /// planned steps (Bonferroni), so that the whole bisection names a wrong commit with a
    /// chance of at most alpha.
    fn step_alpha(&self) -> f64 {
        self.args.alpha / 2.0 / self.planned_steps() as f64
    }

    /// How a tested commit's looks spend its step's alpha: after every round from `--rounds`
    /// (or `--min-runs`) to `--max-rounds`, as `--runs auto` spends it (Pocock type), so that
    /// looking after every round does not raise the chance of misplacing the commit. Each of
    /// the two one-sided tests is tested at the spent level: only one of them can misplace a
    /// commit (a false `bad` for one as good as good, a false `good` for one as bad as bad).
    /// With `--runs N` there is one look.
    fn placement_spending(&self) -> Sequential {
        Sequential::new(Design {
            alpha: self.step_alpha(),
            min_rounds: self.args.rounds as usize,
            max_rounds: self.args.max_rounds as usize,
        })
    }

    /// Counts commit `index` twice and places it between the ends' counts by size when the
    /// two agree; `None` when they do not (its counts vary, so it is tested by rounds).
    fn count_twice(
        &mut self,
        index: usize,
        checkout: &dyn Checkout,
        good: f64,
        bad: f64,
    ) -> std::result::Result<Option<Tested>, Stop> {
        let mut counts = Vec::new();
        for _ in 0..2 {
            if self.env.interrupt.requested() {
                return Err(Stop::Fatal(Error::Interrupted));
            }
            let sample = match self.sample(checkout) {
                Ok(sample) => sample,
                Err(_) if self.env.interrupt.requested() => {
                    return Err(Stop::Fatal(Error::Interrupted));
                }
                Err(why) => return Ok(Some(Tested::skipped(index, "does not run", why))),
            };
            counts.push(sample.value);
            if self.store.is_some() {
                self.runs[1].extend(sample.runs);
            }
        }
        self.file(Some(index)).map_err(Stop::Fatal)?;
        if !crate::analyze::counted::agree(&counts) {
            self.say(&format!(
                "{}: its counts differ run to run ({} and {}): tested by rounds",
                self.commits[index].short(),
                counts[0],
                counts[1]
            ));
            return Ok(None);
        }
        let centre = median(&mut counts);
        let judged = judge_counted(good, centre, bad, self.scale());
        Ok(Some(Tested {
            commit: index,
            median: Some(centre),
            side: judged.side.map(|side| (side, Basis::Test)),
            judged: Some(judged),
            level: 0.0,
            rounds: 2,
            needed: None,
            skipped: None,
        }))
    }

    /// Tests commit `index`: checked out, built, measured against both ends.
    fn test(&mut self, index: usize) -> std::result::Result<Tested, Stop> {
        let commit = self.commits[index].clone();
        let skipped = |short: &'static str, why: String| Tested::skipped(index, short, why);
        let checkout = match self.checkouts.prepare(&commit).map_err(Stop::Fatal)? {
            Ok(checkout) => checkout,
            Err(why) => return Ok(skipped("does not build", why)),
        };
        let spending = self.placement_spending();
        let scale = self.scale();
        if let Some([good, bad]) = self.counted_ends
            && let Some(tested) = self.count_twice(index, &*checkout, good, bad)?
        {
            return Ok(tested);
        }
        let rounds = match self.rounds(Some(&*checkout), seed_of(&commit), |rounds, _| {
            spending
                .level_at(rounds.len())
                .is_some_and(|level| judge(rounds, level, scale).side.is_some())
        }) {
            Ok(rounds) => rounds,
            Err(Stop::Commit(why)) => return Ok(skipped("does not run", why)),
            Err(stop) => return Err(stop),
        };
        self.file(Some(index)).map_err(Stop::Fatal)?;
        let last = self.args.max_rounds as usize;
        let level = spending
            .level_at(rounds.len())
            .or(spending.level_at(last))
            .unwrap_or(self.step_alpha());
        let scale = self.scale();
        let judged = judge(&rounds, level, scale);
        let side = match (judged.side, self.args.guess) {
            (Some(side), _) => Some((side, Basis::Test)),
            (None, true) => Some((nearest(&rounds, scale), Basis::Guess)),
            (None, false) => None,
        };
        let needed = judged
            .side
            .is_none()
            .then(|| rounds_to_place(&rounds, scale, self.step_alpha()))
            .flatten();
        let mut own: Vec<f64> = rounds.iter().map(|r| r.mid).collect();
        Ok(Tested {
            commit: index,
            median: Some(median(&mut own)),
            judged: Some(judged),
            level,
            side,
            rounds: rounds.len(),
            needed,
            skipped: None,
        })
    }
}
