//! `latkit parse` end to end: reference vectors, every format, enrichment, bad input.

use crate::common::{fixture, json_of, latkit, parse_as, parse_json, stdout_of, vector};
use predicates::prelude::*;
use std::fs;

#[test]
fn steamdeck_vector_reproduces_the_reference_table_exactly() {
    let expected = fs::read_to_string(vector("viiper-steamdeck.expected.md")).unwrap();
    let out = parse_as(&vector("viiper-steamdeck.gobench.txt"), "markdown");
    assert!(
        out.contains(&expected),
        "expected table not found verbatim in:\n{out}"
    );
}

#[test]
fn formats_match_snapshots() {
    for format in ["table", "markdown", "csv"] {
        let out = parse_as(&vector("viiper-count3.gobench.txt"), format);
        insta::assert_snapshot!(format!("count3_{format}"), out);
    }
}

#[test]
fn json_carries_every_value_summaries_tables_and_notes() {
    let doc = parse_json(&vector("viiper-count3.gobench.txt"));
    assert_eq!(doc["schema"], "latkit.result.v2");
    let run = &doc["runs"][0];
    assert_eq!(run["config"][0]["key"], "goos");
    assert_eq!(run["environment"]["cpu_model"], "AMD Custom APU 0405");
    assert_eq!(run["environment"]["captured"], false);
    let benches = run["benchmarks"].as_array().unwrap();
    assert_eq!(benches.len(), 4);
    let write = &benches[0];
    assert_eq!(write["name"], "Benchmark_Xbox360_Delay/1_Go-Client-Write");
    assert_eq!(write["params"][0]["key"], "procs");
    assert_eq!(
        write["iterations"],
        serde_json::json!([10000, 10000, 10000])
    );
    let ns = &write["metrics"][0];
    assert_eq!(ns["name"], "ns/op");
    assert_eq!(ns["unit"]["dimension"], "time");
    assert_eq!(ns["values"], serde_json::json!([10668.0, 10712.0, 10590.0]));
    let summary = &ns["summary"];
    assert_eq!(summary["median"], 10668.0);
    assert_eq!(summary["min"], 10590.0);
    assert_eq!(summary["max"], 10712.0);
    assert!(summary["mean"].as_f64().is_some());
    assert!(summary["stddev"].as_f64().is_some());
    assert!(
        summary.get("median_ci").is_none(),
        "3 samples give no 95% CI"
    );
    assert_eq!(write["metrics"][2]["name"], "allocs/op");

    let table = &doc["tables"][0];
    let headers: Vec<&str> = table["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["header"].as_str().unwrap())
        .collect();
    assert_eq!(
        headers,
        [
            "Benchmark",
            "Runs",
            "Iterations",
            "median ns/op",
            "± 95% CI",
            "% of Full",
            "Client Share %",
            "Latency Share %"
        ]
    );
    let press = &table["rows"][3]["cells"];
    assert_eq!(press[3]["value"], 184870.0);
    assert!((press[5]["percent"].as_f64().unwrap() - 207.5372).abs() < 1e-3);
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("too few samples")),
        "{notes:?}"
    );
    // The preset is no hidden default: the report says it applied.
    assert!(
        notes
            .iter()
            .any(|n| n.contains("built-in input-latency preset")),
        "{notes:?}"
    );
}

#[test]
fn enough_repetitions_give_a_confidence_interval() {
    let mut text = String::from("pkg: x\n");
    for v in [100, 101, 99, 102, 98, 100, 103, 97] {
        text.push_str(&format!("BenchmarkStage-4 1000 {v} ns/op\n"));
    }
    let doc = json_of(
        latkit()
            .args(["parse", "-", "--format", "json"])
            .write_stdin(text.clone()),
    );
    let ci = &doc["runs"][0]["benchmarks"][0]["metrics"][0]["summary"]["median_ci"];
    // benchstat's order statistics for 8 values: x(1)..x(7), coverage 0.961.
    assert_eq!(ci["low"], 97.0);
    assert_eq!(ci["high"], 102.0);
    assert!((ci["coverage"].as_f64().unwrap() - 0.9609375).abs() < 1e-12);
    let md = stdout_of(
        latkit()
            .args(["parse", "-", "--format", "markdown"])
            .write_stdin(text),
    );
    assert!(
        md.contains("| BenchmarkStage | 8 | 1000 | 100 | ±3.00% |"),
        "{md}"
    );
    assert!(!md.contains("too few samples"));
}

#[test]
fn per_run_prints_one_table_per_cycle() {
    let out = stdout_of(
        latkit()
            .arg("parse")
            .arg(vector("viiper-count3.gobench.txt"))
            .args(["--per-run", "--format", "markdown"]),
    );
    assert_eq!(out.matches("| Benchmark | Count |").count(), 3);
    assert!(out.contains("cycle 2/3"));
    assert!(out.contains("| 1_Go-Client-Write | 10000 | 10712 | 12.16 | 100.00 | 0.00 |"));
    assert!(out.contains("| 4_E2E-PressAndRelease | 10000 | 183911 | 203.64 | 11.52 | 88.48 |"));
}

#[test]
fn decimals_are_not_lost() {
    let out = stdout_of(
        latkit()
            .args(["parse", "--format", "markdown"])
            .write_stdin(
                "BenchmarkTiny-8 1000000000 0.3341 ns/op\nBenchmarkHalf-8 100 12.5 ns/op\n",
            ),
    );
    assert!(
        out.contains("| BenchmarkTiny | 1000000000 | 0.3341 |"),
        "{out}"
    );
    assert!(out.contains("| BenchmarkHalf | 100 | 12.5 |"), "{out}");
}

#[test]
fn variants_are_attributed_within_themselves() {
    let out = parse_as(&fixture("variants.gobench.txt"), "markdown");
    assert!(
        out.contains("### Benchmark_Xbox360_Delay · variant PLAIN"),
        "{out}"
    );
    assert!(
        out.contains("### Benchmark_Xbox360_Delay · variant ENC"),
        "{out}"
    );
    // PLAIN: 10000/80000 = 12.50%; ENC: 20000/100000 = 20.00%, each against its own E2E row.
    assert!(
        out.contains("| 1_Go-Client-Write | 1000 | 10000 | 12.50 | 100.00 | 0.00 |"),
        "{out}"
    );
    assert!(
        out.contains("| 1_Go-Client-Write | 1000 | 20000 | 20.00 | 100.00 | 0.00 |"),
        "{out}"
    );
    assert!(
        out.contains("| 4_E2E-PressAndRelease | 1000 | 240000 | 240.00 | 16.67 | 83.33 |"),
        "{out}"
    );
    // The ENC variant has no "without client" row: the note names the missing role.
    assert!(
        out.contains("variant ENC: no benchmark for role Latency (`*Without-Client*`)"),
        "{out}"
    );
}

#[test]
fn missing_baseline_falls_back_to_the_largest_value_with_a_note() {
    let out = stdout_of(
        latkit()
            .args(["parse", "--format", "markdown", "--baseline", "Nope"])
            .write_stdin("BenchmarkA 1 50 ns/op\nBenchmarkB 1 200 ns/op\n"),
    );
    assert!(
        out.contains("| Benchmark | Count | ns/op | % of BenchmarkB |"),
        "{out}"
    );
    assert!(out.contains("| BenchmarkA | 1 | 50 | 25.00 |"), "{out}");
    assert!(
        out.contains("baseline `Nope` not found: using the largest value (BenchmarkB) as 100%")
    );
}

#[test]
fn explicit_baseline_and_metric() {
    let out = stdout_of(
        latkit()
            .args([
                "parse",
                "--format",
                "markdown",
                "--baseline",
                "A",
                "--metric",
                "B/op",
            ])
            .write_stdin("BenchmarkA 1 50 ns/op 10 B/op\nBenchmarkB 1 200 ns/op 30 B/op\n"),
    );
    assert!(
        out.contains("| Benchmark | Count | B/op | % of BenchmarkA |"),
        "{out}"
    );
    assert!(out.contains("| BenchmarkB | 1 | 30 | 300.00 |"), "{out}");
}

#[test]
fn suite_file_describes_any_pipeline() {
    let out = stdout_of(
        latkit()
            .arg("parse")
            .arg(fixture("stream.gobench.txt"))
            .arg("--suite")
            .arg(fixture("stream-suite.toml"))
            .args(["--format", "markdown"]),
    );
    assert!(
        out.contains(
            "| Benchmark | Count | ns/op | % of Frame | Encode Share % | Transport Share % |"
        ),
        "{out}"
    );
    // Frame = encode + transport: 4000 / 10000; a batch of 3 frames contains encode 3 times.
    assert!(
        out.contains("| BenchmarkFrame | 100 | 10000 | 100.00 | 40.00 | 60.00 |"),
        "{out}"
    );
    assert!(
        out.contains("| BenchmarkBatch3 | 100 | 30000 | 300.00 | 40.00 | 60.00 |"),
        "{out}"
    );
    assert!(
        out.contains("| BenchmarkDecode | 100 | 500 | 5.00 |  |  |"),
        "{out}"
    );
}

#[test]
fn several_files_are_separate_runs_unless_merged() {
    let a = vector("viiper-steamdeck.gobench.txt");
    let b = vector("viiper-count3.gobench.txt");
    let separate = json_of(
        latkit()
            .arg("parse")
            .arg(&a)
            .arg(&b)
            .args(["--format", "json"]),
    );
    assert_eq!(separate["runs"].as_array().unwrap().len(), 2);
    // A ns/op table per run, and one per other unit (B/op, allocs/op), as benchstat shows them.
    let units = separate["runs"][0]["benchmarks"][0]["metrics"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(separate["tables"].as_array().unwrap().len(), 2 * units);
    let merged = json_of(
        latkit()
            .arg("parse")
            .arg(&a)
            .arg(&b)
            .args(["--merge", "--format", "json"]),
    );
    assert_eq!(merged["runs"].as_array().unwrap().len(), 1);
    let values = &merged["runs"][0]["benchmarks"][0]["metrics"][0]["values"];
    assert_eq!(values.as_array().unwrap().len(), 4);
}

#[test]
fn output_file_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.md");
    latkit()
        .arg("parse")
        .arg(vector("viiper-steamdeck.gobench.txt"))
        .args(["--format", "markdown", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let expected = fs::read_to_string(vector("viiper-steamdeck.expected.md")).unwrap();
    assert!(fs::read_to_string(&out).unwrap().contains(&expected));
}

#[test]
fn reports_are_byte_identical_across_runs() {
    for format in ["table", "markdown", "csv"] {
        let run = || parse_as(&vector("viiper-count3.gobench.txt"), format);
        assert_eq!(run(), run());
    }
}

#[test]
fn missing_file_is_exit_2_naming_it() {
    latkit()
        .args(["parse", "/nonexistent/bench.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/bench.txt"));
}

#[test]
fn no_results_is_exit_2_with_an_example_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.txt");
    fs::write(&file, "PASS\nok  \texample.com/x\t0.1s\n").unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "empty.txt: no benchmark results found",
        ))
        .stderr(predicate::str::contains(
            "BenchmarkEncode-8   1000   1234 ns/op",
        ));
}

#[test]
fn malformed_lines_warn_with_position_and_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.txt");
    fs::write(
        &file,
        "BenchmarkA-8 10 5 ns/op\nBenchmarkA-8 ten 5 ns/op\nBenchmarkB-8 10 7 ns/op\n",
    )
    .unwrap();
    let assert = latkit()
        .arg("parse")
        .arg(&file)
        .args(["--format", "markdown"])
        .assert()
        .success()
        .stderr(predicate::str::contains("bad.txt:2: iteration count `ten`"));
    let out = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(out.contains("| BenchmarkA | 10 | 5 |"));
    assert!(out.contains("| BenchmarkB | 10 | 7 |"));
    assert!(
        out.contains("- warning: ") && out.contains("bad.txt:2:"),
        "{out}"
    );

    latkit()
        .arg("parse")
        .arg(&file)
        .arg("--strict")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.txt:2:"));
}

#[test]
fn failures_in_the_output_are_reported() {
    let out = stdout_of(
        latkit()
            .args(["parse", "--format", "markdown"])
            .write_stdin("BenchmarkA 1 5 ns/op\n--- FAIL: BenchmarkB\nFAIL\texample.com/x\t0.2s\n"),
    );
    assert!(
        out.contains("go test reported: --- FAIL: BenchmarkB"),
        "{out}"
    );
    assert!(out.contains("go test reported: FAIL"), "{out}");
}

#[test]
fn bad_suite_file_is_exit_2_with_line() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("latkit.toml");
    fs::write(&suite, "[attribution]\npart = { bench = \"*A*\" }\n").unwrap();
    latkit()
        .arg("parse")
        .arg(vector("viiper-steamdeck.gobench.txt"))
        .arg("--suite")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "latkit.toml:2: not a valid suite file",
        ))
        .stderr(predicate::str::contains("missing field `label`"));
}

#[test]
fn help_and_version() {
    latkit()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
    latkit()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("parse"))
        .stdout(predicate::str::contains("go"));
    latkit()
        .args(["parse", "--format", "yaml"])
        .assert()
        .code(2);
}

#[test]
fn large_files_parsed_in_pieces_equal_the_sequential_parse() {
    // Over the 16 MiB threshold, so a file is split across cores while stdin is read in order.
    let mut text = String::from("goos: linux\npkg: example.com/first\n");
    let lines = 200_000;
    for i in 0..lines {
        if i == lines * 3 / 4 {
            text.push_str("pkg: example.com/second\n");
        }
        if i % 50_000 == 7 {
            text.push_str("BenchmarkBroken-8 notanumber 1 ns/op\n");
        }
        text.push_str(&format!(
            "BenchmarkStage/case_{:02}-8 {:>40} {}.{} ns/op {:>20} B/op\n",
            i % 30,
            1000,
            10_000 + i % 977,
            i % 10,
            i % 4096
        ));
    }
    assert!(text.len() > 16 << 20);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    fs::write(&file, &text).unwrap();
    let from_file = json_of(
        latkit()
            .arg("parse")
            .arg(&file)
            .args(["--format", "json", "-q"]),
    );
    let from_stdin = json_of(
        latkit()
            .args(["parse", "-", "--format", "json", "-q"])
            .write_stdin(text),
    );
    let benches = |doc: &serde_json::Value| doc["runs"][0]["benchmarks"].clone();
    assert_eq!(benches(&from_file), benches(&from_stdin));
    assert_eq!(
        benches(&from_file).as_array().unwrap().len(),
        60,
        "30 cases in each of 2 packages"
    );
    assert_eq!(benches(&from_file)[0]["package"], "example.com/first");
    assert_eq!(benches(&from_file)[30]["package"], "example.com/second");
    let lines_of = |doc: &serde_json::Value| -> Vec<u64> {
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n["line"].as_u64())
            .collect()
    };
    assert_eq!(lines_of(&from_file), lines_of(&from_stdin));
    assert_eq!(lines_of(&from_file).len(), 4);
}

#[test]
fn a_part_larger_than_its_composite_is_flagged() {
    let out = stdout_of(
        latkit()
            .args(["parse", "--format", "markdown", "-q"])
            .write_stdin("BenchmarkP/1_Go-Client-Write 1 100 ns/op\nBenchmarkP/3_E2E-InputDelay 1 50 ns/op\n"),
    );
    assert!(
        out.contains("| 3_E2E-InputDelay | 1 | 50 | 100.00 | 200.00 | -100.00 |"),
        "{out}"
    );
    assert!(out.contains("warning: 3_E2E-InputDelay in BenchmarkP: the Client part measured alone exceeds this composite (200.00%)"), "{out}");
}

#[test]
fn tables_follow_what_the_run_says_of_its_metrics_not_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let json_of_vector = |name: &str| -> serde_json::Value {
        serde_json::from_str(&crate::common::parse_as(
            &crate::common::vector(name),
            "json",
        ))
        .unwrap()
    };
    let headers = |doc: &serde_json::Value| -> Vec<String> {
        let file = dir.path().join("doc.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let out: serde_json::Value =
            serde_json::from_str(&crate::common::parse_as(&file, "json")).unwrap();
        out["tables"][0]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    // A Go run whose metrics are declared peers shows them side by side.
    let mut go = json_of_vector("viiper-count3.gobench.txt");
    assert!(
        headers(&go).contains(&"ci95".to_string()),
        "narrow by default"
    );
    go["runs"][0]["peer_metrics"] = true.into();
    let wide = headers(&go);
    assert!(
        wide.contains(&"ns/op".to_string()) && wide.contains(&"B/op".to_string()),
        "{wide:?}"
    );
    // BENCH results written before the field existed still read as peers.
    let mut bench = json_of_vector("rootstream-bench.txt");
    assert_eq!(bench["runs"][0]["peer_metrics"], true);
    bench["runs"][0]
        .as_object_mut()
        .unwrap()
        .remove("peer_metrics");
    let legacy = headers(&bench);
    assert!(legacy.contains(&"max".to_string()) && legacy.contains(&"throughput".to_string()));
}

/// `parse` with no file on a terminal says it reads standard input instead of waiting without
/// a word; empty input is one short line pointing to the formats' help.
#[test]
fn parse_on_a_terminal_says_it_reads_stdin_and_empty_input_is_short() {
    let out = std::process::Command::new(crate::common::peer("script", "apt-get install bsdutils"))
        .args([
            "-qec",
            &format!("{} parse", assert_cmd::cargo::cargo_bin("latkit").display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reading results from standard input (Ctrl-D ends them)"),
        "{text}"
    );
    let piped = latkit().arg("parse").write_stdin("").output().unwrap();
    let said = String::from_utf8_lossy(&piped.stderr);
    assert_eq!(piped.status.code(), Some(2));
    assert!(!said.contains("reading results"), "{said}");
    assert!(
        said.contains("-: empty: no results to read") && said.len() < 200,
        "{said}"
    );
}

/// A confidence interval wider than the median itself reads "too noisy" on the terminal, not
/// as a percentage nobody can use; CSV keeps the number.
#[test]
fn an_interval_wider_than_the_median_reads_too_noisy() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("noisy.txt");
    let mut text = String::new();
    for ns in [100, 3000, 50, 9000, 70, 120, 20000] {
        text += &format!("BenchmarkA-2 10 {ns} ns/op\n");
    }
    for ns in [100, 101, 99, 100, 102, 100] {
        text += &format!("BenchmarkB-2 10 {ns} ns/op\n");
    }
    std::fs::write(&file, text).unwrap();
    let table = crate::common::stdout_of(latkit().arg("parse").arg(&file));
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{table}"))
            .to_string()
    };
    assert!(row("BenchmarkA").contains("too noisy (± "), "{table}");
    assert!(
        row("BenchmarkB").contains("± 2.00%") && !row("BenchmarkB").contains("noisy"),
        "{table}"
    );
    let csv = crate::common::parse_as(&file, "csv");
    assert!(csv.contains(",,BenchmarkA,7,10,120,16566.66"), "{csv}");
}

/// Beside tables of other units (B/op, allocs/op), the first table is headed by its own.
#[test]
fn every_metric_table_has_its_heading_in_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem.txt");
    let mut text = String::from("goos: linux\npkg: x\ncpu: c\n");
    for i in 0..3 {
        text += &format!("BenchmarkA-8 1000 10{i} ns/op 16 B/op 1 allocs/op\n");
    }
    std::fs::write(&file, text).unwrap();
    let md = crate::common::parse_as(&file, "markdown");
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headings, ["### ns/op", "### B/op", "### allocs/op"], "{md}");
}
