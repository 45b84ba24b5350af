//! One measuring thread: wake at absolute deadlines, record how late each wake-up was.
//! After warm-up it never allocates and does no I/O (except freezing the trace when asked).

use super::rt::TraceFreezer;
use crate::model::vocab;
use crate::model::{LinearHistogram, TimerSummary};
use hdrhistogram::Histogram;
use nix::sys::time::TimeSpec;
use nix::time::{ClockId, ClockNanosleepFlags, clock_gettime, clock_nanosleep};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// How a thread waits for its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitMethod {
    /// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) — cyclictest's default.
    Nanosleep,
    /// A periodic timerfd read — Xenomai's user-mode method.
    Timerfd,
    /// Spin on the clock until the deadline: the OS/hypervisor noise floor.
    Busy,
}

impl WaitMethod {
    pub fn name(self) -> &'static str {
        match self {
            WaitMethod::Nanosleep => "nanosleep",
            WaitMethod::Timerfd => "timerfd",
            WaitMethod::Busy => "busy",
        }
    }
}

/// What every thread measures with.
pub struct Plan {
    pub period_ns: i64,
    pub warmup_periods: u64,
    pub periods_per_interval: u64,
    pub method: WaitMethod,
    pub hist_buckets: usize,
    pub bucket_ns: u64,
    /// Stop at the first sample above this (ns).
    pub break_ns: Option<i64>,
    /// The kernel decides the break (-f in a kernel mode): its stop threshold stops the
    /// frozen trace at a sample, warm-up or not, and that sample is the break reported.
    pub kernel_breaks: bool,
    /// Stop after this many intervals of `periods_per_interval` periods (the requested
    /// duration): periods, not samples, so that missed periods do not lengthen the test.
    pub intervals: Option<u64>,
}

/// Per-second figures of one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalStats {
    pub min: i64,
    pub max: i64,
    pub sum: i64,
    pub count: u64,
    pub overruns: u64,
}

impl IntervalStats {
    /// Counts one sample and the periods it missed.
    #[inline]
    pub fn add(&mut self, latency: i64, missed: u64) {
        self.min = self.min.min(latency);
        self.max = self.max.max(latency);
        self.sum = self.sum.saturating_add(latency);
        self.count += 1;
        self.overruns += missed;
    }

    /// The thread's whole-run figures, exact; `None` before the first sample.
    pub fn summary(&self) -> Option<TimerSummary> {
        (self.count > 0).then(|| TimerSummary {
            min_ns: self.min,
            avg_ns: self.sum as f64 / self.count as f64,
            max_ns: self.max,
            samples: Some(self.count),
            overruns: Some(self.overruns),
        })
    }

    /// Xenomai's per-second average: the sum divided by the count, truncated.
    pub fn avg(&self) -> i64 {
        if self.count == 0 {
            0
        } else {
            self.sum / self.count as i64
        }
    }
}

const RING: usize = 1024;

#[derive(Default)]
struct Slot {
    min: AtomicI64,
    max: AtomicI64,
    sum: AtomicI64,
    count: AtomicU64,
    overruns: AtomicU64,
}

/// Hands per-second figures from a measuring thread to the printer without locks or
/// allocation: the thread fills slot `k % RING`, then publishes `k + 1`.
pub struct Intervals {
    slots: Box<[Slot]>,
    published: AtomicU64,
}

impl Default for Intervals {
    fn default() -> Self {
        Intervals {
            slots: (0..RING).map(|_| Slot::default()).collect(),
            published: AtomicU64::new(0),
        }
    }
}

impl Intervals {
    fn publish(&self, k: u64, s: &IntervalStats) {
        let slot = &self.slots[(k as usize) % RING];
        slot.min.store(s.min, Ordering::Relaxed);
        slot.max.store(s.max, Ordering::Relaxed);
        slot.sum.store(s.sum, Ordering::Relaxed);
        slot.count.store(s.count, Ordering::Relaxed);
        slot.overruns.store(s.overruns, Ordering::Relaxed);
        self.published.store(k + 1, Ordering::Release);
    }

    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// Interval `k`, which must have been published (and not yet overwritten).
    pub fn get(&self, k: u64) -> IntervalStats {
        let slot = &self.slots[(k as usize) % RING];
        IntervalStats {
            min: slot.min.load(Ordering::Relaxed),
            max: slot.max.load(Ordering::Relaxed),
            sum: slot.sum.load(Ordering::Relaxed),
            count: slot.count.load(Ordering::Relaxed),
            overruns: slot.overruns.load(Ordering::Relaxed),
        }
    }
}

/// What one thread shares with the printer while running.
#[derive(Default)]
pub struct Live {
    pub intervals: Intervals,
    /// Set by the thread when it stops on a `--break` sample: (latency ns, sample index).
    pub broke: AtomicBool,
    pub break_latency: AtomicI64,
    pub break_sample: AtomicU64,
    /// Set once the thread has measured the requested duration.
    pub finished: AtomicBool,
}

/// Everything a thread recorded after warm-up.
pub struct Recorded {
    /// Every sample's exact extremes, sum, count and overruns (the histograms round).
    pub total: IntervalStats,
    pub latency: Histogram<u64>,
    pub samples: LinearHistogram,
    pub interval_min: LinearHistogram,
    pub interval_max: LinearHistogram,
}

/// Largest latency the histogram distinguishes; larger ones saturate (10 s).
const HIGHEST_NS: u64 = 10_000_000_000;

fn now() -> i64 {
    // CLOCK_MONOTONIC always exists on Linux.
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap_or(TimeSpec::new(0, 0));
    t.tv_sec() * 1_000_000_000 + t.tv_nsec()
}

fn timespec(ns: i64) -> TimeSpec {
    TimeSpec::new(ns / 1_000_000_000, ns % 1_000_000_000)
}

/// A periodic timerfd whose first expiry is `start` (absolute, CLOCK_MONOTONIC).
fn periodic_timerfd(start: i64, period: i64) -> Result<OwnedFd, String> {
    use nix::sys::time::TimeValLike;
    use nix::sys::timerfd::{
        ClockId as TimerClock, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags,
    };
    let fd = TimerFd::new(TimerClock::CLOCK_MONOTONIC, TimerFlags::empty())
        .map_err(|e| e.to_string())?;
    fd.set(
        Expiration::IntervalDelayed(TimeSpec::nanoseconds(start), TimeSpec::nanoseconds(period)),
        TimerSetTimeFlags::TFD_TIMER_ABSTIME,
    )
    .map_err(|e| e.to_string())?;
    Ok(fd.into())
}

/// Blocks on the timerfd; returns how many periods expired.
fn read_ticks(fd: &OwnedFd) -> u64 {
    let mut buf = [0u8; 8];
    loop {
        match nix::unistd::read(fd.as_fd(), &mut buf) {
            Ok(8) => return u64::from_ne_bytes(buf),
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return 1,
        }
    }
}

impl Recorded {
    fn empty(plan: &Plan, fresh: IntervalStats) -> Result<Recorded, String> {
        let linear = |name| LinearHistogram::new(name, plan.bucket_ns, plan.hist_buckets);
        Ok(Recorded {
            total: fresh,
            latency: Histogram::new_with_bounds(1, HIGHEST_NS, 3).map_err(|e| e.to_string())?,
            samples: linear("samples"),
            interval_min: linear(vocab::INTERVAL_MIN),
            interval_max: linear(vocab::INTERVAL_MAX),
        })
    }
}

/// Waits for the deadline at `expected` (ns on CLOCK_MONOTONIC) the way `method` does;
/// returns how many periods a timerfd says expired (1 for the other methods).
#[inline]
fn wait(timerfd: Option<&OwnedFd>, method: WaitMethod, expected: i64) -> u64 {
    match (timerfd, method) {
        (Some(fd), _) => read_ticks(fd),
        (None, WaitMethod::Busy) => {
            while now() < expected {
                std::hint::spin_loop();
            }
            1
        }
        (None, _) => {
            let deadline = timespec(expected);
            while let Err(nix::errno::Errno::EINTR) = clock_nanosleep(
                ClockId::CLOCK_MONOTONIC,
                ClockNanosleepFlags::TIMER_ABSTIME,
                &deadline,
            ) {}
            1
        }
    }
}

/// Counts one thread's (or one CPU's) samples after warm-up into its histograms and
/// per-second figures, publishes each second to the printer, and notes a `--break` sample.
/// Shared by the user-mode loop and the kernel modes, which read samples from the trace.
pub struct Sampler<'a> {
    index: usize,
    plan: &'a Plan,
    live: &'a Live,
    freezer: Option<TraceFreezer>,
    recorded: Recorded,
    fresh: IntervalStats,
    interval: IntervalStats,
    /// Periods since the start, samples and missed periods alike: the test's clock.
    periods: u64,
    /// The period that ends the interval being filled.
    interval_end: u64,
    /// The period that ends the test (`plan.intervals` whole intervals after the warm-up).
    last_period: Option<u64>,
    published: u64,
    max_so_far: i64,
}

impl<'a> Sampler<'a> {
    /// `freezer` freezes the trace at each new maximum.
    pub fn new(
        index: usize,
        plan: &'a Plan,
        live: &'a Live,
        freezer: Option<TraceFreezer>,
    ) -> Result<Sampler<'a>, String> {
        let fresh = IntervalStats {
            min: i64::MAX,
            max: i64::MIN,
            ..IntervalStats::default()
        };
        Ok(Sampler {
            index,
            plan,
            live,
            freezer,
            recorded: Recorded::empty(plan, fresh)?,
            fresh,
            interval: fresh,
            periods: 0,
            interval_end: plan.warmup_periods + plan.periods_per_interval,
            last_period: plan.intervals.map(|intervals| {
                let per = plan.periods_per_interval.max(1);
                plan.warmup_periods
                    .saturating_add(intervals.saturating_mul(per))
            }),
            published: 0,
            max_so_far: i64::MIN,
        })
    }

    /// Counts a sample `latency` ns late that missed `missed` periods; false once this
    /// sampler has all it needs (the requested duration, in periods). A `--break` sample sets
    /// `stop`.
    #[inline]
    pub fn take(&mut self, latency: i64, missed: u64, stop: &AtomicBool) -> bool {
        // Periods past the test's end are not the test's: a sample after a gap across the
        // end (a stalled guest, lost trace events) counts as missed only those up to it, so
        // that samples and overruns add up to the periods asked for.
        let missed = match self.last_period {
            Some(end) => missed.min(end.saturating_sub(self.periods).saturating_sub(1)),
            None => missed,
        };
        self.periods = self.periods.saturating_add(missed).saturating_add(1);
        if self.periods <= self.plan.warmup_periods {
            return true;
        }
        // Nor are periods before it: of a gap across the warm-up's end, only those after it.
        let missed = missed.min(self.periods - self.plan.warmup_periods - 1);
        let recorded = &mut self.recorded;
        recorded.latency.saturating_record(latency.max(0) as u64);
        recorded.samples.add(latency);
        self.interval.add(latency, missed);
        recorded.total.add(latency, missed);
        if latency > self.max_so_far {
            self.max_so_far = latency;
            if let Some(f) = self.freezer.as_mut() {
                f.freeze(self.index, latency);
            }
        }
        self.check_break(latency, stop);
        if self.periods >= self.interval_end {
            let recorded = &mut self.recorded;
            recorded.interval_min.add(self.interval.min);
            recorded.interval_max.add(self.interval.max);
            self.live.intervals.publish(self.published, &self.interval);
            self.published += 1;
            self.interval = self.fresh;
            // Back on the grid of whole intervals after periods were missed.
            let per = self.plan.periods_per_interval.max(1);
            let since_warmup = self.periods - self.plan.warmup_periods;
            self.interval_end = self.plan.warmup_periods + (since_warmup / per + 1) * per;
            if self.last_period.is_some_and(|end| self.periods >= end) {
                self.live.finished.store(true, Ordering::Release);
                return false;
            }
        }
        true
    }

    /// A `--break` sample, unless the kernel decides the break.
    fn check_break(&self, latency: i64, stop: &AtomicBool) {
        if let Some(limit) = self.plan.break_ns
            && latency > limit
            && !self.plan.kernel_breaks
        {
            self.broke_at(latency, self.periods, stop);
        }
    }

    /// Periods since the start, the warm-up's too: where the sample last taken is.
    pub fn periods(&self) -> u64 {
        self.periods
    }

    /// The sample of `period` (counted from the start), `latency` ns late, is the break:
    /// said to the live view and the test stopped.
    pub fn broke_at(&self, latency: i64, period: u64, stop: &AtomicBool) {
        let live = self.live;
        live.break_latency.store(latency, Ordering::Relaxed);
        live.break_sample.store(period, Ordering::Relaxed);
        live.broke.store(true, Ordering::Release);
        stop.store(true, Ordering::Release);
    }

    pub fn finish(self) -> Recorded {
        self.recorded
    }
}

/// Measures until `stop` is set. `freezer` freezes the trace at each new maximum.
pub fn measure(
    index: usize,
    plan: &Plan,
    live: &Live,
    stop: &AtomicBool,
    freezer: Option<TraceFreezer>,
) -> Result<Recorded, String> {
    let mut sampler = Sampler::new(index, plan, live, freezer)?;
    let period = plan.period_ns;
    // First deadline one millisecond from now, as Xenomai does.
    let mut expected = now() + 1_000_000;
    let timerfd = match plan.method {
        WaitMethod::Timerfd => Some(periodic_timerfd(expected, period)?),
        _ => None,
    };
    while !stop.load(Ordering::Relaxed) {
        let ticks = wait(timerfd.as_ref(), plan.method, expected);
        let latency = now() - expected;
        // A wake-up later than the next deadline missed whole periods: count them and skip
        // ahead on the same grid, so the schedule never drifts.
        let missed = match timerfd {
            Some(_) => ticks.saturating_sub(1),
            None if latency >= period => (latency / period) as u64,
            None => 0,
        };
        expected += (missed as i64 + 1) * period;
        if !sampler.take(latency, missed, stop) {
            break;
        }
    }
    Ok(sampler.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 warm-up periods, then 5 intervals of 100.
    fn plan() -> Plan {
        Plan {
            period_ns: 100_000,
            warmup_periods: 10,
            periods_per_interval: 100,
            method: WaitMethod::Nanosleep,
            hist_buckets: 100,
            bucket_ns: 1_000,
            break_ns: None,
            kernel_breaks: false,
            intervals: Some(5),
        }
    }

    #[test]
    fn a_gap_across_the_end_counts_only_the_periods_up_to_it() {
        let plan = plan();
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let mut sampler = Sampler::new(0, &plan, &live, None).unwrap();
        let mut more = true;
        for _ in 0..10 + 450 {
            more = sampler.take(5_000, 0, &stop);
        }
        assert!(more);
        // After the warm-up's 10 and 450 more, a stall of 1,500 periods: the 49 before the
        // 500th are the test's, and the sample ends it.
        more = sampler.take(5_000, 1_500, &stop);
        assert!(!more, "the test's 500 periods are done");
        let total = sampler.finish().total;
        assert_eq!(total.count + total.overruns, 500, "{total:?}");
        assert_eq!(total.overruns, 49);
    }

    #[test]
    fn a_gap_across_the_warm_up_counts_only_the_test_s_periods() {
        let plan = plan();
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let mut sampler = Sampler::new(0, &plan, &live, None).unwrap();
        for _ in 0..4 {
            sampler.take(5_000, 0, &stop);
        }
        // A stall from the 4th period to the 30th: the warm-up's last 6 were not the test's;
        // its first 19 were missed, the 20th is this sample.
        sampler.take(5_000, 25, &stop);
        let mut more = true;
        while more {
            more = sampler.take(5_000, 0, &stop);
        }
        let total = sampler.finish().total;
        assert_eq!(total.overruns, 19);
        assert_eq!(total.count + total.overruns, 500, "{total:?}");
    }
}
