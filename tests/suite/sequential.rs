//! Run until decided (`--runs auto`), by simulation (seeded, no timing): the sequential
//! design's false-alarm rate despite looking after every round, its power, and the rounds it
//! saves against the fixed design of equal power.

use crate::common::Rng;
use latkit::analyze::sequential::{Decision, Design, Figure, Sequential};
use statrs::distribution::{ContinuousCDF, StudentsT};

const ALPHA: f64 = 0.05;
/// The gate `+5%`, as a log ratio.
const THRESHOLD: f64 = 0.048_790_164_169_432;

/// One round's log ratio new/base: each side a log-normal sample with `noise`.
fn round(rng: &mut Rng, change: f64, noise: f64) -> f64 {
    (1.0 + change).ln() + noise * rng.normal() - noise * rng.normal()
}

fn design() -> Design {
    Design {
        alpha: ALPHA,
        min_rounds: 3,
        max_rounds: 30,
    }
}

/// Runs one sequential comparison of `changes.len()` figures; the decision and the rounds.
fn sequential(rng: &mut Rng, changes: &[f64], noise: f64) -> (Decision, usize) {
    let mut test = Sequential::new(design());
    let mut figures: Vec<Figure> = changes
        .iter()
        .map(|_| Figure {
            worse_log_ratios: Vec::new(),
            threshold: THRESHOLD,
        })
        .collect();
    for rounds in 1.. {
        for (figure, &change) in figures.iter_mut().zip(changes) {
            figure.worse_log_ratios.push(round(rng, change, noise));
        }
        match test.look(rounds, &figures) {
            Decision::Continue => {}
            decision => return (decision, rounds),
        }
    }
    unreachable!()
}

struct Outcome {
    changed: f64,
    within: f64,
    undecided: f64,
    mean_rounds: f64,
}

fn simulate(seed: u64, suites: usize, changes: &[f64], noise: f64) -> Outcome {
    let mut rng = Rng(seed);
    let (mut changed, mut within, mut undecided, mut rounds) = (0, 0, 0, 0);
    for _ in 0..suites {
        let (decision, n) = sequential(&mut rng, changes, noise);
        rounds += n;
        match decision {
            Decision::Changed(_) => changed += 1,
            Decision::Within => within += 1,
            Decision::Undecided => undecided += 1,
            Decision::Continue => unreachable!(),
        }
    }
    let rate = |k: usize| k as f64 / suites as f64;
    Outcome {
        changed: rate(changed),
        within: rate(within),
        undecided: rate(undecided),
        mean_rounds: rounds as f64 / suites as f64,
    }
}

/// The fixed design's power: `rounds` rounds, then the one-sided paired t test at alpha with
/// the change beyond the threshold, as `--fail-on` judges a fixed number of rounds.
fn fixed_power(seed: u64, suites: usize, rounds: usize, change: f64, noise: f64) -> f64 {
    let mut rng = Rng(seed);
    let t = StudentsT::new(0.0, 1.0, (rounds - 1) as f64).unwrap();
    let mut caught = 0;
    for _ in 0..suites {
        let v: Vec<f64> = (0..rounds)
            .map(|_| round(&mut rng, change, noise))
            .collect();
        let n = rounds as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let p = t.sf(mean / (sd / n.sqrt()));
        caught += usize::from(p <= ALPHA && mean > THRESHOLD);
    }
    caught as f64 / suites as f64
}

fn binomial_bound(rate: f64, suites: usize) -> f64 {
    rate + 3.0 * (rate * (1.0 - rate) / suites as f64).sqrt()
}

#[test]
fn looking_after_every_round_raises_no_more_false_alarms_than_alpha() {
    let suites = 4000;
    let one = simulate(0x5eed, suites, &[0.0], 0.05);
    eprintln!(
        "A/A, one figure: changed {:.4}, within {:.4}, undecided {:.4}, {:.2} rounds",
        one.changed, one.within, one.undecided, one.mean_rounds
    );
    assert!(
        one.changed <= binomial_bound(ALPHA, suites),
        "{}",
        one.changed
    );
    let suites = 1000;
    let family = simulate(0xfa_1117, suites, &[0.0; 20], 0.05);
    eprintln!(
        "A/A, 20 figures: changed {:.4}, within {:.4}, undecided {:.4}, {:.2} rounds",
        family.changed, family.within, family.undecided, family.mean_rounds
    );
    assert!(
        family.changed <= binomial_bound(ALPHA, suites),
        "{}",
        family.changed
    );
}

#[test]
fn a_real_change_is_decided_in_fewer_rounds_than_the_fixed_design_of_equal_power() {
    let suites = 4000;
    let h1 = simulate(0xc4a_e9e, suites, &[0.10], 0.05);
    eprintln!(
        "+10 % under 5 % noise: changed {:.4}, within {:.4}, undecided {:.4}, {:.2} rounds",
        h1.changed, h1.within, h1.undecided, h1.mean_rounds
    );
    let fixed = (3..=60)
        .find(|&n| fixed_power(0xf1ced, suites, n, 0.10, 0.05) >= h1.changed)
        .unwrap();
    let ninety = (3..=60)
        .find(|&n| fixed_power(0xf1ced, suites, n, 0.10, 0.05) >= 0.9)
        .unwrap();
    eprintln!("the fixed design needs {fixed} rounds for the same power ({ninety} for 90 % power)");
    assert!(h1.changed >= 0.99, "power {}", h1.changed);
    // The target: at least 40 % fewer rounds on average.
    assert!(
        h1.mean_rounds <= 0.6 * fixed as f64,
        "{} rounds on average against {fixed}",
        h1.mean_rounds
    );
}

/// How often `latkit bisect` places a commit that is as good as the good end with the bad
/// one, when it judges after every round from 10 to 30 at `level(rounds)` (one-sided).
fn misplaced(seed: u64, level: impl Fn(usize) -> Option<f64>) -> f64 {
    use latkit::analyze::bisect::{Round, Scale, Side, judge};
    use latkit::model::Better;
    const COMMITS: usize = 2000;
    let scale = Scale {
        better: Better::Lower,
        threshold: 0.0,
    };
    let mut rng = Rng(seed);
    let mut wrong = 0;
    for _ in 0..COMMITS {
        let mut rounds = Vec::new();
        for n in 1..=30 {
            rounds.push(Round {
                good: (0.05 * rng.normal()).exp(),
                mid: (0.05 * rng.normal()).exp(),
                bad: 1.03 * (0.05 * rng.normal()).exp(),
            });
            let Some(alpha) = level(n).filter(|_| n >= 10) else {
                continue;
            };
            if let Some(side) = judge(&rounds, alpha, scale).side {
                wrong += usize::from(side == Side::Bad);
                break;
            }
        }
    }
    wrong as f64 / COMMITS as f64
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "a simulation of thousands of rounds; `--features interop` runs it"
)]
fn bisect_spends_alpha_over_its_looks() {
    let _cores = crate::common::busy();
    // A step's share of alpha over 12 commits (half of 0.05 over five planned steps): judging
    // at it after every round from 10 to 30 misplaces more than that; spending it as --runs
    // auto does holds the rate within it.
    let step = 0.05 / 2.0 / 5.0;
    let flat = misplaced(17, |_| Some(step));
    let spending = Sequential::new(Design {
        alpha: step,
        min_rounds: 10,
        max_rounds: 30,
    });
    let spent = misplaced(17, |rounds| spending.level_at(rounds));
    eprintln!("bisect placement, A-like commit misplaced: flat {flat:.4}, spent {spent:.4}");
    assert!(
        spent <= binomial_bound(step, 2000),
        "spent: {spent}, flat: {flat}"
    );
    assert!(flat > spent, "spent: {spent}, flat: {flat}");
}
