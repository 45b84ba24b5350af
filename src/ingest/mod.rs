//! Foreign formats into the model: one file per format, plus detection and merging.

pub mod bench;
mod criterion;
pub mod cyclictest;
pub mod format;
pub mod gbench;
pub mod go;
mod hdrhistogram;
mod hyperfine;
pub(crate) mod json_split;
pub(crate) mod json_stream;
mod latkit_json;
mod libtest;
mod osnoise_top;
mod problems;
mod pytest_benchmark;
mod rtla;
pub mod timer_common;
pub mod timerlat_trace;
mod trackers;
mod validate;
pub mod xenomai;

use crate::error::{Error, Result};
use crate::model::{ConfigEntry, Environment, Note, Run, Source, TimerInfo, TimerOverall};
use json_stream::read_document as read_json_document;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

pub use crate::model::{RunBuilder, new_run};
pub use format::{InputFormat, Named};

/// What a reader collected from one input, before it becomes a run.
pub struct Parsed {
    pub builder: RunBuilder,
    /// The harness's configuration lines (Go's `goos:`, `pkg:`), first value of each key.
    pub config: Vec<ConfigEntry>,
    /// A timer test's setup and overall figures (Xenomai, cyclictest).
    pub timer: Option<TimerInfo>,
    pub notes: Vec<Note>,
    /// Lines that looked like results but could not be read.
    pub malformed: u64,
}

impl Parsed {
    /// What a reader of results alone (no configuration, no timer) collected: the skipped
    /// lines' notes, then the reader's own `notes`.
    pub(crate) fn of_results(
        builder: RunBuilder,
        skipped: problems::Skipped,
        path: &str,
        notes: Vec<Note>,
    ) -> Self {
        let malformed = skipped.count;
        let mut all = skipped.into_notes(path);
        all.extend(notes);
        Parsed {
            builder,
            config: Vec::new(),
            timer: None,
            notes: all,
            malformed,
        }
    }

    /// The run these results make, from `source`, on the machine `environment` describes.
    pub fn into_input(self, source: Source, environment: Environment) -> Input {
        let mut run = new_run(source, environment, self.config, self.builder);
        run.timer = self.timer;
        Input {
            runs: vec![run],
            notes: self.notes,
            malformed: self.malformed,
        }
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

/// Small enough that what a read copies in is still in the core's cache (512 KiB of L2 here)
/// when the parser reads it: with 256 KiB buffers the kernel's copy took 5-7 % of `compare`
/// on two 1M-line Go files, with 64 KiB 1.5-2 %.
const READ_BUFFER: usize = 64 * 1024;
/// How much of the input format detection looks at (less only at the end of the input).
const DETECT_BYTES: u64 = 64 * 1024;

/// Reads one file (or a directory of them), in `format` or the one detected.
pub fn read_path(path: &str, format: Option<&'static dyn InputFormat>) -> Result<Input> {
    read_path_with(format::BUILTIN, path, format)
}

/// As [`read_path`], detecting among the formats of `registry`.
pub fn read_path_with(
    registry: &[&'static dyn InputFormat],
    path: &str,
    format: Option<&'static dyn InputFormat>,
) -> Result<Input> {
    let io_err = |e| Error::io(path, e);
    if std::fs::metadata(path).map_err(io_err)?.is_dir() {
        return format::read_directory(registry, path, format);
    }
    let mut file = File::open(path).map_err(io_err)?;
    read_stream_with(registry, path, &mut file, format)
}

/// Reads a stream (standard input is named `-`), in `format` or the one detected.
pub fn read_stream(
    name: &str,
    raw: &mut dyn Read,
    format: Option<&'static dyn InputFormat>,
) -> Result<Input> {
    read_stream_with(format::BUILTIN, name, raw, format)
}

fn read_stream_with(
    registry: &[&'static dyn InputFormat],
    path: &str,
    raw: &mut dyn Read,
    format: Option<&'static dyn InputFormat>,
) -> Result<Input> {
    let io_err = |e| Error::io(path, e);
    let mut reader = BufReader::with_capacity(READ_BUFFER, raw);
    // Detection reads until it has enough bytes, however slowly they arrive.
    let mut head = Vec::new();
    (&mut reader)
        .take(DETECT_BYTES)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    let format = match format {
        Some(f) => f,
        None => {
            let text = String::from_utf8_lossy(&head);
            registry
                .iter()
                .copied()
                .find(|f| f.detect(&text))
                .ok_or_else(|| unrecognised(registry, path, &text))?
        }
    };
    let mut reader = BufReader::with_capacity(READ_BUFFER, io::Cursor::new(head).chain(reader));
    format.read(&Named { path }, &mut reader)
}

fn unrecognised(registry: &[&'static dyn InputFormat], path: &str, head: &str) -> Error {
    let first = head
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(60).collect::<String>());
    let Some(line) = first else {
        return Error::Input(format!(
            "{path}: empty: no results to read (`latkit parse --help` lists the formats latkit \
             reads under --input-format)"
        ));
    };
    Error::Input(format!(
        "{path}: not a format latkit reads (its first line is `{line}`). latkit reads {}",
        format::described(registry)
    ))
}

/// Feeds each line as text (invalid UTF-8 replaced), or `None` for an over-long line.
pub(crate) fn for_each_text_line(
    reader: &mut (impl BufRead + ?Sized),
    path: &str,
    mut f: impl FnMut(Option<&str>),
) -> Result<()> {
    for_each_line(reader, |line| match line {
        Some(bytes) => f(Some(&String::from_utf8_lossy(bytes))),
        None => f(None),
    })
    .map_err(|e| Error::io(path, e))
}

/// Calls `f` with each line's number and text; a line too long to read is noted in `skipped`
/// instead.
pub(crate) fn for_each_numbered_line(
    reader: &mut (impl BufRead + ?Sized),
    path: &str,
    skipped: &mut problems::Skipped,
    mut f: impl FnMut(&mut problems::Skipped, u64, &str),
) -> Result<()> {
    let mut number = 0u64;
    for_each_text_line(reader, path, |line| {
        number += 1;
        match line {
            Some(line) => f(skipped, number, line),
            None => skipped.line(path, number, LINE_TOO_LONG),
        }
    })
}

/// Any JSON value, streamed (see [`json_stream`]).
pub(crate) fn read_json(path: &str, reader: &mut dyn BufRead) -> Result<serde_json::Value> {
    read_json_document(path, reader, "a JSON document")
}

/// The longest line a reader reads; a longer one is skipped without being held in memory.
pub const MAX_LINE: usize = 1 << 20;
pub const LINE_TOO_LONG: &str = "line longer than 1 MiB skipped";

/// Calls `f` with each line, without its line ending, or with `None` for a line longer than
/// [`MAX_LINE`]. Lines are handed out straight from the reader's buffer; only a line that
/// straddles two reads is copied.
pub fn for_each_line(
    reader: &mut (impl BufRead + ?Sized),
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
