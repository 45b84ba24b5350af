//! Counted figures under the gate, on scripted counts from a fixed seed: counts that vary are
//! tested as samples (an A/A fails no more often than alpha says, a real change is caught),
//! counts that agree are decided by size, and one count a side is neither.

use super::*;
use crate::analyze::changes::generated::uniform;
use crate::analyze::gate::Status;
use crate::model::{Assume, BenchName, Environment, RunBuilder, Source, new_run};
use crate::spec::targets::RegressionRule;

/// One benchmark `B` with these counted `instructions/op`.
fn counted(label: &str, values: &[f64]) -> CompareInput {
    let mut builder = RunBuilder::default();
    let bench = builder.benchmark("B", None, BenchName::plain);
    for v in values {
        builder.record(bench, "instructions/op", "instructions/op", *v);
    }
    builder.set_assume("instructions/op", Assume::Counted);
    let source = Source::unnamed_file("go");
    CompareInput {
        label: label.into(),
        runs: vec![new_run(source, Environment::default(), Vec::new(), builder)],
    }
}

/// The gate's status of `after` against `before` under `rule` at `alpha`.
fn gated(before: &[f64], after: &[f64], rule: &str, alpha: f64) -> Status {
    let options = CompareOptions {
        alpha,
        rules: vec![RegressionRule::parse(rule).unwrap()],
        ..CompareOptions::default()
    };
    let inputs = vec![counted("a", before), counted("b", after)];
    let report = compare(inputs, &options).unwrap();
    report.verdict.unwrap().targets[0].status
}

/// `n` counts of 100,000 instructions, each within ±1 % (uniform), times `factor`.
fn varying(draw: &mut impl FnMut() -> f64, n: usize, factor: f64) -> Vec<f64> {
    (0..n)
        .map(|_| (100_000.0 * factor * (0.99 + 0.02 * draw())).round())
        .collect()
}

/// Trials of each case: enough that alpha can be checked with a binomial margin (at alpha
/// 0.01 over 1,000, 10 false alarms are expected and more than 10 + 3·√10 would say the test
/// is not exact).
const TRIALS: usize = 1000;

#[test]
fn varying_counts_fail_an_aa_gate_no_more_often_than_alpha_and_catch_a_real_change() {
    let mut draw = uniform(74);
    let runs = crate::runner::counts::SPREAD_RUNS as usize;
    let rule = "instructions/op:+0.5%";
    let fails = |a: &[f64], b: &[f64]| usize::from(gated(a, b, rule, 0.01) == Status::Fail);
    let (mut same, mut at_threshold, mut caught) = (0, 0, 0);
    for _ in 0..TRIALS {
        let a = varying(&mut draw, runs, 1.0);
        same += fails(&a, &varying(&mut draw, runs, 1.0));
        // The worst case the rule allows: exactly 0.5 % worse.
        at_threshold += fails(&a, &varying(&mut draw, runs, 1.005));
        caught += fails(&a, &varying(&mut draw, runs, 1.05));
    }
    // Identical code: at most 2 of 200, as the issue asks (here none of 1,000).
    assert!(
        same <= 2 * TRIALS / 200,
        "{same} of {TRIALS} A/A gates failed"
    );
    let allowed = (TRIALS as f64 * 0.01 + 3.0 * (TRIALS as f64 * 0.01).sqrt()) as usize;
    assert!(
        at_threshold <= allowed,
        "{at_threshold} of {TRIALS} gates at the threshold failed (at most {allowed})"
    );
    assert_eq!(caught, TRIALS, "a 5 % change was caught {caught} times");
}

#[test]
fn counts_that_agree_are_decided_by_size_and_one_count_a_side_is_undecided() {
    let same = [100_000.0; 3];
    let more = [101_000.0; 3];
    assert_eq!(
        gated(&same, &more, "instructions/op:+0.5%", 0.05),
        Status::Fail
    );
    assert_eq!(
        gated(&same, &[100_040.0; 3], "instructions/op:+0.5%", 0.05),
        Status::Pass
    );
    // VIIPER's BenchmarkGenKey, one count a side: +15.10 % is no verdict either way.
    assert_eq!(
        gated(&[921.9], &[1061.1], "instructions/op:+0.5%", 0.05),
        Status::Undecided
    );
    assert_eq!(
        gated(&[921.9], &[921.9], "instructions/op:+0.5%", 0.05),
        Status::Pass
    );
}

#[test]
fn an_outlying_count_is_not_blamed_on_the_machine() {
    let options = CompareOptions::default();
    let base = [
        100_000.0, 100_010.0, 99_990.0, 100_005.0, 99_995.0, 103_000.0,
    ];
    let inputs = vec![counted("a", &base), counted("b", &base)];
    let report = compare(inputs, &options).unwrap();
    let notes: Vec<&str> = report.notes.iter().map(|n| n.message.as_str()).collect();
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("the machine was not quiet")),
        "{notes:?}"
    );
}

#[test]
fn counts_that_vary_say_they_were_tested_against_the_threshold() {
    let options = CompareOptions {
        rules: vec![RegressionRule::parse("instructions/op:+0.5%").unwrap()],
        ..CompareOptions::default()
    };
    let before = [
        100_000.0, 100_900.0, 99_200.0, 100_300.0, 99_700.0, 100_500.0,
    ];
    let after: Vec<f64> = before.iter().map(|v| v * 1.1).collect();
    let inputs = vec![counted("a", &before), counted("b", &after)];
    let target = &compare(inputs, &options).unwrap().verdict.unwrap().targets[0];
    assert_eq!(target.status, Status::Fail);
    assert!(
        target
            .shown
            .contains("one-sided permutation against +0.5% p="),
        "{}",
        target.shown
    );
}
