//! Raw timerlat trace lines, as the kernel's timerlat tracer writes them to tracefs `trace` and
//! `trace_pipe` and as `rtla timerlat -t` saves them: one line per activation and context,
//! `<task>-<pid> [<cpu>] <flags> <time>: #<id> context <irq|thread|user-ret> timer_latency <n> ns`.
//! The line parser serves `latkit timer -t 1|2` too, which reads the same lines live.

use super::problems::Place;
use super::timer_common::{MAX_SAMPLES, timer_input};
use super::{Input, InputFormat, Named, Parsed, for_each_text_line};
use crate::error::Result;
use crate::model::vocab;
use crate::model::{BenchName, Metric, Recorder, RunBuilder, TimerInfo, TimerSummary};
use std::collections::BTreeMap;
use std::io::BufRead;

/// More CPUs than any machine has: a larger CPU number is a damaged line.
pub const MAX_CPU: usize = 4096;
/// A latency beyond an hour is no wake-up but a damaged line.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Where the timer's latency was observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Context {
    /// The timer interrupt handler (Xenomai's `-t 2`).
    Irq,
    /// The timerlat kernel thread it woke (Xenomai's `-t 1`).
    Thread,
    /// A user thread on timerlat's user-space interface (`rtla timerlat -u`).
    User,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Irq => "irq",
            Context::Thread => "thread",
            Context::User => "user",
        }
    }
}

/// One timerlat event line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub cpu: usize,
    pub context: Context,
    pub latency_ns: u64,
    /// The trace's timestamp of the event (ns on the trace clock), when the line has one.
    pub time_ns: Option<u64>,
}

/// What a trace line holds, as far as timerlat is concerned.
#[derive(Debug, PartialEq, Eq)]
pub enum TraceLine {
    Sample(Sample),
    /// `CPU:1 [LOST 123 EVENTS]`: the buffer overflowed before it was read.
    Lost {
        cpu: usize,
        events: u64,
    },
    /// A timerlat line that does not parse: why.
    Damaged(&'static str),
    /// Anything else (headers, other events, stack traces).
    Other,
}

/// Reads one line of a timerlat trace.
pub fn parse_line(line: &str) -> TraceLine {
    if let Some(lost) = lost_events(line) {
        return lost;
    }
    let Some((head, tail)) = line.split_once(" context ") else {
        return TraceLine::Other;
    };
    let mut words = tail.split_whitespace();
    let (Some(context), Some("timer_latency"), Some(value), Some(unit)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return TraceLine::Other;
    };
    let context = match context {
        "irq" => Context::Irq,
        "thread" => Context::Thread,
        "user-ret" | "user" => Context::User,
        _ => return TraceLine::Damaged("an unknown timerlat context (irq, thread or user-ret)"),
    };
    let scale = match unit {
        "ns" => 1,
        "us" => 1000,
        _ => return TraceLine::Damaged("a latency unit other than ns or us"),
    };
    let Some(latency_ns) = value
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(scale))
        .filter(|&ns| ns <= MAX_LATENCY_NS)
    else {
        return TraceLine::Damaged("a timer_latency that is not a number of ns up to an hour");
    };
    match cpu_of(head) {
        Ok(cpu) => TraceLine::Sample(Sample {
            cpu,
            context,
            latency_ns,
            time_ns: time_of(head),
        }),
        Err(why) => TraceLine::Damaged(why),
    }
}

/// The CPU of a trace line: the first `[ddd]` (a task name may hold brackets, never only
/// digits between spaces and brackets before the CPU).
fn cpu_of(head: &str) -> std::result::Result<usize, &'static str> {
    let cpu = head
        .split_whitespace()
        .find_map(|word| {
            word.strip_prefix('[')?
                .strip_suffix(']')?
                .parse::<u64>()
                .ok()
        })
        .ok_or("no `[CPU]` field before the timerlat event")?;
    match usize::try_from(cpu) {
        Ok(cpu) if cpu < MAX_CPU => Ok(cpu),
        _ => Err(CPU_BEYOND),
    }
}

/// Why a line of a CPU numbered [`MAX_CPU`] or above is skipped.
const CPU_BEYOND: &str = "a CPU number above 4095, the last of the 4096 CPUs latkit reads";

/// The timestamp of a trace line: the last `SECONDS.FRACTION:` word before the event
/// (microseconds by default, nanoseconds with the `nanosec` trace option).
fn time_of(head: &str) -> Option<u64> {
    let word = head.split_whitespace().rev().find(|w| w.ends_with(':'))?;
    let (seconds, fraction) = word.strip_suffix(':')?.split_once('.')?;
    if fraction.is_empty() || fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - fraction.len() as u32);
    seconds
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(fraction.parse::<u64>().ok()? * scale)
}

fn lost_events(line: &str) -> Option<TraceLine> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(" [LOST ")?;
    let events = rest.strip_suffix(" EVENTS]")?;
    Some(TraceLine::Lost {
        cpu: cpu.parse().ok().filter(|&c| c < MAX_CPU)?,
        events: events.parse().ok()?,
    })
}

/// Every sample of one CPU and context, exactly (min, max, sum) and as a distribution.
pub struct Latencies {
    pub histogram: Recorder,
    pub min: u64,
    pub max: u64,
    pub sum: u128,
    pub count: u64,
}

impl Latencies {
    fn new() -> Latencies {
        Latencies {
            histogram: Recorder::new(3),
            min: u64::MAX,
            max: 0,
            sum: 0,
            count: 0,
        }
    }

    fn add(&mut self, ns: u64) {
        self.histogram.record(ns.max(1));
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += u128::from(ns);
        self.count += 1;
    }

    fn summary(&self) -> TimerSummary {
        TimerSummary {
            min_ns: self.min as i64,
            avg_ns: self.sum as f64 / self.count as f64,
            max_ns: self.max as i64,
            samples: Some(self.count),
            overruns: None,
        }
    }
}

/// A timerlat trace (`trace`, `trace_pipe`, `rtla timerlat -t`) as an input format.
pub struct TimerlatTrace;

impl InputFormat for TimerlatTrace {
    fn name(&self) -> &'static str {
        "timerlat-trace"
    }

    fn describe(&self) -> &'static str {
        "timerlat tracer lines from tracefs `trace`/`trace_pipe` or `rtla timerlat -t` \
         (`[000] d.h1 54.029328: #1 context irq timer_latency 932 ns`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().any(|l| {
            l.starts_with("# tracer: timerlat") || matches!(parse_line(l), TraceLine::Sample(_))
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = TraceParser {
            place: Place::new(input.path),
            latencies: BTreeMap::new(),
            lost: BTreeMap::new(),
        };
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        timer_input(parser.finish(), input, self)
    }
}

struct TraceParser {
    place: Place,
    latencies: BTreeMap<(usize, Context), Latencies>,
    /// Events the kernel dropped, per CPU.
    lost: BTreeMap<usize, u64>,
}

impl TraceParser {
    fn feed(&mut self, line: Option<&str>) {
        let Some(line) = self.place.next(line) else {
            return;
        };
        match parse_line(line) {
            TraceLine::Sample(s) => {
                let latencies = self
                    .latencies
                    .entry((s.cpu, s.context))
                    .or_insert_with(Latencies::new);
                if latencies.count < MAX_SAMPLES {
                    latencies.add(s.latency_ns);
                }
            }
            TraceLine::Lost { cpu, events } => {
                let lost = self.lost.entry(cpu).or_default();
                *lost = lost.saturating_add(events);
            }
            TraceLine::Damaged(why) => self.place.skip(why),
            TraceLine::Other => {}
        }
    }

    fn finish(self) -> Parsed {
        let mut builder = RunBuilder::default();
        let mut summaries = Vec::new();
        for ((cpu, context), latencies) in self.latencies {
            let bench = builder.benchmark(
                &format!("cpu{cpu}/{}", context.name()),
                None,
                BenchName::plain,
            );
            builder.record_iterations(bench, latencies.count);
            summaries.push((latencies.summary(), latencies.histogram.finish()));
        }
        let mut benchmarks = builder.finish();
        for (bench, (summary, histogram)) in benchmarks.iter_mut().zip(summaries) {
            bench.timer = Some(summary);
            bench
                .metrics
                .insert(0, Metric::time_distribution(vocab::LATENCY, histogram));
        }
        let malformed = self.place.skipped.count;
        let file = self.place.file;
        let mut notes = self.place.skipped.into_notes(&file);
        for (cpu, events) in &self.lost {
            notes.push(crate::model::Note::warning(format!(
                "{file}: the kernel lost {events} events on CPU {cpu} (the trace buffer \
                 overflowed): its figures miss those samples"
            )));
        }
        let overall = TimerSummary::combine(benchmarks.iter().filter_map(|b| b.timer.as_ref()));
        Parsed {
            timer: Some(TimerInfo {
                mode: "timerlat tracer".to_string(),
                overall: overall.as_ref().map(TimerSummary::overall),
                ..TimerInfo::default()
            }),
            builder: RunBuilder::from_benchmarks(benchmarks),
            config: Vec::new(),
            malformed,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_kernel_documentation() {
        let irq = "          <idle>-0       [000] d.h1    54.029328: #1     context    irq timer_latency       932 ns";
        assert_eq!(
            parse_line(irq),
            TraceLine::Sample(Sample {
                cpu: 0,
                context: Context::Irq,
                latency_ns: 932,
                time_ns: Some(54_029_328_000),
            })
        );
        let thread = "      timerlat/7-1001    [007] .......   200.203445: #29800 context thread timer_latency    859978 ns";
        assert_eq!(
            parse_line(thread),
            TraceLine::Sample(Sample {
                cpu: 7,
                context: Context::Thread,
                latency_ns: 859_978,
                time_ns: Some(200_203_445_000),
            })
        );
        let noise = "  insmod-1026    [007] d...3..   200.203444: thread_noise:   insmod:1026 start 200.202586933 duration 838681 ns";
        assert_eq!(parse_line(noise), TraceLine::Other);
        assert_eq!(
            parse_line("CPU:1 [LOST 123 EVENTS]"),
            TraceLine::Lost {
                cpu: 1,
                events: 123
            }
        );
        let odd = "  a [x] [002] ....  1.0: #3 context user-ret timer_latency 12 ns";
        assert!(matches!(
            parse_line(odd),
            TraceLine::Sample(Sample {
                cpu: 2,
                context: Context::User,
                ..
            })
        ));
        let nanosec = "  a-1 [002] ....  7.000000123: #3 context thread timer_latency 12 ns";
        assert!(matches!(
            parse_line(nanosec),
            TraceLine::Sample(Sample {
                time_ns: Some(7_000_000_123),
                ..
            })
        ));
        let bad = "  a-1 [002] ....  1.0: #3 context thread timer_latency 99999999999999999999 ns";
        assert!(matches!(parse_line(bad), TraceLine::Damaged(_)));
        let far = "  <idle>-0 [4096] d.h1 54.029328: #1 context irq timer_latency 932 ns";
        assert_eq!(parse_line(far), TraceLine::Damaged(CPU_BEYOND));
        assert!(CPU_BEYOND.contains(&(MAX_CPU - 1).to_string()));
    }
}
