//! `latkit timer -t 1|2` on a real timerlat kernel: Debian 12's PREEMPT_RT kernel (the generic
//! one has no timerlat), booted under qemu (TCG: no KVM needed) from a busybox initramfs that
//! holds the release binary and Debian's rtla. One boot runs every case; the guest keeps each
//! command's output, exit code, time taken and the tracer's state afterwards, writes them as a
//! tar archive to a virtio disk, and the assertions run here. The fake-tracefs tests (`timer_kernel_modes`)
//! prove the logic; this proves it against the kernel.
//!
//! `.ci/setup` installs qemu-system-x86, busybox-static and rtla and unpacks the kernel and
//! its virtio disk modules to `~/.cache/latkit/kernel` (or set `LATKIT_TEST_KERNEL` to such
//! a folder: `vmlinuz`, `modules/*.ko`).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Everything a case left: its files by name (`NAME.out`, `NAME.err`, `NAME.rc`, `NAME.took`,
/// `NAME.state`).
struct Guest {
    files: BTreeMap<String, String>,
    /// What the kernel and the guest's `/init` printed on the console.
    console: String,
}

impl Guest {
    fn file(&self, name: &str) -> &str {
        self.files.get(name).unwrap_or_else(|| {
            panic!(
                "the guest wrote no {name}; it wrote {:?}; its console:\n{}",
                self.names(),
                self.console
            )
        })
    }

    fn names(&self) -> Vec<&String> {
        self.files.keys().collect()
    }

    /// A case's exit code, with its stderr for the failure message.
    fn rc(&self, case: &str) -> (i32, &str) {
        let rc = self.file(&format!("{case}.rc")).trim().parse().unwrap();
        assert_ne!(
            rc, 137,
            "{case} hung: the guest's guard killed it after 100 s; the guest's console:\n{}",
            self.console
        );
        (rc, self.file(&format!("{case}.err")))
    }

    /// Seconds the case took, on the guest's clock.
    fn took(&self, case: &str) -> f64 {
        self.file(&format!("{case}.took")).trim().parse().unwrap()
    }

    fn json(&self, case: &str) -> Value {
        let out = self.file(&format!("{case}.out"));
        serde_json::from_str(out).unwrap_or_else(|e| panic!("{case}: {e}: {out}"))
    }

    /// tracefs after the case: the top-level tracer, the global settings, the instances.
    fn state(&self, case: &str) -> &str {
        self.file(&format!("{case}.state")).trim()
    }
}

/// The guest's CPUs: four, as the machines the kernel modes are used on have at least.
const CPUS: usize = 4;

/// As the kernel booted it: timerlat at the top level off, every CPU, 1 ms, no stop
/// thresholds, no instances.
const CLEAN: &str = "tracer=nop on=1 cpus=0-3 period=1000 stop=0/0 instances=";

/// The guest's cases, in order. `run NAME CMD…` runs one and records it.
const CASES: &str = r#"
T=/sys/kernel/tracing
up() { cut -d' ' -f1 /proc/uptime; }
# Progress on the console, so that a guest stopped at the deadline shows where it was.
say() { echo "latkit-guest: $* at $(up) s" > /dev/console; }
# Every command runs under this guard: one that hangs is killed (exit 137) and the next case
# runs, so the test names the case instead of timing out the whole guest. busybox's timeout
# execs the command in its own pid, so `$!` of `$GUARD latkit … &` is latkit's (a shell
# function would put a subshell there, and `kill -INT $!` would miss latkit).
GUARD="timeout -s KILL 100"
state() {
  echo "tracer=$(cat $T/current_tracer) on=$(cat $T/tracing_on) cpus=$(cat $T/osnoise/cpus) period=$(cat $T/osnoise/timerlat_period_us) stop=$(cat $T/osnoise/stop_tracing_us)/$(cat $T/osnoise/stop_tracing_total_us) instances=$(ls $T/instances | tr '\n' ' ')"
}
run() {
  name=$1; shift
  say "$name: $*"
  a=$(up); $GUARD "$@" > /out/$name.out 2> /out/$name.err; echo $? > /out/$name.rc; b=$(up)
  awk "BEGIN { print $b - $a }" > /out/$name.took
  state > /out/$name.state
}
# Waits (${2:-60} s at most: rtla takes a while to start under TCG) until instance $1 traces
# with timerlat (a new instance has tracing on before its tracer is set).
tracing_in() {
  since=$(up)
  until [ "$(cat $T/instances/$1/current_tracer 2>/dev/null)" = timerlat ] &&
      [ "$(cat $T/instances/$1/tracing_on)" = 1 ]; do
    if awk "BEGIN { exit !($(up) - $since > ${2:-60}) }"; then
      say "instance $1 never started tracing"
      return 1
    fi
    sleep 0.1
  done
}
state > /out/boot.state
cat $T/osnoise/timerlat_period_us > /out/boot.period

run thread latkit timer -t 1 -T 5 -p 1000 --format json
run irq latkit timer -t 2 -T 5 -p 500 --format json

# rtla's own figures and outputs, then latkit reading them.
say "rtla top and hist"
$GUARD rtla timerlat top -q -d 5s > /out/rtla-top.txt 2>&1
$GUARD rtla timerlat hist -d 5s > /out/rtla-hist.txt 2>&1
run parse-top latkit parse /out/rtla-top.txt --format json
run parse-hist latkit parse /out/rtla-hist.txt --format json

# -f -b 1 with a warm-up: the kernel stops at 2 µs or more, warm-up samples too.
run freeze latkit timer -t 2 -T 10 -p 1000 --warmup 2 -f -b 1
F=$T/instances/latkit-frozen
cat $F/trace > /out/frozen.trace 2>&1
rmdir $F
state > /out/frozen-removed.state

# Ctrl-C part-way.
say "sigint"
a=$(up)
$GUARD latkit timer -t 1 -p 1000 --format json > /out/sigint.out 2> /out/sigint.err &
pid=$!
tracing_in latkit
sleep 2
kill -INT $pid
wait $pid
echo $? > /out/sigint.rc
awk "BEGIN { print $(up) - $a }" > /out/sigint.took
state > /out/sigint.state

# Two latkits started at the same moment: one measures, the other is refused.
say "two at once"
$GUARD latkit timer -t 1 -T 3 --format json > /out/twin-a.out 2> /out/twin-a.err &
a=$!
$GUARD latkit timer -t 1 -T 3 --format json > /out/twin-b.out 2> /out/twin-b.err &
b=$!
wait $a; echo $? > /out/twin-a.rc
wait $b; echo $? > /out/twin-b.rc
state > /out/twins.state

# rtla starting and ending inside a -T run. A guest slowed by its host can take longer than
# the run to start rtla: then rtla did not end inside, and the case is run again, longer. Long
# periods (rtla's differs from latkit's: the change latkit sees): with latkit at 1 ms, its
# real-time threads on four emulated CPUs of a busy two-core host left rtla runnable but not
# running for over 40 s, twice (CI of ffb8b7f).
say "rtla inside"
for seconds in 20 40 60; do
  (
    $GUARD latkit timer -t 1 -T $seconds -p 4000 --format json > /out/inside.out 2> /out/inside.err
    echo $? > /out/inside.rc
    up > /out/inside.ended
  ) &
  pid=$!
  tracing_in latkit
  $GUARD rtla timerlat top -q -d 3s -p 2000 > /dev/null 2>&1
  rtla_ended=$(up)
  wait $pid
  awk "BEGIN { exit !($(cat /out/inside.ended) > $rtla_ended) }" && break
  say "rtla ended after a $seconds s run: again"
  # rtla outlived the run, so it put back the period it found when it started: latkit's
  # (latkit, seeing rtla's, rightly left it alone). The next try starts from the booted one.
  cat /out/boot.period > $T/osnoise/timerlat_period_us
done
state > /out/inside.state

# latkit confined to CPU 3 still measures the kernel on every CPU.
run taskset taskset -c 3 latkit timer -t 1 -T 2 --format json

# CPU 1 offline: the online CPUs are measured, and -c 0-3 is refused by name.
echo 0 > /sys/devices/system/cpu/cpu1/online
run offline latkit timer -t 1 -T 2 --format json
run offline-c latkit timer -t 1 -T 2 -c 0-3
echo 1 > /sys/devices/system/cpu/cpu1/online

# SIGKILL mid-test at -p 2000 (the instance it leaves traces on at that period: a short one
# would starve the guest under TCG), then the next run puts back what the killed one found.
say "sigkill"
$GUARD latkit timer -t 1 -p 2000 > /dev/null 2>&1 &
pid=$!
tracing_in latkit
kill -KILL $pid
wait $pid
state > /out/killed.state
run after-kill latkit timer -t 1 -T 2 --format json

# rtla running: latkit refuses, and leaves rtla's settings alone.
say "beside: rtla"
$GUARD rtla timerlat top -q -d 6s -p 500 > /dev/null 2>&1 &
rtla=$!
tracing_in timerlat_top
run beside latkit timer -t 1 -T 2 -p 200
cat $T/osnoise/timerlat_period_us > /out/beside.period
wait $rtla

# rtla started while latkit runs (last: rtla puts back settings as it found them). rtla takes
# 6 s to start under TCG alone, ~25 s beside latkit at 1 ms, over a minute beside it at 200 µs:
# latkit runs (at 2 ms, not to starve rtla's start) until rtla traces, and a little more.
say "during"
timeout -s KILL 240 latkit timer -t 1 -p 2000 > /out/during.out 2> /out/during.err &
pid=$!
tracing_in latkit
say "latkit tracing"
$GUARD rtla timerlat top -q -d 3s -p 1000 > /dev/null 2>&1 &
tracing_in timerlat_top 180
say "rtla tracing"
sleep 1
kill -INT $pid
wait $pid
echo $? > /out/during.rc
wait
say "done"
"#;

/// The modules that give the guest its results disk, in the order they load.
const MODULES: [&str; 6] = [
    "virtio_ring",
    "virtio",
    "virtio_pci_legacy_dev",
    "virtio_pci_modern_dev",
    "virtio_pci",
    "virtio_blk",
];

/// The guest's `/init`: mounts, runs the cases, writes every result file as a tar archive to
/// the virtio disk, powers off.
const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs nodev /sys/kernel/tracing
mount -t tmpfs tmpfs /tmp
mkdir -p /run && mount -t tmpfs tmpfs /run
echo "latkit-guest: booted" > /dev/console
mkdir /out
cd /tmp
# A heartbeat every 10 s, with what latkit and rtla are doing (state, where in the kernel
# they wait): a case the guard has to kill says why it hung, and a guest whose heartbeat
# stops has frozen as a whole.
(
  while sleep 10; do
    doing=""
    for p in $(pidof latkit rtla); do
      # (one gone since pidof is skipped)
      stat=$(cut -d' ' -f2,3 /proc/$p/stat 2>/dev/null) || continue
      doing="$doing; $stat (pid $p) waits in $(cat /proc/$p/wchan 2>/dev/null)"
    done
    echo "latkit-guest: alive at $(cut -d' ' -f1 /proc/uptime) s$doing" > /dev/console
  done
) &
watch=$!
sh /cases > /out/cases.log 2>&1
kill $watch
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk; do
  insmod /modules/$m.ko
done
for i in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
tar -cf /dev/vda -C /out .
sync
echo "latkit-guest: results written" > /dev/console
poweroff -f
"#;

/// The kernel's folder: `vmlinuz` and `modules/`.
fn kernel() -> PathBuf {
    let dir = std::env::var_os("LATKIT_TEST_KERNEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").expect("HOME is set");
            Path::new(&home).join(".cache/latkit/kernel")
        });
    assert!(
        dir.join("vmlinuz").is_file(),
        "no timerlat kernel at {}: `bash .ci/setup` unpacks Debian's linux-image-rt-amd64 there",
        dir.join("vmlinuz").display()
    );
    dir
}

/// Copies `binary` into the initramfs at `/bin`, with the shared libraries it loads.
fn install(binary: &Path, root: &Path) {
    let ldd = Command::new("ldd").arg(binary).output().unwrap();
    for lib in String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
    {
        let to = root.join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(lib, &to).unwrap();
    }
    let name = binary.file_name().unwrap();
    std::fs::copy(binary, root.join("bin").join(name)).unwrap();
}

/// The initramfs: busybox, rtla, latkit, `/init` and the cases, as a newc cpio archive.
fn initramfs(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    for sub in ["bin", "proc", "sys", "dev", "tmp"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let busybox = crate::common::peer("busybox", "apt-get install busybox-static");
    install(&busybox, &root);
    install(&crate::common::peer("rtla", "apt-get install rtla"), &root);
    install(&assert_cmd::cargo::cargo_bin("latkit"), &root);
    std::fs::create_dir(root.join("modules")).unwrap();
    for module in MODULES {
        let ko = format!("{module}.ko");
        std::fs::copy(
            kernel().join("modules").join(&ko),
            root.join("modules").join(&ko),
        )
        .unwrap_or_else(|e| panic!("{ko}: {e} (`bash .ci/setup` unpacks it)"));
    }
    for (name, text) in [("init", INIT), ("cases", CASES)] {
        std::fs::write(root.join(name), text).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(root.join(name), mode).unwrap();
    }
    let archive = dir.join("initramfs.cpio");
    let status = Command::new("sh")
        .arg("-c")
        .arg("find . | \"$0\" cpio -o -H newc > \"$1\" 2>/dev/null")
        .arg(&busybox)
        .arg(&archive)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success(), "cpio failed");
    archive
}

/// How a guest's run ended.
enum Ending {
    /// It wrote its results (and powered off, or was stopped after writing them).
    Finished,
    /// It stopped making progress, for the reason given: worth one more boot.
    Stalled(String),
}

/// How long the guest's cases may take in all: it shares its host with other tests, and one
/// host core emulates all its CPUs.
const GUEST_LIMIT: Duration = Duration::from_secs(600);

/// Runs `qemu` until the guest powers off. A guest that never reaches `/init` (seen under TCG
/// on a loaded host: stuck after the firmware) or whose heartbeat stops (seen about once in
/// ten boots: both vCPUs spinning in the kernel with interrupts off, a pending timer
/// interrupt never taken, in rtla's runs as in latkit's) has stalled as a whole; a case that
/// hangs inside a live guest is its guard's to kill, and the cases get [`GUEST_LIMIT`] in all.
fn run_guest(mut qemu: Command, console: &Path) -> Ending {
    crate::common::interop_only("run_guest");
    let console_text = || std::fs::read_to_string(console).unwrap_or_default();
    let mut child = qemu
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(console).unwrap())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let (mut heard, mut lines) = (Instant::now(), 0);
    let mut written: Option<Instant> = None;
    loop {
        if child.try_wait().unwrap().is_some() {
            return Ending::Finished;
        }
        let text = console_text();
        let said = text.matches("latkit-guest:").count();
        if said > lines {
            (heard, lines) = (Instant::now(), said);
        }
        if written.is_none() && text.contains("latkit-guest: results written") {
            written = Some(Instant::now());
        }
        let stalled = match lines {
            0 if started.elapsed() > Duration::from_secs(120) => Some("never reached /init"),
            1.. if heard.elapsed() > Duration::from_secs(60) => Some("stopped its heartbeat"),
            _ => None,
        };
        // A guest that wrote its results but does not power off has done its work.
        let done = written.is_some_and(|at| at.elapsed() > Duration::from_secs(30));
        let late = started.elapsed() > GUEST_LIMIT;
        if done || late || stalled.is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return match (done, stalled) {
                (true, _) => Ending::Finished,
                (false, Some(why)) => Ending::Stalled(format!("the guest {why}")),
                (false, None) => panic!(
                    "the guest did not finish in {} s; its console:\n{text}",
                    GUEST_LIMIT.as_secs()
                ),
            };
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Boots the kernel with [`CPUS`] CPUs, runs the cases, and reads back what the guest wrote.
fn boot() -> Guest {
    let dir = tempfile::tempdir().unwrap();
    let archive = initramfs(dir.path());
    let disk = dir.path().join("results.tar");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let console = dir.path().join("console");
    let qemu = crate::common::peer("qemu-system-x86_64", "apt-get install qemu-system-x86");
    let guest = || {
        let mut command = Command::new(&qemu);
        command
            .args(["-accel", "tcg,thread=single"])
            .args([
                "-smp",
                &CPUS.to_string(),
                "-m",
                "1024",
                "-nographic",
                "-no-reboot",
            ])
            .arg("-kernel")
            .arg(kernel().join("vmlinuz"))
            .arg("-initrd")
            .arg(&archive)
            .args(["-append", "console=ttyS0 quiet panic=-1"])
            .arg("-drive")
            .arg(format!("file={},format=raw,if=virtio", disk.display()));
        command
    };
    // Booting takes ~15 s under TCG and the cases ~60 s; a guest that stalls as a whole is
    // booted once more.
    if let Ending::Stalled(why) = run_guest(guest(), &console) {
        let text = std::fs::read_to_string(&console).unwrap_or_default();
        eprintln!("{why}; booting it again. Its console:\n{text}");
        if let Ending::Stalled(why) = run_guest(guest(), &console) {
            let text = std::fs::read_to_string(&console).unwrap_or_default();
            panic!("{why}, twice; its console:\n{text}");
        }
    }
    let console_text = || std::fs::read_to_string(&console).unwrap_or_default();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let untar = Command::new("tar")
        .arg("-xf")
        .arg(&disk)
        .arg("-C")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        untar.status.success(),
        "the guest wrote no results ({}); its console:\n{}",
        String::from_utf8_lossy(&untar.stderr),
        console_text()
    );
    let files = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            (name, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    let console = console_text();
    // The guest's progress, for `--nocapture`: how long each case took under this host's load.
    for line in console.lines().filter(|l| l.starts_with("latkit-guest:")) {
        eprintln!("{line}");
    }
    Guest { files, console }
}

/// Per CPU of a `timer` JSON report: (samples, overruns, min ns, max ns).
fn per_cpu(doc: &Value) -> Vec<(u64, u64, f64, f64)> {
    (0..CPUS)
        .map(|cpu| {
            let timer = &crate::common::bench(doc, &format!("cpu{cpu}"))["timer"];
            (
                timer["samples"].as_u64().unwrap(),
                timer["overruns"].as_u64().unwrap(),
                timer["min_ns"].as_f64().unwrap(),
                timer["max_ns"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// A measured run on the real kernel: it ends on the trace's clock (warm-up 1 s plus
/// `seconds`), not at latkit's wall-clock deadline for a tracer that falls behind (three times
/// that, and 3 s more); every period is a sample or an overrun; tracefs is as the kernel
/// booted.
fn assert_measured(guest: &Guest, case: &str, seconds: f64, period_us: f64) {
    let (rc, stderr) = guest.rc(case);
    assert_eq!(rc, 0, "{case}: {stderr}");
    let took = guest.took(case);
    assert!(
        took < 3.0 * (seconds + 1.0) + 3.0 && !stderr.contains("stopped on the clock"),
        "{case}: -T {seconds} took {took} s: {stderr}"
    );
    let doc = guest.json(case);
    assert_eq!(
        doc["runs"][0]["timer"]["duration_s"],
        seconds as u64,
        "{case}: {}",
        guest.file(&format!("{case}.out"))
    );
    let periods = seconds * 1e6 / period_us;
    for (cpu, (samples, overruns, min, max)) in per_cpu(&doc).into_iter().enumerate() {
        let counted = (samples + overruns) as f64;
        // The last sample may be as late as the worst wake-up (under TCG on a loaded host,
        // tenths of a second): the periods it skipped past the end count too.
        let late = max / (period_us * 1e3);
        assert!(
            counted >= periods * 0.98 && counted <= periods * 1.02 + late,
            "{case}: CPU {cpu}: {samples} samples + {overruns} overruns for {periods} periods \
             (worst wake-up {max} ns)"
        );
        assert!(min > 0.0 && min <= max, "{case}: CPU {cpu}: {min} … {max}");
    }
    assert_eq!(guest.state(case), CLEAN, "{case} left tracefs changed");
}

/// `(count, min, avg, max)` per column of rtla's own summary lines (`count:`, `min:` …).
fn rtla_hist_summary(text: &str) -> Vec<[f64; 4]> {
    let row = |label: &str| -> Vec<f64> {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("rtla hist printed no {label} line: {text}"));
        line.split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let rows = ["count:", "min:", "avg:", "max:"].map(row);
    (0..rows[0].len())
        .map(|i| [rows[0][i], rows[1][i], rows[2][i], rows[3][i]])
        .collect()
}

/// The CPU rows of rtla's top screen, colours removed: `(cpu, count, [cur min avg max] of
/// IRQ and thread)`.
fn rtla_top_rows(text: &str) -> Vec<(usize, f64, Vec<f64>)> {
    let plain = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    plain
        .replace_all(text, "")
        .lines()
        .filter_map(|line| {
            let (cpu, rest) = line.split_once('#')?;
            let cpu = cpu.trim().parse().ok()?;
            let mut numbers = rest
                .split(|c: char| c == '|' || c.is_whitespace())
                .filter(|w| !w.is_empty())
                .map(|w| w.parse::<f64>().unwrap());
            let count = numbers.next()?;
            Some((cpu, count, numbers.collect()))
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "boots a real kernel in qemu; `--features interop` runs it"
)]
fn the_kernel_modes_on_a_real_timerlat_kernel() {
    // Beside the other long tests: every assertion holds on a guest TCG runs several times
    // slower (checked beside eight busy loops on this 2-core host).
    let _cores = crate::common::busy();
    let guest = boot();
    assert_eq!(guest.state("boot"), CLEAN);

    // -t 1 and -t 2 start on every CPU (osnoise/cpus read with a page, not an exact buffer),
    // end on the clock, and count the periods timerlat skipped as overruns.
    assert_measured(&guest, "thread", 5.0, 1000.0);
    assert_measured(&guest, "irq", 5.0, 500.0);

    // rtla's own outputs, captured here, read back with rtla's figures.
    let top_text = guest.file("rtla-top.txt");
    let top = guest.json("parse-top");
    let rows = rtla_top_rows(top_text);
    assert_eq!(rows.len(), CPUS, "{top_text}");
    for (cpu, count, values) in &rows {
        for (context, at) in [("irq", 0), ("thread", 4)] {
            let timer = &crate::common::bench(&top, &format!("cpu{cpu}/{context}"))["timer"];
            assert_eq!(timer["samples"].as_f64().unwrap(), *count);
            assert_eq!(timer["min_ns"].as_f64().unwrap(), values[at + 1] * 1000.0);
            assert_eq!(timer["avg_ns"].as_f64().unwrap(), values[at + 2] * 1000.0);
            assert_eq!(timer["max_ns"].as_f64().unwrap(), values[at + 3] * 1000.0);
        }
    }
    let hist = guest.json("parse-hist");
    let summary = rtla_hist_summary(guest.file("rtla-hist.txt"));
    for (i, [count, min, avg, max]) in summary.iter().enumerate() {
        let name = format!("cpu{}/{}", i / 2, ["irq", "thread"][i % 2]);
        let timer = &crate::common::bench(&hist, &name)["timer"];
        assert_eq!(timer["samples"].as_f64().unwrap(), *count, "{name}");
        assert_eq!(timer["min_ns"].as_f64().unwrap(), min * 1000.0, "{name}");
        assert_eq!(timer["max_ns"].as_f64().unwrap(), max * 1000.0, "{name}");
        let latkit_avg = timer["avg_ns"].as_f64().unwrap() / 1000.0;
        assert!(
            (latkit_avg - avg).abs() <= 1.0,
            "{name}: {latkit_avg} vs {avg}"
        );
    }
    // latkit's thread latency on this VM is of rtla's order (same kernel, same machine).
    let thread = per_cpu(&guest.json("thread"));
    for (cpu, (_, _, min, max)) in thread.iter().enumerate() {
        let (_, _, rtla) = rows.iter().find(|r| r.0 == cpu).unwrap();
        let (rtla_min, rtla_max) = (rtla[5] * 1000.0, rtla[7] * 1000.0);
        for (what, ours, theirs) in [("min", min, rtla_min), ("max", max, rtla_max)] {
            let ratio = ours / theirs.max(1000.0);
            assert!(
                (0.1..=10.0).contains(&ratio),
                "CPU {cpu} {what}: latkit {ours} ns, rtla {theirs} ns"
            );
        }
    }

    // -f -b: the kernel's threshold (2 µs for -b 1), armed once both instances trace,
    // decides the break, warm-up included: once tracing is off, latkit reports the last
    // sample above it, so the frozen trace ends there (another CPU's IRQ of the same instant
    // aside; no later sample of its CPU).
    let (rc, stderr) = guest.rc("freeze");
    let stdout = guest.file("freeze.out");
    assert_eq!(rc, 1, "{stdout}\n{stderr}");
    let broke = regex::Regex::new(r"thread ([0-9]+) woke ([0-9.]+) us late")
        .unwrap()
        .captures(stdout)
        .unwrap_or_else(|| panic!("no break line: {stdout}\n{stderr}"));
    let break_cpu = format!("[{:03}]", broke[1].parse::<usize>().unwrap());
    let break_ns = (broke[2].parse::<f64>().unwrap() * 1000.0).round() as u64;
    assert!(break_ns >= 2000, "{stdout}");
    assert!(
        format!("{stdout}{stderr}").contains("instances/latkit-frozen/trace"),
        "{stdout}\n{stderr}"
    );
    let frozen = guest.file("frozen.trace");
    let irq_lines: Vec<&str> = frozen
        .lines()
        .filter(|l| l.contains("context    irq timer_latency"))
        .collect();
    let needle = format!("timer_latency {break_ns:>9} ns");
    let at = irq_lines
        .iter()
        .rposition(|l| l.ends_with(&needle) && l.contains(&break_cpu))
        .unwrap_or_else(|| panic!("the break sample ({break_ns} ns) is not in the frozen trace"));
    let after = &irq_lines[at + 1..];
    assert!(
        after.len() < CPUS && !after.iter().any(|l| l.contains(&break_cpu)),
        "the frozen trace runs past the break sample ({break_ns} ns on {break_cpu}): {:?}",
        &irq_lines[at.saturating_sub(4)..]
    );
    assert!(
        guest.state("freeze").contains("instances=latkit-frozen"),
        "{}",
        guest.state("freeze")
    );
    assert_eq!(guest.state("frozen-removed"), CLEAN);

    // Ctrl-C: exit 130 with the summary of what was measured, tracefs put back.
    let (rc, stderr) = guest.rc("sigint");
    assert_eq!(rc, 130, "{stderr}");
    // Interrupted 2 s after tracing began, 1 s of it the warm-up: every period since is a
    // sample or an overrun (a starved guest skips many).
    for (samples, overruns, ..) in per_cpu(&guest.json("sigint")) {
        assert!(
            samples > 0 && samples + overruns > 500,
            "{samples} samples and {overruns} overruns in 2 s at 1 ms"
        );
    }
    assert_eq!(guest.state("sigint"), CLEAN);

    // Two latkits at once: one measures, the other is refused by the first's pid; tracefs
    // ends as booted.
    let twins = [guest.rc("twin-a"), guest.rc("twin-b")];
    let measured = twins.iter().filter(|(rc, _)| *rc == 0).count();
    let refused = twins
        .iter()
        .filter(|(rc, err)| *rc == 5 && err.contains("another latkit (pid "))
        .count();
    assert_eq!((measured, refused), (1, 1), "{twins:?}");
    assert_eq!(guest.state("twins"), CLEAN);

    // rtla inside a -T run: seen while it ran, though it put its settings back.
    let (rc, stderr) = guest.rc("inside");
    assert_eq!(rc, 5, "{stderr}");
    assert!(stderr.contains("changed while latkit measured"), "{stderr}");
    assert_eq!(guest.state("inside"), CLEAN);

    // taskset -c 3: every online CPU measured all the same.
    let (rc, stderr) = guest.rc("taskset");
    assert_eq!(rc, 0, "{stderr}");
    assert_eq!(per_cpu(&guest.json("taskset")).len(), CPUS);
    assert_eq!(guest.state("taskset"), CLEAN);

    // CPU 1 offline: CPUs 0, 2 and 3 measured, none shifted; -c 0-3 refused by name.
    let (rc, stderr) = guest.rc("offline");
    assert_eq!(rc, 0, "{stderr}");
    let offline = guest.json("offline");
    for cpu in [0, 2, 3] {
        let samples = &crate::common::bench(&offline, &format!("cpu{cpu}"))["timer"]["samples"];
        assert!(samples.as_u64() > Some(0), "CPU {cpu}: {offline}");
    }
    assert!(!offline.to_string().contains("\"cpu1\""), "{offline}");
    let (rc, stderr) = guest.rc("offline-c");
    assert_eq!(rc, 2, "{stderr}");
    assert!(
        stderr.contains("CPU 1 is not online (online: 0,2-3)"),
        "{stderr}"
    );

    // SIGKILL: the next run stops the stale instance, puts 1000 µs back (not the killed
    // run's 2000), measures, and leaves tracefs as booted.
    let killed = guest.state("killed");
    assert!(
        killed.contains("period=2000") && killed.contains("latkit"),
        "{killed}"
    );
    let (rc, stderr) = guest.rc("after-kill");
    assert_eq!(rc, 0, "{stderr}");
    assert!(
        stderr.contains("a latkit killed during its test (pid "),
        "{stderr}"
    );
    assert_eq!(guest.state("after-kill"), CLEAN);

    // rtla running: refused by name, rtla's period untouched.
    assert!(
        !guest.console.contains("never started"),
        "{}",
        guest.console
    );
    let (rc, stderr) = guest.rc("beside");
    assert_eq!(rc, 5, "{stderr}");
    assert!(stderr.contains("instance timerlat_top"), "{stderr}");
    assert_eq!(guest.file("beside.period").trim(), "500");

    // rtla started during latkit's run: latkit says its figures are not the test's (the
    // interruption's 130 wins, as it does over every other verdict).
    let (rc, stderr) = guest.rc("during");
    assert_eq!(rc, 130, "{stderr}");
    assert!(
        stderr.contains("changed while latkit measured") && stderr.contains("timerlat_top"),
        "{stderr}"
    );
}
