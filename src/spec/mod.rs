//! What users write for latkit to follow: the suite (`latkit.toml`), targets and regression
//! rules, and the page spec. Each is TOML read by one loader here, whose errors name the file
//! and the line.

pub mod filter;
pub mod page;
pub mod projection;
pub mod suite;
pub mod targets;

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use std::path::Path;

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses `text` (the content of `file`, a `what` such as "targets file").
pub fn parse<T: DeserializeOwned>(file: &str, text: &str, what: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!(":{}", line_of(text, s.start)))
            .unwrap_or_default();
        Error::Input(format!("{file}{line}: not a valid {what}: {}", e.message()))
    })
}

/// Reads and parses the file at `path` (a `what` such as "suite file"), at most 1 MiB.
pub fn load<T: DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    load_checked(path, |file, text| parse(file, text, what))
}

/// Reads the file at `path` and hands its name and text to `parse`, for specs that check
/// more than TOML's shape and name the line of what they refuse.
pub fn load_checked<T>(path: &Path, parse: impl FnOnce(&str, &str) -> Result<T>) -> Result<T> {
    let text = crate::error::read_text(path)?;
    parse(&path.display().to_string(), &text)
}
