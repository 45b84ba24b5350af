//! `latkit frame`: output invariants, bad arguments, gating and BENCH output.

use crate::common::{first_value, json_of, latkit, metric, stdout_of};
use predicates::prelude::*;

#[test]
fn copy_and_convert_invariants() {
    for (op, pixfmt, bytes) in [
        ("copy", "nv12", 1_382_400.0),
        ("copy", "rgba", 3_686_400.0),
        ("convert", "i420", 1_382_400.0),
    ] {
        let doc = json_of(latkit().args([
            "frame",
            "--op",
            op,
            "--pixfmt",
            pixfmt,
            "--iterations",
            "40",
            "--warmup",
            "5",
            "--format",
            "json",
        ]));
        let bench = &doc["runs"][0]["benchmarks"][0];
        assert_eq!(bench["name"], format!("frame/{op}/{pixfmt}/1280x720"));
        assert_eq!(first_value(bench, "frame_bytes"), bytes);
        let p = &metric(bench, "time")["percentiles"];
        assert_eq!(p["count"], 40);
        let (min, p50, max) = (
            p["min"].as_f64().unwrap(),
            p["p50"].as_f64().unwrap(),
            p["max"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= p50 && p50 <= max);
        // Bandwidth is bytes over the mean time, so it lies between the extremes' rates.
        let bandwidth = first_value(bench, "bandwidth");
        let slack = 1.01; // HDR's 3 significant digits
        assert!(
            bandwidth <= bytes / (min * 1e-9) * slack && bandwidth >= bytes / (max * 1e-9) / slack,
            "{bandwidth}"
        );
        assert_eq!(metric(bench, "bandwidth")["unit"]["dimension"], "byte_rate");
        // A conversion says which converter ran, as a note and in the run's settings.
        let converter = fastest_converter();
        let config = doc["runs"][0]["config"].to_string();
        let notes = doc["notes"].to_string();
        let in_config = config.contains(&format!("\"converter\",\"value\":\"{converter}\""));
        let in_notes = notes.contains(&format!("converter: {converter}"));
        assert_eq!(
            (in_config, in_notes),
            (op == "convert", op == "convert"),
            "{config}\n{notes}"
        );
    }
}

/// The converter `--converter auto` should pick on this CPU.
fn fastest_converter() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
    {
        return "avx512";
    } else if std::arch::is_x86_feature_detected!("avx2") {
        return "avx2";
    } else {
        return "sse2";
    }
    #[allow(unreachable_code)]
    "scalar"
}

#[test]
fn a_converter_can_be_chosen_by_name() {
    let names: &[&str] = if cfg!(target_arch = "x86_64") {
        &["scalar", "sse2", fastest_converter()]
    } else {
        &["scalar"]
    };
    for &name in names {
        let doc = json_of(latkit().args([
            "frame",
            "--op",
            "convert",
            "--converter",
            name,
            "--iterations",
            "5",
            "--format",
            "json",
        ]));
        let notes = doc["notes"].to_string();
        assert!(notes.contains(&format!("converter: {name}")), "{notes}");
    }
    latkit()
        .args(["frame", "--op", "convert", "--converter", "neon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("auto, scalar, sse2, avx2, avx512"));
}

#[test]
fn bad_frames_exit_2() {
    latkit()
        .args(["frame", "--op", "convert", "--pixfmt", "rgba"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to convert"));
    latkit()
        .args(["frame", "--width", "1281"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("even"));
    latkit()
        .args(["frame", "--iterations", "0"])
        .assert()
        .code(2);
}

#[test]
fn frame_gates_itself_and_prints_bench_lines() {
    let dir = tempfile::tempdir().unwrap();
    let targets = dir.path().join("t.toml");
    std::fs::write(&targets, "[[target]]\nbench = \"frame/copy/*\"\nmetric = \"bandwidth\"\nabove = \"1 MB/s\"\n\n[[target]]\nbench = \"frame/copy/*\"\nmetric = \"p99\"\nbelow = \"1 s\"\n").unwrap();
    let out = latkit()
        .args([
            "frame",
            "--iterations",
            "20",
            "--format",
            "bench",
            "--check",
        ])
        .arg(&targets)
        .assert()
        .success()
        .stderr(predicate::str::contains("✅ Pass"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("BENCH frame/copy/nv12/1280x720: min="),
        "{text}"
    );
    let back = stdout_of(
        latkit()
            .args(["parse", "-", "--format", "json"])
            .write_stdin(text),
    );
    assert!(back.contains("\"name\": \"frame/copy/nv12/1280x720\""));
}

#[test]
fn the_readme_frame_check_example_is_measured() {
    // README: `latkit frame --op convert --check tests/fixtures/check/frame-targets.toml`.
    let out = latkit()
        .args(["frame", "--op", "convert", "--iterations", "20", "--check"])
        .arg(crate::common::fixture("check/frame-targets.toml"))
        .output()
        .unwrap();
    let verdict = String::from_utf8_lossy(&out.stderr);
    assert!(!verdict.contains("Not measured"), "{verdict}");
    assert_eq!(
        verdict.matches("frame/convert/nv12/1280x720").count(),
        2,
        "{verdict}"
    );
    // Exit 0 or 1 (a slow machine may miss 60 fps), never a usage error.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{verdict}");
}

#[test]
fn one_table_shows_a_frame_stage_with_no_repetition_note() {
    // Bandwidth and frame size were tables of their own too, and a note asked for 6
    // repetitions of a distribution of 1000 samples.
    let out = stdout_of(latkit().args([
        "frame",
        "--iterations",
        "40",
        "--warmup",
        "5",
        "--format",
        "markdown",
    ]));
    assert_eq!(out.matches("| Benchmark |").count(), 1, "{out}");
    assert!(out.contains("| bandwidth (B/s) |"), "{out}");
    assert!(!out.contains("repetitions, have 0"), "{out}");
}
