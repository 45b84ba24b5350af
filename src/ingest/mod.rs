//! Foreign formats into the model: one file per format, plus detection and merging.

mod builder;
pub mod go;

use crate::error::{Error, Result};
use crate::model::{Environment, Note, Run, Source};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::time::{SystemTime, UNIX_EPOCH};

pub use builder::RunBuilder;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Detect the format from the first 64 KiB.
    Auto,
    /// Go benchmark format (`go test -bench` output).
    Go,
}

/// A run read from one input, with what the reader must be told about it.
pub struct Input {
    pub run: Run,
    pub notes: Vec<Note>,
    /// Lines that looked like results but could not be parsed.
    pub malformed: u64,
}

const READ_BUFFER: usize = 256 * 1024;

/// Reads one file, or standard input for `-`.
pub fn read_path(path: &str, format: InputFormat) -> Result<Input> {
    let (reader, kind): (Box<dyn Read>, &str) = if path == "-" {
        (Box::new(io::stdin().lock()), "stdin")
    } else {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        (Box::new(file), "file")
    };
    let reader = BufReader::with_capacity(READ_BUFFER, reader);
    let source = Source {
        kind: kind.to_string(),
        format: "go".to_string(),
        path: (path != "-").then(|| path.to_string()),
        command: Vec::new(),
    };
    // Go is the only format so far, so detection has nothing to choose between yet.
    match format {
        InputFormat::Go | InputFormat::Auto => read_go(reader, path, source),
    }
}

fn read_go(mut reader: impl BufRead, name: &str, source: Source) -> Result<Input> {
    let mut parser = go::GoParser::new(name);
    for_each_line(&mut reader, |line| {
        parser.feed(line);
    })
    .map_err(|e| Error::io(name, e))?;
    let out = parser.finish();
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
        run,
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
    for run in runs {
        if let (Some(a), Some(b)) = (&mut merged.source.path, &run.source.path) {
            a.push_str(" + ");
            a.push_str(b);
        }
        for bench in run.benchmarks {
            let existing = merged
                .benchmarks
                .iter_mut()
                .find(|b| b.name.full_name == bench.name.full_name && b.package == bench.package);
            match existing {
                None => merged.benchmarks.push(bench),
                Some(target) => {
                    target.iterations.extend(bench.iterations);
                    for metric in bench.metrics {
                        match target.metrics.iter_mut().find(|m| m.name == metric.name) {
                            Some(m) => m.values.extend(metric.values),
                            None => target.metrics.push(metric),
                        }
                    }
                }
            }
        }
    }
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
        for_each_line(&mut reader, |l| seen.push(String::from_utf8(l.to_vec()).unwrap())).unwrap();
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
