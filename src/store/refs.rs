//! Stored runs named on the command line: `@latest`, `@-1`, `@42`, `@3f2a9c1`, `@tag:NAME`,
//! `@branch:NAME`, `@merge-base[:BRANCH]`.

use super::{RunQuery, Store, StoredRun};
use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub enum StoredRef {
    /// The newest run (`@latest`), or the one `n` before it (`@-n`).
    Back(usize),
    Id(i64),
    /// A commit prefix (4 to 40 hex digits).
    Commit(String),
    Tag(String),
    Branch(String),
    /// The run stored at the commit where the current directory's HEAD left a branch (the
    /// default branch when `None`).
    MergeBase(Option<String>),
}

const FORMS: &str =
    "@latest, @-N, @ID, @COMMIT (4+ hex digits), @tag:NAME, @branch:NAME or @merge-base[:BRANCH]";

impl StoredRef {
    /// `Ok(None)` when `text` does not start with `@` (a file name).
    pub fn parse(text: &str) -> Result<Option<StoredRef>> {
        let Some(body) = text.strip_prefix('@') else {
            return Ok(None);
        };
        let bad = || Error::Input(format!("`{text}` is not a stored run: expected {FORMS}"));
        let named = |prefix: &str| {
            body.strip_prefix(prefix)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
        };
        let parsed = if body == "latest" {
            StoredRef::Back(0)
        } else if let Some(n) = body.strip_prefix('-') {
            StoredRef::Back(n.parse().map_err(|_| bad())?)
        } else if let Some(tag) = named("tag:") {
            StoredRef::Tag(tag)
        } else if let Some(branch) = named("branch:") {
            StoredRef::Branch(branch)
        } else if let Some(branch) = crate::runner::worktree::merge_base_branch(body) {
            StoredRef::MergeBase(branch.map(str::to_string))
        } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) && body.len() < 4 {
            StoredRef::Id(body.parse().map_err(|_| bad())?)
        } else if (4..=40).contains(&body.len()) && body.bytes().all(|b| b.is_ascii_hexdigit()) {
            // All-digit text of 4 or more characters could be either: an id wins if it exists.
            StoredRef::Commit(body.to_ascii_lowercase())
        } else {
            return Err(bad());
        };
        Ok(Some(parsed))
    }

    /// The stored run this names; an error says what was looked for and not found.
    pub fn resolve(&self, store: &mut Store) -> Result<StoredRun> {
        let newest = |store: &mut Store, query: RunQuery| -> Result<Option<StoredRun>> {
            Ok(store
                .runs(&RunQuery {
                    last: Some(1),
                    ..query
                })?
                .into_iter()
                .next())
        };
        let found = match self {
            StoredRef::Back(n) => store
                .runs(&RunQuery {
                    last: Some(n.saturating_add(1)),
                    ..RunQuery::default()
                })?
                .into_iter()
                .nth(*n),
            StoredRef::Id(id) => store.load(*id)?.map(|(run, _, _)| run),
            StoredRef::Commit(prefix) => {
                let by_id = match prefix.parse::<i64>() {
                    Ok(id) => store.load(id)?.map(|(run, _, _)| run),
                    Err(_) => None,
                };
                match by_id {
                    Some(run) => Some(run),
                    None => {
                        let runs = store.runs_at_commit(prefix)?;
                        let mut commits: Vec<&str> =
                            runs.iter().filter_map(|r| r.commit.as_deref()).collect();
                        commits.sort_unstable();
                        commits.dedup();
                        if commits.len() > 1 {
                            return Err(Error::Input(format!(
                                "@{prefix} is ambiguous: it begins commits {}",
                                commits.join(", ")
                            )));
                        }
                        runs.into_iter().next()
                    }
                }
            }
            StoredRef::Tag(tag) => newest(
                store,
                RunQuery {
                    tag: Some(tag.clone()),
                    ..RunQuery::default()
                },
            )?,
            StoredRef::Branch(branch) => newest(
                store,
                RunQuery {
                    branch: Some(branch.clone()),
                    ..RunQuery::default()
                },
            )?,
            StoredRef::MergeBase(branch) => {
                let here = std::path::Path::new(".");
                let commit = crate::runner::worktree::merge_base_of(here, branch.as_deref())?;
                let found = StoredRef::Commit(commit.clone()).resolve(store);
                return found.map_err(|_| {
                    Error::Input(format!(
                        "{}: no stored run is at the merge base {commit} (store one there: \
                         git checkout {commit} && latkit go --store)",
                        store.describe()
                    ))
                });
            }
        };
        found.ok_or_else(|| {
            Error::Input(format!(
                "{}: no stored run is {}",
                store.describe(),
                self.describe()
            ))
        })
    }

    fn describe(&self) -> String {
        match self {
            StoredRef::Back(0) => "the latest (the store is empty)".into(),
            StoredRef::Back(n) => format!("{n} before the latest"),
            StoredRef::Id(id) => format!("number {id}"),
            StoredRef::Commit(c) => format!("at a commit starting {c}"),
            StoredRef::Tag(t) => format!("tagged {t}"),
            StoredRef::Branch(b) => format!("on branch {b}"),
            StoredRef::MergeBase(_) => "at the merge base".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_bad_ones_say_what_is_expected() {
        let p = |t: &str| StoredRef::parse(t).unwrap();
        assert_eq!(p("old.txt"), None);
        assert_eq!(p("@latest"), Some(StoredRef::Back(0)));
        assert_eq!(p("@-2"), Some(StoredRef::Back(2)));
        assert_eq!(p("@42"), Some(StoredRef::Id(42)));
        assert_eq!(p("@3F2A9c1"), Some(StoredRef::Commit("3f2a9c1".into())));
        assert_eq!(p("@tag:v1.2"), Some(StoredRef::Tag("v1.2".into())));
        assert_eq!(p("@branch:main"), Some(StoredRef::Branch("main".into())));
        assert_eq!(p("@merge-base"), Some(StoredRef::MergeBase(None)));
        assert_eq!(
            p("@merge-base:dev"),
            Some(StoredRef::MergeBase(Some("dev".into())))
        );
        for bad in [
            "@",
            "@-x",
            "@tag:",
            "@branch:",
            "@zzzz",
            "@-99999999999999999999999",
        ] {
            let err = StoredRef::parse(bad).unwrap_err().to_string();
            assert!(err.contains("@latest, @-N"), "{bad}: {err}");
        }
    }
}
