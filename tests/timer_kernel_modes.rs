//! `latkit timer -t 1|2`: the kernel's timerlat tracer driven through tracefs. This kernel has
//! no timerlat (`available_tracers` is `blk function nop`), so the real test here is the
//! refusal; the control logic (set-up, the sampling loop, restoring on every way out) runs
//! against a directory laid out like tracefs, whose `trace_pipe` is a FIFO the test writes
//! timerlat's lines into, as the kernel would.

mod common;

use common::{Job, latkit};
use predicates::prelude::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The control files latkit may touch, with what a fresh kernel holds.
const FOUND: [(&str, &str); 6] = [
    ("tracing_on", "1"),
    ("current_tracer", "nop"),
    ("osnoise/cpus", "0-1"),
    ("osnoise/timerlat_period_us", "1000"),
    ("osnoise/stop_tracing_us", "0"),
    ("osnoise/stop_tracing_total_us", "0"),
];

/// A tracefs double: the control files as found, `available_tracers` with timerlat, and a
/// `trace_pipe` FIFO.
struct FakeTracefs {
    dir: tempfile::TempDir,
}

impl FakeTracefs {
    fn new() -> FakeTracefs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("osnoise")).unwrap();
        std::fs::write(
            dir.path().join("available_tracers"),
            "timerlat osnoise function nop\n",
        )
        .unwrap();
        for (file, value) in FOUND {
            std::fs::write(dir.path().join(file), format!("{value}\n")).unwrap();
        }
        nix::unistd::mkfifo(
            &dir.path().join("trace_pipe"),
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .unwrap();
        FakeTracefs { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.root().join(file))
            .unwrap()
            .trim_end()
            .to_string()
    }

    /// Every control file holds what it held before latkit ran.
    fn assert_as_found(&self) {
        for (file, value) in FOUND {
            assert_eq!(self.read(file), value, "{file} was not restored");
        }
    }

    /// Opens `trace_pipe` for writing once latkit has opened it for reading (bounded wait).
    fn pipe_writer(&self) -> std::fs::File {
        use std::os::unix::fs::OpenOptionsExt;
        let path: PathBuf = self.root().join("trace_pipe");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            // Without a reader a non-blocking open fails (ENXIO): latkit has not opened it yet.
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&path)
            {
                Ok(file) => {
                    // Writes block again, as the kernel's reader drains them.
                    nix::fcntl::fcntl(
                        &file,
                        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
                    )
                    .unwrap();
                    return file;
                }
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(e) => panic!("latkit never opened trace_pipe: {e}"),
            }
        }
    }
}

/// Thread latency of activation `i` on `cpu` (ns): a spread of 3–3.99 µs, and on CPU 0 one
/// spike of 250 µs at activation 1500.
fn thread_ns(cpu: usize, i: usize) -> u64 {
    if cpu == 0 && i == 1500 {
        250_000
    } else {
        3000 + (i % 100) as u64 * 10 + cpu as u64
    }
}

/// IRQ latency of activation `i` (ns): 500–506 ns.
fn irq_ns(i: usize) -> u64 {
    500 + (i % 7) as u64
}

/// timerlat's lines for activations `range` on CPUs 0 and 1, in the kernel's format, with an
/// osnoise event between them as a real trace has.
fn lines(range: std::ops::Range<usize>) -> String {
    let mut text = String::new();
    for i in range {
        for cpu in 0..2 {
            let id = i + 1;
            text += &format!(
                "          <idle>-0       [{cpu:03}] d.h1    54.{i:06}: #{id:<5} context    irq timer_latency {:>9} ns\n",
                irq_ns(i)
            );
            text += &format!(
                "          <idle>-0       [{cpu:03}] dNh2.    54.{i:06}: irq_noise: local_timer:236 start 54.{i:06}0 duration 700 ns\n"
            );
            text += &format!(
                "      timerlat/{cpu}-86{cpu}    [{cpu:03}] ....    54.{i:06}: #{id:<5} context thread timer_latency {:>9} ns\n",
                thread_ns(cpu, i)
            );
        }
    }
    text
}

fn start(fs: &FakeTracefs, args: &[&str]) -> Job {
    let root = fs.root().to_str().unwrap();
    let mut all = vec!["timer", "--tracefs", root, "-p", "1000", "--warmup", "0"];
    all.extend_from_slice(args);
    Job::start(&all, fs.root())
}

fn benchmark<'a>(doc: &'a Value, name: &str) -> &'a Value {
    common::bench(doc, name)
}

#[test]
fn kernel_mode_reads_each_cpus_thread_latency_and_puts_tracefs_back() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    // While it runs, tracefs holds the test's settings.
    assert_eq!(fs.read("current_tracer"), "timerlat");
    assert_eq!(fs.read("tracing_on"), "1");
    assert_eq!(fs.read("osnoise/cpus"), "0");
    assert_eq!(fs.read("osnoise/timerlat_period_us"), "1000");
    assert_eq!(fs.read("osnoise/stop_tracing_total_us"), "0");
    pipe.write_all(b"CPU:1 [LOST 3 EVENTS]\n").unwrap();
    pipe.write_all(lines(0..2000).as_bytes()).unwrap();
    drop(pipe);
    let out = job.finish("-t 1");
    assert!(out.status.success(), "{out:?}");
    fs.assert_as_found();

    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["timer"]["mode"], "in-kernel periodic task");
    assert_eq!(run["timer"]["method"], "timerlat");
    assert_eq!(run["timer"]["priority"], 95);
    assert_eq!(run["timer"]["duration_s"], 2);
    // CPU 1's lines are not asked for (-c 0); CPU 0's thread samples count, exactly.
    let cpu0 = &benchmark(&doc, "cpu0")["timer"];
    let expected: Vec<u64> = (0..2000).map(|i| thread_ns(0, i)).collect();
    assert_eq!(cpu0["samples"], 2000);
    assert_eq!(cpu0["min_ns"], 3000);
    assert_eq!(cpu0["max_ns"], 250_000);
    let mean = expected.iter().sum::<u64>() as f64 / 2000.0;
    assert!((cpu0["avg_ns"].as_f64().unwrap() - mean).abs() < 1e-6);
    let notes = doc["notes"].to_string();
    assert!(notes.contains("lost 3 timerlat events"), "{notes}");
}

#[test]
fn irq_mode_on_every_cpu_prints_xenomai_lines_and_freezes_at_the_break() {
    let fs = FakeTracefs::new();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let args = ["-t", "irq", "-T", "3", "-f", "-b", "0.504"];
    let mut job = start(&fs, &args);
    let mut pipe = fs.pipe_writer();
    // -f: the kernel itself stops tracing at -b (rounded up to its whole µs) in the IRQ.
    assert_eq!(fs.read("osnoise/stop_tracing_us"), "1");
    assert_eq!(fs.read("osnoise/stop_tracing_total_us"), "0");
    let expected_cpus: Vec<String> = (0..cpus).map(|c| c.to_string()).collect();
    assert_eq!(fs.read("osnoise/cpus"), expected_cpus.join(","));
    let _ = pipe.write_all(lines(0..2000).as_bytes());
    drop(pipe);
    let out = job.finish("-t 2");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("== Test mode: in-kernel timer handler"),
        "{stdout}"
    );
    // The first IRQ above 0.504 µs: activation 5 (505 ns; -b is not truncated to 503 ns).
    assert!(
        stdout.contains("woke 0.505 us late at 0.006 s"),
        "the break sample is reported: {stdout}"
    );
    assert!(
        (stdout.to_string() + &stderr).contains("the kernel stopped tracing at the -b sample"),
        "{stdout}\n{stderr}"
    );
    // The frozen trace stays readable: timerlat remains the tracer; the knobs are back.
    assert_eq!(fs.read("current_tracer"), "timerlat");
    for (file, value) in &FOUND[2..] {
        assert_eq!(fs.read(file), *value, "{file}");
    }
}

#[test]
fn sigterm_mid_run_reports_what_was_measured_and_restores_tracefs() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-c", "0-1", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    pipe.write_all(lines(0..1600).as_bytes()).unwrap();
    // write_all returned: latkit has read all but the last pipe-full; give it time for that.
    std::thread::sleep(std::time::Duration::from_millis(500));
    nix::sys::signal::killpg(job.group(), nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = job.finish("SIGTERM");
    drop(pipe);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    fs.assert_as_found();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(benchmark(&doc, "cpu1")["timer"]["samples"], 1600);
    assert_eq!(benchmark(&doc, "cpu0")["timer"]["max_ns"], 250_000);
}

#[test]
fn a_tracer_that_never_reports_is_an_error_and_tracefs_is_put_back() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "5"]);
    // Opened and left silent: the kernel would write lines; this one never does.
    let pipe = fs.pipe_writer();
    let out = job.finish("silent tracer");
    drop(pipe);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no timerlat sample"),
        "{out:?}"
    );
    fs.assert_as_found();
}

#[test]
fn a_busy_tracer_bad_periods_and_f_without_b_are_refused_before_anything_changes() {
    let fs = FakeTracefs::new();
    let root = fs.root().to_str().unwrap();
    for (args, expected) in [
        (
            vec!["-t", "1", "-p", "50"],
            "timerlat's period is 100 µs to 1 s",
        ),
        (vec!["-t", "2", "-f"], "give -b US too"),
    ] {
        latkit()
            .args(["timer", "--tracefs", root])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
        fs.assert_as_found();
    }
    std::fs::write(fs.root().join("current_tracer"), "timerlat\n").unwrap();
    latkit()
        .args(["timer", "--tracefs", root, "-t", "1", "-T", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already running"));
    assert_eq!(fs.read("osnoise/cpus"), "0-1");
}

/// A control file the kernel refuses to write (here one that is not writable even by root):
/// the set-up stops there, exits 2 naming it, and what it had changed is put back.
#[test]
fn a_setup_that_fails_part_way_puts_back_what_it_changed() {
    let fs = FakeTracefs::new();
    let refusing = fs.root().join("osnoise/stop_tracing_us");
    std::fs::remove_file(&refusing).unwrap();
    std::os::unix::fs::symlink("/proc/version", &refusing).unwrap();
    let root = fs.root().to_str().unwrap();
    let out = latkit()
        .args(["timer", "--tracefs", root, "-t", "1", "-T", "1", "-c", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stop_tracing_us"), "{stderr}");
    assert!(!stderr.contains("could not restore"), "{stderr}");
    for (file, value) in FOUND {
        if file != "osnoise/stop_tracing_us" {
            assert_eq!(fs.read(file), value, "{file} was not restored");
        }
    }
}

/// The real kernel: without timerlat (this VM), one line says what is missing and what works.
#[test]
fn this_kernel_refuses_the_kernel_modes_clearly() {
    let tracers = std::fs::read_to_string("/sys/kernel/tracing/available_tracers");
    let out = latkit()
        .args(["timer", "-t", "1", "-T", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match &tracers {
        Ok(list) if list.split_whitespace().any(|t| t == "timerlat") => {
            // A kernel with timerlat measures (as root) instead.
            assert!(out.status.success(), "{stderr}");
            return;
        }
        Ok(list) => {
            let checks = common::json_of(latkit().args(["doctor", "--format", "json"]));
            let timerlat = checks
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "timerlat")
                .expect("the doctor checks timerlat");
            assert_eq!(timerlat["status"], "warn");
            assert!(timerlat["found"].as_str().unwrap().contains(list.trim()));
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.contains("CONFIG_TIMERLAT_TRACER"), "{stderr}");
            assert!(stderr.contains(list.trim()), "{stderr}");
            assert!(stderr.contains("-t 0"), "{stderr}");
        }
        Err(_) => {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("tracefs"), "{stderr}");
        }
    }
    if common::is_root() {
        let setpriv = common::peer("setpriv", "apt-get install util-linux");
        let out = std::process::Command::new(setpriv)
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .args(["timer", "-t", "2", "-T", "1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("needs root"), "{stderr}");
    }
}
