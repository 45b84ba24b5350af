//! `latkit check`: targets and budgets over any result latkit reads, and BENCH lines.

use crate::common::{fixture, latkit, parse_as, stdout_of, vector};
use predicates::prelude::*;
use std::fs;

fn targets(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("targets.toml");
    fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn rootstream_vector_passes_its_targets() {
    let out = stdout_of(
        latkit()
            .args(["check", "--targets"])
            .arg(fixture("check/rootstream-targets.toml"))
            .arg(vector("rootstream-bench.txt"))
            .args(["--format", "markdown"]),
    );
    assert!(
        out.contains("| Benchmark | Metric | Value | Target | Status |"),
        "{out}"
    );
    assert!(
        out.contains("| encode_raw | avg | 38.00 µs | < 5.000 ms | ✅ Pass |"),
        "{out}"
    );
    assert!(
        out.contains("| tcp_loopback | throughput | 2.515 GB/s | > 100.0 MB/s | ✅ Pass |"),
        "{out}"
    );
    assert!(
        out.contains("| tcp_loopback | latency | 43.00 µs | < 500.0 µs | ✅ Pass |"),
        "{out}"
    );
    // Budget: 38 µs + 43 µs of 20 ms.
    assert!(
        out.contains("| encode | encode_raw avg | 38.00 µs | 0.19% |  |"),
        "{out}"
    );
    // Stage shares and the remainder, as printed, add up to 100 % (0.19 + 0.22 + 99.59).
    assert!(
        out.contains("| send | tcp_loopback latency | 43.00 µs | 0.22% |  |"),
        "{out}"
    );
    assert!(out.contains("| Sum |  | 81.00 µs | 0.41% |  |"), "{out}");
    assert!(
        out.contains("| Remainder |  | 19.92 ms | 99.59% | ✅ Fits |"),
        "{out}"
    );
}

#[test]
fn a_missed_average_fails_with_exit_1_and_junit() {
    let text = fs::read_to_string(vector("rootstream-bench.txt"))
        .unwrap()
        .replace("avg=38us", "avg=5210us");
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    latkit()
        .args(["check", "--targets"])
        .arg(fixture("check/rootstream-targets.toml"))
        .arg("--junit")
        .arg(&junit)
        .write_stdin(text)
        .assert()
        .code(1)
        .stdout(
            predicate::str::is_match(r"encode_raw\s+┆ avg\s+┆ 5.210 ms\s+┆ < 5.000 ms\s+┆ ❌ Fail")
                .unwrap(),
        );
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testsuites name="latkit check" tests="4" failures="1">"#),
        "{xml}"
    );
    assert!(xml.contains(r#"<testcase classname="encode_raw" name="avg &lt; 5 ms">"#));
    assert!(
        xml.contains(r#"<failure type="fail" message="avg is 5.210 ms, target &lt; 5.000 ms"/>"#),
        "{xml}"
    );
}

#[test]
fn limits_compare_exactly_across_units() {
    let results = "BENCH stage: latency=500us throughput=100 MB/s\n";
    let run = |toml: &str| {
        let (_dir, path) = targets(toml);
        latkit()
            .args(["check", "--targets"])
            .arg(&path)
            .write_stdin(results)
            .output()
            .unwrap()
            .status
            .code()
    };
    let target = |metric: &str, kind: &str, limit: &str| {
        format!("[[target]]\nbench = \"stage\"\nmetric = \"{metric}\"\n{kind} = \"{limit}\"\n")
    };
    // 500 us is exactly 0.5 ms: not below it.
    assert_eq!(run(&target("latency", "below", "0.5 ms")), Some(1));
    assert_eq!(run(&target("latency", "below", "0.500001 ms")), Some(0));
    assert_eq!(run(&target("latency", "above", "499999 ns")), Some(0));
    // 100 MB/s is less than 100 MiB/s but more than 95 MiB/s.
    assert_eq!(run(&target("throughput", "above", "100 MiB/s")), Some(1));
    assert_eq!(run(&target("throughput", "above", "95 MiB/s")), Some(0));
    assert_eq!(run(&target("throughput", "above", "99.99 MB/s")), Some(0));
}

#[test]
fn bad_targets_files_exit_2_with_the_line() {
    let results = vector("rootstream-bench.txt");
    let cases = [
        (
            "[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"5 lightyears\"\n",
            "targets.toml:4: `5 lightyears` is not a quantity",
        ),
        (
            "\n[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"100 MB/s\"\n",
            "targets.toml:5: `encode_raw` avg is measured in ns but the limit `100 MB/s` is in B/s",
        ),
        (
            "[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbellow = \"5 ms\"\n",
            "targets.toml:4: not a valid targets file",
        ),
    ];
    for (text, expected) in cases {
        let (_dir, path) = targets(text);
        latkit()
            .args(["check", "--targets"])
            .arg(&path)
            .arg(&results)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
}

#[test]
fn missing_results_are_not_measured_and_fail() {
    let (_dir, path) =
        targets("[[target]]\nbench = \"decode_*\"\nmetric = \"avg\"\nbelow = \"1 ms\"\n");
    latkit()
        .args(["check", "--targets"])
        .arg(&path)
        .arg(vector("rootstream-bench.txt"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("⚠️ Not measured"));
}

#[test]
fn statistics_of_go_and_timer_results() {
    // Go: a metric by its unit name, and a statistic of the repetitions.
    let (_d, path) = targets(
        "[[target]]\nbench = \"*E2E-InputDelay*\"\nmetric = \"ns/op\"\nbelow = \"100 us\"\n\n[[target]]\nbench = \"*Client-Write*\"\nmetric = \"max\"\nbelow = \"10.8 us\"\n",
    );
    let out = stdout_of(
        latkit()
            .args(["check", "--targets"])
            .arg(&path)
            .arg(vector("viiper-count3.gobench.txt")),
    );
    assert!(out.contains("89.08 µs"), "{out}");
    assert!(out.contains("10.71 µs"), "{out}");
    // A timer result, gated in the same command that measures it.
    let (_d2, generous) =
        targets("[[target]]\nbench = \"thread0\"\nmetric = \"p99\"\nbelow = \"10 s\"\n");
    latkit()
        .args(["timer", "-T", "1", "-p", "1000", "-q", "--check"])
        .arg(&generous)
        .assert()
        .success()
        .stderr(predicate::str::contains("✅ Pass"));
    let (_d3, strict) =
        targets("[[target]]\nbench = \"thread0\"\nmetric = \"p50\"\nbelow = \"1 ns\"\n");
    latkit()
        .args(["timer", "-T", "1", "-p", "1000", "-q", "--check"])
        .arg(&strict)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("❌ Fail"));
}

#[test]
fn bench_lines_round_trip() {
    let original = fs::read_to_string(vector("rootstream-bench.txt")).unwrap();
    let printed = parse_as(&vector("rootstream-bench.txt"), "bench");
    assert_eq!(printed, original);
    // Through latkit's own JSON and back.
    let json = parse_as(&vector("rootstream-bench.txt"), "json");
    let again = stdout_of(
        latkit()
            .args(["parse", "-", "--format", "bench"])
            .write_stdin(json),
    );
    assert_eq!(again, original);
    let table = parse_as(&vector("rootstream-bench.txt"), "markdown");
    assert!(
        table.contains(
            "| Benchmark | min (us) | avg (us) | max (us) | throughput (MB/s) | latency (us) |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| tcp_loopback |  |  |  | 2515.1 | 43 |"),
        "{table}"
    );
}

/// Three runs of RootStream's encode bench, as its CI runs it: averages of 6 ms, maxima of
/// 34.6, 4.4 and 28.2 ms.
const THREE_RUNS: &str = "BENCH encode_raw: min=36us avg=6000us max=34600us\n\
                          BENCH encode_raw: min=41us avg=6100us max=4400us\n\
                          BENCH encode_raw: min=38us avg=5900us max=28200us\n";

#[test]
fn a_bench_lines_statistics_are_its_own_and_over_runs_say_their_rule() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("bench.txt");
    fs::write(&results, THREE_RUNS).unwrap();
    // `mean` is the line's avg (it was judged on min: 36 µs passed a 6 ms average).
    for name in ["mean", "avg"] {
        let (_d, path) = targets(&format!(
            "[[target]]\nbench = \"encode_raw\"\nmetric = \"{name}\"\nbelow = \"5 ms\"\n"
        ));
        let out = latkit()
            .args(["check", "--format", "markdown", "--targets"])
            .arg(&path)
            .arg(&results)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains(&format!(
                "| encode_raw | {name} (mean of 3 runs' avg) | 6.000 ms | < 5.000 ms | ❌ Fail |"
            )),
            "{text}"
        );
    }
    // The max over runs is the max of the maxima (their median, 28.2 ms, passed), the min
    // the min of the minima.
    let (_d, path) = targets(
        "[[target]]\nbench = \"encode_raw\"\nmetric = \"max\"\nbelow = \"30 ms\"\n\
         [[target]]\nbench = \"encode_raw\"\nmetric = \"min\"\nbelow = \"37 us\"\n",
    );
    let out = latkit()
        .args(["check", "--format", "markdown", "--targets"])
        .arg(&path)
        .arg(&results)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "| encode_raw | max (max of 3 runs' max) | 34.60 ms | < 30.00 ms | ❌ Fail |"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "| encode_raw | min (min of 3 runs' min) | 36.00 µs | < 37.00 µs | ✅ Pass |"
        ),
        "{text}"
    );
}

#[test]
fn a_figure_name_that_resolves_to_none_or_several_is_exit_2_naming_what_there_is() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("bench.txt");
    fs::write(&results, THREE_RUNS).unwrap();
    let cases = [
        // A typo was "⚠️ Not measured".
        (
            "metric = \"averge\"\nbelow = \"5 ms\"",
            "targets.toml:1: `averge` is not a figure of `encode_raw`: its figures are min, avg, max",
        ),
        // A statistic the line does not have: a median of its min is nobody's figure.
        (
            "metric = \"median\"\nbelow = \"5 ms\"",
            "`median` is not a figure of `encode_raw`: its figures are min, avg, max",
        ),
        // A bare number against a time names the unit it lacks.
        (
            "metric = \"avg\"\nbelow = 5000",
            "the limit `5000` has no unit: write it with one, e.g. \"5000 us\"",
        ),
        (
            "metric = \"avg\"\nabove = \"10 ms\"\nbelow = \"5 ms\"",
            "`above = 10 ms` and `below = 5 ms` leave no value that passes",
        ),
    ];
    for (target, expected) in cases {
        let (_d, path) = targets(&format!("[[target]]\nbench = \"encode_raw\"\n{target}\n"));
        latkit()
            .args(["check", "--targets"])
            .arg(&path)
            .arg(&results)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
}

/// A RootStream-shaped bench, built here: it copies 1280×720 RGBA frames as
/// `encode_latency_bench.c` does, prints `BENCH encode_raw: min=..us avg=..us max=..us` and
/// exits 1 when its own average target (here `LIMIT_US`) is missed, as RootStream's does.
const ENCODE_BENCH: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}
int main(void) {
    const char *limit = getenv("LIMIT_US");
    size_t size = 1280 * 720 * 4;
    unsigned char *src = malloc(size), *dst = malloc(size);
    memset(src, 7, size);
    long min = -1, max = 0, sum = 0;
    for (int i = 0; i < 50; i++) {
        long start = now_us();
        memcpy(dst, src, size);
        src[i] = dst[size - 1 - i];
        long took = now_us() - start;
        if (min < 0 || took < min) min = took;
        if (took > max) max = took;
        sum += took;
    }
    printf("some setup output\nBENCH encode_raw: min=%ldus avg=%ldus max=%ldus\n", min, sum / 50, max);
    return limit && sum / 50 >= atol(limit) ? 1 : 0;
}
"#;

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs a C compiler; `--features interop` runs it"
)]
fn check_runs_a_bench_program_and_gates_all_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("encode_latency_bench.c");
    fs::write(&source, ENCODE_BENCH).unwrap();
    let bench = dir.path().join("encode_latency_bench");
    let built = std::process::Command::new("cc")
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&bench)
        .status()
        .unwrap();
    assert!(built.success());
    let (_d, path) = targets(
        "[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"1 s\"\n\
         [budget]\ntotal = \"20 ms\"\n[[budget.stage]]\nname = \"encode\"\nbench = \"encode_raw\"\n\
         metric = \"avg\"\nbelow = \"5 ms\"\n",
    );
    let junit = dir.path().join("junit.xml");
    let out = latkit()
        .args(["check", "--format", "markdown", "--runs", "6", "--targets"])
        .arg(&path)
        .arg("--junit")
        .arg(&junit)
        .arg("--")
        .arg(&bench)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("| encode_raw | avg (mean of 6 runs' avg) |"),
        "{text}"
    );
    assert!(
        text.contains("| encode | encode_raw avg (mean of 6 runs' avg) |"),
        "{text}"
    );
    assert!(text.contains("✅ Pass < 5.000 ms"), "{text}");
    assert!(
        fs::read_to_string(&junit)
            .unwrap()
            .contains("failures=\"0\"")
    );
    // A program whose own target fails still prints its lines: they are judged, and said.
    let (_d2, strict) =
        targets("[[target]]\nbench = \"encode_raw\"\nmetric = \"max\"\nbelow = \"1 ns\"\n");
    let out = latkit()
        .args(["check", "--runs", "2", "--targets"])
        .arg(&strict)
        .arg("--")
        .arg(&bench)
        .env("LIMIT_US", "0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert!(
        text.contains("max (max of 2 runs' max)") && text.contains("❌ Fail"),
        "{text}"
    );
    assert!(
        text.contains("(run 2 of 2) ended with exit status: 1"),
        "{text}"
    );
    // A program that prints no BENCH line is its failure: exit 6 with what it said.
    let out = latkit()
        .args(["check", "--targets"])
        .arg(&strict)
        .args(["--", "sh", "-c", "echo compiling; echo broken >&2; exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("printed no BENCH line") && err.contains("broken"),
        "{err}"
    );
}

#[test]
fn a_table_of_bench_lines_takes_each_statistic_by_its_rule_and_per_run_splits_them() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("bench.txt");
    fs::write(&results, THREE_RUNS).unwrap();
    // min of the minima, mean of the averages, max of the maxima (it printed their medians,
    // 38 / 6000 / 28200, beside a check that judged the same figures otherwise).
    let table = parse_as(&results, "markdown");
    assert!(
        table.contains("| encode_raw | 36 | 6000 | 34600 |"),
        "{table}"
    );
    assert!(table.contains("max the max of their maxima"), "{table}");
    // --per-run was ignored for BENCH lines: one table per run.
    let per_run = stdout_of(
        latkit()
            .args(["parse", "--per-run", "--format", "markdown"])
            .arg(&results),
    );
    for row in [
        "| encode_raw | 36 | 6000 | 34600 |",
        "| encode_raw | 41 | 6100 | 4400 |",
        "| encode_raw | 38 | 5900 | 28200 |",
    ] {
        assert!(per_run.contains(row), "{row} in {per_run}");
    }
}
