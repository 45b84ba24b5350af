//! The verdict of `latkit check`: a terminal table or markdown, and JUnit XML for CI.

use crate::analyze::gate::{Status, Verdict};
use comfy_table::{ContentArrangement, Table, presets};
use std::fmt::Write as _;

fn rows(verdict: &Verdict) -> Vec<[String; 5]> {
    verdict
        .targets
        .iter()
        .map(|t| {
            [
                t.bench.clone(),
                t.metric.clone(),
                t.value
                    .as_ref()
                    .map(|v| v.text())
                    .unwrap_or_else(|| "—".into()),
                t.target.clone(),
                t.status.label().to_string(),
            ]
        })
        .collect()
}

fn budget_rows(verdict: &Verdict) -> Option<(String, Vec<[String; 5]>)> {
    let b = verdict.budget.as_ref()?;
    let fmt = |v: Option<f64>| {
        v.map(|v| b.unit.format_scaled(v))
            .unwrap_or_else(|| "—".into())
    };
    let mut rows: Vec<[String; 5]> = b
        .stages
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                format!("{} {}", s.bench, s.metric),
                s.value
                    .as_ref()
                    .map(|v| v.text())
                    .unwrap_or_else(|| "⚠️ not measured".into()),
                s.share.map(|p| format!("{p:.2}%")).unwrap_or_default(),
                String::new(),
            ]
        })
        .collect();
    let share = |v: Option<f64>| {
        v.map(|v| format!("{:.2}%", v / b.total_value * 100.0))
            .unwrap_or_default()
    };
    rows.push([
        "Sum".into(),
        String::new(),
        fmt(b.sum),
        share(b.sum),
        String::new(),
    ]);
    rows.push([
        "Remainder".into(),
        String::new(),
        fmt(b.remainder),
        share(b.remainder),
        String::new(),
    ]);
    let verdict = match b.status {
        Status::Pass => "✅ Fits",
        Status::Fail => "❌ Over budget",
        Status::NotMeasured => "⚠️ Not measured",
    };
    if let Some(last) = rows.last_mut() {
        last[4] = verdict.to_string();
    }
    Some((format!("Budget {}: {}", b.name, b.total), rows))
}

const TARGET_HEADER: [&str; 5] = ["Benchmark", "Metric", "Value", "Target", "Status"];
const BUDGET_HEADER: [&str; 5] = ["Stage", "Measures", "Value", "Share of budget", "Status"];

fn grid(header: [&str; 5], rows: &[[String; 5]]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for r in rows {
        t.add_row(r.iter());
    }
    format!("{t}\n")
}

pub fn terminal(verdict: &Verdict) -> String {
    let mut out = String::new();
    if !verdict.targets.is_empty() {
        out.push_str(&grid(TARGET_HEADER, &rows(verdict)));
    }
    if let Some((title, rows)) = budget_rows(verdict) {
        let _ = writeln!(out, "{title}");
        out.push_str(&grid(BUDGET_HEADER, &rows));
    }
    out
}

fn md_table(header: [&str; 5], rows: &[[String; 5]]) -> String {
    let mut out = format!("| {} |\n|---|---|---:|---|---|\n", header.join(" | "));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

pub fn markdown(verdict: &Verdict) -> String {
    let mut out = String::new();
    if !verdict.targets.is_empty() {
        out.push_str(&md_table(TARGET_HEADER, &rows(verdict)));
    }
    if let Some((title, rows)) = budget_rows(verdict) {
        if !out.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "### {title}\n");
        out.push_str(&md_table(BUDGET_HEADER, &rows));
    }
    out
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
            format!("{} is {value}", t.metric),
        ));
    }
    if let Some(b) = &verdict.budget {
        let sum = b
            .sum
            .map(|s| b.unit.format_scaled(s))
            .unwrap_or_else(|| "not measured".into());
        cases.push((
            "budget".into(),
            format!("{} within {}", b.name, b.total),
            b.status,
            format!("stages sum to {sum}"),
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
            Status::Fail | Status::NotMeasured => {
                let kind = if status == Status::Fail {
                    "fail"
                } else {
                    "not measured"
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
