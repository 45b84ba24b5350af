//! A benchmark's trend as a small inline SVG: the drawn points' figures as a line over the band
//! of their range, the axis in the figure's unit, and a mark where each change was found. Drawn
//! by hand, not with plotters: every page of a site of hundreds holds one, and this one is a
//! few kilobytes.

use super::{SeriesPage, escape};
use crate::analyze::regressions::Finding;
use std::fmt::Write as _;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 36.0;

/// Where the drawn points go: the figure range shown, and the plot's scales.
struct Frame {
    low: f64,
    high: f64,
    points: usize,
    /// The figure axis' levels, in the unit `symbol` (the figure divided by `divisor`).
    ticks: Ticks,
    divisor: f64,
    symbol: String,
}

/// Round levels for an axis: a step of 1, 2, 2.5 or 5 times a power of ten, and the decimals
/// its labels need.
struct Ticks {
    values: Vec<f64>,
    decimals: usize,
}

/// About five round levels from at or below `low` to at or above `high`.
fn round_ticks(low: f64, high: f64) -> Ticks {
    let span = (high - low).max(f64::EPSILON * high.abs().max(1.0));
    let rough = span / 4.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * power);
    let first = (low / step).floor() as i64;
    let last = (high / step).ceil() as i64;
    let values = (first..=last.max(first + 1))
        .map(|k| k as f64 * step)
        .collect();
    // 2.5 × 10^k needs one decimal more than its power.
    let places = -(step.log10().floor())
        + if (step / power - 2.5).abs() < 1e-9 {
            1.0
        } else {
            0.0
        };
    Ticks {
        values,
        decimals: places.max(0.0) as usize,
    }
}

impl Frame {
    fn of(page: &SeriesPage) -> Frame {
        let drawn = &page.drawn;
        let low = drawn.iter().map(|d| d.low).fold(f64::INFINITY, f64::min);
        let high = drawn
            .iter()
            .map(|d| d.high)
            .fold(f64::NEG_INFINITY, f64::max);
        let (low, high) = match (low.is_finite(), high.is_finite()) {
            (true, true) if high > low => {
                let pad = (high - low) * 0.08;
                (low - pad, high + pad)
            }
            (true, true) => (
                low - low.abs().max(1.0) * 0.05,
                high + high.abs().max(1.0) * 0.05,
            ),
            _ => (0.0, 1.0),
        };
        let unit = crate::model::Unit::parse(&page.source_unit).unit;
        let (divisor, symbol) = unit.scale(low.abs().max(high.abs()));
        let ticks = round_ticks(low / divisor, high / divisor);
        Frame {
            low: ticks.values[0] * divisor,
            high: ticks.values[ticks.values.len() - 1] * divisor,
            points: drawn.len(),
            ticks,
            divisor,
            symbol,
        }
    }

    fn x(&self, i: usize) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * i as f64 / (self.points.max(2) - 1) as f64
    }

    fn y(&self, v: f64) -> f64 {
        TOP + (HEIGHT - TOP - BOTTOM) * (self.high - v) / (self.high - self.low)
    }
}

pub(super) fn trend(page: &SeriesPage, findings: &[&Finding]) -> String {
    let frame = Frame::of(page);
    let mut out = format!(
        "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         role=\"img\" aria-label=\"{label}\"><title>{label}</title>",
        label = escape(&format!(
            "{} {} over {} runs",
            page.bench, page.what, page.runs
        ))
    );
    axis(&mut out, &frame, page);
    line(&mut out, &frame, page);
    for f in findings {
        mark(&mut out, &frame, page, f);
    }
    out.push_str("</svg></figure>\n");
    out
}

/// Round levels of the figure across the plot, labelled in its unit, and under it up to
/// [`X_TICKS`] runs named by their commit (or their date, or number, where the commits or
/// dates are all one).
fn axis(out: &mut String, frame: &Frame, page: &SeriesPage) {
    for &level in &frame.ticks.values {
        let y = frame.y(level * frame.divisor);
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(&format!(
                "{:.*} {}",
                frame.ticks.decimals, level, frame.symbol
            )),
        );
    }
    let drawn = &page.drawn;
    let shown: Vec<usize> = match drawn.len() {
        0 => Vec::new(),
        1 => vec![0],
        n => {
            let count = X_TICKS.min(n);
            let mut at: Vec<usize> = (0..count).map(|k| k * (n - 1) / (count - 1)).collect();
            at.dedup();
            at
        }
    };
    let namings: [fn(&crate::store::StoredRun) -> String; 3] = [
        |run| {
            run.commit
                .as_deref()
                .map_or(String::new(), |c| c.chars().take(7).collect())
        },
        |run| run.stored_at.chars().take(10).collect(),
        |run| format!("run #{}", run.id),
    ];
    let labels: Vec<String> = namings
        .iter()
        .map(|name| {
            shown
                .iter()
                .map(|&i| name(&drawn[i].last))
                .collect::<Vec<_>>()
        })
        .find(|labels| {
            labels.iter().all(|l| !l.is_empty())
                && (labels.len() < 2 || labels.windows(2).any(|w| w[0] != w[1]))
        })
        .unwrap_or_else(|| shown.iter().map(|&i| namings[2](&drawn[i].last)).collect());
    for (&i, label) in shown.iter().zip(&labels) {
        let anchor = match i {
            0 => "start",
            _ if i + 1 == drawn.len() => "end",
            _ => "middle",
        };
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            frame.x(i),
            HEIGHT - 12.0,
            escape(label)
        );
    }
}

/// The most runs named under a trend.
const X_TICKS: usize = 6;

/// The figures as a line over the band of their ranges.
fn line(out: &mut String, frame: &Frame, page: &SeriesPage) {
    let drawn = &page.drawn;
    let at = |i: usize, v: f64| format!("{:.1},{:.1}", frame.x(i), frame.y(v));
    let band: Vec<String> = (0..drawn.len())
        .map(|i| at(i, drawn[i].high))
        .chain((0..drawn.len()).rev().map(|i| at(i, drawn[i].low)))
        .collect();
    let line: Vec<String> = (0..drawn.len()).map(|i| at(i, drawn[i].value)).collect();
    let _ = write!(
        out,
        "<polygon class=\"band\" points=\"{}\"/><polyline class=\"trend\" points=\"{}\"/>",
        band.join(" "),
        line.join(" ")
    );
}

/// A dashed line between the last point before a change and the first after it, labelled
/// with the change and its first run.
fn mark(out: &mut String, frame: &Frame, page: &SeriesPage, f: &Finding) {
    let Some(j) = page.drawn.iter().position(|d| d.runs.contains(&f.at)) else {
        return;
    };
    let at = match j {
        0 => frame.x(0),
        _ => (frame.x(j - 1) + frame.x(j)) / 2.0,
    };
    let class = if f.worse() {
        "mark-worse"
    } else {
        "mark-better"
    };
    let _ = write!(
        out,
        "<line class=\"{class}\" stroke-dasharray=\"4 3\" x1=\"{at:.1}\" x2=\"{at:.1}\" \
         y1=\"{TOP}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{}\">{:+.1}% at #{}</text>",
        HEIGHT - BOTTOM,
        at + 4.0,
        TOP - 8.0,
        f.percent,
        f.after.id
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_round_steps_covering_the_range() {
        // The dashboard's old levels for this range were 1.469, 4.839, 8.210.
        let ticks = round_ticks(1.469, 8.210);
        assert_eq!(ticks.values, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks.decimals, 0);
        let ticks = round_ticks(10.05, 10.96);
        assert_eq!(ticks.values.first(), Some(&10.0));
        assert!(
            ticks
                .values
                .windows(2)
                .all(|w| (w[1] - w[0] - 0.25).abs() < 1e-9)
        );
        assert_eq!(ticks.decimals, 2);
        let flat = round_ticks(5.0, 5.0);
        assert!(flat.values.len() >= 2 && flat.values[0] <= 5.0);
    }
}
