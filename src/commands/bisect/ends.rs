//! The ends of a bisection: read from the store (`--good @…`, `--bad @…`) or measured, and
//! verified to differ before any commit between them is placed.

use super::*;

/// Both ends' stored rounds and the metric's unit as stored.
#[derive(Clone)]
pub(super) struct StoredEnds {
    samples: [Vec<f64>; 2],
    unit: Option<(Unit, String)>,
}

/// The ends' revisions; with `--good @…` and `--bad @…`, the stored runs' commits and each
/// stored round's figure.
pub(super) fn stored_ends(
    args: &BisectOptions,
    bench: &regex::Regex,
    metric: &str,
    vars: &crate::env::Vars,
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
    let mut store = Store::open(&default_location(args.db.as_deref(), vars)?)?;
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
    /// Whether the bad end is worse than the good one beyond noise (and `--threshold`): the
    /// evidence either way. The ends get half of alpha (the steps the other half, so that a
    /// whole bisection names a wrong commit with a chance of at most alpha). Measured ends are
    /// tested after `--rounds` rounds and, when that does not settle it, once more after
    /// `--max-rounds`, each look at half of that, so the second look does not raise the
    /// false-alarm rate (testing after every round until they differ would); stored ends are
    /// tested once.
    pub(super) fn verify(&mut self) -> std::result::Result<(Tested, Tested, Option<Error>), Stop> {
        let (good, bad, alpha, paired) = match self.stored_ends.clone() {
            Some(StoredEnds {
                samples: [good, bad],
                unit,
            }) => {
                self.say("the ends' stored rounds show whether they differ");
                self.unit = self.unit.take().or(unit);
                (good, bad, self.args.alpha / 2.0, false)
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
                let (alpha, first) = (self.args.alpha / 2.0 / looks, self.args.rounds as usize);
                let seed =
                    seed_of(&self.commits[0]) ^ seed_of(&self.commits[self.commits.len() - 1]);
                let scale = self.scale();
                let rounds = self.rounds(None, seed, |rounds, counted| {
                    let (g, b): (Vec<f64>, Vec<f64>) =
                        rounds.iter().map(|r| (r.good, r.bad)).unzip();
                    if counted && compare_counted_ends(&g, &b, scale).is_some() {
                        return true;
                    }
                    rounds.len() == first
                        && compare_ends(&g, &b, true, alpha, scale).show != EndsShow::Undecided
                })?;
                self.file(None).map_err(Stop::Fatal)?;
                let (good, bad) = rounds.iter().map(|r| (r.good, r.bad)).unzip();
                (good, bad, alpha, true)
            }
        };
        let counted_ends = compare_counted_ends(&good, &bad, self.scale()).filter(|_| self.counted);
        if counted_ends.is_some() {
            self.say(
                "the ends' counts agree run to run: each commit is counted twice, and placed by \
                 its size when its two agree",
            );
            self.counted_ends = Some([median(&mut good.clone()), median(&mut bad.clone())]);
        }
        let ends =
            counted_ends.unwrap_or_else(|| compare_ends(&good, &bad, paired, alpha, self.scale()));
        self.ends = Some(ends);
        let end = |commit: usize, samples: &[f64], side: Side| Tested {
            commit,
            median: Some(median(&mut samples.to_vec())),
            judged: Some(Judged {
                side: Some(side),
                p_good: if side == Side::Good { 1.0 } else { ends.p },
                p_bad: if side == Side::Good { ends.p } else { 1.0 },
                change: if side == Side::Good { 0.0 } else { ends.change },
                bad_change: ends.change,
            }),
            level: alpha,
            // The ends are good and bad by the user's word; whether they differ is a note.
            side: Some((side, Basis::Test)),
            rounds: samples.len(),
            needed: None,
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

    /// Why the ends give nothing to bisect, with the evidence: a failed verdict when they
    /// show bad is not worse (exit 1), undecided when they cannot tell (exit 3), with about
    /// how many rounds would tell a change for the worse.
    fn why_not_bisect(&self, ends: &Ends, good: &[f64], bad: &[f64], alpha: f64) -> Option<Error> {
        let rounds = good.len().min(bad.len());
        // Within the threshold, p is that of "worse by less", not of a change.
        let tested = match ends.show == EndsShow::Within && !ends.counted() {
            true => " that it is worse by less",
            false => "",
        };
        let threshold = self.args.threshold.unwrap_or(0.0);
        let evidence = format!(
            "{} {:+.2}% (p={}{tested}, {rounds} rounds a side; alpha {alpha})",
            self.metric,
            ends.change,
            search::p_text(ends.p)
        );
        let busy = self.busy().map(|b| format!("; {b}")).unwrap_or_default();
        match ends.show {
            EndsShow::Worse => None,
            EndsShow::Better => Some(Error::Failed(format!(
                "the bad end is better than the good one: {evidence}; nothing got worse \
                 between them, so no commit is blamed{busy}"
            ))),
            EndsShow::Within => {
                let least = match ends.counted() {
                    true => format!(
                        "the counting floor ({}%)",
                        crate::analyze::counted::least_change(threshold)
                    ),
                    false => format!("{threshold}%"),
                };
                Some(Error::Failed(format!(
                    "good and bad do not differ by {least} or more: {evidence}: no commit is \
                     blamed{busy}"
                )))
            }
            EndsShow::Undecided => {
                let pairs = bad.iter().zip(good).map(|(&b, &g)| (b, g));
                let advice = log_spread(pairs)
                    .filter(|_| ends.for_the_worse && ends.change.abs() >= threshold)
                    .and_then(|spread| rounds_needed(spread, ends.change, alpha / 2.0, ends.paired))
                    .filter(|&n| n > rounds as u64)
                    .map(|n| {
                        let more = match n > u64::from(self.args.max_rounds) {
                            true => format!(" --max-rounds {n}"),
                            false => String::new(),
                        };
                        format!("; about {n} rounds a side (--rounds {n}{more}) would tell it")
                    })
                    .unwrap_or_default();
                Some(Error::Undecided(format!(
                    "undecided: the ends' rounds cannot tell whether bad is worse than good{}: \
                     {evidence}: no commit is blamed{advice}{busy}",
                    self.args
                        .threshold
                        .map(|t| format!(" by {t}% or more"))
                        .unwrap_or_default(),
                )))
            }
        }
    }
}
