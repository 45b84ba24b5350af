//! `latkit site`: a static dashboard of the history store. Plain files that open from
//! `file://` and serve from any static host: an index that lists the changes that hold
//! (regressions first, newest first), then every benchmark with a filter box, and a page per
//! benchmark with its trend drawn inline (SVG) and the runs behind every drawn point. No page
//! fetches anything: a Content-Security-Policy allows inline styles, and on the index only the
//! one inline script whose hash it names.

mod svg;

use super::html::escape;
use crate::analyze::downsample::Drawn;
use crate::analyze::regressions::Finding;
use crate::model::{Note, Unit};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;

/// One benchmark's page: its figure, how many runs it has, and what is drawn.
pub struct SeriesPage {
    pub bench: String,
    pub what: String,
    pub source_unit: String,
    pub runs: usize,
    pub drawn: Vec<Drawn>,
    /// The series' indices of the first runs after its change points.
    pub change_points: Vec<usize>,
    /// Of the figure the site was asked for: listed on the index (the benchmark's other
    /// figures are offered on its pages).
    pub listed: bool,
}

/// What a run's environment was, shortly: a digest that tells machines apart, and the facts.
pub struct Machine {
    pub digest: String,
    pub facts: String,
}

/// Everything the site shows.
pub struct Site {
    pub title: String,
    /// When and by what it was built: `latkit 0.1.0, 2026-11-27T07:00:00Z`.
    pub built: String,
    pub pages: Vec<SeriesPage>,
    /// The changes that hold, regressions first and newest first.
    pub findings: Vec<Finding>,
    /// The changes of the other figures, each figure judged as a family of its own: shown on
    /// their pages, not listed on the index.
    pub other_findings: Vec<Finding>,
    pub notes: Vec<Note>,
    pub machines: HashMap<i64, Machine>,
}

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fff; --muted: #666; --line: #d0d0d0;
  --worse: #b34700; --better: #005a8c; --band: #dde6ee; --stripe: #f5f5f5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --bg: #161616; --muted: #a0a0a0;
  --line: #3a3a3a; --worse: #ff9a5c; --better: #7cc4f5; --band: #2a3540; --stripe: #1f1f1f; } }
body { font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); } .meta { color: var(--muted); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .5rem 0 1.2rem; }
th, td { border: 1px solid var(--line); padding: .2rem .5rem; text-align: left; }
tr:nth-child(even) td { background: var(--stripe); } td.num { text-align: right; white-space: nowrap; }
.worse { color: var(--worse); font-weight: 600; } .better { color: var(--better); font-weight: 600; }
a { color: inherit; } svg { max-width: 100%; height: auto; display: block; }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; } .axis { stroke: var(--line); }
.band { fill: var(--band); } .trend { fill: none; stroke: var(--fg); stroke-width: 1.5; }
.mark-worse { stroke: var(--worse); } .mark-better { stroke: var(--better); }
.runs td:nth-child(2) { font-family: monospace; }
.runs td:nth-last-child(-n+3):not(:last-child) { text-align: right; white-space: nowrap; }
tr.change td { font-weight: 600; } dt { font-family: monospace; }
body:not([data-filter]) .filter { display: none; }
input { font: inherit; padding: .2rem .4rem; min-width: 20rem; }
";

/// Hides the rows whose benchmark name does not hold the filter's text, as typed or as the
/// address gives it (`index.html#filter=encode`, a link that shows one family); the filter box
/// shows only where the script runs. An address that is no valid escape (`#filter=%`) is
/// taken as typed: decoding it throws, which stopped the script and hid the box.
const FILTER_SCRIPT: &str = "const f=document.getElementById('filter');\
const apply=()=>{const q=f.value.toLowerCase();\
for(const r of document.querySelectorAll('tr[data-name]'))r.hidden=!r.dataset.name.includes(q);};\
const m=location.hash.match(/^#filter=(.*)$/);\
if(m){try{f.value=decodeURIComponent(m[1]);}catch(e){f.value=m[1];}apply();}\
f.addEventListener('input',apply);document.body.dataset.filter='ready';";

/// The file of page `index` (in the order of [`Site::pages`]), relative to the site's root.
pub fn page_path(index: usize, bench: &str) -> String {
    format!("b/{}", page_file(index, bench))
}

/// The same page's file name in `b/`, as its sibling pages link it.
fn page_file(index: usize, bench: &str) -> String {
    let name: String = bench
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    format!("{index:04}-{name}.html")
}

fn head(title: &str, script: Option<&str>) -> String {
    let script_src = script.map_or(String::new(), |s| {
        let hash = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            Sha256::digest(s.as_bytes()),
        );
        format!("; script-src 'sha256-{hash}'")
    });
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'{script_src}\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    )
}

fn format_value(value: f64, source_unit: &str) -> String {
    Unit::parse(source_unit).unit.format_scaled(value)
}

/// A finding's row cells after the benchmark: figure, change, interval, adjusted p, commits,
/// first run, how it was found.
fn finding_cells(f: &Finding) -> String {
    let class = if f.worse() { "worse" } else { "better" };
    format!(
        "<td>{}</td><td class=\"num {class}\">{:+.2}%</td><td class=\"num\">{}</td>\
         <td class=\"num\">{:.3}</td><td><code>{}</code>{}</td>\
         <td title=\"{}\">#{}&nbsp;·&nbsp;{}</td><td>{}</td>",
        escape(&f.what),
        f.percent,
        escape(&f.interval_text()),
        f.adjusted,
        escape(&f.commit_range()),
        match f.commits {
            Some(_) => format!(" <span class=\"meta\">({})</span>", f.commits_text()),
            None => String::new(),
        },
        escape(&f.after.stored_at),
        f.after.id,
        escape(f.after.stored_at.get(..10).unwrap_or(&f.after.stored_at)),
        escape(&f.found_by()),
    )
}

const FINDING_HEADER: &str = "<th>Figure</th><th>Change</th><th>95% CI</th><th>p (adjusted)</th>\
<th>Commits</th><th>First run after</th><th>Found by</th>";

impl Site {
    /// The index page: the changes that hold, then every benchmark.
    pub fn index(&self) -> String {
        let mut out = head(&self.title, Some(FILTER_SCRIPT));
        let runs = self.pages.iter().map(|p| p.runs).max().unwrap_or(0);
        let listed = self.pages.iter().filter(|p| p.listed).count();
        let _ = writeln!(
            out,
            "<h1>{}</h1><p class=\"meta\">{} benchmarks, up to {runs} runs each · built by {}</p>\n\
             <p class=\"filter\"><label>Filter benchmarks: <input id=\"filter\" type=\"search\" \
             placeholder=\"part of a name\"></label></p>",
            escape(&self.title),
            listed,
            escape(&self.built)
        );
        let (worse, better): (Vec<&Finding>, Vec<&Finding>) =
            self.findings.iter().partition(|f| f.worse());
        self.findings_section(&mut out, "Regressions", "regressions", &worse);
        self.findings_section(&mut out, "Improvements", "improvements", &better);
        self.every_benchmark(&mut out);
        out.push_str("<h2>Notes</h2><ul>\n");
        for note in &self.notes {
            let _ = writeln!(out, "<li>{}</li>", escape(&note.message));
        }
        let _ = writeln!(
            out,
            "</ul>\n<script>{FILTER_SCRIPT}</script>\n</body></html>"
        );
        out
    }

    /// A heading and a table of `findings`, each linked to its place on its benchmark's page.
    fn findings_section(&self, out: &mut String, title: &str, id: &str, findings: &[&Finding]) {
        let _ = writeln!(out, "<h2 id=\"{id}\">{title} ({})</h2>", findings.len());
        if findings.is_empty() {
            out.push_str("<p>None that holds.</p>\n");
            return;
        }
        let _ = writeln!(
            out,
            "<table id=\"{id}-table\"><thead><tr><th>Benchmark</th>{FINDING_HEADER}</tr></thead>\
             <tbody>"
        );
        for f in findings {
            let link = self
                .pages
                .iter()
                .position(|p| p.bench == f.bench)
                .map(|i| page_path(i, &f.bench))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<tr data-name=\"{}\"><td><a href=\"{link}#change-{}\">{}</a></td>{}</tr>",
                escape(&f.bench.to_lowercase()),
                f.at,
                escape(&f.bench),
                finding_cells(f)
            );
        }
        out.push_str("</tbody></table>\n");
    }

    /// Every benchmark: its figure, latest value, change over the history shown, and link.
    fn every_benchmark(&self, out: &mut String) {
        out.push_str(
            "<h2 id=\"all\">All benchmarks</h2><table id=\"all-table\"><thead><tr>\
             <th>Benchmark</th><th>Figure</th><th>Latest</th><th>Newest vs oldest</th>\
             <th>Runs</th><th>Changes</th><th>Other figures</th></tr></thead><tbody>\n",
        );
        // Each benchmark's changes that hold: the ones the index and its page list.
        let mut changes: HashMap<&str, usize> = HashMap::new();
        for f in &self.findings {
            *changes.entry(f.bench.as_str()).or_default() += 1;
        }
        for (i, page) in self.pages.iter().enumerate().filter(|(_, p)| p.listed) {
            let (first, last) = (page.drawn.first(), page.drawn.last());
            let latest = last.map_or(String::new(), |d| format_value(d.value, &page.source_unit));
            let overall = match (first, last) {
                (Some(a), Some(b)) if a.value != 0.0 && page.runs > 1 => {
                    format!("{:+.1}%", (b.value / a.value - 1.0) * 100.0)
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "<tr data-name=\"{}\"><td><a href=\"{}\">{}</a></td><td>{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{overall}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td>{}</td></tr>",
                escape(&page.bench.to_lowercase()),
                page_path(i, &page.bench),
                escape(&page.bench),
                escape(&page.what),
                escape(&latest),
                page.runs,
                changes.get(page.bench.as_str()).copied().unwrap_or(0),
                self.figure_links(i, false)
            );
        }
        out.push_str("</tbody></table>\n");
    }

    /// Page `index`: one benchmark's trend, its changes and the runs behind each drawn point.
    pub fn page(&self, index: usize) -> String {
        let page = &self.pages[index];
        let title = format!("{} · {}", page.bench, page.what);
        let mut out = head(&title, None);
        let _ = writeln!(
            out,
            "<p><a href=\"../index.html\">← {}</a></p><h1>{}</h1>\
             <p class=\"meta\">{} · {} runs · older runs where nothing changed are drawn in \
             buckets (median, with the range of their figures)</p>",
            escape(&self.title),
            escape(&page.bench),
            escape(&page.what),
            page.runs
        );
        let findings: Vec<&Finding> = (self.findings.iter())
            .chain(&self.other_findings)
            .filter(|f| f.bench == page.bench && f.what == page.what)
            .collect();
        let others = self.figure_links(index, true);
        if !others.is_empty() {
            let _ = writeln!(
                out,
                "<p>Figures: <strong>{}</strong> · {others}</p>",
                escape(&page.what)
            );
        }
        if !page.listed {
            out.push_str(
                "<p class=\"meta\">Changes of this figure are judged among its own series, \
                 as a family at the site's alpha, and are not listed on the index.</p>\n",
            );
        }
        out.push_str(&svg::trend(page, &findings));
        if !findings.is_empty() {
            let _ = writeln!(
                out,
                "<h2>Changes</h2><table><thead><tr>{FINDING_HEADER}</tr></thead><tbody>"
            );
            for f in &findings {
                let _ = writeln!(out, "<tr id=\"change-{}\">{}</tr>", f.at, finding_cells(f));
            }
            out.push_str("</tbody></table>\n");
        }
        self.runs_table(&mut out, page);
        out.push_str("</body></html>\n");
        out
    }

    /// Links to the pages of page `index`'s benchmark's other figures (`B/op · allocs/op`),
    /// addressed from a benchmark's page (its siblings) or from the index.
    fn figure_links(&self, index: usize, from_page: bool) -> String {
        let bench = &self.pages[index].bench;
        let links: Vec<String> = (self.pages.iter().enumerate())
            .filter(|(i, p)| *i != index && p.bench == *bench)
            .map(|(i, p)| {
                let file = match from_page {
                    true => page_file(i, &p.bench),
                    false => page_path(i, &p.bench),
                };
                format!("<a href=\"{file}\">{}</a>", escape(&p.what))
            })
            .collect();
        links.join(" · ")
    }

    /// The runs behind every drawn point, newest first, then each machine they name once.
    fn runs_table(&self, out: &mut String, page: &SeriesPage) {
        let mut machines: std::collections::BTreeMap<&str, &str> = Default::default();
        // The branch column only where runs of several branches are drawn.
        let first_branch = page.drawn.first().map(|d| &d.last.branch);
        let branches = page
            .drawn
            .iter()
            .any(|d| Some(&d.last.branch) != first_branch);
        let _ = writeln!(
            out,
            "<h2>Runs</h2><table class=\"runs\"><thead><tr><th>Runs</th><th>Commits</th>{}\
             <th>Stored</th><th>Figure</th><th>Range</th><th>Machine</th></tr></thead><tbody>",
            if branches { "<th>Branch</th>" } else { "" }
        );
        let short = |r: &crate::store::StoredRun| r.short_commit().unwrap_or_else(|| "—".into());
        for d in page.drawn.iter().rev() {
            let (runs, commits) = match d.runs.len() {
                1 => (format!("#{}", d.first.id), short(&d.first)),
                n => (
                    format!("#{}–#{} ({n} runs)", d.first.id, d.last.id),
                    format!("{}..{}", short(&d.first), short(&d.last)),
                ),
            };
            let machine = self.machines.get(&d.last.id);
            if let Some(m) = machine {
                machines.insert(&m.digest, &m.facts);
            }
            let unit = &page.source_unit;
            let range = match d.low < d.high {
                true => format!(
                    "{} – {}",
                    format_value(d.low, unit),
                    format_value(d.high, unit)
                ),
                false => String::new(),
            };
            let mark = match page.change_points.contains(&d.runs.start) {
                true => " class=\"change\"",
                false => "",
            };
            let branch = match branches {
                true => format!(
                    "<td>{}</td>",
                    escape(d.last.branch.as_deref().unwrap_or("—"))
                ),
                false => String::new(),
            };
            let _ = writeln!(
                out,
                "<tr{mark}><td>{}</td><td>{}</td>{branch}<td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                escape(&runs),
                escape(&commits),
                escape(&d.last.stored_at),
                escape(&format_value(d.value, unit)),
                escape(&range),
                escape(machine.map_or("", |m| m.digest.as_str())),
            );
        }
        out.push_str("</tbody></table>\n<h2>Machines</h2><dl>\n");
        for (digest, facts) in machines {
            let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(digest), escape(facts));
        }
        out.push_str("</dl>\n");
    }
}
