//! `latkit history`: a figure run by run, its interval band, and change points.

use super::*;
use crate::model::Unit;
use crate::report::{Cell, keys};

/// One stored run's figure: where it is drawn, its value and interval, whether it is a
/// change point, and the run's label.
struct Point {
    x: f64,
    value: f64,
    band: Option<(f64, f64)>,
    changed: bool,
    run: String,
}

/// The table's figures run by run, and their unit (`None`: no figure to draw).
fn points(table: &Table, value: usize, mark: usize) -> Option<(Vec<Point>, Unit)> {
    let ci = column(table, keys::CI95);
    let mut points = Vec::new();
    let mut unit = None;
    for (i, row) in table.rows.iter().enumerate() {
        if let Cell::Value {
            value: v, unit: u, ..
        } = &row.cells[value]
        {
            unit.get_or_insert_with(|| u.clone());
            points.push(Point {
                x: i as f64,
                value: *v,
                band: interval_in(row, ci),
                changed: matches!(&row.cells[mark], Cell::Text { text } if !text.is_empty()),
                run: match &row.cells[0] {
                    Cell::Text { text } => text.clone(),
                    _ => format!("{}", i + 1),
                },
            });
        }
    }
    Some((points, unit?))
}

/// A history table: the figure run by run with its interval band; change points circled.
pub(super) fn trend(table: &Table) -> io::Result<Option<(String, String)>> {
    let (Some(value), Some(mark)) = (
        column(table, keys::VALUE),
        column(table, keys::CHANGE_POINT),
    ) else {
        return Ok(None);
    };
    let Some((points, unit)) = points(table, value, mark) else {
        return Ok(None);
    };
    let top = points
        .iter()
        .map(|p| p.band.map_or(p.value, |b| b.1.max(p.value)))
        .fold(0.0, f64::max);
    let (divisor, symbol) = unit.scale(top);
    let title = table.title.clone().unwrap_or_else(|| "history".into());
    let runs: Vec<String> = points.iter().map(|p| p.run.clone()).collect();
    let last = (points.len() as f64 - 1.0).max(1.0);
    let svg = svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(
                -0.3f64..last + 0.3,
                axis(0.0, (top / divisor * 1.1).max(1e-9))?,
            )
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
        draw_band(&mut chart, &points, divisor)?;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.x, p.value / divisor)),
                color(0).stroke_width(2),
            ))
            .map_err(draw_error)?
            .label("figure")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color(0).stroke_width(2)));
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.x, p.value / divisor), 3, color(0).filled())),
            )
            .map_err(draw_error)?;
        if points.iter().any(|p| p.changed) {
            chart
                .draw_series(
                    points
                        .iter()
                        .filter(|p| p.changed)
                        .map(|p| Circle::new((p.x, p.value / divisor), 9, WORSE.stroke_width(3))),
                )
                .map_err(draw_error)?
                .label("change point")
                .legend(|(x, y)| Circle::new((x + 7, y), 5, WORSE.stroke_width(2)));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })?;
    Ok(Some((title, svg)))
}

/// The 95 % interval of every point that has one, as a shaded band.
fn draw_band<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Linear>,
    points: &[Point],
    divisor: f64,
) -> io::Result<()> {
    let band: Vec<(f64, f64, f64)> = points
        .iter()
        .filter_map(|p| p.band.map(|b| (p.x, b.0 / divisor, b.1 / divisor)))
        .collect();
    if band.is_empty() {
        return Ok(());
    }
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
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color(4).mix(0.3).filled()));
    Ok(())
}
