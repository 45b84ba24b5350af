//! Reading Xenomai `latency` and cyclictest output into the model, against the reference
//! vectors and the real cyclictest.

use crate::common::{json_of, latkit, metric, parse_as, parse_json, vector};
use serde_json::Value;
use std::fs;
use std::process::Command;

fn lines_with(text: &str, prefixes: &[&str]) -> Vec<String> {
    text.lines()
        .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
        .map(str::to_string)
        .collect()
}

#[test]
fn xenomai_vector_round_trips_exactly() {
    let original = fs::read_to_string(vector("xenomai-latency-h.txt")).unwrap();
    let printed = parse_as(&vector("xenomai-latency-h.txt"), "xenomai");
    let kept = ["RTD|", "HSD|", "HSH|", "HSS|", "RTS|", "---|", "== "];
    assert_eq!(lines_with(&printed, &kept), lines_with(&original, &kept));
    assert!(printed.contains("PCT|"), "percentile line added");
}

#[test]
fn xenomai_vector_numbers_are_exact() {
    let doc = parse_json(&vector("xenomai-latency-h.txt"));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "xenomai");
    let timer = &run["timer"];
    assert_eq!(timer["period_ns"], 100_000);
    assert_eq!(timer["priority"], 99);
    assert_eq!(timer["mode"], "in-kernel periodic task");
    assert_eq!(timer["duration_s"], 5);
    let overall = &timer["overall"];
    assert_eq!(overall["min_ns"], 1485);
    assert_eq!(overall["avg_ns"], 2711);
    assert_eq!(overall["max_ns"], 86141);
    let bench = &run["benchmarks"][0];
    assert_eq!(
        metric(bench, "interval_max")["values"],
        serde_json::json!([83739.0, 34086.0, 86141.0, 63901.0])
    );
    assert_eq!(
        metric(bench, "interval_min")["values"],
        serde_json::json!([1485.0, 2616.0, 2616.0, 2276.0])
    );
    let hists = bench["histograms"].as_array().unwrap();
    let avg = hists.iter().find(|h| h["of"] == "samples").unwrap();
    assert_eq!(avg["reported"]["samples"], 49978);
    assert_eq!(avg["reported"]["average"], 2.034);
    assert_eq!(avg["counts"][2], 49391);
    let p = &bench["metrics"][0]["percentiles"];
    assert_eq!(p["count"], 49978);
}

#[test]
fn cyclictest_vectors_text_and_json_agree() {
    let text = parse_json(&vector("cyclictest-h200.txt"));
    let json = parse_json(&vector("cyclictest-h200.json"));
    for doc in [&text, &json] {
        let bench = &doc["runs"][0]["benchmarks"][0];
        assert_eq!(bench["name"], "thread0");
        assert_eq!(bench["iterations"], serde_json::json!([5000]));
        let hist = &bench["histograms"][0];
        assert_eq!(hist["overflow"], 5);
        assert_eq!(hist["counts"][12], 6);
        assert_eq!(hist["counts"][13], 312);
        assert_eq!(bench["timer"]["min_ns"], 12_000);
        assert_eq!(bench["timer"]["max_ns"], 8_068_000);
        assert_eq!(bench["timer"]["samples"], 5000);
        assert_eq!(bench["metrics"][0]["percentiles"]["count"], 5000);
        // Percentiles stay within the reported extremes, whatever the buckets say.
        assert_eq!(bench["metrics"][0]["percentiles"]["max"], 8_068_000.0);
        assert_eq!(bench["metrics"][0]["percentiles"]["min"], 12_000.0);
    }
    // Text prints the average rounded to µs; JSON keeps two decimals.
    assert_eq!(json["runs"][0]["benchmarks"][0]["timer"]["avg_ns"], 24510.0);
    assert_eq!(json["runs"][0]["timer"]["priority"], 80);
    assert_eq!(json["runs"][0]["source"]["format"], "cyclictest-json");
}

/// cyclictest's own final summary line: (min, avg, max) in µs per thread.
fn summary_lines(text: &str) -> Vec<(f64, f64, f64)> {
    text.lines()
        .filter(|l| l.contains("T:") && l.contains("Max:"))
        .map(|l| {
            let value = |key: &str| -> f64 {
                let rest = &l[l.find(key).unwrap() + key.len()..];
                rest.split_whitespace().next().unwrap().parse().unwrap()
            };
            (value("Min:"), value("Avg:"), value("Max:"))
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs cyclictest; `--features interop` runs it"
)]
fn real_cyclictest_outputs_parse_to_its_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("ct.json");
    // Two threads, a small histogram so that some samples may overflow it.
    let run = |extra: &[&str]| {
        Command::new(crate::common::peer(
            "cyclictest",
            "apt-get install rt-tests",
        ))
        .args([
            "-m", "-p", "80", "-i", "1000", "-l", "1500", "-t", "2", "-q",
        ])
        .args(extra)
        .output()
        .expect("cyclictest is installed (rt-tests; .ci/setup installs it)")
    };
    let with_hist = run(&["-h", "60", &format!("--json={}", json_path.display())]);
    assert!(
        with_hist.status.success(),
        "{}",
        String::from_utf8_lossy(&with_hist.stderr)
    );
    let hist_text = dir.path().join("ct-h.txt");
    fs::write(&hist_text, &with_hist.stdout).unwrap();

    let from_hist = parse_json(&hist_text);
    let from_json = parse_json(&json_path);
    let cyclic: Value = serde_json::from_str(&fs::read_to_string(&json_path).unwrap()).unwrap();
    for t in 0..2 {
        let own = &cyclic["thread"][t.to_string()];
        for doc in [&from_hist, &from_json] {
            let bench = &doc["runs"][0]["benchmarks"][t];
            assert_eq!(
                bench["timer"]["min_ns"].as_f64().unwrap(),
                own["min"].as_f64().unwrap() * 1000.0
            );
            assert_eq!(
                bench["timer"]["max_ns"].as_f64().unwrap(),
                own["max"].as_f64().unwrap() * 1000.0
            );
            assert_eq!(bench["iterations"][0], own["cycles"]);
            assert_eq!(bench["timer"]["samples"], own["cycles"]);
            let counted: u64 = bench["histograms"][0]["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .sum();
            let overflow = bench["histograms"][0]["overflow"].as_u64().unwrap_or(0);
            // Every sample cyclictest says it took is in a bucket or counted as overflow. (Under
            // load a thread may be stopped a few loops short of -l: the count it reports is
            // what it measured.)
            assert_eq!(Some(counted + overflow), own["cycles"].as_u64());
            assert!((1..=1500).contains(&(counted + overflow)));
        }
        let avg = from_json["runs"][0]["benchmarks"][t]["timer"]["avg_ns"]
            .as_f64()
            .unwrap();
        assert_eq!(avg, own["avg"].as_f64().unwrap() * 1000.0);
    }

    // Without -h cyclictest prints one summary line per thread; latkit keeps exactly those.
    let plain = run(&[]);
    assert!(plain.status.success());
    let text = String::from_utf8(plain.stdout).unwrap();
    let own = summary_lines(&text);
    assert_eq!(own.len(), 2, "{text}");
    let doc = json_of(
        latkit()
            .args(["parse", "-", "--format", "json"])
            .write_stdin(text),
    );
    for (t, (min, avg, max)) in own.iter().enumerate() {
        let timer = &doc["runs"][0]["benchmarks"][t]["timer"];
        assert_eq!(timer["min_ns"].as_f64().unwrap(), min * 1000.0);
        assert_eq!(timer["avg_ns"].as_f64().unwrap(), avg * 1000.0);
        assert_eq!(timer["max_ns"].as_f64().unwrap(), max * 1000.0);
    }
}

#[test]
fn any_timer_result_prints_as_xenomai() {
    let out = parse_as(&vector("cyclictest-h200.json"), "xenomai");
    assert!(out.starts_with("== Sampling period: 1000 us\n== Test mode: cyclictest\n"));
    assert!(out.contains("HSD|    avg|  12 - 13 |        6\n"));
    assert!(
        out.contains("RTS|     12.000|     24.510|   8068.000|"),
        "{out}"
    );
}

#[test]
fn malformed_timer_lines_warn_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lat.txt");
    fs::write(
        &file,
        "== Sampling period: 100 us\nRTD|      1.485|      x|     83.739|       0|     0|      1.485|     83.739\nRTD|      2.616|      2.703|     34.086|       0|     0|      1.485|     83.739\n",
    )
    .unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "lat.txt:2: malformed RTD line skipped",
        ));
    fs::write(&file, "== Sampling period: 100 us\n").unwrap();
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no xenomai results found"));
}
