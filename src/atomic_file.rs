//! Output files written whole or not at all: a regular file (or a new path) is written to a
//! temporary file beside it and renamed over it only when everything was written, so a full
//! disk or a failure midway never leaves a truncated report that reads back as valid. Anything
//! else at the path — a device such as /dev/null, a FIFO, a terminal, `/dev/stdout`, a shell's
//! `>(cmd)` — is written straight through and never replaced, and a symbolic link is followed
//! to the file it names, which is then written as any other. Creating one checks (or opens)
//! the destination before any measuring starts.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Unbuffered: wrap it in a `BufWriter` or `LineWriter` as the writing calls for.
pub struct OutputFile {
    /// The path as given, for messages.
    name: PathBuf,
    target: Target,
}

enum Target {
    /// A regular file or a new path: a temporary file renamed to `path` on commit.
    Atomic {
        path: PathBuf,
        temp: tempfile::NamedTempFile,
        /// What the file gets in place of the temporary file's private mode and owner.
        keep: Keep,
    },
    /// A device, FIFO, socket or terminal: written as it is.
    Direct(File),
}

/// Symbolic links followed at most, as the kernel does.
const MAX_LINKS: usize = 40;

impl OutputFile {
    /// Opens the destination: a temporary file in the directory of a regular file or new path
    /// (a missing directory or one latkit cannot write to is an error now, not after a run), or
    /// the special file itself for writing.
    pub fn create(path: &Path) -> Result<OutputFile> {
        let name = path.to_path_buf();
        let io_err = |e| Error::writing(&path.display().to_string(), e);
        // The kernel follows the links (including /proc's, as /dev/stdout is one) to what is
        // there now.
        let target = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(Error::Output(format!(
                    "{}: is a directory, not a file to write",
                    path.display()
                )));
            }
            Ok(meta) if !meta.is_file() => Target::Direct(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io_err)?,
            ),
            Ok(meta) => {
                let path = std::fs::canonicalize(path).map_err(io_err)?;
                Target::Atomic {
                    temp: temporary_beside(&path).map_err(io_err)?,
                    path,
                    keep: Keep::existing(&meta),
                }
            }
            Err(_) => {
                let path = resolve_links(path).map_err(io_err)?;
                Target::Atomic {
                    temp: temporary_beside(&path).map_err(io_err)?,
                    path,
                    keep: Keep::new_file(),
                }
            }
        };
        Ok(OutputFile { name, target })
    }

    /// Where a program that writes the file itself may write it until
    /// [`OutputFile::commit`]; `None` for a special file, which takes only what is written
    /// through this handle.
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.target {
            Target::Atomic { temp, .. } => Some(temp.path()),
            Target::Direct(_) => None,
        }
    }

    pub fn name(&self) -> String {
        self.name.display().to_string()
    }

    /// Puts `bytes` in place now as the file's content so far, whole, through a temporary
    /// file of their own, leaving this one open for the final content. A special file is left
    /// alone: it takes only the final content.
    pub fn publish(&self, bytes: &[u8]) -> io::Result<()> {
        let Target::Atomic { path, keep, .. } = &self.target else {
            return Ok(());
        };
        let mut early = temporary_beside(path)?;
        early.write_all(bytes)?;
        early.as_file().sync_all()?;
        keep.apply(early.as_file())?;
        early.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Puts the file in place: flushes, syncs and renames a regular file (on any error the
    /// destination is left as it was and the temporary file is removed); flushes a special one.
    pub fn commit(self) -> Result<()> {
        let name = self.name();
        let io_err = |e| Error::writing(&name, e);
        match self.target {
            Target::Atomic { path, temp, keep } => {
                temp.as_file().sync_all().map_err(io_err)?;
                keep.apply(temp.as_file()).map_err(io_err)?;
                temp.persist(&path).map_err(|e| io_err(e.error))?;
            }
            Target::Direct(mut file) => file.flush().map_err(io_err)?,
        }
        Ok(())
    }
}

/// `path` with every symbolic link of its last component followed to a path that does not
/// exist yet: a dangling link names the file to create.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(|e| {
            // Said of the user's path (the caller names it), never of the temporary file.
            if !dir.is_dir() {
                let folder = dir.display();
                return io::Error::new(e.kind(), format!("its folder {folder} does not exist"));
            }
            e.raw_os_error().map_or_else(
                || io::Error::new(e.kind(), e.to_string()),
                io::Error::from_raw_os_error,
            )
        })
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Atomic { temp, .. } => temp.write(buf),
            Target::Direct(file) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Atomic { temp, .. } => temp.flush(),
            Target::Direct(file) => file.flush(),
        }
    }
}

/// The mode and owner a written file ends with: an existing file keeps its own; a new one gets
/// what `open(2)` would give it (0666 less the umask), not the temporary file's private 0600.
struct Keep {
    mode: u32,
    owner: Option<(u32, u32)>,
}

impl Keep {
    fn existing(meta: &std::fs::Metadata) -> Keep {
        use std::os::unix::fs::MetadataExt;
        Keep {
            mode: meta.mode() & 0o7777,
            owner: Some((meta.uid(), meta.gid())),
        }
    }

    fn new_file() -> Keep {
        Keep {
            mode: 0o666 & !umask(),
            owner: None,
        }
    }

    fn apply(&self, file: &File) -> io::Result<()> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if let Some((uid, gid)) = self.owner {
            let meta = file.metadata()?;
            // Only root may give a file away; a user keeps what it can (its own group).
            if (meta.uid(), meta.gid()) != (uid, gid) {
                let _ = std::os::unix::fs::fchown(file, Some(uid), Some(gid))
                    .or_else(|_| std::os::unix::fs::fchown(file, None, Some(gid)));
            }
        }
        file.set_permissions(std::fs::Permissions::from_mode(self.mode))
    }
}

/// This process's umask, as the kernel reports it (reading it with umask(2) would change it
/// for a moment under the other threads); 022 where /proc does not say.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(bytes)
        .map_err(|e| Error::writing(&out.name(), e))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_appears_until_commit_and_a_dropped_file_leaves_no_trace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, "old").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_file(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(OutputFile::create(&dir.path().join("missing/r.json")).is_err());
    }

    #[test]
    fn a_new_file_follows_the_umask_and_an_existing_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let fresh = dir.path().join("new.txt");
        write_file(&fresh, b"x").unwrap();
        assert_eq!(mode(&fresh), 0o666 & !umask());
        let private = dir.path().join("private.txt");
        std::fs::write(&private, "old").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_file(&private, b"new").unwrap();
        assert_eq!(mode(&private), 0o600);
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&private, b"newer").unwrap();
        assert_eq!(mode(&private), 0o640);
    }

    #[test]
    fn a_symlink_is_followed_and_its_target_written() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        // Dangling: the link names the file to create.
        write_file(&link, b"first").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "first");
        write_file(&link, b"second").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
    }

    #[test]
    fn a_fifo_is_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&kind),
            "still a FIFO"
        );
        assert!(
            OutputFile::create(dir.path()).is_err(),
            "a directory is refused"
        );
    }
}
