//! The verdict of `latkit check`: a terminal table or markdown, and JUnit XML for CI.

use crate::analyze::gate::{Status, Verdict};
use crate::model::Note;
use std::fmt::Write as _;

fn rows(verdict: &Verdict) -> Vec<[String; 5]> {
    verdict
        .targets
        .iter()
        .map(|t| {
            let rule = t.value.as_ref().and_then(|v| v.rule.as_deref());
            [
                t.bench.clone(),
                match rule {
                    Some(rule) => format!("{} ({rule})", t.metric),
                    None => t.metric.clone(),
                },
                t.value
                    .as_ref()
                    .map(|v| v.text())
                    .unwrap_or_else(|| "—".into()),
                t.shown.clone(),
                t.status.label().to_string(),
            ]
        })
        .collect()
}

/// Rounds `parts` (percentages) to hundredths so that the rounded parts add up to their
/// rounded sum: each is rounded down, and the hundredths left over go to the parts that lost
/// the most (the largest-remainder method).
fn hundredths_adding_up(parts: &[f64]) -> Vec<f64> {
    // Shares beyond what hundredths can count (a tiny budget) are shown as they are.
    if parts.iter().any(|p| !p.is_finite() || p.abs() > 1e12) {
        return parts.to_vec();
    }
    let scaled: Vec<f64> = parts.iter().map(|p| p * 100.0).collect();
    let mut units: Vec<i64> = scaled.iter().map(|p| p.floor() as i64).collect();
    let target = scaled.iter().sum::<f64>().round() as i64;
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| {
        (scaled[b] - scaled[b].floor()).total_cmp(&(scaled[a] - scaled[a].floor()))
    });
    let missing = (target - units.iter().sum::<i64>()).clamp(0, parts.len() as i64) as usize;
    for &i in order.iter().take(missing) {
        units[i] += 1;
    }
    units.into_iter().map(|u| u as f64 / 100.0).collect()
}

fn budget_rows(verdict: &Verdict) -> Option<(String, Vec<[String; 5]>)> {
    let b = verdict.budget.as_ref()?;
    let fmt = |v: Option<f64>| {
        v.map(|v| b.unit.format_scaled(v))
            .unwrap_or_else(|| "—".into())
    };
    // The stages and the remainder make up the whole budget: their shares, as printed, add up
    // to 100 % exactly.
    let of_total = |v: f64| v / b.total_value * 100.0;
    let measured: Vec<f64> = b.stages.iter().filter_map(|s| s.share).collect();
    let (stage_shares, remainder_share) = match b.remainder {
        Some(r) if measured.len() == b.stages.len() => {
            let mut parts = measured.clone();
            parts.push(of_total(r));
            let mut rounded = hundredths_adding_up(&parts);
            let remainder = rounded.pop();
            (rounded.into_iter().map(Some).collect::<Vec<_>>(), remainder)
        }
        _ => (b.stages.iter().map(|s| s.share).collect(), None),
    };
    let percent = |p: Option<f64>| p.map(|p| format!("{p:.2}%")).unwrap_or_default();
    let sum_share = b
        .sum
        .map(|_| stage_shares.iter().flatten().sum::<f64>())
        .filter(|_| remainder_share.is_some())
        .or(b.sum.map(of_total));
    let mut rows: Vec<[String; 5]> = b
        .stages
        .iter()
        .zip(&stage_shares)
        .map(|(s, share)| {
            let rule = s.value.as_ref().and_then(|v| v.rule.as_deref());
            let status = match (&s.limit, s.status) {
                (Some(limit), Some(status)) => format!("{} {limit}", status.label()),
                _ => String::new(),
            };
            [
                s.name.clone(),
                match rule {
                    Some(rule) => format!("{} {} ({rule})", s.bench, s.metric),
                    None => format!("{} {}", s.bench, s.metric),
                },
                s.value
                    .as_ref()
                    .map(|v| v.text())
                    .unwrap_or_else(|| "⚠️ not measured".into()),
                percent(*share),
                status,
            ]
        })
        .collect();
    rows.push([
        "Sum".into(),
        String::new(),
        fmt(b.sum),
        percent(sum_share),
        String::new(),
    ]);
    rows.push([
        "Remainder".into(),
        String::new(),
        fmt(b.remainder),
        percent(remainder_share),
        String::new(),
    ]);
    let verdict = match b.status {
        Status::Pass => "✅ Fits",
        Status::Fail => "❌ Over budget",
        Status::NotMeasured => "⚠️ Not measured",
        Status::Undecided => "❔ Undecided",
    };
    if let Some(last) = rows.last_mut() {
        last[4] = verdict.to_string();
    }
    Some((format!("Budget {}: {}", b.name, b.total), rows))
}

const TARGET_HEADER: [&str; 5] = ["Benchmark", "Metric", "Value", "Target", "Status"];
const BUDGET_HEADER: [&str; 5] = ["Stage", "Measures", "Value", "Share of budget", "Status"];

/// A verdict table laid out by the format: title, header and rows.
pub type VerdictTable = (String, [&'static str; 5], Vec<[String; 5]>);

/// The verdict's tables, targets then the budget, for formats that lay tables out themselves.
pub fn tables(verdict: &Verdict) -> Vec<VerdictTable> {
    let mut out = Vec::new();
    if !verdict.targets.is_empty() {
        out.push(("Targets".to_string(), TARGET_HEADER, rows(verdict)));
    }
    if let Some((title, rows)) = budget_rows(verdict) {
        out.push((title, BUDGET_HEADER, rows));
    }
    out
}

fn grid(header: [&str; 5], rows: &[[String; 5]], width: Option<usize>) -> String {
    let mut t = super::terminal::grid(width);
    t.set_header(header);
    for r in rows {
        t.add_row(r.iter());
    }
    format!("{t}\n")
}

/// The input lines that could not be read, under the verdict: a gate that passes on part of
/// the input says so.
fn skipped_lines(skipped: &[&Note], bullet: &str) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{} input line(s) could not be read and are not in the verdict (--strict fails on them):\n",
        skipped.len()
    );
    for note in skipped {
        let _ = writeln!(out, "{bullet}{note}");
    }
    out
}

fn md_table(header: [&str; 5], rows: &[[String; 5]], _: Option<usize>) -> String {
    let mut out = format!("| {} |\n|---|---|---:|---|---|\n", header.join(" | "));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| super::markdown::escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// The verdict as a terminal table (`markdown` false, cells wrapped to `width` if given) or
/// GitHub markdown: the targets, the budget under its title, and the input lines that could
/// not be read.
pub fn render(
    verdict: &Verdict,
    skipped: &[&Note],
    markdown: bool,
    width: Option<usize>,
) -> String {
    let table = if markdown { md_table } else { grid };
    let mut out = String::new();
    if !verdict.targets.is_empty() {
        out.push_str(&table(TARGET_HEADER, &rows(verdict), width));
    }
    if let Some((title, rows)) = budget_rows(verdict) {
        match markdown {
            true if out.is_empty() => {
                let _ = writeln!(out, "### {title}\n");
            }
            true => {
                let _ = writeln!(out, "\n### {title}\n");
            }
            false => {
                let _ = writeln!(out, "{title}");
            }
        }
        out.push_str(&table(BUDGET_HEADER, &rows, width));
    }
    out.push_str(&skipped_lines(skipped, if markdown { "- " } else { "  " }));
    out
}

/// `text` as an XML 1.0 attribute value: markup escaped, and tabs and line breaks as
/// character references so that attribute normalization keeps them. The other C0 controls and
/// U+FFFE/U+FFFF cannot appear in XML 1.0 at all, not even as references: they are shown as
/// their Control Pictures (U+FFFD), as on a terminal.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' | '\u{7f}'..='\u{9f}' => {
                let _ = write!(out, "&#{};", c as u32);
            }
            '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c if c.is_control() => out.push_str(&crate::error::visible(c.encode_utf8(&mut [0; 4]))),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per target and one for the budget; a miss or a missing
/// measurement is a failure.
pub fn junit(verdict: &Verdict) -> String {
    let mut cases = Vec::new();
    for t in &verdict.targets {
        let value = t
            .value
            .as_ref()
            .map(|v| v.text())
            .unwrap_or_else(|| "not measured".into());
        cases.push((
            t.bench.clone(),
            format!("{} {}", t.metric, t.target),
            t.status,
            format!("{} is {value}, target {}", t.metric, t.shown),
        ));
    }
    if let Some(b) = &verdict.budget {
        let sum = b
            .sum
            .map(|s| b.unit.format_scaled(s))
            .unwrap_or_else(|| "not measured".into());
        let mut message = format!("stages sum to {sum}");
        for s in b.stages.iter().filter(|s| s.status == Some(Status::Fail)) {
            let value = s.value.as_ref().map(|v| v.text()).unwrap_or_default();
            let limit = s.limit.as_deref().unwrap_or_default();
            let _ = write!(message, "; stage {} is {value}, its limit {limit}", s.name);
        }
        cases.push((
            "budget".into(),
            format!("{} within {}", b.name, b.total),
            b.status,
            message,
        ));
    }
    let failures = cases.iter().filter(|c| c.2 != Status::Pass).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"latkit check\" tests=\"{}\" failures=\"{failures}\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"latkit check\" tests=\"{}\" failures=\"{failures}\">",
        cases.len()
    );
    for (class, name, status, message) in cases {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\"",
            xml(&class),
            xml(&name)
        );
        match status {
            Status::Pass => out.push_str("/>\n"),
            Status::Fail | Status::NotMeasured | Status::Undecided => {
                let kind = match status {
                    Status::Fail => "fail",
                    Status::Undecided => "undecided",
                    _ => "not measured",
                };
                let _ = write!(
                    out,
                    ">\n      <failure type=\"{kind}\" message=\"{}\"/>\n    </testcase>\n",
                    xml(&message)
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::hundredths_adding_up;

    #[test]
    fn rounded_shares_add_up() {
        // 0.405 % and 99.595 % print as 0.40 + 99.59 when each is rounded alone.
        let parts = hundredths_adding_up(&[0.405, 99.595]);
        assert!(((parts[0] + parts[1]) - 100.0).abs() < 1e-9, "{parts:?}");
        assert_eq!(
            hundredths_adding_up(&[33.333, 33.333, 33.334])
                .iter()
                .sum::<f64>(),
            100.0
        );
        assert_eq!(hundredths_adding_up(&[120.004, -20.004]), [120.0, -20.0]);
    }
}
