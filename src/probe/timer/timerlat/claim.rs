//! One latkit at a time per tracefs, and what it changed kept where it outlives the process.
//! timerlat's settings are global: two latkits that both found tracefs free would share an
//! instance and undo each other's settings. A lock taken before anything is read settles who
//! measures; the settings found are written beside it before any is changed, so that the next
//! latkit puts them back after a SIGKILL instead of taking the dead run's values as found.

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Where claims live: a tmpfs root owns, emptied at boot as stale claims should be.
const RUN_DIR: &str = "/run/latkit";

/// This process measures with the tracefs at a root until the claim is dropped.
pub struct Claim {
    lock: Flock<std::fs::File>,
    state: PathBuf,
}

/// What a latkit that died mid-test left: its process, the settings it found and the
/// instances it traced in.
#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
pub struct Left {
    pub pid: u32,
    /// `(file, value found)` of each global setting, before it changed any.
    pub found: Vec<(String, String)>,
    pub instances: Vec<LeftInstance>,
}

/// An instance a latkit traced in: made by it (to remove), or found, with what it held.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
pub struct LeftInstance {
    pub name: String,
    pub made: bool,
    pub tracer: String,
    pub on: String,
}

impl Claim {
    /// Takes the claim on tracefs at `root`, or says which latkit holds it. A state file left
    /// by an owner that is gone (its lock went with it) is returned to be put back.
    pub fn take(root: &Path) -> Result<(Claim, Option<Left>), String> {
        let dir = run_dir()?;
        let name: String = root
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let lock_path = dir.join(format!("timerlat{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| format!("{}: {e}", lock_path.display()))?;
        let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((mut file, _)) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                return Err(format!(
                    "another latkit (pid {}) is measuring with timerlat on {}; its settings \
                     are global, so latkit will not run beside it: wait for it to end",
                    pid.trim(),
                    root.display()
                ));
            }
        };
        // The holder's pid, for the message another latkit gives.
        let mine = std::process::id().to_string();
        let written = lock
            .set_len(0)
            .and_then(|_| lock.rewind())
            .and_then(|_| lock.write_all(mine.as_bytes()));
        written.map_err(|e| format!("{}: {e}", lock_path.display()))?;
        let state = dir.join(format!("timerlat{name}.json"));
        let left = std::fs::read(&state)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Left>(&bytes).ok());
        Ok((Claim { lock, state }, left))
    }

    /// Keeps what was found, before anything changes (written whole or not at all; its
    /// `pid` is this process's).
    pub fn record(&self, left: &Left) -> Result<(), String> {
        let left = Left {
            pid: std::process::id(),
            found: left.found.clone(),
            instances: left.instances.clone(),
        };
        let bytes = serde_json::to_vec(&left).map_err(|e| e.to_string())?;
        let part = self.state.with_extension("json.part");
        std::fs::write(&part, bytes)
            .and_then(|_| std::fs::rename(&part, &self.state))
            .map_err(|e| format!("{}: {e}", self.state.display()))
    }

    /// Everything is as found again: nothing is left to put back.
    pub fn release(self) {
        let _ = std::fs::remove_file(&self.state);
        drop(self.lock);
    }
}

/// `/run/latkit`, made when missing; where this user may not write there (a test's fake
/// tracefs as another user), a directory of its own under the temporary directory.
fn run_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let uid = nix::unistd::getuid();
    let candidates = [
        PathBuf::from(RUN_DIR),
        std::env::temp_dir().join(format!("latkit-run-{uid}")),
    ];
    let mut last = String::new();
    for dir in candidates {
        let made = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        match made {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                last = format!("{}: {e}", dir.display());
                continue;
            }
            _ => {}
        }
        // Someone else's directory is no place for this process's claims.
        match std::fs::metadata(&dir) {
            Ok(meta) if std::os::unix::fs::MetadataExt::uid(&meta) == uid.as_raw() => {
                return Ok(dir);
            }
            Ok(_) => last = format!("{} belongs to another user", dir.display()),
            Err(e) => last = format!("{}: {e}", dir.display()),
        }
    }
    Err(format!("no place to keep timerlat's settings: {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_claim_at_a_time_and_what_a_dead_owner_found_comes_back() {
        let root = tempfile::tempdir().unwrap();
        let (claim, left) = Claim::take(root.path()).unwrap();
        assert_eq!(left, None);
        let refused = Claim::take(root.path()).err().unwrap();
        let pid = std::process::id();
        assert!(
            refused.contains(&format!("another latkit (pid {pid})")),
            "{refused}"
        );
        let found = vec![("osnoise/timerlat_period_us".to_string(), "1000".to_string())];
        let kept = Left {
            pid,
            found,
            instances: Vec::new(),
        };
        claim.record(&kept).unwrap();
        // Dropped without release: as a SIGKILL leaves it.
        drop(claim);
        let (claim, left) = Claim::take(root.path()).unwrap();
        assert_eq!(left, Some(kept));
        claim.release();
        let (_claim, left) = Claim::take(root.path()).unwrap();
        assert_eq!(left, None);
    }
}
