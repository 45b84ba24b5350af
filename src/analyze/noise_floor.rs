//! The noise floor of a machine, from an A/A run (the same suite against itself, the two arms
//! taking turns): how much each figure varies from run to run, the smallest change the gates
//! can tell from that with a given number of runs, and the runs a named change needs.
//!
//! The estimates are the normal-theory ones on log values with Student's t, for the tests the
//! gates apply: a one-sided two-sample test for runs a side (`--fail-on`'s permutation test on
//! log values, which has the t test's power), a one-sided paired test for rounds
//! (`--runs auto`).

use super::auto_gate::Round;
use super::counted::{FLOOR_PERCENT, agree};
use super::utest::min_samples_to_detect;
use crate::model::Run;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The power at which calibration states what can be detected.
pub const POWER: f64 = 0.9;
/// Beyond this many runs the answer is "more than".
pub const MOST_RUNS: u64 = 100_000;

/// One figure's noise, measured against itself.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Floor {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub package: Option<String>,
    /// The benchmark's full name, as the harness printed it.
    pub bench: String,
    /// The name as tables show it.
    pub shown: String,
    pub metric: String,
    pub unit: String,
    /// Rounds the estimates are of.
    pub rounds: usize,
    /// The standard deviation of one run's log value, pooled within the arms: the run-to-run
    /// variation the two-sample gate sees.
    pub spread: f64,
    /// The standard deviation of a round's log ratio second/first arm: what `--runs auto`
    /// pairs.
    pub paired_spread: f64,
    /// The A/A change second/first arm in percent, with its 95 % interval. Zero should lie
    /// within it; when not, the arms differ by their order alone.
    pub aa_change: f64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aa_interval: Option<(f64, f64)>,
    /// Counted (instructions) and agreeing within the counting floor run to run: a change is
    /// then told by its size, beyond the floor, with three counts a side.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub counted: bool,
    /// Counted, but varying beyond the floor run to run (random seeds, crypto/rand): its
    /// changes are tested as times are, and its spread says how small a change it tells.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub counts_vary: bool,
}

impl Floor {
    /// The smallest change in percent that `runs` a side detect with [`POWER`] at one-sided
    /// `alpha`; `None` when the U test cannot reach `alpha` with so few. Counts that agree
    /// tell anything beyond their floor.
    pub fn detectable(&self, runs: u64, alpha: f64) -> Option<f64> {
        match self.counted {
            true => Some(FLOOR_PERCENT),
            false => two_sample_detectable(self.spread, runs, alpha),
        }
    }

    /// The runs a side that detect a change of `percent` with [`POWER`] at one-sided `alpha`;
    /// `None` beyond [`MOST_RUNS`].
    pub fn runs_needed(&self, percent: f64, alpha: f64) -> Option<u64> {
        match self.counted {
            true => (percent.abs() > FLOOR_PERCENT).then_some(1),
            false => runs_a_side(self.spread, percent, alpha),
        }
    }

    /// The paired rounds that detect a change of `percent` with [`POWER`] at one-sided
    /// `alpha`; `None` beyond [`MOST_RUNS`].
    pub fn rounds_needed(&self, percent: f64, alpha: f64) -> Option<u64> {
        match self.counted {
            true => (percent.abs() > FLOOR_PERCENT).then_some(1),
            false => least(percent, |n| paired_detectable(self.paired_spread, n, alpha)),
        }
    }

    pub fn is(&self, package: Option<&str>, bench: &str, metric: &str) -> bool {
        self.package.as_deref() == package && self.bench == bench && self.metric == metric
    }
}

/// A saved calibration (`latkit calibrate --save`): the floors of one machine's A/A run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// The format's version; 1.
    pub latkit_calibration: u32,
    /// The host it was measured on.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<String>,
    /// The latkit command line that was calibrated.
    pub command: Vec<String>,
    /// Runs a side that command takes, for which `detectable` was stated.
    pub runs: u64,
    pub figures: Vec<Floor>,
}

/// How a gate will be run: runs a side judged once (`--fail-on`), or paired rounds judged
/// until decided (`--runs auto`, at most this many).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Planned {
    RunsASide(u64),
    Rounds(u64),
}

/// What a gate of `percent` (its rule `rule`) asks that this machine cannot tell for the
/// figure of `floor`, run as `planned` at one-sided `alpha`; `None` when it can.
pub fn below_floor(
    floor: &Floor,
    rule: &str,
    percent: f64,
    planned: Planned,
    alpha: f64,
) -> Option<String> {
    let (n, detectable, needed, what) = match planned {
        Planned::RunsASide(n) => (
            n,
            floor.detectable(n, alpha),
            floor.runs_needed(percent, alpha),
            "runs a side",
        ),
        Planned::Rounds(n) => (
            n,
            paired_detectable(floor.paired_spread, n, alpha),
            floor.rounds_needed(percent, alpha),
            "rounds",
        ),
    };
    if detectable.is_some_and(|d| d <= percent.abs()) {
        return None;
    }
    let can = match detectable {
        Some(d) => format!("{d:.1} % can"),
        None => "no change can with so few".to_string(),
    };
    let needs = match needed {
        Some(k) => format!("{:.1} % needs about {k} {what}", percent.abs()),
        None => format!("{:.1} % needs more than {MOST_RUNS} {what}", percent.abs()),
    };
    Some(format!(
        "{} {}: a {rule} gate cannot be decided here with {n} {what} (this machine's run-to-run \
         variation is {:.2} %, by `latkit calibrate`); {can}; {needs}",
        floor.shown,
        floor.metric,
        floor.spread.exp_m1() * 100.0
    ))
}

/// For `--runs auto`: for each rule, the calibrated figures of its metric among the `gated`
/// benchmarks whose threshold at most `max_rounds` paired rounds cannot decide (Holm's first
/// step over them).
pub fn under_auto(
    floors: &[Floor],
    gated: &[&str],
    rules: &[crate::spec::targets::RegressionRule],
    max_rounds: u64,
    alpha: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for rule in rules {
        let family: Vec<&Floor> = floors
            .iter()
            .filter(|f| f.metric == rule.metric)
            .filter(|f| gated.contains(&f.bench.as_str()) || gated.contains(&f.shown.as_str()))
            .collect();
        let alpha = alpha / family.len().max(1) as f64;
        let planned = Planned::Rounds(max_rounds);
        warnings.extend(
            family
                .into_iter()
                .filter_map(|f| below_floor(f, &rule.text, rule.percent, planned, alpha)),
        );
    }
    warnings
}

/// `t(1 − alpha) + t(power)` with `freedom` degrees of freedom.
fn quantile_sum(freedom: f64, alpha: f64) -> Option<f64> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, freedom).ok()?;
    Some(t.inverse_cdf(1.0 - alpha) + t.inverse_cdf(POWER))
}

/// The smallest change in percent detectable with `runs` a side, for log spread `spread`.
pub fn two_sample_detectable(spread: f64, runs: u64, alpha: f64) -> Option<f64> {
    // The permutation test's smallest one-sided p for n against n is 1 / C(2n, n), as the
    // exact U test's is.
    let fewest = min_samples_to_detect(2.0 * alpha)? as u64;
    if runs < fewest.max(2) {
        return None;
    }
    let z = quantile_sum(2.0 * runs as f64 - 2.0, alpha)?;
    Some((z * spread * (2.0 / runs as f64).sqrt()).exp_m1() * 100.0)
}

/// The runs a side that detect a change of `percent` with [`POWER`] at one-sided `alpha`, for
/// log spread `spread`; `None` beyond [`MOST_RUNS`].
pub fn runs_a_side(spread: f64, percent: f64, alpha: f64) -> Option<u64> {
    least(percent, |n| two_sample_detectable(spread, n, alpha))
}

/// The smallest change in percent detectable with `rounds` paired rounds.
pub fn paired_detectable(paired_spread: f64, rounds: u64, alpha: f64) -> Option<f64> {
    if rounds < 2 {
        return None;
    }
    let z = quantile_sum(rounds as f64 - 1.0, alpha)?;
    Some((z * paired_spread / (rounds as f64).sqrt()).exp_m1() * 100.0)
}

/// The fewest `n` from 2 to [`MOST_RUNS`] whose detectable change is at most `percent` (what
/// is detectable shrinks as `n` grows).
fn least(percent: f64, detectable: impl Fn(u64) -> Option<f64>) -> Option<u64> {
    let enough = |n: u64| detectable(n).is_some_and(|d| d <= percent.abs());
    if !enough(MOST_RUNS) {
        return None;
    }
    let (mut low, mut high) = (1, MOST_RUNS);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if enough(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

/// Every figure both arms measured in the first round, with its noise over `rounds`; figures
/// with a value that is not positive (no log) and not constant are left out.
pub fn from_rounds(rounds: &[Round]) -> Vec<Floor> {
    let Some((first, second)) = rounds.first() else {
        return Vec::new();
    };
    let mut floors = Vec::new();
    for bench in second.iter().flat_map(|r| &r.benchmarks) {
        for metric in &bench.metrics {
            let key = (
                bench.package.as_deref(),
                &*bench.name.full_name,
                &*metric.name,
            );
            let known = floors.iter().any(|f: &Floor| f.is(key.0, key.1, key.2));
            if known || median_in(first, key).is_none() {
                continue;
            }
            let pairs: Vec<(f64, f64)> = rounds
                .iter()
                .filter_map(|(a, b)| Some((median_in(a, key)?, median_in(b, key)?)))
                .collect();
            if let Some(noise) = Noise::of(&pairs) {
                let counts = metric.assume == crate::model::Assume::Counted;
                let all: Vec<f64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
                floors.push(Floor {
                    package: bench.package.clone(),
                    bench: bench.name.full_name.clone(),
                    shown: bench.name.name.clone(),
                    metric: metric.name.clone(),
                    unit: metric.unit.to_string(),
                    rounds: pairs.len(),
                    spread: noise.spread,
                    paired_spread: noise.paired_spread,
                    aa_change: noise.change,
                    aa_interval: noise.interval,
                    counted: counts && agree(&all),
                    counts_vary: counts && !agree(&all),
                });
            }
        }
    }
    floors
}

/// The median of one figure's values in one arm's runs of a round.
fn median_in(runs: &[Run], (package, bench, metric): (Option<&str>, &str, &str)) -> Option<f64> {
    let mut values: Vec<f64> = runs
        .iter()
        .flat_map(|r| &r.benchmarks)
        .filter(|b| b.package.as_deref() == package && b.name.full_name == bench)
        .flat_map(|b| &b.metrics)
        .filter(|m| m.name == metric)
        .flat_map(|m| m.values.iter().copied())
        .collect();
    (!values.is_empty()).then(|| crate::model::summary::median(&mut values))
}

/// What the A/A pairs (first arm, second arm) say, on log values.
struct Noise {
    spread: f64,
    paired_spread: f64,
    change: f64,
    interval: Option<(f64, f64)>,
}

impl Noise {
    /// `None` for fewer than two pairs, or values with no log that are not all equal.
    fn of(pairs: &[(f64, f64)]) -> Option<Noise> {
        let n = pairs.len();
        if n < 2 {
            return None;
        }
        if pairs
            .iter()
            .all(|&(a, b)| a == pairs[0].0 && b == pairs[0].0)
        {
            return Some(Noise {
                spread: 0.0,
                paired_spread: 0.0,
                change: 0.0,
                interval: Some((0.0, 0.0)),
            });
        }
        if pairs.iter().any(|&(a, b)| !(a > 0.0 && b > 0.0)) {
            return None;
        }
        let firsts: Vec<f64> = pairs.iter().map(|p| p.0.ln()).collect();
        let seconds: Vec<f64> = pairs.iter().map(|p| p.1.ln()).collect();
        let ratios: Vec<f64> = pairs.iter().map(|p| (p.1 / p.0).ln()).collect();
        let squares = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (mean, v.iter().map(|x| (x - mean).powi(2)).sum::<f64>())
        };
        let spread = ((squares(&firsts).1 + squares(&seconds).1) / (2 * n - 2) as f64).sqrt();
        let (mean_ratio, ratio_squares) = squares(&ratios);
        let paired_spread = (ratio_squares / (n - 1) as f64).sqrt();
        let half_width = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .ok()
            .map(|t| t.inverse_cdf(0.975) * paired_spread / (n as f64).sqrt());
        let percent = |log: f64| log.exp_m1() * 100.0;
        Some(Noise {
            spread,
            paired_spread,
            change: percent(mean_ratio),
            interval: half_width.map(|h| (percent(mean_ratio - h), percent(mean_ratio + h))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detectable_matches_the_normal_theory_by_hand() {
        // 10 a side, spread 0.1, alpha 0.05, power 0.9, 18 degrees of freedom:
        // t(0.95) = 1.7341, t(0.9) = 1.3304;
        // δ = 3.0645 · 0.1 · √(2 / 10) = 0.13705 → +14.69 %.
        let d = two_sample_detectable(0.1, 10, 0.05).unwrap();
        assert!((d - 14.69).abs() < 0.02, "{d}");
        // Paired, 10 rounds, spread 0.1: t9(0.95) = 1.8331, t9(0.9) = 1.3830;
        // δ = 3.2161 · 0.1 / √10 = 0.10170 → +10.70 %.
        let p = paired_detectable(0.1, 10, 0.05).unwrap();
        assert!((p - 10.70).abs() < 0.02, "{p}");
    }

    #[test]
    fn too_few_runs_for_the_u_test_detect_nothing() {
        // At alpha 0.0025 a one-sided exact test needs 1 / C(2n, n) ≤ 0.0025: n = 6.
        assert_eq!(two_sample_detectable(0.1, 5, 0.0025), None);
        assert!(two_sample_detectable(0.1, 6, 0.0025).is_some());
        assert_eq!(two_sample_detectable(0.1, 1, 0.05), None);
    }

    #[test]
    fn runs_needed_is_the_fewest_that_detect_the_change() {
        let floor = Floor {
            package: None,
            bench: "b".into(),
            shown: "b".into(),
            metric: "ns/op".into(),
            unit: "ns".into(),
            rounds: 10,
            spread: 0.02,
            paired_spread: 0.02,
            aa_change: 0.0,
            aa_interval: None,
            counted: false,
            counts_vary: false,
        };
        let n = floor.runs_needed(1.0, 0.05).unwrap();
        assert!(floor.detectable(n, 0.05).unwrap() <= 1.0);
        assert!(floor.detectable(n - 1, 0.05).unwrap() > 1.0);
        assert!((60..90).contains(&n), "{n}");
        let rounds = floor.rounds_needed(1.0, 0.05).unwrap();
        assert!(rounds < n, "pairing needs fewer: {rounds} vs {n}");
        assert_eq!(floor.runs_needed(1e-6, 0.05), None);
        // No noise at all: any change is told.
        let exact = Floor {
            spread: 0.0,
            ..floor
        };
        assert_eq!(exact.detectable(3, 0.05), Some(0.0));
    }

    #[test]
    fn constant_figures_have_no_noise_and_unloggable_ones_are_left_out() {
        let zero = Noise::of(&[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]).unwrap();
        assert_eq!(zero.spread, 0.0);
        assert!(Noise::of(&[(0.0, 1.0), (1.0, 2.0)]).is_none());
        assert!(Noise::of(&[(1.0, 1.0)]).is_none());
        let noise = Noise::of(&[(100.0, 110.0), (100.0, 90.0), (105.0, 105.0)]).unwrap();
        let (low, high) = noise.interval.unwrap();
        assert!(low < 0.0 && 0.0 < high && noise.spread > 0.0);
    }
}
