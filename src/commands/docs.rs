//! Shell completions and the man page, generated from the clap definitions, so that every
//! flag is documented once.

use crate::cli::Cli;
use crate::error::{Error, Result};
use clap::CommandFactory;
use std::io::Write;

pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "latkit", &mut out);
    emit(&out)
}

/// The man page: latkit(1), then one section per subcommand, as `--help` shows them.
pub fn man() -> Result<()> {
    let command = Cli::command();
    let mut out = Vec::new();
    let render = |command: &clap::Command, out: &mut Vec<u8>| {
        clap_mangen::Man::new(command.clone())
            .render(out)
            .map_err(|e| Error::io("man page", e))
    };
    render(&command, &mut out)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub = sub
            .clone()
            .display_name(format!("latkit-{}", sub.get_name()));
        render(&sub, &mut out)?;
    }
    emit(&out)
}

fn emit(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("stdout", e)),
        _ => Ok(()),
    }
}
