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

pub(super) fn trend(page: &SeriesPage, findings: &[&Finding]) -> String {
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
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |i: usize| LEFT + plot_w * i as f64 / (drawn.len().max(2) - 1) as f64;
    let y = |v: f64| TOP + plot_h * (high - v) / (high - low);
    let mut out = format!(
        "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         role=\"img\" aria-label=\"{label}\"><title>{label}</title>",
        label = escape(&format!(
            "{} {} over {} runs",
            page.bench, page.what, page.runs
        ))
    );
    for k in 0..=4 {
        let v = low + (high - low) * k as f64 / 4.0;
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            escape(&format_value(v, &page.source_unit)),
            y = y(v)
        );
    }
    let band: Vec<String> = drawn
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{:.1},{:.1}", x(i), y(d.high)))
        .chain(
            drawn
                .iter()
                .enumerate()
                .rev()
                .map(|(i, d)| format!("{:.1},{:.1}", x(i), y(d.low))),
        )
        .collect();
    let line: Vec<String> = drawn
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{:.1},{:.1}", x(i), y(d.value)))
        .collect();
    let _ = write!(
        out,
        "<polygon class=\"band\" points=\"{}\"/><polyline class=\"trend\" points=\"{}\"/>",
        band.join(" "),
        line.join(" ")
    );
    for f in findings {
        let Some(j) = drawn.iter().position(|d| d.runs.contains(&f.at)) else {
            continue;
        };
        let at = if j == 0 {
            x(0)
        } else {
            (x(j - 1) + x(j)) / 2.0
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
    if let (Some(first), Some(last)) = (drawn.first(), drawn.last()) {
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
    out.push_str("</svg></figure>\n");
    out
}
