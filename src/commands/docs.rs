//! `latkit completions` and `latkit man`: what the argument definitions generate, on stdout.

use crate::error::{Error, Result};
use std::io::Write;

/// Writes `bytes` to stdout; a reader that stops early (`| head`) is not an error.
pub fn print(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("stdout", e)),
        _ => Ok(()),
    }
}
