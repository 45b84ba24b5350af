//! Plots as SVG (plotters' SVG backend): drawn from histograms, summaries and the derived
//! tables, never from individual samples, so a run of millions of samples draws as fast as
//! one of ten. Colours are the Okabe-Ito palette, distinguishable with colour-blindness.

use super::{Cell, ChangeVerdict, Report, Table, keys};
use crate::model::vocab;
use crate::model::{Benchmark, Metric, MetricKind, Unit};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::HashSet;
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
const SIZE: (u32, u32) = (860, 440);
/// More lines than this on one plot are unreadable; the table beside it has them all.
const MAX_SERIES: usize = 8;
/// Plots of one kind in an HTML report; the tables hold the rest.
const MAX_PLOTS_PER_KIND: usize = 6;
const FONT: &str = "sans-serif";

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

/// Every plot the report has data for, in kind order; one that could not be drawn is its
/// error, never left out in silence.
pub fn all(report: &Report) -> Vec<io::Result<Plot>> {
    PlotKind::ALL
        .iter()
        .flat_map(|kind| {
            let mut plots = of_kind(report, *kind);
            plots.truncate(MAX_PLOTS_PER_KIND);
            plots
        })
        .collect()
}

/// The plots of `kind` the report has data for (none when it has none), each drawn or the
/// error that stopped it.
pub fn of_kind(report: &Report, kind: PlotKind) -> Vec<io::Result<Plot>> {
    let drawn = match kind {
        PlotKind::Spectrum => spectrum(report).into_iter().collect(),
        PlotKind::Histogram => distributions(report)
            .into_iter()
            .filter_map(|d| histogram(&d).transpose())
            .collect(),
        PlotKind::Series => timer_series(report),
        PlotKind::Bars => report.tables.iter().flat_map(|t| bars(report, t)).collect(),
        PlotKind::Compare => report
            .tables
            .iter()
            .filter_map(|t| compare(t).transpose())
            .collect(),
        PlotKind::Trend => report
            .tables
            .iter()
            .filter_map(|t| trend(t).transpose())
            .collect(),
        PlotKind::Budget => budget(report).into_iter().collect(),
    };
    finish(kind, drawn)
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

/// `0.999` → `99.9%`.
fn percent_label(nines: f64) -> String {
    let percent = 100.0 * (1.0 - 10f64.powf(-nines));
    let text = format!("{percent:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

/// The value at quantile `q`, clamped to the metric's true extremes (bucket edges can lie
/// outside them).
fn value_at(metric: &Metric, q: f64) -> Option<f64> {
    let hist = &metric.histogram.as_ref()?.0;
    let mut value = hist.value_at_quantile(q) as f64;
    if let Some(p) = &metric.percentiles {
        value = value.clamp(p.min, p.max);
    }
    Some(value)
}

fn spectrum(report: &Report) -> Option<io::Result<(String, String)>> {
    let dists: Vec<Dist> = distributions(report)
        .into_iter()
        .filter(|d| d.metric.histogram.as_ref().is_some_and(|h| !h.0.is_empty()))
        .take(MAX_SERIES)
        .collect();
    let first = dists.first()?;
    // As many nines as the samples can resolve: 10^k samples reach 1 − 10^−k.
    let most = dists
        .iter()
        .map(|d| d.metric.histogram.as_ref().map_or(0, |h| h.0.len()))
        .max()
        .unwrap_or(1);
    let nines = (most as f64).log10().floor().clamp(1.0, 6.0);
    let top = dists
        .iter()
        .filter_map(|d| value_at(d.metric, 1.0))
        .fold(0.0, f64::max);
    let (divisor, symbol) = first.metric.unit.scale(top);
    // A log axis: on a linear one a tail 100 times the median flattens the body to a line.
    let bottom = dists
        .iter()
        .filter_map(|d| value_at(d.metric, 0.0))
        .fold(top, f64::min)
        .max(top * 1e-6)
        / divisor;
    let title = format!("{} by percentile", first.metric.name);
    let lines: Vec<(String, Vec<(f64, f64)>)> = dists
        .iter()
        .map(|d| {
            let points = (0..=200)
                .map(|i| nines * i as f64 / 200.0)
                .filter_map(|x| {
                    let q = 1.0 - 10f64.powf(-x);
                    value_at(d.metric, q).map(|v| (x, v / divisor))
                })
                .collect();
            (d.label.clone(), points)
        })
        .collect();
    let drawn = svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 20))
            .margin(12)
            .margin_right(36)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(
                0f64..nines,
                ((bottom * 0.9).max(1e-12)..(top / divisor * 1.1).max(1e-9)).log_scale(),
            )
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(nines as usize + 1)
            .x_label_formatter(&|x| percent_label(*x))
            .x_desc("percentile")
            .y_desc(format!("{} (log)", axis_label(&first.metric.name, &symbol)))
            .draw()
            .map_err(draw_error)?;
        for (i, (label, points)) in lines.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                .map_err(draw_error)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    });
    Some(drawn.map(|svg| (title, svg)))
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

/// Bins of a histogram plot.
const BINS: usize = 60;

/// Equal bins from the smallest value to the body's end, the tail beyond counted in the
/// last, from the histogram's buckets (never per sample).
pub(super) struct Bins {
    pub low: f64,
    pub high: f64,
    /// The percentile the bins end at: `p99.9`, or `p99` or `p90` when the samples above are
    /// so far out that the rest would share the first bars (cyclictest's overflowed samples,
    /// counted at the maximum).
    pub end: &'static str,
    pub counts: Vec<u64>,
}

pub(super) fn bins(metric: &Metric, n: usize) -> Option<Bins> {
    let hist = &metric.histogram.as_ref()?.0;
    if hist.is_empty() || n == 0 {
        return None;
    }
    let low = value_at(metric, 0.0)?;
    // Up from p90 to p99.9 while the next percentile lies within ten times as far: a few
    // far-out samples must not squeeze the body into the first bars.
    let (mut high, mut end) = (value_at(metric, 0.9)?, "p90");
    for (q, name) in [(0.99, "p99"), (0.999, "p99.9")] {
        let next = value_at(metric, q)?;
        if next - low > 10.0 * (high - low).max(high.abs() * 0.1) {
            break;
        }
        (high, end) = (next, name);
    }
    let high = high.max(low + 1.0);
    let width = (high - low) / n as f64;
    let mut counts = vec![0u64; n];
    for v in hist.iter_recorded() {
        let value = hist.median_equivalent(v.value_iterated_to()) as f64;
        let bin = (((value - low) / width).floor().max(0.0) as usize).min(n - 1);
        counts[bin] += v.count_at_value();
    }
    Some(Bins {
        low,
        high,
        end,
        counts,
    })
}

fn histogram(dist: &Dist) -> io::Result<Option<(String, String)>> {
    let Some(Bins {
        low,
        high,
        end,
        counts,
    }) = bins(dist.metric, BINS)
    else {
        return Ok(None);
    };
    let width = (high - low) / BINS as f64;
    let (divisor, symbol) = dist.metric.unit.scale(high);
    let most = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let title = format!("{} histogram", dist.label);
    let bars: Vec<(f64, f64, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let x0 = (low + i as f64 * width) / divisor;
            (x0, x0 + width / divisor, n as f64)
        })
        .collect();
    let x_range = (low / divisor)..(high / divisor).max(low / divisor + 1e-9);
    let x_desc = format!(
        "{} ({symbol}); the last bar holds everything above {end}",
        dist.metric.name
    );
    let svg =
        svg(|root| {
            let (left, right) = root.split_horizontally(SIZE.0 / 2);
            let caption = |log: bool| {
                if log {
                    format!("{title} (log count)")
                } else {
                    title.clone()
                }
            };
            {
                let mut chart = ChartBuilder::on(&left)
                    .caption(caption(false), (FONT, 16))
                    .margin(10)
                    .x_label_area_size(44)
                    .y_label_area_size(60)
                    .build_cartesian_2d(x_range.clone(), 0f64..most * 1.05)
                    .map_err(draw_error)?;
                chart
                    .configure_mesh()
                    .x_labels(5)
                    .x_desc(&x_desc)
                    .y_desc("count")
                    .y_label_formatter(&|y| format!("{y:.0}"))
                    .draw()
                    .map_err(draw_error)?;
                chart
                    .draw_series(bars.iter().map(|&(x0, x1, n)| {
                        Rectangle::new([(x0, 0.0), (x1, n)], color(0).filled())
                    }))
                    .map_err(draw_error)?;
            }
            let mut chart = ChartBuilder::on(&right)
                .caption(caption(true), (FONT, 16))
                .margin(10)
                .x_label_area_size(44)
                .y_label_area_size(60)
                .build_cartesian_2d(x_range, (0.5f64..most * 2.0).log_scale())
                .map_err(draw_error)?;
            chart
                .configure_mesh()
                .x_labels(5)
                .x_desc(&x_desc)
                .y_desc("count (log)")
                .y_label_formatter(&|y| format!("{y:.0}"))
                .draw()
                .map_err(draw_error)?;
            chart
                .draw_series(
                    bars.iter().filter(|b| b.2 > 0.0).map(|&(x0, x1, n)| {
                        Rectangle::new([(x0, 0.5), (x1, n)], color(1).filled())
                    }),
                )
                .map_err(draw_error)?;
            Ok(())
        })?;
    Ok(Some((title, svg)))
}

fn series_metric<'a>(bench: &'a Benchmark, name: &str) -> Option<&'a Metric> {
    bench
        .metrics
        .iter()
        .find(|m| m.kind == MetricKind::Series && m.name == name)
}

fn timer_series(report: &Report) -> Vec<io::Result<(String, String)>> {
    let mut out = Vec::new();
    for run in &report.runs {
        for bench in &run.benchmarks {
            let lines: Vec<(&str, &Metric)> = [
                vocab::INTERVAL_MAX,
                vocab::INTERVAL_AVG,
                vocab::INTERVAL_MIN,
            ]
            .iter()
            .filter_map(|n| series_metric(bench, n).map(|m| (*n, m)))
            .filter(|(_, m)| !m.values.is_empty())
            .collect();
            let Some((_, first)) = lines.first() else {
                continue;
            };
            out.push(series(bench, first.unit.clone(), &lines));
        }
    }
    out
}

fn series(
    bench: &Benchmark,
    unit: Unit,
    lines: &[(&str, &Metric)],
) -> io::Result<(String, String)> {
    let seconds = lines.iter().map(|(_, m)| m.values.len()).max().unwrap_or(1);
    let top = lines
        .iter()
        .flat_map(|(_, m)| m.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (divisor, symbol) = unit.scale(top);
    let overruns: Vec<f64> = series_metric(bench, vocab::OVERRUNS)
        .map(|m| m.values.clone())
        .unwrap_or_default();
    let total_overruns: f64 = overruns.iter().sum();
    let title = format!(
        "{} per second{}",
        bench.name.full_name,
        if total_overruns > 0.0 {
            format!(" ({total_overruns} overruns)")
        } else {
            String::new()
        }
    );
    let svg = svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .right_y_label_area_size(if total_overruns > 0.0 { 50 } else { 0 })
            .build_cartesian_2d(
                1f64..(seconds as f64).max(2.0),
                0f64..(top / divisor * 1.05).max(1e-9),
            )
            .map_err(draw_error)?
            .set_secondary_coord(
                1f64..(seconds as f64).max(2.0),
                0f64..overruns.iter().copied().fold(1.0, f64::max) * 1.1,
            );
        chart
            .configure_mesh()
            .x_desc("second")
            .y_desc(format!("latency ({symbol})"))
            .draw()
            .map_err(draw_error)?;
        for (i, (name, metric)) in lines.iter().enumerate() {
            let c = color(i);
            let label = name.trim_start_matches("interval_").to_string();
            chart
                .draw_series(LineSeries::new(
                    metric
                        .values
                        .iter()
                        .enumerate()
                        .map(|(s, v)| ((s + 1) as f64, v / divisor)),
                    c.stroke_width(2),
                ))
                .map_err(draw_error)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        if total_overruns > 0.0 {
            chart
                .configure_secondary_axes()
                .y_desc("overruns")
                .draw()
                .map_err(draw_error)?;
            chart
                .draw_secondary_series(
                    overruns
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| **n > 0.0)
                        .map(|(s, n)| Cross::new(((s + 1) as f64, *n), 5, WORSE.stroke_width(2))),
                )
                .map_err(draw_error)?
                .label("overruns")
                .legend(|(x, y)| Cross::new((x + 9, y), 5, WORSE.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })?;
    Ok((title, svg))
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

fn column(table: &Table, key: &str) -> Option<usize> {
    table.columns.iter().position(|c| c.key == key)
}

/// Horizontal bars, one per category top to bottom: `(label, segments, whisker)` with
/// segments `(from, to, colour)` and an optional `(low, high)` interval.
type Bar = (String, Vec<(f64, f64, RGBColor)>, Option<(f64, f64)>);

fn horizontal_bars(
    title: &str,
    x_desc: &str,
    bars: &[Bar],
    legend_entries: &[(&str, RGBColor)],
) -> io::Result<String> {
    let low = bars
        .iter()
        .flat_map(|(_, segments, whisker)| {
            segments
                .iter()
                .map(|s| s.0.min(s.1))
                .chain(whisker.iter().map(|w| w.0))
        })
        .fold(0.0, f64::min);
    let high = bars
        .iter()
        .flat_map(|(_, segments, whisker)| {
            segments
                .iter()
                .map(|s| s.0.max(s.1))
                .chain(whisker.iter().map(|w| w.1))
        })
        .fold(0.0, f64::max);
    let span = (high - low).max(1e-9);
    let room = if legend_entries.is_empty() {
        0.08
    } else {
        0.45
    };
    let labels: Vec<String> = bars.iter().map(|b| short(&b.0)).collect();
    let n = bars.len().max(1);
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4);
    let height = (n as u32 * 34 + 110).max(200);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size((longest as u32 * 7 + 16).min(320))
            // Room on the right for a legend, so that it never covers a bar.
            .build_cartesian_2d((low - span * 0.05)..(high + span * room), 0f64..n as f64)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|y| {
                // Labels sit at the middle of each band, top to bottom.
                let band = n as f64 - y - 0.5;
                if (band - band.round()).abs() < 1e-6 && band >= 0.0 {
                    labels
                        .get(band.round() as usize)
                        .cloned()
                        .unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .draw()
            .map_err(draw_error)?;
        for (i, (_, segments, whisker)) in bars.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            chart
                .draw_series(segments.iter().map(|&(from, to, c)| {
                    Rectangle::new([(from, y + 0.2), (to, y + 0.8)], c.filled())
                }))
                .map_err(draw_error)?;
            if let Some((lo, hi)) = whisker {
                let mid = segments.last().map_or(*lo, |s| s.1);
                chart
                    .draw_series(std::iter::once(ErrorBar::new_horizontal(
                        y + 0.5,
                        *lo,
                        mid,
                        *hi,
                        BLACK.stroke_width(2),
                        10,
                    )))
                    .map_err(draw_error)?;
            }
        }
        for &(name, c) in legend_entries {
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
                .map_err(draw_error)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
        }
        if !legend_entries.is_empty() {
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// Median bars with 95 % whiskers (as % of the baseline when the table has that column),
/// then part/rest stacks when it has attribution shares.
fn bars(report: &Report, table: &Table) -> Vec<io::Result<(String, String)>> {
    // Medians over repetitions or runs, not comparisons or histories.
    if column(table, keys::COUNT).is_none() && column(table, keys::RUNS).is_none() {
        return Vec::new();
    }
    // The harness's own statistics (google/benchmark's `_mean`, `_cv`, `_BigO` rows) are no
    // benchmarks to draw beside the measured ones, and most are in another unit.
    let aggregates: HashSet<&str> = report
        .runs
        .get(table.run)
        .into_iter()
        .flat_map(|r| &r.benchmarks)
        .filter(|b| b.aggregate.is_some())
        .map(|b| b.name.full_name.as_str())
        .collect();
    medians(table, &aggregates)
        .into_iter()
        .chain(attribution(table))
        .collect()
}

fn attribution(table: &Table) -> Option<io::Result<(String, String)>> {
    let (part, rest) = (
        column(table, keys::SHARE_PART)?,
        column(table, keys::SHARE_REST)?,
    );
    let bars: Vec<Bar> = table
        .rows
        .iter()
        .filter_map(|r| match (&r.cells[part], &r.cells[rest]) {
            (Cell::Percent { percent: p }, Cell::Percent { percent: q }) => Some((
                r.benchmark.clone(),
                vec![(0.0, *p, color(0)), (*p, p + q, color(1))],
                None,
            )),
            _ => None,
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let title = format!(
        "{}: attribution (% of each row)",
        table.title.as_deref().unwrap_or_default()
    );
    let legend = [
        (table.columns[part].header.as_str(), color(0)),
        (table.columns[rest].header.as_str(), color(1)),
    ];
    Some(horizontal_bars(&title, "share (%)", &bars, &legend).map(|s| (title, s)))
}

fn medians(table: &Table, aggregates: &HashSet<&str>) -> Option<io::Result<(String, String)>> {
    let value_col = table.columns.iter().enumerate().position(|(i, _)| {
        table
            .rows
            .iter()
            .any(|r| matches!(r.cells[i], Cell::Value { .. }))
    })?;
    let ci = column(table, keys::CI95);
    let pct = column(table, keys::PCT_OF_BASELINE);
    let metric = &table.columns[value_col].header;
    let name = table.title.clone().unwrap_or_default();
    /// A row's median, unit, 95 % interval and % of the baseline.
    struct Median {
        bench: String,
        value: f64,
        unit: Unit,
        interval: Option<(f64, f64)>,
        percent: Option<f64>,
    }
    let values: Vec<Median> = table
        .rows
        .iter()
        .filter(|r| !aggregates.contains(r.benchmark.as_str()))
        .filter_map(|r| match &r.cells[value_col] {
            Cell::Value { value, unit, .. } => Some(Median {
                bench: r.benchmark.clone(),
                value: *value,
                unit: unit.clone(),
                interval: ci.and_then(|c| match &r.cells[c] {
                    Cell::Spread {
                        interval: Some(i), ..
                    } => Some((i.low, i.high)),
                    _ => None,
                }),
                percent: pct.and_then(|c| match r.cells[c] {
                    Cell::Percent { percent } => Some(percent),
                    _ => None,
                }),
            }),
            _ => None,
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let as_percent = values.iter().all(|v| v.percent.is_some());
    let top = values.iter().map(|v| v.value).fold(0.0, f64::max);
    let (divisor, symbol) = values[0].unit.scale(top);
    let bars: Vec<Bar> = values
        .iter()
        .map(|m| {
            // % of the baseline: the interval scales with the value.
            let scale = match m.percent {
                Some(p) if as_percent && m.value != 0.0 => p / m.value,
                _ => 1.0 / divisor,
            };
            (
                m.bench.clone(),
                vec![(0.0, m.value * scale, color(0))],
                m.interval.map(|(lo, hi)| (lo * scale, hi * scale)),
            )
        })
        .collect();
    let prefix = if name.is_empty() {
        String::new()
    } else {
        format!("{name}: ")
    };
    let (title, x_desc) = if as_percent {
        let of = table.columns[pct?].header.clone();
        (
            format!("{prefix}{metric} as {of}"),
            format!("{of}, median with 95% CI"),
        )
    } else {
        (
            format!("{prefix}{metric}"),
            format!("{}, median with 95% CI", axis_label(metric, &symbol)),
        )
    };
    Some(horizontal_bars(&title, &x_desc, &bars, &[]).map(|s| (title, s)))
}

/// Each row's change against the base: coloured when significant (vermillion worse, blue
/// better), grey when within noise.
fn compare(table: &Table) -> io::Result<Option<(String, String)>> {
    if column(table, keys::CHANGE_POINT).is_some() {
        return Ok(None);
    }
    let base = column(table, &keys::value_of(0));
    let value_of = |cell: &Cell| match cell {
        Cell::Value { value, .. } => Some(*value),
        _ => None,
    };
    let mut bars: Vec<Bar> = Vec::new();
    for row in &table.rows {
        for (i, cell) in row.cells.iter().enumerate() {
            if let Cell::Change(change) = cell
                && let Some(p) = change.percent
                && p.is_finite()
                && row.benchmark != "geomean"
            {
                let c = match change.verdict {
                    ChangeVerdict::Significant | ChangeVerdict::Exact if change.is_worse() => WORSE,
                    ChangeVerdict::Significant | ChangeVerdict::Exact => BETTER,
                    _ => GREY,
                };
                // The new side's 95 % interval, as a change from the base's median.
                let key = &table.columns[i].key;
                let interval = key
                    .strip_prefix("change_")
                    .and_then(|n| column(table, &format!("ci95_{n}")))
                    .and_then(|ci| match &row.cells[ci] {
                        Cell::Spread {
                            interval: Some(iv), ..
                        } => Some((iv.low, iv.high)),
                        _ => None,
                    });
                let whisker = match (base.and_then(|b| value_of(&row.cells[b])), interval) {
                    (Some(b), Some((lo, hi))) if b != 0.0 => {
                        Some(((lo / b - 1.0) * 100.0, (hi / b - 1.0) * 100.0))
                    }
                    _ => None,
                };
                bars.push((row.benchmark.clone(), vec![(0.0, p, c)], whisker));
            }
        }
    }
    if bars.is_empty() {
        return Ok(None);
    }
    let title = format!(
        "{}: change against the base",
        table.title.as_deref().unwrap_or("comparison")
    );
    let legend = [
        ("significant, worse", WORSE),
        ("significant, better", BETTER),
        ("~ within noise", GREY),
    ];
    let x_desc = "change from the base median (%), whiskers: the new median's 95% CI";
    horizontal_bars(&title, x_desc, &bars, &legend).map(|svg| Some((title, svg)))
}

/// A history table: the figure run by run with its interval band; change points circled.
fn trend(table: &Table) -> io::Result<Option<(String, String)>> {
    let (Some(value), Some(mark)) = (
        column(table, keys::VALUE),
        column(table, keys::CHANGE_POINT),
    ) else {
        return Ok(None);
    };
    let ci = column(table, keys::CI95);
    let mut points = Vec::new();
    let mut unit = None;
    for (i, row) in table.rows.iter().enumerate() {
        if let Cell::Value {
            value: v, unit: u, ..
        } = &row.cells[value]
        {
            unit.get_or_insert_with(|| u.clone());
            let band = ci.and_then(|c| match &row.cells[c] {
                Cell::Spread {
                    interval: Some(iv), ..
                } => Some((iv.low, iv.high)),
                _ => None,
            });
            let changed = matches!(&row.cells[mark], Cell::Text { text } if !text.is_empty());
            let run = match &row.cells[0] {
                Cell::Text { text } => text.clone(),
                _ => format!("{}", i + 1),
            };
            points.push((i as f64, *v, band, changed, run));
        }
    }
    let Some(unit) = unit else {
        return Ok(None);
    };
    let top = points
        .iter()
        .map(|p| p.2.map_or(p.1, |b| b.1.max(p.1)))
        .fold(0.0, f64::max);
    let (divisor, symbol) = unit.scale(top);
    let title = table.title.clone().unwrap_or_else(|| "history".into());
    let runs: Vec<String> = points.iter().map(|p| p.4.clone()).collect();
    let last = (points.len() as f64 - 1.0).max(1.0);
    let svg = svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.3f64..last + 0.3, 0f64..(top / divisor * 1.1).max(1e-9))
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(points.len().min(12))
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    runs.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("stored run")
            .y_desc(axis_label(&table.columns[value].header, &symbol))
            .draw()
            .map_err(draw_error)?;
        let band: Vec<(f64, f64, f64)> = points
            .iter()
            .filter_map(|p| p.2.map(|b| (p.0, b.0 / divisor, b.1 / divisor)))
            .collect();
        if !band.is_empty() {
            let polygon: Vec<(f64, f64)> = band
                .iter()
                .map(|b| (b.0, b.2))
                .chain(band.iter().rev().map(|b| (b.0, b.1)))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(
                    polygon,
                    color(4).mix(0.3).filled(),
                )))
                .map_err(draw_error)?
                .label("95% CI")
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], color(4).mix(0.3).filled())
                });
        }
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.0, p.1 / divisor)),
                color(0).stroke_width(2),
            ))
            .map_err(draw_error)?
            .label("figure")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color(0).stroke_width(2)));
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1 / divisor), 3, color(0).filled())),
            )
            .map_err(draw_error)?;
        if points.iter().any(|p| p.3) {
            chart
                .draw_series(
                    points
                        .iter()
                        .filter(|p| p.3)
                        .map(|p| Circle::new((p.0, p.1 / divisor), 9, WORSE.stroke_width(3))),
                )
                .map_err(draw_error)?
                .label("change point")
                .legend(|(x, y)| Circle::new((x + 7, y), 5, WORSE.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })?;
    Ok(Some((title, svg)))
}

/// The budget's stages stacked against its total.
fn budget(report: &Report) -> Option<io::Result<(String, String)>> {
    let budget = report.verdict.as_ref()?.budget.as_ref()?;
    let (divisor, symbol) = budget.unit.scale(budget.total_value);
    let mut segments = Vec::new();
    let mut at = 0.0;
    let mut legend = Vec::new();
    for (i, stage) in budget.stages.iter().enumerate() {
        if let Some(measured) = &stage.value {
            let to = at + measured.value / divisor;
            segments.push((at, to, color(i)));
            legend.push((stage.name.as_str(), color(i)));
            at = to;
        }
    }
    let bars: Vec<Bar> = vec![
        ("stages".to_string(), segments, None),
        (
            "budget".to_string(),
            vec![(0.0, budget.total_value / divisor, GREY)],
            None,
        ),
    ];
    let title = format!(
        "{}: stages against the {} budget",
        budget.name, budget.total
    );
    Some(horizontal_bars(&title, &format!("time ({symbol})"), &bars, &legend).map(|s| (title, s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000 samples from 10 to 50 µs, and `far` more at 8 ms.
    fn with_far_samples(far: u64) -> Metric {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for i in 0..1000u64 {
            h.record(10_000 + i * 40).unwrap();
        }
        h.record_n(8_000_000, far).unwrap();
        Metric::time_distribution("latency", h)
    }

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

    #[test]
    fn far_out_samples_do_not_squeeze_the_body_into_the_first_bars() {
        for (far, end) in [(0, "p99.9"), (5, "p99"), (30, "p90")] {
            let b = bins(&with_far_samples(far), BINS).unwrap();
            assert_eq!(b.end, end, "{far} far samples");
            assert!(b.high < 60_000.0, "{far}: bins end at {} ns", b.high);
            let total: u64 = b.counts.iter().sum();
            assert_eq!(total, 1000 + far);
            // The body spreads over the bars: no bar but the last (the tail) holds a tenth.
            let body = &b.counts[..BINS - 1];
            assert!(body.iter().all(|&n| n < 100), "{far}: {body:?}");
        }
    }
}
