//! What differs between the machines and settings of two runs, where the difference can move
//! the numbers: half of all "regressions" are a different CPU, kernel or governor.

use crate::model::{ConfigEntry, Environment, Run, TimerInfo, vocab};
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

/// Host checks that describe the moment (the load then, other work during the run, a gamepad
/// plugged in), not the
/// machine's configuration.
const OCCASIONAL_CHECKS: &[&str] = &["load", "input_devices", "busy"];

/// Differences that can move the numbers, comparing only what both runs know.
pub fn differences(base: &Run, other: &Run) -> Vec<Difference> {
    let mut found = Found::default();
    found.environments(&base.environment, &other.environment);
    if let (Some(ta), Some(tb)) = (&base.timer, &other.timer) {
        found.timers(ta, tb);
    }
    found.settings(&base.config, &other.config);
    found.0
}

/// The differences found so far.
#[derive(Default)]
struct Found(Vec<Difference>);

impl Found {
    /// A difference when both sides know `what` and it differs.
    fn add(&mut self, what: &str, a: Option<String>, b: Option<String>) {
        if let (Some(a), Some(b)) = (a, b)
            && a != b
        {
            self.0.push(Difference {
                what: what.to_string(),
                base: a,
                other: b,
            });
        }
    }

    fn environments(&mut self, ea: &Environment, eb: &Environment) {
        self.add("cpu model", ea.cpu_model.clone(), eb.cpu_model.clone());
        self.add(
            "cores",
            ea.cores.map(|c| c.to_string()),
            eb.cores.map(|c| c.to_string()),
        );
        self.add("arch", ea.arch.clone(), eb.arch.clone());
        self.add("os", ea.os.clone(), eb.os.clone());
        self.add("kernel", ea.kernel.clone(), eb.kernel.clone());
        self.add(
            "clocksource",
            ea.clocksource.clone(),
            eb.clocksource.clone(),
        );
        let virtualization = |e: &Environment| {
            Some(e.virtualization.clone().unwrap_or_else(|| "none".into())).filter(|_| e.captured)
        };
        self.add("virtualization", virtualization(ea), virtualization(eb));
        for check in &ea.checks {
            if OCCASIONAL_CHECKS.contains(&check.name.as_str()) {
                continue;
            }
            if let Some(theirs) = eb.checks.iter().find(|c| c.name == check.name) {
                self.add(
                    &check.name,
                    Some(check.found.clone()),
                    Some(theirs.found.clone()),
                );
            }
        }
        for entry in &ea.toolchains {
            let theirs = eb.toolchains.iter().find(|t| t.key == entry.key);
            self.add(
                &entry.key,
                Some(entry.value.clone()),
                theirs.map(|t| t.value.clone()),
            );
        }
    }

    fn timers(&mut self, ta: &TimerInfo, tb: &TimerInfo) {
        self.add(
            "timer period",
            Some(format!("{} ns", ta.period_ns)),
            Some(format!("{} ns", tb.period_ns)),
        );
        self.add("timer mode", Some(ta.mode.clone()), Some(tb.mode.clone()));
        self.add("timer method", ta.method.clone(), tb.method.clone());
        self.add("scheduling policy", ta.policy.clone(), tb.policy.clone());
        self.add(
            "priority",
            Some(ta.priority.to_string()),
            Some(tb.priority.to_string()),
        );
    }

    fn settings(&mut self, base: &[ConfigEntry], other: &[ConfigEntry]) {
        // A listening address: the port changes every run, the host does not.
        let host_only = |v: &str| v.rsplit_once(':').map_or(v, |(host, _)| host).to_string();
        for entry in base {
            if OCCASIONAL.contains(&entry.key.as_str()) {
                continue;
            }
            let theirs = other.iter().find(|c| c.key == entry.key);
            // A shell not recorded on one side is no difference to refuse: compare warns.
            let unrecorded = |c: &ConfigEntry| c.value == vocab::SHELL_UNRECORDED;
            if entry.key == vocab::SHELL_SETTING
                && (unrecorded(entry) || theirs.is_some_and(unrecorded))
            {
                continue;
            }
            if entry.key == vocab::SERVER_SETTING {
                self.add(
                    "server host",
                    Some(host_only(&entry.value)),
                    theirs.map(|t| host_only(&t.value)),
                );
            } else {
                self.add(
                    &entry.key,
                    Some(entry.value.clone()),
                    theirs.map(|t| t.value.clone()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConfigEntry, Environment, RunBuilder, Source, new_run};

    fn run(environment: Environment, config: &[(&str, &str)]) -> Run {
        let source = Source::unnamed_file("go");
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
