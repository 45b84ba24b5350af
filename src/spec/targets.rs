//! The targets file of `latkit check`: limits per benchmark and metric, and a latency budget.
//!
//! ```toml
//! [[target]]
//! bench = "encode_raw"     # name or glob
//! metric = "avg"           # a metric, or a statistic: min avg median p50 p90 p99 p99.9 p99.99 max stddev
//! below = "5 ms"
//!
//! [budget]
//! name = "end to end"
//! total = "20 ms"
//! [[budget.stage]]
//! name = "encode"
//! bench = "encode_raw"
//! metric = "avg"
//!
//! [[regression]]           # judged against `latkit check --base OLD`
//! metric = "p99"           # a metric name or a distribution statistic
//! threshold = "+10%"       # +N% worse when higher, -N% worse when lower, N% the metric's way
//! strict = false           # true: beyond the threshold but within noise fails too
//! ```

use crate::error::{Error, Result};
use crate::model::{Better, Unit, parse_quantity};
use crate::spec::line_of;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    target: Vec<Spanned<TargetSpec>>,
    budget: Option<Spanned<BudgetSpec>>,
    #[serde(default)]
    regression: Vec<Spanned<RegressionSpec>>,
}

/// `[[regression]]`: the same rule as `latkit compare --fail-on`, judged against `--base`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegressionSpec {
    metric: String,
    /// `+5%` (worse when higher), `-5%` (worse when lower), `5%` (the metric's direction).
    threshold: String,
    #[serde(default)]
    strict: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetSpec {
    bench: String,
    metric: String,
    below: Option<Spanned<QuantitySpec>>,
    above: Option<Spanned<QuantitySpec>>,
}

/// A limit as written: `"5 ms"`, or a bare number for a count (`below = 1`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum QuantitySpec {
    Text(String),
    Number(f64),
}

impl QuantitySpec {
    fn text(&self) -> String {
        match self {
            QuantitySpec::Text(t) => t.trim().to_string(),
            QuantitySpec::Number(n) => crate::model::format_exact(*n),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetSpec {
    #[serde(default = "default_budget_name")]
    name: String,
    total: Spanned<QuantitySpec>,
    #[serde(default)]
    stage: Vec<Spanned<StageSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StageSpec {
    name: Option<String>,
    bench: String,
    metric: String,
    /// The stage's own limits (RootStream's stage table has one per stage).
    below: Option<Spanned<QuantitySpec>>,
    above: Option<Spanned<QuantitySpec>>,
}

fn default_budget_name() -> String {
    "budget".to_string()
}

/// A limit, parsed: the value in the unit's base unit, and the text as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub value: f64,
    pub unit: Unit,
    pub text: String,
    /// The line the limit is written on.
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Target {
    pub bench: String,
    pub metric: String,
    pub below: Option<Limit>,
    pub above: Option<Limit>,
    /// Line of the target in its file, for messages.
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Stage {
    pub name: String,
    pub bench: String,
    pub metric: String,
    pub below: Option<Limit>,
    pub above: Option<Limit>,
    /// Line of the stage in its file, for messages.
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Budget {
    pub name: String,
    pub total: Limit,
    pub stages: Vec<Stage>,
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub file: String,
    pub targets: Vec<Target>,
    pub budget: Option<Budget>,
    /// Regression rules, judged by comparing the results with a base (`check --base`).
    pub regressions: Vec<RegressionRule>,
}

/// `--fail-on 'ns/op:+5%'`: fail when `metric` (a metric name, or a distribution statistic
/// such as `p99`) moves in the bad direction by more than `percent`.
#[derive(Clone, Debug, PartialEq)]
pub struct RegressionRule {
    pub metric: String,
    /// The allowed change in percent, positive.
    pub percent: f64,
    /// `Some(true)`: an increase is the regression (`+5%`); `Some(false)`: a decrease (`-5%`);
    /// `None`: whichever direction is worse for the metric.
    pub increase_is_bad: Option<bool>,
    /// As the user wrote it, for messages.
    pub text: String,
    /// A change beyond the threshold that is within noise fails too.
    pub strict: bool,
}

impl RegressionRule {
    /// Parses `METRIC:[+|-]N%`.
    pub fn parse(text: &str) -> std::result::Result<RegressionRule, String> {
        let bad = || {
            format!(
                "`{text}` is not a regression rule: expected METRIC:+N% (worse when higher), \
                 METRIC:-N% (worse when lower) or METRIC:N% (the metric's own direction), e.g. \
                 ns/op:+5% or throughput:-5%"
            )
        };
        let (metric, threshold) = text.rsplit_once(':').ok_or_else(bad)?;
        let number = threshold.trim().strip_suffix('%').ok_or_else(bad)?;
        let (increase_is_bad, digits) = match number.as_bytes().first() {
            Some(b'+') => (Some(true), &number[1..]),
            Some(b'-') => (Some(false), &number[1..]),
            _ => (None, number),
        };
        let digits = digits.trim();
        if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(bad());
        }
        let percent: f64 = digits.parse().map_err(|_| bad())?;
        if metric.trim().is_empty() || !percent.is_finite() || !(0.0..=1e6).contains(&percent) {
            return Err(bad());
        }
        Ok(RegressionRule {
            metric: metric.trim().to_string(),
            percent,
            increase_is_bad,
            text: text.to_string(),
            strict: false,
        })
    }

    /// Whether a change of `percent` breaks the rule for a metric where `better` is better.
    pub fn is_regression(&self, percent: f64, better: Better) -> bool {
        if self.increase_is_bad(better) {
            percent > self.percent
        } else {
            percent < -self.percent
        }
    }

    /// Whether the rule fails on a rise (a time) rather than a fall (a rate), for a figure
    /// where `better` is the good direction: the one direction its test looks in.
    pub fn increase_is_bad(&self, better: Better) -> bool {
        self.increase_is_bad
            .unwrap_or(!matches!(better, Better::Higher))
    }
}

impl Targets {
    pub fn load(path: &Path) -> Result<Targets> {
        super::load_checked(path, Targets::parse)
    }

    pub fn parse(file: &str, text: &str) -> Result<Targets> {
        let raw: File = crate::spec::parse(file, text, "targets file")?;
        let check = Checker { file, text };
        let bad = |line: usize, why: String| check.bad(line, why);
        let mut targets = Vec::new();
        for spanned in raw.target {
            let line = line_of(text, spanned.span().start);
            let t = spanned.into_inner();
            if t.below.is_none() && t.above.is_none() {
                return Err(bad(
                    line,
                    format!("target for `{}` has neither `below` nor `above`", t.bench),
                ));
            }
            let (below, above) = check.bounds(line, &t.below, &t.above)?;
            targets.push(Target {
                bench: t.bench,
                metric: t.metric,
                below,
                above,
                line,
            });
        }
        let budget = raw.budget.map(|b| check.budget(b)).transpose()?;
        let mut regressions = Vec::new();
        for spanned in raw.regression {
            let line = line_of(text, spanned.span().start);
            let r = spanned.into_inner();
            let rule = RegressionRule::parse(&format!("{}:{}", r.metric, r.threshold))
                .map_err(|why| bad(line, why))?;
            regressions.push(RegressionRule {
                strict: r.strict,
                ..rule
            });
        }
        if targets.is_empty() && budget.is_none() && regressions.is_empty() {
            return Err(Error::Input(format!(
                "{file}: no [[target]], [budget] or [[regression]]: nothing to check"
            )));
        }
        Ok(Targets {
            file: file.to_string(),
            targets,
            budget,
            regressions,
        })
    }
}

/// Checks a targets file's entries, each error naming the file and the line.
struct Checker<'a> {
    file: &'a str,
    text: &'a str,
}

impl Checker<'_> {
    fn bad(&self, line: usize, why: String) -> Error {
        Error::Input(format!("{}:{line}: {why}", self.file))
    }

    /// A quantity; an error points at the key's own line, not at its table's header.
    fn limit(&self, spec: &Spanned<QuantitySpec>) -> Result<Limit> {
        let line = line_of(self.text, spec.span().start);
        let written = spec.get_ref().text();
        parse_quantity(&written)
            .map(|(value, unit)| Limit {
                value,
                unit,
                text: written.clone(),
                line,
            })
            .ok_or_else(|| {
                self.bad(line, format!("`{written}` is not a quantity (expected e.g. \"5 ms\", \"500 us\", \"100 MB/s\", \"2 MiB/s\", or a bare count such as 1)"))
            })
    }

    fn budget(&self, spanned: Spanned<BudgetSpec>) -> Result<Budget> {
        let line = line_of(self.text, spanned.span().start);
        let b = spanned.into_inner();
        if b.stage.is_empty() {
            return Err(self.bad(line, format!("budget `{}` has no [[budget.stage]]", b.name)));
        }
        let total = self.limit(&b.total)?;
        if total.value <= 0.0 {
            return Err(self.bad(
                total.line,
                format!(
                    "budget total `{}` must be more than zero: the stages are shares of it",
                    total.text
                ),
            ));
        }
        let mut stages = Vec::new();
        for spanned in b.stage {
            let line = line_of(self.text, spanned.span().start);
            let s = spanned.into_inner();
            let (below, above) = self.bounds(line, &s.below, &s.above)?;
            stages.push(Stage {
                name: s.name.unwrap_or_else(|| s.bench.clone()),
                bench: s.bench,
                metric: s.metric,
                below,
                above,
                line,
            });
        }
        Ok(Budget {
            total,
            name: b.name,
            stages,
            line,
        })
    }

    /// `below` and `above`, parsed: of one dimension, and leaving some value between them.
    fn bounds(
        &self,
        line: usize,
        below: &Option<Spanned<QuantitySpec>>,
        above: &Option<Spanned<QuantitySpec>>,
    ) -> Result<(Option<Limit>, Option<Limit>)> {
        let below = below.as_ref().map(|l| self.limit(l)).transpose()?;
        let above = above.as_ref().map(|l| self.limit(l)).transpose()?;
        if let (Some(b), Some(a)) = (&below, &above) {
            if a.unit.dimension != b.unit.dimension {
                return Err(self.bad(
                    line,
                    format!(
                        "`above = {}` and `below = {}` are in different units",
                        a.text, b.text
                    ),
                ));
            }
            if a.value >= b.value {
                return Err(self.bad(
                    line,
                    format!(
                        "`above = {}` and `below = {}` leave no value that passes",
                        a.text, b.text
                    ),
                ));
            }
        }
        Ok((below, above))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets_and_budget() {
        let t = Targets::parse(
            "t.toml",
            "[[target]]\nbench = \"encode_raw\"\nmetric = \"avg\"\nbelow = \"5 ms\"\n\n[[target]]\nbench = \"tcp\"\nmetric = \"throughput\"\nabove = \"100 MB/s\"\n\n[budget]\ntotal = \"20 ms\"\n[[budget.stage]]\nbench = \"encode_raw\"\nmetric = \"avg\"\n",
        )
        .unwrap();
        assert_eq!(t.targets.len(), 2);
        assert_eq!(t.targets[0].below.as_ref().unwrap().value, 5e6);
        assert_eq!(t.targets[1].line, 6);
        assert_eq!(t.targets[1].above.as_ref().unwrap().value, 1e8);
        let b = t.budget.unwrap();
        assert_eq!(b.total.value, 2e7);
        assert_eq!(b.stages[0].name, "encode_raw");
    }

    #[test]
    fn bare_numbers_are_counts() {
        let t = Targets::parse(
            "t.toml",
            "[[target]]\nbench = \"x\"\nmetric = \"overruns\"\nbelow = 1\n[[target]]\nbench = \"x\"\nmetric = \"lost\"\nbelow = \"1\"\n",
        )
        .unwrap();
        for target in &t.targets {
            let limit = target.below.as_ref().unwrap();
            assert_eq!(limit.value, 1.0);
            assert_eq!(
                limit.unit.dimension,
                crate::model::Dimension::Count(String::new())
            );
        }
        assert_eq!(t.targets[0].below.as_ref().unwrap().text, "1");
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            (
                "[[target]]\nbench = \"a\"\nmetric = \"avg\"\nbelow = \"5 parsecs\"\n",
                "t.toml:4: `5 parsecs` is not a quantity",
            ),
            (
                "[[target]]\nbench = \"a\"\nmetric = \"avg\"\n",
                "neither `below` nor `above`",
            ),
            (
                "\n\n[[target]]\nbench = \"a\"\nmetric = \"avg\"\nbelow = true\n",
                "t.toml:6: not a valid targets file",
            ),
            (
                "[[target]]\nbench = \"a\"\nmetrc = \"avg\"\n",
                "t.toml:3: not a valid targets file",
            ),
            ("", "nothing to check"),
        ];
        for (text, expected) in cases {
            let err = Targets::parse("t.toml", text).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }
}
