//! `latkit bisect`: which commit between a good and a bad revision made it slower. Both ends
//! are checked out and built once, shown to differ beyond noise, then each tested commit is
//! measured in rounds interleaved with both ends until the U test places it (see
//! `analyze::bisect`); a commit that does not build or run is skipped as `git bisect skip`.

use super::{Output, output_sinks};
use crate::analyze::Report;
use crate::analyze::bisect::{
    Ends, EndsShow, Judged, Search, Side, compare_ends, figure, figures_per_repetition, judge,
    median, nearest, rounds_needed,
};
use crate::analyze::compare::relative_noise;
use crate::analyze::sequential::{Design, Sequential};
use crate::analyze::view::{Cell, Column, Row, Table, keys};
use crate::commands::Env;
use crate::error::{Error, Result};
use crate::model::{Better, Note, Unit};
use crate::runner::harness::{Checkout, Checkouts, Harness, Repository};
use crate::runner::worktree::Commit;
use std::path::PathBuf;

mod search;

pub struct BisectOptions {
    pub good: String,
    pub bad: String,
    /// A directory in the repository (the harness's paths are relative to it).
    pub dir: PathBuf,
    /// Benchmarks followed (a regular expression); their figures' geometric mean is searched.
    pub bench: String,
    pub metric: Option<String>,
    /// The least change (percent) between the ends worth bisecting.
    pub threshold: Option<f64>,
    pub build: Option<String>,
    /// Rounds before the first judgement.
    pub rounds: u32,
    /// Rounds after which an undecided commit goes with the nearer end.
    pub max_rounds: u32,
    pub alpha: f64,
    pub harness: Harness,
    /// Where each measured commit's runs are filed (`--store`).
    pub store: Option<super::Storing>,
    /// The history store `@` ends are read from (`None`: the default one).
    pub db: Option<String>,
    pub output: Output,
}

/// What one tested commit showed.
struct Tested {
    commit: usize,
    median: Option<f64>,
    judged: Option<Judged>,
    /// Good or bad, and whether the U test decided it (else the nearer median did).
    side: Option<(Side, bool)>,
    rounds: usize,
    /// Why it was skipped: in short (`does not build`), and what the harness said.
    skipped: Option<(&'static str, String)>,
}

/// One run of a checkout: the figure searched, the metric's unit, and the runs themselves
/// (for the store).
struct Sample {
    value: f64,
    unit: Option<(Unit, String)>,
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
    /// The console it talks on and the interrupt that stops it.
    env: &'a Env,
    /// `--store`: the history store and the tag, and the runs of good, the tested commit and
    /// bad measured since they were last filed.
    store: Option<(crate::store::Store, Option<String>)>,
    runs: [Vec<crate::model::Run>; 3],
    /// Both ends' stored rounds (`--good @…`, `--bad @…`), which replace the opening ones.
    stored_ends: Option<StoredEnds>,
}

pub fn run(args: BisectOptions, env: &Env) -> Result<()> {
    let bench = regex::Regex::new(&args.bench)
        .map_err(|e| Error::Input(format!("--bench `{}`: {e}", args.bench)))?;
    let sinks = output_sinks(&args.output, &env.console)?;
    let store = match &args.store {
        Some(storing) => {
            let location = crate::store::default_location(storing.db.as_deref())?;
            Some((crate::store::Store::open(&location)?, storing.tag.clone()))
        }
        None => None,
    };
    env.interrupt.install();
    let metric = args
        .metric
        .clone()
        .unwrap_or_else(|| args.harness.default_metric().to_string());
    let (good, bad, stored_ends) = stored_ends(&args, &bench, &metric)?;
    let checkouts = env.launch.checkouts(Repository {
        dir: args.dir.clone(),
        harness: args.harness.clone(),
        build: args.build.clone(),
        bench: args.bench.clone(),
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
        store,
        runs: Default::default(),
        stored_ends,
    };
    let (tested, notes, outcome) = bisection.search();
    // Nothing measured (an end that does not run): the error says it all.
    if !tested.is_empty() {
        sinks.finish(&bisection.report(&tested, notes))?;
    }
    outcome
}

/// Both ends' stored rounds and the metric's unit as stored.
#[derive(Clone)]
struct StoredEnds {
    samples: [Vec<f64>; 2],
    unit: Option<(Unit, String)>,
}

/// The ends' revisions; with `--good @…` and `--bad @…`, the stored runs' commits and each
/// stored round's figure.
fn stored_ends(
    args: &BisectOptions,
    bench: &regex::Regex,
    metric: &str,
) -> Result<(String, String, Option<StoredEnds>)> {
    use crate::store::{Store, StoredRef, default_location};
    let (good, bad) = match (StoredRef::parse(&args.good)?, StoredRef::parse(&args.bad)?) {
        (None, None) => return Ok((args.good.clone(), args.bad.clone(), None)),
        (Some(good), Some(bad)) => (good, bad),
        _ => {
            return Err(Error::Input(
                "give both --good and --bad as stored runs (@…), or neither: a stored end and a \
                 measured one were not measured alike"
                    .into(),
            ));
        }
    };
    let mut store = Store::open(&default_location(args.db.as_deref())?)?;
    let mut unit = None;
    let mut load = |reference: StoredRef, text: &str| -> Result<(String, Vec<f64>)> {
        let meta = reference.resolve(&mut store)?;
        let commit = meta.commit.clone().ok_or_else(|| {
            Error::Input(format!("{text}: stored run #{} has no commit", meta.id))
        })?;
        let (_, run, _) = store
            .load(meta.id)?
            .ok_or_else(|| Error::Input(format!("{text}: stored run #{} is gone", meta.id)))?;
        let samples = figures_per_repetition(&run, bench, metric);
        unit = unit.take().or_else(|| {
            let m = run.benchmarks.iter().find_map(|b| b.metric(metric))?;
            Some((m.unit.clone(), m.source_unit.clone()))
        });
        if samples.len() < 2 {
            return Err(Error::Input(format!(
                "{text}: stored run #{} holds {} round(s) of `{metric}` for the benchmarks \
                 matching `{bench}`; at least 2 are needed",
                meta.id,
                samples.len()
            )));
        }
        Ok((commit, samples))
    };
    let (good_commit, good_samples) = load(good, &args.good)?;
    let (bad_commit, bad_samples) = load(bad, &args.bad)?;
    let ends = StoredEnds {
        samples: [good_samples, bad_samples],
        unit,
    };
    Ok((good_commit, bad_commit, Some(ends)))
}

impl Bisection<'_> {
    fn say(&self, what: &str) {
        if self.talk {
            self.env.console.say(&format!("latkit bisect: {what}"));
        }
    }

    /// One figure of a checkout, with the metric's unit as the harness reported it.
    fn sample(&self, checkout: &dyn Checkout) -> std::result::Result<Sample, String> {
        let input = checkout.measure()?;
        let unit = input
            .runs
            .iter()
            .flat_map(|r| &r.benchmarks)
            .find_map(|b| b.metric(&self.metric))
            .map(|m| (m.unit.clone(), m.source_unit.clone()));
        let value = input
            .runs
            .iter()
            .find_map(|run| figure(run, &self.bench, &self.metric));
        value
            .map(|value| Sample {
                value,
                unit,
                runs: input.runs,
            })
            .ok_or_else(|| {
                format!(
                    "no benchmark matching `{}` reported `{}`",
                    self.bench, self.metric
                )
            })
    }

    /// Rounds of good, `mid` (when given), bad; from round `--rounds` on, `decided` says
    /// whether the samples so far settle it; at most `--max-rounds`.
    fn rounds(
        &mut self,
        mid: Option<&dyn Checkout>,
        decided: impl Fn(&[f64], &[f64], &[f64]) -> bool,
    ) -> std::result::Result<[Vec<f64>; 3], Stop> {
        let mut samples: [Vec<f64>; 3] = Default::default();
        for round in 1..=self.args.max_rounds as usize {
            for (i, samples_of) in samples.iter_mut().enumerate() {
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
                        samples_of.push(sample.value);
                        if self.unit.is_none() {
                            self.unit = sample.unit;
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
            let [good, mid, bad] = &samples;
            if round >= self.args.rounds as usize && decided(good, mid, bad) {
                break;
            }
        }
        Ok(samples)
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

    /// Whether the bad end is worse than the good one beyond noise (and `--threshold`): the
    /// evidence either way. Measured ends are tested after `--rounds` rounds and, when that
    /// does not settle it, once more after `--max-rounds`, each time at half of alpha, so the
    /// second look does not raise the false-alarm rate above alpha (testing after every round
    /// until they differ would); stored ends are tested once, at alpha.
    fn verify(&mut self) -> std::result::Result<(Tested, Tested, Option<String>), Stop> {
        let threshold = self.args.threshold.unwrap_or(0.0);
        let (good, bad, alpha) = match self.stored_ends.clone() {
            Some(StoredEnds {
                samples: [good, bad],
                unit,
            }) => {
                self.say("the ends' stored rounds show whether they differ");
                self.unit = self.unit.take().or(unit);
                (good, bad, self.args.alpha)
            }
            None => {
                self.say(&format!(
                    "measuring the ends: good {} and bad {}, interleaved, {} rounds",
                    self.commits[0].short(),
                    self.commits[self.commits.len() - 1].short(),
                    self.args.rounds
                ));
                let looks = if self.args.max_rounds > self.args.rounds {
                    2.0
                } else {
                    1.0
                };
                let (alpha, first) = (self.args.alpha / looks, self.args.rounds as usize);
                let settled = |g: &[f64], b: &[f64]| {
                    compare_ends(g, b, alpha, threshold, Better::Lower).show
                        != EndsShow::WithinNoise
                };
                let [good, _, bad] =
                    self.rounds(None, |g, _, b| g.len() == first && settled(g, b))?;
                self.file(None).map_err(Stop::Fatal)?;
                (good, bad, alpha)
            }
        };
        let better = self
            .unit
            .as_ref()
            .map_or(Better::Lower, |(u, _)| u.better());
        let ends = compare_ends(&good, &bad, alpha, threshold, better);
        let end = |commit: usize, samples: &[f64], side: Side| Tested {
            commit,
            median: Some(median(samples)),
            judged: Some(Judged {
                side: Some(side),
                p_good: if side == Side::Good { 1.0 } else { ends.p },
                p_bad: if side == Side::Bad { 1.0 } else { ends.p },
            }),
            // The ends are good and bad by the user's word; whether they differ is a note.
            side: Some((side, true)),
            rounds: samples.len(),
            skipped: None,
        };
        let why_not = self.why_not_bisect(&ends, &good, &bad, alpha);
        let last = self.commits.len() - 1;
        Ok((
            end(0, &good, Side::Good),
            end(last, &bad, Side::Bad),
            why_not,
        ))
    }

    /// Why the ends give nothing to bisect, with the evidence and, for a change for the
    /// worse too noisy to tell, about how many rounds would tell it.
    fn why_not_bisect(&self, ends: &Ends, good: &[f64], bad: &[f64], alpha: f64) -> Option<String> {
        let rounds = good.len().min(bad.len());
        let evidence = format!(
            "{} {:+.2}% (p={:.3}, {rounds} rounds a side; alpha {alpha})",
            self.metric, ends.change, ends.p
        );
        match ends.show {
            EndsShow::Worse => None,
            EndsShow::Better => Some(format!(
                "the bad end is better than the good one: {evidence}; nothing got worse \
                 between them, so no commit is blamed"
            )),
            EndsShow::WithinNoise => {
                let threshold = self.args.threshold.unwrap_or(0.0);
                let advice = relative_noise(good, bad, median(good))
                    .filter(|_| ends.for_the_worse && ends.change.abs() >= threshold)
                    .and_then(|noise| rounds_needed(noise, ends.change, alpha))
                    .filter(|&n| n > rounds as u64)
                    .map(|n| {
                        let more = match n > u64::from(self.args.max_rounds) {
                            true => format!(" --max-rounds {n}"),
                            false => String::new(),
                        };
                        format!("; about {n} rounds a side (--rounds {n}{more}) would tell it")
                    })
                    .unwrap_or_default();
                Some(format!(
                    "good and bad do not differ beyond noise{}: {evidence}: no commit is \
                     blamed{advice}",
                    self.args
                        .threshold
                        .map(|t| format!(" and {t}%"))
                        .unwrap_or_default(),
                ))
            }
        }
    }

    /// How a tested commit's looks spend alpha: after every round from `--rounds` (or
    /// `--min-runs`) to `--max-rounds`, as `--runs auto` spends it (Pocock type), so that
    /// looking after every round does not raise the chance of misplacing a commit above
    /// alpha. With `--runs N` there is one look, at alpha.
    fn placement_spending(&self) -> Sequential {
        Sequential::new(Design {
            alpha: self.args.alpha / 2.0,
            min_rounds: self.args.rounds as usize,
            max_rounds: self.args.max_rounds as usize,
        })
    }

    /// Tests commit `index`: checked out, built, measured against both ends.
    fn test(&mut self, index: usize) -> std::result::Result<Tested, Stop> {
        let commit = self.commits[index].clone();
        let skipped = |short: &'static str, why: String| Tested {
            commit: index,
            median: None,
            judged: None,
            side: None,
            rounds: 0,
            skipped: Some((short, why)),
        };
        let checkout = match self.checkouts.prepare(&commit).map_err(Stop::Fatal)? {
            Ok(checkout) => checkout,
            Err(why) => return Ok(skipped("does not build", why)),
        };
        let spending = self.placement_spending();
        // Two-sided U tests at each look: twice the one-sided level spent there.
        let level = |rounds: usize| spending.level_at(rounds).map(|l| 2.0 * l);
        let samples = match self.rounds(Some(&*checkout), |g, m, b| {
            level(m.len()).is_some_and(|alpha| judge(g, m, b, alpha).side.is_some())
        }) {
            Ok(samples) => samples,
            Err(Stop::Commit(why)) => return Ok(skipped("does not run", why)),
            Err(stop) => return Err(stop),
        };
        self.file(Some(index)).map_err(Stop::Fatal)?;
        let [good, mid, bad] = &samples;
        let last = self.args.max_rounds as usize;
        let alpha = level(mid.len()).or(level(last)).unwrap_or(self.args.alpha);
        let judged = judge(good, mid, bad, alpha);
        let side = match judged.side {
            Some(side) => (side, true),
            None => (nearest(good, mid, bad), false),
        };
        Ok(Tested {
            commit: index,
            median: Some(median(mid)),
            judged: Some(judged),
            side: Some(side),
            rounds: mid.len(),
            skipped: None,
        })
    }
}
