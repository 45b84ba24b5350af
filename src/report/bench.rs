//! `BENCH <name>: key=value<unit> ...` lines, so existing CI scripts keep working. A metric
//! with several repetitions prints its median; a distribution prints min, avg, p50, p99, max.

use super::{Reader, Reporter};
use crate::analyze::Report;
use crate::model::{Benchmark, Metric, MetricKind, Percentiles, TimerSummary, Unit, format_exact};
use std::io::{self, Write};

pub struct Bench;

/// `36us`, or `2515.1 MB/s` (a unit with a slash stands apart, as such benches print it).
fn value_text(value_base: f64, source_unit: &str) -> String {
    let value = format_exact(value_base / Unit::parse(source_unit).to_base);
    match source_unit {
        "" => value,
        u if u.contains('/') => format!("{value} {u}"),
        u => format!("{value}{u}"),
    }
}

fn pairs(metric: &Metric) -> Vec<String> {
    // Go names a metric by its unit: print `ns/op=10668` rather than `ns/op=10668 ns/op`.
    let unit = if metric.name == metric.source_unit {
        ""
    } else {
        metric.source_unit.as_str()
    };
    let scale = if unit.is_empty() {
        Unit::parse(&metric.source_unit).to_base
    } else {
        1.0
    };
    let text = |v: f64| value_text(v / scale, unit);
    if let Some(p) = metric
        .percentiles
        .as_ref()
        .filter(|_| metric.values.is_empty())
    {
        let mean = metric.summary.as_ref().map_or(p.p50, |s| s.mean);
        return [
            ("min", p.min),
            ("avg", mean),
            ("p50", p.p50),
            ("p99", p.p99),
            ("max", p.max),
        ]
        .iter()
        .map(|(k, v)| format!("{k}={}", text(*v)))
        .collect();
    }
    match metric.summary.as_ref() {
        Some(s) => vec![format!("{}={}", metric.name, text(s.median))],
        None => Vec::new(),
    }
}

/// A timer test's own figures, with the percentiles of its distribution (already clamped to
/// them), the sample count and the overruns it counted.
fn timer_pairs(t: &TimerSummary, percentiles: Option<&Percentiles>) -> Vec<String> {
    let us = |ns: f64| format!("{}us", format_exact(ns / 1000.0));
    let mut fields = vec![
        format!("min={}", us(t.min_ns as f64)),
        format!("avg={}", us(t.avg_ns)),
    ];
    if let Some(p) = percentiles {
        fields.push(format!("p50={}", us(p.p50)));
        fields.push(format!("p99={}", us(p.p99)));
    }
    fields.push(format!("max={}", us(t.max_ns as f64)));
    fields.extend(t.samples.map(|n| format!("samples={n}")));
    fields.extend(t.overruns.map(|n| format!("overruns={n}")));
    fields
}

fn line(bench: &Benchmark) -> Option<String> {
    // A distribution stands for the whole benchmark; per-second series are never its figures.
    let distribution = bench
        .metrics
        .iter()
        .find(|m| m.percentiles.is_some() && m.values.is_empty());
    let fields: Vec<String> = match (&bench.timer, distribution) {
        (Some(t), d) => timer_pairs(t, d.and_then(|m| m.percentiles.as_deref())),
        (None, Some(m)) => pairs(m),
        (None, None) => bench
            .metrics
            .iter()
            .filter(|m| m.kind != MetricKind::Series)
            .flat_map(pairs)
            .collect(),
    };
    (!fields.is_empty()).then(|| {
        format!(
            "BENCH {}: {}",
            crate::model::bench_line_name(&bench.name.full_name),
            fields.join(" ")
        )
    })
}

impl Reporter for Bench {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        for bench in report.runs.iter().flat_map(|r| &r.benchmarks) {
            if let Some(line) = line(bench) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}
