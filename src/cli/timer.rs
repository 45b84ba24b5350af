use super::choices::WaitMethodArg;
use clap::{ArgAction, Args, ValueEnum};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Policy {
    /// SCHED_FIFO at --priority.
    Fifo,
    /// SCHED_OTHER (normal time sharing).
    Other,
}

/// What is measured, in Xenomai's `latency -t` numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// `-t 0`: a thread of latkit's own (as cyclictest and Xenomai `latency -t 0` measure).
    #[value(alias = "0")]
    User,
    /// `-t 1`: the kernel's timerlat thread, woken by the timer (root and a kernel with
    /// CONFIG_TIMERLAT_TRACER).
    #[value(alias = "1")]
    Kernel,
    /// `-t 2`: the timer interrupt itself, as timerlat sees it (same needs).
    #[value(alias = "2")]
    Irq,
}

impl From<Mode> for crate::probe::timer::TestMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::User => Self::User,
            Mode::Kernel => Self::Kernel,
            Mode::Irq => Self::Irq,
        }
    }
}

/// A `--cpu` list, one value to clap (a plain `Vec` would be taken as many values).
#[derive(Clone, Debug)]
struct Cpus(Vec<usize>);

fn cpus(text: &str) -> Result<Cpus, String> {
    crate::probe::timer::cpu_list(text).map(Cpus)
}

/// Options follow Xenomai `latency` and cyclictest: `-h` is the histogram, help is `--help`.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct TimerArgs {
    /// Test mode: user (0), kernel (1) or irq (2). The kernel modes drive the kernel's
    /// timerlat tracer through tracefs.
    #[arg(
        short = 't',
        long = "mode",
        value_enum,
        default_value = "user",
        value_name = "MODE"
    )]
    mode: Mode,
    /// Where tracefs is mounted, for -t 1 and -t 2 (default: /sys/kernel/tracing, else
    /// /sys/kernel/debug/tracing).
    #[arg(long, value_name = "DIR")]
    tracefs: Option<PathBuf>,
    /// Sampling period in microseconds.
    #[arg(short = 'p', long = "period", value_name = "US", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub period_us: u64,
    /// Seconds to measure after warm-up; 0 runs until Ctrl-C.
    #[arg(short = 'T', long = "duration", value_name = "S", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=super::MAX_SECONDS))]
    pub duration_s: u64,
    /// Warm-up seconds whose samples are discarded.
    #[arg(long = "warmup", value_name = "S", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub warmup_s: u64,
    /// Data lines per RTT/RTH header; 0 prints no headers.
    #[arg(short = 'l', long, value_name = "N", default_value_t = 21)]
    pub lines_per_header: u64,
    /// CPUs to measure on, one pinned thread each: `0`, `0,2`, `1-3` or `all`. Default: one
    /// unpinned thread (every online CPU in the kernel modes, whatever `taskset` allows latkit).
    #[arg(short = 'c', long = "cpu", value_name = "LIST", value_parser = cpus)]
    cpu: Option<Cpus>,
    /// SCHED_FIFO priority of the measuring threads (1-99); the kernel modes' threads are the
    /// kernel's own, at SCHED_FIFO 95.
    #[arg(short = 'P', long, value_name = "1-99", default_value_t = 99,
          value_parser = clap::value_parser!(i32).range(1..=99))]
    pub priority: i32,
    /// Scheduling policy of the measuring threads.
    #[arg(long, value_enum, default_value = "fifo")]
    policy: Policy,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub no_mlock: bool,
    /// Do not hold /dev/cpu_dma_latency at 0.
    #[arg(long)]
    pub no_dma_latency: bool,
    /// How to wait for each deadline.
    #[arg(long = "timer", value_enum, default_value = "nanosleep")]
    pub method: WaitMethodArg,
    /// Print histograms of per-second min, every sample (avg) and per-second max (HSD lines).
    #[arg(short = 'h', long)]
    pub histogram: bool,
    /// Histogram buckets; the last one also counts everything larger.
    #[arg(short = 'H', long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub hist_size: u32,
    /// Histogram bucket width in nanoseconds.
    #[arg(short = 'B', long = "bucket", value_name = "NS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub bucket_ns: u64,
    /// Print statistics of the histograms (HSH/HSS lines).
    #[arg(short = 's', long)]
    pub stats: bool,
    /// Write the every-sample histogram in Xenomai's gnuplot format to FILE (`-` = stdout).
    #[arg(short = 'g', long, value_name = "FILE")]
    pub gnuplot: Option<PathBuf>,
    /// On every new maximum after warm-up, mark the kernel trace and stop tracing; in the
    /// kernel modes, the kernel stops tracing at the -b threshold and the trace up to it is
    /// left in tracefs instance latkit-frozen.
    #[arg(short = 'f', long)]
    pub freeze_trace: bool,
    /// Stop at the first sample above US and report it (cyclictest -b).
    #[arg(short = 'b', long = "break", value_name = "US", value_parser = super::latency_us)]
    pub break_us: Option<f64>,
    /// After the summary, exit 1 if the maximum exceeded US.
    #[arg(short = 'm', long = "max", value_name = "US", value_parser = super::latency_us)]
    pub max_us: Option<f64>,
    /// Write the latency distribution as HdrHistogram percentile text (µs) to FILE.
    #[arg(long, value_name = "FILE")]
    pub hgrm: Option<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

impl From<TimerArgs> for crate::commands::TimerOptions {
    fn from(args: TimerArgs) -> Self {
        let s = args;
        crate::commands::TimerOptions {
            probe: crate::probe::timer::TimerConfig {
                mode: s.mode.into(),
                tracefs: s.tracefs,
                period_us: s.period_us,
                duration_s: s.duration_s,
                warmup_s: s.warmup_s,
                cpus: s.cpu.map(|c| c.0).unwrap_or_default(),
                priority: (s.policy == Policy::Fifo).then_some(s.priority),
                mlock: !s.no_mlock,
                dma_latency: !s.no_dma_latency,
                method: s.method.into(),
                hist_buckets: s.hist_size as usize,
                bucket_ns: s.bucket_ns,
                keep_buckets: false,
                freeze_trace: s.freeze_trace,
                break_us: s.break_us,
            },
            lines_per_header: s.lines_per_header,
            histogram: s.histogram,
            stats: s.stats,
            gnuplot: s.gnuplot,
            max_us: s.max_us,
            hgrm: s.hgrm,
            output: s.output.into(),
        }
    }
}
