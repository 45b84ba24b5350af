//! The kernel's rtla: `rtla timerlat hist` (per CPU: the timer IRQ's latency, the timerlat
//! thread's, and with `-u` a user thread's) and `rtla osnoise hist` (per CPU: the noise each
//! sample saw), read from their text output. Each column becomes a benchmark (`cpu0/irq`,
//! `cpu0/thread`, `cpu0/user`, `cpu0`; `all/…` for the totals newer rtla prints), with the
//! histogram as printed and count, min, avg and max as the tool computed them; and
//! `rtla timerlat top`'s per-CPU count, min, avg and max.

use super::problems::{Place, Skipped};
use super::timer_common::{BucketCounts, MAX_SAMPLES, histogram_distribution, timer_input};
use super::{Input, InputFormat, Named, Parsed, for_each_text_line};
use crate::error::Result;
use crate::model::{BenchName, RunBuilder, TimerInfo, TimerSummary};
use std::io::BufRead;

/// More columns than any machine's CPUs times three: a wider header is an error.
const MAX_COLUMNS: usize = 3 * 4096;

/// One printed column: its histogram and the summary rows under it.
#[derive(Default)]
struct Column {
    name: String,
    counts: BucketCounts,
    over: u64,
    count: Option<u64>,
    min: Option<f64>,
    avg: Option<f64>,
    max: Option<f64>,
}

/// `rtla timerlat hist` and `rtla osnoise hist` output as an input format.
pub struct RtlaHist;

impl InputFormat for RtlaHist {
    fn name(&self) -> &'static str {
        "rtla-hist"
    }

    fn describe(&self) -> &'static str {
        "`rtla timerlat hist` or `rtla osnoise hist` output (`# RTLA timerlat histogram`, \
         `Index IRQ-000 Thr-000 …`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().map(str::trim).any(|l| {
            l.starts_with("# RTLA timerlat histogram")
                || l.starts_with("# RTLA osnoise histogram")
                || (l.starts_with("Index") && columns_of(l).is_some())
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = HistParser::new(input.path);
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        timer_input(parser.finish(), input, self)
    }
}

/// `IRQ-000` → `cpu0/irq`; `Thr-001` → `cpu1/thread`; `Usr-002` → `cpu2/user`; `CPU-003` →
/// `cpu3` (osnoise). `None` when a word is none of these.
fn column_name(word: &str) -> Option<String> {
    let (kind, cpu) = word.split_once('-')?;
    let cpu: usize = cpu.parse().ok()?;
    let context = match kind {
        "IRQ" => "/irq",
        "Thr" => "/thread",
        "Usr" => "/user",
        "CPU" => "",
        _ => return None,
    };
    Some(format!("cpu{cpu}{context}"))
}

/// The benchmark names a header line (`Index IRQ-000 Thr-000 …`) announces.
fn columns_of(header: &str) -> Option<Vec<String>> {
    let names: Option<Vec<String>> = header.split_whitespace().skip(1).map(column_name).collect();
    names.filter(|n| !n.is_empty() && n.len() <= MAX_COLUMNS)
}

/// The totals newer rtla prints under `ALL:` (`IRQ Thr Usr`) as benchmark names.
fn totals_of(header: &str) -> Option<Vec<String>> {
    let names: Option<Vec<String>> = header
        .split_whitespace()
        .skip(1)
        .map(|w| match w {
            "IRQ" => Some("all/irq".to_string()),
            "Thr" => Some("all/thread".to_string()),
            "Usr" => Some("all/user".to_string()),
            _ => None,
        })
        .collect();
    names.filter(|n| !n.is_empty())
}

struct HistParser {
    file: String,
    line: u64,
    /// Nanoseconds per printed unit (`# Time unit is microseconds (us)`).
    unit_ns: f64,
    osnoise: bool,
    columns: Vec<Column>,
    /// Where the columns the rows fill start (the `ALL:` totals come after the CPUs).
    current: usize,
    /// Index values seen, to find the bucket width (`-b`).
    indexes: Vec<u64>,
    rows: Vec<(u64, Vec<u64>, usize)>,
    skipped: Skipped,
    /// The line where a later histogram replaced an earlier one, if any did.
    replaced: Option<u64>,
}

impl HistParser {
    fn new(file: &str) -> Self {
        HistParser {
            file: file.to_string(),
            line: 0,
            unit_ns: 1000.0,
            osnoise: false,
            columns: Vec::new(),
            current: 0,
            indexes: Vec::new(),
            rows: Vec::new(),
            skipped: Skipped::default(),
            replaced: None,
        }
    }

    fn bad(&mut self, message: String) {
        self.skipped.line(&self.file, self.line, message);
    }

    fn feed(&mut self, raw: Option<&str>) {
        self.line += 1;
        let Some(raw) = raw else {
            return self.bad(super::LINE_TOO_LONG.into());
        };
        let line = raw.trim();
        if line.starts_with('#') {
            return self.comment(line);
        }
        let Some(first) = line.split_whitespace().next() else {
            return;
        };
        if first == "Index" {
            return self.header(line, columns_of(line));
        }
        if first == "ALL:" {
            return self.header(line, totals_of(line));
        }
        if self.columns.is_empty() {
            return;
        }
        match first.strip_suffix(':') {
            Some(key) => self.summary(key, line),
            None => self.row(first, line),
        }
    }

    fn comment(&mut self, line: &str) {
        if line.contains("RTLA osnoise histogram") {
            self.osnoise = true;
        }
        if line.starts_with("# Time unit is") {
            self.unit_ns = if line.contains("nanoseconds") {
                1.0
            } else {
                1000.0
            };
        }
    }

    fn header(&mut self, line: &str, names: Option<Vec<String>>) {
        let Some(names) = names else {
            return self.bad(format!(
                "`{line}`: expected column names such as IRQ-000, Thr-000, Usr-000 or CPU-000"
            ));
        };
        if names
            .iter()
            .any(|n| self.columns.iter().any(|c| &c.name == n))
        {
            // Output appended to the same file again: one benchmark per column, so the
            // last histogram is the one read.
            self.replaced.get_or_insert(self.line);
            self.columns.clear();
            self.rows.clear();
            self.indexes.clear();
        }
        self.current = self.columns.len();
        self.columns.extend(names.into_iter().map(|name| Column {
            name,
            ..Column::default()
        }));
    }

    /// The values of a row, one per current column; `None` (with a note) when they do not
    /// match the header.
    fn values<T: std::str::FromStr>(&mut self, line: &str) -> Option<Vec<Option<T>>> {
        let values: Option<Vec<Option<T>>> = line
            .split_whitespace()
            .skip(1)
            .map(|v| match v {
                "-" => Ok(None),
                v => v.parse().map(Some).map_err(|_| ()),
            })
            .collect::<std::result::Result<_, ()>>()
            .ok();
        let Some(values) = values else {
            self.bad("a value that is not a number; row skipped".into());
            return None;
        };
        let expected = self.columns.len() - self.current;
        if values.len() != expected {
            self.bad(format!(
                "{} value(s) under {expected} columns; row skipped",
                values.len()
            ));
            return None;
        }
        Some(values)
    }

    /// `12   4   256 …`: the samples in the bucket starting at 12 time units.
    fn row(&mut self, first: &str, line: &str) {
        let Ok(index) = first.parse::<u64>() else {
            return self.bad(format!("`{first}` is not a bucket index; row skipped"));
        };
        let Some(values) = self.values::<u64>(line) else {
            return;
        };
        self.indexes.push(index);
        let counts = values.into_iter().map(Option::unwrap_or_default).collect();
        self.rows.push((index, counts, self.current));
    }

    /// `over:`, `count:`, `min:`, `avg:`, `max:` under the histogram.
    fn summary(&mut self, key: &str, line: &str) {
        let Some(values) = self.values::<f64>(line) else {
            return;
        };
        // Counts stay exact and summable; a latency beyond an hour is a corrupt line.
        let limit = match key {
            "over" | "count" => MAX_SAMPLES as f64,
            _ => 3.6e12 / self.unit_ns,
        };
        if let Some(v) = values
            .iter()
            .flatten()
            .find(|v| !(0.0..=limit).contains(*v))
        {
            return self.bad(format!(
                "`{key}:` value {v} is out of range (0 to {limit}); row skipped"
            ));
        }
        let start = self.current;
        for (column, value) in self.columns[start..].iter_mut().zip(values) {
            let Some(v) = value else {
                continue;
            };
            match key {
                "over" => column.over = v as u64,
                "count" => column.count = Some(v as u64),
                "min" => column.min = Some(v),
                "avg" => column.avg = Some(v),
                "max" => column.max = Some(v),
                _ => {}
            }
        }
    }

    fn finish(mut self) -> Parsed {
        // `-b N` prints every Nth value: the bucket width is what the indexes share.
        let width = self.indexes.iter().fold(0, |g, &i| gcd(g, i)).max(1);
        let rows = std::mem::take(&mut self.rows);
        for (index, counts, start) in rows {
            for (column, count) in self.columns[start..].iter_mut().zip(counts) {
                if count > 0
                    && let Err(e) = column.counts.add((index / width) as usize, count)
                {
                    self.skipped.line(&self.file, self.line, e);
                }
            }
        }
        let bucket_ns = (width as f64 * self.unit_ns) as u64;
        let mut builder = RunBuilder::default();
        for column in &self.columns {
            builder.benchmark(&column.name, None, BenchName::plain);
        }
        let mut benchmarks = builder.finish();
        let ns = |v: f64| (v * self.unit_ns).round() as i64;
        for (bench, column) in benchmarks.iter_mut().zip(std::mem::take(&mut self.columns)) {
            bench.timer = match (column.min, column.avg, column.max) {
                (Some(min), Some(avg), Some(max)) if min <= max => Some(TimerSummary {
                    min_ns: ns(min),
                    avg_ns: avg * self.unit_ns,
                    max_ns: ns(max),
                    samples: column.count,
                    overruns: None,
                }),
                _ => None,
            };
            let mut h = column.counts.into_histogram("samples", bucket_ns);
            h.overflow = column.over;
            let max_ns = column.max.map(|m| ns(m).max(0) as u64);
            if let Some(latency) = histogram_distribution(&h, max_ns) {
                bench.metrics.insert(0, latency);
                bench.histograms.push(h);
            }
        }
        let tool = if self.osnoise { "osnoise" } else { "timerlat" };
        Parsed {
            timer: Some(timer_info(&format!("rtla {tool} hist"), &benchmarks)),
            builder: RunBuilder::from_benchmarks(benchmarks),
            config: Vec::new(),
            malformed: self.skipped.count,
            notes: self
                .replaced
                .map(|line| {
                    crate::model::Note::warning_at(
                        &self.file,
                        line,
                        "another histogram starts here (output appended to the same file?); \
                         only the last one is read",
                    )
                })
                .into_iter()
                .chain(self.skipped.into_notes(&self.file))
                .collect(),
        }
    }
}

/// The run's timer information: which rtla tool, and the extremes over the CPUs' own
/// benchmarks (the `all/` totals would count every sample twice).
fn timer_info(mode: &str, benchmarks: &[crate::model::Benchmark]) -> TimerInfo {
    let overall = TimerSummary::combine(
        benchmarks
            .iter()
            .filter(|b| !b.name.full_name.starts_with("all/"))
            .filter_map(|b| b.timer.as_ref()),
    );
    TimerInfo {
        mode: mode.to_string(),
        overall: overall.as_ref().map(TimerSummary::overall),
        ..TimerInfo::default()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `rtla timerlat top` output (its last screen, or `-q`'s single one) as an input format.
pub struct RtlaTop;

impl InputFormat for RtlaTop {
    fn name(&self) -> &'static str {
        "rtla-top"
    }

    fn describe(&self) -> &'static str {
        "`rtla timerlat top` output (`Timer Latency`, `CPU COUNT | cur min avg max | …`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.contains("Timer Latency")
            && head
                .lines()
                .any(|l| on_screen(l).trim().starts_with("CPU COUNT"))
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = TopParser::new(input.path);
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        timer_input(parser.finish(), input, self)
    }
}

/// The text of a line of rtla's screen: colour (SGR) sequences are dropped, and as each live
/// redraw starts with cursor escapes, only the text after the last of those shows.
pub(super) fn on_screen(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            text.push(c);
            continue;
        }
        // A control sequence (`ESC [ params final`) or a two-character escape.
        let colour = match chars.next() {
            Some('[') => chars.by_ref().find(|c| ('@'..='~').contains(c)) == Some('m'),
            _ => false,
        };
        if !colour {
            text.clear();
        }
    }
    text
}

/// One CPU's row of `timerlat top`: its count and, per context, min, avg and max.
struct TopRow {
    count: u64,
    /// `(min, avg, max)` of the IRQ, the thread and (with `-u`) the user thread.
    contexts: Vec<(f64, f64, f64)>,
}

struct TopParser {
    place: Place,
    unit_ns: f64,
    /// Each CPU's (or `ALL`'s) latest row: a live screen redraws them.
    rows: std::collections::BTreeMap<(bool, usize), TopRow>,
}

impl TopParser {
    fn new(file: &str) -> Self {
        TopParser {
            place: Place::new(file),
            unit_ns: 1000.0,
            rows: std::collections::BTreeMap::new(),
        }
    }

    fn feed(&mut self, raw: Option<&str>) {
        let Some(raw) = self.place.next(raw) else {
            return;
        };
        let line = on_screen(raw);
        let line = line.as_str();
        if line.contains("Timer Latency (ns)") {
            self.unit_ns = 1.0;
        } else if line.contains("Timer Latency (us)") {
            self.unit_ns = 1000.0;
        }
        let Some((who, rest)) = line.split_once('#') else {
            return;
        };
        let who = who.trim();
        let key = match who {
            "ALL" => (true, 0),
            cpu => match cpu.parse::<usize>() {
                Ok(cpu) if cpu < MAX_COLUMNS => (false, cpu),
                _ => return,
            },
        };
        match self.top_row(rest) {
            Ok(row) => {
                self.rows.insert(key, row);
            }
            Err(why) => self.place.skip(why),
        }
    }

    /// `12322     |  0  0  1  15 |  10  3  9  31`: the count, then cur/min/avg/max per context.
    fn top_row(&self, rest: &str) -> std::result::Result<TopRow, String> {
        let mut parts = rest.split('|');
        let count = parts
            .next()
            .and_then(|c| c.trim().parse::<u64>().ok())
            .filter(|&c| c <= MAX_SAMPLES)
            .ok_or("the count after `#` is not a number of samples; row skipped")?;
        let limit = 3.6e12 / self.unit_ns;
        let mut contexts = Vec::new();
        for part in parts {
            let values: Vec<f64> = part
                .split_whitespace()
                .map(|v| v.parse::<f64>().ok().filter(|v| (0.0..=limit).contains(v)))
                .collect::<Option<_>>()
                .ok_or("a latency that is not a number from 0 to an hour; row skipped")?;
            let [_, min, avg, max] = values[..] else {
                return Err(format!(
                    "{} values where cur, min, avg and max were expected; row skipped",
                    values.len()
                ));
            };
            if min > max {
                return Err(format!(
                    "a minimum ({min}) above its maximum ({max}); row skipped"
                ));
            }
            contexts.push((min, avg, max));
        }
        if contexts.is_empty() {
            return Err("no latency columns after the count; row skipped".into());
        }
        Ok(TopRow { count, contexts })
    }

    fn finish(self) -> Parsed {
        const CONTEXTS: [&str; 3] = ["irq", "thread", "user"];
        let mut builder = RunBuilder::default();
        let mut summaries = Vec::new();
        for ((all, cpu), row) in &self.rows {
            for (context, &(min, avg, max)) in CONTEXTS.iter().zip(&row.contexts) {
                let name = match all {
                    true => format!("all/{context}"),
                    false => format!("cpu{cpu}/{context}"),
                };
                builder.benchmark(&name, None, BenchName::plain);
                summaries.push(TimerSummary {
                    min_ns: (min * self.unit_ns).round() as i64,
                    avg_ns: avg * self.unit_ns,
                    max_ns: (max * self.unit_ns).round() as i64,
                    samples: Some(row.count),
                    overruns: None,
                });
            }
        }
        let mut benchmarks = builder.finish();
        for (bench, summary) in benchmarks.iter_mut().zip(summaries) {
            bench.timer = Some(summary);
        }
        Parsed {
            timer: Some(timer_info("rtla timerlat top", &benchmarks)),
            builder: RunBuilder::from_benchmarks(benchmarks),
            config: Vec::new(),
            malformed: self.place.skipped.count,
            notes: self.place.skipped.into_notes(&self.place.file),
        }
    }
}
