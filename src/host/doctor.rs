//! The doctor: can this host measure latency well? Each check reads the kernel's own view (sysfs, procfs)
//! or tries the privilege it needs, and says what to do about a problem.

use std::fs;

pub use crate::model::{Check, CheckStatus as Status};

fn check(name: &str, status: Status, found: impl Into<String>, advice: &str) -> Check {
    Check {
        name: name.to_string(),
        status,
        found: found.into(),
        advice: if status == Status::Ok {
            String::new()
        } else {
            advice.to_string()
        },
    }
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Runs every check. Cheap enough to run for every measurement's environment snapshot.
pub fn checks() -> Vec<Check> {
    let cmdline = read("/proc/cmdline").unwrap_or_default();
    let version = nix::sys::utsname::uname()
        .map(|u| u.version().to_string_lossy().into_owned())
        .unwrap_or_default();
    vec![
        sched_fifo(),
        mlock(),
        dma_latency(),
        preempt_rt(&version),
        clocksource(),
        governor(),
        smt(),
        isolation(&cmdline),
        rt_throttling(),
        timerlat(),
        virtualization(),
        load(),
        irqbalance(),
        input_devices(),
    ]
}

/// Tries SCHED_FIFO on a short-lived thread, so the caller's own policy is untouched.
fn sched_fifo() -> Check {
    let tried = super::sched::policy_allowed(1);
    match tried {
        Ok(()) => check("sched_fifo", Status::Ok, "SCHED_FIFO allowed", ""),
        Err(e) => check(
            "sched_fifo",
            Status::Fail,
            format!("SCHED_FIFO refused: {e}"),
            "run as root, or grant CAP_SYS_NICE or an rtprio limit in /etc/security/limits.conf",
        ),
    }
}

fn mlock() -> Check {
    let page = vec![0u8; 4096];
    // SAFETY: the buffer is valid for its length for the duration of both calls.
    let rc = unsafe { libc::mlock(page.as_ptr().cast(), page.len()) };
    if rc == 0 {
        // SAFETY: same buffer as locked above.
        unsafe { libc::munlock(page.as_ptr().cast(), page.len()) };
        check("mlock", Status::Ok, "memory locking allowed", "")
    } else {
        check(
            "mlock",
            Status::Warn,
            format!("mlock refused: {}", std::io::Error::last_os_error()),
            "raise the memlock limit (ulimit -l) or grant CAP_IPC_LOCK; page faults will show as spikes",
        )
    }
}

fn dma_latency() -> Check {
    match fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
    {
        Ok(_) => check(
            "cpu_dma_latency",
            Status::Ok,
            "/dev/cpu_dma_latency writable",
            "",
        ),
        Err(e) => check(
            "cpu_dma_latency",
            Status::Warn,
            format!("/dev/cpu_dma_latency: {e}"),
            "run as root to keep CPUs out of deep idle states while measuring",
        ),
    }
}

fn preempt_rt(version: &str) -> Check {
    let realtime = read("/sys/kernel/realtime").as_deref() == Some("1");
    if realtime || version.contains("PREEMPT_RT") {
        check("preempt_rt", Status::Ok, "PREEMPT_RT kernel", "")
    } else {
        let model = if version.contains("PREEMPT_DYNAMIC") {
            "PREEMPT_DYNAMIC"
        } else if version.contains("PREEMPT") {
            "PREEMPT"
        } else {
            "no kernel preemption"
        };
        check(
            "preempt_rt",
            Status::Warn,
            format!("not a PREEMPT_RT kernel ({model})"),
            "boot a PREEMPT_RT kernel for bounded worst-case latency; expect millisecond outliers here",
        )
    }
}

fn clocksource() -> Check {
    match read("/sys/devices/system/clocksource/clocksource0/current_clocksource") {
        Some(cs) if cs == "tsc" => check("clocksource", Status::Ok, "clocksource tsc", ""),
        Some(cs) => check(
            "clocksource",
            Status::Warn,
            format!("clocksource {cs}"),
            "prefer tsc (clocksource=tsc tsc=reliable); slower clocks add to every reading",
        ),
        None => check(
            "clocksource",
            Status::Warn,
            "clocksource unknown",
            "check /sys/devices/system/clocksource",
        ),
    }
}

fn governor() -> Check {
    let governors: Vec<String> = (0..std::thread::available_parallelism().map_or(1, |n| n.get()))
        .filter_map(|cpu| {
            read(&format!(
                "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
            ))
        })
        .collect();
    if governors.is_empty() {
        return check(
            "cpufreq",
            Status::Ok,
            "no cpufreq control (fixed frequency or virtual machine)",
            "",
        );
    }
    if governors.iter().all(|g| g == "performance") {
        check("cpufreq", Status::Ok, "governor performance", "")
    } else {
        check(
            "cpufreq",
            Status::Warn,
            format!("governors {}", dedup(governors).join(",")),
            "set the performance governor (cpupower frequency-set -g performance); frequency changes add latency",
        )
    }
}

fn dedup(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

fn smt() -> Check {
    match read("/sys/devices/system/cpu/smt/active").as_deref() {
        Some("1") => check(
            "smt",
            Status::Warn,
            "SMT (hyper-threading) active",
            "disable SMT (nosmt) or keep the sibling of a measured CPU idle",
        ),
        Some(_) => check("smt", Status::Ok, "SMT inactive", ""),
        None => check("smt", Status::Ok, "SMT not reported", ""),
    }
}

fn isolation(cmdline: &str) -> Check {
    let found: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|p| {
            ["isolcpus=", "nohz_full=", "rcu_nocbs="]
                .iter()
                .any(|k| p.starts_with(k))
        })
        .collect();
    if found.is_empty() {
        check(
            "isolation",
            Status::Warn,
            "no isolcpus/nohz_full/rcu_nocbs on the kernel command line",
            "isolate the measured CPUs (isolcpus=, nohz_full=, rcu_nocbs=) and pin latkit there with -c",
        )
    } else {
        check("isolation", Status::Ok, found.join(" "), "")
    }
}

fn rt_throttling() -> Check {
    match super::sched::Throttle::in_force() {
        Some(t) => check(
            "rt_throttling",
            Status::Warn,
            format!(
                "RT throttling on ({} of every {} µs)",
                t.runtime_us, t.period_us
            ),
            "sysctl kernel.sched_rt_runtime_us=-1, or a busy RT task is paused every period",
        ),
        None => check("rt_throttling", Status::Ok, "RT throttling off", ""),
    }
}

/// Whether `timer -t 1` and `-t 2` can run: tracefs readable, with the timerlat tracer.
fn timerlat() -> Check {
    match super::tracefs::Tracefs::with_timerlat(None) {
        Ok(fs) => check(
            "timerlat",
            Status::Ok,
            format!(
                "timerlat tracer in {}: timer -t 1 (kernel) and -t 2 (irq) can measure",
                fs.root().display()
            ),
            "",
        ),
        Err(missing) => check(
            "timerlat",
            Status::Warn,
            missing.short(),
            "timer -t 1 and -t 2 need CONFIG_TIMERLAT_TRACER=y, tracefs and root; -t 0 needs none",
        ),
    }
}

fn virtualization() -> Check {
    match super::capture_basic().virtualization {
        Some(v) => check(
            "virtualization",
            Status::Warn,
            format!("virtual machine ({v})"),
            "the hypervisor can preempt the whole guest: trust min, median and p99 here, not max",
        ),
        None => check(
            "virtualization",
            Status::Ok,
            "bare metal (no hypervisor detected)",
            "",
        ),
    }
}

fn load() -> Check {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let one_minute: Option<f64> = read("/proc/loadavg")
        .and_then(|l| l.split_whitespace().next().and_then(|v| v.parse().ok()));
    match one_minute {
        Some(load) if load / cores > 0.5 => check(
            "load",
            Status::Warn,
            format!("load average {load:.2} on {cores} CPUs"),
            "stop other work before measuring, or isolate the measured CPUs",
        ),
        Some(load) => check(
            "load",
            Status::Ok,
            format!("load average {load:.2} on {cores} CPUs"),
            "",
        ),
        None => check(
            "load",
            Status::Warn,
            "load average unknown",
            "check /proc/loadavg",
        ),
    }
}

fn running(name: &str) -> bool {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
                && read(&format!("{}/comm", entry.path().display())).as_deref() == Some(name)
        })
}

fn irqbalance() -> Check {
    if running("irqbalance") {
        check(
            "irqbalance",
            Status::Warn,
            "irqbalance running",
            "stop irqbalance or ban the measured CPUs (IRQBALANCE_BANNED_CPULIST); moving IRQs land on them",
        )
    } else {
        check("irqbalance", Status::Ok, "irqbalance not running", "")
    }
}

fn input_devices() -> Check {
    let devices = fs::read_to_string("/proc/bus/input/devices").unwrap_or_default();
    let pads: Vec<String> = devices
        .split("\n\n")
        .filter(|block| {
            block
                .lines()
                .any(|l| l.starts_with("H: Handlers=") && l.contains("js"))
        })
        .filter_map(|block| {
            block
                .lines()
                .find_map(|l| l.strip_prefix("N: Name="))
                .map(|n| n.trim_matches('"').to_string())
        })
        .collect();
    if pads.is_empty() {
        check("input_devices", Status::Ok, "no joysticks or gamepads", "")
    } else {
        check(
            "input_devices",
            Status::Warn,
            format!("joysticks/gamepads present: {}", pads.join(", ")),
            "unplug them or stop their readers: their polling and events disturb input-latency benchmarks",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_has_a_status_and_advice_when_not_ok() {
        let checks = checks();
        assert_eq!(checks.len(), 14);
        for c in &checks {
            assert!(!c.found.is_empty(), "{}", c.name);
            assert_eq!(c.advice.is_empty(), c.status == Status::Ok, "{}", c.name);
        }
    }

    #[test]
    fn isolation_and_preemption_from_text() {
        assert_eq!(
            isolation("quiet isolcpus=2,3 nohz_full=2,3").status,
            Status::Ok
        );
        assert_eq!(isolation("quiet").status, Status::Warn);
        assert_eq!(preempt_rt("#1 SMP PREEMPT_RT Thu").status, Status::Ok);
        assert!(
            preempt_rt("#1 SMP PREEMPT_DYNAMIC")
                .found
                .contains("PREEMPT_DYNAMIC")
        );
    }
}
