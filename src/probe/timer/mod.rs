//! Periodic timer wake-up latency: actual wake time − scheduled time on CLOCK_MONOTONIC, with
//! absolute deadlines, one pinned measuring thread per CPU.

mod assemble;
pub mod measure;
mod rt;
mod timerlat;

pub use measure::WaitMethod;

use crate::error::{Error, Result};
use crate::ingest::timerlat_trace::Context;
use crate::interrupt;
use crate::model::{BreakHit, Note, Run, RunningOverall, Second, TimerOverall};
use measure::{IntervalStats, Live, Plan, Recorded};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A measuring thread needs little stack; a small one stays within a small RLIMIT_MEMLOCK.
const MEASURING_STACK: usize = 256 * 1024;

/// What is measured, in Xenomai's numbering (`latency -t 0|1|2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestMode {
    /// A user-space thread of latkit's own (`-t 0`).
    User,
    /// timerlat's kernel thread, woken by the timer (`-t 1`).
    Kernel,
    /// The timer interrupt handler itself (`-t 2`).
    Irq,
}

impl TestMode {
    /// Xenomai's name for the mode, as its header prints it.
    pub fn xenomai_name(self) -> &'static str {
        match self {
            TestMode::User => "periodic user-mode task",
            TestMode::Kernel => "in-kernel periodic task",
            TestMode::Irq => "in-kernel timer handler",
        }
    }

    /// The flag that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            TestMode::User => "-t 0",
            TestMode::Kernel => "-t 1",
            TestMode::Irq => "-t 2",
        }
    }

    /// The timerlat context a kernel mode reads; none for user mode.
    fn context(self) -> Option<Context> {
        match self {
            TestMode::User => None,
            TestMode::Kernel => Some(Context::Thread),
            TestMode::Irq => Some(Context::Irq),
        }
    }
}

#[derive(Clone)]
pub struct TimerConfig {
    pub mode: TestMode,
    /// Where tracefs is, for the kernel modes (default: where the kernel mounts it).
    pub tracefs: Option<std::path::PathBuf>,
    pub period_us: u64,
    /// Seconds to measure after warm-up; 0 = until interrupted.
    pub duration_s: u64,
    pub warmup_s: u64,
    /// CPUs to pin one thread each to; empty = one unpinned thread.
    pub cpus: Vec<usize>,
    /// SCHED_FIFO priority, or `None` for SCHED_OTHER.
    pub priority: Option<i32>,
    pub mlock: bool,
    pub dma_latency: bool,
    pub method: WaitMethod,
    pub hist_buckets: usize,
    pub bucket_ns: u64,
    /// Keep the fixed-bucket counts (Xenomai `-h`); otherwise only their HSS statistics.
    pub keep_buckets: bool,
    pub freeze_trace: bool,
    pub break_us: Option<f64>,
}

/// A `--cpu` list: `0`, `0,2`, `1-3`, `all`, of CPUs online on this machine; the error says
/// what is wrong with it.
pub fn cpu_list(list: &str) -> std::result::Result<Vec<usize>, String> {
    cpu_list_among(list, &crate::host::cpus::online())
}

/// As [`cpu_list`], of the CPUs `online`.
fn cpu_list_among(list: &str, online: &[usize]) -> std::result::Result<Vec<usize>, String> {
    if list == "all" {
        return Ok(online.to_vec());
    }
    let bad = |why: String| format!("{why} (expected e.g. `0`, `0,2`, `1-3` or `all`)");
    let cpus = crate::host::cpus::parse_list(list).map_err(bad)?;
    if let Some(&cpu) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {cpu} is not online (online: {})",
            crate::host::cpus::format_list(online)
        ));
    }
    Ok(cpus)
}

/// What measuring without SCHED_FIFO does to the numbers.
const AT_NORMAL_PRIORITY: &str =
    "measuring at normal priority: other tasks delay wake-ups, expect higher and noisier latencies";

/// What the live display is told each second (all threads combined).
pub trait Display {
    /// The test starts; `warnings` says what its setup could not do (privileges missing).
    fn started(&mut self, config: &TimerConfig, warnings: &[Note]);
    fn interval(&mut self, index: u64, combined: &IntervalStats, so_far: &TimerOverall);
}

pub struct Outcome {
    pub run: Run,
    pub notes: Vec<Note>,
    pub interrupted: bool,
    /// Another tool changed the kernel tracer's settings during the test: why the figures
    /// are not the test's.
    pub disturbed: Option<String>,
}

/// Notes what the setup could not do and what that does to the numbers (once each); the
/// command decides whether the terminal hears it.
fn warn(notes: &mut Vec<Note>, what: &str, err: &str, effect: &str) {
    let message = format!("{what} failed ({err}): {effect}");
    if !notes.iter().any(|n| n.message == message) {
        notes.push(Note::warning(message));
    }
}

/// Locks memory as far as this process may, warning about what it could not.
fn lock_memory(notes: &mut Vec<Note>) {
    match rt::lock_memory() {
        Ok(rt::Locked::All) => {}
        Ok(rt::Locked::CurrentOnly { limit_bytes }) => warn(
            notes,
            "mlockall of future memory",
            &format!(
                "no CAP_IPC_LOCK and RLIMIT_MEMLOCK is {} KiB; only memory mapped at start is locked",
                limit_bytes / 1024
            ),
            "the measuring threads' stacks and histograms may page-fault",
        ),
        Err(e) => warn(notes, "mlockall", &e, "page faults may add latency spikes"),
    }
}

/// Holds `/dev/cpu_dma_latency` at 0 for the test, warning when it cannot.
fn hold_dma_latency(notes: &mut Vec<Note>) -> Option<rt::DmaLatency> {
    rt::hold_dma_latency()
        .map_err(|e| {
            warn(
                notes,
                &format!("holding {} at 0", rt::DMA_LATENCY),
                &e,
                "CPUs may enter deep idle states between wake-ups and add their exit latency",
            )
        })
        .ok()
}

/// Runs the test, feeding `display` once per second, until the duration is reached, a
/// `--break` sample arrives or the user interrupts.
pub fn run(
    config: &TimerConfig,
    display: &mut dyn Display,
    stamp: crate::env::Stamp,
) -> Result<Outcome> {
    if config.period_us == 0 {
        return Err(Error::Input("--period must be at least 1 µs".into()));
    }
    // Before tracefs changes: an interrupt must find the restoring code still running.
    interrupt::install();
    // The kernel modes refuse before anything is set up: no tracer, no test.
    let kernel = match config.mode.context() {
        Some(context) => Some(timerlat::Kernel::start(config, context)?),
        None => None,
    };
    let mut notes: Vec<Note> = kernel
        .as_ref()
        .map(|k| k.setup_notes(config.break_us))
        .unwrap_or_default();
    if config.mlock {
        lock_memory(&mut notes);
    }
    let _dma = config.dma_latency.then(|| hold_dma_latency(&mut notes));
    let config = kernel.as_ref().map_or(config, |k| &k.config);
    let plan = plan_of(config);
    let started = stamp.clock.now();
    let (config, threads, measured) = match &kernel {
        Some(k) => {
            display.started(config, &notes);
            let (measured, read_notes) = k.measure(&plan, display)?;
            notes.extend(read_notes);
            let threads = config.cpus.iter().copied().map(Some).collect();
            (config.clone(), threads, measured)
        }
        None => measure_user(config, &plan, &mut notes, display),
    };
    let Measured {
        recorded,
        series,
        lives,
        setup_errors,
    } = measured;
    for (what, err, effect) in setup_errors {
        warn(&mut notes, &what, &err, effect);
    }
    let break_hit = break_hit(&lives, &plan);
    let mut disturbed = None;
    if let Some(kernel) = kernel {
        disturbed = kernel.disturbed();
        notes.extend(disturbed.clone().map(Note::warning));
        notes.extend(kernel.finish(config.freeze_trace && break_hit.is_some()));
    }
    let recorded = recorded
        .into_iter()
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(|e| Error::Environment(format!("timer measurement failed: {e}")))?;
    let run = assemble::assemble(
        &config,
        &threads,
        recorded,
        &series,
        (started, stamp),
        break_hit,
    );
    Ok(Outcome {
        run,
        notes,
        interrupted: interrupt::requested(),
        disturbed,
    })
}

/// User mode: latkit's own threads, one per CPU (or one unpinned), at the policy allowed.
fn measure_user(
    config: &TimerConfig,
    plan: &Plan,
    notes: &mut Vec<Note>,
    display: &mut dyn Display,
) -> (TimerConfig, Vec<Option<usize>>, Measured) {
    let threads: Vec<Option<usize>> = if config.cpus.is_empty() {
        vec![None]
    } else {
        config.cpus.iter().copied().map(Some).collect()
    };
    let freezers = freezers(config.freeze_trace, threads.len(), notes);
    let config = effective(config, notes);
    if let Err(e) = rt::avoid(&config.cpus) {
        let effect = "it may share a CPU with a measuring thread";
        warn(
            notes,
            "moving the display thread off the measured CPUs",
            &e,
            effect,
        );
    }
    display.started(&config, notes);
    let measured = measure_all(&config, plan, &threads, freezers, display);
    (config, threads, measured)
}

/// What the measuring threads recorded, the per-second series the live view followed, the
/// threads' live state (for `--break`) and what their setup could not do.
struct Measured {
    recorded: Vec<std::result::Result<Recorded, String>>,
    series: Series,
    lives: Vec<Live>,
    setup_errors: Vec<(String, String, &'static str)>,
}

/// Starts one measuring thread per entry of `threads` and follows them once per second
/// through `display` until the test ends.
fn measure_all(
    config: &TimerConfig,
    plan: &Plan,
    threads: &[Option<usize>],
    freezers: Vec<Option<rt::TraceFreezer>>,
    display: &mut dyn Display,
) -> Measured {
    let stop = AtomicBool::new(false);
    let lives: Vec<Live> = threads.iter().map(|_| Live::default()).collect();
    let setup_errors = std::sync::Mutex::new(Vec::<(String, String, &str)>::new());

    let (recorded, series) = std::thread::scope(|scope| {
        let handles: Vec<_> = threads
            .iter()
            .zip(freezers)
            .enumerate()
            .map(|(i, (&cpu, freezer))| {
                let (live, stop, setup_errors) = (&lives[i], &stop, &setup_errors);
                let priority = config.priority;
                std::thread::Builder::new()
                    .name(format!("latkit-timer-{i}"))
                    .stack_size(MEASURING_STACK)
                    .spawn_scoped(scope, move || {
                        let problems = place_thread(cpu, priority);
                        if let Ok(mut errors) = setup_errors.lock() {
                            errors.extend(problems);
                        }
                        let result = measure::measure(i, plan, live, stop, freezer);
                        // A thread that fails stops the others: the test is over.
                        if result.is_err() {
                            stop.store(true, Ordering::Release);
                        }
                        result
                    })
            })
            .collect();
        // A thread that could not start ends the test, with the reason, once the others stop.
        if handles.iter().any(|h| h.is_err()) {
            stop.store(true, Ordering::Release);
        }
        let series = follow(config, &lives, &stop, display);
        stop.store(true, Ordering::Release);
        let recorded: Vec<std::result::Result<Recorded, String>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err("measuring thread panicked".into())),
                Err(e) => Err(format!("could not start a measuring thread: {e}")),
            })
            .collect();
        (recorded, series)
    });
    Measured {
        recorded,
        series,
        lives,
        setup_errors: setup_errors.into_inner().unwrap_or_default(),
    }
}

/// The first `--break` sample any thread hit: which thread, how late, and when.
fn break_hit(lives: &[Live], plan: &Plan) -> Option<BreakHit> {
    lives.iter().enumerate().find_map(|(thread, live)| {
        // Periods after the warm-up's end; a warm-up sample (-f in a kernel mode) is before 0.
        let sample = live.break_sample.load(Ordering::Relaxed) as f64;
        live.broke.load(Ordering::Acquire).then(|| BreakHit {
            thread,
            latency_ns: live.break_latency.load(Ordering::Relaxed),
            at_s: (sample - plan.warmup_periods as f64) * plan.period_ns as f64 / 1e9,
        })
    })
}

/// How the measuring threads sample, from the test's settings.
fn plan_of(config: &TimerConfig) -> Plan {
    let period_ns = (config.period_us * 1000) as i64;
    let periods_per_second = (1_000_000_000 / period_ns).max(1) as u64;
    Plan {
        period_ns,
        warmup_periods: config.warmup_s * periods_per_second,
        periods_per_interval: periods_per_second,
        method: config.method,
        hist_buckets: config.hist_buckets.max(1),
        bucket_ns: config.bucket_ns.max(1),
        break_ns: config.break_us.map(|us| (us * 1000.0).round() as i64),
        kernel_breaks: config.freeze_trace && config.mode.context().is_some(),
        intervals: (config.duration_s > 0).then_some(config.duration_s),
    }
}

/// One trace freezer per thread for `--freeze-trace` (none where tracing is unavailable,
/// with a warning).
fn freezers(wanted: bool, threads: usize, notes: &mut Vec<Note>) -> Vec<Option<rt::TraceFreezer>> {
    let freezers: Vec<_> = (0..threads)
        .map(|_| match wanted {
            true => rt::TraceFreezer::open()
                .map_err(|e| warn(notes, "--freeze-trace", &e, "no trace is frozen"))
                .ok(),
            false => None,
        })
        .collect();
    if let Some(f) = freezers.iter().flatten().next() {
        notes.push(Note::info(format!("--freeze-trace: {}", f.describe())));
    }
    freezers
}

/// The settings in force: SCHED_FIFO refused (no privilege, no RT budget) is known before
/// the test starts, so that the warning comes before the header and the header names the
/// priority in force.
fn effective(config: &TimerConfig, notes: &mut Vec<Note>) -> TimerConfig {
    let mut effective = config.clone();
    if let Some(p) = config.priority
        && let Err(e) = crate::host::sched::policy_allowed(p)
    {
        warn(
            notes,
            &format!("SCHED_FIFO priority {p}"),
            &e,
            AT_NORMAL_PRIORITY,
        );
        effective.priority = None;
    }
    if effective.priority.is_some()
        && config.method == WaitMethod::Busy
        && let Some(throttle) = crate::host::sched::Throttle::in_force()
    {
        notes.push(Note::warning(throttle.warning()));
    }
    effective
}

/// Pins a measuring thread to `cpu` and sets its policy; what failed, to be warned about.
fn place_thread(cpu: Option<usize>, priority: Option<i32>) -> Vec<(String, String, &'static str)> {
    let mut problems = Vec::new();
    if let Some(cpu) = cpu
        && let Err(e) = rt::pin_to(cpu)
    {
        problems.push((
            format!("pinning to CPU {cpu}"),
            e,
            "the thread may migrate between CPUs",
        ));
    }
    if let Err(e) = crate::host::sched::set_policy(priority) {
        let what = match priority {
            Some(p) => format!("SCHED_FIFO priority {p}"),
            None => "SCHED_OTHER".to_string(),
        };
        problems.push((what, e, AT_NORMAL_PRIORITY));
    }
    problems
}

/// Per-interval figures of each thread, in order.
type Series = Vec<Vec<IntervalStats>>;

/// Waits for each second every thread has published, hands it to the display, and decides
/// when to stop.
fn follow(
    config: &TimerConfig,
    lives: &[Live],
    stop: &AtomicBool,
    display: &mut dyn Display,
) -> Series {
    let mut series: Series = lives.iter().map(|_| Vec::new()).collect();
    let mut overall = RunningOverall::default();
    let mut k = 0u64;
    loop {
        let stopping = stop.load(Ordering::Acquire)
            || interrupt::requested()
            || lives.iter().all(|l| l.finished.load(Ordering::Acquire));
        let ready = lives
            .iter()
            .map(|l| l.intervals.published())
            .min()
            .unwrap_or(0);
        while k < ready && (config.duration_s == 0 || k < config.duration_s) {
            let per_thread: Vec<IntervalStats> = lives.iter().map(|l| l.intervals.get(k)).collect();
            let combined = combine(&per_thread);
            let so_far = overall.add(&Second {
                min_ns: combined.min,
                avg_ns: combined.avg(),
                max_ns: combined.max,
                overruns: combined.overruns,
                mode_switches: 0,
            });
            display.interval(k, &combined, so_far);
            for (s, stats) in series.iter_mut().zip(per_thread) {
                s.push(stats);
            }
            k += 1;
        }
        if stopping || (config.duration_s > 0 && k >= config.duration_s) {
            return series;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// All threads' second as one: extremes of the extremes, mean of the averages.
fn combine(per_thread: &[IntervalStats]) -> IntervalStats {
    let n = per_thread.len().max(1) as i64;
    IntervalStats {
        min: per_thread.iter().map(|s| s.min).min().unwrap_or(0),
        max: per_thread.iter().map(|s| s.max).max().unwrap_or(0),
        // Sum and count chosen so that avg() is the mean of the per-thread averages.
        sum: per_thread.iter().map(|s| s.avg()).sum::<i64>(),
        count: n as u64,
        overruns: per_thread.iter().map(|s| s.overruns).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_limit_in_microseconds_is_not_truncated() {
        let config = TimerConfig {
            mode: TestMode::User,
            tracefs: None,
            period_us: 1000,
            duration_s: 1,
            warmup_s: 0,
            cpus: Vec::new(),
            priority: None,
            mlock: false,
            dma_latency: false,
            method: WaitMethod::Nanosleep,
            hist_buckets: 1,
            bucket_ns: 1000,
            keep_buckets: false,
            freeze_trace: false,
            // 1.001 × 1000 is 1000.9999999999999 in binary floating point.
            break_us: Some(1.001),
        };
        assert_eq!(plan_of(&config).break_ns, Some(1001));
    }

    #[test]
    fn cpu_lists_are_of_online_cpus() {
        // CPU 1 offline on a four-CPU machine.
        let online = [0, 2, 3];
        assert_eq!(cpu_list_among("0", &online).unwrap(), [0]);
        assert_eq!(cpu_list_among("all", &online).unwrap(), online);
        assert_eq!(cpu_list_among("2-3", &online).unwrap(), [2, 3]);
        let refused = cpu_list_among("0-3", &online).unwrap_err();
        assert_eq!(refused, "CPU 1 is not online (online: 0,2-3)");
        let not_online = cpu_list_among("99", &online).unwrap_err();
        assert!(not_online.contains("not online"), "{not_online}");
        let beyond = cpu_list_among("9999", &online).unwrap_err();
        assert!(beyond.contains("beyond any machine"), "{beyond}");
        assert!(cpu_list_among("x", &online).is_err());
        assert!(cpu_list_among("1-0", &online).is_err());
    }
}
