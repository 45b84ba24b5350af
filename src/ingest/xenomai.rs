//! Xenomai `latency` output: `==` header, RTT/RTD lines, HSD/HSS histogram sections and the
//! RTS summary, into one timer benchmark.

use super::builder::RunBuilder;
use super::timer_common::{TimerOutput, histogram_distribution, us_to_ns};
use crate::model::{BenchName, BucketStats, LinearHistogram, Note, TimerInfo, TimerOverall};

/// Xenomai prints bucket indices, not widths; `-B` defaults to 1000 ns.
const DEFAULT_BUCKET_NS: u64 = 1000;

const KINDS: [(&str, &str); 3] = [
    ("min", "interval_min"),
    ("avg", "samples"),
    ("max", "interval_max"),
];

/// Reads Xenomai output given as lines.
pub fn parse<'a>(file: &str, lines: impl Iterator<Item = &'a str>) -> TimerOutput {
    let mut timer = TimerInfo::default();
    let mut notes = Vec::new();
    let mut malformed = 0;
    let mut builder = RunBuilder::default();
    let bench = builder.benchmark("latency", None, BenchName::plain);
    let mut histograms: Vec<LinearHistogram> = KINDS
        .iter()
        .map(|(_, of)| LinearHistogram::new(of, DEFAULT_BUCKET_NS, 0))
        .collect();
    let (mut last_overruns, mut last_switches) = (0u64, 0u64);
    for (n, line) in lines.enumerate() {
        let lineno = n as u64 + 1;
        let mut bad = |what: &str| {
            malformed += 1;
            notes.push(Note::warning_at(
                file,
                lineno,
                format!("malformed {what} line skipped"),
            ));
        };
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        match fields[0] {
            _ if line.starts_with("== Sampling period:") => {
                match line["== Sampling period:".len()..]
                    .trim()
                    .trim_end_matches("us")
                    .trim()
                    .parse::<u64>()
                {
                    Ok(us) => timer.period_ns = us * 1000,
                    Err(_) => bad("header"),
                }
            }
            _ if line.starts_with("== Test mode:") => {
                timer.mode = line["== Test mode:".len()..].trim().to_string();
            }
            "RTT" => {
                if let Some(p) = line
                    .rsplit_once("priority ")
                    .and_then(|(_, p)| p.trim_end_matches(')').parse().ok())
                {
                    timer.priority = p;
                }
            }
            "RTD" => {
                let numbers: Option<Vec<i64>> = fields.get(1..8).and_then(|f| {
                    let (us, counts) = (&f[0..3], &f[3..5]);
                    let mut v: Vec<i64> = us.iter().map(|s| us_to_ns(s)).collect::<Option<_>>()?;
                    v.extend(
                        counts
                            .iter()
                            .map(|s| s.parse::<i64>().ok())
                            .collect::<Option<Vec<_>>>()?,
                    );
                    Some(v)
                });
                let Some(v) = numbers else {
                    bad("RTD");
                    continue;
                };
                let (overruns, switches) = (v[3].max(0) as u64, v[4].max(0) as u64);
                builder.record(bench, "interval_min", "ns", v[0] as f64);
                builder.record(bench, "interval_avg", "ns", v[1] as f64);
                builder.record(bench, "interval_max", "ns", v[2] as f64);
                // Xenomai prints running totals; the model keeps each second's own count.
                builder.record(
                    bench,
                    "overruns",
                    "overruns",
                    overruns.saturating_sub(last_overruns) as f64,
                );
                builder.record(
                    bench,
                    "mode_switches",
                    "switches",
                    switches.saturating_sub(last_switches) as f64,
                );
                (last_overruns, last_switches) = (overruns, switches);
            }
            "HSD" => {
                let parsed = (|| {
                    let name = *fields.get(1)?;
                    let kind = KINDS.iter().position(|(k, _)| *k == name)?;
                    let index: usize = fields.get(2)?.split('-').next()?.trim().parse().ok()?;
                    let count: u64 = fields.get(3)?.parse().ok()?;
                    Some((kind, index, count))
                })();
                let Some((kind, index, count)) = parsed else {
                    bad("HSD");
                    continue;
                };
                let counts = &mut histograms[kind].counts;
                if counts.len() <= index {
                    counts.resize(index + 1, 0);
                }
                counts[index] += count;
            }
            "HSS" => {
                let parsed = (|| {
                    let name = *fields.get(1)?;
                    let kind = KINDS.iter().position(|(k, _)| *k == name)?;
                    Some((
                        kind,
                        BucketStats {
                            samples: fields.get(2)?.parse().ok()?,
                            average: fields.get(3)?.parse().ok()?,
                            stddev: fields.get(4)?.parse().ok()?,
                        },
                    ))
                })();
                match parsed {
                    Some((kind, stats)) => histograms[kind].reported = Some(stats),
                    None => bad("HSS"),
                }
            }
            "RTS" => {
                let parsed = (|| {
                    let ns = |i: usize| us_to_ns(fields.get(i)?);
                    let (actual, requested) = fields.get(6)?.split_once('/')?;
                    Some((
                        TimerOverall {
                            min_ns: ns(1)?,
                            avg_ns: ns(2)?,
                            max_ns: ns(3)?,
                            overruns: fields.get(4)?.parse().ok()?,
                            mode_switches: fields.get(5)?.parse().ok()?,
                        },
                        hms_seconds(actual)?,
                        hms_seconds(requested)?,
                    ))
                })();
                match parsed {
                    Some((overall, actual, requested)) => {
                        timer.overall = Some(overall);
                        timer.duration_s = actual;
                        timer.requested_s = requested;
                    }
                    None => bad("RTS"),
                }
            }
            _ => {}
        }
    }
    let mut benchmarks = builder.finish();
    if let Some(b) = benchmarks.first_mut() {
        let samples = &histograms[1];
        if let Some(latency) = histogram_distribution(samples, None) {
            b.metrics.insert(0, latency);
        }
        b.histograms = histograms
            .into_iter()
            .filter(|h| !h.counts.is_empty() || h.reported.is_some())
            .collect();
    }
    TimerOutput {
        builder: RunBuilder::from_benchmarks(benchmarks),
        timer,
        notes,
        malformed,
    }
}

fn hms_seconds(text: &str) -> Option<u64> {
    let parts: Vec<u64> = text
        .trim()
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts[..] {
        [h, m, s] => Some(h * 3600 + m * 60 + s),
        _ => None,
    }
}
