//! google/benchmark: the readers on the vector and on a real binary built here from
//! libbenchmark-dev, and `latkit gbench` running it end to end.

use crate::common::{bench, first_value, fixture, json_of, latkit, metric, replay_bench, vector};
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `latkit gbench` on the fixture, briefly: two repetitions, JSON, quiet.
fn quick_run() -> assert_cmd::Command {
    let mut cmd = latkit();
    cmd.arg("gbench").arg(replay_bench()).args([
        "--min-time",
        "0.01",
        "--repetitions",
        "2",
        "--format",
        "json",
        "-q",
    ]);
    cmd
}

fn notes(doc: &Value) -> String {
    doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["message"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn config<'a>(doc: &'a Value, key: &str) -> &'a str {
    doc["runs"][0]["config"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == key)
        .and_then(|c| c["value"].as_str())
        .unwrap_or_else(|| panic!("no config {key}"))
}

#[test]
fn the_vector_reads_exactly() {
    let doc = json_of(
        latkit()
            .arg("parse")
            .arg(vector("gbench-1.7.1.json"))
            .args(["--format", "json"]),
    );
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "gbench-json");
    assert_eq!(run["environment"]["hostname"], "vm");
    assert_eq!(run["environment"]["cores"], 2);
    assert_eq!(run["started"], "2026-11-21T05:16:34+00:00");
    assert_eq!(config(&doc, "mhz_per_cpu"), "2596");
    assert_eq!(
        config(&doc, "caches"),
        "L1 Data 48 KiB, L1 Instruction 32 KiB, L2 Unified 1 MiB, L3 Unified 32 MiB (shared by 2)"
    );
    assert_eq!(config(&doc, "load_avg"), "0.45 0.21 0.08");
    let clock = bench(&doc, "BM_Clock");
    assert_eq!(clock["iterations"], serde_json::json!([29436137]));
    // Exactly the digits in the file (parsed as Rust parses them).
    assert_eq!(
        first_value(clock, "real_time"),
        "2.3974485442841210e+01".parse::<f64>().unwrap()
    );
    assert_eq!(
        first_value(clock, "cpu_time"),
        "2.3967952928062537e+01".parse::<f64>().unwrap()
    );
    assert_eq!(metric(clock, "cpu_time")["source_unit"], "ns");
    assert!(
        notes(&doc).contains("built as debug"),
        "library_build_type debug is a warning: {}",
        notes(&doc)
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn gbench_runs_the_fixture_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.json");
    let doc = json_of(quick_run().arg("--raw").arg(&raw));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["kind"], "command");
    assert!(run["environment"]["captured"].as_bool().unwrap());
    let hot = bench(&doc, "BM_EntityGetHot");
    for m in ["real_time", "cpu_time"] {
        assert_eq!(
            metric(hot, m)["values"].as_array().unwrap().len(),
            2,
            "{m}: both repetitions, no aggregates"
        );
    }
    let writer = bench(&doc, "BM_WriteFrames");
    assert_eq!(metric(writer, "items_per_second")["source_unit"], "items/s");
    assert_eq!(metric(writer, "items_per_second")["better"], "higher");
    assert_eq!(first_value(writer, "entities"), 64.0);
    let window = bench(&doc, "BM_ChunkRead/window:4");
    assert_eq!(window["params"][0]["key"], "window");
    let fit = bench(&doc, "BM_DiffFrames_BigO");
    assert_eq!(metric(fit, "real_time")["source_unit"], "ns/N");
    let all = notes(&doc);
    assert!(
        all.contains("BM_BrokenDevice: error: device not found; no result (2 rows)"),
        "{all}"
    );
    assert!(
        all.contains("BM_WriteFrames: items_per_second and bytes_per_second are per CPU second"),
        "{all}"
    );
    // --raw keeps google/benchmark's own JSON, which reads back the same.
    let again = json_of(latkit().arg("parse").arg(&raw).args(["--format", "json"]));
    assert_eq!(
        metric(bench(&again, "BM_EntityGetHot"), "real_time")["values"],
        metric(hot, "real_time")["values"]
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn console_and_json_of_one_run_agree() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let console = dir.path().join("console.txt");
    let out = Command::new(replay_bench())
        .args([
            "--benchmark_min_time=0.01",
            "--benchmark_repetitions=2",
            "--benchmark_color=false",
        ])
        .arg(format!("--benchmark_out={}", json.display()))
        .output()
        .unwrap();
    std::fs::write(&console, &out.stdout).unwrap();
    let parse = |p: &Path| {
        json_of(
            latkit()
                .arg("parse")
                .arg(p)
                .args(["--format", "json", "-q"]),
        )
    };
    let (from_json, from_console) = (parse(&json), parse(&console));
    assert_eq!(from_console["runs"][0]["source"]["format"], "gbench");
    let benches = |d: &Value| d["runs"][0]["benchmarks"].as_array().unwrap().clone();
    let (a, b) = (benches(&from_json), benches(&from_console));
    let names = |v: &[Value]| v.iter().map(|b| b["full_name"].clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for (j, c) in a.iter().zip(&b) {
        for m in j["metrics"].as_array().unwrap() {
            let name = m["name"].as_str().unwrap();
            // The JSON keeps the RMS of CPU times only.
            let Some(theirs) = c["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == name)
            else {
                panic!("{}: no {name} from the console", j["full_name"]);
            };
            for (x, y) in m["values"]
                .as_array()
                .unwrap()
                .iter()
                .zip(theirs["values"].as_array().unwrap())
            {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                // The console prints three significant digits (RMS: whole percents;
                // BigO coefficients, small spreads and cv percentages: two or three decimals).
                let full_name = j["full_name"].as_str().unwrap();
                let tolerance = if name == "cpu_time" && full_name.ends_with("_RMS") {
                    0.5
                } else if full_name.ends_with("_BigO")
                    || full_name.ends_with("_stddev")
                    || full_name.ends_with("_cv")
                {
                    0.005 + x.abs() * 0.006
                } else {
                    x.abs() * 0.006
                };
                assert!(
                    (x - y).abs() <= tolerance,
                    "{} {name}: {x} vs {y}",
                    j["full_name"]
                );
            }
        }
        assert_eq!(j["iterations"], c["iterations"]);
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn aggregates_stand_in_only_when_the_repetitions_are_absent() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("agg.json");
    let status = Command::new(replay_bench())
        .args([
            "--benchmark_min_time=0.01",
            "--benchmark_repetitions=3",
            "--benchmark_report_aggregates_only=true",
            "--benchmark_filter=Entity",
        ])
        .arg(format!("--benchmark_out={}", json.display()))
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let doc = json_of(
        latkit()
            .arg("parse")
            .arg(&json)
            .args(["--format", "json", "-q"]),
    );
    let hot = bench(&doc, "BM_EntityGetHot");
    assert_eq!(
        metric(hot, "real_time")["values"].as_array().unwrap().len(),
        1
    );
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let median = raw["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "BM_EntityGetHot_median")
        .unwrap()["real_time"]
        .as_f64()
        .unwrap();
    assert_eq!(first_value(hot, "real_time"), median);
    assert!(notes(&doc).contains(
        "BM_EntityGetHot: only aggregates of 3 repetitions were given: its figures are their median"
    ));
}

#[test]
fn check_gates_on_wall_or_cpu_time_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("targets.toml");
    for (metric, limit, code) in [("cpu_time", "1 s", 0), ("real_time", "1 ns", 1)] {
        std::fs::write(
            &targets,
            format!(
                "[[target]]\nbench = \"BM_Clock\"\nmetric = \"{metric}\"\nbelow = \"{limit}\"\n"
            ),
        )
        .unwrap();
        latkit()
            .args(["check", "--targets"])
            .arg(&targets)
            .arg(vector("gbench-1.7.1.json"))
            .assert()
            .code(code)
            .stdout(predicate::str::contains(metric));
    }
}

#[test]
fn a_missing_or_crashing_binary_fails_with_its_last_words() {
    latkit()
        .args(["gbench", "./no-such-bench"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "./no-such-bench: no such benchmark binary",
        ));
    let dir = tempfile::tempdir().unwrap();
    let crash = dir.path().join("crash.sh");
    std::fs::write(
        &crash,
        "#!/bin/sh\necho 'bm: device exploded' >&2\nkill -SEGV $$\n",
    )
    .unwrap();
    std::fs::set_permissions(&crash, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    latkit()
        .arg("gbench")
        .arg(&crash)
        .assert()
        .code(6)
        .stderr(predicate::str::contains("failed (signal: 11"))
        .stderr(predicate::str::contains("bm: device exploded"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn ctrl_c_reports_what_finished_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cut.json");
    // Long enough per benchmark that the interrupt lands midway.
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .arg("gbench")
        .arg(replay_bench())
        .args(["--min-time", "0.5", "--format", "json"])
        .arg("--out")
        .arg(&out)
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The fixture's first benchmarks take about 0.5 s each; the whole suite about 8 s.
    std::thread::sleep(Duration::from_millis(2500));
    crate::common::interrupt_expecting_130(child);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let done = doc["runs"][0]["benchmarks"].as_array().unwrap();
    assert!(!done.is_empty(), "what finished is reported");
    assert!(done.len() < 8, "the run was cut short: {}", done.len());
    assert!(notes(&doc).contains("did not finish: these figures are from its console table"));
}

#[test]
fn bad_input_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(
        &file,
        "{\n\"context\": {\"num_cpus\": 2},\n\"benchmarks\": [\n{\"name\": \"BM_A\", \"run_type\": \"iteration\", \"iterations\": 5, \"real_time\": 3.5, \"cpu_time\": 3.4, \"time_unit\": \"ns\"},\n{\"name\": \"BM_B\", \"real_time\": -1, \"time_unit\": \"ns\"}\n]}\n",
    )
    .unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "bad.json:5: BM_B: `real_time` is -1, not a non-negative number; row skipped",
        ));
    latkit()
        .arg("parse")
        .arg("--strict")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.json:5"));
    std::fs::write(&file, "{\"context\": {\"num_cpus\": 2}, \"benchmarks\": [}").unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "bad.json:1: expected a google/benchmark JSON document",
        ));
}

fn page(spec: &Path, inputs: &[&Path]) -> String {
    crate::common::stdout_of(latkit().arg("page").arg("--spec").arg(spec).args(inputs))
}

#[test]
fn the_page_computes_numbers_verdicts_and_caveats() {
    let text = page(&fixture("page/sdk-page.toml"), &[&fixture("page/sdk.json")]);
    // Hand-computed from sdk.json: 1e7 items/s; 79.6 ns is 12.6 M/s; 16.67 ms / 100 ns =
    // 166700; 159 / 100 ns = 59 % slower; 6.77 us + 74 ns per key; 79.6 / 1.7 = 47.
    for expected in [
        "| Writing frames end-to-end | 10 M frames/s | a 30-min 60 fps match: ~11 ms of CPU |",
        "| EntityView::Get (realistic hot loop) | ~80 ns (13 M/s) |  |",
        "| Writer throughput | Fast | ~167000x headroom over real-time at 60 fps |",
        "| Entity lookup | Excellent | ~80 ns, under 100 ns |",
        "| Cache-window mis-sized | Actively bad | 59 % slower than no cache |",
        // BM_PerKey resolves 9 keys an iteration (666 ns): 74 ns a key, from its rate.
        "| Opening | Negligible | 6.8 us + 74 ns/key (9 keys an iteration). Once per integration. |",
        "| CPU | 8 × 3600 MHz |",
        "| Runs | 1 run, 1–3 repetitions per benchmark |",
        "- One machine, one run: every figure comes from a single run on sdk-box",
        "BM_Cache (2), BM_NoCache (2), BM_Open (1)",
        "- CPU-time based: BM_Write (items_per_second), BM_PerKey (items_per_second).",
        "was a debug build",
        "CPU frequency scaling was on",
        "Not tested for significance (fewer than 6 repetitions on a side): Cache-window mis-sized (5 %)",
        "- BM_Hot (1.7 ns/op, L1-resident) is an isolated micro-benchmark: a ceiling, not the realistic integration cost (BM_Real: ~80 ns/op, 47x the micro-benchmark's).",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    insta::assert_snapshot!("sdk_page", text);
}

#[test]
fn the_fixture_page_is_generated_from_the_worked_spec() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/replay-page.toml");
    let text = page(&spec, &[&fixture("gbench/replay-6reps.json")]);
    insta::assert_snapshot!("replay_page", text);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn gbench_then_page_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("replay.json");
    quick_run().arg("--out").arg(&results).assert().success();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/replay-page.toml");
    let text = page(&spec, &[&results]);
    for area in [
        "Writer throughput",
        "Entity lookup",
        "Cache window, mis-sized",
        "Index setup",
    ] {
        assert!(text.contains(&format!("| {area} |")), "{area} in\n{text}");
    }
    // Captured by latkit on this host: the OS is known.
    assert!(text.contains("| OS | "), "{text}");
    assert!(text.contains("Too few repetitions"), "{text}");
}

#[test]
fn a_bad_page_spec_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("page.toml");
    for (text, expected) in [
        (
            "[[glance]]\ntask = \"x\"\nbench = \"BM_Write\"\nshape = \"round\"\n",
            "page.toml:4: not a valid page spec: unknown field `shape`",
        ),
        (
            "title = \"t\"\n\n[[glance]]\ntask = \"x\"\nbench = \"BM_Nope\"\n",
            "page.toml:3: bench `BM_Nope` is not in the results (they have: BM_Write,",
        ),
        (
            "[[glance]]\ntask = \"x\"\nbench = \"BM_Write\"\nmetric = \"items_per_second\"\nshow = \"throughput\"\n",
            "page.toml:1: show = \"throughput\" needs bytes per second, but `BM_Write` items_per_second is in items/s",
        ),
        (
            "[[glance]]\ntask = \"x\"\nbench = \"BM_Write\"\nnote = \"{frames * 3}\"\n",
            "page.toml:1: `{frames * 3}`: no `frames` here",
        ),
    ] {
        std::fs::write(&spec, text).unwrap();
        latkit()
            .arg("page")
            .arg("--spec")
            .arg(&spec)
            .arg(fixture("page/sdk.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
}

#[test]
fn a_per_item_cost_needs_the_items_an_iteration_holds() {
    // An iteration is not an item: without items_per_second the per-key cost was the
    // iteration's (VTX's resolves 9 keys an iteration: 662 ns read as "662 ns/key").
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("sdk.json");
    let text = std::fs::read_to_string(fixture("page/sdk.json")).unwrap();
    std::fs::write(
        &results,
        text.replace(",\n      \"items_per_second\": 13513513.513513513", ""),
    )
    .unwrap();
    let out = latkit()
        .args(["page", "--spec"])
        .arg(fixture("page/sdk-page.toml"))
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "sdk-page.toml:38: `per_item` needs the keys an iteration of `BM_PerKey` holds"
        ),
        "{err}"
    );
}

#[test]
fn rates_are_judged_and_paired_as_the_time_per_item_they_stand_for() {
    // VTX's page states "~80 ns per read" from a rate: thresholds, headroom and time_and_rate
    // refused one, and a pair printed two rates' ratio uninverted with no unit.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("rates.toml");
    std::fs::write(
        &spec,
        r#"title = "Rates"

[[glance]]
task = "Key resolution"
bench = "BM_PerKey"
metric = "items_per_second"
show = "time_and_rate"

[[health]]
area = "Key resolution"
bench = "BM_PerKey"
metric = "items_per_second"
rule = "thresholds"
levels = [{ below = "10 ns", verdict = "Instant" }, { below = "100 ns", verdict = "Excellent" }]

[[health]]
area = "Writer"
bench = "BM_Write"
metric = "items_per_second"
rule = "headroom"
budget = "16.67 ms"
levels = [{ at_least = 10, verdict = "Fast" }]

[[pair]]
micro = "BM_Write"
realistic = "BM_PerKey"
metric = "items_per_second"
"#,
    )
    .unwrap();
    let out = latkit()
        .args(["page", "--spec"])
        .arg(&spec)
        .arg(fixture("page/sdk.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{err}");
    for expected in [
        "| Key resolution | 74 ns (14 M/s) |",
        "| Key resolution | Excellent | 74 ns, under 100 ns |",
        "| Writer | Fast | ~167000x headroom",
        // 100 ns an item against 74 ns an item: the rates' ratio inverted, with its unit.
        "BM_Write (100 ns/item) is an isolated micro-benchmark",
        "(BM_PerKey: 74 ns/item, 0.74x the micro-benchmark's)",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
}
