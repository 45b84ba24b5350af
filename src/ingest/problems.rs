//! Lines a reader skipped: every one is counted, the first few are kept as notes, so a file of
//! garbage cannot fill memory with warnings.

use crate::model::Note;

/// How many skipped lines are listed one by one.
pub const LISTED: usize = 100;

#[derive(Default)]
pub struct Skipped {
    notes: Vec<Note>,
    /// Lines that looked like results but could not be read.
    pub count: u64,
}

impl Skipped {
    pub fn line(&mut self, file: &str, line: u64, message: impl Into<String>) {
        self.count += 1;
        if self.notes.len() < LISTED {
            self.notes.push(Note::warning_at(file, line, message));
        }
    }

    /// The listed notes, and a closing count when more were skipped than listed.
    pub fn into_notes(mut self, file: &str) -> Vec<Note> {
        if self.count > LISTED as u64 {
            self.notes.push(Note::warning(format!(
                "{file}: {} malformed lines skipped in all ({LISTED} listed)",
                self.count
            )));
        }
        self.notes
    }
}

/// Where a line-by-line reader is in its file, and the lines it skipped there.
pub struct Place {
    pub file: String,
    pub line: u64,
    pub skipped: Skipped,
}

impl Place {
    pub fn new(file: &str) -> Place {
        Place {
            file: file.to_string(),
            line: 0,
            skipped: Skipped::default(),
        }
    }

    /// Moves to the next line; one too long to read (`None`) is skipped with the reason.
    pub fn next<'a>(&mut self, raw: Option<&'a str>) -> Option<&'a str> {
        self.line += 1;
        if raw.is_none() {
            self.skip(super::LINE_TOO_LONG);
        }
        raw
    }

    /// Skips the current line, saying why.
    pub fn skip(&mut self, why: impl Into<String>) {
        self.skipped.line(&self.file, self.line, why);
    }
}
