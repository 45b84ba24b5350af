//! Foreign formats into the model: one file per format, plus detection and merging.

pub mod bench;
pub mod cyclictest;
pub mod go;
mod problems;
pub mod timer_common;
mod validate;
pub mod xenomai;

use crate::error::{Error, Result};
use crate::model::{Environment, JSON_SCHEMA, Note, Run, Source, TimerInfo, TimerOverall};
use serde::Deserialize;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

pub use crate::model::{RunBuilder, new_run};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    /// Detect the format from the first 64 KiB.
    Auto,
    /// Go benchmark format (`go test -bench` output).
    Go,
    /// Xenomai `latency` output.
    Xenomai,
    /// cyclictest's summary lines and `-h` histogram.
    Cyclictest,
    /// cyclictest's `--json` file.
    CyclictestJson,
    /// `BENCH name: key=value<unit>` lines.
    Bench,
    /// latkit's own JSON (`--format json`).
    Latkit,
}

impl InputFormat {
    fn name(self) -> &'static str {
        match self {
            InputFormat::Auto | InputFormat::Go => "go",
            InputFormat::Xenomai => "xenomai",
            InputFormat::Cyclictest => "cyclictest",
            InputFormat::CyclictestJson => "cyclictest-json",
            InputFormat::Bench => "bench",
            InputFormat::Latkit => "latkit",
        }
    }
}

/// Picks the format from the start of the input; `None` when it is none latkit reads.
fn detect(head: &[u8]) -> Option<InputFormat> {
    let head = String::from_utf8_lossy(head);
    if head.trim_start().starts_with('{') {
        return Some(if head.contains("\"latkit.result.") {
            InputFormat::Latkit
        } else {
            InputFormat::CyclictestJson
        });
    }
    let any = |f: &dyn Fn(&str) -> bool| head.lines().any(|l| f(l.trim_end()));
    if any(&|l| {
        l.starts_with("== Sampling period") || l.starts_with("RTD|") || l.starts_with("RTS|")
    }) {
        Some(InputFormat::Xenomai)
    } else if any(&|l| l.trim_start().starts_with("BENCH ")) {
        Some(InputFormat::Bench)
    } else if any(&|l| {
        l == "# Histogram"
            || l.starts_with("# /dev/cpu_dma_latency")
            || (l.contains("T:") && l.contains(" P:") && l.contains("Max:"))
    }) {
        Some(InputFormat::Cyclictest)
    } else if any(&|l| {
        ["Benchmark", "goos:", "pkg:", "ok  ", "--- FAIL", "FAIL"]
            .iter()
            .any(|p| l.starts_with(p))
            || l == "PASS"
    }) {
        Some(InputFormat::Go)
    } else {
        None
    }
}

/// What the message for unrecognised input lists.
const FORMATS_READ: &str = "Go benchmark output (`BenchmarkX-8  1000  1234 ns/op`), Xenomai `latency` output (`RTD|`/`RTS|` lines), cyclictest output (`T: 0 (…) P:80 I:1000 C: … Max: …` or `# Histogram`) and its --json file, `BENCH name: key=value` lines, and latkit JSON";

/// The runs read from one input (one, except for latkit's own JSON), with what the reader
/// must be told about them.
pub struct Input {
    pub runs: Vec<Run>,
    pub notes: Vec<Note>,
    /// Lines that looked like results but could not be parsed.
    pub malformed: u64,
}

const READ_BUFFER: usize = 256 * 1024;
/// How much of the input format detection looks at (less only at the end of the input).
const DETECT_BYTES: u64 = 64 * 1024;

/// Reads one file, or standard input for `-`.
pub fn read_path(path: &str, format: InputFormat) -> Result<Input> {
    let io_err = |e| Error::io(path, e);
    let raw: Box<dyn Read> = if path == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(io_err)?)
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, raw);
    // Detection reads until it has enough bytes, however slowly they arrive.
    let mut head = Vec::new();
    (&mut reader)
        .take(DETECT_BYTES)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    let format = match format {
        InputFormat::Auto => detect(&head).ok_or_else(|| unrecognised(path, &head))?,
        other => other,
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, io::Cursor::new(head).chain(reader));
    let source = Source {
        kind: if path == "-" { "stdin" } else { "file" }.to_string(),
        format: format.name().to_string(),
        path: (path != "-").then(|| path.to_string()),
        command: Vec::new(),
    };
    let timer_output = match format {
        InputFormat::Go | InputFormat::Auto => {
            let chunk = if path == "-" {
                read_go_stream(reader, path)?
            } else {
                read_go_file(path)?
            };
            return go_input(chunk, path, source);
        }
        InputFormat::Bench => {
            let mut parser = bench::BenchParser::new(path);
            for_each_text_line(&mut reader, path, |l| parser.feed(l))?;
            return bench_input(path, parser.finish(), source);
        }
        InputFormat::Latkit => return read_latkit_json(path, reader),
        InputFormat::Xenomai => {
            let mut parser = xenomai::XenomaiParser::new(path);
            for_each_text_line(&mut reader, path, |l| parser.feed(l))?;
            parser.finish()
        }
        InputFormat::Cyclictest => {
            let mut parser = cyclictest::CyclictestParser::new(path);
            for_each_text_line(&mut reader, path, |l| parser.feed(l))?;
            parser.finish()
        }
        InputFormat::CyclictestJson => cyclictest::parse_json(path, &read_json(path, reader)?)?,
    };
    let timer_common::TimerOutput {
        builder,
        timer,
        notes,
        malformed,
    } = timer_output;
    if !builder.has_values() && timer.overall.is_none() {
        return Err(Error::Input(format!(
            "{path}: no {} results found{}",
            format.name(),
            notes
                .first()
                .map(|n| format!(" (first problem: {n})"))
                .unwrap_or_default()
        )));
    }
    let mut run = new_run(source, Environment::default(), Vec::new(), builder);
    run.timer = Some(timer);
    Ok(Input {
        runs: vec![run],
        notes,
        malformed,
    })
}

fn unrecognised(path: &str, head: &[u8]) -> Error {
    let first = String::from_utf8_lossy(head)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(60).collect::<String>());
    let saw = match first {
        Some(line) => format!("its first line is `{line}`"),
        None => "it is empty".to_string(),
    };
    Error::Input(format!(
        "{path}: not a format latkit reads ({saw}). latkit reads {FORMATS_READ}; \
         --input-format names one explicitly"
    ))
}

/// Feeds each line as text (invalid UTF-8 replaced), or `None` for an over-long line.
fn for_each_text_line(
    reader: &mut impl BufRead,
    path: &str,
    mut f: impl FnMut(Option<&str>),
) -> Result<()> {
    for_each_line(reader, |line| match line {
        Some(bytes) => f(Some(&String::from_utf8_lossy(bytes))),
        None => f(None),
    })
    .map_err(|e| Error::io(path, e))
}

fn read_json(path: &str, reader: impl BufRead) -> Result<serde_json::Value> {
    serde_json::from_reader(reader)
        .map_err(|e| Error::Input(format!("{path}:{}: not valid JSON: {e}", e.line())))
}

fn bench_input(path: &str, out: bench::BenchOutput, source: Source) -> Result<Input> {
    if out.builder.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no BENCH results found. A BENCH line looks like:\n  {}",
            bench::EXAMPLE_LINE
        )));
    }
    Ok(Input {
        runs: vec![new_run(
            source,
            Environment::default(),
            Vec::new(),
            out.builder,
        )],
        notes: out.notes,
        malformed: out.malformed,
    })
}

/// latkit's own JSON: its runs come back as they were written (summaries are derived again),
/// after the same checks every other input gets.
fn read_latkit_json(path: &str, reader: impl BufRead) -> Result<Input> {
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: String,
    }
    #[derive(serde::Deserialize)]
    struct Document {
        runs: Vec<Run>,
    }
    let value = read_json(path, reader)?;
    let not_latkit =
        |e: serde_json::Error| Error::Input(format!("{path}: not a latkit JSON result: {e}"));
    let schema = Schema::deserialize(&value).map_err(not_latkit)?.schema;
    if schema != JSON_SCHEMA {
        return Err(Error::Input(format!(
            "{path}: schema `{schema}` is not `{JSON_SCHEMA}`, which this latkit reads{}",
            if schema == "latkit.result.v1" {
                " (v1 files stored per-second series as timer figures: parse the original tool output again)"
            } else {
                ""
            }
        )));
    }
    let doc = Document::deserialize(value).map_err(not_latkit)?;
    for run in &doc.runs {
        validate::run(run).map_err(|e| Error::Input(format!("{path}: {e}")))?;
    }
    Ok(Input {
        runs: doc.runs,
        notes: Vec::new(),
        malformed: 0,
    })
}

/// Parses a Go benchmark stream from `reader`.
fn read_go_stream(mut reader: impl BufRead, name: &str) -> Result<go::GoChunk> {
    let mut parser = go::GoParser::new(name);
    for_each_line(&mut reader, |line| {
        parser.feed(line);
    })
    .map_err(|e| Error::io(name, e))?;
    Ok(parser.into_chunk())
}

/// Files at least this large are parsed in parallel pieces.
const PARALLEL_THRESHOLD: u64 = 16 << 20;

/// Parses a file; a large regular file is parsed as one piece per core, each starting at a
/// line boundary, and the pieces are joined in order.
fn read_go_file(path: &str) -> Result<go::GoChunk> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8) as u64;
    if metadata.is_file() && metadata.len() >= PARALLEL_THRESHOLD && cores >= 2 {
        parse_pieces(path, file, metadata.len(), cores)
    } else {
        read_go_stream(BufReader::with_capacity(READ_BUFFER, file), path)
    }
}

fn parse_pieces(path: &str, mut file: File, len: u64, pieces: u64) -> Result<go::GoChunk> {
    let io_err = |e| Error::io(path, e);
    let mut bounds = vec![0u64];
    for i in 1..pieces {
        let at = (len * i / pieces).max(*bounds.last().unwrap_or(&0));
        file.seek(SeekFrom::Start(at)).map_err(io_err)?;
        let mut rest_of_line = Vec::new();
        let skipped = BufReader::new(&mut file)
            .read_until(b'\n', &mut rest_of_line)
            .map_err(io_err)?;
        bounds.push((at + skipped as u64).min(len));
    }
    bounds.push(len);
    let chunks: Vec<Result<go::GoChunk>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0], w[1]);
                scope.spawn(move || {
                    let mut file = File::open(path).map_err(io_err)?;
                    file.seek(SeekFrom::Start(start)).map_err(io_err)?;
                    read_go_stream(
                        BufReader::with_capacity(READ_BUFFER, file.take(end - start)),
                        path,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Input(format!("{path}: parser thread failed"))))
            })
            .collect()
    });
    let mut chunks = chunks.into_iter();
    let mut joined = chunks
        .next()
        .unwrap_or_else(|| read_go_stream(io::empty(), path))?;
    for chunk in chunks {
        joined.append(chunk?);
    }
    Ok(joined)
}

fn go_input(chunk: go::GoChunk, name: &str, source: Source) -> Result<Input> {
    let out = chunk.finish(name);
    if out.builder.is_empty() {
        let skipped = match out.malformed {
            0 => String::new(),
            n => format!(" ({n} malformed result lines, first: {})", out.notes[0]),
        };
        return Err(Error::Input(format!(
            "{name}: no benchmark results found{skipped}. A Go benchmark result line looks like:\n  {}",
            go::EXAMPLE_LINE
        )));
    }
    let run = new_run(
        source,
        Environment::from_config(&out.config),
        out.config,
        out.builder,
    );
    Ok(Input {
        runs: vec![run],
        notes: out.notes,
        malformed: out.malformed,
    })
}

/// The longest line a reader reads; a longer one is skipped without being held in memory.
pub const MAX_LINE: usize = 1 << 20;
pub const LINE_TOO_LONG: &str = "line longer than 1 MiB skipped";

/// Calls `f` with each line, without its line ending, or with `None` for a line longer than
/// [`MAX_LINE`]. Lines are handed out straight from the reader's buffer; only a line that
/// straddles two reads is copied.
pub fn for_each_line(
    reader: &mut impl BufRead,
    mut f: impl FnMut(Option<&[u8]>),
) -> io::Result<()> {
    fn strip(line: &[u8]) -> &[u8] {
        line.strip_suffix(b"\r").unwrap_or(line)
    }
    let mut straddling: Vec<u8> = Vec::new();
    let mut overlong = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if overlong {
                f(None);
            } else if !straddling.is_empty() {
                f(Some(strip(&straddling)));
            }
            return Ok(());
        }
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', chunk) {
            let piece = &chunk[start..newline];
            if overlong || straddling.len() + piece.len() > MAX_LINE {
                f(None);
            } else if straddling.is_empty() {
                f(Some(strip(piece)));
            } else {
                straddling.extend_from_slice(piece);
                f(Some(strip(&straddling)));
            }
            straddling.clear();
            overlong = false;
            start = newline + 1;
        }
        let rest = &chunk[start..];
        if overlong || straddling.len() + rest.len() > MAX_LINE {
            overlong = true;
            straddling = Vec::new();
        } else {
            straddling.extend_from_slice(rest);
        }
        let consumed = chunk.len();
        reader.consume(consumed);
    }
}

/// Folds several runs into one: benchmarks with the same name and package pool their
/// repetitions, distributions, histograms and timer summaries, in input order. What cannot be
/// pooled is left out and named in the notes.
pub fn merge(runs: Vec<Run>) -> Option<(Run, Vec<Note>)> {
    let mut runs = runs.into_iter();
    let mut merged = runs.next()?;
    let mut notes = Vec::new();
    let mut builder = RunBuilder::from_benchmarks(std::mem::take(&mut merged.benchmarks));
    for run in runs {
        if let (Some(a), Some(b)) = (&mut merged.source.path, &run.source.path) {
            a.push_str(" + ");
            a.push_str(b);
        }
        merged.timer = match (merged.timer.take(), run.timer) {
            (Some(a), Some(b)) if a.period_ns == b.period_ns => Some(merge_timer(a, b)),
            (Some(a), Some(b)) => {
                notes.push(Note::warning(format!(
                    "--merge: a timer run with a {} µs period cannot join one with {} µs; its overall figures were left out",
                    b.period_ns / 1000,
                    a.period_ns / 1000
                )));
                Some(a)
            }
            (a, b) => a.or(b),
        };
        let refused = builder.append(run.benchmarks, None);
        notes.extend(
            refused
                .into_iter()
                .map(|m| Note::warning(format!("--merge: {m}"))),
        );
    }
    merged.benchmarks = builder.finish();
    Some((merged, notes))
}

/// Two timer tests of the same period as one: extremes of the extremes, the duration-weighted
/// mean, and the sums of durations, overruns and mode switches.
fn merge_timer(a: TimerInfo, b: TimerInfo) -> TimerInfo {
    let overall = match (a.overall.clone(), b.overall.clone()) {
        (Some(x), Some(y)) => {
            let (wx, wy) = (a.duration_s.max(1) as f64, b.duration_s.max(1) as f64);
            Some(TimerOverall {
                min_ns: x.min_ns.min(y.min_ns),
                avg_ns: ((x.avg_ns as f64 * wx + y.avg_ns as f64 * wy) / (wx + wy)) as i64,
                max_ns: x.max_ns.max(y.max_ns),
                overruns: x.overruns.saturating_add(y.overruns),
                mode_switches: x.mode_switches.saturating_add(y.mode_switches),
            })
        }
        (x, y) => x.or(y),
    };
    TimerInfo {
        duration_s: a.duration_s.saturating_add(b.duration_s),
        requested_s: a.requested_s.saturating_add(b.requested_s),
        overall,
        break_hit: a.break_hit.clone().or(b.break_hit),
        ..a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_straddling_reads_are_joined() {
        let text = "first line\r\nsecond, longer line\nthird";
        let mut reader = BufReader::with_capacity(4, text.as_bytes());
        let mut seen = Vec::new();
        for_each_line(&mut reader, |l| {
            seen.push(String::from_utf8(l.unwrap().to_vec()).unwrap())
        })
        .unwrap();
        assert_eq!(seen, ["first line", "second, longer line", "third"]);
    }

    #[test]
    fn lines_without_endings() {
        let mut seen = Vec::new();
        for_each_line(&mut "a\r\nb\n\nc".as_bytes(), |l| {
            seen.push(String::from_utf8(l.unwrap().to_vec()).unwrap())
        })
        .unwrap();
        assert_eq!(seen, ["a", "b", "", "c"]);
    }

    #[test]
    fn an_overlong_line_is_skipped_without_holding_it() {
        let long = "x".repeat(MAX_LINE + 10);
        for text in [
            format!("a\n{long}\nb"),
            format!("a\n{long}\nb\n"),
            format!("a\n{long}"),
        ] {
            let mut reader = BufReader::with_capacity(4096, text.as_bytes());
            let mut seen = Vec::new();
            for_each_line(&mut reader, |l| seen.push(l.map(|l| l.len()))).unwrap();
            let expected: &[Option<usize>] = if text.ends_with('x') {
                &[Some(1), None]
            } else {
                &[Some(1), None, Some(1)]
            };
            assert_eq!(seen, expected);
        }
    }
}
