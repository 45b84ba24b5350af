//! What a side's repetitions say about their own fitness to be compared, each finding with its
//! reason: a drift across the run ([`super::drift`]), two modes (the figure switches between
//! two levels, so its median depends on the mix), and outliers (hyperfine's modified Z-score).
//! Drift and two modes make a comparison unfit to decide; outliers are only reported, since
//! they cannot make a change significant (see [`super::permutation`]).

use super::drift::Drift;
use super::view::{Diagnostic, Finding};
use crate::model::summary::{OUTLIER_SCORE, outliers_in_sorted, sorted_median};

/// Fewer repetitions than this cannot show two modes.
const FEWEST_FOR_MODES: usize = 8;
/// Each mode holds at least this share of the values (and three of them).
const SMALLEST_MODE: f64 = 0.2;
/// The gap between the modes is more than this many times the wider mode's range.
const GAP_OVER_RANGE: f64 = 3.0;
/// And more than this share of the median: float noise on exact values is no second mode.
const SMALLEST_GAP: f64 = 0.01;

/// Two levels the values cluster at, far apart beside their own spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Modes {
    pub low: (usize, f64),
    pub high: (usize, f64),
}

impl Modes {
    /// The values' two modes (count and median of each), or `None`: split at the widest gap
    /// between neighbours, each side large enough, the gap wide beside both sides' ranges.
    pub fn of(values: &[f64]) -> Option<Modes> {
        let mut sorted = values.to_vec();
        crate::model::summary::sort_floats(&mut sorted);
        Modes::of_sorted(&sorted)
    }

    /// As [`Modes::of`], of values sorted.
    fn of_sorted(sorted: &[f64]) -> Option<Modes> {
        let n = sorted.len();
        if n < FEWEST_FOR_MODES || sorted.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let smallest = ((n as f64 * SMALLEST_MODE).ceil() as usize).max(3);
        let (split, gap) = (smallest..=n - smallest)
            .map(|i| (i, sorted[i] - sorted[i - 1]))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let (low, high) = sorted.split_at(split);
        let range = |side: &[f64]| side[side.len() - 1] - side[0];
        let centre = sorted_median(sorted).abs();
        let apart = gap > GAP_OVER_RANGE * range(low).max(range(high));
        (apart && gap > SMALLEST_GAP * centre).then(|| Modes {
            low: (low.len(), sorted_median(low)),
            high: (high.len(), sorted_median(high)),
        })
    }
}

/// Every finding on one side's repetitions (`values` in the order measured, `sorted` the same
/// sorted, of input `input`); `show` writes a value as the tables do.
pub fn diagnose(
    values: &[f64],
    sorted: &[f64],
    input: &str,
    show: &dyn Fn(f64) -> String,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut say = |kind: Finding, reason: String| {
        found.push(Diagnostic {
            input: input.to_string(),
            kind,
            unfit: kind.unfit(),
            reason: format!("in {input}, {reason}"),
        })
    };
    if let Some(drift) = Drift::of(values) {
        say(Finding::Drift, drift.text());
    }
    if let Some(Modes { low, high }) = Modes::of_sorted(sorted) {
        say(
            Finding::Bimodal,
            format!(
                "the values fall in two modes ({} near {}, {} near {}): the median depends on \
                 the mix",
                low.0,
                show(low.1),
                high.0,
                show(high.1)
            ),
        );
    }
    let outliers = outliers_in_sorted(sorted);
    if outliers > 0 {
        say(
            Finding::Outliers,
            format!(
                "{outliers} of {} values are outliers (modified Z-score > {OUTLIER_SCORE}, as \
                 hyperfine flags them): something interfered",
                values.len()
            ),
        );
    }
    found
}

/// The machine's own state during `run` (named `label`) that moves its numbers, from the
/// checks taken with it: other processes busy meanwhile, a frequency governor other than
/// `performance`. Warnings with the reason and what to do.
pub fn machine_during(run: &crate::model::Run, label: &str) -> Vec<crate::model::Note> {
    use crate::model::{CheckStatus, Note};
    run.environment
        .checks
        .iter()
        .filter(|c| c.status != CheckStatus::Ok && ["busy", "cpufreq"].contains(&c.name.as_str()))
        .map(|c| {
            let found = match c.name.as_str() {
                "cpufreq" => format!("CPU frequency {}", c.found),
                _ => c.found.clone(),
            };
            Note::warning(format!("{label}: {found}: {}", c.advice))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(v: f64) -> String {
        format!("{v}")
    }

    fn sorted(values: &[f64]) -> Vec<f64> {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted
    }

    #[test]
    fn two_levels_are_two_modes_and_one_level_is_not() {
        let two = [10.0, 10.1, 9.9, 10.0, 12.0, 12.1, 11.9, 12.0, 10.05, 12.05];
        let modes = Modes::of(&two).unwrap();
        assert_eq!(modes.low, (5, 10.0));
        assert_eq!(modes.high, (5, 12.0));
        // One lone high value is an outlier, not a mode.
        let lone = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 10.05, 30.0, 10.0, 9.95];
        assert_eq!(Modes::of(&lone), None);
        let found = diagnose(&lone, &sorted(&lone), "new", &plain);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].kind, found[0].unfit), (Finding::Outliers, false));
        assert!(
            found[0]
                .reason
                .starts_with("in new, 1 of 10 values are outliers")
        );
        // Exact values do not split on float noise.
        assert_eq!(
            Modes::of(&[48.0, 48.0, 48.0, 48.0, 48.0, 48.0, 48.0, 48.000001]),
            None
        );
        let found = diagnose(&two, &sorted(&two), "base", &plain);
        assert_eq!((found[0].kind, found[0].unfit), (Finding::Bimodal, true));
        assert!(
            found[0].reason.contains("5 near 10, 5 near 12"),
            "{}",
            found[0].reason
        );
    }

    #[test]
    fn normal_noise_is_almost_never_called_two_modes() {
        // Seeded Box-Muller normals: 20,000 samples of 10 and of 30.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        for n in [10, 30] {
            let called = (0..20_000)
                .filter(|_| {
                    let values: Vec<f64> = (0..n)
                        .map(|_| {
                            let (u, v) = (uniform(), uniform());
                            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                            100.0 + 5.0 * z
                        })
                        .collect();
                    Modes::of(&values).is_some()
                })
                .count();
            assert!(
                called <= 2,
                "{called} of 20,000 samples of {n} called bimodal"
            );
        }
    }

    #[test]
    fn a_busy_machine_and_a_slow_governor_are_said_with_their_run() {
        use crate::model::{Check, CheckStatus, Environment, RunBuilder, Source};
        let check = |name: &str, status, found: &str| Check {
            name: name.into(),
            status,
            found: found.into(),
            advice: "do this".into(),
        };
        let source = Source::unnamed_file("go");
        let builder = RunBuilder::default();
        let mut run = crate::model::new_run(source, Environment::default(), Vec::new(), builder);
        run.environment.checks = vec![
            check(
                "busy",
                CheckStatus::Warn,
                "other processes kept 0.80 of 2 CPUs busy",
            ),
            check("cpufreq", CheckStatus::Warn, "governors powersave"),
            check("load", CheckStatus::Warn, "load average 3.00 on 2 CPUs"),
            check("sched_fifo", CheckStatus::Fail, "SCHED_FIFO refused"),
        ];
        let said: Vec<String> = machine_during(&run, "new")
            .iter()
            .map(|n| n.message.clone())
            .collect();
        assert_eq!(
            said,
            [
                "new: other processes kept 0.80 of 2 CPUs busy: do this",
                "new: CPU frequency governors powersave: do this"
            ]
        );
        run.environment.checks[0].status = CheckStatus::Ok;
        assert_eq!(machine_during(&run, "new").len(), 1);
    }

    #[test]
    fn outliers_score_as_hyperfine_scores_them() {
        use crate::model::summary::modified_z_scores;
        let scores = modified_z_scores(&[1.0, 1.1, 0.9, 1.0, 1.05, 9.0]);
        assert!(scores[5] > OUTLIER_SCORE);
        assert!(scores[..5].iter().all(|z| z.abs() < 3.0));
        assert!(modified_z_scores(&[2.0; 5]).iter().all(|&z| z == 0.0));
    }
}
