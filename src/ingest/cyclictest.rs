//! rt-tests' cyclictest: its summary lines (`T: 0 (…) P:80 I:1000 C: … Max: …`), its `-h`
//! histogram text (every bucket, or only the used ones), and its `--json` file.

use super::problems::Skipped;
use super::timer_common::{
    BucketCounts, MAX_BUCKETS, MAX_PERIOD_US, MAX_SAMPLES, histogram_distribution, timer_input,
};
use super::{Input, InputFormat, Named, Parsed, for_each_text_line, read_json};
use crate::error::{Error, Result};
use crate::model::RunBuilder;
use crate::model::{BenchName, Note, TimerInfo, TimerSummary};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufRead;

/// cyclictest's histogram buckets are 1 µs wide.
const BUCKET_NS: u64 = 1000;
/// More threads than any machine runs cyclictest with: a wider row is an error.
pub const MAX_THREADS: usize = 1024;

/// What cyclictest reports about one thread.
#[derive(Default)]
struct Thread {
    cycles: Option<u64>,
    min_us: Option<f64>,
    avg_us: Option<f64>,
    max_us: Option<f64>,
    counts: BucketCounts,
    overflow: Option<u64>,
}

/// cyclictest's text output as an input format.
pub struct Cyclictest;

impl InputFormat for Cyclictest {
    fn name(&self) -> &'static str {
        "cyclictest"
    }

    fn describe(&self) -> &'static str {
        "cyclictest output: `T: 0 (…) P:80 I:1000 C: … Max: …` lines or its `-h` `# Histogram`"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().map(str::trim_end).any(|l| {
            l == "# Histogram"
                || l.starts_with("# /dev/cpu_dma_latency")
                || (l.contains("T:") && l.contains(" P:") && l.contains("Max:"))
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = CyclictestParser::new(input.path);
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        timer_input(parser.finish(), input, self)
    }
}

/// cyclictest's `--json` file as an input format.
pub struct CyclictestJson;

impl InputFormat for CyclictestJson {
    fn name(&self) -> &'static str {
        "cyclictest-json"
    }

    fn describe(&self) -> &'static str {
        "cyclictest's `--json` file, a JSON object with a `thread` object"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{')
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let doc = read_json(input.path, reader)?;
        timer_input(parse_json(input.path, &doc)?, input, self)
    }
}

/// Reads the text cyclictest prints given as lines: summary lines and/or the `-h` histogram.
pub fn parse_text<'a>(file: &str, lines: impl Iterator<Item = &'a str>) -> Parsed {
    let mut parser = CyclictestParser::new(file);
    lines.for_each(|l| parser.feed(Some(l)));
    parser.finish()
}

pub struct CyclictestParser {
    file: String,
    line: u64,
    threads: BTreeMap<usize, Thread>,
    period_us: Option<u64>,
    priority: Option<i32>,
    skipped: Skipped,
    in_histogram: bool,
    /// Buckets the histogram has, when it prints every one (the highest row number + 1).
    histogram_size: usize,
}

impl CyclictestParser {
    pub fn new(file: &str) -> Self {
        CyclictestParser {
            file: file.to_string(),
            line: 0,
            threads: BTreeMap::new(),
            period_us: None,
            priority: None,
            skipped: Skipped::default(),
            in_histogram: false,
            histogram_size: 0,
        }
    }

    fn bad(&mut self, message: String) {
        self.skipped.line(&self.file, self.line, message);
    }

    fn thread(&mut self, id: usize) -> Option<&mut Thread> {
        if id >= MAX_THREADS {
            self.bad(format!(
                "thread {id} is beyond the {MAX_THREADS} threads latkit reads; skipped"
            ));
            return None;
        }
        Some(self.threads.entry(id).or_default())
    }

    /// Reads the next line; `None` stands for a line too long to read.
    pub fn feed(&mut self, raw: Option<&str>) {
        self.line += 1;
        let Some(raw) = raw else {
            return self.bad(super::LINE_TOO_LONG.into());
        };
        // Live mode redraws with carriage returns and cursor escapes; the last text wins.
        let line = raw.rsplit('\r').next().unwrap_or(raw).trim();
        if let Some(t) = line.find("T:").filter(|_| line.contains("Max:")) {
            self.summary_line(&line[t..]);
        } else if line == "# Histogram" {
            self.in_histogram = true;
        } else if let Some((key, values)) = line.strip_prefix('#').and_then(|r| r.split_once(':')) {
            self.histogram_summary(key.trim(), values);
        } else if self.in_histogram && line.starts_with(|c: char| c.is_ascii_digit()) {
            self.histogram_row(line);
        }
    }

    /// `T: 0 ( 2628) P:80 I:1000 C:    500 Min:     11 Act:   15 Avg:   14 Max:      40`
    fn summary_line(&mut self, text: &str) {
        let pairs = key_values(text);
        let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let number = |k: &str| -> std::result::Result<Option<f64>, String> {
            match get(k) {
                None => Ok(None),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && v.abs() <= 3.6e9)
                    .map(Some)
                    .ok_or_else(|| format!("`{k}:{v}` is not a number; summary line skipped")),
            }
        };
        let parsed = (|| {
            let id = get("T")
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| "no thread number after `T:`; summary line skipped".to_string())?;
            let cycles = number("C")?;
            let figures = [number("Min")?, number("Avg")?, number("Max")?];
            let period = number("I")?;
            let priority = number("P")?;
            Ok::<_, String>((id, cycles, figures, period, priority))
        })();
        let (id, cycles, [min, avg, max], period, priority) = match parsed {
            Ok(p) => p,
            Err(e) => return self.bad(e),
        };
        if let Some(p) = period {
            match p as u64 {
                us @ 1..=MAX_PERIOD_US if p.fract() == 0.0 => self.period_us = Some(us),
                _ => {
                    return self.bad(format!(
                        "interval `I:{p}` out of range; summary line skipped"
                    ));
                }
            }
        }
        if let Some(p) = priority {
            self.priority = Some(p.clamp(0.0, 99.0) as i32);
        }
        if let Some(thread) = self.thread(id) {
            thread.cycles = cycles.map(|c| c as u64);
            (thread.min_us, thread.avg_us, thread.max_us) = (min, avg, max);
        }
    }

    /// `# Min Latencies: 00012 00011`: one column per thread.
    fn histogram_summary(&mut self, key: &str, values: &str) {
        let set: fn(&mut Thread, f64) = match key {
            "Min Latencies" => |t, v| t.min_us = Some(v),
            "Avg Latencies" => |t, v| t.avg_us = Some(v),
            "Max Latencies" => |t, v| t.max_us = Some(v),
            "Histogram Overflows" => |t, v| t.overflow = Some(v as u64),
            "Total" => |t, v| t.cycles = Some(v as u64),
            // Overflow cycle numbers, the dma latency line: nothing to keep.
            _ => return,
        };
        for (id, v) in values.split_whitespace().enumerate() {
            match v.parse::<f64>() {
                Ok(v) if v.is_finite() && v.abs() <= 3.6e9 => {
                    if let Some(thread) = self.thread(id) {
                        set(thread, v);
                    } else {
                        return;
                    }
                }
                _ => {
                    return self.bad(format!("`{v}` in `# {key}` is not a number; line skipped"));
                }
            }
        }
    }

    /// `000012 000006 000003`: a bucket number, then one count per thread.
    fn histogram_row(&mut self, line: &str) {
        let fields: Option<Vec<u64>> = line.split_whitespace().map(|f| f.parse().ok()).collect();
        let Some(fields) = fields.filter(|f| f.len() >= 2) else {
            return self.bad("malformed histogram line skipped".into());
        };
        if fields.len() - 1 > MAX_THREADS {
            return self.bad(format!(
                "{} columns: more than the {MAX_THREADS} threads latkit reads; histogram line skipped",
                fields.len() - 1
            ));
        }
        let index = usize::try_from(fields[0]).unwrap_or(usize::MAX);
        if index >= MAX_BUCKETS {
            return self.bad(format!(
                "bucket {index} is beyond the {MAX_BUCKETS} buckets latkit reads; histogram line skipped"
            ));
        }
        for (id, &count) in fields[1..].iter().enumerate() {
            if count == 0 {
                continue;
            }
            let added = match self.thread(id) {
                Some(thread) => thread.counts.add(index, count),
                None => return,
            };
            if let Err(e) = added {
                return self.bad(format!("histogram line skipped: {e}"));
            }
        }
        self.histogram_size = self.histogram_size.max(index.saturating_add(1));
    }

    pub fn finish(mut self) -> Parsed {
        // In the histogram form "# Total" counts only what fits the buckets.
        if self.in_histogram {
            for thread in self.threads.values_mut() {
                if let (Some(total), Some(overflow)) = (thread.cycles, thread.overflow) {
                    thread.cycles = Some(total.saturating_add(overflow));
                }
            }
        }
        let size = self.histogram_size;
        let histogram = self.in_histogram;
        let mut out = assemble(
            self.threads,
            histogram.then_some(size),
            self.period_us,
            self.priority,
        );
        out.malformed = self.skipped.count;
        let mut notes = self.skipped.into_notes(&self.file);
        notes.append(&mut out.notes);
        out.notes = notes;
        out
    }
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
            } else if let Some(value) = tokens.next() {
                pairs.push((key, value));
            }
        }
    }
    pairs
}

/// Reads cyclictest's `--json` file. Its keys `"cmdline:"` and `"rt_test_version:"` really
/// end in a colon.
pub fn parse_json(file: &str, doc: &Value) -> Result<Parsed> {
    let threads_json = doc["thread"].as_object().ok_or_else(|| {
        Error::Input(format!(
            "{file}: JSON without a \"thread\" object: latkit reads its own JSON (schema {}) and cyclictest's --json files",
            crate::model::JSON_SCHEMA
        ))
    })?;
    if threads_json.len() > MAX_THREADS {
        return Err(Error::Input(format!(
            "{file}: {} threads: more than the {MAX_THREADS} latkit reads",
            threads_json.len()
        )));
    }
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
    let finite = |v: &Value| v.as_f64().filter(|v| v.is_finite() && v.abs() <= 3.6e9);
    let mut threads = BTreeMap::new();
    for (id, t) in threads_json {
        let bad = |what: String| Error::Input(format!("{file}: thread {id}: {what}"));
        let id: usize = id
            .parse()
            .map_err(|_| bad("the thread key is not a number".into()))?;
        let mut counts = BucketCounts::default();
        for (bucket, n) in t["histogram"].as_object().into_iter().flatten() {
            let (Ok(index), Some(n)) = (bucket.parse::<usize>(), n.as_u64()) else {
                return Err(bad(format!(
                    "histogram bucket `{bucket}`: {n} is not a count"
                )));
            };
            counts.add(index, n).map_err(bad)?;
        }
        let cycles = t["cycles"].as_u64();
        // The samples beyond the buckets are the cycles the buckets do not hold: cycles past
        // what one histogram counts would make a result latkit's own JSON reader refuses.
        if let Some(c) = cycles.filter(|&c| c > MAX_SAMPLES) {
            return Err(bad(format!(
                "{c} cycles: more than the {MAX_SAMPLES} samples latkit counts in one histogram"
            )));
        }
        let in_buckets = counts.total();
        threads.insert(
            id,
            Thread {
                cycles,
                min_us: finite(&t["min"]),
                avg_us: finite(&t["avg"]),
                max_us: finite(&t["max"]),
                overflow: cycles.map(|c| c.saturating_sub(in_buckets)),
                counts,
            },
        );
    }
    let size = option("-h", "--histogram").map(|h| h.min(MAX_BUCKETS_U64) as usize);
    let period = option("-i", "--interval")
        .filter(|p| (1..=MAX_PERIOD_US).contains(p))
        .or(Some(1000));
    let priority = option("-p", "--priority").map(|p| p.min(99) as i32);
    let histogram = size.or_else(|| threads.values().any(|t| !t.counts.is_empty()).then_some(0));
    Ok(assemble(threads, histogram, period, priority))
}

const MAX_BUCKETS_U64: u64 = MAX_BUCKETS as u64;

/// Builds one benchmark per thread. `histogram` is the histogram's size in buckets (0 when
/// unknown) when the output had one.
/// Says how many samples of thread `name` lay beyond the histogram's end, and where the
/// percentiles count them.
fn overflow_note(
    name: &str,
    h: &crate::model::LinearHistogram,
    size: usize,
    max_us: Option<f64>,
    cycles: Option<u64>,
) -> Note {
    let beyond = match size {
        0 => "the histogram's buckets".to_string(),
        n => format!("the {n}-bucket histogram (≥ {n} µs)"),
    };
    let at = match max_us {
        Some(max) => format!("the reported maximum ({max} µs)"),
        None => "the histogram's end".to_string(),
    };
    Note::info(format!(
        "{}: {} of {} samples beyond {beyond} count at {at} in percentiles, so tail percentiles err high",
        name,
        h.overflow,
        cycles.map_or_else(|| "the".to_string(), |c| c.to_string()),
    ))
}

/// The test as a whole: its period, priority, length from the most cycles, and the extremes
/// over every thread.
fn timer_info(
    benchmarks: &[crate::model::Benchmark],
    period_us: Option<u64>,
    priority: Option<i32>,
) -> TimerInfo {
    let overall = TimerSummary::combine(benchmarks.iter().filter_map(|b| b.timer.as_ref()));
    let period_ns = period_us.unwrap_or(1000) * 1000;
    let cycles = benchmarks
        .iter()
        .filter_map(|b| b.iterations.first().copied())
        .max()
        .unwrap_or(0);
    let seconds = cycles.saturating_mul(period_ns) / 1_000_000_000;
    TimerInfo {
        period_ns,
        mode: "cyclictest".to_string(),
        priority: priority.unwrap_or(0),
        duration_s: seconds,
        requested_s: seconds,
        method: Some("nanosleep".to_string()),
        overall: overall.as_ref().map(TimerSummary::overall),
        ..TimerInfo::default()
    }
}

fn assemble(
    threads: BTreeMap<usize, Thread>,
    histogram: Option<usize>,
    period_us: Option<u64>,
    priority: Option<i32>,
) -> Parsed {
    let mut builder = RunBuilder::default();
    for id in threads.keys() {
        builder.benchmark(&format!("thread{id}"), None, BenchName::plain);
    }
    let mut benchmarks = builder.finish();
    let mut notes = Vec::new();
    for (bench, thread) in benchmarks.iter_mut().zip(threads.into_values()) {
        let ns = |us: f64| (us * 1000.0).round() as i64;
        bench.iterations = thread.cycles.into_iter().collect();
        bench.timer = match (thread.min_us, thread.avg_us, thread.max_us) {
            (Some(min), Some(avg), Some(max)) if min <= max => Some(TimerSummary {
                min_ns: ns(min),
                avg_ns: avg * 1000.0,
                max_ns: ns(max),
                samples: thread.cycles,
                // cyclictest does not count missed periods.
                overruns: None,
            }),
            _ => None,
        };
        let Some(size) = histogram else { continue };
        let overflow = thread.overflow.unwrap_or(0);
        if thread.counts.is_empty() && overflow == 0 {
            continue;
        }
        let mut h = thread
            .counts
            .into_histogram_sized("samples", BUCKET_NS, size);
        h.overflow = overflow;
        let max_ns = thread.max_us.map(|us| ns(us).max(0) as u64);
        if h.overflow > 0 {
            notes.push(overflow_note(
                &bench.name.name,
                &h,
                size,
                thread.max_us,
                thread.cycles,
            ));
        }
        if let Some(latency) = histogram_distribution(&h, max_ns) {
            bench.metrics.insert(0, latency);
        }
        bench.histograms.push(h);
    }
    let timer = timer_info(&benchmarks, period_us, priority);
    Parsed {
        builder: RunBuilder::from_benchmarks(benchmarks),
        config: Vec::new(),
        timer: Some(timer),
        notes,
        malformed: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_overflowed() {
        let out = parse_text(
            "ct.txt",
            "# Histogram\n000000 000000\n000001 000000\n# Total: 000000000\n# Min Latencies: 00090\n\
             # Avg Latencies: 00120\n# Max Latencies: 00200\n# Histogram Overflows: 00500\n"
                .lines(),
        );
        let b = out.builder.finish();
        let t = b[0].timer.as_ref().unwrap();
        assert_eq!(t.samples, Some(500));
        assert_eq!(b[0].metrics[0].histogram.as_ref().unwrap().len(), 500);
        assert!(
            out.notes[0]
                .message
                .contains("500 of 500 samples beyond the 2-bucket histogram"),
            "{}",
            out.notes[0]
        );
    }

    #[test]
    fn non_numbers_are_warned_about() {
        let out = parse_text(
            "ct.txt",
            [
                "T: 0 ( 1) P:80 I:1000 C: abc Min: x Act: 1 Avg: 2 Max: 3",
                "# Max Latencies: zz",
            ]
            .into_iter(),
        );
        assert_eq!(out.malformed, 2);
        assert_eq!(out.notes[0].line, Some(1));
        assert!(out.notes[0].message.contains("`C:abc`"), "{}", out.notes[0]);
    }

    #[test]
    fn wide_rows_and_huge_buckets_are_refused() {
        let wide = format!("00001{}", " 1".repeat(MAX_THREADS + 1));
        let out = parse_text(
            "ct.txt",
            [
                "# Histogram",
                wide.as_str(),
                "18446744073709551615 1",
                "99999999 1",
            ]
            .into_iter(),
        );
        assert_eq!(out.malformed, 3);
        assert!(out.builder.finish().is_empty());
    }

    /// Found by `tests/suite/fuzz_readers.rs`: a thread's `cycles` of 2⁶³ became a histogram
    /// overflow that latkit wrote to its JSON and then refused to read back.
    #[test]
    fn json_cycles_beyond_one_histogram_are_refused() {
        let doc = |cycles: u64| {
            serde_json::json!({
                "thread": {"0": {"histogram": {"12": 6, "13": 312}, "cycles": cycles,
                    "min": 12, "avg": 14, "max": 200}}
            })
        };
        let refused = parse_json("ct.json", &doc(1 << 63))
            .err()
            .unwrap()
            .to_string();
        assert!(
            refused.contains("ct.json: thread 0: 9223372036854775808 cycles"),
            "{refused}"
        );
        assert!(parse_json("ct.json", &doc(MAX_SAMPLES)).is_ok());
    }
}
