//! Horizontal bars: medians with their intervals, attribution shares, a budget's stages.

use super::*;
use crate::model::Unit;
use crate::report::{Cell, keys};
use std::collections::HashSet;

/// The smallest and largest x any bar, segment or whisker reaches, zero included.
fn extent(bars: &[Bar]) -> (f64, f64) {
    let ends = || {
        bars.iter().flat_map(|(_, segments, whisker)| {
            segments
                .iter()
                .flat_map(|s| [s.0, s.1])
                .chain(whisker.iter().flat_map(|w| [w.0, w.1]))
        })
    };
    (ends().fold(0.0, f64::min), ends().fold(0.0, f64::max))
}

/// Horizontal bars, one per category top to bottom: `(label, segments, whisker)` with
/// segments `(from, to, colour)` and an optional `(low, high)` interval.
pub(super) type Bar = (String, Vec<(f64, f64, RGBColor)>, Option<(f64, f64)>);

pub(super) fn horizontal_bars(
    title: &str,
    x_desc: &str,
    bars: &[Bar],
    legend_entries: &[(&str, RGBColor)],
) -> io::Result<String> {
    let (low, high) = extent(bars);
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
            .build_cartesian_2d(axis(low - span * 0.05, high + span * room)?, 0f64..n as f64)
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
            .x_label_formatter(&|x| tick(*x))
            .draw()
            .map_err(draw_error)?;
        for (i, bar) in bars.iter().enumerate() {
            draw_bar(&mut chart, (n - 1 - i) as f64, bar)?;
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

/// One bar's segments in the band at `y`, and its whisker through the last segment's end.
fn draw_bar<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Linear>,
    y: f64,
    (_, segments, whisker): &Bar,
) -> io::Result<()> {
    chart
        .draw_series(
            segments
                .iter()
                .map(|&(from, to, c)| Rectangle::new([(from, y + 0.2), (to, y + 0.8)], c.filled())),
        )
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
    Ok(())
}

/// Median bars with 95 % whiskers (as % of the baseline when the table has that column),
/// then part/rest stacks when it has attribution shares.
pub(super) fn bars(report: &Report, table: &Table) -> Vec<io::Result<(String, String)>> {
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
                interval: interval_in(r, ci),
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

/// The budget's stages stacked against its total.
pub(super) fn budget(report: &Report) -> Option<io::Result<(String, String)>> {
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
