//! `latkit completions` and `latkit man`: what the argument definitions generate, on stdout.

use crate::cli::{Shell, completion_script, man_page};
use crate::error::{Error, Result};
use std::io::Write;

pub fn completions(shell: Shell) -> Result<()> {
    emit(&completion_script(shell))
}

pub fn man() -> Result<()> {
    emit(&man_page().map_err(|e| Error::io("man page", e))?)
}

fn emit(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("stdout", e)),
        _ => Ok(()),
    }
}
