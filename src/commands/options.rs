//! The options several commands share, as plain values: the command line (`crate::cli`)
//! parses and checks each flag once and hands these over; no command sees the parser.

use crate::analyze::compare::{CompareOptions, RegressionRule};
use crate::error::{Error, Result};
use crate::model::{BetterOverride, Note, Run};
use crate::report::OutputFormat;
use crate::report::plot::PlotKind;
use std::path::{Path, PathBuf};

/// Where a result goes and how it is gated.
pub struct Output {
    /// What the report is written as.
    pub format: &'static OutputFormat,
    /// The report's file; `None` is standard output.
    pub out: Option<PathBuf>,
    /// Also the whole result as latkit JSON, whatever `format` shows.
    pub json: Option<PathBuf>,
    /// Also these formats to these files (hyperfine's `--export-markdown`, `--export-csv`).
    pub exports: Vec<(&'static OutputFormat, PathBuf)>,
    /// Also hyperfine's own files (`exec --export-json` and the rest), to these files.
    pub hyperfine: Vec<(crate::report::hyperfine::Export, PathBuf)>,
    /// A targets file that gates the result; the verdict goes to stderr.
    pub check: Option<PathBuf>,
    /// No progress and no warnings on stderr.
    pub quiet: bool,
    /// How the report is shown on the terminal (hyperfine's `--style`).
    pub style: Style,
    /// Save every run in the history store, with this tag.
    pub store: Option<Storing>,
    pub plots: Plots,
}

/// How a report is shown: as latkit shows it, without pictures or progress (`--style basic`),
/// or not at all (`--style none`: files are still written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    #[default]
    Default,
    Plain,
    Silent,
}

/// Where runs are stored and under which tag.
pub struct Storing {
    /// The store's location (`None`: LATKIT_DB, else the default file).
    pub db: Option<String>,
    pub tag: Option<String>,
}

/// SVG files to draw, each paired in order with a kind (one kind serves them all; none: the
/// first kind the result has).
#[derive(Default)]
pub struct Plots {
    pub files: Vec<PathBuf>,
    pub kinds: Vec<PlotKind>,
}

impl Plots {
    /// Each file with the kind it draws; the counts must pair up.
    pub fn pairs(&self) -> Result<Vec<(&Path, Option<PlotKind>)>> {
        let kinds: Vec<Option<PlotKind>> = match (self.kinds.len(), self.files.len()) {
            (0, n) => vec![None; n],
            (1, n) => vec![Some(self.kinds[0]); n],
            (k, n) if k == n => self.kinds.iter().copied().map(Some).collect(),
            (k, n) => {
                return Err(Error::Input(format!(
                    "{k} --plot-kind for {n} --plot: give one kind, or one per --plot"
                )));
            }
        };
        Ok(self.files.iter().map(PathBuf::as_path).zip(kinds).collect())
    }
}

/// How read or harness results are analysed and reported.
pub struct ReportOptions {
    pub output: Output,
    /// The benchmark (name or glob) that is 100 % in a "% of" column.
    pub baseline: Option<String>,
    /// The suite file with attribution roles and defaults.
    pub suite: Option<PathBuf>,
    /// The metric to tabulate (default: the first the harness reports).
    pub metric: Option<String>,
    /// One table per repetition instead of medians across them.
    pub per_run: bool,
    /// A "Relative" column against the best row.
    pub relative: bool,
    /// The benchmark (full name) the "Relative" column divides by instead of the best row
    /// (`exec --reference`).
    pub relative_to: Option<String>,
}

/// How a comparison decides.
pub struct Gate {
    /// Significance level of the U test.
    pub alpha: f64,
    /// Fail on a significant change beyond these thresholds.
    pub fail_on: Vec<RegressionRule>,
    /// Also fail when a change beyond a threshold is within noise.
    pub fail_within_noise: bool,
    /// `--calibration FILE`: this machine's noise floor, from `latkit calibrate --save`.
    pub calibration: Option<std::path::PathBuf>,
}

impl Gate {
    /// Comparison options with these gates; every metric and the default statistics. The
    /// calibration file, when given, is read here (exit 2 when it is not one).
    pub fn options(&self, env: &super::Env) -> Result<CompareOptions> {
        let floors = match &self.calibration {
            Some(_) if self.fail_on.is_empty() => {
                return Err(Error::Input(
                    "--calibration says which --fail-on thresholds this machine can decide: \
                     give a --fail-on rule"
                        .into(),
                ));
            }
            Some(path) => super::calibrate::load(path, env)?.figures,
            None => Vec::new(),
        };
        Ok(CompareOptions {
            alpha: self.alpha,
            rules: self
                .fail_on
                .iter()
                .map(|rule| RegressionRule {
                    strict: self.fail_within_noise,
                    ..rule.clone()
                })
                .collect(),
            floors,
            ..CompareOptions::default()
        })
    }
}

/// A/B runs against a base revision, for `go` and `gbench`.
pub struct Interleave {
    /// The git revision the working tree alternates with; `None`: a plain run.
    pub base: Option<String>,
    /// `--runs`: the rounds, or until decided; `None`: the runner's own count.
    pub runs: Option<Runs>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    pub gate: Gate,
}

impl Interleave {
    /// The first flag given that makes a run a comparison, if any.
    pub fn comparing(&self) -> Option<&'static str> {
        [
            (self.base.is_some(), "--interleave"),
            (self.runs.is_some(), "--runs"),
            (self.min_runs.is_some(), "--min-runs"),
            (self.max_runs.is_some(), "--max-runs"),
            (!self.gate.fail_on.is_empty(), "--fail-on"),
            (self.gate.calibration.is_some(), "--calibration"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// `--runs N|auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    Count(u32),
    /// Until the gates are decided, between `--min-runs` and `--max-runs`.
    Auto,
}

/// How inputs are read: their format (`None`: detected) and the directions `--better` sets.
pub struct Reading {
    pub format: Option<&'static dyn crate::ingest::InputFormat>,
    pub better: Vec<BetterOverride>,
}

impl Reading {
    /// Applies `--better` to runs read from `what`; an override that names no metric of
    /// any of them is a note, since a misspelt name would otherwise change nothing quietly.
    pub fn directions(&self, runs: &mut [Run], what: &str, notes: &mut Vec<Note>) {
        for over in &self.better {
            let mut found = false;
            for run in runs.iter_mut() {
                found |= run.override_better(over);
            }
            if !found {
                notes.push(Note::warning(format!(
                    "--better {}: {what} has no metric called `{}`",
                    over.metric, over.metric
                )));
            }
        }
    }
}
