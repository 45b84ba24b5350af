//! The performance page: "At a glance" figures, "Health check" verdicts, the environment and
//! the caveats, computed from results as a page spec asks. Numbers are written the way people
//! write them on such pages (`~82 k frames/s`, `~80 ns (13 M/s)`, `4 us (267 k/s)`).

use super::stats::min_samples_for_ci;
use crate::analyze::stats::Summary as Stats;
use crate::error::{Error, Result};
use crate::model::Statistic;
use crate::model::{Benchmark, Better, Dimension, Metric, MetricKind, Run, Summary};
use crate::spec::page::{Figure, Health, PageSpec, Rule, Show};

/// The page, ready to render: every cell is text.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub title: String,
    /// Task, Number, Notes.
    pub glance: Vec<[String; 3]>,
    /// Area, Verdict, Why.
    pub health: Vec<[String; 3]>,
    pub environment: Vec<(String, String)>,
    pub caveats: Vec<String>,
}

/// A benchmark's figure, found and computed.
struct Found<'a> {
    bench: &'a Benchmark,
    metric: &'a Metric,
    value: f64,
    stats: Summary,
}

/// Builds the page for `run` (several input runs merged into one), `runs` the number of runs.
pub fn build_page(spec: &PageSpec, run: &Run, runs: usize) -> Result<Page> {
    let mut page = Pages {
        spec,
        run,
        used: Vec::new(),
        cpu_based: Vec::new(),
        untested: Vec::new(),
    };
    let glance = spec
        .glance
        .iter()
        .map(|g| page.glance_row(g))
        .collect::<Result<Vec<_>>>()?;
    let health = spec
        .health
        .iter()
        .map(|h| page.health_row(h))
        .collect::<Result<Vec<_>>>()?;
    let mut caveats = Vec::new();
    let pairs = spec
        .pairs
        .iter()
        .map(|p| {
            let micro = page.find(&p.micro, p.line)?;
            let realistic = page.find(&p.realistic, p.line)?;
            pair_caveat(&micro, &realistic, p.why.as_deref()).map_err(|why| page.bad(p.line, why))
        })
        .collect::<Result<Vec<_>>>()?;
    caveats.extend(page.caveats(runs));
    caveats.extend(pairs);
    Ok(Page {
        title: spec.title.clone(),
        glance,
        health,
        environment: environment(run, runs, &page.used),
        caveats,
    })
}

struct Pages<'a> {
    spec: &'a PageSpec,
    run: &'a Run,
    /// Benchmarks the page shows, with their repetition counts.
    used: Vec<(String, usize)>,
    /// Figures that are CPU-time based.
    cpu_based: Vec<String>,
    /// Relative rows judged against the noise threshold for want of repetitions.
    untested: Vec<String>,
}

/// A health rule's verdict, its default "Why" and the placeholders that fill it.
type Judged = (String, String, Vec<(&'static str, Slot)>);

/// The value of a `{placeholder}` in a note or a "Why".
#[derive(Clone, Copy)]
enum Slot {
    Time(f64),
    Rate(f64),
    Factor(f64),
}

impl<'a> Pages<'a> {
    fn bad(&self, line: usize, why: String) -> Error {
        Error::Input(format!("{}:{line}: {why}", self.spec.file))
    }

    fn find(&mut self, figure: &Figure, line: usize) -> Result<Found<'a>> {
        let benches = &self.run.benchmarks;
        let bench = benches
            .iter()
            .find(|b| b.name.full_name == figure.bench)
            .ok_or_else(|| {
                let have: Vec<&str> = benches
                    .iter()
                    .map(|b| b.name.full_name.as_str())
                    .take(12)
                    .collect();
                self.bad(
                    line,
                    format!(
                        "bench `{}` is not in the results (they have: {})",
                        figure.bench,
                        have.join(", ")
                    ),
                )
            })?;
        let metric = bench
            .metric(&figure.metric)
            .filter(|m| m.kind == MetricKind::Repetitions && !m.values.is_empty())
            .ok_or_else(|| {
                let have: Vec<&str> = bench.metrics.iter().map(|m| m.name.as_str()).collect();
                self.bad(
                    line,
                    format!(
                        "`{}` has no metric `{}` (it has: {})",
                        figure.bench,
                        figure.metric,
                        have.join(", ")
                    ),
                )
            })?;
        let stats = Stats::of(&metric.values)
            .ok_or_else(|| self.bad(line, format!("`{}` has no values", figure.bench)))?;
        // The spec admits only the median, mean, min and max.
        let value = match Statistic::parse(&figure.statistic) {
            Some(Statistic::Mean) => stats.mean,
            Some(Statistic::Min) => stats.min,
            Some(Statistic::Max) => stats.max,
            _ => stats.median,
        };
        if !self.used.iter().any(|(name, _)| *name == figure.bench) {
            self.used.push((figure.bench.clone(), stats.n));
        }
        let cpu_rate = matches!(
            figure.metric.as_str(),
            "items_per_second" | "bytes_per_second"
        ) && !bench
            .name
            .path
            .iter()
            .any(|p| p == "real_time" || p == "manual_time");
        // Each benchmark once, by the first of its CPU-time figures the page read.
        let listed = format!("{} (", figure.bench);
        if (cpu_rate || figure.metric == "cpu_time")
            && !self.cpu_based.iter().any(|b| b.starts_with(&listed))
        {
            self.cpu_based
                .push(format!("{} ({})", figure.bench, figure.metric));
        }
        Ok(Found {
            bench,
            metric,
            value,
            stats,
        })
    }

    /// The time per item of `figure`'s benchmark and the items an iteration holds, from its
    /// `items_per_second` (google/benchmark's `SetItemsProcessed`): an iteration is not an
    /// item unless the harness says how many it holds, so without it this is exit 2.
    fn per_item(&mut self, figure: &Figure, line: usize, unit: &str) -> Result<(f64, f64)> {
        let rate = Figure {
            metric: "items_per_second".into(),
            ..figure.clone()
        };
        let rate = self.find(&rate, line).map_err(|_| {
            self.bad(
                line,
                format!(
                    "`per_item` needs the {unit}s an iteration of `{}` holds, and it reports no \
                     items_per_second (google/benchmark's SetItemsProcessed): its time is per \
                     iteration, not per {unit}",
                    figure.bench
                ),
            )
        })?;
        let per_second = rate.value;
        // The rate is of CPU time unless the benchmark measures real (or manual) time.
        let clock = match rate
            .bench
            .name
            .path
            .iter()
            .any(|p| p == "real_time" || p == "manual_time")
        {
            true => "real_time",
            false => "cpu_time",
        };
        let time = Figure {
            metric: clock.into(),
            ..figure.clone()
        };
        let iteration = self.time(&time, line, "a per-item cost")?.value;
        if !(per_second > 0.0 && per_second.is_finite()) {
            return Err(self.bad(line, format!("`{}` processed no {unit}s", figure.bench)));
        }
        Ok((1e9 / per_second, per_second * iteration / 1e9))
    }

    /// A figure that must be a time per operation, or a rate of items, which is taken as the
    /// time per item (its inverse): `~80 ns per read: Excellent` from `items_per_second`.
    fn time(&mut self, figure: &Figure, line: usize, why: &str) -> Result<Found<'a>> {
        let found = self.find(figure, line)?;
        match per_item_of_rate(&found) {
            _ if found.metric.unit.dimension == Dimension::Time => Ok(found),
            Some(ns) => Ok(Found { value: ns, ..found }),
            None => Err(self.bad(
                line,
                format!(
                    "{why} needs a time per operation or a rate, but `{}` {} is in {}",
                    figure.bench, figure.metric, found.metric.source_unit
                ),
            )),
        }
    }

    fn glance_row(&mut self, g: &crate::spec::page::Glance) -> Result<[String; 3]> {
        let found = self.find(&g.figure, g.line)?;
        let dimension = &found.metric.unit.dimension;
        let per_second = |f: &Found| match f.metric.unit.dimension {
            Dimension::Time => Some(1e9 / f.value),
            Dimension::EventRate => Some(f.value),
            Dimension::Count(_) if f.metric.better == Better::Higher => Some(f.value),
            _ => None,
        };
        let mismatch = |wants: &str| {
            self.bad(
                g.line,
                format!(
                    "show = \"{}\" needs {wants}, but `{}` {} is in {}",
                    show_name(g.show),
                    g.figure.bench,
                    g.figure.metric,
                    found.metric.source_unit
                ),
            )
        };
        let (number, slots) = match g.show {
            Show::Time | Show::TimeAndRate => {
                // A rate of items is shown as its time per item.
                let Some((time, _)) = pair_time(&found) else {
                    return Err(mismatch("a time per operation or a rate"));
                };
                let rate = 1e9 / time;
                let mut text = time_text(time);
                if g.show == Show::TimeAndRate {
                    text = format!("{text} ({}/s)", plain(rate_number(rate)));
                }
                (
                    text,
                    vec![("time", Slot::Time(time)), ("rate", Slot::Rate(rate))],
                )
            }
            Show::Rate => {
                let rate =
                    per_second(&found).ok_or_else(|| mismatch("a time per operation or a rate"))?;
                let time = 1e9 / rate;
                (
                    format!("{} {}/s", tilde(rate_number(rate)), g.what),
                    vec![("time", Slot::Time(time)), ("rate", Slot::Rate(rate))],
                )
            }
            Show::Throughput => {
                if *dimension != Dimension::ByteRate {
                    return Err(mismatch("bytes per second"));
                }
                (
                    throughput_text(found.value),
                    vec![("rate", Slot::Rate(found.value))],
                )
            }
        };
        let number = match g.figure.statistic_named {
            true => format!("{number} ({})", g.figure.statistic),
            false => number,
        };
        let mut slots = slots;
        slots.push(("value", slots[0].1));
        let note = self.fill(&g.note, &slots, g.line)?;
        Ok([g.task.clone(), number, note])
    }

    fn health_row(&mut self, h: &Health) -> Result<[String; 3]> {
        let (verdict, default_why, slots) = match &h.rule {
            Rule::Thresholds { levels, otherwise } => {
                let found = self.time(&h.figure, h.line, "a thresholds rule")?;
                let hit = levels.iter().find(|l| found.value < l.limit);
                let why = match hit {
                    Some(level) => format!("{{value}}, under {}", level.text),
                    None => format!(
                        "{{value}}, not under {}",
                        levels.last().map_or("", |l| l.text.as_str())
                    ),
                };
                let verdict = hit.map_or(otherwise.clone(), |l| l.verdict.clone());
                (verdict, why, vec![("value", Slot::Time(found.value))])
            }
            Rule::Headroom {
                budget_ns,
                budget_text,
                levels,
                otherwise,
            } => {
                let found = self.time(&h.figure, h.line, "a headroom rule")?;
                let headroom = budget_ns / found.value;
                let verdict = levels
                    .iter()
                    .find(|l| headroom >= l.limit)
                    .map_or(otherwise.clone(), |l| l.verdict.clone());
                (
                    verdict,
                    format!("~{{headroom}}x headroom over the {budget_text} budget"),
                    vec![
                        ("value", Slot::Time(found.value)),
                        ("headroom", Slot::Factor(headroom)),
                        ("budget", Slot::Time(*budget_ns)),
                    ],
                )
            }
            Rule::Relative {
                reference,
                label,
                slower,
                faster,
                same,
                noise_percent,
            } => self.relative(h, reference, label, [slower, faster, same], *noise_percent)?,
            Rule::Once {
                per_item,
                levels,
                otherwise,
            } => {
                let found = self.time(&h.figure, h.line, "a one-time cost")?;
                let mut slots = vec![("value", Slot::Time(found.value))];
                let why = match per_item {
                    Some((figure, unit)) => {
                        let (per_item, items) = self.per_item(figure, h.line, unit)?;
                        slots.push(("per_item", Slot::Time(per_item)));
                        slots.push(("items", Slot::Factor(items)));
                        format!(
                            "{{value}} + {{per_item}}/{unit} ({{items}} {unit}s an iteration). \
                             Once per integration."
                        )
                    }
                    None => "{value}. Once per integration.".to_string(),
                };
                let verdict = levels
                    .iter()
                    .find(|l| found.value < l.limit)
                    .map_or(otherwise.clone(), |l| l.verdict.clone());
                (verdict, why, slots)
            }
        };
        let why = self.fill(h.why.as_deref().unwrap_or(&default_why), &slots, h.line)?;
        Ok([h.area.clone(), verdict, why])
    }

    /// A `relative` rule: the figure against a reference's, significant when their
    /// intervals do not overlap (beyond `noise_percent` when there are none).
    fn relative(
        &mut self,
        h: &Health,
        reference: &Figure,
        label: &str,
        [slower, faster, same]: [&String; 3],
        noise_percent: f64,
    ) -> Result<Judged> {
        let a = self.find(&h.figure, h.line)?;
        let b = self.find(reference, h.line)?;
        if a.metric.unit != b.metric.unit {
            return Err(self.bad(
                h.line,
                format!(
                    "`{}` is in {} but the reference `{}` in {}: they cannot be compared",
                    h.figure.bench, a.metric.source_unit, reference.bench, b.metric.source_unit
                ),
            ));
        }
        // Slower as a fraction of the reference's time: for rates, the inverse ratio.
        let ratio = match a.metric.better {
            Better::Lower => a.value / b.value,
            Better::Higher => b.value / a.value,
        };
        let percent = (ratio - 1.0) * 100.0;
        let significant = match (&a.stats.median_ci, &b.stats.median_ci) {
            (Some(x), Some(y)) => x.high < y.low || y.high < x.low,
            _ => {
                self.untested
                    .push(format!("{} ({noise_percent} %)", h.area));
                percent.abs() > noise_percent
            }
        };
        let (verdict, change) = match (significant, ratio > 1.0) {
            (false, _) => (
                same.clone(),
                format!("within noise ({} %) of", signed(percent)),
            ),
            (true, true) => (slower.clone(), format!("{} slower", by_how_much(ratio))),
            (true, false) => (
                faster.clone(),
                format!("{} faster", by_how_much(1.0 / ratio)),
            ),
        };
        let why = format!("{change} than {label}");
        Ok((verdict, why, vec![("value", value_slot(&a))]))
    }

    /// Fills `{name}`, `{name * K}` and `{name / K}` from `slots`.
    fn fill(&self, template: &str, slots: &[(&str, Slot)], line: usize) -> Result<String> {
        let mut out = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| self.bad(line, format!("`{template}`: a `{{` without its `}}`")))?;
            let expr = &rest[open + 1..open + close];
            out.push_str(&self.evaluate(expr, slots, line)?);
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn evaluate(&self, expr: &str, slots: &[(&str, Slot)], line: usize) -> Result<String> {
        let (name, op) = match expr.find(['*', '/']) {
            Some(at) => (
                &expr[..at],
                Some((&expr[at..at + 1], expr[at + 1..].trim())),
            ),
            None => (expr, None),
        };
        let name = name.trim();
        let slot = slots
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .ok_or_else(|| {
                let known: Vec<&str> = slots.iter().map(|(n, _)| *n).collect();
                self.bad(
                    line,
                    format!(
                        "`{{{expr}}}`: no `{name}` here (this row has {})",
                        known.join(", ")
                    ),
                )
            })?;
        let factor = match op {
            None => 1.0,
            Some((op, k)) => {
                let k: f64 = k
                    .replace('_', "")
                    .parse()
                    .ok()
                    .filter(|k: &f64| k.is_finite() && *k != 0.0)
                    .ok_or_else(|| {
                        self.bad(
                            line,
                            format!("`{{{expr}}}`: `{k}` is not a non-zero number"),
                        )
                    })?;
                if op == "*" { k } else { 1.0 / k }
            }
        };
        Ok(match slot {
            Slot::Time(ns) => time_text(ns * factor),
            Slot::Rate(r) => tilde(rate_number(r * factor)),
            Slot::Factor(x) => plain(approx(x * factor)),
        })
    }

    fn caveats(&self, runs: usize) -> Vec<String> {
        let mut caveats = Vec::new();
        let env = &self.run.environment;
        let config = |key: &str| {
            self.run
                .config
                .iter()
                .find(|c| c.key == key)
                .map(|c| c.value.as_str())
        };
        if runs == 1 {
            let host = env
                .hostname
                .as_deref()
                .or(config("host_name"))
                .unwrap_or("one machine");
            caveats.push(format!(
                "One machine, one run: every figure comes from a single run on {host}{}; another machine, or this one on another day, will differ.",
                self.run.started.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
            ));
        }
        let needed = min_samples_for_ci(0.95);
        let few: Vec<String> = self
            .used
            .iter()
            .filter(|(_, n)| *n < needed)
            .map(|(name, n)| format!("{name} ({n})"))
            .collect();
        if !few.is_empty() {
            caveats.push(format!(
                "Too few repetitions for a 95 % confidence interval of the median (need ≥ {needed}): {}. Run with `--repetitions {needed}` or more.",
                few.join(", ")
            ));
        }
        if !self.cpu_based.is_empty() {
            caveats.push(format!(
                "CPU-time based: {}. google/benchmark's `items_per_second` and `bytes_per_second` divide by CPU time unless the benchmark uses real time, and CPU time leaves out waiting: use wall time (`real_time`) for user-observable claims.",
                self.cpu_based.join(", ")
            ));
        }
        if config("library_build_type") == Some("debug") {
            caveats.push("The google/benchmark library was a debug build: its timing loop runs unoptimised, so every time is inflated compared with a release build.".into());
        }
        if config("cpu_scaling_enabled") == Some("true") {
            caveats.push("CPU frequency scaling was on: the clock speed changed during the run, so repetitions vary and early ones run slower.".into());
        }
        if !self.untested.is_empty() {
            caveats.push(format!(
                "Not tested for significance (fewer than {needed} repetitions on a side): {}; the difference was judged against that noise threshold.",
                self.untested.join(", ")
            ));
        }
        caveats
    }
}

fn show_name(show: Show) -> &'static str {
    match show {
        Show::Time => "time",
        Show::TimeAndRate => "time_and_rate",
        Show::Rate => "rate",
        Show::Throughput => "throughput",
    }
}

fn value_slot(found: &Found) -> Slot {
    match found.metric.unit.dimension {
        Dimension::Time => Slot::Time(found.value),
        _ => Slot::Rate(found.value),
    }
}

mod environment;
mod rates;
mod wording;

use environment::environment;
use rates::{pair_caveat, pair_time, per_item_of_rate};
use wording::*;
