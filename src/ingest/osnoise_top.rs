//! `rtla osnoise top`: per CPU, the operating-system noise the osnoise tracer saw — how many
//! periods, the runtime and the noise in them, the CPU left to the workload, the largest noise
//! in a period and in one occurrence, and how many interferences of each kind — as printed
//! (the last screen of a live run, or `-q`'s single one).

use super::problems::Place;
use super::rtla::on_screen;
use super::timer_common::timer_input;
use super::{Input, InputFormat, Named, Parsed, for_each_text_line};
use crate::error::Result;
use crate::model::{BenchName, Better, RunBuilder};
use std::collections::BTreeMap;
use std::io::BufRead;

/// More CPUs than any machine has: a larger CPU number is a damaged row.
const MAX_CPU: usize = 4096;
/// The largest figure a row may hold (µs or ns): beyond it the row is damaged.
const MAX_FIGURE: f64 = 1e15;

/// The figures of a row after the CPU and `#periods`, in rtla's order: (metric, kind).
const FIGURES: [(&str, Figure); 10] = [
    ("runtime", Figure::Time),
    ("noise", Figure::Time),
    ("cpu_available", Figure::Percent),
    ("max_noise", Figure::Time),
    ("max_single", Figure::Time),
    ("hw", Figure::Count),
    ("nmi", Figure::Count),
    ("irq", Figure::Count),
    ("softirq", Figure::Count),
    ("thread", Figure::Count),
];

#[derive(Clone, Copy)]
enum Figure {
    Time,
    Percent,
    Count,
}

/// `rtla osnoise top` output as an input format.
pub struct OsnoiseTop;

impl InputFormat for OsnoiseTop {
    fn name(&self) -> &'static str {
        "osnoise-top"
    }

    fn describe(&self) -> &'static str {
        "`rtla osnoise top` output (`Operating System Noise`, `CPU Period Runtime Noise …`)"
    }

    fn detect(&self, head: &str) -> bool {
        head.contains("Operating System Noise")
            && head
                .lines()
                .any(|l| on_screen(l).trim_start().starts_with("CPU Period"))
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = Parser {
            place: Place::new(input.path),
            unit: "us",
            rows: BTreeMap::new(),
        };
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        let mut input = timer_input(parser.finish(), input, self)?;
        // rtla's columns are figures of equal standing, side by side as it prints them.
        input.runs[0].peer_metrics = true;
        Ok(input)
    }
}

/// One CPU's row: its periods and the figures after them.
struct Row {
    periods: u64,
    figures: Vec<f64>,
}

struct Parser {
    place: Place,
    /// `time is in us` (or `ns`).
    unit: &'static str,
    /// Each CPU's latest row: a live screen redraws them.
    rows: BTreeMap<usize, Row>,
}

impl Parser {
    fn feed(&mut self, raw: Option<&str>) {
        let Some(raw) = self.place.next(raw) else {
            return;
        };
        let line = on_screen(raw);
        if line.contains("time is in ns") {
            self.unit = "ns";
        } else if line.contains("time is in us") {
            self.unit = "us";
        }
        let mut words = line.split_whitespace();
        let (Some(cpu), Some(periods)) = (words.next(), words.next()) else {
            return;
        };
        let (Ok(cpu), Some(periods)) = (cpu.parse::<usize>(), periods.strip_prefix('#')) else {
            return;
        };
        match row(cpu, periods, words) {
            Ok(row) => {
                self.rows.insert(cpu, row);
            }
            Err(why) => self.place.skip(why),
        }
    }

    fn finish(self) -> Parsed {
        let mut builder = RunBuilder::default();
        for (cpu, row) in &self.rows {
            let bench = builder.benchmark(&format!("cpu{cpu}"), None, BenchName::plain);
            builder.record(bench, "periods", "", row.periods as f64);
            for ((name, figure), &value) in FIGURES.iter().zip(&row.figures) {
                let unit = match figure {
                    Figure::Time => self.unit,
                    Figure::Percent => "%",
                    Figure::Count => "",
                };
                builder.record(bench, name, unit, value);
            }
        }
        // The share of CPU left to the workload is the one figure where more is better.
        builder.set_better("%", Better::Higher);
        Parsed::of_results(builder, self.place.skipped, &self.place.file, Vec::new())
    }
}

/// `#59  53100000  304896  99.42580  6978  56  549  0  53111  1590  13` after the CPU.
fn row<'a>(
    cpu: usize,
    periods: &str,
    figures: impl Iterator<Item = &'a str>,
) -> std::result::Result<Row, String> {
    if cpu >= MAX_CPU {
        return Err(format!(
            "CPU {cpu} is beyond the {MAX_CPU} CPUs latkit reads"
        ));
    }
    let periods = periods
        .parse::<u64>()
        .map_err(|_| "the count after `#` is not a number of periods; row skipped".to_string())?;
    let figures: Vec<f64> = figures
        .map(|w| {
            w.parse::<f64>()
                .ok()
                .filter(|v| (0.0..=MAX_FIGURE).contains(v))
        })
        .collect::<Option<_>>()
        .ok_or("a figure that is not a non-negative number; row skipped")?;
    if figures.len() != FIGURES.len() {
        return Err(format!(
            "{} figures after the periods where {} were expected (runtime, noise, % CPU aval, \
             max noise, max single, HW, NMI, IRQ, softirq, thread); row skipped",
            figures.len(),
            FIGURES.len()
        ));
    }
    Ok(Row { periods, figures })
}
