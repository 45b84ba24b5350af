//! `latkit calibrate`'s estimates against the generator's truth (seeded, no timing): A/A
//! rounds of log-normal noise go in; the smallest change it says the gate detects with 90 %
//! power must be within ±25 % of the change at which the gate's own test, simulated on the
//! same generator, detects 90 % of the time.

use crate::common::Rng;
use latkit::analyze::auto_gate::Round;
use latkit::analyze::noise_floor::{Floor, from_rounds};
use latkit::analyze::permutation;
use latkit::model::{BenchName, Run, RunBuilder};

/// One arm's run of a round: every benchmark once, 1000 ns/op with log-normal noise.
fn arm(rng: &mut Rng, benchmarks: usize, noise: f64) -> Run {
    let mut builder = RunBuilder::default();
    for i in 0..benchmarks {
        let bench = builder.benchmark(&format!("BenchmarkWork{i}"), None, BenchName::plain);
        builder.record(
            bench,
            "ns/op",
            "ns/op",
            1000.0 * (noise * rng.normal()).exp(),
        );
    }
    crate::common::go_file_run(builder)
}

/// What calibration says from `rounds` A/A rounds of `benchmarks` benchmarks.
fn calibrated(seed: u64, rounds: usize, benchmarks: usize, noise: f64) -> Vec<Floor> {
    let mut rng = Rng(seed);
    let rounds: Vec<Round> = (0..rounds)
        .map(|_| {
            (
                vec![arm(&mut rng, benchmarks, noise)],
                vec![arm(&mut rng, benchmarks, noise)],
            )
        })
        .collect();
    from_rounds(&rounds)
}

/// How often the gate's one-sided test (permutation of log values) at `alpha` finds a change
/// of `percent` with `runs` a side.
fn power(rng: &mut Rng, percent: f64, runs: usize, alpha: f64, noise: f64) -> f64 {
    const TRIALS: usize = 1000;
    let factor = 1.0 + percent / 100.0;
    let hits = (0..TRIALS)
        .filter(|_| {
            let base: Vec<f64> = (0..runs).map(|_| (noise * rng.normal()).exp()).collect();
            let new: Vec<f64> = (0..runs)
                .map(|_| factor * (noise * rng.normal()).exp())
                .collect();
            permutation::higher(&base, &new).unwrap() <= alpha
        })
        .count();
    hits as f64 / TRIALS as f64
}

/// The change the gate detects 90 % of the time, by bisection over simulated power.
fn true_detectable(seed: u64, runs: usize, alpha: f64, noise: f64) -> f64 {
    let (mut low, mut high) = (0.0, 100.0);
    for _ in 0..10 {
        let middle = (low + high) / 2.0;
        if power(&mut Rng(seed), middle, runs, alpha, noise) >= 0.9 {
            high = middle;
        } else {
            low = middle;
        }
    }
    high
}

fn assert_within_a_quarter(estimate: f64, truth: f64, what: &str) {
    let off = estimate / truth - 1.0;
    assert!(
        off.abs() <= 0.25,
        "{what}: estimated {estimate:.2} % against the truth {truth:.2} % ({:+.0} %)",
        off * 100.0
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "a simulation of thousands of rounds (minutes of CPU); `--features interop` runs it"
)]
fn the_detectable_change_of_a_twenty_benchmark_family_is_the_gates_own() {
    let _cores = crate::common::busy();
    // 20 benchmarks, 10 % noise, 10 runs a side: a --fail-on rule over the family tests its
    // smallest p at alpha / 20 (Holm's first step); tests/gate_family.rs finds 25 % caught
    // about 90 % of the time.
    let alpha = 0.05 / 20.0;
    let truth = true_detectable(7, 10, alpha, 0.10);
    let floors = calibrated(11, 30, 20, 0.10);
    assert_eq!(floors.len(), 20);
    for floor in &floors {
        let estimate = floor.detectable(10, alpha).unwrap();
        assert_within_a_quarter(estimate, truth, &floor.bench);
        eprintln!(
            "{}: estimated {estimate:.2} %, truth {truth:.2} %",
            floor.bench
        );
    }
    assert!((20.0..30.0).contains(&truth), "{truth}");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "a simulation of thousands of rounds (minutes of CPU); `--features interop` runs it"
)]
fn the_detectable_change_of_a_quiet_benchmark_with_more_runs() {
    let _cores = crate::common::busy();
    // 16 a side: the test counts every split of 32 exactly (beyond, it draws them, which
    // 10,000 simulated tests would take minutes to).
    let truth = true_detectable(3, 16, 0.05, 0.03);
    let floors = calibrated(5, 20, 4, 0.03);
    for floor in &floors {
        assert_within_a_quarter(floor.detectable(16, 0.05).unwrap(), truth, &floor.bench);
        // An A/A has no change: zero lies in its interval for most figures.
        let (low, high) = floor.aa_interval.unwrap();
        assert!(low < floor.aa_change && floor.aa_change < high);
    }
    // The runs needed for the true detectable change are about the runs it was found with.
    let needed = floors[0].runs_needed(truth, 0.05).unwrap();
    assert!((11..=22).contains(&needed), "{needed}");
}
