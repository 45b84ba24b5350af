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

/// The control files latkit changes, in the order it restores them (tracer before its knobs).
const CONTROLS: [&str; 6] = [
    "tracing_on",
    "current_tracer",
    "osnoise/cpus",
    "osnoise/timerlat_period_us",
    "osnoise/stop_tracing_us",
    "osnoise/stop_tracing_total_us",
];

/// tracefs as latkit set it for one test; dropping it (or [`Session::restore`]) writes back
/// what was found. With `-f` and a stop threshold hit, the frozen trace is left for reading.
pub struct Session {
    fs: Tracefs,
    found: Vec<(&'static str, String)>,
    /// The control files latkit has written: only those are written back.
    written: Vec<&'static str>,
    restored: bool,
}

impl Session {
    /// Saves what tracefs holds, then starts timerlat on `cpus` every `period_us`, stopping
    /// the trace at `stop_us` in `context` when given (-f). A failure part-way restores.
    pub fn start(
        fs: Tracefs,
        cpus: &[usize],
        period_us: u64,
        stop: Option<(Context, u64)>,
    ) -> std::result::Result<Session, String> {
        let tracer = fs.read("current_tracer")?;
        if tracer == "timerlat" || tracer == "osnoise" {
            return Err(format!(
                "the {tracer} tracer is already running in {} (another rtla or latkit?); \
                 latkit will not take it over",
                fs.root().display()
            ));
        }
        let found = CONTROLS
            .iter()
            .map(|&file| fs.read(file).map(|value| (file, value)))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut session = Session {
            fs,
            found,
            written: Vec::new(),
            restored: false,
        };
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        let (irq_stop, thread_stop) = match stop {
            Some((Context::Irq, us)) => (us, 0),
            Some((_, us)) => (0, us),
            None => (0, 0),
        };
        for (file, value) in [
            ("tracing_on", "0".to_string()),
            ("osnoise/cpus", list.join(",")),
            ("osnoise/timerlat_period_us", period_us.to_string()),
            ("osnoise/stop_tracing_us", irq_stop.to_string()),
            ("osnoise/stop_tracing_total_us", thread_stop.to_string()),
            ("current_tracer", "timerlat".to_string()),
            ("tracing_on", "1".to_string()),
        ] {
            session.fs.write(file, &value)?;
            session.written.push(file);
        }
        Ok(session)
    }

    /// Writes back every control file latkit changed, as found; what could not be, one line
    /// each. With `keep_frozen`, the tracer and `tracing_on` stay (the kernel stopped the
    /// trace at -b).
    pub fn restore(&mut self, keep_frozen: bool) -> Vec<String> {
        self.restored = true;
        let mut problems = Vec::new();
        let keep = |file: &str| keep_frozen && (file == "tracing_on" || file == "current_tracer");
        let written = |file: &str| self.written.contains(&file);
        // Tracing stops first, so no knob changes under a running tracer.
        if !keep_frozen
            && written("tracing_on")
            && let Err(e) = self.fs.write("tracing_on", "0")
        {
            problems.push(e);
        }
        for (file, value) in self.found.iter().skip(1).chain(self.found.first()) {
            if keep(file) || !written(file) {
                continue;
            }
            if let Err(e) = self.fs.write(file, value) {
                problems.push(e);
            }
        }
        problems
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.restored {
            for problem in self.restore(false) {
                crate::error::say(&format!("latkit: could not restore tracefs: {problem}"));
            }
        }
    }
}

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
            (true, Some(us)) => Some((context, us.ceil().max(1.0) as u64)),
            (true, None) => {
                return Err(Error::Input(format!(
                    "{flag} -f stops the kernel's trace at the -b threshold (timerlat's \
                     stop_tracing_us): give -b US too"
                )));
            }
        };
        let fs = Tracefs::with_timerlat(config.tracefs.as_deref())
            .map_err(|missing| Error::Input(missing.explain(flag)))?;
        let cpus = match config.cpus.is_empty() {
            true => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
            false => config.cpus.clone(),
        };
        let session = Session::start(fs, &cpus, config.period_us, stop)
            .map_err(|e| Error::Input(format!("{flag}: setting up timerlat failed: {e}")))?;
        Ok(Kernel {
            session,
            context,
            config: TimerConfig {
                cpus,
                priority: Some(KERNEL_PRIORITY),
                ..config.clone()
            },
        })
    }

    pub fn measure(&self, plan: &Plan, display: &mut dyn Display) -> Result<(Measured, u64)> {
        measure_all(&self.config, plan, self.context, &self.session, display)
    }

    /// Puts tracefs back; notes what could not be, and where a frozen trace is.
    pub fn finish(mut self, frozen: bool) -> Vec<Note> {
        let mut notes: Vec<Note> = self
            .session
            .restore(frozen)
            .into_iter()
            .map(|p| Note::warning(format!("could not restore tracefs: {p}")))
            .collect();
        if frozen {
            let root = self.session.fs.root().display().to_string();
            notes.push(Note::info(format!(
                "-f: the kernel stopped tracing at the -b sample; the trace latkit did not \
                 read is in {root}/trace (timerlat is still the tracer, tracing_on is 0; \
                 `echo nop > {root}/current_tracer` ends it)"
            )));
        }
        notes
    }
}

/// What lost events do to the figures.
pub fn lost_warning(events: u64) -> String {
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

/// What the reader of `trace_pipe` ended with.
struct ReaderEnd {
    recorded: std::result::Result<Vec<Recorded>, String>,
    /// Events the kernel dropped before latkit read them.
    lost: u64,
}

/// Measures `context` on `config.cpus` through `session`, following each second through
/// `display` as user mode does; also returns how many events the kernel lost.
fn measure_all(
    config: &TimerConfig,
    plan: &Plan,
    context: Context,
    session: &Session,
    display: &mut dyn Display,
) -> Result<(Measured, u64)> {
    let pipe_path = session.fs.path("trace_pipe");
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
        pipe_name: pipe_path.display().to_string(),
    };
    let (read, series) = std::thread::scope(|scope| {
        let reading = scope.spawn(|| reader.read(pipe));
        let series = follow(config, &lives, &stop, display);
        stop.store(true, Ordering::Release);
        let read = reading.join().unwrap_or_else(|_| ReaderEnd {
            recorded: Err("the trace reader panicked".into()),
            lost: 0,
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
    Ok((measured, read.lost))
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
    pipe_name: String,
}

impl Reader<'_> {
    fn read(&self, pipe: std::fs::File) -> ReaderEnd {
        let mut lost = 0;
        let recorded = self.samples(pipe, &mut lost);
        if recorded.is_err() {
            // The test is over: the printer stops too.
            self.stop.store(true, Ordering::Release);
        }
        ReaderEnd { recorded, lost }
    }

    fn samples(
        &self,
        mut pipe: std::fs::File,
        lost: &mut u64,
    ) -> std::result::Result<Vec<Recorded>, String> {
        let mut samplers = self
            .cpus
            .iter()
            .zip(self.lives)
            .enumerate()
            .map(|(i, (_, live))| Sampler::new(i, self.plan, live, None))
            .collect::<std::result::Result<Vec<_>, String>>()?;
        let slot_of = |cpu: usize| self.cpus.iter().position(|&c| c == cpu);
        let mut done = vec![false; samplers.len()];
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut last_sample = Instant::now();
        while !self.stop.load(Ordering::Acquire) && !interrupt::requested() {
            let n = match pipe.read(&mut chunk) {
                Ok(0) => 0,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => 0,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("{}: {e}", self.pipe_name)),
            };
            if n == 0 {
                if last_sample.elapsed() > self.silence {
                    return Err(format!(
                        "no timerlat sample in {} for {} s: the tracer is not running \
                         (is tracing_on 1 and current_tracer timerlat?)",
                        self.pipe_name,
                        self.silence.as_secs()
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
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
                match parse_line(&String::from_utf8_lossy(line)) {
                    TraceLine::Sample(s) if s.context == self.context => {
                        last_sample = Instant::now();
                        let Some(i) = slot_of(s.cpu).filter(|&i| !done[i]) else {
                            continue;
                        };
                        let latency = i64::try_from(s.latency_ns).unwrap_or(i64::MAX);
                        done[i] = !samplers[i].take(latency, 0, self.stop);
                        if self.stop.load(Ordering::Acquire) {
                            // A --break sample: nothing after it counts, as in user mode.
                            break;
                        }
                    }
                    TraceLine::Lost { events, .. } => *lost = lost.saturating_add(events),
                    _ => {}
                }
            }
            pending.drain(..complete);
            if done.iter().all(|&d| d) {
                break;
            }
        }
        Ok(samplers.into_iter().map(Sampler::finish).collect())
    }
}
