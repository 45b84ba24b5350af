//! Shell completions and the man page, generated from the clap definitions, so that every
//! flag is documented once.

use super::Cli;
use clap::CommandFactory;

pub use clap_complete::Shell;

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "latkit", &mut out);
    out
}

/// The man page: latkit(1), then one page per subcommand, as `--help` shows them.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let command = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub = sub
            .clone()
            .display_name(format!("latkit-{}", sub.get_name()));
        clap_mangen::Man::new(sub).render(&mut out)?;
    }
    Ok(out)
}
