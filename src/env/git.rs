//! The one way latkit runs git: in a repository it did not write, whose configuration may
//! name commands (`core.fsmonitor`, hooks under `core.hooksPath`, a post-checkout hook on
//! `worktree add`) that are not latkit's to run, and no optional lock taken that another git
//! (an editor's) would meet.

use std::process::Command;

/// `git` with the repository's own commands turned off; arguments follow.
pub fn git() -> Command {
    let mut git = Command::new("git");
    git.args([
        "--no-optional-locks",
        "-c",
        "core.fsmonitor=",
        "-c",
        "core.hooksPath=/dev/null",
    ]);
    git
}

/// A revision or branch a user gave, refused when git would take it for an option
/// (`--octopus`): the message names where it came from.
pub fn revision<'a>(rev: &'a str, given_as: &str) -> Result<&'a str, String> {
    match rev.starts_with('-') {
        true => Err(format!(
            "{given_as} `{rev}`: a revision does not start with `-` (git would read an option)"
        )),
        false => Ok(rev),
    }
}
