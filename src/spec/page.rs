//! The performance page's spec (`latkit page --spec page.toml`): which figures go in
//! "At a glance", which rules decide each "Health check" verdict, and which benchmarks are an
//! isolated micro-benchmark and its realistic counterpart. The numbers, verdicts and caveats
//! are computed from results; the spec only says what to compute. See docs/page.md.

use crate::error::{Error, Result};
use crate::model::Statistic;
use crate::model::{Unit, parse_quantity};
use crate::spec::line_of;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    title: Option<String>,
    #[serde(default)]
    glance: Vec<Spanned<GlanceSpec>>,
    #[serde(default)]
    health: Vec<Spanned<HealthSpec>>,
    #[serde(default)]
    pair: Vec<Spanned<PairSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GlanceSpec {
    task: String,
    bench: String,
    metric: Option<String>,
    statistic: Option<String>,
    #[serde(default)]
    show: Show,
    what: Option<String>,
    #[serde(default)]
    note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HealthSpec {
    area: String,
    bench: String,
    metric: Option<String>,
    statistic: Option<String>,
    rule: RuleKind,
    /// `thresholds` and `once`: `[{below = "100 ns", verdict = "Fast"}, ...]`;
    /// `headroom`: `[{at_least = 10, verdict = "Fast"}, ...]`.
    #[serde(default)]
    levels: Vec<LevelSpec>,
    otherwise: Option<String>,
    /// `headroom`: the time available per operation (`16.67 ms` for a 60 fps frame).
    budget: Option<String>,
    /// `relative`: the benchmark compared against, and what it is called in the text.
    reference: Option<String>,
    reference_label: Option<String>,
    slower: Option<String>,
    faster: Option<String>,
    same: Option<String>,
    /// `relative`: the smallest change that counts when repetitions are too few to test.
    noise: Option<String>,
    /// `once`: a per-item cost added to the one-time cost (`+ 74 ns/key`).
    per_item: Option<String>,
    per_item_unit: Option<String>,
    why: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelSpec {
    below: Option<String>,
    at_least: Option<f64>,
    verdict: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairSpec {
    micro: String,
    realistic: String,
    metric: Option<String>,
    /// Why the micro-benchmark flatters (`L1-resident`).
    why: Option<String>,
}

/// How an "At a glance" figure is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Show {
    /// `~80 ns`.
    #[default]
    Time,
    /// `~80 ns (13 M/s)`: the time and the rate it allows.
    TimeAndRate,
    /// `~82 k frames/s`: operations per second, from a time per operation or a rate metric.
    Rate,
    /// `1.2 GB/s`: bytes per second.
    Throughput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RuleKind {
    Thresholds,
    Headroom,
    Relative,
    Once,
}

/// A figure of one benchmark.
#[derive(Clone, Debug)]
pub struct Figure {
    pub bench: String,
    /// `real_time` unless the spec names another metric.
    pub metric: String,
    /// `median` unless the spec names `mean`, `min` or `max`.
    pub statistic: String,
    /// Whether the spec named the statistic (then the page says which it is).
    pub statistic_named: bool,
}

#[derive(Clone, Debug)]
pub struct Glance {
    pub line: usize,
    pub task: String,
    pub figure: Figure,
    pub show: Show,
    /// What one operation is, for rates (`frames`); `ops` when not given.
    pub what: String,
    pub note: String,
}

#[derive(Clone, Debug)]
pub struct Level {
    pub verdict: String,
    /// `below` a time (thresholds, once) in ns, or `at_least` a factor (headroom).
    pub limit: f64,
    pub text: String,
}

#[derive(Clone, Debug)]
pub enum Rule {
    /// The first level whose limit the figure is below; else `otherwise`.
    Thresholds {
        levels: Vec<Level>,
        otherwise: String,
    },
    /// `budget ÷ figure`, against levels of at least that factor.
    Headroom {
        budget_ns: f64,
        budget_text: String,
        levels: Vec<Level>,
        otherwise: String,
    },
    /// The figure against a reference benchmark's.
    Relative {
        reference: Figure,
        label: String,
        slower: String,
        faster: String,
        same: String,
        noise_percent: f64,
    },
    /// A one-time cost (and a per-item one), `Negligible` below a limit.
    Once {
        per_item: Option<(Figure, String)>,
        levels: Vec<Level>,
        otherwise: String,
    },
}

#[derive(Clone, Debug)]
pub struct Health {
    pub line: usize,
    pub area: String,
    pub figure: Figure,
    pub rule: Rule,
    /// The "Why" text with `{placeholders}`, or the rule's own when not given.
    pub why: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Pair {
    pub line: usize,
    pub micro: Figure,
    pub realistic: Figure,
    pub why: Option<String>,
}

#[derive(Clone, Debug)]
pub struct PageSpec {
    pub file: String,
    pub title: String,
    pub glance: Vec<Glance>,
    pub health: Vec<Health>,
    pub pairs: Vec<Pair>,
}

/// What a page can show of a benchmark's repetitions.
const STATISTICS: [Statistic; 4] = [
    Statistic::Median,
    Statistic::Mean,
    Statistic::Min,
    Statistic::Max,
];

impl PageSpec {
    pub fn load(path: &Path) -> Result<PageSpec> {
        super::load_checked(path, PageSpec::parse)
    }

    pub fn parse(file: &str, text: &str) -> Result<PageSpec> {
        let raw: File = crate::spec::parse(file, text, "page spec")?;
        let check = Checker { file };
        let mut glance = Vec::new();
        for spanned in raw.glance {
            let line = line_of(text, spanned.span().start);
            let g = spanned.into_inner();
            glance.push(Glance {
                line,
                task: g.task,
                figure: check.figure(line, g.bench, g.metric, g.statistic)?,
                show: g.show,
                what: g.what.unwrap_or_else(|| "ops".to_string()),
                note: g.note,
            });
        }
        let mut health = Vec::new();
        for spanned in raw.health {
            let line = line_of(text, spanned.span().start);
            let h = spanned.into_inner();
            health.push(Health {
                line,
                area: h.area.clone(),
                figure: check.figure(
                    line,
                    h.bench.clone(),
                    h.metric.clone(),
                    h.statistic.clone(),
                )?,
                rule: check.rule(line, &h)?,
                why: h.why,
            });
        }
        let mut pairs = Vec::new();
        for spanned in raw.pair {
            let line = line_of(text, spanned.span().start);
            let p = spanned.into_inner();
            pairs.push(Pair {
                line,
                micro: check.figure(line, p.micro, p.metric.clone(), None)?,
                realistic: check.figure(line, p.realistic, p.metric, None)?,
                why: p.why,
            });
        }
        if glance.is_empty() && health.is_empty() {
            return Err(Error::Input(format!(
                "{file}: no [[glance]] and no [[health]] rows: nothing to put on the page"
            )));
        }
        Ok(PageSpec {
            file: file.to_string(),
            title: raw.title.unwrap_or_else(|| "Performance".to_string()),
            glance,
            health,
            pairs,
        })
    }
}

/// Checks a page spec's rows, each error naming the file and line.
struct Checker<'a> {
    file: &'a str,
}

impl Checker<'_> {
    fn bad(&self, line: usize, why: String) -> Error {
        Error::Input(format!("{}:{line}: {why}", self.file))
    }

    fn figure(
        &self,
        line: usize,
        bench: String,
        metric: Option<String>,
        statistic: Option<String>,
    ) -> Result<Figure> {
        let statistic_named = statistic.is_some();
        let statistic = statistic.unwrap_or_else(|| "median".to_string());
        if Statistic::parse_among(&statistic, &STATISTICS).is_none() {
            return Err(self.bad(
                line,
                format!(
                    "statistic `{statistic}` is not one of {}",
                    Statistic::all_names(&STATISTICS)
                ),
            ));
        }
        Ok(Figure {
            bench,
            metric: metric.unwrap_or_else(|| "real_time".to_string()),
            statistic,
            statistic_named,
        })
    }

    /// A time in ns from `"16.67 ms"`.
    fn time(&self, line: usize, what: &str, text: &str) -> Result<f64> {
        match parse_quantity(text) {
            Some((ns, unit)) if unit == Unit::new(crate::model::Dimension::Time) => Ok(ns),
            _ => Err(self.bad(
                line,
                format!("{what} `{text}` is not a time (expected e.g. \"16.67 ms\", \"100 ns\")"),
            )),
        }
    }

    /// Levels of `below = "<time>"`.
    fn below_levels(&self, line: usize, levels: &[LevelSpec]) -> Result<Vec<Level>> {
        levels
            .iter()
            .map(|l| match (&l.below, l.at_least) {
                (Some(text), None) => Ok(Level {
                    verdict: l.verdict.clone(),
                    limit: self.time(line, "below", text)?,
                    text: text.clone(),
                }),
                _ => Err(self.bad(
                    line,
                    format!(
                        "level `{}` needs `below = \"<time>\"` (and no `at_least`)",
                        l.verdict
                    ),
                )),
            })
            .collect()
    }

    /// A field the row's rule needs.
    fn needs(
        &self,
        line: usize,
        h: &HealthSpec,
        field: &str,
        value: &Option<String>,
    ) -> Result<String> {
        value.clone().ok_or_else(|| {
            self.bad(
                line,
                format!("a `{:?}` rule needs `{field}`", h.rule).to_lowercase(),
            )
        })
    }

    fn rule(&self, line: usize, h: &HealthSpec) -> Result<Rule> {
        let otherwise = |default: &str| h.otherwise.clone().unwrap_or_else(|| default.into());
        Ok(match h.rule {
            RuleKind::Thresholds => {
                if h.levels.is_empty() {
                    return Err(self.bad(line, "a thresholds rule needs `levels`".into()));
                }
                Rule::Thresholds {
                    levels: self.below_levels(line, &h.levels)?,
                    otherwise: otherwise("Slow"),
                }
            }
            RuleKind::Headroom => self.headroom(line, h)?,
            RuleKind::Relative => self.relative(line, h)?,
            RuleKind::Once => Rule::Once {
                per_item: match h.per_item.clone() {
                    Some(bench) => Some((
                        self.figure(line, bench, h.metric.clone(), h.statistic.clone())?,
                        h.per_item_unit.clone().unwrap_or_else(|| "item".into()),
                    )),
                    None => None,
                },
                levels: if h.levels.is_empty() {
                    vec![Level {
                        verdict: "Negligible".into(),
                        limit: 1e6,
                        text: "1 ms".into(),
                    }]
                } else {
                    self.below_levels(line, &h.levels)?
                },
                otherwise: otherwise("Noticeable"),
            },
        })
    }

    fn headroom(&self, line: usize, h: &HealthSpec) -> Result<Rule> {
        let budget_text = self.needs(line, h, "budget", &h.budget)?;
        let levels = h
            .levels
            .iter()
            .map(|l| match (l.at_least, &l.below) {
                (Some(factor), None) if factor.is_finite() && factor > 0.0 => Ok(Level {
                    verdict: l.verdict.clone(),
                    limit: factor,
                    text: format!("{factor}x"),
                }),
                _ => Err(self.bad(
                    line,
                    format!(
                        "level `{}` needs `at_least = <factor>` (a positive number, no `below`)",
                        l.verdict
                    ),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let budget_ns = self.time(line, "budget", &budget_text)?;
        if budget_ns <= 0.0 {
            return Err(self.bad(
                line,
                format!("budget `{budget_text}` must be more than zero: headroom is budget ÷ time"),
            ));
        }
        Ok(Rule::Headroom {
            budget_ns,
            budget_text,
            levels: if levels.is_empty() {
                vec![Level {
                    verdict: "Fast enough".into(),
                    limit: 1.0,
                    text: "1x".into(),
                }]
            } else {
                levels
            },
            otherwise: h.otherwise.clone().unwrap_or_else(|| "Too slow".into()),
        })
    }

    fn relative(&self, line: usize, h: &HealthSpec) -> Result<Rule> {
        let reference = self.needs(line, h, "reference", &h.reference)?;
        let noise_percent = match &h.noise {
            None => 5.0,
            Some(text) => text
                .trim()
                .trim_end_matches('%')
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| {
                    self.bad(
                        line,
                        format!("noise `{text}` is not a percentage (e.g. \"5%\")"),
                    )
                })?,
        };
        Ok(Rule::Relative {
            label: h
                .reference_label
                .clone()
                .unwrap_or_else(|| reference.clone()),
            reference: self.figure(line, reference, h.metric.clone(), h.statistic.clone())?,
            slower: h.slower.clone().unwrap_or_else(|| "Slower".into()),
            faster: h.faster.clone().unwrap_or_else(|| "Faster".into()),
            same: h.same.clone().unwrap_or_else(|| "Same".into()),
            noise_percent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line() {
        for (text, expected) in [
            (
                "[[glance]]\ntask = \"x\"\nbench = \"b\"\ncolour = \"red\"\n",
                "p.toml:4: not a valid page spec: unknown field `colour`",
            ),
            (
                "[[glance]]\ntask = \"x\"\nbench = \"b\"\nstatistic = \"p42\"\n",
                "p.toml:1: statistic `p42` is not one of",
            ),
            (
                "\n[[health]]\narea = \"a\"\nbench = \"b\"\nrule = \"headroom\"\n",
                "p.toml:2: a `headroom` rule needs `budget`",
            ),
            (
                "[[health]]\narea = \"a\"\nbench = \"b\"\nrule = \"headroom\"\nbudget = \"60 fps\"\n",
                "p.toml:1: budget `60 fps` is not a time",
            ),
            (
                "[[health]]\narea = \"a\"\nbench = \"b\"\nrule = \"thresholds\"\nlevels = [{at_least = 3, verdict = \"Fast\"}]\n",
                "level `Fast` needs `below",
            ),
            ("title = \"t\"\n", "nothing to put on the page"),
        ] {
            let err = PageSpec::parse("p.toml", text).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}\n  expected: {expected}");
        }
    }

    #[test]
    fn defaults() {
        let spec = PageSpec::parse(
            "p.toml",
            "[[glance]]\ntask = \"Lookup\"\nbench = \"BM_Get\"\nshow = \"time_and_rate\"\n\n[[health]]\narea = \"Writer\"\nbench = \"BM_W\"\nrule = \"headroom\"\nbudget = \"16.67 ms\"\nlevels = [{at_least = 10, verdict = \"Fast\"}]\n",
        )
        .unwrap();
        assert_eq!(spec.glance[0].figure.metric, "real_time");
        assert_eq!(spec.glance[0].figure.statistic, "median");
        assert_eq!(spec.health[0].line, 6);
        let Rule::Headroom {
            budget_ns,
            otherwise,
            ..
        } = &spec.health[0].rule
        else {
            panic!("headroom");
        };
        assert!((budget_ns - 16.67e6).abs() < 1e-3);
        assert_eq!(otherwise, "Too slow");
    }
}
