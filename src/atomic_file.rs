//! Output files written whole or not at all: each goes to a temporary file beside its
//! destination and is renamed over it only when everything was written, so a full disk or a
//! failure midway never leaves a truncated report that reads back as valid. Creating one
//! checks the destination before any measuring starts.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Unbuffered: wrap it in a `BufWriter` or `LineWriter` as the writing calls for.
pub struct OutputFile {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl OutputFile {
    /// Opens a temporary file in `path`'s directory: a missing directory or one latkit cannot
    /// write to is an error now, not after a run.
    pub fn create(path: &Path) -> Result<OutputFile> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(dir)
            .map_err(|e| Error::io(&path.display().to_string(), e))?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            temp,
        })
    }

    /// Where the content is written until [`OutputFile::commit`], for a program that writes
    /// the file itself.
    pub fn temp_path(&self) -> &Path {
        self.temp.path()
    }

    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// Flushes, syncs and renames the file into place; on any error the destination is left
    /// as it was and the temporary file is removed.
    pub fn commit(self) -> Result<()> {
        let name = self.name();
        let io_err = |e| Error::io(&name, e);
        let temp = self.temp;
        temp.as_file().sync_all().map_err(io_err)?;
        // A report is for others to read, unlike the private temporary file.
        set_readable(temp.as_file()).map_err(io_err)?;
        temp.persist(&self.path).map_err(|e| io_err(e.error))?;
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

fn set_readable(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(bytes)
        .map_err(|e| Error::io(&out.name(), e))?;
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
}
