//! The suite file (`latkit.toml`): how to run a suite and how to read its results.

use crate::error::Result;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(default)]
    pub go: GoSection,
    #[serde(default)]
    pub report: ReportSection,
    pub attribution: Option<AttributionSpec>,
}

/// Defaults for `latkit go`; command-line flags override them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoSection {
    pub package: Option<String>,
    pub dir: Option<PathBuf>,
    pub bench: Option<String>,
    pub count: Option<u32>,
    pub benchtime: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSection {
    /// Benchmark name or glob whose value is 100% in the "% of" column.
    pub baseline: Option<String>,
    /// The metric the tables show (default: the first the harness reports, `ns/op` for Go).
    pub metric: Option<String>,
}

/// How a pipeline splits: one benchmark measures a part, another the rest, and composite
/// benchmarks contain the part a number of times plus the rest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttributionSpec {
    #[serde(default = "default_attribution_name")]
    pub name: String,
    pub part: Role,
    pub rest: Role,
    /// The row that is 100% in the "% of" column.
    pub baseline: Option<Role>,
    #[serde(default)]
    pub composite: Vec<Composite>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// Glob over the benchmark name without GOMAXPROCS suffix and variant (`*` spans `/`).
    pub bench: String,
    /// Column label: "<label> Share %", "% of <label>".
    pub label: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Composite {
    pub bench: String,
    /// How many times the part occurs in this benchmark (press-and-release writes twice).
    #[serde(default = "one")]
    pub parts: f64,
}

fn default_attribution_name() -> String {
    "suite".to_string()
}

fn one() -> f64 {
    1.0
}

impl Suite {
    pub fn load(path: &Path) -> Result<Suite> {
        super::load(path, "suite file")
    }
}

/// The input-latency preset (the VIIPER end-to-end suite's roles): the client write is the
/// part, the delay without client the rest, and press-and-release writes twice.
pub fn input_latency_preset() -> AttributionSpec {
    let role = |bench: &str, label: &str| Role {
        bench: bench.to_string(),
        label: label.to_string(),
    };
    AttributionSpec {
        name: "input-latency preset".to_string(),
        part: role("*Client*Write*", "Client"),
        rest: role("*Without-Client*", "Latency"),
        baseline: Some(role("*E2E*InputDelay*", "Full")),
        composite: vec![
            Composite {
                bench: "*E2E*InputDelay*".to_string(),
                parts: 1.0,
            },
            Composite {
                bench: "*E2E*Press*".to_string(),
                parts: 2.0,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_suite() {
        let suite: Suite = toml::from_str(
            r#"
            [go]
            dir = "testing/e2e"
            bench = "Delay"
            count = 5

            [report]
            metric = "ns/op"

            [attribution]
            part = { bench = "*Encode*", label = "Encode" }
            rest = { bench = "*Network*", label = "Network" }
            baseline = { bench = "*Frame*", label = "Frame" }
            [[attribution.composite]]
            bench = "*Frame*"
            "#,
        )
        .unwrap();
        assert_eq!(suite.go.count, Some(5));
        let a = suite.attribution.unwrap();
        assert_eq!(a.part.label, "Encode");
        assert_eq!(a.composite[0].parts, 1.0);
    }

    #[test]
    fn rejects_unknown_keys_with_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latkit.toml");
        std::fs::write(&path, "[go]\ncount = 3\nbenchtim = \"1x\"\n").unwrap();
        let err = Suite::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("latkit.toml:3: not a valid suite file"),
            "{err}"
        );
        assert!(err.contains("benchtim"), "{err}");
    }
}
