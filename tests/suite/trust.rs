//! Regressions for wrong numbers, crashes on hostile input and lost results (issue 7). Each
//! test failed before its fix.

use crate::common::{latkit, parse_as, parse_json, stdout_of, vector};
use predicates::str::contains;
use std::fs;
use std::io::Write;

fn file_with(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    fs::write(&path, text).unwrap();
    path
}

/// `latkit parse FILE` exits 2 and says `expected`.
fn parse_refused(path: &std::path::Path, expected: &str) {
    latkit()
        .arg("parse")
        .arg(path)
        .assert()
        .code(2)
        .stderr(contains(expected));
}

/// The Xenomai vector's RTS line: 1.485 / 2.711 / 86.141 µs.
const RTS: [&str; 3] = ["1.485", "2.711", "86.141"];

#[test]
fn saved_xenomai_results_report_the_rts_figures_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let with_h = vector("xenomai-latency-h.txt");
    let text = fs::read_to_string(&with_h).unwrap();
    let without_h: String = text
        .lines()
        .filter(|l| !l.starts_with("HS"))
        .map(|l| format!("{l}\n"))
        .collect();
    let without_h = file_with(&dir, "plain.txt", without_h.as_bytes());
    for input in [&with_h, &without_h] {
        let bench = parse_as(input, "bench");
        for (key, value) in ["min", "avg", "max"].iter().zip(RTS) {
            assert!(bench.contains(&format!("{key}={value}us")), "{bench}");
        }
        assert!(bench.contains("overruns=0"), "{bench}");
        assert!(
            !bench.contains("interval_"),
            "series are not figures: {bench}"
        );
        let markdown = parse_as(input, "markdown");
        assert!(
            markdown.contains("| 1485 | 2711 |") && markdown.contains("| 86141 |"),
            "{markdown}"
        );
        let doc = parse_json(input);
        let timer = &doc["runs"][0]["benchmarks"][0]["timer"];
        assert_eq!(timer["min_ns"], 1485);
        assert_eq!(timer["max_ns"], 86141);
        let targets = file_with(
            &dir,
            "t.toml",
            b"[[target]]\nbench = \"latency\"\nmetric = \"max\"\nabove = \"86.1 us\"\nbelow = \"86.2 us\"\n\
              [[target]]\nbench = \"latency\"\nmetric = \"min\"\nbelow = \"1.486 us\"\nabove = \"1.484 us\"\n\
              [[target]]\nbench = \"latency\"\nmetric = \"avg\"\nbelow = \"2.712 us\"\nabove = \"2.710 us\"\n\
              [[target]]\nbench = \"latency\"\nmetric = \"overruns\"\nbelow = 1\n",
        );
        latkit()
            .args(["check", "--targets"])
            .arg(&targets)
            .arg(input)
            .assert()
            .success();
    }
    // Sample counts: every HSD sample with -h; one second of samples per RTD line without.
    assert!(parse_as(&with_h, "bench").contains("samples=49978"));
    assert!(parse_as(&without_h, "bench").contains("samples=40000"));
    // The percentile line never contradicts RTS.
    let xenomai = parse_as(&with_h, "xenomai");
    let pct = xenomai.lines().find(|l| l.starts_with("PCT|")).unwrap();
    assert!(pct.contains("|    86.141|"), "{pct}");
}

#[test]
fn cyclictest_with_every_sample_overflowed_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("# Histogram\n");
    for i in 0..200 {
        text.push_str(&format!("{i:06} 000000\n"));
    }
    text.push_str("# Total: 000000000\n# Min Latencies: 00250\n# Avg Latencies: 00300\n# Max Latencies: 00400\n# Histogram Overflows: 01000\n");
    let path = file_with(&dir, "ct.txt", text.as_bytes());
    let table = parse_as(&path, "markdown");
    assert!(
        table.contains("| thread0 | 1000 | 250000 | 300000 |"),
        "{table}"
    );
    assert!(
        table.contains("1000 of 1000 samples beyond the 200-bucket histogram"),
        "{table}"
    );
}

#[test]
fn each_bench_value_keeps_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(
        &dir,
        "b.txt",
        b"BENCH stage: lat=5ms\nBENCH stage: lat=500us\nBENCH stage: lat=2 MB/s\n",
    );
    let doc = parse_json(&path);
    let values = &doc["runs"][0]["benchmarks"][0]["metrics"][0]["values"];
    assert_eq!(values, &serde_json::json!([5_000_000.0, 500_000.0]));
    latkit()
        .arg("parse")
        .arg(&path)
        .arg("--strict")
        .assert()
        .code(2)
        .stderr(contains("b.txt:3:"))
        .stderr(contains("cannot join"));
}

#[test]
fn gomaxprocs_values_are_attributed_within_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(
        &dir,
        "procs.txt",
        b"BenchmarkDelay/1_Go-Client-Write-1 100 10000 ns/op\n\
          BenchmarkDelay/2_InputDelay-Without-Client-1 100 70000 ns/op\n\
          BenchmarkDelay/3_E2E-InputDelay-1 100 80000 ns/op\n\
          BenchmarkDelay/1_Go-Client-Write-2 100 20000 ns/op\n\
          BenchmarkDelay/2_InputDelay-Without-Client-2 100 60000 ns/op\n\
          BenchmarkDelay/3_E2E-InputDelay-2 100 80000 ns/op\n",
    );
    let md = parse_as(&path, "markdown");
    assert!(
        md.contains("GOMAXPROCS 1") && md.contains("GOMAXPROCS 2"),
        "{md}"
    );
    // procs 2: client 20 µs of an 80 µs end-to-end row is 25 %, not procs 1's 12.5 %.
    assert!(
        md.contains("| 3_E2E-InputDelay | 100 | 80000 | 100.00 | 25.00 | 75.00 |"),
        "{md}"
    );
    assert!(
        md.contains("| 3_E2E-InputDelay | 100 | 80000 | 100.00 | 12.50 | 87.50 |"),
        "{md}"
    );
}

#[test]
fn an_ambiguous_baseline_is_exit_2_naming_the_rows_it_names() {
    // It was the first of the two, with a warning under a table that looked right.
    let out = latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .args(["--format", "markdown", "--baseline", "*E2E*"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("baseline `*E2E*` names 2 benchmarks in Benchmark_Xbox360_Delay")
            && err.contains("3_E2E-InputDelay-8, Benchmark_Xbox360_Delay/4_E2E-PressAndRelease-8"),
        "{err}"
    );
    // Its own name names one.
    let md = stdout_of(
        latkit()
            .arg("parse")
            .arg(vector("viiper-count3.gobench.txt"))
            .args(["--format", "markdown", "--baseline", "*E2E-Press*"]),
    );
    assert!(md.contains("% of 4_E2E-PressAndRelease |"), "{md}");
}

#[test]
fn hostile_timer_inputs_are_bounded_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8]); 6] = [
        ("huge-hsd.txt", b"== Sampling period: 100 us\nHSD|    avg| 1000000000 - 0 | 1\n"),
        ("max-hsd.txt", b"RTS|      1.485|      2.711|     86.141|       0|     0|    00:00:05/00:00:05\nHSD|    avg| 18446744073709551615 - 0 | 1\nHSD|    avg| 4294967295 - 0 | 1\n"),
        ("ct-huge.txt", b"# Histogram\n99999999999 1\n"),
        ("ct-max.txt", b"# Histogram\n18446744073709551615 1\n"),
        ("period.txt", b"== Sampling period: 18446744073709551615 us\nRTD|      1.485|      2.709|     83.739|       0|     0|      1.485|     83.739\n"),
        ("ct-json.json", b"{\"thread\": {\"0\": {\"histogram\": {\"4294967295\": 1}, \"cycles\": 1}}}"),
    ];
    for (name, text) in cases {
        let path = file_with(&dir, name, text);
        let out = latkit()
            .arg("parse")
            .arg(&path)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 2)), "{name}: {code:?}");
        assert!(
            out.stdout.len() < 1 << 20,
            "{name}: {} bytes of output",
            out.stdout.len()
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
    // 10k columns of one cyclictest row: refused, not 10k threads.
    let wide = format!("# Histogram\n00001{}\n", " 1".repeat(10_000));
    let path = file_with(&dir, "wide.txt", wide.as_bytes());
    parse_refused(&path, "more than the 1024 threads");
}

#[test]
fn latkit_json_that_lies_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let doc = parse_json(&vector("viiper-count3.gobench.txt"));
    // Empty values, as a hand edit leaves them.
    let mut empty = doc.clone();
    empty["runs"][0]["benchmarks"][0]["metrics"][0]["values"] = serde_json::json!([]);
    let path = file_with(&dir, "empty.json", empty.to_string().as_bytes());
    latkit().arg("parse").arg(&path).assert().success();
    // A histogram header claiming a 4 GB payload.
    let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    h.record(1000).unwrap();
    let mut bytes = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2Serializer::new(),
        &h,
        &mut bytes,
    )
    .unwrap();
    bytes[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut lying = doc.clone();
    lying["runs"][0]["benchmarks"][0]["metrics"][0]["histogram"] = serde_json::Value::String(
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes),
    );
    let path = file_with(&dir, "lying.json", lying.to_string().as_bytes());
    parse_refused(&path, "claims 4294967295 payload bytes");
    // A metric given twice in one benchmark: analysis would read only the first.
    let mut twice = doc.clone();
    let metric = twice["runs"][0]["benchmarks"][0]["metrics"][0].clone();
    twice["runs"][0]["benchmarks"][0]["metrics"]
        .as_array_mut()
        .unwrap()
        .push(metric);
    let path = file_with(&dir, "twice.json", twice.to_string().as_bytes());
    parse_refused(&path, "the metric `ns/op` appears twice");
    // A schema this latkit does not know (v1 documents are migrated: tests/hostile.rs).
    let mut newer = doc;
    newer["schema"] = serde_json::json!("latkit.result.v9");
    let path = file_with(&dir, "newer.json", newer.to_string().as_bytes());
    parse_refused(&path, "schema `latkit.result.v9` is not `latkit.result.v2`");
}

#[test]
fn non_finite_and_negative_values_are_refused_at_the_edge() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(
        &dir,
        "inf.txt",
        b"BenchmarkA-8 10 1e999 ns/op\nBenchmarkB-8 10 -5 ns/op\nBenchmarkC-8 10 5 ns/op\nBENCH-like line\n",
    );
    let out = latkit()
        .arg("parse")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("inf.txt:1:") && stderr.contains("not a finite one"),
        "{stderr}"
    );
    assert!(
        stderr.contains("inf.txt:2:") && stderr.contains("cannot be negative"),
        "{stderr}"
    );
    // latkit reads back its own file.
    let json = file_with(&dir, "out.json", &out.stdout);
    latkit().arg("parse").arg(&json).assert().success();
}

#[test]
fn merge_keeps_distributions_histograms_and_summaries() {
    let with_h = vector("xenomai-latency-h.txt");
    let doc = crate::common::json_of(
        latkit()
            .arg("parse")
            .arg(&with_h)
            .arg(&with_h)
            .args(["--merge", "--format", "json"]),
    );
    let bench = &doc["runs"][0]["benchmarks"][0];
    assert_eq!(bench["timer"]["samples"], 2 * 49978);
    assert_eq!(bench["metrics"][0]["percentiles"]["count"], 2 * 49978);
    let samples = bench["histograms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["of"] == "samples")
        .unwrap();
    assert_eq!(samples["counts"][2], 2 * 49391);
    assert_eq!(doc["runs"][0]["timer"]["duration_s"], 10);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "a slow writer: its pause is on the real clock; `--features interop` runs it"
)]
fn detection_reads_until_it_has_enough_bytes() {
    let text = fs::read(vector("xenomai-latency-h.txt")).unwrap();
    // A slow writer: the Xenomai lines arrive after a pause.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_latkit"))
        .args(["parse", "-", "--format", "bench"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&text[..10]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    stdin.write_all(&text[10..]).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("BENCH latency: min=1.485us"));
}

#[test]
fn xenomai_format_of_a_result_without_a_timer_is_an_error() {
    latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .args(["--format", "xenomai"])
        .assert()
        .code(2)
        .stderr(contains("--format xenomai prints timer results"));
}

#[test]
fn unrecognised_input_lists_what_latkit_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(&dir, "notes.txt", b"hello world\nnothing here\n");
    latkit()
        .arg("parse")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains(
            "not a format latkit reads (its first line is `hello world`)",
        ))
        .stderr(contains("xenomai, bench"))
        .stderr(contains("cyclictest"))
        .stderr(contains("`latkit parse --help` shows what each looks like"));
}

#[test]
fn an_overlong_line_is_skipped_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = b"BENCH a: x=1us\n".to_vec();
    text.extend(std::iter::repeat_n(b'y', 2 << 20));
    text.extend(b"\nBENCH b: x=2us\n");
    let path = file_with(&dir, "long.txt", &text);
    latkit()
        .arg("parse")
        .arg(&path)
        .args(["--format", "bench"])
        .assert()
        .success()
        .stdout(contains("BENCH b: x=2us"))
        .stderr(contains("long.txt:2: line longer than 1 MiB skipped"));
}

#[test]
fn extreme_flags_are_refused_with_exit_2() {
    let cases: &[&[&str]] = &[
        &[
            "net",
            "loopback",
            "--test",
            "udp-rate",
            "--rate",
            "2000000000",
        ],
        &["net", "loopback", "--test", "udp-rate", "--rate", "0"],
        &[
            "net",
            "loopback",
            "--test",
            "udp-rtt",
            "--count",
            "100000000000",
        ],
        &[
            "net",
            "loopback",
            "--test",
            "tcp-rtt",
            "--duration",
            "1e999",
        ],
        &["net", "loopback", "--test", "tcp-rtt", "--warmup", "-1"],
        &["net", "loopback", "--test", "tcp-rtt", "--token", ""],
        &["net", "server", "--token", ""],
        &["net", "server", "--max-clients", "0"],
        &["timer", "-p", "18446744073709551615"],
        &["timer", "-p", "0"],
        &["timer", "-T", "18446744073709551615"],
        &["timer", "--warmup", "18446744073709551615"],
        &["timer", "-b", "1e999"],
        &["timer", "-m", "-5"],
        &["timer", "-H", "4294967295"],
        &["timer", "-B", "0"],
        &["frame", "--width", "0"],
        &["frame", "--height", "18446744073709551615"],
        &["frame", "--iterations", "0"],
    ];
    for args in cases {
        latkit().args(*args).assert().code(2);
    }
}

#[test]
fn check_shows_skipped_lines_and_fails_on_them_with_strict() {
    let dir = tempfile::tempdir().unwrap();
    let results = file_with(
        &dir,
        "r.txt",
        b"BENCH encode_raw: min=36us avg=38us max=715us\nBENCH encode_raw: avg=fast\n",
    );
    let targets = file_with(
        &dir,
        "t.toml",
        b"[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"5 ms\"\n",
    );
    latkit()
        .args(["check", "--targets"])
        .arg(&targets)
        .arg(&results)
        .assert()
        .success()
        .stdout(contains("1 input line(s) could not be read"))
        .stdout(contains("r.txt:2:"));
    let out = latkit()
        .args(["check", "--strict", "--targets"])
        .arg(&targets)
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("r.txt:2:") && stderr.contains("(--strict)"),
        "{stderr}"
    );
    assert!(!stderr.contains("skipped"), "{stderr}");
}

#[test]
fn a_full_disk_leaves_no_truncated_report() {
    // A 16 KiB filesystem cannot hold the JSON of this input (needs root to mount).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new(crate::common::peer("mount", "apt-get install mount"))
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(mounted.success());
    let target = dir.path().join("r.json");
    fs::write(&target, "previous report").unwrap();
    let out = latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .arg(vector("viiper-steamdeck.gobench.txt"))
        .args(["--format", "json", "--out"])
        .arg(&target)
        .output()
        .unwrap();
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let previous = fs::read_to_string(&target).unwrap();
    let _ = std::process::Command::new(crate::common::peer("umount", "apt-get install mount"))
        .arg(dir.path())
        .status();
    // A full disk is the output's failure (exit 4), never "bad input" (2).
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("r.json"));
    assert_eq!(previous, "previous report");
    assert_eq!(left.len(), 1, "no partial file is left: {left:?}");
}

#[test]
fn outputs_are_checked_before_measuring() {
    for flag in ["--out", "--hgrm"] {
        latkit()
            .args(["timer", "-T", "3600", flag, "/nonexistent/dir/x"])
            .assert()
            .code(4)
            .stdout("")
            .stderr(contains("/nonexistent/dir/x"));
    }
    latkit()
        .args(["frame", "--out", "/nonexistent/dir/x"])
        .assert()
        .code(4)
        .stderr(contains("/nonexistent/dir/x"));
}

#[test]
fn invalid_utf8_in_targets_and_suite_files_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = file_with(
        &dir,
        "t.toml",
        b"[[target]]\nbench = \"a\"\nmetric = \"\xff\xfe\"\n",
    );
    latkit()
        .args(["check", "--targets"])
        .arg(&bad)
        .arg(vector("rootstream-bench.txt"))
        .assert()
        .code(2)
        .stderr(contains("t.toml:3: not valid UTF-8"));
    latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .arg("--suite")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(contains("t.toml:3: not valid UTF-8"));
}

#[test]
fn a_named_pipe_is_read_once_whatever_its_format() {
    // A FIFO can be read only once: detection must not cost the Go reader its start.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let text = fs::read(vector("viiper-count3.gobench.txt")).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(fifo, text))
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_latkit"))
        .args(["parse", "--format", "bench"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let limit = std::time::Duration::from_secs(20);
    if wait_timeout::ChildExt::wait_timeout(&mut child, limit)
        .unwrap()
        .is_none()
    {
        let _ = child.kill();
        panic!("latkit waited for a second reading of the pipe");
    }
    writer.join().unwrap().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 4, "{text}");
}

#[test]
fn a_configuration_change_midway_keeps_both_values_apart() {
    let dir = tempfile::tempdir().unwrap();
    // Small enough to read in one piece, and large enough (> 16 MiB) for parallel pieces.
    for repeats in [1, 120_000] {
        let block = |commit: &str, ns: u32| {
            format!(
                "commit: {commit}\n{}",
                format!("BenchmarkA-8 100 {ns} ns/op\n").repeat(repeats)
            )
        };
        let text = format!(
            "goos: linux\n{}{}{}",
            block("aaa", 10),
            block("bbb", 20),
            block("aaa", 10)
        );
        let path = file_with(&dir, "commits.txt", text.as_bytes());
        let doc = parse_json(&path);
        let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
        assert_eq!(benches.len(), 2, "{repeats}");
        assert_eq!(doc["runs"][0]["config"][1]["value"], "aaa");
        let (a, b) = (&benches[0], &benches[1]);
        assert!(a.get("config").is_none());
        assert_eq!(
            a["metrics"][0]["values"].as_array().unwrap().len(),
            2 * repeats
        );
        assert!(
            a["metrics"][0]["values"]
                .as_array()
                .unwrap()
                .iter()
                .all(|v| v == 10.0)
        );
        assert_eq!(b["config"][0]["value"], "bbb");
        assert!(
            b["metrics"][0]["values"]
                .as_array()
                .unwrap()
                .iter()
                .all(|v| v == 20.0)
        );
        if repeats == 1 {
            let md = parse_as(&path, "markdown");
            assert!(md.contains("### commit: bbb"), "{md}");
        }
    }
}

#[test]
fn every_result_command_shares_the_output_flags() {
    // parse gates like a probe: the report on stdout, the verdict on stderr, exit 1 on a miss.
    latkit()
        .arg("parse")
        .arg(vector("rootstream-bench.txt"))
        .arg("--check")
        .arg(crate::common::fixture("check/rootstream-targets.toml"))
        .assert()
        .success()
        .stdout(contains("encode_raw"))
        .stderr(contains("✅ Pass"));
    let dir = tempfile::tempdir().unwrap();
    let strict = file_with(
        &dir,
        "t.toml",
        b"[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"1 us\"\n",
    );
    let json = dir.path().join("r.json");
    latkit()
        .arg("parse")
        .arg(vector("rootstream-bench.txt"))
        .arg("--check")
        .arg(&strict)
        .arg("--json")
        .arg(&json)
        .assert()
        .code(1)
        .stderr(contains("❌ Fail"));
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["verdict"]["targets"][0]["status"], "fail");
}

#[test]
fn values_too_large_for_base_units_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, expected) in [
        (
            "go.txt",
            "BenchmarkA 10 5 ns/op\nBenchmarkX 10 1e305 s/op\n",
            "go.txt:2: `1e305 s/op` is too large to store in base units",
        ),
        (
            "bench.txt",
            "BENCH a: x=3 s\nBENCH a: x=1e305 s\n",
            "bench.txt:2: `x` = 1e305 s is too large to store in base units",
        ),
    ] {
        let path = file_with(&dir, name, text.as_bytes());
        let out = latkit()
            .arg("parse")
            .arg(&path)
            .args(["--format", "json"])
            .assert()
            .success()
            .stderr(contains(expected));
        let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert!(
            !doc.to_string().contains("null"),
            "no value became infinite: {doc}"
        );
    }
}

/// A token file that holds no secret, is no regular file, or is as readable as a command line
/// is named before anything listens or connects; an empty `LATKIT_TOKEN` is no token.
#[test]
fn a_token_file_that_holds_no_secret_is_refused_by_name() {
    use predicates::prelude::PredicateBooleanExt;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let empty = file_with(&dir, "empty", b"\n  \n");
    let net = |args: &[&str]| {
        let mut cmd = latkit();
        cmd.args(["net", "loopback", "--test", "tcp-rtt", "--count", "1"])
            .args(args)
            .env_remove("LATKIT_TOKEN");
        cmd
    };
    net(&["--token-file", empty.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("empty: the token is empty"));
    net(&["--token-file", "/dev/zero"])
        .assert()
        .code(2)
        .stderr(contains("not a regular file"));
    net(&["--token-file", empty.to_str().unwrap(), "--token", "x"])
        .assert()
        .code(2)
        .stderr(contains("cannot be used with"));
    latkit()
        .args(["net", "server", "--bind", "127.0.0.1:0"])
        .env("LATKIT_TOKEN", " ")
        .assert()
        .code(2)
        .stderr(contains("LATKIT_TOKEN: the token is empty"));
    let open = file_with(&dir, "open", b"s3cret\n");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = dir.path().join("r.json");
    // A server on a port nobody listens on: the warning comes first, then the connection fails.
    latkit()
        .args([
            "net",
            "client",
            "127.0.0.1:9",
            "--test",
            "tcp-rtt",
            "--count",
            "1",
        ])
        .args(["--token-file", open.to_str().unwrap(), "--json"])
        .arg(&out)
        .assert()
        .stderr(contains("other users may read this token (mode 644)"))
        .stderr(contains("s3cret").not());
}
