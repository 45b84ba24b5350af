//! What differs between the machines and settings of two runs, where the difference can move
//! the numbers: half of all "regressions" are a different CPU, kernel or governor.

use crate::model::Run;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub what: String,
    pub base: String,
    pub other: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} vs {}", self.what, self.base, self.other)
    }
}

/// Configuration keys that describe the occasion rather than the machine or the settings:
/// dates, load, the code under test, where the peer listened.
const OCCASIONAL: &[&str] = &[
    "date",
    "load_avg",
    "commit",
    "branch",
    "executable",
    "host_name",
    "pkg",
    "authenticated",
];

/// Host checks that describe the moment (the load then, a gamepad plugged in), not the
/// machine's configuration.
const OCCASIONAL_CHECKS: &[&str] = &["load", "input_devices"];

/// Differences that can move the numbers, comparing only what both runs know.
pub fn differences(base: &Run, other: &Run) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut diff = |what: &str, a: Option<String>, b: Option<String>| {
        if let (Some(a), Some(b)) = (a, b)
            && a != b
        {
            out.push(Difference {
                what: what.to_string(),
                base: a,
                other: b,
            });
        }
    };
    let (ea, eb) = (&base.environment, &other.environment);
    diff("cpu model", ea.cpu_model.clone(), eb.cpu_model.clone());
    diff(
        "cores",
        ea.cores.map(|c| c.to_string()),
        eb.cores.map(|c| c.to_string()),
    );
    diff("arch", ea.arch.clone(), eb.arch.clone());
    diff("os", ea.os.clone(), eb.os.clone());
    diff("kernel", ea.kernel.clone(), eb.kernel.clone());
    diff(
        "clocksource",
        ea.clocksource.clone(),
        eb.clocksource.clone(),
    );
    diff(
        "virtualization",
        Some(ea.virtualization.clone().unwrap_or_else(|| "none".into())).filter(|_| ea.captured),
        Some(eb.virtualization.clone().unwrap_or_else(|| "none".into())).filter(|_| eb.captured),
    );
    for check in &ea.checks {
        if OCCASIONAL_CHECKS.contains(&check.name.as_str()) {
            continue;
        }
        if let Some(theirs) = eb.checks.iter().find(|c| c.name == check.name) {
            diff(
                &check.name,
                Some(check.found.clone()),
                Some(theirs.found.clone()),
            );
        }
    }
    for entry in &ea.toolchains {
        let theirs = eb.toolchains.iter().find(|t| t.key == entry.key);
        diff(
            &entry.key,
            Some(entry.value.clone()),
            theirs.map(|t| t.value.clone()),
        );
    }
    if let (Some(ta), Some(tb)) = (&base.timer, &other.timer) {
        diff(
            "timer period",
            Some(format!("{} ns", ta.period_ns)),
            Some(format!("{} ns", tb.period_ns)),
        );
        diff("timer mode", Some(ta.mode.clone()), Some(tb.mode.clone()));
        diff("timer method", ta.method.clone(), tb.method.clone());
        diff("scheduling policy", ta.policy.clone(), tb.policy.clone());
        diff(
            "priority",
            Some(ta.priority.to_string()),
            Some(tb.priority.to_string()),
        );
    }
    for entry in &base.config {
        if OCCASIONAL.contains(&entry.key.as_str()) {
            continue;
        }
        let theirs = other.config.iter().find(|c| c.key == entry.key);
        let host_only = |v: &str| {
            // A listening address: the port changes every run, the host does not.
            v.rsplit_once(':').map_or(v, |(host, _)| host).to_string()
        };
        if entry.key == "server" {
            diff(
                "server host",
                Some(host_only(&entry.value)),
                theirs.map(|t| host_only(&t.value)),
            );
        } else {
            diff(
                &entry.key,
                Some(entry.value.clone()),
                theirs.map(|t| t.value.clone()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConfigEntry, Environment, RunBuilder, Source, new_run};

    fn run(environment: Environment, config: &[(&str, &str)]) -> Run {
        let source = Source {
            kind: "file".into(),
            format: "go".into(),
            path: None,
            command: Vec::new(),
        };
        let config = config
            .iter()
            .map(|(k, v)| ConfigEntry {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect();
        new_run(source, environment, config, RunBuilder::default())
    }

    #[test]
    fn only_what_both_runs_know_is_compared() {
        let a = run(
            Environment {
                cpu_model: Some("AMD EPYC 7B13".into()),
                ..Environment::default()
            },
            &[
                ("goos", "linux"),
                ("commit", "abc"),
                ("server", "127.0.0.1:4000"),
            ],
        );
        let b = run(
            Environment {
                cpu_model: Some("Intel Xeon 8375C".into()),
                kernel: Some("6.1.0".into()),
                ..Environment::default()
            },
            &[
                ("goos", "linux"),
                ("commit", "def"),
                ("server", "127.0.0.1:5123"),
            ],
        );
        let d = differences(&a, &b);
        assert_eq!(
            d,
            [Difference {
                what: "cpu model".into(),
                base: "AMD EPYC 7B13".into(),
                other: "Intel Xeon 8375C".into(),
            }]
        );
    }

    #[test]
    fn settings_and_host_checks_differ() {
        let mut a = run(
            Environment::default(),
            &[("size", "64"), ("server", "10.0.0.1:1")],
        );
        let mut b = run(
            Environment::default(),
            &[("size", "1024"), ("server", "10.0.0.2:1")],
        );
        a.environment.captured = true;
        b.environment.captured = true;
        b.environment.virtualization = Some("kvm".into());
        let what: Vec<String> = differences(&a, &b).into_iter().map(|d| d.what).collect();
        assert_eq!(what, ["virtualization", "size", "server host"]);
    }
}
