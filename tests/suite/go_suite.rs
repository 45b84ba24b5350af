//! `latkit go` against a real Go suite (tests/fixtures/inputpipe), run by the real toolchain.

use crate::common::{fixture, json_of, latkit, parse_json};
use predicates::prelude::*;
use serde_json::Value;
use std::fs;
use std::sync::{Mutex, MutexGuard};

/// Go benchmarks share the machine's two cores: running two at once makes their numbers
/// meaningless, so the tests that run one take turns.
fn one_go_at_a_time() -> MutexGuard<'static, ()> {
    static GO: Mutex<()> = Mutex::new(());
    GO.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn median(values: &Value) -> f64 {
    let mut v: Vec<f64> = values
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go; `--features interop` runs it"
)]
fn runs_the_input_pipeline_suite_end_to_end() {
    let _turn = one_go_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.txt");
    let doc = json_of(
        latkit()
            .arg("go")
            .arg("--dir")
            .arg(fixture("inputpipe"))
            .args([
                "--count",
                "3",
                "--benchtime",
                "200x",
                "--format",
                "json",
                "-q",
            ])
            .arg("--raw")
            .arg(&raw),
    );
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["kind"], "command");
    let command: Vec<&str> = run["source"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        command.join(" "),
        "go test -run ^$ -bench . -benchmem -count 3 -benchtime 200x -p 1 ./..."
    );
    assert_eq!(run["environment"]["captured"], true);
    assert_eq!(run["environment"]["toolchains"][0]["key"], "go");
    assert!(run["started"].is_string() && run["ended"].is_string());

    let benches = run["benchmarks"].as_array().unwrap();
    assert_eq!(benches.len(), 4, "four sub-benchmarks");
    let mut medians = Vec::new();
    for bench in benches {
        let ns = &bench["metrics"][0];
        assert_eq!(ns["name"], "ns/op");
        assert_eq!(
            ns["values"].as_array().unwrap().len(),
            3,
            "three repetitions kept"
        );
        assert_eq!(bench["iterations"], serde_json::json!([200, 200, 200]));
        assert_eq!(
            ns["summary"]["median"].as_f64().unwrap(),
            median(&ns["values"])
        );
        medians.push(median(&ns["values"]));
    }

    let table = &doc["tables"][0];
    let keys: Vec<&str> = table["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    let share = |row: usize, key: &str| {
        let i = keys.iter().position(|k| *k == key).unwrap();
        table["rows"][row]["cells"][i]["percent"].as_f64().unwrap()
    };
    // On this noisy 2-core VM a composite's median can fall below its parts measured alone
    // (three 200-iteration repetitions); then the share leaves 0–100 and latkit must say so.
    let warned = doc["notes"].as_array().unwrap().iter().any(|n| {
        n["message"]
            .as_str()
            .unwrap()
            .contains("exceeds this composite")
    });
    for row in 0..4 {
        let (part, rest) = (share(row, "share_part"), share(row, "share_rest"));
        assert!(
            warned || ((0.0..=100.0).contains(&part) && (0.0..=100.0).contains(&rest)),
            "row {row}: {part} {rest} without a warning"
        );
        assert!((part + rest - 100.0).abs() < 1e-9);
    }
    let client = medians[0];
    assert_eq!(share(0, "share_part"), 100.0);
    assert_eq!(share(1, "share_rest"), 100.0);
    assert!((share(2, "share_part") - client / medians[2] * 100.0).abs() < 1e-9);
    assert!((share(3, "share_part") - 2.0 * client / medians[3] * 100.0).abs() < 1e-9);
    assert!((share(2, "pct_of_baseline") - 100.0).abs() < 1e-9);

    // The raw output was kept and reads back to the same numbers.
    let text = fs::read_to_string(&raw).unwrap();
    assert_eq!(text.matches("Benchmark_Gamepad_Delay/").count(), 12);
    let again = parse_json(&raw);
    assert_eq!(
        again["runs"][0]["benchmarks"][3]["metrics"][0]["values"],
        benches[3]["metrics"][0]["values"]
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go; `--features interop` runs it"
)]
fn failing_go_test_exits_6_with_the_tail_of_its_output() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("go.mod"),
        "module example.com/broken\n\ngo 1.19\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("broken_test.go"),
        "package broken\n\nimport \"testing\"\n\nfunc BenchmarkX(b *testing.B) { undefinedThing() }\n",
    )
    .unwrap();
    latkit()
        .arg("go")
        .arg("--dir")
        .arg(dir.path())
        .arg("-q")
        .assert()
        .code(6)
        .stderr(predicate::str::contains("go test failed"))
        .stderr(predicate::str::contains("undefinedThing"));
}

#[test]
fn missing_go_is_the_environment_exit_5() {
    latkit()
        .arg("go")
        .env("PATH", "/nonexistent")
        .assert()
        .code(5)
        .stderr(predicate::str::contains("`go` was not found"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go; `--features interop` runs it"
)]
fn interrupt_reports_what_finished_and_exits_130() {
    let _turn = one_go_at_a_time();
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.txt");
    let out = dir.path().join("report.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .arg("go")
        .arg("--dir")
        .arg(fixture("inputpipe"))
        .args(["--count", "1000", "--benchtime", "300x", "--format", "json"])
        .arg("--raw")
        .arg(&raw)
        .arg("--out")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until go has printed a result, then interrupt latkit only. The raw
    // output grows in a partial file beside raw.txt until latkit renames it into place.
    let deadline = Instant::now() + Duration::from_secs(120);
    let printed = || {
        fs::read_dir(dir.path()).unwrap().any(|e| {
            fs::read_to_string(e.unwrap().path())
                .unwrap_or_default()
                .contains("ns/op")
        })
    };
    while !printed() {
        assert!(Instant::now() < deadline, "go printed no result");
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = crate::common::interrupt_expecting_130(child);
    // go's reaction to the signal is no malformed result and no failure of the suite.
    assert!(
        !stderr.contains("malformed") && !stderr.contains("FAIL") && !stderr.contains("signal"),
        "{stderr}"
    );
    assert!(fs::read_to_string(&raw).unwrap().contains("ns/op"));
    let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
    assert!(!benches.is_empty());
    let values = benches[0]["metrics"][0]["values"].as_array().unwrap();
    assert!(
        !values.is_empty() && values.len() < 1000,
        "stopped early: {}",
        values.len()
    );
}

#[test]
fn a_missing_directory_is_named_not_taken_for_a_missing_go() {
    let out = latkit()
        .args(["go", ".", "--dir", "/nonexistent/latkit-dir"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--dir /nonexistent/latkit-dir: no such directory"),
        "{stderr}"
    );
}

/// What a `go test -bench` user expects: by default go's own time per sample (a 1000-iteration
/// sample of a fast benchmark mis-measures it) and benchstat's six repetitions; a sample too
/// short to trust is said to be; every unit go reports, custom ones too, is shown.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go; `--features interop` runs it"
)]
fn go_test_users_get_go_test_figures_and_every_unit() {
    let _turn = one_go_at_a_time();
    // latkit's figure and go test's are compared: both cores, nothing beside them (beside the
    // simulations an 11 ns/op loop once read 18.8 against 11.3).
    let _cores = crate::common::measuring();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("go.mod"),
        "module example.com/tiny\n\ngo 1.19\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("tiny_test.go"),
        r#"package tiny

import "testing"

var sink uint64

func BenchmarkMix(b *testing.B) {
	x := uint64(1)
	b.SetBytes(8)
	for i := 0; i < b.N; i++ {
		for j := 0; j < 8; j++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink += x
	}
	b.ReportMetric(8, "rounds/op")
}
"#,
    )
    .unwrap();
    let go_json = |args: &[&str]| {
        json_of(
            latkit()
                .args(["go", ".", "--dir"])
                .arg(dir.path())
                .args(args)
                .args(["--format", "json", "-q"]),
        )
    };
    let ours = go_json(&["--count", "2"]);
    let command = ours["runs"][0]["source"]["command"].to_string();
    assert!(
        !command.contains("benchtime"),
        "go's own -benchtime: {command}"
    );
    let notes = ours["notes"].to_string();
    assert!(!notes.contains("too short"), "{notes}");
    let bench = &ours["runs"][0]["benchmarks"][0];
    let ours_ns = median(&crate::common::metric(bench, "ns/op")["values"]);

    // go test's own figure, its defaults, the same machine.
    let out = std::process::Command::new("go")
        .args(["test", "-run", "^$", "-bench", ".", "-count", "2"])
        .current_dir(dir.path())
        .output()
        .expect("go runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let theirs: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("BenchmarkMix"))
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let at = fields.iter().position(|f| *f == "ns/op").unwrap();
            fields[at - 1].parse().unwrap()
        })
        .collect();
    let theirs_ns = theirs.iter().sum::<f64>() / theirs.len() as f64;
    assert!(
        (0.6..1.6).contains(&(ours_ns / theirs_ns)),
        "latkit {ours_ns} ns/op, go test {theirs_ns} ns/op"
    );

    // Every unit go reported has its table, as benchstat shows them.
    let table = crate::common::stdout_of(
        latkit()
            .args(["go", ".", "--count", "1", "--benchtime", "1000x", "--dir"])
            .arg(dir.path()),
    );
    for unit in ["ns/op", "MB/s", "B/op", "allocs/op", "rounds/op"] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with('│') && l.contains(&format!(" {unit} "))),
            "{unit} missing: {table}"
        );
    }
    // The seed's fixed iterations stay available, and say they cannot be trusted here.
    let fixed = go_json(&["--count", "1", "--benchtime", "1000x"]);
    let notes = fixed["notes"].to_string();
    assert!(
        notes.contains("BenchmarkMix")
            && notes.contains("a sample lasted only")
            && notes.contains("too short to trust"),
        "{notes}"
    );
}
