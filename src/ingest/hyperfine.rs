//! hyperfine's `--export-json`: one benchmark per command, every run's wall time kept as a
//! repetition, max RSS per run where hyperfine measured it, parameters as configuration.

use crate::error::{Error, Result};
use crate::ingest::json_split::{Kind, Layout, join_piece, part_refused, split_rows};
use crate::ingest::{Input, InputFormat, Named};
use crate::model::{BenchName, ConfigEntry, Environment, Note};
use crate::model::{RunBuilder, new_run, vocab};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::io::BufRead;

pub struct Hyperfine;

/// What a document is, in errors.
const EXPECTED: &str = "hyperfine JSON: {\"results\": [{\"command\", \"mean\", \"times\", ...}]}";

/// A result's per-run arrays (millions long for a long run) come in pieces, parsed on every
/// core as the document streams: its times, its exit codes, and its peak memory, at these
/// indices of `streamed`.
const LAYOUT: Layout = Layout {
    rows: "results",
    keep: &[],
    streamed: &["times", "exit_codes", "memory_usage_byte"],
    expected: EXPECTED,
};
const TIMES: usize = 0;
const EXIT_CODES: usize = 1;

/// A part of the document, parsed.
enum Parsed {
    Times(Vec<f64>),
    ExitCodes(Vec<Option<i32>>),
    Memory(Vec<f64>),
    /// A result, its per-run arrays empty: they came before it in pieces.
    Result(Box<Result_>),
}

#[derive(Deserialize)]
struct Result_ {
    command: String,
    mean: f64,
    user: Option<f64>,
    system: Option<f64>,
    #[serde(default)]
    times: Option<Vec<f64>>,
    #[serde(default)]
    exit_codes: Vec<Option<i32>>,
    #[serde(default)]
    memory_usage_byte: Option<Vec<f64>>,
    #[serde(default)]
    parameters: Option<BTreeMap<String, serde_json::Value>>,
}

/// The largest peak memory a run may report, in bytes (2^53).
const MAX_MEMORY_BYTES: f64 = 9_007_199_254_740_992.0;

impl InputFormat for Hyperfine {
    fn name(&self) -> &'static str {
        "hyperfine"
    }

    fn describe(&self) -> &'static str {
        "hyperfine `--export-json` (`{\"results\": [{\"command\", \"times\", ...}]}`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{')
            && head.contains("\"results\"")
            && head.contains("\"command\"")
            && head.contains("\"mean\"")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut results = Results::new(path);
        split_rows(
            path,
            reader,
            LAYOUT,
            |_, _, _| Ok(()),
            |line, kind, bytes| parse(path, line, kind, bytes),
            |parsed| results.add(parsed),
        )?;
        let Results {
            builder,
            mut notes,
            failed,
            ..
        } = results;
        if let Some(e) = failed {
            return Err(e);
        }
        if builder.is_empty() {
            return Err(Error::Input(format!(
                "{path}: hyperfine JSON with no results"
            )));
        }
        notes.push(Note::info(
            "hyperfine: `time` holds every run's wall time; `user` and `system` are hyperfine's means over the runs",
        ));
        // hyperfine's JSON does not say whether a shell started the commands (-N or not).
        let shell = ConfigEntry {
            key: vocab::SHELL_SETTING.into(),
            value: vocab::SHELL_UNRECORDED.into(),
        };
        let run = new_run(
            input.source(self),
            Environment::default(),
            vec![shell],
            builder,
        );
        Ok(Input {
            runs: vec![run],
            notes,
            malformed: 0,
        })
    }
}

/// A part of the document as what it is.
fn parse(path: &str, line: u64, kind: Kind, bytes: &[u8]) -> Result<Parsed> {
    fn json<T: DeserializeOwned>(path: &str, line: u64, bytes: &[u8]) -> Result<T> {
        serde_json::from_slice(bytes).map_err(|e| part_refused(path, line, EXPECTED, &e))
    }
    Ok(match kind {
        Kind::Row => Parsed::Result(Box::new(json(path, line, bytes)?)),
        Kind::Piece(TIMES) => Parsed::Times(json(path, line, bytes)?),
        Kind::Piece(EXIT_CODES) => Parsed::ExitCodes(json(path, line, bytes)?),
        Kind::Piece(_) => Parsed::Memory(json(path, line, bytes)?),
    })
}

/// The results recorded so far, and the pieces of the next one's per-run arrays.
struct Results<'a> {
    path: &'a str,
    builder: RunBuilder,
    notes: Vec<Note>,
    times: Vec<f64>,
    exit_codes: Vec<Option<i32>>,
    memory: Vec<f64>,
    /// The first result refused: it ends the read.
    failed: Option<Error>,
}

impl<'a> Results<'a> {
    fn new(path: &'a str) -> Results<'a> {
        Results {
            path,
            builder: RunBuilder::default(),
            notes: Vec::new(),
            times: Vec::new(),
            exit_codes: Vec::new(),
            memory: Vec::new(),
            failed: None,
        }
    }

    fn add(&mut self, parsed: Parsed) {
        match parsed {
            Parsed::Times(piece) => join_piece(&mut self.times, piece),
            Parsed::ExitCodes(piece) => join_piece(&mut self.exit_codes, piece),
            Parsed::Memory(piece) => join_piece(&mut self.memory, piece),
            Parsed::Result(mut r) => {
                // An array in the row is empty; its elements are the pieces before it.
                if let Some(times) = &mut r.times {
                    *times = std::mem::take(&mut self.times);
                }
                r.exit_codes = std::mem::take(&mut self.exit_codes);
                if let Some(memory) = &mut r.memory_usage_byte {
                    *memory = std::mem::take(&mut self.memory);
                }
                if self.failed.is_none()
                    && let Err(e) = record(&mut self.builder, *r, self.path, &mut self.notes)
                {
                    self.failed = Some(e);
                }
            }
        }
    }
}

/// One command's result: every run's wall time, hyperfine's mean user and system times, and
/// each run's peak memory. Its vectors are handed over, not copied (a result may hold
/// millions of runs).
fn record(builder: &mut RunBuilder, r: Result_, path: &str, notes: &mut Vec<Note>) -> Result<()> {
    let config: Vec<ConfigEntry> = r
        .parameters
        .iter()
        .flatten()
        .map(|(key, value)| ConfigEntry {
            key: key.clone(),
            value: match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        })
        .collect();
    // The command is the name: recorded everywhere, so its secrets go first.
    let command = crate::model::redact::line(&r.command);
    let bench = builder.benchmark_in(&command, None, &config, BenchName::plain);
    builder.name_params(bench, &config);
    let finite = |v: &f64| v.is_finite() && *v >= 0.0;
    let times: Vec<f64> = match r.times {
        Some(times) => times,
        None => {
            notes.push(Note::warning(format!(
                "{path}: `{command}` has no per-run times (hyperfine before 1.7?): its mean stands \
                 in for them"
            )));
            vec![r.mean]
        }
    };
    if times.iter().any(|t| !finite(t)) {
        return Err(Error::Input(format!(
            "{path}: `{command}`: a time that is negative or not a number"
        )));
    }
    let refused = |e| Error::Input(format!("{path}: `{command}`: {e}"));
    builder
        .record_all_checked(bench, vocab::WALL_TIME, "s", times)
        .map_err(refused)?;
    // hyperfine reports user and system time as means over the runs.
    for (name, value) in [(vocab::USER_TIME, r.user), (vocab::SYSTEM_TIME, r.system)] {
        if let Some(v) = value.filter(finite) {
            builder
                .record_checked(bench, name, "s", v)
                .map_err(refused)?;
        }
    }
    for &rss in r.memory_usage_byte.iter().flatten() {
        // A byte count: whole, not negative, and below 2^53 (8 PiB; beyond, f64 is not exact
        // and no process was ever that large).
        if !(finite(&rss) && rss.fract() == 0.0 && rss < MAX_MEMORY_BYTES) {
            return Err(refused(format!(
                "memory_usage_byte {rss} is not a byte count (a whole number from 0 to 2^53)"
            )));
        }
        builder
            .record_checked(bench, vocab::MAX_RSS, "B", rss)
            .map_err(refused)?;
    }
    let failed = r.exit_codes.iter().filter(|c| **c != Some(0)).count();
    if failed > 0 {
        notes.push(Note::warning(format!(
            "{path}: `{command}`: {failed} of {} runs exited non-zero (hyperfine -i)",
            r.exit_codes.len()
        )));
    }
    builder.record_exits(bench, r.exit_codes);
    Ok(())
}
