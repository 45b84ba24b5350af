//! `latkit calibrate` end to end: the release binary runs real commands and a real Go
//! benchmark against themselves, saves the noise floor, and the gates then say which
//! thresholds this machine cannot decide.

use crate::common::latkit;
use serde_json::Value;
use std::path::Path;

fn run(args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let out = latkit().args(args).current_dir(dir).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `latkit calibrate ARGS … --format json LAST` in `dir` (ARGS split at spaces), which must
/// succeed: its report.
fn calibration(args: &str, last: &str, dir: &Path) -> Value {
    let mut argv: Vec<&str> = vec!["calibrate"];
    argv.extend(args.split(' '));
    argv.extend(["--format", "json", last]);
    let (code, stdout, stderr) = run(&argv, dir);
    assert_eq!(code, Some(0), "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The calibration table's row of `bench` and `metric`, as JSON cells.
fn row<'a>(report: &'a Value, bench: &str, metric: &str) -> &'a Vec<Value> {
    report["tables"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cells"][0]["text"] == bench && r["cells"][1]["text"] == metric)
        .unwrap_or_else(|| panic!("no row {bench} {metric}: {report}"))["cells"]
        .as_array()
        .unwrap()
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real processes on the real clock; src/cli/in_process.rs holds its logic; `--features interop` runs it"
)]
fn exec_against_itself_saves_a_floor_that_gates_then_heed() {
    // Its runs spawn processes for seconds: never beside another test's measurement.
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    let report = calibration(
        "--rounds 5 --effect 2% --save floor.json -- exec --runs 10",
        "sleep 0.02",
        dir.path(),
    );
    let cells = row(&report, "sleep 0.02", "time");
    assert_eq!(cells[2]["count"], 5, "rounds: {cells:?}");
    let variation = cells[3]["percent"].as_f64().unwrap();
    assert!(variation > 0.0 && variation < 50.0, "{variation}");
    // The smallest detectable change with the 10 runs exec takes grows with the variation.
    let detectable = cells[5]["percent"].as_f64().unwrap();
    assert!(detectable > variation * 0.5, "{detectable} vs {variation}");
    assert!(cells[6]["count"].as_u64().unwrap() >= 2, "{cells:?}");
    let table = report["tables"][0]["columns"].to_string();
    assert!(table.contains("detectable %, 10 runs"), "{table}");

    let floor: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("floor.json")).unwrap()).unwrap();
    assert_eq!(floor["latkit_calibration"], 1);
    assert_eq!(floor["runs"], 10);
    assert_eq!(floor["figures"][0]["bench"], "sleep 0.02");

    // A gate finer than the floor is said to be undecidable, with the rounds it would need.
    let (code, _, stderr) = run(
        &[
            "exec",
            "--runs",
            "auto",
            "--max-runs",
            "4",
            "--fail-on",
            "time:+0.01%",
            "--calibration",
            "floor.json",
            "-q",
            "--format",
            "json",
            "--out",
            "r.json",
            "true",
            "sleep 0.02",
        ],
        dir.path(),
    );
    assert_eq!(code, Some(1), "20 ms against nothing fails: {stderr}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("sleep 0.02 time: a time:+0.01% gate cannot be decided here with 4 rounds"),
        "{notes}"
    );
    assert!(
        notes.contains("0.0 % needs about") || notes.contains("needs more than"),
        "{notes}"
    );
}

#[test]
fn calibrate_refuses_what_is_not_an_a_a_run() {
    let dir = tempfile::tempdir().unwrap();
    go_file(dir.path(), "a", 1000.0);
    go_file(dir.path(), "b", 1000.0);
    for (args, expected) in [
        (
            &[
                "calibrate",
                "--",
                "exec",
                "--runs",
                "auto",
                "--fail-on",
                "time:+5%",
                "true",
                "true",
            ][..],
            "--runs auto has no place",
        ),
        (&["calibrate", "--", "parse", "x.txt"][..], "not `parse`"),
        (
            &[
                "calibrate",
                "--save",
                "same.json",
                "--",
                "exec",
                "--out",
                "same.json",
                "true",
            ][..],
            "names the same file",
        ),
        (
            &["calibrate", "--rounds", "2", "--", "exec", "true"][..],
            "2",
        ),
        (
            &["compare", "a", "b", "--calibration", "floor.json"][..],
            "give a --fail-on rule",
        ),
    ] {
        let (code, _, stderr) = run(args, dir.path());
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Six repetitions a side in Go's format, around `ns` ns/op.
fn go_file(dir: &Path, name: &str, ns: f64) -> String {
    let lines: String = [0.0, 3.0, -2.0, 1.0, -1.0, 2.0]
        .iter()
        .map(|d| format!("BenchmarkWork-8\t100\t{:.1} ns/op\n", ns + d))
        .collect();
    std::fs::write(dir.join(name), format!("goos: linux\n{lines}PASS\n")).unwrap();
    name.to_string()
}

/// `latkit compare BASE NEW --fail-on ns/op:+1% --calibration FLOOR` in `dir`.
fn gated(base: &str, new: &str, floor: &str, dir: &Path) -> (Option<i32>, String, String) {
    let rule = ["--fail-on", "ns/op:+1%", "--calibration", floor];
    let mut argv = vec!["compare", base, new];
    argv.extend(rule);
    run(&argv, dir)
}

#[test]
fn compare_says_when_a_threshold_is_below_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let base = go_file(dir.path(), "base.txt", 1000.0);
    let new = go_file(dir.path(), "new.txt", 1004.0);
    // A floor of 10 % run to run: with 6 runs a side no +1 % change can be told.
    std::fs::write(
        dir.path().join("floor.json"),
        r#"{"latkit_calibration": 1, "command": ["go"], "runs": 6, "figures": [
            {"bench": "BenchmarkWork-8", "shown": "BenchmarkWork", "metric": "ns/op",
             "unit": "ns", "rounds": 10, "spread": 0.1, "paired_spread": 0.14,
             "aa_change": 0.0}]}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = gated(&base, &new, "floor.json", dir.path());
    assert_eq!(code, Some(0), "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains(
            "BenchmarkWork ns/op: a ns/op:+1% gate cannot be decided here with 6 runs a side"
        ),
        "{said}"
    );
    assert!(said.contains("1.0 % needs about"), "{said}");

    // A calibration that is not one is bad input, named.
    std::fs::write(
        dir.path().join("bad.json"),
        "{\"latkit_calibration\": 1,\n \"figures\": [",
    )
    .unwrap();
    let (code, _, stderr) = gated(&base, &new, "bad.json", dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.json:2: not a latkit calibration"),
        "{stderr}"
    );
}

/// A Go benchmark that sleeps `ms` milliseconds per iteration.
const GO_NAP: &str = "package nap\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n\
    func BenchmarkNap(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\t\
    time.Sleep(5 * time.Millisecond)\n\t}\n}\n";

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go; `--features interop` runs it"
)]
fn go_against_itself_states_the_floor_for_its_count() {
    // It builds and runs go, but asserts nothing a busy machine could change: waiting for the
    // cores alone would idle one for as long as a guest kernel boots beside it.
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("go.mod"),
        "module example.com/nap\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("nap_test.go"), GO_NAP).unwrap();
    let report = calibration(
        "--rounds 3 -- go --benchtime 3x --count 8 -q",
        "./...",
        dir.path(),
    );
    let cells = row(&report, "BenchmarkNap", "ns/op");
    assert_eq!(cells[2]["count"], 3);
    assert!(cells[5]["percent"].as_f64().unwrap() > 0.0, "{cells:?}");
    assert!(
        report["tables"][0]["columns"]
            .to_string()
            .contains("detectable %, 8 runs")
    );
}
