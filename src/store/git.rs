//! Which code a run measured: the git commit, branch and dirty flag of the working directory.

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// Uncommitted changes to tracked files: the commit alone does not describe the code.
    pub dirty: Option<bool>,
}

/// Runs git to read metadata only: the repository's own commands (an fsmonitor hook, any
/// other hook) are not latkit's to run, and no lock is taken that another git would meet.
fn git(args: &[&str]) -> Option<String> {
    let out = crate::env::git::git().args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// How many commits `newer` has that `older` has not (`git rev-list --count older..newer`), in
/// the working directory's repository; `None` without one, or when git does not know either.
pub fn commits_between(older: &str, newer: &str) -> Option<usize> {
    // Stored text, not options: only hex digits reach git's command line.
    let hex = |c: &str| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_hexdigit());
    if !hex(older) || !hex(newer) {
        return None;
    }
    git(&["rev-list", "--count", &format!("{older}..{newer}")])?
        .parse()
        .ok()
}

/// Each commit of `tip`'s history (a branch, else HEAD), by its place in it, oldest first
/// (`git rev-list --topo-order --reverse`); `None` outside a repository, or when git knows
/// neither.
pub fn history_positions(tip: Option<&str>) -> Option<std::collections::HashMap<String, usize>> {
    let list = |tip: &str| {
        git(&[
            "rev-list",
            "--topo-order",
            "--reverse",
            "--end-of-options",
            tip,
        ])
    };
    let listed = tip.and_then(list).or_else(|| list("HEAD"))?;
    Some(
        listed
            .lines()
            .enumerate()
            .map(|(position, commit)| (commit.to_string(), position))
            .collect(),
    )
}

impl Provenance {
    /// Read from the current directory; all absent outside a repository or without git.
    pub fn of_working_directory() -> Provenance {
        let Some(commit) = git(&["rev-parse", "HEAD"]) else {
            return Provenance::default();
        };
        let branch = git(&["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
        Provenance {
            commit: Some(commit),
            branch,
            dirty,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_hex_commits_reach_git() {
        // An option would be read as one; git is not even run.
        assert_eq!(super::commits_between("--output=/tmp/x", "abc123"), None);
        assert_eq!(super::commits_between("abc123", ""), None);
    }
}
