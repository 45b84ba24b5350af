//! Xenomai's kernel modes (`latency -t 1|2`) through the kernel's timerlat tracer: per-CPU
//! kernel threads woken by a periodic timer, reporting each period's latency at the timer
//! interrupt and in the thread. latkit sets the tracer up in tracefs, reads the samples from
//! `trace_pipe` (consumed as they come, so memory stays bounded) into the same per-CPU
//! samplers as user mode, and puts tracefs back as it found it on every way out.

use super::measure::{Live, Plan, Recorded, Sampler};
use super::{Display, Measured, TimerConfig, follow};
use crate::error::{Error, Result};
use crate::host::tracefs::Tracefs;
use crate::ingest::timerlat_trace::{Context, TraceLine, parse_line};
use crate::interrupt;
use crate::model::Note;
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// timerlat's period bounds (µs), as the kernel enforces them on `timerlat_period_us`.
pub const PERIOD_US: std::ops::RangeInclusive<u64> = 100..=1_000_000;
/// The priority the kernel gives timerlat's threads (SCHED_FIFO, DEFAULT_TIMERLAT_PRIO).
pub const KERNEL_PRIORITY: i32 = 95;

mod claim;
mod session;

use session::Session;

/// A kernel-mode test: the tracer set up, the settings in force.
pub(super) struct Kernel {
    session: Session,
    context: Context,
    /// The test's settings as the kernel runs it: every CPU unless `-c` says which, at
    /// timerlat's own priority.
    pub config: TimerConfig,
}

impl Kernel {
    /// Checks that this kernel and this user can run `config.mode`, then starts timerlat.
    pub fn start(config: &TimerConfig, context: Context) -> Result<Kernel> {
        let flag = config.mode.flag();
        if !PERIOD_US.contains(&config.period_us) {
            return Err(Error::Input(format!(
                "{flag}: timerlat's period is {} µs to {} s; -p {} is outside it",
                PERIOD_US.start(),
                PERIOD_US.end() / 1_000_000,
                config.period_us
            )));
        }
        let stop = match (config.freeze_trace, config.break_us) {
            (false, _) => None,
            // The kernel stops at a whole number of µs or more: the first one above -b.
            (true, Some(us)) => Some((context, (us * 1000.0).round().max(0.0) as u64 / 1000 + 1)),
            (true, None) => {
                return Err(Error::Input(format!(
                    "{flag} -f stops the kernel's trace at the -b threshold (timerlat's \
                     stop_tracing_us): give -b US too"
                )));
            }
        };
        let fs = Tracefs::with_timerlat(config.tracefs.as_deref())
            .map_err(|missing| Error::Environment(missing.explain(flag)))?;
        let cpus = match config.cpus.is_empty() {
            // Every online CPU: the kernel's threads and interrupts run there whatever CPUs
            // latkit itself may use (`taskset`).
            true => crate::host::cpus::online(),
            false => config.cpus.clone(),
        };
        let session = Session::start(fs, &cpus, config.period_us, stop)
            .map_err(|e| Error::Environment(format!("{flag}: setting up timerlat failed: {e}")))?;
        Ok(Kernel {
            session,
            context,
            config: TimerConfig {
                cpus,
                priority: Some(KERNEL_PRIORITY),
                // With -f the break is the kernel's own (its whole µs or more), so that the
                // frozen trace ends at the sample latkit reports.
                break_us: match stop {
                    Some((_, us)) => Some((us * 1000 - 1) as f64 / 1000.0),
                    None => config.break_us,
                },
                ..config.clone()
            },
        })
    }

    /// Measures; also returns what the reading noted (lost events, a test cut short).
    pub fn measure(&self, plan: &Plan, display: &mut dyn Display) -> Result<(Measured, Vec<Note>)> {
        measure_all(&self.config, plan, self.context, &self.session, display)
    }

    /// What setting up said: a latkit killed mid-test had left tracefs as it set it (put
    /// back now), and with -f, the break the kernel's whole-µs threshold makes of -b.
    pub fn setup_notes(&self, asked_break_us: Option<f64>) -> Vec<Note> {
        let threshold = match (
            self.config.freeze_trace,
            self.config.break_us,
            asked_break_us,
        ) {
            (true, Some(us), Some(asked)) => Some(Note::info(format!(
                "-f: the kernel stops its trace at whole µs, so the break is at {} µs or more \
                 (-b {asked}), where the frozen trace ends",
                ((us * 1000.0).round() as u64 + 1) / 1000
            ))),
            _ => None,
        };
        let recovered = self.session.recovered.clone().map(Note::warning);
        recovered.into_iter().chain(threshold).collect()
    }

    /// What another tool changed while the test ran (see [`Session::disturbed`]).
    pub fn disturbed(&self) -> Option<String> {
        self.session.disturbed()
    }

    /// Puts tracefs back; notes what could not be, and where a frozen trace is.
    pub fn finish(mut self, frozen: bool) -> Vec<Note> {
        let kept = self.session.frozen_root();
        let mut notes: Vec<Note> = self
            .session
            .restore(frozen)
            .into_iter()
            .map(|p| Note::warning(format!("could not restore tracefs: {p}")))
            .collect();
        if let (true, Some(dir)) = (frozen, kept) {
            let dir = dir.display();
            notes.push(Note::info(format!(
                "-f: tracing stopped at the -b sample; the whole trace up to it is in \
                 {dir}/trace (`rmdir {dir}` frees it)"
            )));
        }
        notes
    }
}

/// What lost events do to the figures.
fn lost_warning(events: u64) -> String {
    format!(
        "the kernel lost {events} timerlat events before latkit read them (trace buffer \
         overflow; raise buffer_size_kb or the period): the figures miss those samples"
    )
}

/// Longer than any trace line.
const MAX_LINE: usize = 1 << 20;

/// How long without a single sample before latkit stops waiting: the tracer is not running.
fn silence_limit(period_us: u64) -> Duration {
    Duration::from_secs(3).max(Duration::from_micros(period_us * 3))
}

/// The longest a test of `config`'s duration may take on the wall clock: three times its
/// warm-up and duration, and a silence more. The test ends on the trace's clock; reading
/// may lag behind it (a slow or loaded machine), but not by that much. `None` for a test
/// until interrupted.
fn deadline(config: &TimerConfig) -> Option<Duration> {
    (config.duration_s > 0).then(|| {
        Duration::from_secs(3 * (config.warmup_s + config.duration_s))
            + silence_limit(config.period_us)
    })
}

/// What the reader of `trace_pipe` ended with.
struct ReaderEnd {
    recorded: std::result::Result<Vec<Recorded>, String>,
    /// Events the kernel dropped before latkit read them.
    lost: u64,
    /// Why the test ended before every CPU had its duration, when it did.
    cut_short: Option<String>,
}

/// Measures `context` on `config.cpus` through `session`, following each second through
/// `display` as user mode does; also returns what the reading noted.
fn measure_all(
    config: &TimerConfig,
    plan: &Plan,
    context: Context,
    session: &Session,
    display: &mut dyn Display,
) -> Result<(Measured, Vec<Note>)> {
    let pipe_path = session.pipe();
    let pipe = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&pipe_path)
            .map_err(|e| Error::io(&pipe_path.display().to_string(), e))?
    };
    let stop = AtomicBool::new(false);
    let lives: Vec<Live> = config.cpus.iter().map(|_| Live::default()).collect();
    let reader = Reader {
        context,
        cpus: &config.cpus,
        plan,
        lives: &lives,
        stop: &stop,
        silence: silence_limit(config.period_us),
        deadline: deadline(config),
        session,
        pipe_name: pipe_path.display().to_string(),
    };
    let (read, series) = std::thread::scope(|scope| {
        let reading = scope.spawn(|| reader.read(pipe));
        let series = follow(config, &lives, &stop, display);
        stop.store(true, Ordering::Release);
        let read = reading.join().unwrap_or_else(|_| ReaderEnd {
            recorded: Err("the trace reader panicked".into()),
            lost: 0,
            cut_short: None,
        });
        (read, series)
    });
    let recorded = match read.recorded {
        Ok(all) => all.into_iter().map(Ok).collect(),
        Err(e) => config.cpus.iter().map(|_| Err(e.clone())).collect(),
    };
    let measured = Measured {
        recorded,
        series,
        lives,
        setup_errors: Vec::new(),
    };
    let mut notes: Vec<Note> = read.cut_short.into_iter().map(Note::warning).collect();
    if read.lost > 0 {
        notes.push(Note::warning(lost_warning(read.lost)));
    }
    Ok((measured, notes))
}

/// Reads timerlat's lines from `trace_pipe` and hands each CPU's samples of one context to
/// that CPU's sampler.
struct Reader<'a> {
    context: Context,
    cpus: &'a [usize],
    plan: &'a Plan,
    lives: &'a [Live],
    stop: &'a AtomicBool,
    silence: Duration,
    deadline: Option<Duration>,
    session: &'a Session,
    pipe_name: String,
}

/// One CPU's place in the test.
struct Slot<'a> {
    sampler: Sampler<'a>,
    done: bool,
    /// When the previous sample was due (ns on the trace clock).
    last_due: Option<u64>,
}

/// What the lines read so far left: each CPU's sampler, and what the reading noted.
struct Progress<'a> {
    slots: Vec<Slot<'a>>,
    /// When (trace clock) the first CPU had its duration: the others have a silence more.
    first_done: Option<u64>,
    /// Events the kernel dropped before latkit read them.
    lost: u64,
    cut_short: Option<String>,
    last_sample: Instant,
    /// With -f, the last sample read above the kernel's stop threshold.
    over: Option<Over>,
    /// The previous read found the pipe empty and tracing off.
    seen_off: bool,
}

/// A sample above the kernel's stop threshold: its CPU's slot, latency (ns) and period.
#[derive(Clone, Copy)]
struct Over {
    slot: usize,
    latency: i64,
    period: u64,
}

/// Whether to read on after a line.
#[derive(PartialEq)]
enum Flow {
    More,
    Done,
}

impl Reader<'_> {
    fn read(&self, pipe: std::fs::File) -> ReaderEnd {
        let mut progress = Progress {
            slots: Vec::new(),
            first_done: None,
            lost: 0,
            cut_short: None,
            last_sample: Instant::now(),
            over: None,
            seen_off: false,
        };
        let recorded = self.samples(pipe, &mut progress);
        // The test is over, for the printer too (also when every CPU has its duration).
        self.stop.store(true, Ordering::Release);
        ReaderEnd {
            recorded,
            lost: progress.lost,
            cut_short: progress.cut_short,
        }
    }

    fn samples<'a>(
        &'a self,
        mut pipe: std::fs::File,
        progress: &mut Progress<'a>,
    ) -> std::result::Result<Vec<Recorded>, String> {
        progress.slots = self
            .lives
            .iter()
            .enumerate()
            .map(|(i, live)| {
                Sampler::new(i, self.plan, live, None).map(|sampler| Slot {
                    sampler,
                    done: false,
                    last_due: None,
                })
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let started = Instant::now();
        let mut watched = started;
        let mut flow = Flow::More;
        while flow == Flow::More && !self.stop.load(Ordering::Acquire) && !interrupt::requested() {
            if watched.elapsed() >= Duration::from_secs(1) {
                self.session.watch();
                watched = Instant::now();
            }
            // Checked on every pass: a pipe that yields other events but no samples is silent.
            if progress.last_sample.elapsed() > self.silence {
                return Err(format!(
                    "no timerlat sample in {} for {} s: the tracer is not running \
                     (is tracing_on 1 and current_tracer timerlat?)",
                    self.pipe_name,
                    self.silence.as_secs()
                ));
            }
            if self.deadline.is_some_and(|d| started.elapsed() > d) {
                progress.cut_short = Some(self.short_of_time(&progress.slots));
                break;
            }
            let n = match pipe.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => 0,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("{}: {e}", self.pipe_name)),
            };
            if n == 0 {
                // Off and still empty after a pause (another CPU's last event written): the
                // kernel stopped the trace.
                let off = self.session.reading_stopped();
                if off && progress.seen_off {
                    self.kernel_stopped(progress);
                    break;
                }
                progress.seen_off = off;
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            progress.seen_off = false;
            pending.extend_from_slice(&chunk[..n]);
            if pending.len() > MAX_LINE && !pending.contains(&b'\n') {
                // No trace line is this long: drop it rather than grow without bound.
                pending.clear();
            }
            let complete = pending
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            for line in pending[..complete].split(|&b| b == b'\n') {
                flow = self.line(&String::from_utf8_lossy(line), progress)?;
                if flow == Flow::Done {
                    break;
                }
            }
            pending.drain(..complete);
        }
        let slots = std::mem::take(&mut progress.slots);
        Ok(slots.into_iter().map(|s| s.sampler.finish()).collect())
    }

    /// The kernel stopped tracing (every instance at once): with -f at its threshold, where
    /// the break is the last sample above it read (the one it stopped at, or one another CPU
    /// recorded in the same instant); otherwise at another tool's threshold, before the end.
    fn kernel_stopped(&self, progress: &mut Progress) {
        match (self.plan.kernel_breaks, progress.over) {
            (true, Some(over)) => {
                progress.slots[over.slot]
                    .sampler
                    .broke_at(over.latency, over.period, self.stop);
            }
            (true, None) => {
                progress.cut_short = Some(
                    "-f: the kernel stopped its trace at a sample latkit did not read (lost): \
                     the frozen trace ends at a break not reported"
                        .to_string(),
                )
            }
            (false, _) => {
                progress.cut_short = Some(
                    "timerlat's trace stopped before the test's end (tracing_on 0: another \
                     tool's stop threshold, or written by hand)"
                        .to_string(),
                )
            }
        }
    }

    /// Hands one trace line to its CPU's sampler.
    fn line(&self, line: &str, progress: &mut Progress) -> std::result::Result<Flow, String> {
        let s = match parse_line(line) {
            TraceLine::Sample(s) if s.context == self.context => s,
            TraceLine::Lost { events, .. } => {
                progress.lost = progress.lost.saturating_add(events);
                return Ok(Flow::More);
            }
            _ => return Ok(Flow::More),
        };
        progress.last_sample = Instant::now();
        let grace = self.silence.as_nanos() as u64;
        if let (Some(done), Some(now)) = (progress.first_done, s.time_ns)
            && now > done.saturating_add(grace)
        {
            progress.cut_short = Some(self.short_of_time(&progress.slots));
            return Ok(Flow::Done);
        }
        let Some(i) = self.cpus.iter().position(|&c| c == s.cpu) else {
            return Ok(Flow::More);
        };
        let slot = &mut progress.slots[i];
        let latency = i64::try_from(s.latency_ns).unwrap_or(i64::MAX);
        let counted = !slot.done;
        if counted {
            let missed = self.missed(&mut slot.last_due, s.time_ns, s.latency_ns);
            slot.done = !slot.sampler.take(latency, missed, self.stop);
            if slot.done && progress.first_done.is_none() {
                progress.first_done = s.time_ns;
            }
        }
        // One the kernel may stop at (-f): the break, should it stop.
        if self.plan.kernel_breaks && self.plan.break_ns.is_some_and(|b| latency > b) {
            progress.over = Some(Over {
                slot: i,
                latency,
                period: slot.sampler.periods(),
            });
        }
        if !counted {
            return Ok(Flow::More);
        }
        if self.stop.load(Ordering::Acquire) {
            // A --break sample: nothing after it counts, as in user mode.
            return Ok(Flow::Done);
        }
        match progress.slots.iter().all(|s| s.done) {
            true => Ok(Flow::Done),
            false => Ok(Flow::More),
        }
    }

    /// The periods timerlat skipped before this sample: it does not wake for a period that
    /// is already past, so a sample due more than one period after the previous one missed
    /// the periods between. When a sample was due is its time less its latency.
    fn missed(&self, last_due: &mut Option<u64>, time_ns: Option<u64>, latency_ns: u64) -> u64 {
        let Some(due) = time_ns.map(|t| t.saturating_sub(latency_ns)) else {
            return 0;
        };
        let period = self.plan.period_ns.max(1) as u64;
        let missed = last_due.map_or(0, |last| {
            let periods = (due.saturating_sub(last) + period / 2) / period;
            periods.saturating_sub(1)
        });
        *last_due = Some(due);
        missed
    }

    /// Which CPUs did not report for the whole duration in the time it takes.
    fn short_of_time(&self, slots: &[Slot]) -> String {
        let short: Vec<String> = self
            .cpus
            .iter()
            .zip(slots)
            .filter(|(_, slot)| !slot.done)
            .map(|(cpu, _)| cpu.to_string())
            .collect();
        format!(
            "timerlat reported too few periods on CPU {} to fill the test's duration in the \
             time it takes (is a CPU offline or isolated?): the test stopped on the clock",
            short.join(", ")
        )
    }
}
