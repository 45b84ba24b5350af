//! Real-time scheduling: the policy of the calling thread (what the timer's measuring threads
//! ask for and the doctor tries, on a thread of its own), and the kernel's throttling of it.

/// SCHED_FIFO at `priority` (1–99) for the calling thread, or SCHED_OTHER when `None`.
pub fn set_policy(priority: Option<i32>) -> Result<(), String> {
    let (policy, prio) = match priority {
        Some(p) => (libc::SCHED_FIFO, p),
        None => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 means the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// Whether a thread may run at SCHED_FIFO `priority`: tried on a short-lived thread of its
/// own, so that the caller's scheduling is untouched.
pub fn policy_allowed(priority: i32) -> Result<(), String> {
    std::thread::spawn(move || set_policy(Some(priority)))
        .join()
        .unwrap_or_else(|_| Err("the trial thread panicked".into()))
}

/// The kernel's limit on real-time threads: `runtime_us` of every `period_us`.
#[derive(Debug, PartialEq, Eq)]
pub struct Throttle {
    pub runtime_us: i64,
    pub period_us: i64,
}

impl Throttle {
    /// The limit in force, from `kernel.sched_rt_runtime_us` and `sched_rt_period_us`: none
    /// when unlimited (`-1`), when the runtime covers the period, or when unreadable.
    pub fn in_force() -> Option<Throttle> {
        let read = |name: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok();
        Throttle::of(&read("sched_rt_runtime_us")?, &read("sched_rt_period_us")?)
    }

    fn of(runtime: &str, period: &str) -> Option<Throttle> {
        let throttle = Throttle {
            runtime_us: runtime.trim().parse().ok()?,
            period_us: period.trim().parse().ok()?,
        };
        (throttle.runtime_us >= 0 && throttle.runtime_us < throttle.period_us).then_some(throttle)
    }

    /// What it does to a thread that never sleeps, and how to lift it.
    pub fn warning(&self) -> String {
        format!(
            "--timer busy at SCHED_FIFO: the kernel's RT throttling \
             (kernel.sched_rt_runtime_us = {} of sched_rt_period_us = {}) stops a busy real-time \
             thread for {} ms of every {} ms, which shows as overruns and late wake-ups, not as \
             timer latency; `sysctl kernel.sched_rt_runtime_us=-1` lifts it (the thread can then \
             starve its CPU), or use --timer sleep",
            self.runtime_us,
            self.period_us,
            (self.period_us - self.runtime_us) / 1000,
            self.period_us / 1000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    #[test]
    fn throttling_is_in_force_only_below_the_period() {
        let default = Throttle::of("950000\n", "1000000\n").unwrap();
        assert_eq!(default.runtime_us, 950_000);
        assert!(default.warning().contains("for 50 ms of every 1000 ms"));
        assert_eq!(Throttle::of("-1\n", "1000000\n"), None);
        assert_eq!(Throttle::of("1000000", "1000000"), None);
        assert_eq!(Throttle::of("", "1000000"), None);
    }
}
