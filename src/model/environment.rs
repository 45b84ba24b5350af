//! What machine produced a run. Captured live for measurements; taken from the input for files.

use super::ConfigEntry;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// True when latkit read these facts from the host it ran on; false when they come from
    /// what an input file says about the machine that produced it.
    pub captured: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub os: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kernel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub arch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cores: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clocksource: Option<String>,
    /// Hypervisor or container hint (`kvm`, `vmware`, ...), when one is detected.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub virtualization: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub toolchains: Vec<ConfigEntry>,
    /// `latkit doctor`'s checks of this host at the time of the run.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub checks: Vec<Check>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warn,
    Fail,
}

impl CheckStatus {
    pub fn label(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => "fail",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub status: CheckStatus,
    /// What was found.
    pub found: String,
    /// What to do about it; empty when nothing needs doing.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub advice: String,
}

impl Environment {
    /// What a harness's own config lines say about the machine (Go: `goos`, `goarch`, `cpu`).
    pub fn from_config(config: &[ConfigEntry]) -> Self {
        let get = |key: &str| {
            config
                .iter()
                .find(|c| c.key == key)
                .map(|c| c.value.clone())
        };
        Environment {
            captured: false,
            os: get("goos"),
            arch: get("goarch"),
            cpu_model: get("cpu"),
            ..Environment::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_describe_the_producing_machine() {
        let config = vec![
            ConfigEntry {
                key: "goos".into(),
                value: "linux".into(),
            },
            ConfigEntry {
                key: "cpu".into(),
                value: "AMD Custom APU 0405".into(),
            },
        ];
        let env = Environment::from_config(&config);
        assert!(!env.captured);
        assert_eq!(env.os.as_deref(), Some("linux"));
        assert_eq!(env.cpu_model.as_deref(), Some("AMD Custom APU 0405"));
        assert_eq!(env.hostname, None);
    }
}
