//! How often each latency occurred, binned from the histogram's buckets, on linear and log
//! counts side by side.

use super::*;

/// Bins of a histogram plot.
const BINS: usize = 60;

/// Equal bins from the smallest value to the body's end, the tail beyond counted in the
/// last, from the histogram's buckets (never per sample).
pub(in crate::report) struct Bins {
    pub low: f64,
    pub high: f64,
    /// The percentile the bins end at: `p99.9`, or `p99` or `p90` when the samples above are
    /// so far out that the rest would share the first bars (cyclictest's overflowed samples,
    /// counted at the maximum).
    pub end: &'static str,
    pub counts: Vec<u64>,
}

pub(in crate::report) fn bins(metric: &Metric, n: usize) -> Option<Bins> {
    let hist = metric.histogram.as_ref()?.histogram();
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

pub(super) fn histogram(dist: &Dist) -> io::Result<Option<(String, String)>> {
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
    let svg = svg(|root| {
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        let linear = Counts {
            caption: title.clone(),
            x_desc: &x_desc,
            y_desc: "count",
            floor: 0.0,
            colour: color(0),
            bars: &bars,
        };
        linear.draw(&left, x_range.clone(), 0f64..most * 1.05)?;
        let log = Counts {
            caption: format!("{title} (log count)"),
            y_desc: "count (log)",
            // A log axis has no zero: bars stand on ½ and empty bins are left out.
            floor: 0.5,
            colour: color(1),
            ..linear
        };
        log.draw(&right, x_range, (0.5f64..most * 2.0).log_scale())
    })?;
    Ok(Some((title, svg)))
}

/// One half of a histogram plot: bins `(from, to, count)` drawn on a linear or log count.
struct Counts<'a> {
    caption: String,
    x_desc: &'a str,
    y_desc: &'a str,
    floor: f64,
    colour: RGBColor,
    bars: &'a [(f64, f64, f64)],
}

impl Counts<'_> {
    fn draw<Y>(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        x: std::ops::Range<f64>,
        y: Y,
    ) -> io::Result<()>
    where
        Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .caption(&self.caption, (FONT, 16))
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(axis(x.start, x.end)?, y)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(5)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(
                self.bars
                    .iter()
                    .filter(|b| self.floor == 0.0 || b.2 > 0.0)
                    .map(|&(x0, x1, n)| {
                        Rectangle::new([(x0, self.floor), (x1, n)], self.colour.filled())
                    }),
            )
            .map_err(draw_error)?;
        Ok(())
    }
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
