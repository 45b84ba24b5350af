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
    /// unpinned thread.
    #[arg(short = 'c', long = "cpu", value_name = "LIST", value_parser = cpus)]
    cpu: Option<Cpus>,
    /// SCHED_FIFO priority of the measuring threads (1-99).
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
    /// On every new maximum after warm-up, mark the kernel trace and stop tracing.
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
