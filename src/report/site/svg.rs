//! A benchmark's trend as a small inline SVG: the drawn points' figures as a line over the band
//! of their range, the axis in the figure's unit, and a mark where each change was found. Drawn
//! by hand, not with plotters: every page of a site of hundreds holds one, and this one is a
//! few kilobytes.

use super::{SeriesPage, escape, format_value};
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
        Frame {
            low,
            high,
            points: drawn.len(),
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

/// Five levels of the figure across the plot, labelled in its unit, and the first and last
/// runs under it.
fn axis(out: &mut String, frame: &Frame, page: &SeriesPage) {
    for k in 0..=4 {
        let v = frame.low + (frame.high - frame.low) * k as f64 / 4.0;
        let y = frame.y(v);
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(&format_value(v, &page.source_unit)),
        );
    }
    if let (Some(first), Some(last)) = (page.drawn.first(), page.drawn.last()) {
        let _ = write!(
            out,
            "<text x=\"{LEFT}\" y=\"{}\">run #{}</text>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">run #{}</text>",
            HEIGHT - 12.0,
            first.first.id,
            WIDTH - RIGHT,
            HEIGHT - 12.0,
            last.last.id
        );
    }
}

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
