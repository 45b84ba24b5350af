//! Reading latkit's TOML files (targets, page specs): errors name the file and the line.

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;

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
