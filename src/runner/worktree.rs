//! A base revision checked out beside the working tree (`git worktree`), for A/B runs that
//! interleave the two; removed again when dropped. Each checkout is locked with the pid of the
//! latkit that owns it, so that one left by a latkit killed outright (SIGKILL, a lost
//! machine) is known for stale and removed by the next `--interleave` in that repository.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The scratch directory holding a checkout.
const SCRATCH_PREFIX: &str = "latkit-base-";

pub struct Worktree {
    /// The repository the working tree belongs to.
    top: PathBuf,
    /// Keeps the checkout's parent directory alive; the checkout is `root`.
    _scratch: tempfile::TempDir,
    root: PathBuf,
    /// The full commit checked out.
    pub commit: String,
}

fn git(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    crate::env::git::git()
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
}

/// `merge-base` or `merge-base:BRANCH` names the commit where HEAD left a branch: `Some` with
/// the branch given (`None` inside: the default branch).
pub fn merge_base_branch(rev: &str) -> Option<Option<&str>> {
    match rev.strip_prefix("merge-base")? {
        "" => Some(None),
        rest => rest.strip_prefix(':').filter(|b| !b.is_empty()).map(Some),
    }
}

/// The merge base of HEAD and `branch` in the repository at `dir`; without a branch, the
/// remote's default branch (`origin/HEAD`), else `main`. This is what a pull request is
/// judged against: where it branched off, not wherever the branch has moved since.
pub fn merge_base_of(dir: &Path, branch: Option<&str>) -> Result<String> {
    let remote_head = || {
        git_text(
            dir,
            &[
                "symbolic-ref",
                "--quiet",
                "--short",
                "refs/remotes/origin/HEAD",
            ],
            "",
        )
        .ok()
        .filter(|b| !b.is_empty())
    };
    let branch = match branch {
        Some(b) => crate::env::git::revision(b, "merge-base:")
            .map_err(Error::Input)?
            .to_string(),
        None => remote_head().unwrap_or_else(|| "main".to_string()),
    };
    git_text(
        dir,
        &["merge-base", "HEAD", &branch],
        &format!(
            "merge-base: HEAD and `{branch}` have no common commit in {} (name the branch: \
             merge-base:BRANCH)",
            dir.display()
        ),
    )
}

/// Standard output of a git command that must succeed, else an error naming `what`.
fn git_text(dir: &Path, args: &[&str], what: &str) -> Result<String> {
    let out = git(dir, args).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Environment("--interleave needs git on PATH".into()),
        _ => Error::Environment(format!("could not run git: {e}")),
    })?;
    if !out.status.success() {
        // `--quiet` questions fail with nothing said: the question is the message.
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Input(match said.trim() {
            "" => what.to_string(),
            cause => format!("{what}: {cause}"),
        }));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Worktree {
    /// Checks out `rev` of the repository holding `dir` into a temporary directory.
    pub fn add(dir: &Path, rev: &str) -> Result<Worktree> {
        if git(dir, &["rev-parse", "--is-bare-repository"])
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "true")
        {
            return Err(Error::Input(format!(
                "{} is a bare repository: latkit builds and measures checkouts of a working \
                 tree's repository (run it in a clone: git clone {} work)",
                dir.display(),
                dir.display()
            )));
        }
        let top = PathBuf::from(git_text(
            dir,
            &["rev-parse", "--show-toplevel"],
            &format!("{} is not in a git repository", dir.display()),
        )?);
        let merge_base;
        let rev = match merge_base_branch(rev) {
            Some(branch) => {
                merge_base = merge_base_of(&top, branch)?;
                merge_base.as_str()
            }
            None => rev,
        };
        crate::env::git::revision(rev, "the revision").map_err(Error::Input)?;
        let commit = git_text(
            &top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
            &format!("`{rev}` is not a commit of {}", top.display()),
        )?;
        if commit.is_empty() {
            return Err(Error::Input(format!(
                "`{rev}` is not a commit of {}",
                top.display()
            )));
        }
        prune_stale(&top);
        let scratch = tempfile::Builder::new()
            .prefix(SCRATCH_PREFIX)
            .tempdir()
            .map_err(|e| Error::Environment(format!("a temporary directory: {e}")))?;
        let root = scratch.path().join("tree");
        let root_text = root.display().to_string();
        git_text(
            &top,
            &[
                "worktree",
                "add",
                "--quiet",
                "--detach",
                "--lock",
                "--reason",
                &format!("{OWNER}{}", owner()),
                &root_text,
                &commit,
            ],
            &format!("git worktree add {rev}"),
        )?;
        Ok(Worktree {
            top,
            _scratch: scratch,
            root,
            commit,
        })
    }
}

/// A checkout of another revision beside the working tree, as `--interleave` runs it.
pub trait Tree {
    /// The commit checked out, in full.
    fn commit(&self) -> &str;
    /// Where `path` of the working tree is in the checkout.
    fn counterpart(&self, path: &Path) -> Result<PathBuf>;
    /// The short commit, as people quote it.
    fn short(&self) -> &str {
        short(self.commit())
    }
}

/// A commit hash as people quote it: its first 10 characters.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(10)]
}

impl Tree for Worktree {
    fn commit(&self) -> &str {
        &self.commit
    }

    fn counterpart(&self, path: &Path) -> Result<PathBuf> {
        let absolute =
            std::path::absolute(path).map_err(|e| Error::io(&path.display().to_string(), e))?;
        // Compare canonical forms: the repository top comes back from git resolved.
        let parent = absolute.parent().unwrap_or(&absolute);
        let canonical_parent =
            std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        let canonical = match absolute.file_name() {
            Some(name) if parent != absolute => canonical_parent.join(name),
            _ => canonical_parent,
        };
        let relative = canonical.strip_prefix(&self.top).map_err(|_| {
            Error::Input(format!(
                "{} is outside the repository {} that --interleave checks out",
                path.display(),
                self.top.display()
            ))
        })?;
        Ok(self.root.join(relative))
    }
}

/// The lock reason of a latkit checkout, followed by the owner's pid.
const OWNER: &str = "latkit pid ";

/// This process as an owner of checkouts and scratch directories: `PID.START`, its pid and
/// its start time in clock ticks since boot, so that a pid reused after latkit died is not
/// taken for it, whatever either program is called.
pub fn owner() -> String {
    let pid = std::process::id();
    match start_time(&pid.to_string()) {
        Some(start) => format!("{pid}.{start}"),
        None => pid.to_string(),
    }
}

/// Whether the owner `token` ([`owner`]'s) still runs. A bare pid (older latkits, or no
/// /proc) is alive while a process of that pid named latkit runs.
pub(super) fn owner_alive(token: &str) -> bool {
    match token.split_once('.') {
        Some((pid, start)) => start_time(pid).is_some_and(|now| now.to_string() == start),
        None => std::fs::read_to_string(format!("/proc/{token}/comm"))
            .is_ok_and(|comm| comm.trim_start().starts_with("latkit")),
    }
}

/// Removes the entries of `dir` named `PREFIX` + an owner ([`owner`]'s token) + `-…` that
/// this user made and whose owner is gone (killed outright, so its own cleanup never ran).
/// Best effort: one that cannot be removed stays, as it would have.
pub fn remove_stale_owned(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .map(|(pid, _)| pid)
        else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| {
            std::os::unix::fs::MetadataExt::uid(&m) == nix::unistd::geteuid().as_raw()
        });
        if ours && !owner_alive(owner) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// When process `pid` started (clock ticks since boot: `/proc/PID/stat`'s 22nd field).
fn start_time(pid: &str) -> Option<u64> {
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in parentheses and may hold spaces; fields 3 on follow the last.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Removes checkouts whose owner is gone, with their scratch directories, and forgets those
/// whose directory was deleted (a cleaned /tmp). Best effort: a checkout that cannot be
/// removed stays, as it would have anyway.
fn prune_stale(top: &Path) {
    let Ok(list) = git(top, &["worktree", "list", "--porcelain"]) else {
        return;
    };
    let listing = String::from_utf8_lossy(&list.stdout);
    for entry in listing.split("\n\n") {
        let field = |name: &str| {
            entry
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::trim)
        };
        let (Some(root), Some(owner)) = (
            field("worktree "),
            field("locked ").and_then(|reason| reason.strip_prefix(OWNER)),
        ) else {
            continue;
        };
        if !owner_alive(owner) {
            remove(top, Path::new(root));
        }
    }
    let _ = git(top, &["worktree", "prune"]);
}

/// Removes the checkout at `root` (locked: hence the second --force) and the scratch
/// directory latkit made for it.
fn remove(top: &Path, root: &Path) {
    let root_text = root.display().to_string();
    let _ = git(
        top,
        &["worktree", "remove", "--force", "--force", &root_text],
    );
    if let Some(scratch) = root.parent().filter(|dir| {
        dir.file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with(SCRATCH_PREFIX))
    }) {
        let _ = std::fs::remove_dir_all(scratch);
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        remove(&self.top, &self.root);
        let _ = git(&self.top, &["worktree", "prune"]);
    }
}

/// A commit as a bisection reports it.
#[derive(Clone, Debug)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
    /// Author date, ISO 8601.
    pub date: String,
}

impl Commit {
    pub fn short(&self) -> &str {
        short(&self.hash)
    }
}

/// `good`, then every commit after it up to `bad` along first parents, oldest first; an
/// error when `bad` does not descend from `good`.
pub fn commits_between(dir: &Path, good: &str, bad: &str) -> Result<Vec<Commit>> {
    let resolve = |rev: &str| {
        crate::env::git::revision(rev, "the revision").map_err(Error::Input)?;
        git_text(
            dir,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
            &format!(
                "`{rev}` is not a commit of the repository at {}",
                dir.display()
            ),
        )
    };
    let (good, bad) = (resolve(good)?, resolve(bad)?);
    let ancestor = git(dir, &["merge-base", "--is-ancestor", &good, &bad])
        .map_err(|e| Error::Environment(format!("could not run git: {e}")))?;
    if !ancestor.status.success() || good == bad {
        return Err(Error::Input(format!(
            "--bad {bad} does not come after --good {good}: the good commit must be an \
             ancestor of the bad one"
        )));
    }
    let format = "--format=%H%x1f%s%x1f%aI";
    let first = git_text(dir, &["log", "-1", format, &good], "git log")?;
    let range = format!("{good}..{bad}");
    let rest = git_text(
        dir,
        &["log", "--first-parent", "--reverse", format, &range],
        "git log",
    )?;
    Ok(std::iter::once(first.as_str())
        .chain(rest.lines())
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\u{1f}');
            Some(Commit {
                hash: fields.next()?.to_string(),
                subject: fields.next()?.to_string(),
                date: fields.next()?.to_string(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_known_by_its_pid_and_start_whatever_the_program_is_called() {
        let me = owner();
        assert!(owner_alive(&me), "{me}");
        // The same pid started at another time is another process (a reused pid).
        let (pid, start) = me.split_once('.').unwrap();
        let other_start = start.parse::<u64>().unwrap() + 1;
        assert!(!owner_alive(&format!("{pid}.{other_start}")));
        assert!(!owner_alive("4194304999.1"));
        assert!(!owner_alive("../1.2"));
        assert!(!owner_alive(""));
    }
}
