//! google/benchmark's console table, as a binary prints it without `--benchmark_format`:
//!
//! ```text
//! Run on (2 X 2445.43 MHz CPU s)
//! ------------------------------------------------------------
//! Benchmark                  Time             CPU   Iterations
//! ------------------------------------------------------------
//! BM_WriteFrames          65.6 ns         65.6 ns      1301931 items_per_second=15.25M/s
//! BM_WriteFrames_cv       3.62 %          3.60 %             2
//! BM_DiffFrames_BigO      1.07 N          1.06 N
//! BM_BrokenDevice    ERROR OCCURRED: 'device not found'
//! ```
//!
//! Aggregates are told apart by their suffix (`_mean`, `_median`, `_stddev`, `_cv`), as the
//! console shows nothing else. Figures are rounded to the digits printed; the JSON has them all.

use super::{Context, Problem, Recorder, Row, RowKind, cache_size};
use crate::error::{Error, Result};
use crate::ingest::{Input, InputFormat, Named, for_each_text_line};
use crate::model::Source;
use std::io::BufRead;

pub const EXAMPLE_LINE: &str = "BM_Lookup        12.5 ns         12.5 ns     56000000";

pub struct GbenchConsole;

impl InputFormat for GbenchConsole {
    fn name(&self) -> &'static str {
        "gbench"
    }

    fn describe(&self) -> &'static str {
        "google/benchmark's console table, `Benchmark  Time  CPU  Iterations`"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().any(is_header)
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = ConsoleParser::new(input.path);
        for_each_text_line(reader, input.path, |l| {
            parser.feed(l);
        })?;
        if parser.is_empty() {
            return Err(Error::Input(format!(
                "{}: no google/benchmark results found. A result line looks like:\n  {EXAMPLE_LINE}",
                input.path
            )));
        }
        Ok(parser.into_input(input.source(self)))
    }
}

fn is_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("Benchmark")
        && words.next() == Some("Time")
        && words.next() == Some("CPU")
        && words.next() == Some("Iterations")
}

const AGGREGATES: &[&str] = &["mean", "median", "stddev", "cv"];
const TIME_UNITS: &[&str] = &["ns", "us", "ms", "s"];

/// Streams console lines into rows as they arrive (the `gbench` runner feeds it live).
pub struct ConsoleParser {
    line: u64,
    recorder: Recorder,
    context: Context,
    caches: Vec<String>,
    /// Counter columns of a `--benchmark_counters_tabular` header.
    columns: Vec<String>,
    /// The time unit of the last timed row, which BigO rows print their coefficient in.
    last_unit: String,
    results: u64,
    /// A table's header was read.
    in_table: bool,
}

impl ConsoleParser {
    pub fn new(file: &str) -> Self {
        ConsoleParser {
            line: 0,
            recorder: Recorder::new(file),
            context: Context::default(),
            caches: Vec::new(),
            columns: Vec::new(),
            last_unit: "ns".to_string(),
            results: 0,
            in_table: false,
        }
    }

    /// Rows read so far, for progress.
    pub fn results(&self) -> u64 {
        self.results
    }

    /// Reads the next line; `None` stands for a line too long to read. Returns the name of
    /// the benchmark when the line was a result.
    pub fn feed(&mut self, line: Option<&str>) -> Option<String> {
        self.line += 1;
        let Some(line) = line else {
            self.recorder
                .skip(self.line, crate::ingest::LINE_TOO_LONG.into());
            return None;
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.bytes().all(|b| b == b'-') {
            return None;
        }
        if is_header(trimmed) {
            self.in_table = true;
            self.columns = trimmed
                .split_whitespace()
                .skip(4)
                .map(str::to_string)
                .collect();
            return None;
        }
        if self.context_line(line, trimmed) {
            return None;
        }
        let split = trimmed.split_once(char::is_whitespace);
        let Some((name, rest)) = split
            .filter(|(name, _)| name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        else {
            // Under a table's header a line is a result or it is said; before one it is the
            // program's own output.
            if self.in_table {
                self.recorder.skip(
                    self.line,
                    format!("not a result line; line skipped (expected e.g. `{EXAMPLE_LINE}`)"),
                );
            }
            return None;
        };
        match self.row(name, rest.trim()) {
            Ok(row) => {
                self.results += 1;
                self.recorder.add(row);
                Some(name.to_string())
            }
            Err(why) => {
                self.recorder.skip(
                    self.line,
                    format!("{why}; line skipped (expected e.g. `{EXAMPLE_LINE}`)"),
                );
                None
            }
        }
    }

    /// The header google/benchmark prints before the table (on stderr when run).
    fn context_line(&mut self, line: &str, trimmed: &str) -> bool {
        if let Some(exe) = trimmed.strip_prefix("Running ") {
            self.context.set("executable", exe.to_string());
        } else if let Some(spec) = trimmed.strip_prefix("Run on (") {
            // `2 X 2445.43 MHz CPU s)`
            let words: Vec<&str> = spec.split_whitespace().collect();
            if let [cpus, "X", mhz, ..] = words[..] {
                self.context.set("num_cpus", cpus.to_string());
                let whole = mhz.split('.').next().unwrap_or(mhz);
                self.context.set("mhz_per_cpu", whole.to_string());
            }
        } else if trimmed == "CPU Caches:" {
        } else if line.starts_with("  L") && trimmed.contains(" (x") {
            self.caches.push(trimmed.to_string());
        } else if let Some(loads) = trimmed.strip_prefix("Load Average: ") {
            let loads: Vec<&str> = loads.split(", ").collect();
            self.context.set("load_avg", loads.join(" "));
        } else if trimmed.starts_with("***WARNING*** Library was built as DEBUG") {
            self.context.set("library_build_type", "debug".into());
        } else if trimmed.starts_with("***WARNING*** CPU scaling is enabled") {
            self.context.set("cpu_scaling_enabled", "true".into());
        } else if trimmed.starts_with("***WARNING***") {
        } else if self.line <= 2 && is_date(trimmed) {
            self.context.set("date", trimmed.to_string());
        } else {
            return false;
        }
        true
    }

    fn row(&mut self, name: &str, rest: &str) -> std::result::Result<Row, String> {
        for (marker, problem) in [
            ("ERROR OCCURRED:", Problem::Error as fn(String) -> Problem),
            ("SKIPPED:", Problem::Skipped),
        ] {
            if let Some(message) = rest.strip_prefix(marker) {
                let message = message.trim().trim_matches('\'').to_string();
                let mut row = Row::new(self.line, name, RowKind::Iteration);
                row.problem = Some(problem(message));
                return Ok(row);
            }
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let [real, unit, cpu, cpu_unit, more @ ..] = &words[..] else {
            return Err(format!(
                "`{rest}`: expected a time, a CPU time and iterations"
            ));
        };
        if unit != cpu_unit {
            return Err(format!("time in `{unit}` but CPU time in `{cpu_unit}`"));
        }
        let (real, cpu) = (finite(real)?, finite(cpu)?);
        let (run_name, kind) = self.kind(name, unit)?;
        let mut row = Row::new(self.line, &run_name, kind);
        row.name = name.to_string();
        row.percentage = *unit == "%" && matches!(row.kind, RowKind::Aggregate(_));
        let fraction = |v: f64| if *unit == "%" { v / 100.0 } else { v };
        row.real_time = Some(fraction(real));
        row.cpu_time = Some(fraction(cpu));
        if TIME_UNITS.contains(unit) {
            row.time_unit = unit.to_string();
            self.last_unit = unit.to_string();
        } else {
            row.time_unit = self.last_unit.clone();
        }
        if matches!(row.kind, RowKind::BigO(_) | RowKind::Rms) {
            return Ok(row);
        }
        let (iterations, counters) = more
            .split_first()
            .ok_or_else(|| format!("`{rest}`: no iteration count"))?;
        row.iterations = Some(
            iterations
                .parse()
                .map_err(|_| format!("`{iterations}` is not an iteration count"))?,
        );
        for (i, word) in counters.iter().enumerate() {
            let (key, value) = match word.split_once('=') {
                Some((key, value)) => (key, value),
                None => match self.columns.get(i) {
                    Some(column) => (column.as_str(), *word),
                    None => return Err(format!("`{word}` is not a counter (`name=value`)")),
                },
            };
            row.counters.push((key.to_string(), counter_value(value)?));
        }
        Ok(row)
    }

    /// The benchmark and what the row is, from the name's suffix and the unit.
    fn kind(&self, name: &str, unit: &str) -> std::result::Result<(String, RowKind), String> {
        if let Some(run) = name.strip_suffix("_BigO") {
            return Ok((run.to_string(), RowKind::BigO(unit.to_string())));
        }
        if let Some(run) = name.strip_suffix("_RMS") {
            return Ok((run.to_string(), RowKind::Rms));
        }
        if let Some((run, statistic)) = name.rsplit_once('_')
            && AGGREGATES.contains(&statistic)
        {
            return Ok((run.to_string(), RowKind::Aggregate(statistic.to_string())));
        }
        if !TIME_UNITS.contains(&unit) {
            return Err(format!("`{unit}` is not a time unit (ns, us, ms, s)"));
        }
        Ok((name.to_string(), RowKind::Iteration))
    }

    /// Whether any row was read (errors included).
    pub fn is_empty(&self) -> bool {
        self.recorder.is_empty()
    }

    /// The run read so far.
    pub fn into_input(mut self, source: Source) -> Input {
        if !self.caches.is_empty() {
            let cpus: Option<u64> = self.context.environment.cores.map(|c| c as u64);
            let caches: Vec<String> = self.caches.iter().map(|c| cache(c, cpus)).collect();
            self.context.set("caches", caches.join(", "));
        }
        self.context.into_input(self.recorder, source)
    }
}

fn is_date(text: &str) -> bool {
    text.len() >= 19
        && text.as_bytes()[4] == b'-'
        && text.as_bytes()[10] == b'T'
        && text.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

fn finite(word: &str) -> std::result::Result<f64, String> {
    word.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("`{word}` is not a non-negative number"))
}

/// `15.2507M/s`, `1.5Gi/s`, `64`, `3.60%`, `250m`, `248.979us`: google/benchmark's
/// human-readable numbers (decimal prefixes, binary with `i`), with the rate or percent sign
/// dropped. An inverted rate (`kIsRate | kInvert`, seconds per item) ends in `s`, as its
/// `ConsoleReporter` prints it; its value is in seconds, as the JSON holds it.
fn counter_value(text: &str) -> std::result::Result<f64, String> {
    let bare = (text.strip_suffix("/s"))
        .or_else(|| text.strip_suffix('s'))
        .unwrap_or(text);
    let (bare, scale) = match bare.strip_suffix('%') {
        Some(b) => (b, 0.01),
        None => (bare, 1.0),
    };
    let (bare, base) = match bare.strip_suffix('i') {
        Some(b) => (b, 1024.0_f64),
        None => (bare, 1000.0),
    };
    let prefixes = "kMGTPEZY";
    let small = "munpfazy";
    let (number, factor) = match bare.chars().last() {
        Some(c) if prefixes.contains(c) => (
            &bare[..bare.len() - 1],
            base.powi(prefixes.find(c).unwrap_or(0) as i32 + 1),
        ),
        Some(c) if small.contains(c) && base == 1000.0 => (
            &bare[..bare.len() - c.len_utf8()],
            1000f64.powi(-(small.find(c).unwrap_or(0) as i32 + 1)),
        ),
        _ => (bare, 1.0),
    };
    number
        .parse::<f64>()
        .ok()
        .map(|v| v * factor * scale)
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{text}` is not a counter value"))
}

/// `L3 Unified 32768 KiB (x1)` → `L3 Unified 32 MiB (shared by 2)` on 2 CPUs, as the JSON
/// context describes the same cache.
fn cache(line: &str, cpus: Option<u64>) -> String {
    let Some((described, count)) = line.rsplit_once(" (x") else {
        return line.to_string();
    };
    let count: Option<u64> = count.trim_end_matches(')').parse().ok();
    let words: Vec<&str> = described.split_whitespace().collect();
    let described = match words[..] {
        [level, kind, size, unit] => {
            let factor = match unit {
                "KiB" => 1 << 10,
                "MiB" => 1 << 20,
                _ => 1,
            };
            match size.parse::<u64>() {
                Ok(n) => format!("{level} {kind} {}", cache_size(n.saturating_mul(factor))),
                Err(_) => described.to_string(),
            }
        }
        _ => described.to_string(),
    };
    match (cpus, count) {
        (Some(cpus), Some(count)) if count > 0 && cpus / count > 1 => {
            format!("{described} (shared by {})", cpus / count)
        }
        _ => described,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source {
            kind: crate::model::SourceKind::File,
            format: "gbench".into(),
            path: None,
            command: Vec::new(),
        }
    }

    #[test]
    fn inverted_rates_are_seconds_as_the_console_prints_them() {
        assert_eq!(counter_value("248.979us"), Ok(248.979e-6));
        assert_eq!(counter_value("1.5ms"), Ok(1.5e-3));
        assert_eq!(counter_value("3s"), Ok(3.0));
        assert_eq!(counter_value("530.732k/s"), Ok(530_732.0));
        assert!(counter_value("fast").is_err());
    }

    #[test]
    fn human_readable_counters() {
        assert_eq!(counter_value("15.2507M/s").unwrap(), 15.2507e6);
        assert_eq!(counter_value("1.5Gi/s").unwrap(), 1.5 * 1073741824.0);
        assert_eq!(counter_value("64").unwrap(), 64.0);
        assert!((counter_value("3.60%").unwrap() - 0.036).abs() < 1e-12);
        assert_eq!(counter_value("250m").unwrap(), 0.25);
        assert!(counter_value("fast").is_err());
        assert!(counter_value("1e999").is_err());
    }

    #[test]
    fn caches_read_as_the_json_context_says() {
        assert_eq!(cache("L1 Data 32 KiB (x2)", Some(2)), "L1 Data 32 KiB");
        assert_eq!(
            cache("L3 Unified 32768 KiB (x1)", Some(2)),
            "L3 Unified 32 MiB (shared by 2)"
        );
    }

    #[test]
    fn rows_of_every_kind() {
        let mut p = ConsoleParser::new("c.txt");
        for line in [
            "Run on (2 X 2445.43 MHz CPU s)",
            "Benchmark                  Time             CPU   Iterations",
            "BM_W          65.6 ns         65.5 ns      1301931 entities=64 items_per_second=15.25M/s",
            "BM_W_mean     65.6 ns         65.5 ns            2",
            "BM_W_cv       3.62 %          3.60 %             2",
            "BM_D/256       301 ns          295 ns        45131",
            "BM_D_BigO     1.07 N          1.06 N",
            "BM_D_RMS         3 %             2 %",
            "BM_B    ERROR OCCURRED: 'device not found'",
            "BM_X          12 parsecs      12 parsecs     5",
        ] {
            p.feed(Some(line));
        }
        assert_eq!(p.results(), 7);
        let input = p.into_input(source());
        assert_eq!(input.malformed, 1);
        let run = &input.runs[0];
        assert_eq!(run.environment.cores, Some(2));
        let b = &run.benchmarks;
        let names: Vec<&str> = b.iter().map(|b| b.name.full_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "BM_W",
                "BM_W_mean",
                "BM_W_cv",
                "BM_D/256",
                "BM_D_BigO",
                "BM_D_RMS"
            ]
        );
        assert_eq!(b[0].metric("real_time").unwrap().values, [65.6]);
        assert_eq!(b[0].metric("items_per_second").unwrap().values, [15.25e6]);
        // Aggregates are figures of their own, the cv in %.
        assert_eq!(b[1].aggregate.as_deref(), Some("mean"));
        assert_eq!(b[2].metric("real_time").unwrap().values, [3.62]);
        assert_eq!(b[2].metric("real_time").unwrap().source_unit, "%");
        assert_eq!(b[4].metric("cpu_time").unwrap().source_unit, "ns/N");
        assert_eq!(b[5].metric("real_time").unwrap().values, [3.0]);
    }

    #[test]
    fn tabular_counters_take_their_column_names() {
        let mut p = ConsoleParser::new("c.txt");
        p.feed(Some(
            "Benchmark   Time    CPU   Iterations entities items_per_second",
        ));
        p.feed(Some(
            "BM_W        65.6 ns 65.5 ns    1301931       64        15.25M/s",
        ));
        let b = &p.into_input(source()).runs[0].benchmarks;
        assert_eq!(b[0].metric("entities").unwrap().values, [64.0]);
        assert_eq!(b[0].metric("items_per_second").unwrap().values, [15.25e6]);
    }
}
