//! The Go benchmark format (golang proposal 14313, extended with `Unit` lines by x/perf).
//!
//! The parser is fed one line at a time so that it serves both files (streamed, never read
//! whole) and the live output of `go test`.

use super::{Input, InputFormat, Named, Parsed, READ_BUFFER, for_each_line};
use crate::error::{Error, Result};
use crate::model::{
    Assume, BenchName, Better, ConfigEntry, Dimension, Environment, Note, RunBuilder, Unit,
};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

/// What a result line looks like, for error messages.
pub const EXAMPLE_LINE: &str = "BenchmarkEncode-8   1000   1234 ns/op   56 B/op   2 allocs/op";

/// At most this many malformed lines are reported one by one; the rest are counted.
const MAX_LINE_NOTES: usize = 20;

pub struct GoParser {
    file: String,
    chunk: GoChunk,
    fields: Vec<(usize, usize)>,
    values: Vec<f64>,
}

/// What a parser read from one stream, or from one piece of a file read in parallel pieces.
pub struct GoChunk {
    builder: RunBuilder,
    config: Vec<ConfigEntry>,
    lines: u64,
    /// The `pkg:` in force at the end; results before a piece's first `pkg:` line belong to the
    /// package in force at the end of the piece before it.
    package: Option<String>,
    saw_package: bool,
    /// Configuration lines whose value now differs from the first value of their key.
    changed: Vec<ConfigEntry>,
    /// Whether any key's value changed in this piece, or differs from the piece before: then a
    /// file read in parallel pieces is read again in one piece, in order.
    config_changed: bool,
    better: Vec<(String, Better)>,
    assume: Vec<(String, Assume)>,
    notes: Vec<Note>,
    malformed_notes: Vec<Note>,
    malformed: u64,
}

/// What one line turned out to be; `go` uses it to show progress.
#[derive(Debug, PartialEq)]
pub enum LineKind<'a> {
    Result { name: &'a str },
    Malformed,
    Other,
}

impl GoParser {
    pub fn new(file: &str) -> Self {
        GoParser {
            file: file.to_string(),
            chunk: GoChunk {
                builder: RunBuilder::default(),
                config: Vec::new(),
                lines: 0,
                package: None,
                saw_package: false,
                changed: Vec::new(),
                config_changed: false,
                better: Vec::new(),
                assume: Vec::new(),
                notes: Vec::new(),
                malformed_notes: Vec::new(),
                malformed: 0,
            },
            fields: Vec::with_capacity(16),
            values: Vec::with_capacity(8),
        }
    }

    /// Consumes one line (without its newline); `None` stands for a line too long to read.
    pub fn feed<'a>(&mut self, line: Option<&'a [u8]>) -> LineKind<'a> {
        self.chunk.lines += 1;
        let Some(line) = line else {
            self.malformed_line(super::LINE_TOO_LONG.into());
            return LineKind::Malformed;
        };
        let line = trim_end(line);
        if let Some(rest) = line.strip_prefix(b"Benchmark") {
            // The name continues with anything but a lower-case letter ("Benchmarking" is prose).
            if rest.first().is_none_or(|c| !c.is_ascii_lowercase()) {
                return match self.parse_result(line) {
                    Ok(Some(name)) => LineKind::Result { name },
                    Ok(None) => LineKind::Other,
                    Err(msg) => {
                        self.malformed_line(msg);
                        LineKind::Malformed
                    }
                };
            }
        }
        if let Some(rest) = line.strip_prefix(b"Unit ") {
            self.parse_unit_line(rest);
        } else if line.starts_with(b"--- FAIL") || line.starts_with(b"FAIL") {
            let text = String::from_utf8_lossy(line).trim().to_string();
            self.chunk.notes.push(Note::warning_at(
                &self.file,
                self.chunk.lines,
                format!("go test reported: {text}"),
            ));
        } else if let Some((key, value)) = parse_config_line(line) {
            self.set_config(key, value);
        }
        LineKind::Other
    }

    pub fn finish(self) -> Parsed {
        let file = self.file.clone();
        self.into_chunk().finish(&file)
    }

    /// What was read so far, to be joined with the pieces that follow it.
    pub fn into_chunk(self) -> GoChunk {
        self.chunk
    }

    fn malformed_line(&mut self, msg: String) {
        let chunk = &mut self.chunk;
        chunk.malformed += 1;
        if chunk.malformed_notes.len() < MAX_LINE_NOTES {
            chunk.malformed_notes.push(Note::warning_at(
                &self.file,
                chunk.lines,
                format!("{msg}; line skipped (expected e.g. `{EXAMPLE_LINE}`)"),
            ));
        }
    }

    /// Parses a result line. `Ok(None)` is a bare name, which `go test` prints before a
    /// benchmark's log output.
    fn parse_result<'a>(&mut self, line: &'a [u8]) -> std::result::Result<Option<&'a str>, String> {
        // Checked a vector at a time: most of a result line is read only to be checked here.
        let line =
            simdutf8::basic::from_utf8(line).map_err(|_| "line is not valid UTF-8".to_string())?;
        split_fields(line.as_bytes(), &mut self.fields);
        let fields = &self.fields;
        let field = |i: usize| &line[fields[i].0..fields[i].1];
        // Numbers are read as bytes: a text slice checks both ends for a character boundary.
        let number = |i: usize| &line.as_bytes()[fields[i].0..fields[i].1];
        match fields.len() {
            1 => return Ok(None),
            2 => return Err("missing measurements after the iteration count".into()),
            n if n % 2 == 1 => return Err("value without a unit".into()),
            _ => {}
        }
        let iterations = parse_u64(number(1))
            .ok_or_else(|| format!("iteration count `{}` is not a whole number", field(1)))?;
        // Parse every value before recording any, so a bad line leaves no partial result.
        self.values.clear();
        for pair in (2..fields.len()).step_by(2) {
            let value = parse_f64(number(pair))
                .ok_or_else(|| format!("`{}` is not a number, or not a finite one", field(pair)))?;
            let unit = field(pair + 1);
            if !crate::model::fits_base_unit(value, unit) {
                return Err(format!(
                    "`{} {unit}` is too large to store in base units",
                    field(pair)
                ));
            }
            if value < 0.0 && Unit::parse(unit).unit.dimension == Dimension::Time {
                return Err(format!(
                    "`{value} {unit}`: a benchmark's time cannot be negative"
                ));
            }
            self.values.push(value);
        }
        let builder = &mut self.chunk.builder;
        let bench = builder.benchmark_in(
            field(0),
            self.chunk.package.as_deref(),
            &self.chunk.changed,
            BenchName::parse_go,
        );
        builder.record_iterations(bench, iterations);
        for (i, &value) in self.values.iter().enumerate() {
            let unit = field(3 + 2 * i);
            builder.record(bench, unit, unit, value);
        }
        Ok(Some(field(0)))
    }

    /// `Unit ns/op better=lower assume=exact`: metadata about a unit.
    fn parse_unit_line(&mut self, rest: &[u8]) {
        let text = String::from_utf8_lossy(rest);
        let mut parts = text.split_whitespace();
        let Some(unit) = parts.next() else {
            self.malformed_line("`Unit` line without a unit".into());
            return;
        };
        for kv in parts {
            match kv.split_once('=') {
                Some(("better", "higher")) => {
                    self.chunk.better.push((unit.to_string(), Better::Higher))
                }
                Some(("better", "lower")) => {
                    self.chunk.better.push((unit.to_string(), Better::Lower))
                }
                Some(("better", other)) => self.malformed_line(format!(
                    "`better={other}` for unit {unit}: expected `higher` or `lower`"
                )),
                Some(("assume", "exact")) => {
                    self.chunk.assume.push((unit.to_string(), Assume::Exact))
                }
                Some(("assume", "nothing")) => {
                    self.chunk.assume.push((unit.to_string(), Assume::Nothing))
                }
                Some(("assume", other)) => self.malformed_line(format!(
                    "`assume={other}` for unit {unit}: expected `exact` or `nothing`"
                )),
                Some(_) => {} // other metadata does not change the numbers
                None => self.malformed_line(format!("`{kv}` in Unit line: expected key=value")),
            }
        }
    }

    fn set_config(&mut self, key: &str, value: &str) {
        let chunk = &mut self.chunk;
        if key == "pkg" {
            chunk.package = (!value.is_empty()).then(|| value.to_string());
            chunk.saw_package = true;
            add_config(&mut chunk.config, key, value);
            return;
        }
        add_config(&mut chunk.config, key, value);
        // A value other than the key's first makes later results a configuration of their own.
        let first = chunk.config.iter().find(|c| c.key == key).map(|c| &c.value);
        chunk.changed.retain(|c| c.key != key);
        if first.is_some_and(|f| f != value) {
            chunk.changed.push(ConfigEntry {
                key: key.to_string(),
                value: value.to_string(),
            });
            chunk.changed.sort_by(|a, b| a.key.cmp(&b.key));
            chunk.config_changed = true;
        }
    }
}

/// Keeps the first value of each key.
fn add_config(config: &mut Vec<ConfigEntry>, key: &str, value: &str) {
    if !config.iter().any(|c| c.key == key) {
        config.push(ConfigEntry {
            key: key.to_string(),
            value: value.to_string(),
        });
    }
}

impl GoChunk {
    /// Appends the piece of the stream that follows this one.
    pub fn append(&mut self, next: GoChunk) {
        let offset = self.lines;
        let shift = |mut note: Note| {
            note.line = note.line.map(|l| l + offset);
            note
        };
        self.notes.extend(next.notes.into_iter().map(shift));
        let room = MAX_LINE_NOTES.saturating_sub(self.malformed_notes.len());
        self.malformed_notes
            .extend(next.malformed_notes.into_iter().take(room).map(shift));
        self.malformed += next.malformed;
        self.lines += next.lines;
        for entry in &next.config {
            let differs = self
                .config
                .iter()
                .any(|c| c.key == entry.key && c.value != entry.value);
            self.config_changed |= differs;
            add_config(&mut self.config, &entry.key, &entry.value);
        }
        self.config_changed |= next.config_changed;
        self.better.extend(next.better);
        self.assume.extend(next.assume);
        let refused = self
            .builder
            .append(next.builder.finish(), self.package.as_deref());
        self.notes.extend(refused.into_iter().map(Note::warning));
        if next.saw_package {
            self.package = next.package;
            self.saw_package = true;
        }
    }

    pub fn finish(self, file: &str) -> Parsed {
        let mut builder = self.builder;
        for (unit, better) in &self.better {
            builder.set_better(unit, *better);
        }
        for (unit, assume) in &self.assume {
            builder.set_assume(unit, *assume);
        }
        let mut notes = self.notes;
        notes.extend(self.malformed_notes);
        notes.sort_by_key(|n| n.line);
        if self.malformed > MAX_LINE_NOTES as u64 {
            notes.push(Note::warning(format!(
                "{file}: {} malformed benchmark lines skipped in all ({MAX_LINE_NOTES} listed)",
                self.malformed
            )));
        }
        Parsed {
            builder,
            config: self.config,
            timer: None,
            notes,
            malformed: self.malformed,
        }
    }
}

/// `key: value` where the key starts lower-case and has no spaces or upper-case letters.
fn parse_config_line(line: &[u8]) -> Option<(&str, &str)> {
    let text = std::str::from_utf8(line).ok()?;
    let (key, value) = text.split_once(':')?;
    let first = key.chars().next()?;
    if !first.is_lowercase() || key.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
        return None;
    }
    if !value.is_empty() && !value.starts_with([' ', '\t']) {
        return None;
    }
    Some((key, value.trim()))
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &line[..end]
}

/// Splits on ASCII whitespace into (start, end) spans, reusing `out`. The line is looked at
/// 64 bytes at a time: one bit per byte says whether it is blank (a loop the compiler turns
/// into vector compares), and each field starts and ends where that bit changes.
fn split_fields(line: &[u8], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let (mut start, mut in_field) = (0, false);
    for (k, block) in line.chunks(64).enumerate() {
        let fields = match <&[u8; 64]>::try_from(block) {
            Ok(block) => !blank_bits(block),
            // The last, short block, padded with blanks.
            Err(_) => {
                let mut padded = [b' '; 64];
                padded[..block.len()].copy_from_slice(block);
                !blank_bits(&padded)
            }
        };
        let mut changes = fields ^ (fields << 1 | u64::from(in_field));
        while changes != 0 {
            let at = k * 64 + changes.trailing_zeros() as usize;
            if in_field {
                out.push((start, at));
            } else {
                start = at;
            }
            in_field = !in_field;
            changes &= changes - 1;
        }
    }
    if in_field {
        out.push((start, line.len()));
    }
}

/// Bit `i` set where byte `i` is ASCII whitespace: sixteen bytes per compare in SSE2 (every
/// x86-64 CPU has it), one at a time elsewhere.
#[inline]
fn blank_bits(block: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut bits = 0u64;
        for (k, sixteen) in block.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `sixteen`.
            let mask = unsafe {
                let v = _mm_loadu_si128(sixteen.as_ptr().cast());
                let is = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
                let blank = _mm_or_si128(
                    _mm_or_si128(is(b' '), is(b'\t')),
                    _mm_or_si128(_mm_or_si128(is(b'\n'), is(b'\x0C')), is(b'\r')),
                );
                _mm_movemask_epi8(blank) as u16
            };
            bits |= u64::from(mask) << (k * 16);
        }
        bits
    }
    #[cfg(not(target_arch = "x86_64"))]
    block.iter().enumerate().fold(0, |bits, (i, b)| {
        bits | u64::from(b.is_ascii_whitespace()) << i
    })
}

fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 19 {
        return None;
    }
    field.iter().try_fold(0u64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u64::from(c - b'0'))
    })
}

/// Powers of ten that are exact in binary64.
const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a number. Go prints plain decimals (`12.5`), which take a fast path that is still
/// correctly rounded: with a mantissa below 2^53 and at most 22 decimals, both operands of the
/// one division are exact (Clinger's fast path). Anything else goes to the full parser.
fn parse_f64(field: &[u8]) -> Option<f64> {
    let (mut mantissa, mut digits, mut decimals, mut dot) = (0u64, 0u32, 0usize, false);
    for &c in field {
        match c {
            b'0'..=b'9' if digits < 19 => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                digits += 1;
                decimals += usize::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return parse_f64_slow(field),
        }
    }
    if digits == 0 || mantissa >= 1 << 53 || decimals >= EXACT_POW10.len() {
        return parse_f64_slow(field);
    }
    // A whole number (B/op, allocs/op) is its mantissa: no division by one.
    Some(match decimals {
        0 => mantissa as f64,
        _ => mantissa as f64 / EXACT_POW10[decimals],
    })
}

fn parse_f64_slow(field: &[u8]) -> Option<f64> {
    let v: f64 = std::str::from_utf8(field).ok()?.parse().ok()?;
    v.is_finite().then_some(v)
}

/// The Go benchmark format as an input format.
pub struct Go;

impl InputFormat for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn describe(&self) -> &'static str {
        "`go test -bench` output: `BenchmarkX-8  1000  1234 ns/op`"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().map(str::trim_end).any(|l| {
            ["Benchmark", "goos:", "pkg:", "ok  ", "--- FAIL", "FAIL"]
                .iter()
                .any(|p| l.starts_with(p))
                || l == "PASS"
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        // A regular file is read again from its start, in parallel pieces when it is large;
        // a pipe (stdin, `<(…)`) can be read only once, from the reader that has its start.
        let regular = path != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file());
        let chunk = if regular {
            read_go_file(path)?
        } else {
            read_go_stream(reader, path)?
        };
        go_input(chunk, path, input.source(self))
    }
}

/// Parses a Go benchmark stream from `reader`.
fn read_go_stream(mut reader: impl BufRead, name: &str) -> Result<GoChunk> {
    let mut parser = GoParser::new(name);
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
fn read_go_file(path: &str) -> Result<GoChunk> {
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

fn parse_pieces(path: &str, mut file: File, len: u64, pieces: u64) -> Result<GoChunk> {
    let io_err = |e| Error::io(path, e);
    let mut bounds = vec![0u64];
    for i in 1..pieces {
        let at = (len * i / pieces).max(*bounds.last().unwrap_or(&0));
        file.seek(SeekFrom::Start(at)).map_err(io_err)?;
        // Past the rest of the line the piece starts in, however long, without holding it.
        let skipped = BufReader::new(&mut file)
            .skip_until(b'\n')
            .map_err(io_err)?;
        bounds.push((at + skipped as u64).min(len));
    }
    bounds.push(len);
    let chunks: Vec<Result<GoChunk>> = std::thread::scope(|scope| {
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
    if joined.config_changed {
        // A piece cannot know the configuration in force where it starts: read it in order.
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        return read_go_stream(BufReader::with_capacity(READ_BUFFER, file), path);
    }
    Ok(joined)
}

fn go_input(chunk: GoChunk, name: &str, source: crate::model::Source) -> Result<Input> {
    let out = chunk.finish(name);
    if out.builder.is_empty() {
        let skipped = match out.malformed {
            0 => String::new(),
            n => format!(" ({n} malformed result lines, first: {})", out.notes[0]),
        };
        return Err(Error::Input(format!(
            "{name}: no benchmark results found{skipped}. A Go benchmark result line looks like:\n  {}",
            EXAMPLE_LINE
        )));
    }
    let environment = Environment::from_config(&out.config);
    Ok(out.into_input(source, environment))
}

#[cfg(test)]
mod tests;
