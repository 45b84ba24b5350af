//! The performance page: "At a glance" figures, "Health check" verdicts, the environment and
//! the caveats, computed from results as a page spec asks. Numbers are written the way people
//! write them on such pages (`~82 k frames/s`, `~80 ns (13 M/s)`, `4 us (267 k/s)`).

use super::stats::min_samples_for_ci;
use crate::analyze::stats::Summary as Stats;
use crate::error::{Error, Result};
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
            Ok(pair_caveat(&micro, &realistic, p.why.as_deref()))
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
        let value = match figure.statistic.as_str() {
            "mean" => stats.mean,
            "min" => stats.min,
            "max" => stats.max,
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
        if (cpu_rate || figure.metric == "cpu_time") && !self.cpu_based.contains(&figure.bench) {
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

    /// A figure that must be a time per operation.
    fn time(&mut self, figure: &Figure, line: usize, why: &str) -> Result<Found<'a>> {
        let found = self.find(figure, line)?;
        if found.metric.unit.dimension != Dimension::Time {
            return Err(self.bad(
                line,
                format!(
                    "{why} needs a time per operation, but `{}` {} is in {}",
                    figure.bench, figure.metric, found.metric.source_unit
                ),
            ));
        }
        Ok(found)
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
                if *dimension != Dimension::Time {
                    return Err(mismatch("a time per operation"));
                }
                let rate = 1e9 / found.value;
                let mut text = time_text(found.value);
                if g.show == Show::TimeAndRate {
                    text = format!("{text} ({}/s)", plain(rate_number(rate)));
                }
                (
                    text,
                    vec![
                        ("time", Slot::Time(found.value)),
                        ("rate", Slot::Rate(rate)),
                    ],
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
                        let item = self.time(figure, h.line, "a per-item cost")?;
                        slots.push(("per_item", Slot::Time(item.value)));
                        format!("{{value}} + {{per_item}}/{unit}. Once per integration.")
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

fn pair_caveat(micro: &Found, realistic: &Found, why: Option<&str>) -> String {
    let why = why.map(|w| format!(", {w}")).unwrap_or_default();
    let show = |f: &Found| match f.metric.unit.dimension {
        Dimension::Time => format!("{}/op", time_text(f.value)),
        _ => tilde(rate_number(f.value)),
    };
    format!(
        "{} ({}{why}) is an isolated micro-benchmark: a ceiling, not the realistic integration cost ({}: {}, {}x the micro-benchmark's).",
        micro.bench.name.full_name,
        show(micro),
        realistic.bench.name.full_name,
        show(realistic),
        plain(approx(realistic.value / micro.value)),
    )
}

/// A number as people write it: two significant digits (three from 100 up), and whether
/// rounding moved it by more than 0.5 % (then it is shown with a `~`).
fn approx(value: f64) -> (String, bool) {
    // A time of zero makes a factor infinite; zero itself has no magnitude to round.
    if value.is_nan() {
        return ("?".to_string(), false);
    }
    if value.is_infinite() {
        return (if value < 0.0 { "-∞" } else { "∞" }.to_string(), false);
    }
    if value == 0.0 {
        return ("0".to_string(), false);
    }
    let magnitude = value.abs();
    let (rounded, digits) = if magnitude >= 100.0 {
        // Three significant digits, the rest zeros: 158712 → 159000.
        let step = 10f64.powi(magnitude.log10().floor() as i32 - 2);
        ((value / step).round() * step, 0)
    } else if magnitude >= 10.0 {
        (value, 0)
    } else if magnitude >= 1.0 {
        (value, 1)
    } else {
        (
            value,
            (1 - magnitude.log10().floor() as i32).max(1) as usize,
        )
    };
    let text = format!("{rounded:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let shown: f64 = text.parse().unwrap_or(value);
    let moved = value != 0.0 && ((shown - value) / value).abs() > 0.005;
    (text, moved)
}

/// `~82` when rounding moved the value, else `82`.
fn tilde((text, moved): (String, bool)) -> String {
    if moved { format!("~{text}") } else { text }
}

fn plain((text, _): (String, bool)) -> String {
    text
}

/// `59 %` for a ratio of 1.59, `~1800x` from a ratio of 2 up.
fn by_how_much(ratio: f64) -> String {
    if ratio >= 2.0 {
        format!("{}x", tilde(approx(ratio)))
    } else {
        format!("{} %", plain(approx((ratio - 1.0) * 100.0)))
    }
}

fn signed(percent: f64) -> String {
    let text = plain(approx(percent.abs()));
    if percent < 0.0 {
        format!("-{text}")
    } else {
        format!("+{text}")
    }
}

/// `~80 ns`, `4 us`, `~5.6 s`.
fn time_text(ns: f64) -> String {
    let (scaled, unit) = scale(ns, &[(1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")]);
    format!("{} {unit}", tilde(approx(scaled)))
}

/// `82 k`, `13 M`: a count per second with its decimal prefix (the caller adds what/s).
fn rate_number(per_second: f64) -> (String, bool) {
    let (scaled, prefix) = scale(
        per_second,
        &[(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")],
    );
    let (text, moved) = approx(scaled);
    let text = if prefix.is_empty() {
        text
    } else {
        format!("{text} {prefix}")
    };
    (text, moved)
}

fn throughput_text(bytes_per_second: f64) -> String {
    let (scaled, unit) = scale(
        bytes_per_second,
        &[
            (1.0, "B/s"),
            (1e3, "kB/s"),
            (1e6, "MB/s"),
            (1e9, "GB/s"),
            (1e12, "TB/s"),
        ],
    );
    format!("{} {unit}", tilde(approx(scaled)))
}

fn scale(value: f64, steps: &[(f64, &'static str)]) -> (f64, &'static str) {
    let mut chosen = steps[0];
    for step in steps {
        if value.abs() >= step.0 * 0.9995 {
            chosen = *step;
        }
    }
    (value / chosen.0, chosen.1)
}

fn environment(run: &Run, runs: usize, used: &[(String, usize)]) -> Vec<(String, String)> {
    let env = &run.environment;
    let config = |key: &str| {
        run.config
            .iter()
            .find(|c| c.key == key)
            .map(|c| c.value.clone())
    };
    let mut rows = Vec::new();
    let cores = config("num_cpus").or_else(|| env.cores.map(|c| c.to_string()));
    let cpu = match (env.cpu_model.clone(), cores, config("mhz_per_cpu")) {
        (model, Some(cores), Some(mhz)) => Some(format!(
            "{}{cores} × {mhz} MHz",
            model.map(|m| format!("{m}, ")).unwrap_or_default()
        )),
        (model, Some(cores), None) => Some(format!(
            "{}{cores} cores",
            model.map(|m| format!("{m}, ")).unwrap_or_default()
        )),
        (model, None, _) => model,
    };
    let os = [env.os.clone(), env.kernel.clone(), env.arch.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let reps: Vec<usize> = used.iter().map(|(_, n)| *n).collect();
    let repetitions = match (reps.iter().min(), reps.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!(
            "{lo} repetition{} per benchmark",
            if *lo == 1 { "" } else { "s" }
        ),
        (Some(lo), Some(hi)) => format!("{lo}–{hi} repetitions per benchmark"),
        _ => String::new(),
    };
    let candidates = [
        ("CPU", cpu),
        ("Caches", config("caches")),
        (
            "Build type",
            config("library_build_type").map(|t| format!("google/benchmark library: {t}")),
        ),
        (
            "CPU scaling",
            config("cpu_scaling_enabled").map(|s| {
                if s == "true" {
                    "on".into()
                } else {
                    "off".into()
                }
            }),
        ),
        ("OS", (!os.is_empty()).then_some(os)),
        ("Host", env.hostname.clone().or_else(|| config("host_name"))),
        ("Virtualisation", env.virtualization.clone()),
        ("Date", run.started.clone()),
        (
            "Runs",
            Some(format!(
                "{runs} run{}{}",
                if runs == 1 { "" } else { "s" },
                if repetitions.is_empty() {
                    String::new()
                } else {
                    format!(", {repetitions}")
                }
            )),
        ),
    ];
    for (key, value) in candidates {
        if let Some(value) = value {
            rows.push((key.to_string(), value));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_write_them() {
        assert_eq!(time_text(79.6), "~80 ns");
        assert_eq!(time_text(4000.0), "4 us");
        assert_eq!(time_text(5.64e9), "~5.6 s");
        assert_eq!(time_text(5.62e9), "5.6 s");
        assert_eq!(time_text(1.7), "1.7 ns");
        assert_eq!(time_text(0.7418), "0.74 ns");
        assert_eq!(time_text(0.7438), "~0.74 ns");
        assert_eq!(plain(rate_number(1e9 / 79.6)), "13 M");
        assert_eq!(tilde(rate_number(267_000.0)), "267 k");
        assert_eq!(tilde(rate_number(81_500.0)), "~82 k");
        assert_eq!(tilde(rate_number(81_900.0)), "82 k");
        assert_eq!(throughput_text(1.23e9), "~1.2 GB/s");
        assert_eq!(time_text(999.9), "1 us");
        assert_eq!(tilde(approx(158_712.0)), "159000");
        assert_eq!(by_how_much(1.59), "59 %");
        assert_eq!(by_how_much(1750.4), "1750x");
    }
}
