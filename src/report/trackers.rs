//! Results in the forms benchmark-tracking services ingest: Bencher Metric Format (`bmf`) and
//! github-action-benchmark's custom JSON (`gab`, `gab-bigger`). Each benchmark's figures come
//! from the same summaries every other format prints.

use super::{Reader, Reporter};
use crate::analyze::Report;
use crate::model::{Benchmark, Better, Dimension, Metric, MetricKind, Unit};
use serde_json::{Map, Value, json};
use std::io::{self, Write};

/// One figure of one benchmark as a service sees it, in the metric's base unit.
struct Figure<'a> {
    bench: &'a Benchmark,
    metric: &'a Metric,
    /// `latency`, `latency-p99`, or the metric's own name.
    measure: String,
    value: f64,
    /// A 95 % interval of the median when there is one, else the extremes.
    bounds: Option<(f64, f64)>,
    /// Whether `bounds` is a confidence interval (github-action-benchmark prints it as ±).
    interval: bool,
    n: usize,
}

/// Every figure of the report: a metric's median over repetitions (bounds: its 95 % CI, or
/// min and max), or a distribution's mean (bounds: min and max) with its p50 and p99.
fn figures(report: &Report) -> Vec<Figure<'_>> {
    let mut out = Vec::new();
    for bench in report.runs.iter().flat_map(|r| &r.benchmarks) {
        let mut latency_named = false;
        for metric in bench
            .metrics
            .iter()
            .filter(|m| m.kind != MetricKind::Series)
        {
            // The first time metric is Bencher's "latency"; the others are in ns too and say so
            // by the prefix, as rates say theirs, since BMF carries no units to read back.
            let measure = match (metric.unit.dimension == Dimension::Time, metric.better) {
                (true, _) if !latency_named => {
                    latency_named = true;
                    "latency".to_string()
                }
                (true, _) => format!("latency-{}", slug(&metric.name)),
                (false, Better::Higher) => format!("throughput-{}", slug(&metric.name)),
                (false, Better::Lower) => slug(&metric.name),
            };
            let figure = |measure: String, value: f64, bounds, interval, n| Figure {
                bench,
                metric,
                measure,
                value,
                bounds,
                interval,
                n,
            };
            match (&metric.summary, &metric.percentiles) {
                (_, Some(p)) if metric.values.is_empty() => {
                    let mean = bench
                        .timer
                        .as_ref()
                        .map(|t| t.avg_ns)
                        .or(metric.summary.as_ref().map(|s| s.mean))
                        .unwrap_or(p.p50);
                    let n = p.count as usize;
                    out.push(figure(
                        measure.clone(),
                        mean,
                        Some((p.min, p.max)),
                        false,
                        n,
                    ));
                    out.push(figure(format!("{measure}-p50"), p.p50, None, false, n));
                    out.push(figure(format!("{measure}-p99"), p.p99, None, false, n));
                }
                (Some(s), _) => {
                    let (bounds, interval) = s
                        .median_ci
                        .as_ref()
                        .map_or(((s.min, s.max), false), |ci| ((ci.low, ci.high), true));
                    out.push(figure(measure, s.median, Some(bounds), interval, s.n));
                }
                _ => {}
            }
        }
    }
    out
}

/// `B/op` → `b-op`: a measure name a service accepts as a slug.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn write_json(value: &Value, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::other)?;
    writeln!(out)
}

/// Bencher Metric Format: `{benchmark: {measure: {value, lower_value, upper_value}}}`, times
/// in nanoseconds (Bencher's `latency`, other times `latency-NAME`), rates `throughput-NAME`,
/// other units in their base unit.
pub struct Bmf;

impl Reporter for Bmf {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        let mut document = Map::new();
        for f in figures(report) {
            let mut measure = Map::new();
            measure.insert("value".into(), json!(f.value));
            if let Some((low, high)) = f.bounds {
                measure.insert("lower_value".into(), json!(low));
                measure.insert("upper_value".into(), json!(high));
            }
            let entry = document
                .entry(f.bench.name.full_name.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(measures) = entry {
                measures.insert(f.measure, Value::Object(measure));
            }
        }
        write_json(&Value::Object(document), out)
    }
}

/// github-action-benchmark's custom JSON: `[{name, unit, value, range, extra}]` for the
/// figures whose better direction is `better` (`customSmallerIsBetter` takes lower-is-better
/// ones, `customBiggerIsBetter` higher-is-better), values in the unit the harness wrote.
pub struct Gab {
    pub better: Better,
}

impl Reporter for Gab {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        let entries: Vec<Value> = figures(report)
            .into_iter()
            .filter(|f| f.metric.better == self.better)
            .map(|f| {
                let to_source = Unit::parse(&f.metric.source_unit).to_base;
                let unit = if f.metric.source_unit.is_empty() {
                    f.metric.name.clone()
                } else {
                    f.metric.source_unit.clone()
                };
                let mut entry = json!({
                    "name": format!("{} - {}", f.bench.name.full_name, f.measure),
                    "unit": unit,
                    "value": f.value / to_source,
                    "extra": format!("n={}", f.n),
                });
                if let Some((low, high)) = f.bounds.filter(|_| f.interval)
                    && f.value != 0.0
                {
                    let half = (high - f.value).max(f.value - low) / f.value.abs() * 100.0;
                    entry["range"] = json!(format!("± {half:.2}%"));
                }
                entry
            })
            .collect();
        write_json(&Value::Array(entries), out)
    }
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn measure_names_become_slugs() {
        assert_eq!(slug("B/op"), "b-op");
        assert_eq!(slug("items_per_second"), "items-per-second");
        assert_eq!(slug("ns/op"), "ns-op");
    }
}
