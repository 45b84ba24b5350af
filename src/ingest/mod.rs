//! Foreign formats into the model: one file per format, plus detection and merging.

pub mod bench;
mod builder;
pub mod cyclictest;
pub mod go;
pub mod timer_common;
pub mod xenomai;

use crate::error::{Error, Result};
use crate::model::{Environment, Note, Run, Source};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::time::{SystemTime, UNIX_EPOCH};

pub use builder::RunBuilder;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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

/// Picks the format from the start of the input.
fn detect(head: &[u8]) -> InputFormat {
    let head = String::from_utf8_lossy(head);
    if head.trim_start().starts_with('{') {
        return if head.contains("\"latkit.result.") {
            InputFormat::Latkit
        } else {
            InputFormat::CyclictestJson
        };
    }
    let any = |f: &dyn Fn(&str) -> bool| head.lines().any(|l| f(l.trim_end()));
    if any(&|l| {
        l.starts_with("== Sampling period") || l.starts_with("RTD|") || l.starts_with("RTS|")
    }) {
        InputFormat::Xenomai
    } else if any(&|l| l.trim_start().starts_with("BENCH ")) {
        InputFormat::Bench
    } else if any(&|l| {
        l == "# Histogram"
            || l.starts_with("# /dev/cpu_dma_latency")
            || (l.contains("T:") && l.contains(" P:") && l.contains("Max:"))
    }) {
        InputFormat::Cyclictest
    } else {
        InputFormat::Go
    }
}

/// The runs read from one input (one, except for latkit's own JSON), with what the reader
/// must be told about them.
pub struct Input {
    pub runs: Vec<Run>,
    pub notes: Vec<Note>,
    /// Lines that looked like results but could not be parsed.
    pub malformed: u64,
}

const READ_BUFFER: usize = 256 * 1024;

/// Reads one file, or standard input for `-`.
pub fn read_path(path: &str, format: InputFormat) -> Result<Input> {
    let io_err = |e| Error::io(path, e);
    let mut reader: Box<dyn BufRead> = if path == "-" {
        Box::new(BufReader::with_capacity(READ_BUFFER, io::stdin().lock()))
    } else {
        Box::new(BufReader::with_capacity(
            READ_BUFFER,
            File::open(path).map_err(io_err)?,
        ))
    };
    let format = match format {
        InputFormat::Auto => detect(reader.fill_buf().map_err(io_err)?),
        other => other,
    };
    let source = Source {
        kind: if path == "-" { "stdin" } else { "file" }.to_string(),
        format: format.name().to_string(),
        path: (path != "-").then(|| path.to_string()),
        command: Vec::new(),
    };
    if matches!(format, InputFormat::Go | InputFormat::Auto) {
        let chunk = if path == "-" {
            read_go_stream(reader, path)?
        } else {
            read_go_file(path)?
        };
        return go_input(chunk, path, source);
    }
    // The timer tools' outputs are small: read them whole.
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(io_err)?;
    let text = String::from_utf8_lossy(&bytes);
    let timer_common::TimerOutput {
        builder,
        timer,
        notes,
        malformed,
    } = match format {
        InputFormat::Xenomai => xenomai::parse(path, text.lines()),
        InputFormat::Cyclictest => cyclictest::parse_text(path, text.lines()),
        InputFormat::CyclictestJson => cyclictest::parse_json(path, &text)?,
        InputFormat::Latkit => return read_latkit_json(path, &text),
        _ => return bench_input(path, &text, source),
    };
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

fn bench_input(path: &str, text: &str, source: Source) -> Result<Input> {
    let mut parser = bench::BenchParser::new(path);
    text.lines().for_each(|l| parser.feed(l));
    let out = parser.finish();
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

/// latkit's own JSON: its runs come back as they were written (summaries are derived again).
fn read_latkit_json(path: &str, text: &str) -> Result<Input> {
    #[derive(serde::Deserialize)]
    struct Document {
        schema: String,
        runs: Vec<Run>,
    }
    let doc: Document = serde_json::from_str(text).map_err(|e| {
        Error::Input(format!(
            "{path}:{}: not a latkit JSON result: {e}",
            e.line()
        ))
    })?;
    if doc.schema != crate::report::JSON_SCHEMA {
        return Err(Error::Input(format!(
            "{path}: schema `{}` is not `{}`, which this latkit reads",
            doc.schema,
            crate::report::JSON_SCHEMA
        )));
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

/// Assembles a run from what a reader collected.
pub fn new_run(
    source: Source,
    environment: Environment,
    config: Vec<crate::model::ConfigEntry>,
    builder: RunBuilder,
) -> Run {
    Run {
        id: new_run_id(),
        started: None,
        ended: None,
        latkit_version: env!("CARGO_PKG_VERSION").to_string(),
        source,
        environment,
        config,
        benchmarks: builder.finish(),
        timer: None,
    }
}

/// A run id unique enough to tell runs apart in a history: time and process.
pub fn new_run_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{:x}-{:08x}",
        now.as_secs(),
        now.subsec_nanos() ^ std::process::id()
    )
}

/// Calls `f` with each line, without its line ending. Lines are handed out straight from the
/// reader's buffer; only a line that straddles two reads is copied.
pub fn for_each_line(reader: &mut impl BufRead, mut f: impl FnMut(&[u8])) -> io::Result<()> {
    fn strip(line: &[u8]) -> &[u8] {
        line.strip_suffix(b"\r").unwrap_or(line)
    }
    let mut straddling: Vec<u8> = Vec::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !straddling.is_empty() {
                f(strip(&straddling));
            }
            return Ok(());
        }
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', chunk) {
            if straddling.is_empty() {
                f(strip(&chunk[start..newline]));
            } else {
                straddling.extend_from_slice(&chunk[start..newline]);
                f(strip(&straddling));
                straddling.clear();
            }
            start = newline + 1;
        }
        straddling.extend_from_slice(&chunk[start..]);
        let consumed = chunk.len();
        reader.consume(consumed);
    }
}

/// Folds several runs into one: benchmarks with the same name and package pool their
/// repetitions, in input order.
pub fn merge(runs: Vec<Run>) -> Option<Run> {
    let mut runs = runs.into_iter();
    let mut merged = runs.next()?;
    let mut builder = RunBuilder::from_benchmarks(std::mem::take(&mut merged.benchmarks));
    for run in runs {
        if let (Some(a), Some(b)) = (&mut merged.source.path, &run.source.path) {
            a.push_str(" + ");
            a.push_str(b);
        }
        builder.append(run.benchmarks, None);
    }
    merged.benchmarks = builder.finish();
    Some(merged)
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
            seen.push(String::from_utf8(l.to_vec()).unwrap())
        })
        .unwrap();
        assert_eq!(seen, ["first line", "second, longer line", "third"]);
    }

    #[test]
    fn lines_without_endings() {
        let mut seen = Vec::new();
        for_each_line(&mut "a\r\nb\n\nc".as_bytes(), |l| {
            seen.push(String::from_utf8(l.to_vec()).unwrap())
        })
        .unwrap();
        assert_eq!(seen, ["a", "b", "", "c"]);
    }
}
