//! The run a timer test gives: per-thread latency distributions (histograms trimmed or kept),
//! the per-second series, the settings the test ran with, and the break sample if one stopped it.

use super::measure::{IntervalStats, Recorded};
use super::{Series, TestMode, TimerConfig, combine};
use crate::model::vocab;
use crate::model::{
    BenchName, BreakHit, LinearHistogram, Run, RunBuilder, TimerInfo, TimerOverall, TimerSummary,
};
use std::time::SystemTime;

pub(super) fn assemble(
    config: &TimerConfig,
    threads: &[Option<usize>],
    recorded: Vec<Recorded>,
    series: &Series,
    (started, stamp): (SystemTime, crate::env::Stamp),
    break_hit: Option<BreakHit>,
) -> Run {
    let mut builder = RunBuilder::default();
    let names: Vec<String> = threads
        .iter()
        .enumerate()
        .map(|(i, cpu)| cpu.map_or_else(|| format!("thread{i}"), |c| format!("cpu{c}")))
        .collect();
    for (name, s) in names.iter().zip(series) {
        add_series(&mut builder, name, s);
    }
    let combined: Vec<IntervalStats> = (0..series.first().map_or(0, Vec::len))
        .map(|k| combine(&series.iter().map(|s| s[k]).collect::<Vec<_>>()))
        .collect();
    if threads.len() > 1 {
        add_series(&mut builder, vocab::ALL_THREADS, &combined);
    }
    let mut benchmarks = builder.finish();
    let total = attach_recorded(&mut benchmarks, recorded, config.keep_buckets);
    if threads.len() > 1 {
        let all = TimerSummary::combine(benchmarks.iter().filter_map(|b| b.timer.as_ref()));
        if let (Some(bench), Some(total)) = (benchmarks.last_mut(), total.as_ref()) {
            attach(bench, total, config.keep_buckets);
            bench.timer = all;
        }
    }

    let priority = config.priority.unwrap_or(0);
    // The RTS figures are those of the benchmark Xenomai's format shows: exact over every
    // sample, including a last second cut short by an interrupt.
    let overall = benchmarks
        .last()
        .and_then(|b| b.timer.as_ref())
        .map(|t| TimerOverall {
            min_ns: t.min_ns,
            avg_ns: t.avg_ns as i64,
            max_ns: t.max_ns,
            overruns: t.overruns.unwrap_or(0),
            mode_switches: 0,
        });
    let mut run = crate::probe::probe_run("timer", settings(config), benchmarks, started, stamp);
    let duration_s = combined.len() as u64;
    run.timer = Some(TimerInfo {
        period_ns: config.period_us * 1000,
        mode: config.mode.xenomai_name().to_string(),
        priority,
        duration_s,
        requested_s: config.duration_s,
        method: Some(method_name(config).to_string()),
        policy: Some(
            if config.priority.is_some() {
                "fifo"
            } else {
                "other"
            }
            .to_string(),
        ),
        overall,
        break_hit,
    });
    run
}

/// Each thread's recorded histograms on its benchmark; returns them all added together.
fn attach_recorded(
    benchmarks: &mut [crate::model::Benchmark],
    recorded: Vec<Recorded>,
    keep_buckets: bool,
) -> Option<Recorded> {
    let mut total: Option<Recorded> = None;
    for (bench, rec) in benchmarks.iter_mut().zip(recorded) {
        attach(bench, &rec, keep_buckets);
        bench.timer = rec.total.summary();
        match total.as_mut() {
            None => total = Some(rec),
            Some(t) => {
                let _ = t.latency.add(&rec.latency);
                for (a, b) in [
                    (&mut t.samples, &rec.samples),
                    (&mut t.interval_min, &rec.interval_min),
                    (&mut t.interval_max, &rec.interval_max),
                ] {
                    a.counts
                        .iter_mut()
                        .zip(&b.counts)
                        .for_each(|(x, y)| *x += y);
                }
            }
        }
    }
    total
}

/// How the samples were taken: the wait method of latkit's threads, or the kernel's tracer.
fn method_name(config: &TimerConfig) -> &'static str {
    match config.mode {
        TestMode::User => config.method.name(),
        TestMode::Kernel | TestMode::Irq => "timerlat",
    }
}

/// The settings a timer run records, as its environment's config.
fn settings(config: &TimerConfig) -> Vec<(&'static str, String)> {
    let cpus = if config.cpus.is_empty() {
        "unpinned".to_string()
    } else {
        let list: Vec<String> = config.cpus.iter().map(usize::to_string).collect();
        list.join(",")
    };
    vec![
        ("period_us", config.period_us.to_string()),
        ("mode", config.mode.flag().to_string()),
        ("method", method_name(config).to_string()),
        ("cpus", cpus),
        ("priority", config.priority.unwrap_or(0).to_string()),
        ("mlock", config.mlock.to_string()),
        ("dma_latency", config.dma_latency.to_string()),
        ("warmup_s", config.warmup_s.to_string()),
    ]
}

fn add_series(builder: &mut RunBuilder, name: &str, series: &[IntervalStats]) {
    let bench = builder.benchmark(name, None, BenchName::plain);
    for s in series {
        builder.record_series(bench, vocab::INTERVAL_MIN, "ns", s.min as f64);
        builder.record_series(bench, vocab::INTERVAL_AVG, "ns", s.avg() as f64);
        builder.record_series(bench, vocab::INTERVAL_MAX, "ns", s.max as f64);
        builder.record_series(bench, vocab::OVERRUNS, "overruns", s.overruns as f64);
    }
}

/// Adds the latency distribution and the fixed-bucket histograms to a benchmark.
fn attach(bench: &mut crate::model::Benchmark, rec: &Recorded, keep_buckets: bool) {
    let latency = crate::model::Metric::time_distribution(vocab::LATENCY, rec.latency.clone());
    bench.metrics.insert(0, latency);
    bench.histograms = [&rec.interval_min, &rec.samples, &rec.interval_max]
        .into_iter()
        .map(|h| trimmed(h, keep_buckets))
        .collect();
}

/// Drops trailing empty buckets; without `keep`, keeps only the HSS statistics.
fn trimmed(h: &LinearHistogram, keep: bool) -> LinearHistogram {
    let mut h = h.clone();
    if keep {
        let used = h.counts.iter().rposition(|&c| c > 0).map_or(0, |p| p + 1);
        h.counts.truncate(used);
    } else {
        h.reported = Some(h.stats());
        h.counts.clear();
    }
    h
}
