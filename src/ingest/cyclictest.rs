//! rt-tests' cyclictest: its summary lines (`T: 0 (…) P:80 I:1000 C: … Max: …`), its `-h`
//! histogram text (every bucket, or only the used ones), and its `--json` file.

use super::builder::RunBuilder;
use super::timer_common::{TimerOutput, histogram_distribution};
use crate::error::{Error, Result};
use crate::model::{BenchName, LinearHistogram, Note, TimerInfo, TimerOverall};
use serde_json::Value;
use std::collections::BTreeMap;

/// cyclictest's histogram buckets are 1 µs wide.
const BUCKET_NS: u64 = 1000;

/// What cyclictest reports about one thread.
#[derive(Default, Clone)]
struct Thread {
    cycles: Option<u64>,
    min_us: Option<f64>,
    avg_us: Option<f64>,
    max_us: Option<f64>,
    counts: BTreeMap<usize, u64>,
    overflow: Option<u64>,
}

/// Reads the text cyclictest prints: summary lines and/or the `-h` histogram.
pub fn parse_text<'a>(file: &str, lines: impl Iterator<Item = &'a str>) -> TimerOutput {
    let mut threads: BTreeMap<usize, Thread> = BTreeMap::new();
    let (mut period_us, mut priority) = (None, None);
    let mut notes = Vec::new();
    let mut malformed = 0;
    let mut in_histogram = false;
    for (n, raw) in lines.enumerate() {
        // Live mode redraws with carriage returns and cursor escapes; the last text wins.
        let line = raw.rsplit('\r').next().unwrap_or(raw).trim();
        let mut bad = |what: &str| {
            malformed += 1;
            notes.push(Note::warning_at(
                file,
                n as u64 + 1,
                format!("malformed {what} line skipped"),
            ));
        };
        if let Some(t) = line.find("T:").filter(|_| line.contains("Max:")) {
            let pairs = key_values(&line[t..]);
            let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
            let Some(id) = get("T").and_then(|v| v.parse::<usize>().ok()) else {
                bad("summary");
                continue;
            };
            let thread = threads.entry(id).or_default();
            thread.cycles = get("C").and_then(|v| v.parse().ok());
            thread.min_us = get("Min").and_then(|v| v.parse().ok());
            thread.avg_us = get("Avg").and_then(|v| v.parse().ok());
            thread.max_us = get("Max").and_then(|v| v.parse().ok());
            period_us = get("I").and_then(|v| v.parse().ok()).or(period_us);
            priority = get("P").and_then(|v| v.parse().ok()).or(priority);
        } else if line == "# Histogram" {
            in_histogram = true;
        } else if let Some((key, values)) = line.strip_prefix('#').and_then(|r| r.split_once(':')) {
            let set: fn(&mut Thread, f64) = match key.trim() {
                "Min Latencies" => |t, v| t.min_us = Some(v),
                "Avg Latencies" => |t, v| t.avg_us = Some(v),
                "Max Latencies" => |t, v| t.max_us = Some(v),
                "Histogram Overflows" => |t, v| t.overflow = Some(v as u64),
                "Total" => |t, v| t.cycles = Some(v as u64),
                // Overflow cycle numbers, the dma latency line: nothing to keep.
                _ => continue,
            };
            for (id, v) in values.split_whitespace().enumerate() {
                match v.parse() {
                    Ok(v) => set(threads.entry(id).or_default(), v),
                    Err(_) => bad("histogram summary"),
                }
            }
        } else if in_histogram && line.starts_with(|c: char| c.is_ascii_digit()) {
            let fields: Option<Vec<u64>> =
                line.split_whitespace().map(|f| f.parse().ok()).collect();
            let Some(fields) = fields.filter(|f| f.len() >= 2) else {
                bad("histogram");
                continue;
            };
            for (id, &count) in fields[1..].iter().enumerate() {
                if count > 0 {
                    *threads
                        .entry(id)
                        .or_default()
                        .counts
                        .entry(fields[0] as usize)
                        .or_default() += count;
                }
            }
        }
    }
    // In the histogram form "# Total" counts only what fits the buckets.
    for thread in threads.values_mut() {
        if let (Some(total), Some(overflow)) = (thread.cycles, thread.overflow)
            && !thread.counts.is_empty()
        {
            thread.cycles = Some(total + overflow);
        }
    }
    assemble(threads, period_us, priority, notes, malformed)
}

/// `T: 0 ( 2628) P:80 I:1000 C:    500 Min:     11` → [("T","0"), ("P","80"), …].
fn key_values(text: &str) -> Vec<(&str, &str)> {
    let mut pairs = Vec::new();
    let mut tokens = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|t| !t.is_empty())
        .peekable();
    while let Some(token) = tokens.next() {
        if let Some((key, value)) = token.split_once(':') {
            if !value.is_empty() {
                pairs.push((key, value));
            } else if let Some(value) = tokens.next_if(|t| t.parse::<f64>().is_ok()) {
                pairs.push((key, value));
            }
        }
    }
    pairs
}

/// Reads cyclictest's `--json` file. Its keys `"cmdline:"` and `"rt_test_version:"` really
/// end in a colon.
pub fn parse_json(file: &str, text: &str) -> Result<TimerOutput> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| Error::Input(format!("{file}:{}: not valid JSON: {e}", e.line())))?;
    let threads_json = doc["thread"].as_object().ok_or_else(|| {
        Error::Input(format!(
            "{file}: JSON without a \"thread\" object: latkit reads its own JSON (schema latkit.result.v1) and cyclictest's --json files"
        ))
    })?;
    let cmdline = doc["cmdline:"].as_str().unwrap_or_default();
    let option = |short: &str, long: &str| -> Option<u64> {
        let args: Vec<&str> = cmdline.split_whitespace().collect();
        args.iter().enumerate().find_map(|(i, a)| {
            if *a == short {
                args.get(i + 1)?.parse().ok()
            } else if let Some(v) = a.strip_prefix(&format!("{long}=")) {
                v.parse().ok()
            } else {
                a.strip_prefix(short)
                    .filter(|v| !v.is_empty())
                    .and_then(|v| v.parse().ok())
            }
        })
    };
    let mut threads = BTreeMap::new();
    for (id, t) in threads_json {
        let id: usize = id
            .parse()
            .map_err(|_| Error::Input(format!("{file}: thread key `{id}` is not a number")))?;
        let counts: BTreeMap<usize, u64> = t["histogram"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(bucket, n)| Some((bucket.parse().ok()?, n.as_u64()?)))
            .collect();
        let cycles = t["cycles"].as_u64();
        let in_buckets: u64 = counts.values().sum();
        threads.insert(
            id,
            Thread {
                cycles,
                min_us: t["min"].as_f64(),
                avg_us: t["avg"].as_f64(),
                max_us: t["max"].as_f64(),
                overflow: cycles
                    .map(|c| c.saturating_sub(in_buckets))
                    .filter(|_| !counts.is_empty()),
                counts,
            },
        );
    }
    let priority = option("-p", "--priority").map(|p| p as i32);
    Ok(assemble(
        threads,
        option("-i", "--interval").or(Some(1000)),
        priority,
        Vec::new(),
        0,
    ))
}

fn assemble(
    threads: BTreeMap<usize, Thread>,
    period_us: Option<u64>,
    priority: Option<i32>,
    notes: Vec<Note>,
    malformed: u64,
) -> TimerOutput {
    let mut builder = RunBuilder::default();
    for id in threads.keys() {
        builder.benchmark(&format!("thread{id}"), None, BenchName::plain);
    }
    let mut benchmarks = builder.finish();
    let mut overall: Option<TimerOverall> = None;
    let mut avgs = Vec::new();
    let mut notes = notes;
    for (bench, thread) in benchmarks.iter_mut().zip(threads.values()) {
        let ns = |us: Option<f64>| us.map(|v| v * 1000.0);
        for (name, value) in [
            ("min", ns(thread.min_us)),
            ("avg", ns(thread.avg_us)),
            ("max", ns(thread.max_us)),
        ] {
            if let Some(v) = value {
                let mut m = crate::model::Metric::new(name, &crate::model::Unit::parse("ns"), "ns");
                m.values.push(v);
                bench.metrics.push(m);
            }
        }
        bench.iterations = thread.cycles.into_iter().collect();
        if !thread.counts.is_empty() {
            let len = thread.counts.keys().max().map_or(0, |m| m + 1);
            let mut h = LinearHistogram::new("samples", BUCKET_NS, len);
            for (&i, &n) in &thread.counts {
                h.counts[i] = n;
            }
            h.overflow = thread.overflow.unwrap_or(0);
            let max_ns = thread.max_us.map(|us| (us * 1000.0) as u64);
            if h.overflow > 0 {
                notes.push(Note::info(format!(
                    "{}: {} samples beyond the {}-bucket histogram count at the reported maximum in percentiles",
                    bench.name.name, h.overflow, len
                )));
            }
            if let Some(latency) = histogram_distribution(&h, max_ns) {
                bench.metrics.insert(0, latency);
            }
            bench.histograms.push(h);
        }
        if let (Some(min), Some(avg), Some(max)) = (thread.min_us, thread.avg_us, thread.max_us) {
            let o = overall.get_or_insert(TimerOverall {
                min_ns: (min * 1000.0) as i64,
                max_ns: (max * 1000.0) as i64,
                ..TimerOverall::default()
            });
            o.min_ns = o.min_ns.min((min * 1000.0) as i64);
            o.max_ns = o.max_ns.max((max * 1000.0) as i64);
            avgs.push(avg * 1000.0);
        }
    }
    if let Some(o) = overall.as_mut() {
        o.avg_ns = (avgs.iter().sum::<f64>() / avgs.len() as f64) as i64;
    }
    let period_ns = period_us.unwrap_or(1000) * 1000;
    let cycles = threads.values().filter_map(|t| t.cycles).max().unwrap_or(0);
    let seconds = cycles * period_ns / 1_000_000_000;
    TimerOutput {
        builder: RunBuilder::from_benchmarks(benchmarks),
        timer: TimerInfo {
            period_ns,
            mode: "cyclictest".to_string(),
            priority: priority.unwrap_or(0),
            duration_s: seconds,
            requested_s: seconds,
            method: Some("nanosleep".to_string()),
            overall,
            ..TimerInfo::default()
        },
        notes,
        malformed,
    }
}
