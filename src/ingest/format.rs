//! The input-format trait and the registry of formats latkit reads. Detection, `--input-format`,
//! its `--help` and the "unrecognised input" message all read the registry: a new format is
//! one file implementing [`InputFormat`] and one line in [`BUILTIN`].

use super::Input;
use crate::error::{Error, Result};
use crate::model::{Source, SourceKind};
use std::io::BufRead;
use std::path::Path;

/// One foreign format.
pub trait InputFormat: Sync {
    /// The name `--input-format` takes and `source.format` records.
    fn name(&self) -> &'static str;
    /// What it is, with an example of what it looks like (help and error messages).
    fn describe(&self) -> &'static str;
    /// Whether the start of an input (up to 64 KiB, as text) is this format.
    fn detect(&self, head: &str) -> bool;
    /// Reads a whole input into runs, with what the reader must be told about them.
    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input>;
    /// Whether `dir` is a directory tree of this format (criterion's `target/criterion`).
    fn detect_directory(&self, _dir: &Path) -> bool {
        false
    }
    /// Reads a directory tree of this format into runs.
    fn read_directory(&self, input: &Named, _dir: &Path) -> Result<Input> {
        Err(Error::Input(format!(
            "{}: a directory, and {} is read from a file",
            input.path,
            self.name()
        )))
    }
}

/// The input being read: its name for messages (`-` is standard input).
pub struct Named<'a> {
    pub path: &'a str,
}

impl Named<'_> {
    /// Where the run came from, for the model.
    pub fn source(&self, format: &dyn InputFormat) -> Source {
        let stdin = self.path == "-";
        Source {
            kind: if stdin {
                SourceKind::Stdin
            } else {
                SourceKind::File
            },
            format: format.name().to_string(),
            path: (!stdin).then(|| self.path.to_string()),
            command: Vec::new(),
        }
    }
}

/// The formats latkit reads, in detection order: the first whose `detect` accepts the head
/// wins, so the more specific come first.
pub static BUILTIN: &[&dyn InputFormat] = &[
    &super::latkit_json::LatkitJson,
    &super::hdrhistogram::Hlog,
    &super::hdrhistogram::Hgrm,
    &super::gbench::json::GbenchJson,
    &super::criterion::Criterion,
    &super::hyperfine::Hyperfine,
    &super::pytest_benchmark::PytestBenchmark,
    &super::trackers::Bmf,
    &super::cyclictest::CyclictestJson,
    &super::trackers::Gab,
    &super::trackers::GabBigger,
    &super::xenomai::Xenomai,
    &super::bench::Bench,
    &super::libtest::Libtest,
    &super::cyclictest::Cyclictest,
    &super::rtla::RtlaHist,
    &super::rtla::RtlaTop,
    &super::osnoise_top::OsnoiseTop,
    &super::timerlat_trace::TimerlatTrace,
    &super::gbench::console::GbenchConsole,
    &super::go::Go,
];

/// The registered format called `name`.
pub fn by_name(
    registry: &[&'static dyn InputFormat],
    name: &str,
) -> Option<&'static dyn InputFormat> {
    registry.iter().copied().find(|f| f.name() == name)
}

/// What the message for unrecognised input lists: every format by name, and where each is
/// described (a description each made the message 1,500 characters long).
pub fn described(registry: &[&dyn InputFormat]) -> String {
    let names: Vec<&str> = registry.iter().map(|f| f.name()).collect();
    format!(
        "{}; `latkit parse --help` shows what each looks like, and --input-format NAME reads \
         one explicitly",
        names.join(", ")
    )
}

/// Reads the directory `path` in `format`, or in the registered format that recognises it.
pub fn read_directory(
    registry: &[&'static dyn InputFormat],
    path: &str,
    format: Option<&'static dyn InputFormat>,
) -> Result<Input> {
    let dir = Path::new(path);
    let format = format
        .or_else(|| registry.iter().copied().find(|f| f.detect_directory(dir)))
        .ok_or_else(|| {
            Error::Input(format!(
                "{path}: a directory that no format latkit reads recognises. latkit reads {}",
                described(registry)
            ))
        })?;
    format.read_directory(&Named { path }, dir)
}
