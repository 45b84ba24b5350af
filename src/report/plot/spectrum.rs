//! Latency by percentile, HdrHistogram style: 90 %, 99 %, 99.9 %, ... on a log scale.

use super::*;

/// `0.999` → `99.9%`.
fn percent_label(nines: f64) -> String {
    let percent = 100.0 * (1.0 - 10f64.powf(-nines));
    let text = format!("{percent:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

pub(super) fn spectrum(report: &Report) -> Option<io::Result<(String, String)>> {
    let dists: Vec<Dist> = distributions(report)
        .into_iter()
        .filter(|d| d.metric.histogram.as_ref().is_some_and(|h| !h.is_empty()))
        .take(MAX_SERIES)
        .collect();
    let first = dists.first()?;
    // As many nines as the samples can resolve: 10^k samples reach 1 − 10^−k.
    let most = dists
        .iter()
        .map(|d| d.metric.histogram.as_ref().map_or(0, |h| h.len()))
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
                axis((bottom * 0.9).max(1e-12), (top / divisor * 1.1).max(1e-9))?.log_scale(),
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
