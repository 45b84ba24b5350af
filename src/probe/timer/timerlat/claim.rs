//! One latkit at a time per tracefs, and what it changed kept where it outlives the process.
//! timerlat's settings are global: two latkits that both found tracefs free would share an
//! instance and undo each other's settings. A lock taken before anything is read settles who
//! measures; the settings found are written beside it before any is changed, so that the next
//! latkit puts them back after a SIGKILL instead of taking the dead run's values as found.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Where root's claims live: a tmpfs root owns, emptied at boot as stale claims should be.
const RUN_DIR: &str = "/run/latkit";

/// The most a state file is read: a few settings and instances.
const STATE_MOST: u64 = 1 << 20;

/// This process measures with the tracefs at a root until the claim is dropped.
pub struct Claim {
    lock: Flock<File>,
    place: Place,
    state: String,
    /// Root's lock on the same tracefs, held shared while another user measures, so that
    /// root's latkit is refused meanwhile rather than taking the instance as abandoned.
    _beside_root: Option<Flock<File>>,
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
        let name: String = root
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let lock_name = format!("timerlat{name}.lock");
        let uid = nix::unistd::geteuid().as_raw();
        let (place, beside_root) = match uid {
            0 => (Place::open(Path::new(RUN_DIR), 0, Some(0o755))?, None),
            _ => {
                let own = std::env::temp_dir().join(format!("latkit-run-{uid}"));
                (
                    Place::open(&own, uid, Some(0o700))?,
                    root_beside(&lock_name, root)?,
                )
            }
        };
        let file = place.file(&lock_name, OFlag::O_RDWR | OFlag::O_CREAT)?;
        let mut lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
            .map_err(|(mut file, _)| held(&mut file, root))?;
        // The holder's pid, for the message another latkit gives.
        let mine = std::process::id().to_string();
        let written = lock
            .set_len(0)
            .and_then(|_| lock.rewind())
            .and_then(|_| lock.write_all(mine.as_bytes()));
        written.map_err(|e| format!("{}: {e}", place.shown(&lock_name)))?;
        let state = format!("timerlat{name}.json");
        let left = place
            .read(&state)?
            .and_then(|bytes| serde_json::from_slice::<Left>(&bytes).ok());
        let claim = Claim {
            lock,
            place,
            state,
            _beside_root: beside_root,
        };
        Ok((claim, left))
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
        let part = format!("{}.part", self.state);
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_TRUNC;
        let mut file = self.place.file(&part, flags)?;
        file.write_all(&bytes)
            .map_err(|e| format!("{}: {e}", self.place.shown(&part)))?;
        nix::fcntl::renameat(
            &self.place.fd,
            part.as_str(),
            &self.place.fd,
            self.state.as_str(),
        )
        .map_err(|e| format!("{}: {e}", self.place.shown(&self.state)))
    }

    /// Everything is as found again: nothing is left to put back.
    pub fn release(self) {
        let gone = nix::unistd::UnlinkatFlags::NoRemoveDir;
        let _ = nix::unistd::unlinkat(&self.place.fd, self.state.as_str(), gone);
        drop(self.lock);
    }
}

/// The refusal when the lock is held: by the pid written in it, or by another user's latkit
/// (which holds root's lock shared and cannot write it).
fn held(file: &mut File, root: &Path) -> String {
    let mut pid = String::new();
    let _ = file.take(64).read_to_string(&mut pid);
    let pid = pid.trim();
    let who = match !pid.is_empty() && Path::new("/proc").join(pid).exists() {
        true => format!("another latkit (pid {pid})"),
        false => "another user's latkit".to_string(),
    };
    format!(
        "{who} is measuring with timerlat on {}; its settings are global, so latkit will not \
         run beside it: wait for it to end",
        root.display()
    )
}

/// For a user other than root: root's lock on the same tracefs, held shared (refused while
/// root's latkit measures). Nothing when root has never claimed it or keeps no safe place.
fn root_beside(lock_name: &str, root: &Path) -> Result<Option<Flock<File>>, String> {
    let Ok(Some(place)) = Place::open_found(Path::new(RUN_DIR), 0) else {
        return Ok(None);
    };
    let Ok(Some(file)) = place.found(lock_name, OFlag::O_RDONLY) else {
        return Ok(None);
    };
    Flock::lock(file, FlockArg::LockSharedNonblock)
        .map(Some)
        .map_err(|(mut file, _)| held(&mut file, root))
}

/// A directory of claims, opened without following a link, owned by one user and written by
/// no other: a link planted there by someone else would aim root's writes at any file.
struct Place {
    fd: OwnedFd,
    path: PathBuf,
    owner: u32,
}

impl Place {
    /// `path`, made with `mode` when missing; refused unless `owner` owns it, it is no link
    /// and no other user may write there.
    fn open(path: &Path, owner: u32, mode: Option<u32>) -> Result<Place, String> {
        if let Some(mode) = mode {
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(mode).create(path) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(format!("{}: {e}", path.display()));
                }
                _ => {}
            }
        }
        let place = Place::open_found(path, owner)?
            .ok_or_else(|| format!("{}: not found", path.display()))?;
        // Root's claims are read by other users' latkits (an older latkit made the
        // directory 0700).
        if let Some(mode) = mode {
            let mode = Mode::from_bits_truncate(mode);
            nix::sys::stat::fchmod(&place.fd, mode)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(place)
    }

    /// [`Place::open`] of a directory that may be missing (then nothing).
    fn open_found(path: &Path, owner: u32) -> Result<Option<Place>, String> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = match nix::fcntl::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            // O_DIRECTORY with O_NOFOLLOW says ENOTDIR of a link.
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                let link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
                let why = match link {
                    true => "it is a symbolic link",
                    false => "it is not a directory",
                };
                return Err(unsafe_place(path, why));
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let stat = nix::sys::stat::fstat(&fd).map_err(|e| format!("{}: {e}", path.display()))?;
        let mode = stat.st_mode & 0o7777;
        if stat.st_uid != owner {
            let why = format!("it belongs to uid {}, not {owner}", stat.st_uid);
            return Err(unsafe_place(path, &why));
        }
        if mode & 0o022 != 0 {
            let why = format!("other users may write there (mode {mode:04o})");
            return Err(unsafe_place(path, &why));
        }
        let path = path.to_path_buf();
        Ok(Some(Place { fd, path, owner }))
    }

    /// `name` in the directory, opened without following a link, and refused unless it is
    /// a plain file of the owner's with no other name.
    fn file(&self, name: &str, flags: OFlag) -> Result<File, String> {
        self.found(name, flags)?
            .ok_or_else(|| format!("{}: not found", self.shown(name)))
    }

    /// [`Place::file`], or nothing when there is no such file.
    fn found(&self, name: &str, flags: OFlag) -> Result<Option<File>, String> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let mode = Mode::from_bits_truncate(0o644);
        let fd = match nix::fcntl::openat(&self.fd, name, flags, mode) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(Errno::ELOOP) => {
                return Err(format!(
                    "{} is a symbolic link: latkit follows no link where it keeps \
                     timerlat's state; remove it",
                    self.shown(name)
                ));
            }
            Err(e) => return Err(format!("{}: {e}", self.shown(name))),
        };
        let stat = nix::sys::stat::fstat(&fd).map_err(|e| format!("{}: {e}", self.shown(name)))?;
        let plain = stat.st_mode & libc::S_IFMT == libc::S_IFREG;
        if !plain || stat.st_nlink != 1 || stat.st_uid != self.owner {
            return Err(format!(
                "{} is not a plain file of uid {} with one name: latkit will not write \
                 through it; remove it",
                self.shown(name),
                self.owner
            ));
        }
        Ok(Some(File::from(fd)))
    }

    /// What a state file held, or nothing when there is none.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
        let Some(file) = self.found(name, OFlag::O_RDONLY)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.take(STATE_MOST)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: {e}", self.shown(name)))?;
        Ok(Some(bytes))
    }

    fn shown(&self, name: &str) -> String {
        self.path.join(name).display().to_string()
    }
}

/// The refusal of a directory latkit will not keep its claims in, and how to mend it.
fn unsafe_place(path: &Path, why: &str) -> String {
    format!(
        "{}: {why}; latkit keeps timerlat's state only in a directory that is no link, its \
         user's own, and no other user may write: remove it (latkit makes it again)",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn me() -> u32 {
        nix::unistd::geteuid().as_raw()
    }

    #[test]
    fn a_place_others_may_write_or_a_link_is_refused() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("claims");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = Place::open(&dir, me(), None).err().unwrap();
        assert!(
            refused.contains("other users may write there (mode 0777)"),
            "{refused}"
        );
        let other = Place::open(&dir, me() + 1, None).err().unwrap();
        assert!(
            other.contains(&format!("belongs to uid {}", me())),
            "{other}"
        );
        let link = top.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let refused = Place::open(&link, me(), None).err().unwrap();
        assert!(refused.contains("it is a symbolic link"), "{refused}");
        // Made when missing, with the mode asked, even past one an older latkit chose.
        let made = top.path().join("made");
        Place::open(&made, me(), Some(0o755)).unwrap();
        let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn no_file_is_written_through_a_link_or_another_name() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("claims");
        let place = Place::open(&dir, me(), Some(0o755)).unwrap();
        let secret = top.path().join("secret");
        std::fs::write(&secret, "root's own\n").unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("a.lock")).unwrap();
        let flags = OFlag::O_RDWR | OFlag::O_CREAT;
        let refused = place.file("a.lock", flags).err().unwrap();
        assert!(refused.contains("is a symbolic link"), "{refused}");
        std::fs::hard_link(&secret, dir.join("b.lock")).unwrap();
        let refused = place.file("b.lock", flags).err().unwrap();
        assert!(refused.contains("one name"), "{refused}");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root's own\n");
        assert!(place.read("missing.json").unwrap().is_none());
    }

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
