//! One self-contained HTML file: inline CSS and SVG plots, no script, font or request of any
//! kind (a Content-Security-Policy forbids them), light and dark by the reader's setting. It
//! holds the plots, the tables (each plot's text alternative), the verdict, the notes and
//! every run's environment.

use super::plot::{self, Plot};
use super::{Cell, ChangeVerdict, Reader, Reporter, Table, fit, gate, note_lines};
use crate::analyze::Report;
use crate::analyze::page::Page;
use crate::model::{Run, timestamp};
use std::io::{self, Write};

pub struct Html;

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #ffffff; --muted: #666; --line: #d0d0d0;
  --worse: #b34700; --better: #005a8c; --stripe: #f5f5f5; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --bg: #161616; --muted: #a0a0a0; --line: #3a3a3a;
    --worse: #ff9a5c; --better: #7cc4f5; --stripe: #1f1f1f; }
  figure svg { filter: invert(0.9) hue-rotate(180deg); }
}
body { font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg);
  background: var(--bg); margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid var(--line); }
.meta, figcaption { color: var(--muted); font-size: .9rem; }
figure { margin: 1.5rem 0; } figure svg { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; margin: .6rem 0 1.4rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: .25rem .6rem; text-align: left; }
td.num { text-align: right; white-space: nowrap; } tr:nth-child(even) td { background: var(--stripe); }
.worse { color: var(--worse); font-weight: 600; } .better { color: var(--better); font-weight: 600; }
.noise { color: var(--muted); } li.warning, p.warning { color: var(--worse); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; } dt { color: var(--muted); }
";

/// `<`, `>`, `&` and quotes made safe for text and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::error::visible(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn cell_html(cell: &Cell) -> String {
    let text = escape(&fit::text(cell));
    match cell {
        Cell::Text { .. } | Cell::Empty => format!("<td>{text}</td>"),
        Cell::Change(change) => {
            let class = match change.verdict {
                ChangeVerdict::Counted
                    if !change
                        .percent
                        .is_some_and(crate::analyze::counted::beyond_floor) =>
                {
                    "num noise"
                }
                ChangeVerdict::Significant | ChangeVerdict::Exact | ChangeVerdict::Counted
                    if change.is_worse() =>
                {
                    "num worse"
                }
                ChangeVerdict::Significant | ChangeVerdict::Exact | ChangeVerdict::Counted => {
                    "num better"
                }
                ChangeVerdict::Noise => "num noise",
                ChangeVerdict::Untested | ChangeVerdict::CountedOnce | ChangeVerdict::Summary => {
                    "num"
                }
            };
            format!("<td class=\"{class}\">{text}</td>")
        }
        _ => format!("<td class=\"num\">{text}</td>"),
    }
}

fn write_table(table: &Table, id: usize, out: &mut dyn Write) -> io::Result<()> {
    if let Some(title) = &table.title {
        writeln!(out, "<h3 id=\"table-{id}\">{}</h3>", escape(title))?;
    }
    writeln!(out, "<table><thead><tr>")?;
    for column in &table.columns {
        write!(out, "<th>{}</th>", escape(&column.header))?;
    }
    writeln!(out, "</tr></thead><tbody>")?;
    for row in &table.rows {
        write!(out, "<tr>")?;
        for cell in &row.cells {
            write!(out, "{}", cell_html(cell))?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody></table>")
}

fn write_plot(plot: &Plot, id: usize, out: &mut dyn Write) -> io::Result<()> {
    // The SVG is drawn here, so it is trusted markup; only its accessible name is added.
    let svg = plot.svg.replacen(
        "<svg ",
        &format!(
            "<svg role=\"img\" aria-labelledby=\"plot-{id}\" data-kind=\"{}\" ",
            plot.kind.name()
        ),
        1,
    );
    writeln!(
        out,
        "<figure>{svg}<figcaption id=\"plot-{id}\">{} — the tables below hold these figures.</figcaption></figure>",
        escape(&plot.title)
    )
}

fn write_environment(run: &Run, index: usize, out: &mut dyn Write) -> io::Result<()> {
    let source = run
        .source
        .path
        .clone()
        .unwrap_or_else(|| crate::model::redact::command_line(&run.source.command).join(" "));
    let title = format!(
        "<h3>Run {} · {} {}</h3>",
        index + 1,
        escape(&run.source.format),
        escape(&source)
    );
    let environment = serde_json::to_value(&run.environment).unwrap_or_default();
    let mut fields: Vec<(String, String)> = Vec::new();
    flatten("", &environment, &mut fields);
    for entry in &run.config {
        fields.push((format!("config.{}", entry.key), entry.value.clone()));
    }
    let rows: Vec<Vec<String>> = fields.into_iter().map(|(k, v)| vec![k, v]).collect();
    text_table(&title, &["", ""], &rows, out)
}

/// What the report is of, for its title: the inputs' file names or the commands run.
fn title_of(report: &Report) -> String {
    let mut inputs: Vec<String> = Vec::new();
    for run in &report.runs {
        let source = match &run.source.path {
            Some(path) => std::path::Path::new(path)
                .file_name()
                .map_or(path.clone(), |f| f.to_string_lossy().into_owned()),
            None => crate::model::redact::command_line(&run.source.command).join(" "),
        };
        if !inputs.contains(&source) {
            inputs.push(source);
        }
    }
    let shown: Vec<String> = inputs
        .iter()
        .take(3)
        .map(|i| match i.char_indices().nth(60) {
            Some((cut, _)) => format!("{}…", &i[..cut]),
            None => i.clone(),
        })
        .collect();
    match inputs.len() {
        0 => "latkit report".into(),
        n if n > 3 => format!("latkit: {} and {} more", shown.join(", "), n - 3),
        _ => format!("latkit: {}", shown.join(", ")),
    }
}

/// JSON as `a.b: value` lines.
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&key(k), v, out);
            }
        }
        serde_json::Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.push((prefix.to_string(), parts.join(", ")));
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&key(&i.to_string()), v, out);
            }
        }
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The document's head and its first heading.
fn open_document(out: &mut dyn Write, title: &str, report: &Report) -> io::Result<()> {
    let generated = report
        .generated
        .map(|t| format!("Generated {} by ", timestamp(t)))
        .unwrap_or_default();
    let runs = report.runs.len();
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"generator\" content=\"latkit {version}\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n\
         <h1>{title}</h1><p class=\"meta\">{generated}latkit {version} · {runs}</p>",
        runs = match runs {
            1 => "1 run".to_string(),
            n => format!("{n} runs"),
        },
        version = env!("CARGO_PKG_VERSION"),
        title = escape(title),
    )
}

fn write_plots(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let plots = plot::all(report, plot::MAX_PLOTS_PER_KIND);
    if !plots.is_empty() {
        writeln!(out, "<h2>Plots</h2>")?;
        for (i, p) in plots.iter().enumerate() {
            match p {
                Ok(p) => write_plot(p, i, out)?,
                Err(e) => writeln!(
                    out,
                    "<p class=\"warning\">A plot could not be drawn ({}); the tables below hold its figures.</p>",
                    escape(&e.to_string())
                )?,
            }
        }
    }
    Ok(())
}

/// A verdict's status as a coloured word (the terminal's `✅ Pass` is an emoji box in a
/// browser), any other text escaped.
fn status_or_text(text: &str) -> String {
    for (mark, class) in [("✅ ", "better"), ("❌ ", "worse"), ("⚠️ ", "warning")] {
        if let Some(status) = text.strip_prefix(mark) {
            return format!("<span class=\"{class}\">{}</span>", escape(status));
        }
    }
    escape(text)
}

/// A table of text cells under a heading.
fn text_table(
    title: &str,
    header: &[&str],
    rows: &[Vec<String>],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "{title}<table><thead><tr>")?;
    for h in header {
        write!(out, "<th>{}</th>", escape(h))?;
    }
    writeln!(out, "</tr></thead><tbody>")?;
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| format!("<td>{}</td>", status_or_text(c)))
            .collect();
        writeln!(out, "<tr>{}</tr>", cells.join(""))?;
    }
    writeln!(out, "</tbody></table>")
}

/// The performance page (`latkit page --format html`) with the plots of its results.
pub fn page(page: &Page, report: &Report, out: &mut dyn Write) -> io::Result<()> {
    open_document(out, &page.title, report)?;
    for (title, header, rows) in super::page::sections(page) {
        if !rows.is_empty() {
            let rows: Vec<Vec<String>> = rows.iter().map(|r| r.to_vec()).collect();
            text_table(&format!("<h2>{title}</h2>"), &header, &rows, out)?;
        }
    }
    write_plots(report, out)?;
    let environment: Vec<Vec<String>> = page
        .environment
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    text_table("<h2>Environment</h2>", &["", ""], &environment, out)?;
    if !page.caveats.is_empty() {
        writeln!(out, "<h2>Caveats</h2><ul>")?;
        for caveat in &page.caveats {
            writeln!(out, "<li>{}</li>", escape(caveat))?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "</body></html>")
}

impl Reporter for Html {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        open_document(out, &title_of(report), report)?;
        if let Some(verdict) = &report.verdict {
            let status = if verdict.passed() {
                "<span class=\"better\">passed</span>".to_string()
            } else {
                format!(
                    "<span class=\"worse\">{} missed or not measured</span>",
                    verdict.missed()
                )
            };
            writeln!(out, "<h2>Verdict: {status}</h2>")?;
            for (title, header, rows) in gate::tables(verdict) {
                let rows: Vec<Vec<String>> = rows.iter().map(|r| r.to_vec()).collect();
                text_table(&format!("<h3>{}</h3>", escape(&title)), &header, &rows, out)?;
            }
        }
        write_plots(report, out)?;
        if !report.tables.is_empty() {
            writeln!(out, "<h2>Tables</h2>")?;
            for (i, table) in report.tables.iter().enumerate() {
                write_table(table, i, out)?;
            }
        }
        if !report.notes.is_empty() {
            writeln!(out, "<h2>Notes</h2><ul>")?;
            for (note, line) in report
                .notes_once()
                .into_iter()
                .zip(note_lines(report, &reader))
            {
                let class = match note.level {
                    crate::model::Level::Warning => "warning",
                    crate::model::Level::Info => "info",
                };
                writeln!(out, "<li class=\"{class}\">{}</li>", escape(&line))?;
            }
            writeln!(out, "</ul>")?;
        }
        if !report.runs.is_empty() {
            writeln!(out, "<h2>Environment</h2>")?;
            for (i, run) in report.runs.iter().enumerate() {
                write_environment(run, i, out)?;
            }
        }
        writeln!(out, "</body></html>")
    }
}
