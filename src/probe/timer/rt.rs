//! Real-time setup for measuring threads: scheduling, pinning, locked memory, CPU idle-state
//! latency, and freezing the kernel trace at a new maximum.

use crate::host::tracefs::ROOTS as TRACEFS;
use std::fs::{File, OpenOptions};
use std::io::Write;

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu).map_err(|e| e.to_string())?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| e.to_string())
}

/// Moves the calling thread off `busy` CPUs when any other CPU exists, so that the printing
/// thread does not share a CPU with a measuring one.
pub fn avoid(busy: &[usize]) -> Result<(), String> {
    let allowed =
        nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).map_err(|e| e.to_string())?;
    let mut set = nix::sched::CpuSet::new();
    let mut any = false;
    let free = crate::host::cpus::online()
        .into_iter()
        .filter(|c| !busy.contains(c));
    for cpu in free.filter(|&c| allowed.is_set(c).unwrap_or(false)) {
        set.set(cpu).map_err(|e| e.to_string())?;
        any = true;
    }
    if !any {
        return Ok(());
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| e.to_string())
}

/// How much memory was locked.
#[derive(Debug, PartialEq, Eq)]
pub enum Locked {
    /// Current and future memory (mlockall MCL_CURRENT | MCL_FUTURE).
    All,
    /// Only the memory mapped now: locking future memory too would make every later thread
    /// stack or allocation beyond the small RLIMIT_MEMLOCK fail.
    CurrentOnly { limit_bytes: u64 },
}

/// Locks memory so no page fault lands in a measurement: all of it when the process may lock
/// without limit (CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK), else what is mapped now.
pub fn lock_memory() -> Result<Locked, String> {
    use nix::sys::mman::{MlockAllFlags, mlockall};
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _) = getrlimit(Resource::RLIMIT_MEMLOCK).map_err(|e| e.to_string())?;
    let unlimited = soft == nix::sys::resource::RLIM_INFINITY || has_ipc_lock();
    if unlimited {
        mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE)
            .map_err(|e| e.to_string())?;
        return Ok(Locked::All);
    }
    mlockall(MlockAllFlags::MCL_CURRENT)
        .map_err(|e| format!("{e} (RLIMIT_MEMLOCK is {} KiB)", soft / 1024))?;
    Ok(Locked::CurrentOnly { limit_bytes: soft })
}

/// Whether CAP_IPC_LOCK (bit 14) is in this process's effective capabilities.
fn has_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// Holds `/dev/cpu_dma_latency` at 0 µs while alive, keeping CPUs out of deep idle states.
pub struct DmaLatency {
    _held: File,
}

pub const DMA_LATENCY: &str = "/dev/cpu_dma_latency";

pub fn hold_dma_latency() -> Result<DmaLatency, String> {
    let mut file = OpenOptions::new()
        .write(true)
        .open(DMA_LATENCY)
        .map_err(|e| e.to_string())?;
    file.write_all(&0i32.to_ne_bytes())
        .map_err(|e| e.to_string())?;
    Ok(DmaLatency { _held: file })
}

/// Writes a marker into the kernel trace at each new maximum and preserves the trace around
/// it: with ftrace snapshots, each new maximum replaces the snapshot and tracing goes on (as
/// Xenomai's freeze); without them, tracing stops at the first maximum (as cyclictest -b).
pub struct TraceFreezer {
    marker: File,
    freeze: Freeze,
}

enum Freeze {
    Snapshot(File),
    StopTracing(File),
}

impl TraceFreezer {
    /// Opens tracefs, mounting it when it is not mounted yet.
    pub fn open() -> Result<TraceFreezer, String> {
        let root = TRACEFS
            .iter()
            .find(|root| std::path::Path::new(&format!("{root}/trace_marker")).exists())
            .map(|r| r.to_string())
            .or_else(|| {
                nix::mount::mount(
                    Some("tracefs"),
                    TRACEFS[0],
                    Some("tracefs"),
                    nix::mount::MsFlags::empty(),
                    None::<&str>,
                )
                .ok()
                .map(|_| TRACEFS[0].to_string())
            })
            .ok_or_else(|| {
                "tracefs is not available (no trace_marker under /sys/kernel/tracing, and mounting it failed)"
                    .to_string()
            })?;
        let open = |name: &str| {
            OpenOptions::new()
                .write(true)
                .open(format!("{root}/{name}"))
                .map_err(|e| format!("{root}/{name}: {e}"))
        };
        let freeze = match open("snapshot") {
            Ok(snapshot) => Freeze::Snapshot(snapshot),
            Err(_) => Freeze::StopTracing(open("tracing_on")?),
        };
        Ok(TraceFreezer {
            marker: open("trace_marker")?,
            freeze,
        })
    }

    /// Where to look after the run.
    pub fn describe(&self) -> &'static str {
        match self.freeze {
            Freeze::Snapshot(_) => "the trace around the largest maximum is in tracefs `snapshot`",
            Freeze::StopTracing(_) => {
                "no ftrace snapshot support: tracing stopped at the first new maximum after warm-up (tracefs `trace`)"
            }
        }
    }

    /// Marks the trace with the latency and stops tracing. Formats into a stack buffer: the
    /// measuring thread must not allocate.
    pub fn freeze(&mut self, thread: usize, latency_ns: i64) {
        let mut buf = [0u8; 96];
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        let _ = writeln!(
            cursor,
            "latkit: new max latency {latency_ns} ns on thread {thread}"
        );
        let len = cursor.position() as usize;
        let _ = self.marker.write_all(&buf[..len]);
        let _ = match &mut self.freeze {
            Freeze::Snapshot(f) => f.write_all(b"1"),
            Freeze::StopTracing(f) => f.write_all(b"0"),
        };
    }
}
