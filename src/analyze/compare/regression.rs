//! The regression gate (`--fail-on`, `[[regression]]`): a figure fails when it changed the
//! wrong way beyond the rule's threshold and the change is real. "Real" is judged for the
//! family of every comparison a rule covers at once (Holm's step-down method), so that a
//! suite of twenty noisy benchmarks raises a false alarm no more often than `--alpha`, while
//! each row of the table keeps its own p-value.

use super::CompareOptions;
use super::Compared;
use crate::analyze::gate::{Measured, Status, TargetResult, Verdict};
use crate::analyze::noise_floor;
use crate::analyze::permutation;
use crate::analyze::view::ChangeVerdict;
use crate::error::{Error, Result};
use crate::model::Note;
use crate::spec::targets::RegressionRule;

/// Holm's adjusted p-values, in the order given: the i-th smallest p is multiplied by
/// (m − i + 1), made non-decreasing, and capped at 1. A comparison is significant for the
/// family at alpha when its adjusted p is at most alpha.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The pooled standard deviation of two samples relative to `centre` (the base's): the noise
/// a change must stand out of. `None` when it cannot be told (fewer than three values, or a
/// zero centre).
pub(crate) fn relative_noise(a: &[f64], b: &[f64], centre: f64) -> Option<f64> {
    let sum_of_squares = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
    };
    let freedom = (a.len() + b.len()).checked_sub(2).filter(|&d| d > 0)?;
    let pooled = ((sum_of_squares(a) + sum_of_squares(b)) / freedom as f64).sqrt();
    (centre != 0.0 && pooled.is_finite()).then(|| pooled / centre.abs())
}

/// A comparison's one-sided p-value, and whether the permutation test gave it (rather than
/// the table's own test).
#[derive(Clone, Copy)]
struct OneSided {
    p: f64,
    permuted: bool,
    /// The base's values were moved by this many percent before the test (counts that
    /// vary are tested against the rule's threshold).
    against: Option<f64>,
}

/// How one comparison stands for the family: its own p, the family's adjusted p, the size.
struct Evidence {
    p: Option<OneSided>,
    adjusted: Option<f64>,
    family: usize,
}

impl Evidence {
    /// The p-values: its own, and the family's adjusted one when there is a family.
    fn p_values(&self) -> String {
        let Some(OneSided {
            p,
            permuted,
            against,
        }) = self.p
        else {
            return String::new();
        };
        let test = match (permuted, against) {
            (true, Some(by)) => format!("permutation against {by:+}% "),
            (true, None) => "permutation ".to_string(),
            (false, _) => String::new(),
        };
        match self.adjusted {
            Some(adj) if self.family > 1 => format!(
                "one-sided {test}p={p:.3}, Holm p={adj:.3} over {}",
                self.family
            ),
            _ => format!("one-sided {test}p={p:.3}"),
        }
    }

    fn text(&self, verdict: ChangeVerdict, significant: bool) -> String {
        let p = self.p_values();
        match (verdict, significant) {
            (ChangeVerdict::Exact, _) => "exact values".to_string(),
            (ChangeVerdict::Counted, true) => "counted".to_string(),
            (ChangeVerdict::Counted, false) => "counted, within the counting floor".to_string(),
            (ChangeVerdict::CountedOnce, _) => "counted once: repeatability unknown".to_string(),
            (ChangeVerdict::Untested | ChangeVerdict::Summary, _) => "not tested".to_string(),
            (_, true) if p.is_empty() => "bounds apart".to_string(),
            (_, true) => p,
            (_, false) if p.is_empty() => "within noise".to_string(),
            (_, false) => format!("within noise: {p}"),
        }
    }
}

/// Judges every compared figure a rule names: a regression fails when it is beyond the
/// threshold and significant for the rule's family; beyond the threshold but within noise it
/// passes with a note naming the repetitions that would tell (fails with `strict`).
pub(super) fn gate(
    compared: &[Compared],
    base: &str,
    opts: &CompareOptions,
    notes: &mut Vec<Note>,
) -> Result<Verdict> {
    let mut targets = Vec::new();
    for rule in &opts.rules {
        let matching = matching(compared, rule)?;
        let one_sided: Vec<Option<OneSided>> = matching.iter().map(|c| towards(c, rule)).collect();
        let ps: Vec<f64> = one_sided.iter().flatten().map(|o| o.p).collect();
        let mut adjusted = holm(&ps).into_iter();
        let family = ps.len();
        if family > 1 {
            notes.push(Note::info(format!(
                "--fail-on {}: {family} comparisons judged as one family: the chance of any \
                 false alarm among them is held at alpha {} (Holm); each row's p-value in the \
                 table is its own (two-sided)",
                rule.text, opts.alpha
            )));
        }
        for (c, p) in matching.into_iter().zip(one_sided) {
            notes.extend(below_floor(c, rule, opts, family));
            let evidence = Evidence {
                p,
                adjusted: p.and_then(|_| adjusted.next()),
                family,
            };
            targets.push(judge(c, rule, &evidence, base, opts.alpha, notes));
        }
    }
    Ok(Verdict {
        targets,
        budget: None,
    })
}

/// A warning when `rule`'s threshold on `c` is below what this machine's noise floor lets
/// the compared runs detect (the family's first Holm step sets the level).
fn below_floor(
    c: &Compared,
    rule: &RegressionRule,
    opts: &CompareOptions,
    family: usize,
) -> Option<Note> {
    let floor = opts
        .floors
        .iter()
        .find(|f| (f.shown == c.bench || f.bench == c.bench) && f.metric == c.figure)?;
    let runs = c.change.n_base.min(c.change.n);
    let alpha = opts.alpha / family.max(1) as f64;
    let planned = noise_floor::Planned::RunsASide(runs);
    noise_floor::below_floor(floor, &rule.text, rule.percent, planned, alpha).map(Note::warning)
}

/// The one-sided p-value of a change in the direction `rule` fails on: a gate that fails on
/// "slower" asks only whether the new side is slower, so its test looks one way (a two-sided
/// test spends half its alpha on "faster" and misses regressions). Repetitions the table
/// tested are tested again by permutation of their log values, which at equal false alarms
/// catches more than the table's U test (see `permutation`). Otherwise the table's p: the
/// null distribution of U is symmetric, so the one-sided p is half the two-sided one in the
/// rule's direction, and one minus that half the other way.
fn towards(c: &Compared, rule: &RegressionRule) -> Option<OneSided> {
    let p = c.change.p?;
    let rising_is_bad = rule.increase_is_bad(c.better);
    if let Some([a, b]) = &c.repetitions {
        // Counts that vary have no machine's noise to average away, only the program's own
        // spread: the rule's question, worse by more than its threshold, is what is tested.
        let against = match (c.counted, rising_is_bad) {
            (false, _) => None,
            (true, true) => Some(rule.percent),
            (true, false) => Some(-rule.percent),
        };
        let shift = 1.0 + against.unwrap_or(0.0) / 100.0;
        let a: Vec<f64> = a.iter().map(|v| v * shift).collect();
        let (low, high) = if rising_is_bad { (&a, b) } else { (b, &a) };
        if let Some(p) = permutation::higher(low, high) {
            return Some(OneSided {
                p,
                permuted: true,
                against,
            });
        }
    }
    let worse = c.change.percent.is_some_and(|x| match rising_is_bad {
        true => x > 0.0,
        false => x < 0.0,
    });
    let p = if worse { p / 2.0 } else { 1.0 - p / 2.0 };
    Some(OneSided {
        p,
        permuted: false,
        against: None,
    })
}

/// The compared figures `rule` names; an error naming those there are when none is.
fn matching<'a>(compared: &'a [Compared], rule: &RegressionRule) -> Result<Vec<&'a Compared>> {
    let matching: Vec<&Compared> = compared
        .iter()
        .filter(|c| c.names.contains(&rule.metric))
        .collect();
    if compared.is_empty() {
        return Err(Error::Input(format!(
            "--fail-on `{}`: nothing was compared: no benchmark is in both the base and the \
             other input (their tables show each side's), so no gate can be judged",
            rule.text
        )));
    }
    if matching.is_empty() {
        let mut known: Vec<&str> = compared
            .iter()
            .flat_map(|c| &c.names)
            .map(String::as_str)
            .collect();
        known.sort_unstable();
        known.dedup();
        return Err(Error::Input(format!(
            "--fail-on `{}`: no compared figure is called `{}` (compared: {})",
            rule.text,
            rule.metric,
            known.join(", ")
        )));
    }
    Ok(matching)
}

/// One figure's result under `rule`.
fn judge(
    c: &Compared,
    rule: &RegressionRule,
    evidence: &Evidence,
    base: &str,
    alpha: f64,
    notes: &mut Vec<Note>,
) -> TargetResult {
    let significant = match (c.change.verdict, evidence.adjusted) {
        (ChangeVerdict::Exact, _) => true,
        // Counts that agree: a change beyond the counting floor is one.
        (ChangeVerdict::Counted, _) => c
            .change
            .percent
            .is_some_and(crate::analyze::counted::beyond_floor),
        (_, Some(adjusted)) => adjusted <= alpha,
        (verdict, None) => verdict == ChangeVerdict::Significant,
    };
    let beyond = c
        .change
        .percent
        .is_some_and(|p| rule.is_regression(p, c.better));
    let status = match (beyond, significant) {
        (false, _) => Status::Pass,
        // One count a side shows nothing of how counts vary: neither a fail nor a pass.
        (true, _) if c.change.verdict == ChangeVerdict::CountedOnce => {
            notes.push(Note::warning(counted_once(c, rule)));
            Status::Undecided
        }
        (true, true) => Status::Fail,
        (true, false) => {
            notes.push(Note::warning(too_noisy(c, rule, evidence, alpha)));
            if rule.strict {
                Status::Fail
            } else {
                Status::Pass
            }
        }
    };
    let change = c
        .change
        .percent
        .map_or_else(|| "?".to_string(), |p| format!("{p:+.2}%"));
    // The effect with its uncertainty, beside the p-value; data its own diagnostics call
    // unfit is said so in the verdict, never passed silently.
    let unfit = c
        .unfit
        .as_ref()
        .map_or_else(String::new, |d| format!("; unfit: {d}"));
    let change = match c.change.interval {
        Some((low, high)) => format!("{change}, 95 % CI {low:+.1}% to {high:+.1}%"),
        None => change,
    };
    TargetResult {
        bench: c.bench.clone(),
        metric: format!("{}: {} vs {base}", c.figure, c.column),
        value: Some(Measured::new(c.value, c.unit.clone())),
        // The rule is the check's identity (a JUnit name stays the same run after run);
        // what this run measured goes with it where it is shown.
        shown: format!(
            "{} (got {change}, {}{unfit})",
            rule.text,
            evidence.text(c.change.verdict, significant)
        ),
        target: rule.text.clone(),
        status,
    }
}

/// The note for a change beyond the threshold between counts of which one side has one.
fn counted_once(c: &Compared, rule: &RegressionRule) -> String {
    format!(
        "{} {} ({}): {:+.2}% is beyond {}, but a side was counted once, and how its counts \
         vary run to run is unknown (Go's map seeds and crypto/rand move counts by percent): \
         count each side at least twice (latkit counts three times unless told)",
        c.bench,
        c.figure,
        c.column,
        c.change.percent.unwrap_or(0.0),
        rule.text
    )
}

/// The note for a change beyond the threshold that the data cannot tell from noise: how
/// many repetitions a side would.
fn too_noisy(c: &Compared, rule: &RegressionRule, evidence: &Evidence, alpha: f64) -> String {
    let percent = c.change.percent.unwrap_or(0.0);
    // Holm's first step tests at alpha / family: enough repetitions for that tell any.
    let alpha_each = alpha / evidence.family.max(1) as f64;
    let needed = c
        .noise
        .map(|noise| noise_floor::runs_a_side(noise, percent, alpha_each));
    let advice = match needed {
        Some(None) => format!(
            "the values vary too much to tell such a change with fewer than {} repetitions \
             a side",
            noise_floor::MOST_RUNS
        ),
        Some(Some(n)) => format!(
            "about {n} repetitions a side (now {} and {}) would tell it ({:.0} % power)",
            c.change.n_base,
            c.change.n,
            noise_floor::POWER * 100.0
        ),
        None => "needs more samples".to_string(),
    };
    let p = match evidence.p_values() {
        p if p.is_empty() => p,
        p => format!(" ({p})"),
    };
    format!(
        "{} {} ({}): {percent:+.2}% is beyond {} but within noise{p}; {advice}",
        c.bench, c.figure, c.column, rule.text,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_by_hand() {
        // Sorted 0.01, 0.02, 0.03, 0.5 → ×4, ×3, ×2, ×1 = 0.04, 0.06, 0.06 (made
        // non-decreasing), 0.5; back in the given order.
        let adjusted = holm(&[0.03, 0.5, 0.01, 0.02]);
        let expected = [0.06, 0.5, 0.04, 0.06];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        // 0.8 × 2 is capped at 1, and 0.9 may not fall below it.
        assert_eq!(holm(&[0.9, 0.8]), [1.0, 1.0]);
        assert_eq!(holm(&[0.2, 0.4]), [0.4, 0.4]);
        assert_eq!(holm(&[0.04]), [0.04]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn pooled_noise_relative_to_the_base() {
        let noise = relative_noise(&[9.0, 10.0, 11.0], &[19.0, 20.0, 21.0], 10.0).unwrap();
        // Each side's squares sum to 2; pooled variance 4 / 4 = 1.
        assert!((noise - 0.1).abs() < 1e-12);
        assert_eq!(relative_noise(&[1.0], &[2.0], 1.0), None);
    }
}
