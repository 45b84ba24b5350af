//! `latkit go --interleave REV` in a scripted repository: the base revision's checkout and the
//! working tree take turns, each `go test` run played from a script.

use super::{cell, latkit};
use crate::commands::scripted::{Printed, World};
use crate::error::Error;
use serde_json::Value;

/// `go test` prints one `BenchmarkWork` repetition: 1,000 ns/op in the checkout of `main`,
/// `ratio` times that in the working tree, within ±2 % that differs run to run.
fn go_test(ratio: f64) -> impl Fn(&str, usize) -> Printed {
    move |line, nth| {
        let base = line.ends_with(" in .@main");
        let jitter = ((nth * 7919 + usize::from(base) * 104_729) % 1000) as f64 / 1000.0 - 0.5;
        let ns = 1000.0 * if base { 1.0 } else { ratio } * (1.0 + 0.04 * jitter);
        let printed = format!("goos: linux\nBenchmarkWork-2 \t 1000\t {ns:.1} ns/op\nPASS\n");
        (printed, 0)
    }
}

/// `latkit go --interleave main OPTIONS --format json -q` with the working tree `ratio` times
/// the base, the report, and which side ran each `go test`, in order.
fn interleaved(
    ratio: f64,
    options: &[&str],
) -> (crate::error::Result<()>, Value, Vec<&'static str>) {
    interleaved_in(World::new(super::machine), ratio, options)
}

/// As [`interleaved`], in `world`.
fn interleaved_in(
    world: World,
    ratio: f64,
    options: &[&str],
) -> (crate::error::Result<()>, Value, Vec<&'static str>) {
    let world = world.harnesses(go_test(ratio));
    let mut args = vec!["go", "--interleave", "main"];
    args.extend(options);
    args.extend(["--format", "json", "-q"]);
    let ended = latkit(&world, &args);
    let report = serde_json::from_str(&world.stdout()).unwrap_or(Value::Null);
    let sides = world
        .spawned()
        .into_iter()
        .map(|line| match line.ends_with(" in .@main") {
            true => "base",
            false => "working",
        });
    (ended, report, sides.collect())
}

/// The report's notes.
fn notes(report: &Value) -> Vec<&str> {
    let notes = report["notes"].as_array().into_iter().flatten();
    notes.map(|n| n["message"].as_str().unwrap()).collect()
}

#[test]
fn the_base_and_the_working_tree_take_turns_and_are_compared() {
    let (ended, report, sides) = interleaved(1.3, &[]);
    ended.unwrap();
    // Six rounds, A B then B A: going first falls on both alike.
    let round = ["base", "working", "working", "base"];
    assert_eq!(sides, [round, round, round].concat()[..12]);
    let change = cell(&report, "BenchmarkWork", "change_1");
    let percent = change["percent"].as_f64().unwrap();
    assert!((29.0..33.0).contains(&percent), "{change}");
    assert_eq!(change["verdict"], "significant", "{change}");
    assert_eq!(
        notes(&report)[0],
        "interleaved A/B: main (main0000000000000000) and the working tree ran alternately, 6 rounds"
    );
    // Each side's runs, pooled, are stamped by the world's clock and host.
    let run = &report["runs"][0];
    assert_eq!(run["started"], "2027-01-15T08:00:00Z");
    assert_eq!(run["environment"]["hostname"], "scripted");
    // go's own vocabulary sets the rounds too.
    let (_, _, sides) = interleaved(1.3, &["--count", "4"]);
    assert_eq!(sides.len(), 8);
}

#[test]
fn runs_auto_stops_when_the_gate_is_decided_either_way() {
    let gate = ["--runs", "auto", "--fail-on", "ns/op:+5%"];
    let (ended, report, slower) = interleaved(1.3, &gate);
    assert!(matches!(ended, Err(Error::Failed(_))), "{ended:?}");
    assert_eq!(
        report["verdict"]["targets"][0]["status"], "fail",
        "{report}"
    );
    // The table's row and the verdict on it are one statistic of the same rounds.
    let row = cell(&report, "BenchmarkWork", "change_1");
    let shown = format!("{:+.2}%", row["percent"].as_f64().unwrap());
    assert_eq!(row["verdict"], "significant", "{row}");
    assert_eq!(row["n"].as_u64(), Some(slower.len() as u64 / 2), "{row}");
    let world = World::new(super::machine).harnesses(go_test(1.3));
    let mut args = vec!["go", "--interleave", "main", "-q", "--format", "markdown"];
    args.extend(gate);
    assert!(latkit(&world, &args).is_err());
    let (printed, said) = (world.stdout(), world.stderr());
    assert!(printed.contains(&format!("| {shown} (p=")), "{printed}");
    assert!(said.contains(&format!("{shown}, worse")), "{said}");
    // No note of the U test's about rows it did not decide.
    assert!(!printed.contains("to detect a difference"), "{printed}");
    let (ended, report, same) = interleaved(1.0, &gate);
    ended.unwrap();
    let row = cell(&report, "BenchmarkWork", "change_1");
    assert_eq!(row["verdict"], "noise", "{row}");
    assert_eq!(
        report["verdict"]["targets"][0]["status"], "pass",
        "{report}"
    );
    // A 30 % slowdown is decided in fewer rounds than the 30 at most; no change takes longer.
    assert!(
        slower.len() < same.len() && same.len() <= 60,
        "{} {}",
        slower.len(),
        same.len()
    );
    assert_eq!(slower.len() % 2, 0, "whole rounds");
}

#[test]
fn ctrl_c_compares_the_rounds_that_finished_and_exits_130() {
    // Ctrl-C during the fifth go test: the third round's first, which is discarded.
    let world = World::new(super::machine).interrupt_at(5);
    let (ended, report, sides) = interleaved_in(world, 1.3, &[]);
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    assert_eq!(sides.len(), 5);
    assert_eq!(
        notes(&report)[0],
        "interleaved A/B: main (main0000000000000000) and the working tree ran alternately, \
         interrupted: the rounds that finished are compared"
    );
    assert_eq!(
        cell(&report, "BenchmarkWork", "change_1")["n"],
        2,
        "two whole rounds"
    );
}
