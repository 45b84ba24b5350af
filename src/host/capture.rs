//! The facts about this host that affect latency numbers, for the environment of every run
//! latkit measures.

use crate::model::Environment;
use std::fs;

/// The facts, without the doctor's checks (see [`super::capture`]). Never fails: what cannot
/// be read is left empty.
pub fn capture_basic() -> Environment {
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

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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
    #[test]
    fn capture_reads_this_host() {
        let env = crate::host::capture();
        assert!(env.captured);
        assert!(env.cores.unwrap_or(0) >= 1);
        assert!(env.kernel.is_some());
    }
}
