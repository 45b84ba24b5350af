//! Other processes during a run: how many CPUs they kept busy between the run's start and its
//! end, from the machine's CPU time (`/proc/stat`, steal by other guests included) less this
//! process's and its waited-for children's. A benchmark sharing the machine measures the
//! sharing as much as itself.

use crate::model::{Check, CheckStatus};
use std::time::Instant;

/// Busier than this many CPUs on average, other work is worth a warning.
const BUSY_CPUS: f64 = 0.25;

/// CPU time spent so far, by the machine and by this process with its children, at a moment
/// (seconds on a monotonic clock).
#[derive(Clone, Copy, Debug)]
pub struct CpuReading {
    pub machine: f64,
    pub own: f64,
    pub at: f64,
}

impl CpuReading {
    /// Now, from `/proc/stat` and `getrusage`; `None` where `/proc/stat` cannot be read.
    pub fn read() -> Option<CpuReading> {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        let start = START.get_or_init(Instant::now);
        Some(CpuReading {
            machine: machine_busy_seconds()?,
            own: own_seconds(),
            at: start.elapsed().as_secs_f64(),
        })
    }

    /// The `busy` check: how many CPUs other processes kept busy from `self` to `later`.
    pub fn others_busy(&self, later: &CpuReading) -> Option<Check> {
        let wall = later.at - self.at;
        if wall <= 0.0 {
            return None;
        }
        let others = ((later.machine - self.machine) - (later.own - self.own)).max(0.0) / wall;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let found = format!("other processes kept {others:.2} of {cpus} CPUs busy during the run");
        Some(match others > BUSY_CPUS {
            true => Check {
                name: "busy".into(),
                status: CheckStatus::Warn,
                found,
                advice: "they compete with the benchmark for CPUs and caches: stop other work, \
                         or isolate the measured CPUs"
                    .into(),
            },
            false => Check {
                name: "busy".into(),
                status: CheckStatus::Ok,
                found,
                advice: String::new(),
            },
        })
    }
}

/// Seconds every CPU spent busy since boot.
fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??;
    Some(busy_ticks(&stat)? / ticks as f64)
}

/// Clock ticks every CPU spent busy, from `/proc/stat`'s first line: user, nice, system, irq,
/// softirq and steal (guest time is within user; idle and iowait are not busy).
fn busy_ticks(stat: &str) -> Option<f64> {
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let field = |i: usize| fields.get(i).copied().unwrap_or(0.0);
    Some([0, 1, 2, 5, 6, 7].into_iter().map(field).sum())
}

/// Seconds of CPU this process and its waited-for children used.
fn own_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    [UsageWho::RUSAGE_SELF, UsageWho::RUSAGE_CHILDREN]
        .into_iter()
        .filter_map(|who| getrusage(who).ok())
        .map(|u| {
            let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            seconds(u.user_time()) + seconds(u.system_time())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_ticks_leave_out_idle_and_iowait() {
        // A kernel's line: user nice system idle iowait irq softirq steal guest guest_nice.
        let stat = "cpu  100 5 30 9000 40 2 3 7 50 0\ncpu0 50 2 15 4500 20 1 1 3 25 0\n";
        assert_eq!(busy_ticks(stat), Some(100.0 + 5.0 + 30.0 + 2.0 + 3.0 + 7.0));
        // Old kernels print fewer fields.
        assert_eq!(busy_ticks("cpu  10 0 5 100\n"), Some(15.0));
        assert_eq!(busy_ticks("intr 1 2 3\n"), None);
        assert_eq!(busy_ticks("cpu  10 x 5\n"), None);
        let first = CpuReading::read().unwrap();
        let later = CpuReading {
            at: first.at + 1.0,
            ..first
        };
        assert_eq!(first.others_busy(&later).unwrap().status, CheckStatus::Ok);
        let busy = CpuReading {
            machine: first.machine + 1.5,
            ..later
        };
        assert_eq!(first.others_busy(&busy).unwrap().status, CheckStatus::Warn);
        assert!(first.others_busy(&first).is_none());
    }
}
