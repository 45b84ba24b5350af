//! The criterion reader on what the real tools write: `cargo bench` on a fixture crate using
//! criterion 0.8 (its `target/criterion` directory) and `cargo criterion
//! --message-format=json` (cargo-criterion, installed by `.ci/setup`), checked sample by sample
//! against the files and messages themselves and against criterion's own estimates.

use crate::common::{bench, latkit, parse_json, parse_refuses, stdout_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

const IDS: [&str; 4] = ["sum 1000", "copy/clone/64", "copy/clone/4096", "count/ones"];

/// The fixture's target directory, held by one test at a time: kept between local runs
/// (criterion compiles once), emptied of criterion results so the files read are this run's.
fn target_dir() -> (MutexGuard<'static, ()>, PathBuf) {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("criterion-fixture");
    let _ = std::fs::remove_dir_all(dir.join("criterion"));
    (turn, dir)
}

fn cargo_in_fixture(target: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .arg("--manifest-path")
        .arg(crate::common::fixture("criterion-bench/Cargo.toml"))
        .arg("--locked")
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap_or_else(|e| panic!("cargo {args:?}: {e}"));
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array, not {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn values(bench: &Value, metric: &str) -> Vec<f64> {
    numbers(&crate::common::metric(bench, metric)["values"])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Each sample's time per iteration, as criterion computes it for its statistics.
fn per_iteration(iters: &[f64], times: &[f64]) -> Vec<f64> {
    iters.iter().zip(times).map(|(n, t)| t / n).collect()
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "builds a criterion bench with cargo; `--features interop` runs it"
)]
fn cargo_bench_directory_reads_sample_for_sample() {
    let _cores = crate::common::busy();
    let (_turn, target) = target_dir();
    cargo_in_fixture(&target, &["bench", "--quiet"]);
    let criterion = target.join("criterion");
    let doc = parse_json(&criterion);
    assert_eq!(doc["runs"][0]["source"]["format"], "criterion");
    for id in IDS {
        let ours = bench(&doc, id);
        let dir = criterion.join(id).join("new");
        let sample = json_file(&dir.join("sample.json"));
        let expected = per_iteration(&numbers(&sample["iters"]), &numbers(&sample["times"]));
        let time = values(ours, "time");
        assert_eq!(time.len(), 10, "{id}: sample_size(10)");
        assert!(
            time.iter().zip(&expected).all(|(a, b)| close(*a, *b)),
            "{id}: {time:?} vs {expected:?}"
        );
        // criterion's own mean estimate is the mean of these same per-iteration times.
        let estimates = json_file(&dir.join("estimates.json"));
        let criterion_mean = estimates["mean"]["point_estimate"].as_f64().unwrap();
        assert!(
            (mean(&time) - criterion_mean).abs() <= 1e-6 * criterion_mean,
            "{id}: latkit mean {} vs criterion {criterion_mean}",
            mean(&time)
        );
        let iterations = numbers(&ours["iterations"]);
        assert_eq!(iterations, numbers(&sample["iters"]), "{id}");
    }
    // Throughput declared per group becomes a rate per sample.
    let copy = bench(&doc, "copy/clone/64");
    let rates = values(copy, "throughput");
    let times = values(copy, "time");
    assert!(close(rates[0], 64.0 / (times[0] * 1e-9)));
    assert_eq!(
        crate::common::metric(copy, "throughput")["unit"]["dimension"],
        "byte_rate"
    );
    let ones = bench(&doc, "count/ones");
    assert!(close(
        values(ones, "throughput")[0],
        256.0 / (values(ones, "time")[0] * 1e-9)
    ));
    assert!(
        values(bench(&doc, "sum 1000"), "time")
            .iter()
            .all(|t| *t > 0.0)
    );
    assert!(doc["notes"].to_string().contains("time per iteration"));

    // The cargo target directory reads the same; so does one baseline directory.
    assert_eq!(
        parse_json(&target)["runs"][0]["benchmarks"],
        doc["runs"][0]["benchmarks"]
    );
    let base = parse_json(&criterion.join("copy/clone/64/base"));
    assert_eq!(base["runs"][0]["benchmarks"].as_array().unwrap().len(), 1);
    // Tables, the gate and the services' formats take it like any other input.
    let table = stdout_of(latkit().arg("parse").arg(&criterion));
    assert!(
        table.contains("clone/4096") && table.contains("ns/iter"),
        "{table}"
    );
    let bmf: Value =
        serde_json::from_str(&crate::common::parse_as(&criterion, "bmf")).expect("BMF is JSON");
    assert!(bmf["copy/clone/64"]["latency"]["value"].as_f64().unwrap() > 0.0);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs cargo-criterion; `--features interop` runs it"
)]
fn cargo_criterion_messages_read_sample_for_sample() {
    let _cores = crate::common::busy();
    let (_turn, target) = target_dir();
    // No plots: cargo-criterion's density estimates for them took 40 s of the test's 46 (the
    // messages carry the same figures either way).
    let out = cargo_in_fixture(
        &target,
        &[
            "criterion",
            "--message-format=json",
            "--plotting-backend",
            "disabled",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("criterion.jsonl");
    std::fs::write(&file, &out.stdout).unwrap();
    let messages: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|m: &Value| m["reason"] == "benchmark-complete")
        .collect();
    assert_eq!(messages.len(), IDS.len(), "one message per benchmark");
    let doc = parse_json(&file);
    assert_eq!(doc["runs"][0]["source"]["format"], "criterion");
    for m in &messages {
        let id = m["id"].as_str().unwrap();
        assert_eq!(m["unit"], "ns");
        let ours = bench(&doc, id);
        let expected = per_iteration(
            &numbers(&m["iteration_count"]),
            &numbers(&m["measured_values"]),
        );
        let time = values(ours, "time");
        assert!(
            time.iter().zip(&expected).all(|(a, b)| close(*a, *b)) && time.len() == expected.len(),
            "{id}: {time:?} vs {expected:?}"
        );
        let criterion_mean = m["mean"]["estimate"].as_f64().unwrap();
        assert!(
            (mean(&time) - criterion_mean).abs() <= 1e-6 * criterion_mean,
            "{id}: latkit mean {} vs criterion {criterion_mean}",
            mean(&time)
        );
    }
    // Progress text mixed in with `2>&1` is passed over; the results are the same.
    let mixed = dir.path().join("mixed.txt");
    let mut text = out.stderr.clone();
    text.extend_from_slice(&out.stdout);
    std::fs::write(&mixed, text).unwrap();
    let again = parse_json(&mixed);
    assert_eq!(again["runs"][0]["benchmarks"], doc["runs"][0]["benchmarks"]);
    // Two criterion runs compare like any others (benchmarks paired by id).
    let compared = stdout_of(latkit().arg("compare").arg(&file).arg(&mixed));
    assert!(compared.contains("clone/64"), "{compared}");
    assert!(
        compared.contains("~"),
        "identical samples cannot differ: {compared}"
    );
}

#[test]
fn bad_criterion_files_and_lines_exit_2_or_warn_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let bench_dir = dir.path().join("criterion/f/new");
    std::fs::create_dir_all(&bench_dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(bench_dir.join(name), text).unwrap();
    write(
        "benchmark.json",
        r#"{"group_id":"f","full_id":"f","throughput":null}"#,
    );
    write(
        "sample.json",
        "{\"sampling_mode\":\"Linear\",\n\"iters\":[1.0,2.0],\n\"times\":[5.0]}",
    );
    let refused = |expected: &str| {
        latkit()
            .arg("parse")
            .arg(dir.path())
            .assert()
            .code(2)
            .stderr(predicates::str::contains(expected));
    };
    refused("sample.json: `f`: 2 iteration counts for 1 sample times");
    write("sample.json", "{\"iters\":[1.0],\n\"times\":[-5.0]}");
    refused("negative");
    write("sample.json", "{\"iters\":[1.0],\n\"times\":[5.0,\n");
    refused("sample.json:3: expected criterion sample.json");
    write("benchmark.json", "{\"group_id\":\"f\"}");
    refused("benchmark.json:1: expected criterion benchmark.json");
    // A benchmark without samples is skipped with a warning; none at all is an error.
    write("benchmark.json", r#"{"full_id":"f"}"#);
    std::fs::remove_file(bench_dir.join("sample.json")).unwrap();
    refused("criterion benchmarks without samples");
    let other = dir.path().join("criterion/g/new");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("benchmark.json"), r#"{"full_id":"g"}"#).unwrap();
    std::fs::write(
        other.join("sample.json"),
        r#"{"iters":[2.0],"times":[10.0]}"#,
    )
    .unwrap();
    latkit()
        .arg("parse")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicates::str::contains("no sample.json"));
    // A directory nothing recognises names itself and lists what latkit reads.
    let empty = tempfile::tempdir().unwrap();
    latkit()
        .arg("parse")
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "a directory that no format latkit reads recognises",
        ));
    // A directory given to a format read from files says so.
    latkit()
        .arg("parse")
        .arg(dir.path())
        .args(["--input-format", "go"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("go is read from a file"));

    // Message lines: a broken one is skipped with its line, results without samples refused.
    let ok = r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1,2],"measured_values":[10.0,30.0],"unit":"ns","throughput":[],"change":null}"#;
    parse_refuses(
        "only-broken.jsonl",
        "{\"reason\":\"benchmark-complete\",\"id\":\"a\"}\n",
        "no criterion results found",
    );
    let file = dir.path().join("messages.jsonl");
    std::fs::write(
        &file,
        format!("{ok}\n{{\"reason\":\"benchmark-complete\",\"id\":\n"),
    )
    .unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "messages.jsonl:2: not a criterion message",
        ));
    let doc = parse_json(&file);
    assert_eq!(values(bench(&doc, "a"), "time"), [10.0, 15.0]);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs root (reads as uid 65534); `--features interop` runs it"
)]
fn an_unreadable_benchmark_directory_is_named_and_the_rest_read() {
    use std::os::unix::fs::PermissionsExt;
    let nobody = crate::common::Nobody::new();
    let dir = &nobody.dir;
    let set_mode = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    for group in ["readable", "locked"] {
        let new = dir.path().join("criterion").join(group).join("f/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            format!(r#"{{"full_id":"{group}/f"}}"#),
        )
        .unwrap();
        std::fs::write(new.join("sample.json"), r#"{"iters":[2.0],"times":[10.0]}"#).unwrap();
    }
    set_mode(&dir.path().join("criterion/locked"), 0o000);
    // Run as an unprivileged user (root reads any directory).
    let out = nobody
        .latkit()
        .args(["parse", "criterion", "--format", "json"])
        .output()
        .expect("setpriv (util-linux) is installed");
    set_mode(&dir.path().join("criterion/locked"), 0o755);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("criterion/locked: Permission denied") && stderr.contains("not read"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
    assert_eq!(benches.len(), 1);
    assert_eq!(benches[0]["full_name"], "readable/f");
}
