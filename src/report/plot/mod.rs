//! Plots as SVG (plotters' SVG backend): drawn from histograms, summaries and the derived
//! tables, never from individual samples, so a run of millions of samples draws as fast as
//! one of ten. Colours are the Okabe-Ito palette, distinguishable with colour-blindness.

mod bars;
mod compare;
mod histogram;
mod series;
mod spectrum;
mod trend;

pub(super) use histogram::{Bins, bins};

use super::Table;
use crate::analyze::Report;
use crate::model::vocab;
use crate::model::{Benchmark, Metric};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::io;

/// What a plot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// Latency by percentile, HdrHistogram style (x: 90 %, 99 %, 99.9 %, ... on a log scale).
    Spectrum,
    /// How often each latency occurred, linear and log counts.
    Histogram,
    /// A timer run's per-second minimum, average and maximum (and overruns).
    Series,
    /// Each benchmark's median with its 95 % interval (as % of the baseline when there is
    /// one), and attribution shares as stacked bars.
    Bars,
    /// `latkit compare`: each benchmark's change against the base, significant ones coloured.
    Compare,
    /// `latkit history`: a benchmark's figure run by run, its interval band, change points.
    Trend,
    /// A latency budget: its stages stacked against the total.
    Budget,
}

impl PlotKind {
    pub const ALL: [PlotKind; 7] = [
        PlotKind::Spectrum,
        PlotKind::Histogram,
        PlotKind::Series,
        PlotKind::Bars,
        PlotKind::Compare,
        PlotKind::Trend,
        PlotKind::Budget,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PlotKind::Spectrum => "spectrum",
            PlotKind::Histogram => "histogram",
            PlotKind::Series => "series",
            PlotKind::Bars => "bars",
            PlotKind::Compare => "compare",
            PlotKind::Trend => "trend",
            PlotKind::Budget => "budget",
        }
    }
}

/// One drawn plot: its title (also its text alternative's heading) and the SVG.
pub struct Plot {
    pub kind: PlotKind,
    pub title: String,
    pub svg: String,
}

/// Okabe-Ito, without the yellow that vanishes on white.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(0, 0, 0),
];
const GREY: RGBColor = RGBColor(153, 153, 153);
const WORSE: RGBColor = RGBColor(213, 94, 0);
const BETTER: RGBColor = RGBColor(0, 114, 178);
const SIZE: (u32, u32) = (1000, 520);
/// More lines than this on one plot are unreadable; the table beside it has them all.
const MAX_SERIES: usize = 8;
/// Plots of one kind in an HTML report; the tables hold the rest.
pub const MAX_PLOTS_PER_KIND: usize = 6;
const FONT: &str = "sans-serif";
/// A chart with linear x and y axes.
type Linear =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;

/// An axis label: `latency (µs)`, or the unit alone for metrics named by their unit (Go's
/// `ns/op` drawn in µs/op is labelled `µs/op`).
fn axis_label(metric: &str, symbol: &str) -> String {
    if metric.contains('/') {
        symbol.to_string()
    } else {
        format!("{metric} ({symbol})")
    }
}

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Every plot the report has data for, in kind order, at most `per_kind` of each (the
/// tables hold the rest); one that could not be drawn is its error, never left out in silence.
pub fn all(report: &Report, per_kind: usize) -> Vec<io::Result<Plot>> {
    PlotKind::ALL
        .iter()
        .flat_map(|kind| of_kind(report, *kind, per_kind))
        .collect()
}

/// The first `at_most` plots of `kind` the report has data for (none when it has none), each
/// drawn or the error that stopped it. Only those are drawn: a report of thousands of
/// benchmarks costs the plots it shows, not one per benchmark.
pub fn of_kind(report: &Report, kind: PlotKind, at_most: usize) -> Vec<io::Result<Plot>> {
    let drawn: Vec<_> = match kind {
        PlotKind::Spectrum => spectrum::spectrum(report).into_iter().collect(),
        PlotKind::Histogram => distributions(report)
            .into_iter()
            .filter_map(|d| histogram::histogram(&d).transpose())
            .take(at_most)
            .collect(),
        PlotKind::Series => series::timer_series(report),
        PlotKind::Bars => report
            .tables
            .iter()
            .flat_map(|t| bars::bars(report, t))
            .take(at_most)
            .collect(),
        PlotKind::Compare => report
            .tables
            .iter()
            .filter_map(|t| compare::compare(t).transpose())
            .take(at_most)
            .collect(),
        PlotKind::Trend => report
            .tables
            .iter()
            .filter_map(|t| trend::trend(t).transpose())
            .take(at_most)
            .collect(),
        PlotKind::Budget => bars::budget(report).into_iter().collect(),
    };
    finish(kind, drawn.into_iter().take(at_most).collect())
}

/// Drawn plots as [`Plot`]s, errors kept.
fn finish(kind: PlotKind, drawn: Vec<io::Result<(String, String)>>) -> Vec<io::Result<Plot>> {
    drawn
        .into_iter()
        .map(|r| {
            // Names from the input reach labels and titles: a control character there is no
            // valid XML.
            r.map(|(title, svg)| Plot {
                kind,
                title,
                svg: crate::error::visible_keeping_lines(&svg),
            })
            .map_err(|e| io::Error::other(format!("the {} plot: {e}", kind.name())))
        })
        .collect()
}

/// The largest magnitude an axis may reach: beyond it a span, or the steps plotters takes
/// across it to place its labels, is no longer finite.
const LARGEST: f64 = 1e300;

/// `low..high` as an axis, or why not. plotters steps across an axis to place its labels, and
/// never ends on an infinite one: one value of ±1.8e308 allocs/op made a report hang. A
/// plot that cannot be drawn is a note, never a loop.
pub(super) fn axis(low: f64, high: f64) -> io::Result<std::ops::Range<f64>> {
    let fits = |v: f64| v.is_finite() && v.abs() < LARGEST;
    match fits(low) && fits(high) && fits(high - low) && low < high {
        true => Ok(low..high),
        false => Err(io::Error::other(format!(
            "its values span {low:e} to {high:e}, which no axis can show"
        ))),
    }
}

fn draw_error<E: std::fmt::Debug>(e: E) -> io::Error {
    io::Error::other(format!("drawing a plot: {e:?}"))
}

/// Draws on a fresh SVG of [`SIZE`] with a white background.
fn svg(draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> io::Result<()>) -> io::Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        draw(&root)?;
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// A distribution to draw: its label and metric.
struct Dist<'a> {
    label: String,
    metric: &'a Metric,
}

fn distributions(report: &Report) -> Vec<Dist<'_>> {
    let several_runs = report.runs.len() > 1;
    let mut out = Vec::new();
    for (i, run) in report.runs.iter().enumerate() {
        for bench in &run.benchmarks {
            for metric in bench.metrics.iter().filter(|m| m.histogram.is_some()) {
                out.push(Dist {
                    label: dist_label(bench, metric, several_runs.then_some(i + 1)),
                    metric,
                });
            }
        }
    }
    out
}

pub(super) fn dist_label(bench: &Benchmark, metric: &Metric, run: Option<usize>) -> String {
    let mut label = bench.name.full_name.clone();
    if metric.name != vocab::LATENCY {
        label.push_str(&format!(" {}", metric.name));
    }
    if let Some(run) = run {
        label.push_str(&format!(" (run {run})"));
    }
    label
}

/// The value at quantile `q`, clamped to the metric's true extremes (bucket edges can lie
/// outside them).
fn value_at(metric: &Metric, q: f64) -> Option<f64> {
    let hist = metric.histogram.as_ref()?.histogram();
    let mut value = hist.value_at_quantile(q) as f64;
    if let Some(p) = &metric.percentiles {
        value = value.clamp(p.min, p.max);
    }
    Some(value)
}

fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> io::Result<()>
where
    CT::From: Clone,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font((FONT, 13))
        .draw()
        .map_err(draw_error)
}

/// A tick on a linear axis: at most two decimals, no trailing zeros, and never `-0` (a tick
/// computed a hair below zero).
fn tick(x: f64) -> String {
    let x = if x.abs() < 1e-9 { 0.0 } else { x };
    let text = format!("{x:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Long benchmark names cut for an axis; the table beside the plot has them whole.
fn short(name: &str) -> String {
    const MAX: usize = 40;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let tail: String = name
            .chars()
            .rev()
            .take(MAX - 1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    }
}

/// The 95 % interval in column `col` of `row`, when there is one.
fn interval_in(row: &crate::report::Row, col: Option<usize>) -> Option<(f64, f64)> {
    match &row.cells[col?] {
        crate::report::Cell::Spread {
            interval: Some(iv), ..
        } => Some((iv.low, iv.high)),
        _ => None,
    }
}

fn column(table: &Table, key: &str) -> Option<usize> {
    table.columns.iter().position(|c| c.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plot_that_cannot_be_drawn_is_its_error() {
        let drawn = vec![
            Ok(("t".to_string(), "<svg/>".to_string())),
            Err(draw_error("range is empty")),
        ];
        let plots = finish(PlotKind::Bars, drawn);
        assert!(plots[0].is_ok());
        let Err(err) = &plots[1] else {
            panic!("the failed plot was left out or drawn")
        };
        let err = err.to_string();
        assert!(
            err.contains("bars plot") && err.contains("range is empty"),
            "{err}"
        );
    }
}
