//! The kernel's tracefs: where it is mounted, whether this process may use it, and whether
//! the kernel has the timerlat tracer that latkit's kernel and IRQ timer modes drive.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted, newest place first.
pub const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// A tracefs mount (or a directory laid out like one).
#[derive(Clone, Debug)]
pub struct Tracefs {
    root: PathBuf,
}

/// Why the timerlat tracer cannot be used here.
#[derive(Debug, PartialEq, Eq)]
pub enum Missing {
    /// No tracefs where it is looked for.
    NotMounted(Vec<PathBuf>),
    /// tracefs is there, but this process may not read it (it needs root).
    NotPermitted { path: PathBuf, error: String },
    /// The kernel was built without the tracer; the tracers it has.
    NoTimerlat { path: PathBuf, tracers: String },
}

impl Missing {
    /// A few words, for the doctor's table.
    pub fn short(&self) -> String {
        match self {
            Missing::NotMounted(_) => "tracefs is not mounted".to_string(),
            Missing::NotPermitted { error, .. } => format!("tracefs needs root ({error})"),
            Missing::NoTimerlat { tracers, .. } => {
                format!("no timerlat tracer in this kernel (it has: {tracers})")
            }
        }
    }

    /// One line: what is missing, what the kernel or the user has, and that user mode works.
    pub fn explain(&self, mode: &str) -> String {
        let user_mode = "-t 0 (user mode) works without it";
        match self {
            Missing::NotMounted(roots) => {
                let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                format!(
                    "{mode} drives the kernel's timerlat tracer through tracefs, which is not \
                     mounted (looked in {}; `mount -t tracefs nodev /sys/kernel/tracing`); \
                     {user_mode}",
                    looked.join(" and ")
                )
            }
            Missing::NotPermitted { path, error } => format!(
                "{mode} drives the kernel's timerlat tracer through tracefs, which needs root \
                 ({}: {error}); run it as root, or use -t 0 (user mode), which needs no tracefs",
                path.display()
            ),
            Missing::NoTimerlat { path, tracers } => format!(
                "this kernel has no timerlat tracer, so {mode} cannot measure here (it needs a \
                 kernel built with CONFIG_TIMERLAT_TRACER=y; {} lists: {tracers}); {user_mode}",
                path.display()
            ),
        }
    }
}

impl Tracefs {
    /// The tracefs at `given`, or at the first of [`ROOTS`] that exists, with the timerlat
    /// tracer available.
    pub fn with_timerlat(given: Option<&Path>) -> Result<Tracefs, Missing> {
        let roots: Vec<PathBuf> = match given {
            Some(root) => vec![root.to_path_buf()],
            None => ROOTS.iter().map(PathBuf::from).collect(),
        };
        for root in &roots {
            let path = root.join("available_tracers");
            match std::fs::read_to_string(&path) {
                Ok(tracers) if tracers.split_whitespace().any(|t| t == "timerlat") => {
                    return Ok(Tracefs { root: root.clone() });
                }
                Ok(tracers) => {
                    return Err(Missing::NoTimerlat {
                        path,
                        tracers: tracers.split_whitespace().collect::<Vec<_>>().join(" "),
                    });
                }
                Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                    return Err(Missing::NotPermitted {
                        path,
                        error: e.to_string(),
                    });
                }
                Err(_) => {}
            }
        }
        Err(Missing::NotMounted(roots))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// A control file's value, without its trailing newline.
    pub fn read(&self, file: &str) -> Result<String, String> {
        std::fs::read_to_string(self.path(file))
            .map(|v| v.trim_end_matches('\n').to_string())
            .map_err(|e| format!("{}: {e}", self.path(file).display()))
    }

    /// Writes a control file as `echo value > file` does (one write, newline-terminated).
    pub fn write(&self, file: &str, value: &str) -> Result<(), String> {
        use std::io::Write;
        let path = self.path(file);
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{value}\n").as_bytes()))
            .map_err(|e| format!("writing `{value}` to {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_missing_is_said_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let missing = Tracefs::with_timerlat(Some(root)).unwrap_err();
        assert!(matches!(missing, Missing::NotMounted(_)));
        std::fs::write(root.join("available_tracers"), "blk function nop\n").unwrap();
        let missing = Tracefs::with_timerlat(Some(root)).unwrap_err();
        let line = missing.explain("-t 1");
        assert!(!line.contains('\n'));
        for part in ["CONFIG_TIMERLAT_TRACER", "blk function nop", "-t 0"] {
            assert!(line.contains(part), "{line}");
        }
        std::fs::write(root.join("available_tracers"), "timerlat osnoise nop\n").unwrap();
        let fs = Tracefs::with_timerlat(Some(root)).unwrap();
        // Control files exist; writing one never creates it.
        assert!(fs.write("current_tracer", "timerlat").is_err());
        std::fs::write(root.join("current_tracer"), "nop\n").unwrap();
        fs.write("current_tracer", "timerlat").unwrap();
        assert_eq!(fs.read("current_tracer").unwrap(), "timerlat");
    }
}
