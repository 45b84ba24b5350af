//! The history store as a sink: every finished run is saved whole with its notes, commit and
//! the figures `history` reads.

use crate::analyze::Report;
use crate::env::Console;
use crate::error::{Error, Result};
use crate::store::{Provenance, Store};
use std::path::{Path, PathBuf};

pub struct Stored {
    /// `None` only while being dropped.
    store: Option<Store>,
    provenance: Provenance,
    tag: Option<String>,
    /// Where each stored run is named (`None`: quiet).
    talk: Option<Console>,
    /// The SQLite file this sink created, removed again if no run was stored in it (a
    /// command that failed leaves no empty store behind).
    created: Option<PathBuf>,
}

impl Stored {
    /// Opens the store now, so a bad `--db` fails before any measuring; each run stored is
    /// named on `talk`'s stderr.
    pub fn open(location: &str, tag: Option<String>, talk: Option<&Console>) -> Result<Stored> {
        let path = Path::new(location);
        let created =
            (!crate::store::is_postgres(location) && !path.exists()).then(|| path.to_path_buf());
        let store = Store::open(location)?;
        Ok(Stored {
            store: Some(store),
            provenance: Provenance::of_working_directory(),
            tag,
            talk: talk.cloned(),
            created,
        })
    }
}

impl Drop for Stored {
    fn drop(&mut self) {
        drop(self.store.take());
        if let Some(path) = &self.created {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut file = path.clone().into_os_string();
                file.push(suffix);
                let _ = std::fs::remove_file(file);
            }
        }
    }
}

impl Stored {
    /// Saves every run of `report`. It is called after every other output was written, so a
    /// store that fails or stalls costs only itself: an output error (exit 4) that says so.
    pub fn put(&mut self, report: &Report) -> Result<()> {
        let Some(store) = self.store.as_mut() else {
            return Ok(());
        };
        for run in &report.runs {
            let figures = crate::analyze::history::figures(run);
            let put = store.put(
                run,
                &report.notes,
                &self.provenance,
                self.tag.as_deref(),
                &figures,
            );
            let id = put.map_err(|e| {
                Error::Output(format!(
                    "the run was not stored ({}); every other output was written",
                    e
                ))
            })?;
            // A store holding a run stays, whatever happens next.
            self.created = None;
            if let Some(console) = &self.talk {
                console.say(&format!("latkit: stored run #{id} in {}", store.describe()));
            }
        }
        Ok(())
    }
}
