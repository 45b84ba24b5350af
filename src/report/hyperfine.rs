//! hyperfine's own exports, which `latkit exec --export-*` writes so that what reads
//! hyperfine's files reads latkit's: its JSON (`results[]`, as hyperfine's scripts take it),
//! its CSV, and its markup tables (markdown, AsciiDoc, org-mode), each figure computed as
//! hyperfine computes it (mean, sample standard deviation, the median of an even count the
//! mean of the middle two, relative speed against the fastest mean).

use super::{Reader, Reporter};
use crate::analyze::Report;
use crate::model::{Benchmark, Unit, vocab};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Which of hyperfine's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Json,
    Csv,
    Markdown,
    Asciidoc,
    Orgmode,
}

/// hyperfine's `--time-unit` for the markup tables (JSON and CSV are always in seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Second,
    Millisecond,
    Microsecond,
}

impl TimeUnit {
    /// The unit hyperfine picks for a duration when none is given.
    fn suiting(seconds: f64) -> TimeUnit {
        match seconds {
            s if s < 0.001 => TimeUnit::Microsecond,
            s if s < 1.0 => TimeUnit::Millisecond,
            _ => TimeUnit::Second,
        }
    }

    fn short(self) -> &'static str {
        match self {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "µs",
        }
    }

    /// `seconds` in this unit, to hyperfine's precision.
    fn format(self, seconds: f64) -> String {
        match self {
            TimeUnit::Second => format!("{seconds:.3}"),
            TimeUnit::Millisecond => format!("{:.1}", seconds * 1e3),
            TimeUnit::Microsecond => format!("{:.1}", seconds * 1e6),
        }
    }
}

/// hyperfine's `--sort` for the markup tables: `auto` and `command` keep the commands' order,
/// `mean-time` puts the fastest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    #[default]
    Command,
    MeanTime,
}

/// One export: the layout, and the unit and order its tables take.
#[derive(Clone, Copy, Debug)]
pub struct Export {
    pub layout: Layout,
    pub unit: Option<TimeUnit>,
    pub sort: Sort,
}

/// One command's figures under hyperfine's names, in its order.
#[derive(Serialize)]
struct Result_ {
    command: String,
    mean: f64,
    stddev: Option<f64>,
    median: f64,
    user: f64,
    system: f64,
    min: f64,
    max: f64,
    times: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_usage_byte: Option<Vec<u64>>,
    exit_codes: Vec<Option<i32>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    parameters: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Document<'a> {
    results: &'a [Result_],
}

/// A metric's values in the unit hyperfine writes (`s`, `B`).
fn values_in(bench: &Benchmark, metric: &str, unit: &str) -> Vec<f64> {
    let to_base = Unit::parse(unit).to_base;
    bench
        .metric(metric)
        .map(|m| m.values.iter().map(|v| v / to_base).collect())
        .unwrap_or_default()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

impl Result_ {
    /// A timed command's figures; `None` for a benchmark without wall times (counts only).
    fn of(bench: &Benchmark) -> Option<Result_> {
        let times = values_in(bench, vocab::WALL_TIME, "s");
        if times.is_empty() {
            return None;
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n % 2 {
            1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        let mean_time = mean(&times);
        let stddev = (n > 1).then(|| {
            let squares: f64 = times.iter().map(|t| (t - mean_time).powi(2)).sum();
            (squares / (n - 1) as f64).sqrt()
        });
        let memory = values_in(bench, vocab::MAX_RSS, "B");
        Some(Result_ {
            command: bench.name.full_name.clone(),
            mean: mean_time,
            stddev,
            median,
            user: mean(&values_in(bench, vocab::USER_TIME, "s")),
            system: mean(&values_in(bench, vocab::SYSTEM_TIME, "s")),
            min: sorted[0],
            max: sorted[n - 1],
            times,
            memory_usage_byte: (!memory.is_empty())
                .then(|| memory.iter().map(|&b| b as u64).collect()),
            exit_codes: bench.exit_codes.clone(),
            parameters: bench
                .name
                .params
                .iter()
                .map(|p| (p.key.clone(), p.value.clone()))
                .collect(),
        })
    }
}

impl Reporter for Export {
    fn render(&self, report: &Report, _reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        let results: Vec<Result_> = report
            .runs
            .iter()
            .flat_map(|run| &run.benchmarks)
            .filter_map(Result_::of)
            .collect();
        match self.layout {
            Layout::Json => {
                serde_json::to_writer_pretty(&mut *out, &Document { results: &results })?;
                writeln!(out)
            }
            Layout::Csv => csv(&results, out),
            markup => {
                let table = self.table(&results, markup);
                out.write_all(table.as_bytes())
            }
        }
    }
}

/// hyperfine's CSV: its summary figures in seconds, one column per parameter.
fn csv(results: &[Result_], out: &mut dyn Write) -> io::Result<()> {
    let mut header: Vec<String> = ["command", "mean", "stddev", "median", "user", "system"]
        .into_iter()
        .chain(["min", "max"])
        .map(str::to_string)
        .collect();
    let keys: Vec<&String> = results
        .first()
        .map(|r| r.parameters.keys().collect())
        .unwrap_or_default();
    header.extend(
        keys.iter()
            .map(|k| super::csv::quote(&format!("parameter_{k}"))),
    );
    writeln!(out, "{}", header.join(","))?;
    for r in results {
        let mut fields = vec![super::csv::quote(&r.command)];
        let figures = [r.mean, r.stddev.unwrap_or(0.0), r.median, r.user, r.system];
        fields.extend(figures.iter().chain([&r.min, &r.max]).map(f64::to_string));
        fields.extend(r.parameters.values().map(|v| super::csv::quote(v)));
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}

/// How one markup language writes a table.
struct Markup {
    /// Before the header row.
    opening: fn(columns: usize) -> String,
    row: fn(cells: &[String]) -> String,
    /// Between the header row and the rows.
    divider: fn(columns: usize) -> String,
    closing: &'static str,
    /// A command as code: `|` escaped as hyperfine does, control characters shown as symbols
    /// and tags defused, as in latkit's own markdown.
    code: fn(&str) -> String,
}

const MARKDOWN: Markup = Markup {
    opening: |_| String::new(),
    row: |cells| format!("| {} |\n", cells.join(" | ")),
    divider: |columns| format!("|:---|{}\n", "---:|".repeat(columns - 1)),
    closing: "",
    code: super::markdown::code,
};

const ASCIIDOC: Markup = Markup {
    opening: |columns| format!("[cols=\"<{}\"]\n|===", ",>".repeat(columns - 1)),
    row: |cells| format!("\n| {} \n", cells.join(" \n| ")),
    divider: |_| String::new(),
    closing: "|===\n",
    // A backtick would close the span: its character reference shows it instead.
    code: |command| {
        let text = crate::error::visible(command);
        format!("`{}`", text.replace('|', "\\|").replace('`', "&#96;"))
    },
};

const ORGMODE: Markup = Markup {
    opening: |_| String::new(),
    row: |cells| format!("| {}  |  {} |\n", cells[0], cells[1..].join(" |  ")),
    divider: |columns| format!("|{}--|\n", "--+".repeat(columns - 1)),
    closing: "",
    code: |command| format!("={}=", super::markdown::escape(command)),
};

impl Export {
    /// hyperfine's summary table: command, mean ± σ, min, max, and the speed relative to the
    /// fastest mean (± its propagated σ).
    fn table(&self, results: &[Result_], layout: Layout) -> String {
        let markup = match layout {
            Layout::Asciidoc => ASCIIDOC,
            Layout::Orgmode => ORGMODE,
            _ => MARKDOWN,
        };
        let unit = self
            .unit
            .unwrap_or_else(|| TimeUnit::suiting(results.first().map_or(1.0, |r| r.mean)));
        let short = unit.short();
        let header = [
            "Command".to_string(),
            format!("Mean [{short}]"),
            format!("Min [{short}]"),
            format!("Max [{short}]"),
            "Relative".to_string(),
        ];
        let mut text = (markup.opening)(header.len()) + &(markup.row)(&header);
        text += &(markup.divider)(header.len());
        let fastest = results.iter().min_by(|a, b| a.mean.total_cmp(&b.mean));
        let mut order: Vec<&Result_> = results.iter().collect();
        if self.sort == Sort::MeanTime {
            order.sort_by(|a, b| a.mean.total_cmp(&b.mean));
        }
        for r in order {
            let spread = r
                .stddev
                .map_or_else(String::new, |s| format!(" ± {}", unit.format(s)));
            let cells = [
                (markup.code)(&r.command),
                format!("{}{spread}", unit.format(r.mean)),
                unit.format(r.min),
                unit.format(r.max),
                fastest.map_or_else(String::new, |f| relative(r, f)),
            ];
            text += &(markup.row)(&cells);
        }
        text + markup.closing
    }
}

/// hyperfine's relative speed of `r` against `reference`: how many times slower (or faster)
/// its mean is, ± the σ the two means' σ propagate to (as independent); the reference bare.
fn relative(r: &Result_, reference: &Result_) -> String {
    if std::ptr::eq(r, reference) {
        return "1.00".into();
    }
    if r.mean == 0.0 {
        return "inf".into();
    }
    let ratio = match r.mean.total_cmp(&reference.mean) {
        std::cmp::Ordering::Less => reference.mean / r.mean,
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Greater => r.mean / reference.mean,
    };
    match (r.stddev, reference.stddev) {
        (Some(own), Some(theirs)) => {
            let sigma = ratio * ((own / r.mean).powi(2) + (theirs / reference.mean).powi(2)).sqrt();
            format!("{ratio:.2} ± {sigma:.2}")
        }
        _ => format!("{ratio:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result with hyperfine's summary figures (times stand in: tables do not show them).
    fn result(command: &str, mean: f64, stddev: f64, min: f64, max: f64) -> Result_ {
        Result_ {
            command: command.into(),
            mean,
            stddev: Some(stddev),
            median: mean,
            user: 0.0009,
            system: 0.0011,
            min,
            max,
            times: vec![mean; 3],
            memory_usage_byte: None,
            exit_codes: vec![Some(0); 3],
            parameters: BTreeMap::new(),
        }
    }

    fn table(layout: Layout, unit: Option<TimeUnit>, sort: Sort, results: &[Result_]) -> String {
        let export = Export { layout, unit, sort };
        export.table(results, layout)
    }

    /// The figures and expected tables are those of hyperfine's own export tests
    /// (sharkdp/hyperfine src/export/tests.rs, `test_markup_export_auto_ms`).
    #[test]
    fn markup_tables_are_hyperfines() {
        let results = [
            result("sleep 0.1", 0.1057, 0.0016, 0.1023, 0.1080),
            result("sleep 2", 2.0050, 0.0020, 2.0020, 2.0080),
        ];
        let markdown = table(Layout::Markdown, None, Sort::Command, &results);
        assert_eq!(
            markdown,
            "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |\n\
             |:---|---:|---:|---:|---:|\n\
             | `sleep 0.1` | 105.7 ± 1.6 | 102.3 | 108.0 | 1.00 |\n\
             | `sleep 2` | 2005.0 ± 2.0 | 2002.0 | 2008.0 | 18.97 ± 0.29 |\n"
        );
        let asciidoc = table(Layout::Asciidoc, None, Sort::Command, &results);
        assert_eq!(
            asciidoc,
            "[cols=\"<,>,>,>,>\"]\n|===\n| Command \n| Mean [ms] \n| Min [ms] \n| Max [ms] \n\
             | Relative \n\n| `sleep 0.1` \n| 105.7 ± 1.6 \n| 102.3 \n| 108.0 \n| 1.00 \n\n\
             | `sleep 2` \n| 2005.0 ± 2.0 \n| 2002.0 \n| 2008.0 \n| 18.97 ± 0.29 \n|===\n"
        );
        let orgmode = table(Layout::Orgmode, None, Sort::Command, &results);
        assert_eq!(
            orgmode,
            "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |\n\
             |--+--+--+--+--|\n\
             | =sleep 0.1=  |  105.7 ± 1.6 |  102.3 |  108.0 |  1.00 |\n\
             | =sleep 2=  |  2005.0 ± 2.0 |  2002.0 |  2008.0 |  18.97 ± 0.29 |\n"
        );
    }

    /// The first command's mean picks the unit; -u overrides it; --sort mean-time puts the
    /// fastest first (hyperfine's `test_markup_export_auto_s`, `_manual_ms`).
    #[test]
    fn the_unit_follows_the_first_mean_or_time_unit_and_sort_orders_rows() {
        let results = [
            result("sleep 2", 2.0050, 0.0020, 2.0020, 2.0080),
            result("a|b", 0.1057, 0.0016, 0.1023, 0.1080),
        ];
        let seconds = table(Layout::Markdown, None, Sort::Command, &results);
        assert!(
            seconds.contains("| `sleep 2` | 2.005 ± 0.002 | 2.002 | 2.008 | 18.97 ± 0.29 |\n")
                && seconds.contains("| `a\\|b` | 0.106 ± 0.002 | 0.102 | 0.108 | 1.00 |\n"),
            "{seconds}"
        );
        let ms = table(
            Layout::Markdown,
            Some(TimeUnit::Millisecond),
            Sort::MeanTime,
            &results,
        );
        let rows: Vec<&str> = ms.lines().skip(2).collect();
        assert_eq!(
            rows,
            [
                "| `a\\|b` | 105.7 ± 1.6 | 102.3 | 108.0 | 1.00 |",
                "| `sleep 2` | 2005.0 ± 2.0 | 2002.0 | 2008.0 | 18.97 ± 0.29 |"
            ]
        );
        // A name's control characters never reach the file as such, and a tag stays inside
        // its code span, which shows it as text; a backtick in it does not close the span.
        let hostile = [result("x\u{1b}[2Jy <script>", 0.1, 0.01, 0.09, 0.11)];
        let shown = table(Layout::Markdown, None, Sort::Command, &hostile);
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("[2Jy <script>` |"), "{shown}");
        let ticked = [result("a`b", 0.1, 0.01, 0.09, 0.11)];
        let shown = table(Layout::Markdown, None, Sort::Command, &ticked);
        assert!(shown.contains("| ``a`b`` |"), "{shown}");
        let us = table(
            Layout::Orgmode,
            Some(TimeUnit::Microsecond),
            Sort::Command,
            &results,
        );
        assert!(
            us.contains("Mean [µs]") && us.contains("105700.0 ± 1600.0"),
            "{us}"
        );
    }

    #[test]
    fn csv_is_hyperfines_summary_in_seconds_with_parameter_columns() {
        let mut one = result("sleep 0.1", 0.1057, 0.0016, 0.1023, 0.1080);
        one.parameters.insert("t".into(), "0.1".into());
        one.stddev = None;
        let mut out = Vec::new();
        csv(&[one], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "command,mean,stddev,median,user,system,min,max,parameter_t\n\
             sleep 0.1,0.1057,0,0.1057,0.0009,0.0011,0.1023,0.108,0.1\n"
        );
    }
}
