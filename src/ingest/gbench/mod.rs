//! google/benchmark results, from its JSON (`--benchmark_format=json`, `--benchmark_out`) and
//! from its console table. Both readers hand each row to one [`Recorder`], which decides what
//! the row is: a repetition, an aggregate (used only when its repetitions are absent), a
//! complexity fit, or an error.

pub mod console;
pub mod json;

use super::problems::Skipped;
use super::{Input, Parsed};
use crate::model::{BenchName, Better, ConfigEntry, Environment, Note, RunBuilder, Source};
use rustc_hash::{FxHashMap, FxHashSet};

/// What a row is, as google/benchmark's `run_type` and `aggregate_name` say.
#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    /// One repetition.
    Iteration,
    /// `mean`, `median`, `stddev`, `cv` or a user statistic over the repetitions.
    Aggregate(String),
    /// The fitted complexity coefficient (`BM_x_BigO`), with its curve (`N`, `NlgN`, ...).
    BigO(String),
    /// The fit's normalised root-mean-square error (`BM_x_RMS`), a fraction.
    Rms,
}

/// One row of results, whichever format it came from.
#[derive(Clone, Debug)]
pub struct Row {
    pub line: u64,
    /// The row's name as printed: an aggregate's carries its suffix (`BM_x_mean`).
    pub name: String,
    /// The benchmark the row belongs to (`run_name`: without an aggregate suffix).
    pub run_name: String,
    pub kind: RowKind,
    pub iterations: Option<u64>,
    /// Wall-clock time per iteration, in `time_unit` (for BigO rows: the coefficient).
    pub real_time: Option<f64>,
    /// CPU time per iteration, in `time_unit`.
    pub cpu_time: Option<f64>,
    pub time_unit: String,
    /// Counters: `items_per_second`, `bytes_per_second` and user counters, as given.
    pub counters: Vec<(String, f64)>,
    pub label: Option<String>,
    /// Why the row has no result: `SkipWithError` or `SkipWithMessage`.
    pub problem: Option<Problem>,
    /// The times are fractions (`aggregate_unit: percentage`, the `cv` row).
    pub percentage: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    Error(String),
    Skipped(String),
}

impl Row {
    pub fn new(line: u64, run_name: &str, kind: RowKind) -> Self {
        Row {
            line,
            name: run_name.to_string(),
            run_name: run_name.to_string(),
            kind,
            iterations: None,
            real_time: None,
            cpu_time: None,
            time_unit: "ns".to_string(),
            counters: Vec::new(),
            label: None,
            problem: None,
            percentage: false,
        }
    }
}

/// The metric names of the two times, as google/benchmark calls them.
pub use crate::model::vocab::{CPU_TIME as CPU, REAL_TIME as WALL};

/// The unit a counter's values are in.
fn counter_unit(name: &str) -> &'static str {
    match name {
        "items_per_second" => "items/s",
        "bytes_per_second" => "B/s",
        _ => "",
    }
}

fn is_rate(name: &str) -> bool {
    matches!(name, "items_per_second" | "bytes_per_second")
}

/// A benchmark timed on the wall clock: `UseRealTime()` or `UseManualTime()` name it so.
fn uses_wall_time(run_name: &str) -> bool {
    run_name
        .split('/')
        .any(|part| part == "real_time" || part == "manual_time")
}

/// Turns rows into benchmarks.
pub struct Recorder {
    file: String,
    builder: RunBuilder,
    skipped: Skipped,
    notes: Vec<Note>,
    /// Benchmarks (run name, label) with at least one repetition row.
    repeated: FxHashSet<(String, Option<String>)>,
    /// Aggregate rows, kept until the end: they count only for benchmarks without repetitions.
    aggregates: FxHashMap<(String, Option<String>), Vec<Row>>,
    aggregate_order: Vec<(String, Option<String>)>,
    /// Benchmarks whose rate counters are per CPU second, in order, and as a set to look up.
    cpu_rates: Vec<String>,
    cpu_rate_names: FxHashSet<String>,
    /// Errors and skips, each with how many rows reported it, and the line of the first.
    problems: Vec<(String, u64)>,
    problem_lines: Vec<u64>,
    /// Where each message is in `problems`.
    problem_index: FxHashMap<String, usize>,
}

/// Names listed in one note before "and N more".
const NAMES_LISTED: usize = 5;

impl Recorder {
    pub fn new(file: &str) -> Self {
        Recorder {
            file: file.to_string(),
            builder: RunBuilder::default(),
            skipped: Skipped::default(),
            notes: Vec::new(),
            repeated: FxHashSet::default(),
            aggregates: FxHashMap::default(),
            aggregate_order: Vec::new(),
            cpu_rates: Vec::new(),
            cpu_rate_names: FxHashSet::default(),
            problems: Vec::new(),
            problem_lines: Vec::new(),
            problem_index: FxHashMap::default(),
        }
    }

    /// A row that could not be read at all.
    pub fn skip(&mut self, line: u64, message: String) {
        self.skipped.line(&self.file, line, message);
    }

    pub fn add(&mut self, row: Row) {
        if let Some(problem) = &row.problem {
            let (what, why) = match problem {
                Problem::Error(why) => ("error", why),
                Problem::Skipped(why) => ("skipped", why),
            };
            let message = format!("{}: {what}: {why}; no result", row.run_name);
            // Each repetition fails alike: one note, with how many.
            match self.problem_index.get(&message) {
                Some(&at) => self.problems[at].1 += 1,
                None => {
                    self.problem_index
                        .insert(message.clone(), self.problems.len());
                    self.problems.push((message, 1));
                    self.problem_lines.push(row.line);
                }
            }
            return;
        }
        let key = (row.run_name.clone(), row.label.clone());
        match &row.kind {
            RowKind::Iteration => {
                self.repeated.insert(key);
                self.record(&row, &row.run_name);
            }
            RowKind::Aggregate(statistic) => {
                self.record_aggregate(&row, statistic);
                if !self.aggregates.contains_key(&key) {
                    self.aggregate_order.push(key.clone());
                }
                self.aggregates.entry(key).or_default().push(row);
            }
            RowKind::BigO(curve) => {
                // The coefficient is time per unit of the fitted curve: `ns/N`, `ns/NlgN`.
                let unit = format!("{}/{curve}", row.time_unit);
                let name = format!("{}_BigO", row.run_name);
                let bench = self.bench(&name, row.label.as_deref());
                self.builder.mark_aggregate(bench, "BigO");
                for (metric, value) in [(WALL, row.real_time), (CPU, row.cpu_time)] {
                    if let Some(v) = value {
                        self.checked(bench, row.line, metric, &unit, v);
                    }
                }
            }
            RowKind::Rms => {
                let name = format!("{}_RMS", row.run_name);
                let bench = self.bench(&name, row.label.as_deref());
                self.builder.mark_aggregate(bench, "RMS");
                for (metric, value) in [(WALL, row.real_time), (CPU, row.cpu_time)] {
                    if let Some(v) = value {
                        self.checked(bench, row.line, metric, "%", v * 100.0);
                    }
                }
            }
        }
    }

    fn bench(&mut self, name: &str, label: Option<&str>) -> usize {
        let config: Vec<ConfigEntry> = label
            .map(|l| ConfigEntry {
                key: "label".to_string(),
                value: l.to_string(),
            })
            .into_iter()
            .collect();
        self.builder
            .benchmark_in(name, None, &config, BenchName::parse_path)
    }

    fn checked(&mut self, bench: usize, line: u64, metric: &str, unit: &str, value: f64) {
        if let Err(e) = self.builder.record_checked(bench, metric, unit, value) {
            self.skip(line, format!("{e}; value skipped"));
        }
    }

    /// An aggregate row as a figure of its own, under the name google/benchmark printed
    /// (`BM_x_mean`), as compare.py shows it; percentages (`cv`) in %.
    fn record_aggregate(&mut self, row: &Row, statistic: &str) {
        let bench = self.bench(&row.name, row.label.as_deref());
        self.builder.mark_aggregate(bench, statistic);
        let (unit, scale) = if row.percentage {
            ("%", 100.0)
        } else {
            (row.time_unit.as_str(), 1.0)
        };
        let unit = unit.to_string();
        for (metric, value) in [(WALL, row.real_time), (CPU, row.cpu_time)] {
            if let Some(v) = value {
                self.checked(bench, row.line, metric, &unit, v * scale);
            }
        }
        // A cv row's counters are coefficients of variation too: fractions, never a rate.
        for (counter, value) in &row.counters {
            match row.percentage {
                true => self.checked(bench, row.line, counter, "%", value * 100.0),
                false => self.checked(bench, row.line, counter, counter_unit(counter), *value),
            }
        }
    }

    /// One repetition's figures (or the figures standing in for missing repetitions).
    fn record(&mut self, row: &Row, name: &str) {
        let bench = self.bench(name, row.label.as_deref());
        if let Some(n) = row.iterations {
            self.builder.record_iterations(bench, n);
        }
        for (metric, value) in [(WALL, row.real_time), (CPU, row.cpu_time)] {
            if let Some(v) = value {
                self.checked(bench, row.line, metric, &row.time_unit, v);
            }
        }
        for (counter, value) in &row.counters {
            self.checked(bench, row.line, counter, counter_unit(counter), *value);
        }
        if row.counters.iter().any(|(c, _)| is_rate(c))
            && !uses_wall_time(&row.run_name)
            && self.cpu_rate_names.insert(row.run_name.clone())
        {
            self.cpu_rates.push(row.run_name.clone());
        }
    }

    /// Benchmarks given only as aggregates are recorded from their median (else mean), once.
    fn record_aggregates(&mut self) {
        for key in std::mem::take(&mut self.aggregate_order) {
            let rows = self.aggregates.remove(&key).unwrap_or_default();
            if self.repeated.contains(&key) {
                continue;
            }
            let of = |name: &str| {
                rows.iter()
                    .find(|r| r.kind == RowKind::Aggregate(name.to_string()))
            };
            let Some(centre) = of("median").or_else(|| of("mean")) else {
                let names: Vec<String> = rows
                    .iter()
                    .filter_map(|r| match &r.kind {
                        RowKind::Aggregate(a) => Some(a.clone()),
                        _ => None,
                    })
                    .collect();
                self.notes.push(Note::warning_at(
                    &self.file,
                    rows.first().map_or(0, |r| r.line),
                    format!(
                        "{}: only the aggregates {} were given (each shown as a figure of its own), \
                         neither a median nor a mean to stand for the benchmark",
                        key.0,
                        names.join(", ")
                    ),
                ));
                continue;
            };
            let RowKind::Aggregate(statistic) = centre.kind.clone() else {
                continue;
            };
            let repetitions = centre.iterations.unwrap_or(0);
            let spread = of("cv")
                .and_then(|cv| cv.real_time)
                .map(|cv| format!(", cv {:.2} %", cv * 100.0))
                .unwrap_or_default();
            let centre = Row {
                iterations: None,
                ..centre.clone()
            };
            self.record(&centre, &key.0);
            let bench = self.bench(&key.0, centre.label.as_deref());
            self.builder.mark_standing_in(bench, &statistic);
            self.notes.push(Note::info(format!(
                "{}: only aggregates of {repetitions} repetitions were given: its figures are their {statistic}{spread}; \
                 the repetitions themselves are needed for a confidence interval \
                 (drop --benchmark_report_aggregates_only)",
                key.0
            )));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.builder.is_empty() && self.aggregate_order.is_empty()
    }

    pub fn finish(mut self, config: Vec<ConfigEntry>) -> Parsed {
        self.record_aggregates();
        self.builder.set_better("items/s", Better::Higher);
        if !self.cpu_rates.is_empty() {
            self.notes.push(Note::info(format!(
                "{}: items_per_second and bytes_per_second are per CPU second (google/benchmark divides by CPU time \
                 unless the benchmark calls UseRealTime()); for what a user waits, use real_time",
                listed(&self.cpu_rates)
            )));
        }
        let malformed = self.skipped.count;
        let mut notes: Vec<Note> = self
            .problems
            .into_iter()
            .zip(self.problem_lines)
            .map(|((message, times), line)| {
                let message = match times {
                    1 => message,
                    n => format!("{message} ({n} rows)"),
                };
                Note::warning_at(&self.file, line, message)
            })
            .collect();
        notes.extend(self.notes);
        notes.extend(self.skipped.into_notes(&self.file));
        Parsed {
            builder: self.builder,
            config,
            timer: None,
            notes,
            malformed,
        }
    }
}

fn listed(names: &[String]) -> String {
    let shown = names
        .iter()
        .take(NAMES_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().saturating_sub(NAMES_LISTED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// What a google/benchmark `context` says: the machine into the environment, everything else
/// (caches, clock, load, build type, custom keys) into the run's configuration, and warnings
/// for a debug library and CPU frequency scaling.
#[derive(Default)]
pub struct Context {
    pub environment: Environment,
    pub config: Vec<ConfigEntry>,
    pub notes: Vec<Note>,
    pub date: Option<String>,
}

impl Context {
    /// The run the recorded rows make, with this context's machine, configuration and notes
    /// (the context's warnings first).
    pub fn into_input(mut self, recorder: Recorder, source: Source) -> Input {
        let parsed = recorder.finish(std::mem::take(&mut self.config));
        let mut input = parsed.into_input(source, self.environment);
        input.runs[0].started = self.date;
        self.notes.append(&mut input.notes);
        input.notes = self.notes;
        input
    }

    pub fn set(&mut self, key: &str, value: String) {
        match key {
            "host_name" => self.environment.hostname = Some(value.clone()),
            "num_cpus" => self.environment.cores = value.parse().ok(),
            "date" => self.date = Some(value.clone()),
            _ => {}
        }
        match (key, value.as_str()) {
            ("library_build_type", "debug") => self.notes.push(Note::warning(
                "the google/benchmark library was built as debug: its timing loop runs unoptimised, \
                 so every time is inflated and not comparable with a release build of the library",
            )),
            ("cpu_scaling_enabled", "true") => self.notes.push(Note::warning(
                "CPU frequency scaling was enabled: the clock speed changed during the run, so times vary \
                 between repetitions and early ones are slower; set the governor to `performance`",
            )),
            _ => {}
        }
        if key != "date" {
            self.config.push(ConfigEntry {
                key: key.to_string(),
                value,
            });
        }
    }
}

/// `32 KiB` for 32768: cache sizes as google/benchmark prints them.
pub fn cache_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: u64, name: &str, kind: RowKind, real: f64) -> Row {
        Row {
            real_time: Some(real),
            cpu_time: Some(real),
            iterations: Some(10),
            name: match &kind {
                RowKind::Aggregate(statistic) => format!("{name}_{statistic}"),
                _ => name.to_string(),
            },
            percentage: kind == RowKind::Aggregate("cv".into()),
            ..Row::new(line, name, kind)
        }
    }

    #[test]
    fn aggregates_never_join_repetitions() {
        let mut r = Recorder::new("g.json");
        r.add(row(1, "BM_A", RowKind::Iteration, 10.0));
        r.add(row(2, "BM_A", RowKind::Iteration, 12.0));
        r.add(row(3, "BM_A", RowKind::Aggregate("mean".into()), 11.0));
        r.add(row(4, "BM_A", RowKind::Aggregate("median".into()), 11.0));
        let b = r.finish(Vec::new()).builder.finish();
        let names: Vec<&str> = b.iter().map(|b| b.name.full_name.as_str()).collect();
        assert_eq!(names, ["BM_A", "BM_A_mean", "BM_A_median"]);
        assert_eq!(b[0].metric(WALL).unwrap().values, [10.0, 12.0]);
        assert_eq!(b[0].iterations, [10, 10]);
        assert_eq!(b[1].aggregate.as_deref(), Some("mean"));
        assert_eq!(b[1].metric(WALL).unwrap().values, [11.0]);
    }

    #[test]
    fn aggregates_stand_in_for_missing_repetitions() {
        let mut r = Recorder::new("g.json");
        r.add(row(3, "BM_A", RowKind::Aggregate("mean".into()), 11.0));
        r.add(row(4, "BM_A", RowKind::Aggregate("median".into()), 10.5));
        r.add(row(5, "BM_A", RowKind::Aggregate("stddev".into()), 1.0));
        r.add(row(6, "BM_A", RowKind::Aggregate("cv".into()), 0.09));
        let out = r.finish(Vec::new());
        assert!(out.notes[0].message.contains("their median, cv 9.00 %"));
        let b = out.builder.finish();
        let stand_in = b.iter().find(|b| b.name.full_name == "BM_A").unwrap();
        assert_eq!(stand_in.metric(WALL).unwrap().values, [10.5]);
        assert!(stand_in.iterations.is_empty(), "10 is the repetition count");
        let cv = b.iter().find(|b| b.name.full_name == "BM_A_cv").unwrap();
        assert_eq!(cv.metric(WALL).unwrap().values, [9.0]);
    }

    #[test]
    fn rates_are_per_cpu_second_unless_timed_on_the_wall() {
        let mut r = Recorder::new("g.json");
        for name in ["BM_W", "BM_R/real_time"] {
            let mut w = row(1, name, RowKind::Iteration, 50.0);
            w.counters = vec![("items_per_second".into(), 2e7), ("entities".into(), 64.0)];
            r.add(w);
        }
        let out = r.finish(Vec::new());
        assert!(out.notes[0].message.starts_with("BM_W: items_per_second"));
        let b = out.builder.finish();
        let rate = b[0].metric("items_per_second").unwrap();
        assert_eq!(
            (rate.better, rate.source_unit.as_str()),
            (Better::Higher, "items/s")
        );
        assert_eq!(b[0].metric("entities").unwrap().values, [64.0]);
    }

    #[test]
    fn errors_and_complexity_rows() {
        let mut r = Recorder::new("g.json");
        let mut broken = Row::new(7, "BM_B", RowKind::Iteration);
        broken.problem = Some(Problem::Error("device not found".into()));
        r.add(broken);
        r.add(row(8, "BM_D", RowKind::BigO("NlgN".into()), 1.07));
        r.add(row(9, "BM_D", RowKind::Rms, 0.03));
        let out = r.finish(Vec::new());
        assert_eq!(
            out.notes[0].to_string(),
            "g.json:7: BM_B: error: device not found; no result"
        );
        let b = out.builder.finish();
        assert_eq!(b[0].name.full_name, "BM_D_BigO");
        assert_eq!(b[0].metric(WALL).unwrap().source_unit, "ns/NlgN");
        assert_eq!(b[1].metric(CPU).unwrap().values, [3.0]);
    }
}
