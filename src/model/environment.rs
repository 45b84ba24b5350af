//! What machine produced a run. Captured live for measurements; taken from the input for files.

use super::ConfigEntry;
use serde::{Deserialize, Serialize};
use std::fs;

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
    pub checks: Vec<crate::host::Check>,
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl Environment {
    /// Reads the facts about this host that affect latency numbers, with the doctor's checks.
    /// Never fails: what cannot be read is left empty.
    pub fn capture() -> Self {
        Environment {
            checks: crate::host::checks(),
            ..Environment::capture_basic()
        }
    }

    /// The facts without the doctor's checks.
    pub fn capture_basic() -> Self {
        let uname = nix::sys::utsname::uname().ok();
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Environment {
            captured: true,
            hostname: nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok()),
            os: os_release_name(),
            kernel: uname.as_ref().map(|u| {
                format!(
                    "{} {} {}",
                    u.sysname().to_string_lossy(),
                    u.release().to_string_lossy(),
                    u.version().to_string_lossy()
                )
            }),
            arch: uname.as_ref().map(|u| u.machine().to_string_lossy().into()),
            cpu_model: cpuinfo_field(&cpuinfo, "model name"),
            cores: std::thread::available_parallelism().ok().map(|n| n.get()),
            clocksource: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            virtualization: virtualization_hint(&cpuinfo),
            toolchains: Vec::new(),
            checks: Vec::new(),
        }
    }

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

fn os_release_name() -> Option<String> {
    let text = fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// Names the hypervisor from DMI, or says "unknown hypervisor" when the CPU only reports that
/// one is present.
fn virtualization_hint(cpuinfo: &str) -> Option<String> {
    let dmi = [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ]
    .iter()
    .filter_map(|p| read_trimmed(p))
    .collect::<Vec<_>>()
    .join(" ")
    .to_lowercase();
    let known = [
        ("kvm", "kvm"),
        ("qemu", "qemu"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("microsoft", "hyper-v"),
        ("xen", "xen"),
        ("amazon ec2", "aws"),
        ("google", "gce"),
        ("firecracker", "firecracker"),
    ];
    if let Some((_, name)) = known.iter().find(|(needle, _)| dmi.contains(needle)) {
        return Some(name.to_string());
    }
    let flagged = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    flagged.then(|| "unknown hypervisor".to_string())
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

    #[test]
    fn capture_reads_this_host() {
        let env = Environment::capture();
        assert!(env.captured);
        assert!(env.cores.unwrap_or(0) >= 1);
        assert!(env.kernel.is_some());
    }
}
