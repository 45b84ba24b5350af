//! `--runs auto` on interleaved rounds: the figures the `--fail-on` rules name, paired round by
//! round, judged by the sequential test after each round, and its decision as the verdict.

use super::gate::{Measured, Status, TargetResult, Verdict};
use super::sequential::{Decision, Design, Figure, Sequential, p_worse};
use super::view::{Change, ChangeVerdict, Decided};
use crate::error::{Error, Result};
use crate::model::{Run, Unit};
use crate::spec::targets::RegressionRule;

/// One round: the base's runs and the working tree's.
pub type Round = (Vec<Run>, Vec<Run>);

/// What each gated figure is compared with.
pub enum Against {
    /// The same benchmark in the base's runs (`--interleave`: two trees).
    SameName,
    /// This benchmark in the same round (`exec`: every command against the first).
    Reference(String),
}

/// A figure a rule gates: which benchmark and metric, under which rule.
struct Gated {
    package: Option<String>,
    bench: String,
    /// The benchmark's full name in the base's runs.
    base_bench: String,
    /// The name as tables show it (Go's without its GOMAXPROCS suffix).
    shown: String,
    metric: String,
    unit: Unit,
    /// A rise is the worse direction (the rule's, or the metric's own).
    increase_is_bad: bool,
    rule: usize,
}

/// The sequential gate over a growing list of rounds.
pub struct AutoGate {
    rules: Vec<RegressionRule>,
    against: Against,
    test: Sequential,
    gated: Vec<Gated>,
    figures: Vec<Figure>,
    decision: Decision,
    rounds: usize,
}

impl AutoGate {
    pub fn new(design: Design, rules: Vec<RegressionRule>, against: Against) -> AutoGate {
        AutoGate {
            rules,
            against,
            test: Sequential::new(design),
            gated: Vec::new(),
            figures: Vec::new(),
            decision: Decision::Continue,
            rounds: 0,
        }
    }

    /// Looks after the latest of `rounds`; the decision (`Continue` for another round). The
    /// gated figures are those of the first round; a rule naming none is an error.
    pub fn look(&mut self, rounds: &[Round]) -> Result<Decision> {
        if self.gated.is_empty() {
            self.gated = self.gated_in(&rounds[0])?;
        }
        self.figures = self
            .gated
            .iter()
            .map(|g| Figure {
                worse_log_ratios: rounds.iter().filter_map(|r| g.worse_log_ratio(r)).collect(),
                threshold: g.threshold(&self.rules[g.rule]),
            })
            .collect();
        self.rounds = rounds.len();
        self.decision = self.test.look(rounds.len(), &self.figures);
        Ok(self.decision)
    }

    fn gated_in(&self, (base, working): &Round) -> Result<Vec<Gated>> {
        let mut gated = Vec::new();
        for (rule_index, rule) in self.rules.iter().enumerate() {
            let before = gated.len();
            for bench in working.iter().flat_map(|r| &r.benchmarks) {
                let base_bench = match &self.against {
                    Against::SameName => &bench.name.full_name,
                    Against::Reference(name) if *name == bench.name.full_name => continue,
                    Against::Reference(name) => name,
                };
                for metric in bench.metrics.iter().filter(|m| m.name == rule.metric) {
                    let figure = Gated {
                        package: bench.package.clone(),
                        bench: bench.name.full_name.clone(),
                        base_bench: base_bench.clone(),
                        shown: bench.name.name.clone(),
                        metric: metric.name.clone(),
                        unit: metric.unit.clone(),
                        increase_is_bad: rule.increase_is_bad(metric.better),
                        rule: rule_index,
                    };
                    let known = gated
                        .iter()
                        .any(|g: &Gated| g.same_figure(&figure) && g.rule == rule_index);
                    if !known && figure.median_of(base, &figure.base_bench).is_some() {
                        gated.push(figure);
                    }
                }
            }
            if gated.len() == before {
                return Err(Error::Input(format!(
                    "--fail-on `{}`: no benchmark measured on both sides has a metric called `{}`",
                    rule.text, rule.metric
                )));
            }
        }
        Ok(gated)
    }

    /// The verdict: each gated figure failed, passed, or undecided.
    pub fn verdict(&self, base: &str, rounds: &[Round]) -> Verdict {
        let standings = self.test.standings();
        let targets = self
            .gated
            .iter()
            .zip(&self.figures)
            .enumerate()
            .map(|(i, (g, figure))| {
                let standing = standings.get(i).copied().unwrap_or_default();
                let status = match self.decision {
                    Decision::Changed(failed) if failed == i => Status::Fail,
                    _ if standing.within => Status::Pass,
                    _ => Status::Undecided,
                };
                let rule = &self.rules[g.rule];
                let n = figure.worse_log_ratios.len();
                let worse = figure.worse_log_ratios.iter().filter(|&&r| r > 0.0).count();
                let how = match status {
                    Status::Fail => "worse beyond it",
                    Status::Pass => "shown within it",
                    _ => "undecided",
                };
                let how = format!("worse in {worse} of {n} paired rounds; {how} after {n} rounds");
                let working = rounds
                    .iter()
                    .filter_map(|r| g.median_of(&r.1, &g.bench))
                    .collect();
                let versus = match &self.against {
                    Against::SameName => format!("working tree vs {base}"),
                    Against::Reference(name) => format!("vs {name}"),
                };
                TargetResult {
                    bench: g.shown.clone(),
                    metric: format!("{}: {versus}", g.metric),
                    value: median_of(working).map(|value| Measured::new(value, g.unit.clone())),
                    shown: format!("{} (got {}, {how})", rule.text, g.change(figure)),
                    target: rule.text.clone(),
                    status,
                }
            })
            .collect();
        Verdict {
            targets,
            budget: None,
        }
    }

    /// The gated figures' changes as the gate judged them, for the comparison's rows: the
    /// change is the geometric mean of the rounds' ratios and the p-value the paired test's at
    /// the last look (one-sided: worse), significant when the gate found the figure worse, so
    /// that a row and the verdict on it are one statistic of the same rounds.
    pub fn decided(&self) -> Vec<Decided> {
        let standings = self.test.standings();
        let gated = self.gated.iter().zip(&self.figures).enumerate();
        gated
            .map(|(i, (g, figure))| {
                let rounds = figure.worse_log_ratios.len() as u64;
                let change = Change {
                    percent: g.change_percent(figure),
                    p: (rounds > 1).then(|| p_worse(figure)),
                    interval: None,
                    n_base: rounds,
                    n: rounds,
                    verdict: match standings.get(i).is_some_and(|s| s.worse) {
                        true => ChangeVerdict::Significant,
                        false if rounds > 1 => ChangeVerdict::Noise,
                        false => ChangeVerdict::Untested,
                    },
                    better: match g.increase_is_bad {
                        true => crate::model::Better::Lower,
                        false => crate::model::Better::Higher,
                    },
                    diagnostics: Vec::new(),
                };
                Decided {
                    metric: g.metric.clone(),
                    bench: g.shown.clone(),
                    full_name: g.bench.clone(),
                    change,
                }
            })
            .collect()
    }

    /// The note on how the rounds ended.
    pub fn note(&self, design: &Design) -> String {
        let how = match self.decision {
            Decision::Changed(_) => "a change beyond a --fail-on threshold is real",
            Decision::Within => "every gated figure is within its threshold",
            Decision::Undecided => "undecided at --max-runs",
            Decision::Continue => "interrupted before a decision",
        };
        format!(
            "--runs auto: {} rounds of at most {} ({how}); judged by a group-sequential paired \
             test on the rounds' log ratios that holds false alarms within alpha {} over every \
             look (docs/sequential.md); the gated rows show that test's change (the geometric \
             mean of the rounds' ratios) and its one-sided p at the last look, as the verdict \
             reads them",
            self.rounds, design.max_rounds, design.alpha
        )
    }
}

impl Gated {
    fn same_figure(&self, other: &Gated) -> bool {
        self.package == other.package && self.bench == other.bench && self.metric == other.metric
    }

    /// The median of this figure's metric for benchmark `bench` in `runs` (one round of one
    /// side).
    fn median_of(&self, runs: &[Run], bench: &str) -> Option<f64> {
        let values = runs
            .iter()
            .flat_map(|r| &r.benchmarks)
            .filter(|b| b.package == self.package && b.name.full_name == bench)
            .flat_map(|b| &b.metrics)
            .filter(|m| m.name == self.metric)
            .flat_map(|m| m.values.iter().copied())
            .collect();
        median_of(values)
    }

    /// The round's log ratio working/base, positive when worse; `None` when a side lacks it
    /// or a value is not positive.
    fn worse_log_ratio(&self, (base, working): &Round) -> Option<f64> {
        let new = self.median_of(working, &self.bench)?;
        let ratio = (new / self.median_of(base, &self.base_bench)?).ln();
        let worse = if self.increase_is_bad { ratio } else { -ratio };
        worse.is_finite().then_some(worse)
    }

    /// The threshold as a worse log ratio.
    fn threshold(&self, rule: &RegressionRule) -> f64 {
        let fraction = rule.percent / 100.0;
        if self.increase_is_bad {
            fraction.ln_1p()
        } else if fraction < 1.0 {
            -(-fraction).ln_1p()
        } else {
            f64::INFINITY
        }
    }

    /// The change working/base in percent: the geometric mean of the rounds' ratios.
    fn change_percent(&self, figure: &Figure) -> Option<f64> {
        let v = &figure.worse_log_ratios;
        if v.is_empty() {
            return None;
        }
        let worse = v.iter().sum::<f64>() / v.len() as f64;
        let log_ratio = if self.increase_is_bad { worse } else { -worse };
        Some(log_ratio.exp_m1() * 100.0)
    }

    /// [`Gated::change_percent`] as text: `+49.60%`, `?`.
    fn change(&self, figure: &Figure) -> String {
        self.change_percent(figure)
            .map_or_else(|| "?".into(), |c| format!("{c:+.2}%"))
    }
}

fn median_of(mut values: Vec<f64>) -> Option<f64> {
    (!values.is_empty()).then(|| crate::model::summary::median(&mut values))
}
