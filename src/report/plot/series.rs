//! A timer run second by second: minimum, average and maximum, and overruns.

use super::*;
use crate::model::{MetricKind, Unit};

fn series_metric<'a>(bench: &'a Benchmark, name: &str) -> Option<&'a Metric> {
    bench
        .metrics
        .iter()
        .find(|m| m.kind == MetricKind::Series && m.name == name)
}

pub(super) fn timer_series(report: &Report) -> Vec<io::Result<(String, String)>> {
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
                axis(0.0, (top / divisor * 1.05).max(1e-9))?,
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
        draw_lines(&mut chart, lines, divisor)?;
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

/// Each per-second series as a line, labelled `max`, `avg`, `min`.
fn draw_lines<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Linear>,
    lines: &[(&str, &Metric)],
    divisor: f64,
) -> io::Result<()> {
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
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    Ok(())
}
