//! The history store as a sink: every finished run is saved whole with its notes, commit and
//! the figures `history` reads.

use super::Report;
use super::sink::Sink;
use crate::error::Result;
use crate::store::{Provenance, Store};
use std::io;

pub struct Stored {
    store: Store,
    provenance: Provenance,
    tag: Option<String>,
    quiet: bool,
}

impl Stored {
    /// Opens the store now, so a bad `--db` fails before any measuring.
    pub fn open(location: &str, tag: Option<String>, quiet: bool) -> Result<Stored> {
        Ok(Stored {
            store: Store::open(location)?,
            provenance: Provenance::of_working_directory(),
            tag,
            quiet,
        })
    }
}

impl Sink for Stored {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        for run in &report.runs {
            let figures = crate::analyze::history::figures(run);
            let id = self
                .store
                .put(
                    run,
                    &report.notes,
                    &self.provenance,
                    self.tag.as_deref(),
                    &figures,
                )
                .map_err(|e| io::Error::other(e.to_string()))?;
            if !self.quiet {
                crate::error::say(&format!(
                    "latkit: stored run #{id} in {}",
                    self.store.describe()
                ));
            }
        }
        Ok(())
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }

    fn name(&self) -> String {
        self.store.describe()
    }
}
