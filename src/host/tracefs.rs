//! The kernel's tracefs: where it is mounted, whether this process may use it, and whether
//! the kernel has the timerlat tracer that latkit's kernel and IRQ timer modes drive.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted, newest place first.
pub const ROOTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The tracers that share the global `osnoise/` settings.
pub const OSNOISE_TRACERS: [&str; 2] = ["timerlat", "osnoise"];
/// Where tracefs keeps its instances.
const INSTANCES: &str = "instances";
/// More instances than anyone makes: the rest are not looked at.
const MAX_INSTANCES: usize = 4096;
/// A read of a control file asks for this much at a time (a page and more).
const CONTROL_READ: usize = 8192;
/// No control file latkit reads is longer (a CPU list of thousands of CPUs fits).
const CONTROL_MAX: usize = 1 << 20;

/// A tracefs mount, one of its instances, or a directory laid out like one.
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

    /// A control file's value, without its trailing newline. Read with a buffer of pages, as
    /// libtracefs does: the kernel refuses (EINVAL) a read of `osnoise/cpus` whose buffer is
    /// not longer than its text, which an exactly-sized buffer is.
    pub fn read(&self, file: &str) -> Result<String, String> {
        use std::io::Read;
        let path = self.path(file);
        let failed = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut opened = std::fs::File::open(&path).map_err(failed)?;
        let mut text = Vec::new();
        let mut page = vec![0u8; CONTROL_READ];
        loop {
            match opened.read(&mut page) {
                Ok(0) => break,
                Ok(n) if text.len() + n <= CONTROL_MAX => text.extend_from_slice(&page[..n]),
                Ok(_) => return Err(format!("{}: longer than any control file", path.display())),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(String::from_utf8_lossy(&text)
            .trim_end_matches('\n')
            .to_string())
    }

    /// The tracefs instance `name` (`instances/NAME`), made when it is not there yet; says
    /// whether it was made.
    pub fn instance(&self, name: &str) -> Result<(Tracefs, bool), String> {
        let root = self.root.join(INSTANCES).join(name);
        let made = match std::fs::create_dir(&root) {
            Ok(()) => true,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => false,
            Err(e) => {
                return Err(format!(
                    "making the tracefs instance {}: {e}",
                    root.display()
                ));
            }
        };
        Ok((Tracefs { root }, made))
    }

    /// Removes this instance (the kernel frees its buffers).
    pub fn remove(&self) -> Result<(), String> {
        std::fs::remove_dir(&self.root)
            .map_err(|e| format!("removing the tracefs instance {}: {e}", self.root.display()))
    }

    /// Where the osnoise tracers (timerlat, osnoise) are tracing now: the top level and every
    /// instance whose tracer is one of them with tracing on, as `the top level` or `instance
    /// NAME`. Their settings are global, so two users of them disturb each other.
    pub fn osnoise_users(&self) -> Vec<String> {
        let active = |fs: &Tracefs| {
            let tracer = fs.read("current_tracer").unwrap_or_default();
            OSNOISE_TRACERS.contains(&tracer.as_str())
                && fs.read("tracing_on").is_ok_and(|on| on == "1")
        };
        let mut users = Vec::new();
        if active(self) {
            users.push("the top level".to_string());
        }
        let Ok(entries) = std::fs::read_dir(self.root.join(INSTANCES)) else {
            return users;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .take(MAX_INSTANCES)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let instance = Tracefs {
                root: self.root.join(INSTANCES).join(&name),
            };
            if active(&instance) {
                users.push(format!("instance {}", crate::error::visible(&name)));
            }
        }
        users
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
