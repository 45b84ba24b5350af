//! `latkit timer -t 1|2`: the kernel's timerlat tracer driven through tracefs. This kernel has
//! no timerlat (`available_tracers` is `blk function nop`), so the real test here is the
//! refusal; the control logic (set-up, the sampling loop, restoring on every way out) runs
//! against a directory laid out like tracefs, whose instance `latkit` has a `trace_pipe` FIFO
//! the test writes timerlat's lines into, as the kernel would. A directory cannot make an
//! instance's files on `mkdir` as tracefs does, so the fake has latkit's instances already
//! (as a latkit killed before it could remove them leaves them). `booted_kernel` runs the
//! modes on a real timerlat kernel.

use crate::common::{Job, latkit};
use predicates::prelude::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The control files latkit may touch, with what a fresh kernel holds.
const FOUND: [(&str, &str); 10] = [
    ("tracing_on", "1"),
    ("current_tracer", "nop"),
    ("instances/latkit/tracing_on", "1"),
    ("instances/latkit/current_tracer", "nop"),
    ("instances/latkit-frozen/tracing_on", "1"),
    ("instances/latkit-frozen/current_tracer", "nop"),
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
        for instance in ["latkit", "latkit-frozen"] {
            let instance = dir.path().join("instances").join(instance);
            std::fs::create_dir_all(&instance).unwrap();
            std::fs::write(instance.join("trace"), "").unwrap();
            nix::unistd::mkfifo(
                &instance.join("trace_pipe"),
                nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
            )
            .unwrap();
        }
        std::fs::write(
            dir.path().join("available_tracers"),
            "timerlat osnoise function nop\n",
        )
        .unwrap();
        for (file, value) in FOUND {
            std::fs::write(dir.path().join(file), format!("{value}\n")).unwrap();
        }
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

    /// What a stop threshold hit does: the kernel turns tracing off in every timerlat instance.
    fn kernel_stops(&self) {
        for instance in ["latkit", "latkit-frozen"] {
            let on = self
                .root()
                .join("instances")
                .join(instance)
                .join("tracing_on");
            std::fs::write(on, "0\n").unwrap();
        }
    }

    /// Every control file holds what it held before latkit ran.
    fn assert_as_found(&self) {
        for (file, value) in FOUND {
            assert_eq!(self.read(file), value, "{file} was not restored");
        }
    }

    /// Opens `trace_pipe` for writing once latkit has opened it for reading: the open blocks
    /// until then (in a thread, so that a latkit that never opens it fails the test).
    fn pipe_writer(&self) -> std::fs::File {
        let path: PathBuf = self.root().join("instances/latkit/trace_pipe");
        let (opened, file) = std::sync::mpsc::channel();
        std::thread::spawn(move || opened.send(std::fs::OpenOptions::new().write(true).open(path)));
        match file.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(Ok(file)) => file,
            Ok(Err(e)) => panic!("trace_pipe: {e}"),
            Err(_) => panic!("latkit never opened trace_pipe"),
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

/// CPU 1 misses activations 1200–1202: timerlat does not wake for a period already past.
fn skipped(cpu: usize, i: usize) -> bool {
    cpu == 1 && (1200..1203).contains(&i)
}

/// A trace timestamp (`SECONDS.MICROSECONDS`) `latency_ns` after period `i` of 1 ms was due.
fn stamp(i: usize, latency_ns: u64) -> String {
    let us = 54_000_000 + i as u64 * 1000 + latency_ns / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// timerlat's lines for activations `range` on CPUs 0 and 1, in the kernel's format, with an
/// osnoise event between them as a real trace has.
fn lines(range: std::ops::Range<usize>) -> String {
    let mut text = String::new();
    for i in range {
        for cpu in 0..2 {
            if skipped(cpu, i) {
                continue;
            }
            let id = i + 1;
            let (irq, thread) = (irq_ns(i), thread_ns(cpu, i));
            text += &format!(
                "          <idle>-0       [{cpu:03}] d.h1    {}: #{id:<5} context    irq timer_latency {irq:>9} ns\n",
                stamp(i, irq)
            );
            text += &format!(
                "          <idle>-0       [{cpu:03}] dNh2.    {}: irq_noise: local_timer:236 start 54.{i:06}0 duration 700 ns\n",
                stamp(i, irq)
            );
            text += &format!(
                "      timerlat/{cpu}-86{cpu}    [{cpu:03}] ....    {}: #{id:<5} context thread timer_latency {thread:>9} ns\n",
                stamp(i, thread)
            );
        }
    }
    text
}

fn start(fs: &FakeTracefs, args: &[&str]) -> Job {
    warming_up(fs, "0", args)
}

/// `latkit timer` on `fs` at a 1 ms period with `warmup` seconds of warm-up.
fn warming_up(fs: &FakeTracefs, warmup: &str, args: &[&str]) -> Job {
    let root = fs.root().to_str().unwrap();
    let mut all = vec!["timer", "--tracefs", root, "-p", "1000", "--warmup", warmup];
    all.extend_from_slice(args);
    Job::start(&all, fs.root())
}

fn benchmark<'a>(doc: &'a Value, name: &str) -> &'a Value {
    crate::common::bench(doc, name)
}

#[test]
fn kernel_mode_reads_each_cpus_thread_latency_and_puts_tracefs_back() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    // While it runs, tracefs holds the test's settings, in latkit's own instance: the top
    // level's tracer stays the user's.
    assert_eq!(fs.read("instances/latkit/current_tracer"), "timerlat");
    assert_eq!(fs.read("instances/latkit/tracing_on"), "1");
    assert_eq!(fs.read("current_tracer"), "nop");
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

/// CPU 0's IRQ of activation `i` woke `irq_ns` late: a spike in an otherwise calm trace.
fn spike(i: usize, irq_ns: u64) -> String {
    format!(
        "          <idle>-0       [000] d.h1    {}: #{:<5} context    irq timer_latency {irq_ns:>9} ns\n",
        stamp(i, irq_ns),
        i + 1
    )
}

/// The frozen trace (-f) ends at the sample latkit reports: the kernel decides the break,
/// so spikes above -b it did not stop at (the 5 µs one before the threshold was armed, a
/// 506 ns IRQ above -b 0.504 but below the kernel's 1 µs) do not break, and the 1.2 µs spike
/// it stopped tracing at does.
#[test]
fn irq_mode_on_every_cpu_prints_xenomai_lines_and_freezes_at_the_break() {
    let fs = FakeTracefs::new();
    let args = ["-t", "irq", "-T", "3", "-c", "0-1", "-f", "-b", "0.504"];
    let mut job = warming_up(&fs, "1", &args);
    let mut pipe = fs.pipe_writer();
    // -f: a second instance, nobody reads, keeps the whole trace.
    assert_eq!(
        fs.read("instances/latkit-frozen/current_tracer"),
        "timerlat"
    );
    assert_eq!(fs.read("osnoise/cpus"), "0,1");
    // Armed once both instances trace.
    assert_eq!(fs.read("osnoise/stop_tracing_us"), "1");
    assert_eq!(fs.read("osnoise/stop_tracing_total_us"), "0");
    let trace = spike(0, 5000) + &lines(1..1500) + &spike(1500, 1200);
    pipe.write_all(trace.as_bytes()).unwrap();
    fs.kernel_stops();
    drop(pipe);
    let out = job.finish("-t 2");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("== Test mode: in-kernel timer handler"),
        "{stdout}"
    );
    // The spike, 501 periods after the warm-up's 1000: the sample the kernel stopped at.
    assert!(
        stdout.contains("woke 1.200 us late at 0.501 s"),
        "the break sample is reported: {stdout}"
    );
    let dir = fs.root().join("instances/latkit-frozen");
    assert!(
        (stdout.to_string() + &stderr).contains(&format!("{}/trace", dir.display())),
        "{stdout}\n{stderr}"
    );
    // The frozen instance stays, stopped, with timerlat's trace; all else is back.
    assert_eq!(
        fs.read("instances/latkit-frozen/current_tracer"),
        "timerlat"
    );
    assert_eq!(fs.read("instances/latkit-frozen/tracing_on"), "0");
    for (file, value) in FOUND.iter().filter(|(f, _)| !f.contains("latkit-frozen")) {
        assert_eq!(fs.read(file), *value, "{file}");
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "waits on the real clock for latkit to drain the pipe; `--features interop` runs it"
)]
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
    // The three activations CPU 1 missed are overruns, found from the samples' timestamps.
    let cpu1 = &benchmark(&doc, "cpu1")["timer"];
    assert_eq!(cpu1["samples"], 1597);
    assert_eq!(cpu1["overruns"], 3);
    assert_eq!(benchmark(&doc, "cpu0")["timer"]["overruns"], 0);
    assert_eq!(benchmark(&doc, "cpu0")["timer"]["max_ns"], 250_000);
}

/// `-T` is time: periods timerlat skipped count towards it, so the test ends after 2,000
/// periods (1,997 samples and 3 overruns on CPU 1), not after 2,000 samples.
#[test]
fn the_duration_counts_missed_periods() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "2", "-c", "1", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    let _ = pipe.write_all(lines(0..2100).as_bytes());
    drop(pipe);
    let out = job.finish("-T 2");
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cpu1 = &benchmark(&doc, "cpu1")["timer"];
    assert_eq!(
        (&cpu1["samples"], &cpu1["overruns"]),
        (&1997.into(), &3.into())
    );
    assert_eq!(doc["runs"][0]["timer"]["duration_s"], 2);
}

/// Another tool changes timerlat's global settings while latkit measures: the figures are
/// not the test's, so exit 1 saying what changed, and the other tool's value stays.
#[test]
fn settings_changed_by_another_tool_fail_the_test_and_are_left_to_it() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    let _ = pipe.write_all(lines(0..500).as_bytes());
    std::fs::write(fs.root().join("osnoise/timerlat_period_us"), "500\n").unwrap();
    let _ = pipe.write_all(lines(500..2100).as_bytes());
    drop(pipe);
    let out = job.finish("disturbed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("osnoise/timerlat_period_us is 500, latkit set 1000"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["notes"]
            .to_string()
            .contains("changed while latkit measured")
    );
    assert_eq!(fs.read("osnoise/timerlat_period_us"), "500");
    assert_eq!(fs.read("osnoise/cpus"), "0-1");
}

#[test]
fn a_tracer_that_never_reports_is_an_error_and_tracefs_is_put_back() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "5"]);
    // Opened and left silent: the kernel would write lines; this one never does.
    let pipe = fs.pipe_writer();
    let out = job.finish("silent tracer");
    drop(pipe);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
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
    // rtla traces in an instance of its own; a tracer stopped (tracing_on 0) is no user.
    let rtla = fs.root().join("instances/timerlat_top");
    std::fs::create_dir(&rtla).unwrap();
    std::fs::write(rtla.join("current_tracer"), "timerlat\n").unwrap();
    std::fs::write(rtla.join("tracing_on"), "1\n").unwrap();
    std::fs::write(fs.root().join("current_tracer"), "osnoise\n").unwrap();
    std::fs::write(fs.root().join("tracing_on"), "0\n").unwrap();
    latkit()
        .args(["timer", "--tracefs", root, "-t", "1", "-T", "1"])
        .assert()
        .code(5)
        .stderr(predicate::str::contains(
            "already tracing in instance timerlat_top of",
        ));
    assert_eq!(fs.read("osnoise/cpus"), "0-1");
    assert_eq!(fs.read("instances/latkit/current_tracer"), "nop");
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
    assert_eq!(out.status.code(), Some(5), "{stderr}");
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
            let checks = crate::common::json_of(latkit().args(["doctor", "--format", "json"]));
            let timerlat = checks
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "timerlat")
                .expect("the doctor checks timerlat");
            assert_eq!(timerlat["status"], "warn");
            assert!(timerlat["found"].as_str().unwrap().contains(list.trim()));
            assert_eq!(out.status.code(), Some(5), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.contains("CONFIG_TIMERLAT_TRACER"), "{stderr}");
            assert!(stderr.contains(list.trim()), "{stderr}");
            assert!(stderr.contains("-t 0"), "{stderr}");
        }
        Err(_) => {
            assert_eq!(out.status.code(), Some(5), "{stderr}");
            assert!(stderr.contains("tracefs"), "{stderr}");
        }
    }
    if crate::common::is_root() {
        let setpriv = crate::common::peer("setpriv", "apt-get install util-linux");
        let out = std::process::Command::new(setpriv)
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .args(["timer", "-t", "2", "-T", "1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{stderr}");
        // Unmounted, tracefs is missing for anyone; mounted, it is root's.
        let expected = match tracers {
            Ok(_) => "needs root",
            Err(_) => "not mounted",
        };
        assert!(stderr.contains(expected), "{stderr}");
    }
}

/// Ctrl-C in the warm-up: no sample counted, so no table of zeros that reads as a perfect
/// machine; stderr says why nothing was reported, and tracefs is as found.
#[test]
fn ctrl_c_in_the_warm_up_says_no_samples_were_taken() {
    let fs = FakeTracefs::new();
    let mut job = warming_up(&fs, "5", &["-t", "1"]);
    // The open returns once latkit reads the pipe: it is measuring, in its warm-up.
    let mut pipe = fs.pipe_writer();
    pipe.write_all(lines(0..100).as_bytes()).unwrap();
    job.ctrl_c();
    let out = job.finish("Ctrl-C in the warm-up");
    drop(pipe);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted during the warm-up (5 s): no samples were taken"),
        "{stderr}"
    );
    assert!(!stdout.contains("0.000"), "{stdout}");
    fs.assert_as_found();
}

/// The kernel modes measure the kernel's per-CPU threads, whatever latkit's own affinity: under
/// `taskset -c 1` the default is still every online CPU, and `-c 0-1` is not refused.
#[test]
fn under_taskset_the_kernel_modes_still_measure_every_online_cpu() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    if online.trim() != "0-1" {
        return; // The fake trace below is of CPUs 0 and 1, as this machine has them.
    }
    let fs = FakeTracefs::new();
    let root = fs.root().to_str().unwrap();
    let args = ["timer", "--tracefs", root, "-p", "1000", "--warmup", "0"];
    for cpus in [&[][..], &["-c", "0-1"][..]] {
        let taskset = crate::common::peer("taskset", "apt-get install util-linux");
        let wrapper = [taskset.to_str().unwrap(), "-c", "1"];
        let more = ["-t", "1", "-T", "2", "--format", "json"];
        let all: Vec<&str> = args.iter().chain(&more).chain(cpus).copied().collect();
        let mut job = crate::common::Job::start_under(&wrapper, &all, fs.root());
        let mut pipe = fs.pipe_writer();
        assert_eq!(fs.read("osnoise/cpus"), "0,1");
        pipe.write_all(lines(0..2000).as_bytes()).unwrap();
        drop(pipe);
        let out = job.finish("under taskset");
        assert!(out.status.success(), "{out:?}");
        fs.assert_as_found();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(benchmark(&doc, "cpu0")["timer"]["samples"].as_u64() > Some(1900));
        assert!(benchmark(&doc, "cpu1")["timer"]["samples"].as_u64() > Some(1900));
    }
}

/// Two latkits started together: the second is refused by name before it reads or writes
/// anything, and the first measures undisturbed and puts tracefs back.
#[test]
fn a_second_latkit_beside_a_measuring_one_is_refused_and_the_first_is_untouched() {
    let fs = FakeTracefs::new();
    let mut first = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    let root = fs.root().to_str().unwrap();
    latkit()
        .args(["timer", "--tracefs", root, "-t", "1", "-T", "1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("another latkit (pid "))
        .stderr(predicate::str::contains("is measuring with timerlat"));
    assert_eq!(fs.read("instances/latkit/current_tracer"), "timerlat");
    pipe.write_all(lines(0..2000).as_bytes()).unwrap();
    drop(pipe);
    let out = first.finish("the first latkit");
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(benchmark(&doc, "cpu0")["timer"]["samples"], 2000);
    fs.assert_as_found();
}

/// A latkit killed (SIGKILL) mid-test leaves timerlat tracing at its period; the next one puts
/// back what the killed one found (not the killed one's settings), says so, and measures.
#[test]
fn after_a_sigkill_the_next_latkit_puts_back_what_the_killed_one_found() {
    let fs = FakeTracefs::new();
    let root = fs.root().to_str().unwrap();
    let args = [
        "timer",
        "--tracefs",
        root,
        "-p",
        "200",
        "--warmup",
        "0",
        "-t",
        "1",
    ];
    let killed = Job::start(&args, fs.root());
    let pipe = fs.pipe_writer();
    assert_eq!(fs.read("osnoise/timerlat_period_us"), "200");
    nix::sys::signal::killpg(killed.group(), nix::sys::signal::Signal::SIGKILL).unwrap();
    drop(killed);
    drop(pipe);
    assert_eq!(fs.read("instances/latkit/current_tracer"), "timerlat");
    let mut next = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    pipe.write_all(lines(0..2000).as_bytes()).unwrap();
    drop(pipe);
    let out = next.finish("the latkit after a SIGKILL");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("a latkit killed during its test (pid "),
        "{stderr}"
    );
    assert!(
        stderr.contains("osnoise/timerlat_period_us 1000"),
        "{stderr}"
    );
    fs.assert_as_found();
}

/// latkit's instance tracing with no record of who left it: refused, with the commands that
/// clean it, and nothing touched.
#[test]
fn a_stale_instance_without_a_record_is_refused_with_the_commands_that_clean_it() {
    let fs = FakeTracefs::new();
    std::fs::write(
        fs.root().join("instances/latkit/current_tracer"),
        "timerlat\n",
    )
    .unwrap();
    let root = fs.root().to_str().unwrap();
    latkit()
        .args(["timer", "--tracefs", root, "-t", "1", "-T", "1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("instance latkit of"))
        .stderr(predicate::str::contains("rmdir "));
    assert_eq!(fs.read("instances/latkit/current_tracer"), "timerlat");
    assert_eq!(fs.read("osnoise/timerlat_period_us"), "1000");
}

/// A tool that starts and ends inside a run (rtla setting a 500 µs period, then putting 1000
/// back) is seen while it runs: the run says its figures are not the test asked for.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "another tool's change lasts a while on the real clock; `--features interop` runs it"
)]
fn a_tool_that_starts_and_ends_inside_a_run_is_reported() {
    let fs = FakeTracefs::new();
    let mut job = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    pipe.write_all(lines(0..500).as_bytes()).unwrap();
    let period = fs.root().join("osnoise/timerlat_period_us");
    std::fs::write(&period, "500\n").unwrap();
    // latkit looks once a second while it reads.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    pipe.write_all(lines(500..1000).as_bytes()).unwrap();
    std::fs::write(&period, "1000\n").unwrap();
    pipe.write_all(lines(1000..2000).as_bytes()).unwrap();
    drop(pipe);
    let out = job.finish("a tool inside the run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("osnoise/timerlat_period_us is 500, latkit set 1000"),
        "{stderr}"
    );
    fs.assert_as_found();
}

/// With -f, a spike in the warm-up stops the kernel's trace too: latkit reports that sample
/// as the break, said to be in the warm-up, so the frozen trace ends where the report says.
#[test]
fn a_warm_up_spike_is_the_frozen_traces_break_and_is_said_to_be_in_the_warm_up() {
    let fs = FakeTracefs::new();
    let args = ["-t", "irq", "-T", "3", "-c", "0-1", "-f", "-b", "0.504"];
    let mut job = warming_up(&fs, "1", &args);
    let mut pipe = fs.pipe_writer();
    let trace = lines(0..400) + &spike(400, 2300);
    pipe.write_all(trace.as_bytes()).unwrap();
    fs.kernel_stops();
    drop(pipe);
    let out = job.finish("a warm-up spike");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("woke 2.300 us late in the warm-up, 0.599 s before its end"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the break is at 1 µs or more (-b 0.504)"),
        "{stdout}"
    );
}

/// Tracing that stops before the test's end (another tool's stop threshold without -f; with
/// -f, at a sample latkit never read) ends the test with what was measured, said.
#[test]
fn a_trace_stopped_early_ends_the_test_said() {
    for (freeze, said) in [
        (&[][..], "timerlat's trace stopped before the test's end"),
        (
            &["-f", "-b", "5"][..],
            "the kernel stopped its trace at a sample latkit did not read",
        ),
    ] {
        let fs = FakeTracefs::new();
        let mut args = vec!["-t", "irq", "-T", "3", "-c", "0-1", "--format", "json"];
        args.extend_from_slice(freeze);
        let mut job = warming_up(&fs, "0", &args);
        let mut pipe = fs.pipe_writer();
        pipe.write_all(lines(0..1200).as_bytes()).unwrap();
        fs.kernel_stops();
        drop(pipe);
        let out = job.finish("a stopped trace");
        let doc: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{freeze:?}: {out:?}"));
        assert!(doc["notes"].to_string().contains(said), "{freeze:?}: {doc}");
        assert_eq!(benchmark(&doc, "cpu0")["timer"]["samples"], 1200);
        assert!(!doc.to_string().contains("break_hit"), "{doc}");
    }
}

/// The name latkit gives its claim on the tracefs at `root`.
fn claim_name(root: &Path, ext: &str) -> String {
    let name: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("timerlat{name}.{ext}")
}

/// root's latkit with `run` mounted over `/run` in a mount namespace of its own.
fn root_latkit_over(run: &Path, fs: &FakeTracefs) -> std::process::Output {
    let unshare = crate::common::peer("unshare", "apt-get install util-linux");
    std::process::Command::new(unshare)
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$0" /run && exec "$@""#)
        .arg(run)
        .arg(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["timer", "--tracefs"])
        .arg(fs.root())
        .args(["-t", "1", "-T", "1"])
        .output()
        .unwrap()
}

/// `/run/latkit` made 0777 by someone, with links planted to root-only files: root's latkit
/// refuses the directory, then (once it is 0755) the links, and writes through neither.
#[test]
fn root_keeps_its_claim_only_where_no_one_else_writes_and_follows_no_link() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        crate::common::is_root(),
        "this test mounts over /run: run it as root (CI does)"
    );
    let fs = FakeTracefs::new();
    let run = tempfile::tempdir().unwrap();
    let dir = run.path().join("latkit");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let secrets = tempfile::tempdir().unwrap();
    for ext in ["lock", "json"] {
        let secret = secrets.path().join(ext);
        std::fs::write(&secret, "root only\n").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&secret, dir.join(claim_name(fs.root(), ext))).unwrap();
    }
    let out = root_latkit_over(run.path(), &fs);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("/run/latkit: other users may write there (mode 0777)"),
        "{stderr}"
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = root_latkit_over(run.path(), &fs);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains(".lock is a symbolic link"), "{stderr}");
    for ext in ["lock", "json"] {
        let held = std::fs::read_to_string(secrets.path().join(ext)).unwrap();
        assert_eq!(held, "root only\n", "root's {ext} file was written");
    }
    fs.assert_as_found();
}

/// Beside root's measuring latkit, uid 65534's is refused by root's pid: it is not told
/// root's live instance was left by a killed latkit, nor given the commands to remove it.
#[test]
fn another_users_latkit_beside_roots_is_refused_by_roots_pid() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        crate::common::is_root(),
        "this test runs latkit as root and as uid 65534: run it as root (CI does)"
    );
    let fs = FakeTracefs::new();
    std::fs::set_permissions(fs.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut first = start(&fs, &["-t", "1", "-T", "2", "-c", "0", "--format", "json"]);
    let mut pipe = fs.pipe_writer();
    let nobody = crate::common::Nobody::new();
    let out = nobody
        .latkit()
        .args(["timer", "--tracefs"])
        .arg(fs.root())
        .args(["-t", "1", "-T", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("another latkit (pid "), "{stderr}");
    assert!(
        !stderr.contains("killed") && !stderr.contains("rmdir"),
        "{stderr}"
    );
    pipe.write_all(lines(0..2000).as_bytes()).unwrap();
    drop(pipe);
    let out = first.finish("root's latkit");
    assert!(out.status.success(), "{out:?}");
    fs.assert_as_found();
}
