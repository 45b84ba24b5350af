//! `latkit timer` end to end: structure and invariants, never timings.

use crate::common::{json_of, latkit, metric};
use predicates::prelude::*;
use serde_json::Value;
use std::fs;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// Timers that sleep between wake-ups may run side by side (these tests check structure and
/// invariants, which hold under load; run one by one they were the suite's last, idle minute);
/// one that busy-waits on every CPU runs alone.
static TIMERS: RwLock<()> = RwLock::new(());

fn sleeping_timer() -> RwLockReadGuard<'static, ()> {
    TIMERS.read().unwrap_or_else(|p| p.into_inner())
}

fn timer_alone() -> RwLockWriteGuard<'static, ()> {
    TIMERS.write().unwrap_or_else(|p| p.into_inner())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Every period of the test is a sample or an overrun (a wake-up later than the next period
/// skips the periods it missed, as `-T` is time).
/// The last sample may be late enough to skip periods past the end (at most its latency's
/// worth; every period here is 100 µs or longer).
fn samples_of(timer: &Value, periods: u64) -> u64 {
    let samples = timer["samples"].as_u64().unwrap();
    let overruns = timer["overruns"].as_u64().unwrap();
    let late = timer["max_ns"].as_u64().unwrap() / 100_000;
    assert!(
        (periods..=periods + late).contains(&(samples + overruns)),
        "{periods} periods: {timer}"
    );
    samples
}

fn check_distribution(bench: &Value, periods: u64) {
    let latency = &bench["metrics"][0];
    assert_eq!(latency["name"], "latency");
    assert!(latency["histogram"].is_string(), "serialized HDR histogram");
    let p = &latency["percentiles"];
    assert_eq!(p["count"], samples_of(&bench["timer"], periods));
    let order = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"];
    for pair in order.windows(2) {
        assert!(
            f(&p[pair[0]]) <= f(&p[pair[1]]),
            "{} > {}: {p}",
            pair[0],
            pair[1]
        );
    }
    assert!(f(&p["min"]) >= 0.0);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn two_seconds_at_1000_us_structure_and_invariants() {
    let _turn = sleeping_timer();
    let doc = json_of(latkit().args([
        "timer", "-T", "2", "-p", "1000", "--format", "json", "-q", "-s", "--warmup", "1",
    ]));
    let run = &doc["runs"][0];
    let timer = &run["timer"];
    assert_eq!(timer["period_ns"], 1_000_000);
    assert_eq!(timer["duration_s"], 2);
    assert_eq!(timer["requested_s"], 2);
    assert_eq!(timer["method"], "nanosleep");
    assert_eq!(run["environment"]["captured"], true);
    let bench = &run["benchmarks"][0];
    assert_eq!(bench["name"], "thread0");
    // Every recorded sample belongs to one of the two reported seconds.
    check_distribution(bench, 2000);
    let (mins, avgs, maxs) = (
        metric(bench, "interval_min"),
        metric(bench, "interval_avg"),
        metric(bench, "interval_max"),
    );
    assert_eq!(
        mins["values"].as_array().unwrap().len(),
        2,
        "one value per second"
    );
    for k in 0..2 {
        let (lo, mid, hi) = (
            f(&mins["values"][k]),
            f(&avgs["values"][k]),
            f(&maxs["values"][k]),
        );
        assert!(lo <= mid && mid <= hi, "second {k}: {lo} {mid} {hi}");
    }
    let overall = &timer["overall"];
    let p = &bench["metrics"][0]["percentiles"];
    assert_eq!(f(&overall["min_ns"]), f(&mins["summary"]["min"]));
    assert_eq!(f(&overall["max_ns"]), f(&maxs["summary"]["max"]));
    // HDR keeps 3 significant digits: its max is within 0.1% of the exact one.
    assert!((f(&p["max"]) - f(&overall["max_ns"])).abs() <= f(&overall["max_ns"]) * 0.001 + 1.0);
    // -s: the fixed-bucket statistics count the same samples as the distribution.
    let hists = bench["histograms"].as_array().unwrap();
    let samples = hists.iter().find(|h| h["of"] == "samples").unwrap();
    assert_eq!(samples["reported"]["samples"], p["count"]);
    let per_second_min = hists.iter().find(|h| h["of"] == "interval_min").unwrap();
    assert_eq!(per_second_min["reported"]["samples"], 2);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn xenomai_output_histograms_gnuplot_and_hgrm() {
    let _turn = sleeping_timer();
    let dir = tempfile::tempdir().unwrap();
    let (gp, hg) = (dir.path().join("lat.gp"), dir.path().join("lat.hgrm"));
    let out = crate::common::stdout_of(
        latkit()
            .args([
                "timer", "-T", "2", "-p", "500", "-h", "-H", "100", "-l", "1", "--timer",
                "timerfd", "-g",
            ])
            .arg(&gp)
            .arg("--hgrm")
            .arg(&hg),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "== Sampling period: 500 us");
    assert_eq!(lines[1], "== Test mode: periodic user-mode task");
    assert_eq!(lines[2], "== All results in microseconds");
    assert_eq!(lines[3], "warming up...");
    assert!(
        lines[4]
            .starts_with("RTT|  00:00:01  (periodic user-mode task, 500 us period, priority 99)")
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("RTD|")).count(), 2);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("RTT|")).count(),
        2,
        "-l 1: a header per line"
    );
    for rtd in lines.iter().filter(|l| l.starts_with("RTD|")) {
        assert_eq!(rtd.len(), 4 + 11 * 3 + 8 + 6 + 11 * 2 + 6, "{rtd}");
    }
    // 4,000 periods of 500 µs on 2 CPUs: each a sample or an overrun (RTS's fifth field).
    let rts = lines.iter().find(|l| l.starts_with("RTS|")).unwrap();
    let overruns: u64 = rts.split('|').nth(4).unwrap().trim().parse().unwrap();
    let samples = (4000 - overruns).to_string();
    let hss_avg = lines
        .iter()
        .find(|l| l.starts_with("HSS|    avg|"))
        .unwrap();
    assert_eq!(hss_avg.split('|').nth(2).unwrap().trim(), samples);
    let hsd_total: u64 = lines
        .iter()
        .filter(|l| l.starts_with("HSD|    avg|"))
        .map(|l| l.rsplit('|').next().unwrap().trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        hsd_total.to_string(),
        samples,
        "histogram totals equal the sample count"
    );
    assert!(rts.ends_with("|    00:00:02/00:00:02"), "{rts}");
    let pct = lines.iter().find(|l| l.starts_with("PCT|")).unwrap();
    assert_eq!(pct.rsplit('|').next().unwrap().trim(), samples);

    let gnuplot = fs::read_to_string(&gp).unwrap();
    let points: Vec<(f64, u64)> = gnuplot
        .lines()
        .map(|l| {
            let (x, y) = l.split_once(' ').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
    let counted: u64 = points[1..points.len() - 1].iter().map(|p| p.1 - 1).sum();
    assert_eq!(counted.to_string(), samples);

    let hgrm = fs::read_to_string(&hg).unwrap();
    assert!(hgrm.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"));
    assert!(
        hgrm.contains(&format!("Total count    = {samples:>12}]")),
        "{hgrm}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn several_cpus_and_busy_wait() {
    let _turn = timer_alone();
    let doc = json_of(latkit().args([
        "timer", "-T", "1", "-p", "1000", "-c", "all", "--timer", "busy", "--format", "json", "-q",
    ]));
    let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    if cpus > 1 {
        assert_eq!(benches.len(), cpus + 1, "one per CPU plus all combined");
        assert_eq!(benches[cpus]["name"], "all");
        check_distribution(&benches[cpus], 1000 * cpus as u64);
    }
    check_distribution(&benches[0], 1000);
    assert_eq!(benches[0]["name"], "cpu0");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn interrupt_writes_a_complete_result_and_exits_130() {
    let _turn = sleeping_timer();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("timer.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args([
            "timer", "-T", "0", "-p", "1000", "--format", "json", "-q", "--out",
        ])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Let it measure a few seconds; the file appears only at the end.
    std::thread::sleep(Duration::from_millis(3500));
    crate::common::interrupt_expecting_130(child);
    let doc: Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let timer = &doc["runs"][0]["timer"];
    assert_eq!(timer["requested_s"], 0);
    assert!(f(&timer["duration_s"]) >= 1.0);
    let p = &doc["runs"][0]["benchmarks"][0]["metrics"][0]["percentiles"];
    assert!(f(&p["count"]) >= 1000.0);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn max_and_break_thresholds_exit_1() {
    let _turn = sleeping_timer();
    latkit()
        .args(["timer", "-T", "1", "-p", "1000", "-q", "-m", "0.001"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("RTS|"))
        .stderr(predicate::str::contains("exceeded --max 0.001"));
    let assert = latkit()
        .args([
            "timer", "-T", "5", "-p", "1000", "-b", "0.001", "--format", "json", "-q",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("break: thread 0 woke"));
    let doc: Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    let hit = &doc["runs"][0]["timer"]["break_hit"];
    assert_eq!(hit["thread"], 0);
    assert!(f(&hit["latency_ns"]) > 1.0);
}

#[test]
fn bad_arguments_exit_2() {
    latkit()
        .args(["timer", "-c", "999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("CPU 999 is not online (online: 0"));
    latkit().args(["timer", "-P", "100"]).assert().code(2);
    latkit()
        .args(["timer", "-p", "0", "-T", "1"])
        .assert()
        .code(2);
    latkit()
        .args(["timer", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("-h, --histogram"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn doctor_prints_every_check_with_advice_for_problems() {
    let text = crate::common::stdout_of(latkit().arg("doctor"));
    let status_lines: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(status_lines.len(), 14, "{text}");
    for line in &status_lines {
        let status = line.split_whitespace().next().unwrap();
        assert!(["ok", "warn", "fail"].contains(&status), "{line}");
    }
    let problems = status_lines.iter().filter(|l| !l.starts_with("ok")).count();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with('→'))
            .count(),
        problems
    );
    for name in [
        "sched_fifo",
        "mlock",
        "cpu_dma_latency",
        "preempt_rt",
        "clocksource",
        "cpufreq",
        "smt",
        "isolation",
        "rt_throttling",
        "timerlat",
        "virtualization",
        "load",
        "irqbalance",
        "input_devices",
    ] {
        assert!(text.contains(name), "missing {name}");
    }
    let json = json_of(latkit().args(["doctor", "--format", "json"]));
    let checks = json.as_array().unwrap();
    assert_eq!(checks.len(), 14);
    assert!(
        checks
            .iter()
            .all(|c| c["status"].is_string() && c["found"].is_string())
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn measurements_record_the_doctor_checks() {
    let _turn = sleeping_timer();
    let doc = json_of(latkit().args(["timer", "-T", "1", "-p", "1000", "--format", "json", "-q"]));
    let checks = doc["runs"][0]["environment"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 14);
    assert!(checks.iter().any(|c| c["name"] == "preempt_rt"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn freeze_trace_marks_the_kernel_trace_or_says_why_not() {
    let _turn = sleeping_timer();
    let tracing_on = "/sys/kernel/tracing/tracing_on";
    let before = fs::read_to_string(tracing_on).unwrap_or_else(|_| "1".into());
    let assert = latkit()
        .args(["timer", "-T", "1", "-p", "1000", "-q", "-f"])
        .assert()
        .success();
    let out = assert.get_output();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if stderr.contains("--freeze-trace failed") {
        assert!(stderr.contains("tracefs"), "{stderr}");
        return;
    }
    assert!(stdout.contains("# note: --freeze-trace: "), "{stdout}");
    let root = "/sys/kernel/tracing";
    let trace = fs::read_to_string(format!("{root}/snapshot"))
        .or_else(|_| fs::read_to_string(format!("{root}/trace")))
        .unwrap();
    assert!(
        trace.contains("latkit: new max latency"),
        "no marker in the trace"
    );
    // Leave tracing as the test found it.
    let _ = fs::write(tracing_on, before.trim());
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn missing_privileges_are_warned_once_and_measuring_goes_on() {
    let _turn = sleeping_timer();
    // Drop to an unprivileged user: no SCHED_FIFO, no /dev/cpu_dma_latency, small memlock.
    // The binary is copied where that user can reach it, wherever this checkout lives.
    let nobody = crate::common::Nobody::new();
    // One thread and one per CPU: every measuring thread starts within the user's 8 MiB
    // RLIMIT_MEMLOCK (locking future memory made thread creation fail).
    for cpus in [&[][..], &["-c", "all"][..]] {
        let out = nobody
            .latkit()
            .args(["timer", "-T", "1", "-p", "1000", "--format", "json"])
            .args(cpus)
            .output()
            .expect("setpriv (util-linux) is installed");
        assert!(
            out.status.success(),
            "{cpus:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warning = "SCHED_FIFO priority 99 failed";
        assert_eq!(stderr.matches(warning).count(), 1, "warned once: {stderr}");
        assert!(
            stderr.contains("expect higher and noisier latencies"),
            "{stderr}"
        );
        assert!(stderr.contains("/dev/cpu_dma_latency"), "{stderr}");
        assert!(stderr.contains("RLIMIT_MEMLOCK"), "{stderr}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
        let threads = if cpus.is_empty() {
            1
        } else {
            benches.len() - 1
        };
        let last = benches.last().unwrap();
        let samples = samples_of(&last["timer"], 1000 * threads as u64);
        assert_eq!(last["metrics"][0]["percentiles"]["count"], samples);
        let notes = doc["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n["message"].as_str().unwrap().contains(warning))
        );
    }
    // -q: only the result; the warnings stay in the report.
    let out = nobody
        .latkit()
        .args(["timer", "-T", "1", "-p", "1000", "--format", "json", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["notes"]
            .to_string()
            .contains("SCHED_FIFO priority 99 failed")
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn a_reader_that_goes_away_ends_an_endless_run_quietly() {
    let _turn = sleeping_timer();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["timer", "-T", "0", "-p", "1000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert_eq!(&first, b"== Sampling peri");
    drop(child.stdout.take());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still measuring after its reader left"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn several_sinks_at_once_from_one_run() {
    let _turn = sleeping_timer();
    // Xenomai's text live on stdout, the JSON, the .hgrm and the gnuplot file from one run.
    let dir = tempfile::tempdir().unwrap();
    let (json, hgrm, plot) = (
        dir.path().join("r.json"),
        dir.path().join("r.hgrm"),
        dir.path().join("r.plot"),
    );
    let out = latkit()
        .args(["timer", "-T", "1", "-p", "1000", "--json"])
        .arg(&json)
        .arg("--hgrm")
        .arg(&hgrm)
        .arg("-g")
        .arg(&plot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("== Sampling period: 1000 us\n"), "{text}");
    let doc: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let samples = samples_of(&doc["runs"][0]["benchmarks"][0]["timer"], 1000);
    let pct = text.lines().find(|l| l.starts_with("PCT|")).unwrap();
    assert!(pct.trim_end().ends_with(&samples.to_string()), "{pct}");
    let hgrm = fs::read_to_string(&hgrm).unwrap();
    assert!(
        hgrm.contains(&format!("Total count    = {samples:>12}]")),
        "{hgrm}"
    );
    let plot = fs::read_to_string(&plot).unwrap();
    let counted: u64 = plot
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|n| n - 1)
        .sum();
    assert_eq!(
        counted, samples,
        "gnuplot buckets hold every sample (+1 each)"
    );
}

/// `-h` is the histogram, as in Xenomai and cyclictest; someone who meant help is told at
/// once, before the endless test gets going, how to get help and how to stop.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn dash_h_says_at_once_that_it_is_the_histogram() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["timer", "-h", "-p", "1000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    crate::common::interrupt_expecting_130(child);
    assert!(
        first.contains("-h is --histogram") && first.contains("--help") && first.contains("Ctrl-C"),
        "{first}"
    );
    // With a duration, or -q, nothing is said.
    let out = latkit()
        .args(["timer", "-h", "-T", "1", "-p", "1000"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("-h is --histogram"));
}

/// On a terminal, a warning said on stderr as the test starts (SCHED_FIFO refused to an
/// unprivileged user) is not printed again in the report at the end; piped, the report
/// still carries it. The terminal is a real pty (`script`).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn a_warning_is_shown_once_on_a_terminal() {
    // A copy in an open folder: the checkout may be under /root, out of that user's reach.
    let nobody = crate::common::Nobody::new();
    let latkit = &nobody.binary;
    let setpriv = crate::common::peer("setpriv", "apt-get install util-linux");
    let unprivileged = format!(
        "{} --reuid=65534 --regid=65534 --clear-groups {} timer -T 1 -p 1000",
        setpriv.display(),
        latkit.display()
    );
    let refused = "SCHED_FIFO priority 99 failed";
    for format in ["xenomai", "table"] {
        let out =
            std::process::Command::new(crate::common::peer("script", "apt-get install bsdutils"))
                .args([
                    "-qec",
                    &format!("{unprivileged} --format {format}"),
                    "/dev/null",
                ])
                .output()
                .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{format}: {text}");
        assert_eq!(text.matches(refused).count(), 1, "{format}: {text}");
    }
    let piped = std::process::Command::new(&setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(latkit)
        .args(["timer", "-T", "1", "-p", "1000", "--format", "table"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&piped.stdout).contains(refused));
    assert!(String::from_utf8_lossy(&piped.stderr).contains(refused));
}

/// When SCHED_FIFO is refused (an unprivileged user), the warning comes before the header,
/// not between RTD lines, and the header and the run name the priority in force: 0.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn a_refused_priority_is_said_first_and_not_claimed() {
    // A copy in an open folder: the checkout may be under /root, out of that user's reach.
    let nobody = crate::common::Nobody::new();
    let out =
        std::process::Command::new(crate::common::peer("setpriv", "apt-get install util-linux"))
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sh",
                "-c",
            ])
            .arg(format!(
                "{} timer -T 1 -p 1000 2>&1",
                nobody.binary.display()
            ))
            .output()
            .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let refused = text.find("SCHED_FIFO priority 99 failed").expect(&text);
    let header = text.find("== Sampling period").expect(&text);
    assert!(refused < header, "{text}");
    assert!(text.contains("period, priority 0)"), "{text}");
    assert!(!text.contains("priority 99)"), "{text}");
}

/// `--timer busy` at SCHED_FIFO runs into the kernel's RT throttling (a 50 ms stall each
/// second here): said before the test, with the sysctl that lifts it; not said when
/// SCHED_FIFO is refused (nothing is throttled then) or when the thread sleeps.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn rt_throttling_of_a_busy_thread_is_warned() {
    let _turn = timer_alone();
    let limit = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap();
    let stderr_of = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let busy = [
        "timer", "--timer", "busy", "-T", "1", "-p", "1000", "--format", "json",
    ];
    let root = stderr_of(crate::common::latkit().args(busy).output().unwrap());
    let throttled = "RT throttling (kernel.sched_rt_runtime_us = ";
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && limit.trim() != "-1" {
        assert!(root.contains(throttled), "{root}");
        assert!(
            root.contains("sysctl kernel.sched_rt_runtime_us=-1"),
            "{root}"
        );
    }
    let sleeping = ["timer", "-T", "1", "-p", "1000", "--format", "json"];
    assert!(
        !stderr_of(crate::common::latkit().args(sleeping).output().unwrap()).contains(throttled)
    );
    let unprivileged = stderr_of(
        std::process::Command::new(crate::common::peer("setpriv", "apt-get install util-linux"))
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .args(busy)
            .output()
            .unwrap(),
    );
    assert!(!unprivileged.contains(throttled), "{unprivileged}");
}
