//! The views analysis derives from runs and every sink renders: tables of cells, and the
//! report that carries them with the runs and the notes.

use super::gate::Verdict;
use crate::model::{Better, Interval, Metric, Note, Run, Unit};
use serde::Serialize;

/// Runs and what analysis derived from them.
#[derive(Default)]
pub struct Report {
    /// When the report was made, stamped as it is written (`None` while it is partial).
    pub generated: Option<std::time::SystemTime>,
    pub runs: Vec<Run>,
    pub tables: Vec<Table>,
    pub notes: Vec<Note>,
    /// The targets and budget, judged, when a targets file was given.
    pub verdict: Option<Verdict>,
}

impl Report {
    /// The notes, each once (the first of equal ones): a warning gathered from several inputs
    /// or said by several steps is one note. What every sink shows.
    pub fn notes_once(&self) -> Vec<&Note> {
        let mut seen = std::collections::HashSet::new();
        self.notes.iter().filter(|n| seen.insert(*n)).collect()
    }
}

/// A change decided outside a comparison (a `--runs auto` gate on rounds of its own): of
/// benchmark `bench` (its name as a table's rows, or in full) in `metric`.
#[derive(Clone, Debug)]
pub struct Decided {
    pub metric: String,
    pub bench: String,
    pub full_name: String,
    pub change: Change,
}

/// A derived table: one row per benchmark, columns chosen by analysis.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Index of the run in [`Report::runs`].
    pub run: usize,
    /// Repetition number (1-based) for per-run tables; absent for tables of medians.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<usize>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub header: String,
    /// Stable machine name: `benchmark`, `runs`, `count`, the metric name, `ci95`, `pct_of_baseline`,
    /// `share_part`, `share_rest`.
    pub key: String,
    /// The unit of the column's numbers where formats print them raw (markdown, CSV); the
    /// terminal table scales every cell and prints its unit there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// How a terminal too narrow for the whole table shows the column (the terminal's alone).
    #[serde(skip)]
    pub narrow: Narrow,
}

/// Column keys written by the tables' producers and looked for by their readers (plots,
/// JSON consumers): spelled once here.
pub mod keys {
    pub const BENCHMARK: &str = "benchmark";
    /// How many values a median is of (repetitions, a command's runs).
    pub const RUNS: &str = "runs";
    /// Iterations (Go's `Count`).
    pub const COUNT: &str = "count";
    pub const CI95: &str = "ci95";
    /// A counted figure's spread run to run: (max − min) / median, in percent.
    pub const SPREAD: &str = "spread";
    pub const PCT_OF_BASELINE: &str = "pct_of_baseline";
    pub const RELATIVE: &str = "relative";
    pub const SHARE_PART: &str = "share_part";
    pub const SHARE_REST: &str = "share_rest";
    /// A history's figure, and whether a run is a change point.
    pub const VALUE: &str = "value";
    pub const CHANGE_POINT: &str = "change_point";
    /// A history's stored run: its id, when it was stored, its commit and branch, and the
    /// change from the run before.
    pub const STORED_RUN: &str = "run";
    pub const STORED_AT: &str = "stored_at";
    pub const COMMIT: &str = "commit";
    pub const BRANCH: &str = "branch";
    pub const CHANGE: &str = "change";
    /// A history's change from the run `--since` names.
    pub const CHANGE_FROM_BASE: &str = "change_from_base";
    /// A listed regression's figure (`ns/op`, `latency p99`) and how it was found.
    pub const FIGURE: &str = "figure";
    pub const FOUND_BY: &str = "found_by";

    /// A comparison's figure of input `i` (0 is the base).
    pub fn value_of(i: usize) -> String {
        format!("{VALUE}_{i}")
    }

    /// A comparison's interval of input `i`.
    pub fn ci95_of(i: usize) -> String {
        format!("{CI95}_{i}")
    }

    /// A comparison's change of input `i` against the base.
    pub fn change_of(i: usize) -> String {
        format!("{CHANGE}_{i}")
    }

    /// The input a comparison's change column is of (`change_2` → 2).
    pub fn input_of_change(key: &str) -> Option<usize> {
        key.strip_prefix(CHANGE)?.strip_prefix('_')?.parse().ok()
    }
}

/// What a terminal too narrow for a whole table may do with one of its columns.
#[derive(Clone, Debug, Default)]
pub struct Narrow {
    /// A shorter header (`vs base` for `new.txt vs base`).
    pub header: Option<String>,
    /// Columns are left out highest rank first, the rightmost of a rank first; 0 stays.
    pub drop_rank: u8,
}

impl Column {
    /// A column of text or counts, never left out on a narrow terminal.
    pub fn new(header: impl Into<String>, key: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            key: key.into(),
            unit: None,
            narrow: Narrow::default(),
        }
    }

    /// Numbers that formats printing them raw label with `unit` (none when empty).
    pub fn in_unit(self, unit: &str) -> Column {
        Column {
            unit: (!unit.is_empty()).then(|| unit.to_string()),
            ..self
        }
    }

    /// Left out on a narrow terminal before columns of a lower `rank`.
    pub fn dropped_at(mut self, rank: u8) -> Column {
        self.narrow.drop_rank = rank;
        self
    }

    /// Headed `header` on a narrow terminal.
    pub fn narrow_header(mut self, header: impl Into<String>) -> Column {
        self.narrow.header = Some(header.into());
        self
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The benchmark's full name as the harness printed it.
    pub benchmark: String,
    pub cells: Vec<Cell>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Cell {
    Text {
        text: String,
    },
    Count {
        count: u64,
    },
    /// A measured value in its unit's base unit; `source_unit` is how the harness wrote it.
    Value {
        value: f64,
        unit: Unit,
        source_unit: String,
    },
    /// Spread of the median: the interval when there are enough samples for one.
    Spread {
        n: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        interval: Option<Interval>,
        #[serde(skip_serializing_if = "Option::is_none")]
        relative_percent: Option<f64>,
    },
    Percent {
        percent: f64,
    },
    /// A column's change against the base column (`latkit compare`).
    Change(Box<Change>),
    /// A row against the table's best row (`--relative`).
    Ratio(Ratio),
    Empty,
}

/// How a figure moved from the base input to another, and whether that is more than noise.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// `(new / base − 1) · 100`; absent when the base is zero or either side is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// The test's p-value, for repetitions (Mann-Whitney U).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// For repetitions: the change's 95 % interval in percent, from the Hodges-Lehmann shift
    /// of the log values (the interval that inverts the U test); absent when the samples are
    /// too small to give one, or when no output shows it (text tables) and no gate states it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// Values on each side (repetitions, or samples of a distribution).
    pub n_base: u64,
    pub n: u64,
    pub verdict: ChangeVerdict,
    /// Which way is an improvement, so that readers (and plots) can tell worse from better.
    pub better: Better,
    /// What either side's repetitions say about their fitness to be compared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
}

/// A finding on one side's repetitions, with its reason (`analyze::diagnose`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    /// The input whose repetitions it is about.
    pub input: String,
    pub kind: Finding,
    /// Whether it makes the comparison unfit to decide (a gate on it says so): the kind's
    /// own, kept in the JSON for its readers.
    pub unfit: bool,
    pub reason: String,
}

/// What a side's repetitions can show about their fitness to be compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// A trend over the order measured.
    Drift,
    /// Two levels the values switch between.
    Bimodal,
    /// Values far from the rest, as hyperfine flags them.
    Outliers,
}

impl Finding {
    /// Drift and two modes make a comparison unfit; outliers do not: the U test is robust to
    /// them, and they cost the gate's permutation test power, never a false alarm.
    pub fn unfit(self) -> bool {
        self != Finding::Outliers
    }

    /// What to do about it, in a note.
    pub fn advice(self) -> &'static str {
        match self {
            Finding::Drift => {
                "the comparison measures the drift as much as any change; interleave the sides \
                 (--interleave, --runs auto) or quiet the machine"
            }
            Finding::Bimodal => {
                "a comparison of medians measures the mix of the modes as much as any change; \
                 find what switches the figure between them (CPU placement, frequency, a \
                 collector) and hold it still"
            }
            Finding::Outliers => {
                "an outlier alone cannot make a change significant, but outliers can hide \
                 one; the machine was not quiet"
            }
        }
    }
}

impl Change {
    /// Whether the change goes the wrong way for the metric.
    pub fn is_worse(&self) -> bool {
        match (self.better, self.percent) {
            (Better::Lower, Some(p)) => p > 0.0,
            (Better::Higher, Some(p)) => p < 0.0,
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    /// Significant at the chosen alpha, or confidence bounds that do not overlap.
    Significant,
    /// Values assumed exact (benchstat's `assume=exact`): any difference is real, untested.
    Exact,
    /// Counted figures whose repetitions agree: decided by the change's size, a change beyond
    /// the counting floor (`+1.00% (counted)`) or none (`~ (counted, +0.02%)`).
    Counted,
    /// A counted figure with one count on a side: its repeatability is unknown, so the change
    /// is decided neither by its size nor by a test (`+15.10% (counted once)`).
    CountedOnce,
    /// Not distinguishable from noise: printed `~`.
    Noise,
    /// Not tested: a maximum (one sample is never evidence on its own), a side of one value
    /// (a google/benchmark aggregate), a history point with too little before it.
    Untested,
    /// The geomean row's summary of the others' changes, which no test is made of (benchstat
    /// prints it bare too).
    Summary,
}

impl Cell {
    /// A value of `metric`, given in its base unit.
    pub fn value_of(value: f64, metric: &Metric) -> Cell {
        Cell::Value {
            value,
            unit: metric.unit.clone(),
            source_unit: metric.source_unit.clone(),
        }
    }
}

/// How many times worse a row is than the table's best (hyperfine's "Relative"): 1 for the best.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratio {
    pub ratio: f64,
    /// The ratio's 95 % confidence interval, when both rows have two values or more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
}
