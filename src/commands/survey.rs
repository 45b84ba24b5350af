//! The stored series `history`, `history --regressions` and `site` read: which benchmarks
//! (a glob, less those ignored), which figure, which runs (`--branch`, `--since`, `--last`),
//! read from the store one series at a time so that memory follows one benchmark's history,
//! not the store's.

use super::store::{load, reference};
use crate::analyze::history::{figures, stored_figure};
use crate::analyze::regressions::{Family, Finding, SeriesChanges};
use crate::error::{Error, Result};
use crate::model::Note;
use crate::store::{Figure, Point, Span, Store, StoredRun};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The ignore file read from the working directory when `--ignore-file` does not name one.
const IGNORE_FILE: &str = ".latkitignore";

/// Which series to read.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Benchmarks (name or glob); `None`: all.
    pub bench: Option<String>,
    /// Globs of benchmarks left out (`--ignore`).
    pub ignore: Vec<String>,
    /// A file of more globs, one a line; `None`: [`IGNORE_FILE`] when there is one.
    pub ignore_file: Option<PathBuf>,
    /// The figure to follow: `METRIC`, `METRIC:STATISTIC` or a statistic.
    pub metric: Option<String>,
    /// The newest this many stored runs; `None`: all.
    pub last: Option<usize>,
    pub branch: Option<String>,
    /// A stored run (`@merge-base`, `@tag:v1`, ...) the series start at.
    pub since: Option<String>,
}

/// The series of a selection, opened: the benchmarks to read and how.
pub struct Survey<'a> {
    selection: &'a Selection,
    benches: Vec<(String, String, String)>,
    since: Option<Since>,
    /// Benchmarks that had no point in the `--since` run.
    without_base: Vec<String>,
    /// What was left out and why, for the report's notes.
    pub notes: Vec<Note>,
    /// The branches of the runs read.
    branches: std::collections::BTreeSet<String>,
    /// Each commit's place in the history of the branch read (else HEAD), when the working
    /// directory is a repository that has it.
    history: Option<HashMap<String, usize>>,
    /// Runs stored after a run of a later commit, placed at their commits.
    out_of_order: std::collections::BTreeSet<i64>,
}

impl<'a> Survey<'a> {
    pub fn open(store: &mut Store, selection: &'a Selection) -> Result<Survey<'a>> {
        let (ignored, mut notes) = ignore_globs(selection)?;
        let mut benches = matching_benches(store, selection.bench.as_deref())?;
        let before = benches.len();
        benches.retain(|(bench, _, _)| !ignored.is_match(bench));
        if before > benches.len() {
            notes.push(Note::info(format!(
                "{} of {before} benchmarks ignored",
                before - benches.len()
            )));
        }
        if benches.is_empty() {
            return Err(Error::Input(format!(
                "{}: every benchmark that matches is ignored",
                store.describe()
            )));
        }
        let since = match &selection.since {
            Some(text) => Some(Since::of(store, text)?),
            None => None,
        };
        Ok(Survey {
            selection,
            benches,
            since,
            without_base: Vec::new(),
            notes,
            branches: Default::default(),
            history: crate::store::git::history_positions(selection.branch.as_deref()),
            out_of_order: Default::default(),
        })
    }

    /// How many series the survey reads.
    pub fn len(&self) -> usize {
        self.benches.len()
    }

    /// Each benchmark's series, oldest first (the `--since` run first when it has the
    /// figure), one at a time; empty series are skipped.
    pub fn each(
        &mut self,
        store: &mut Store,
        mut visit: impl FnMut(&str, Vec<Point>, bool) -> Result<()>,
    ) -> Result<()> {
        let span = Span {
            branch: self.selection.branch.as_deref(),
            after: self.since.as_ref().map(|s| s.run.id),
            last: self.selection.last,
        };
        for (bench, default_metric, default_statistic) in &self.benches {
            let (metric, statistic) = match &self.selection.metric {
                Some(text) => match stored_figure(text, &store.bench_figures(bench)?) {
                    Ok(Some((metric, statistic))) => (Some(metric), statistic),
                    Ok(None) => continue,
                    Err(among) => {
                        return Err(Error::Input(format!(
                            "`{text}` could be the {text} of any of {} for {bench}: name one \
                             as METRIC:STATISTIC (e.g. {}:{text})",
                            among.join(", "),
                            among[0]
                        )));
                    }
                },
                None => (Some(default_metric.clone()), default_statistic.clone()),
            };
            let mut points = store.series(bench, metric.as_deref(), &statistic, &span)?;
            if let Some(history) = &self.history {
                self.out_of_order
                    .extend(in_commit_order(&mut points, history));
            }
            let base = self
                .since
                .as_ref()
                .and_then(|s| s.point(bench, metric.as_deref(), &statistic));
            let from_base = base.is_some();
            match base {
                Some(base) => points.insert(0, base),
                None if self.since.is_some() && !points.is_empty() => {
                    self.without_base.push(bench.clone())
                }
                None => {}
            }
            if !points.is_empty() {
                // A run with no branch (a detached checkout, bisect's) is one of its own.
                let branches = points
                    .iter()
                    .map(|p| p.run.branch.as_deref().unwrap_or("none"));
                self.branches.extend(branches.map(str::to_string));
                visit(bench, points, from_base)?;
            }
        }
        Ok(())
    }

    /// What the series read say of themselves: where they start (`--since`), the benchmarks
    /// read without that run, and runs of several branches judged as one history.
    pub fn reading_notes(&self) -> Vec<Note> {
        let mut notes: Vec<Note> = self
            .since
            .iter()
            .flat_map(|s| s.notes(&self.without_base))
            .collect();
        if !self.out_of_order.is_empty() {
            let n = self.out_of_order.len();
            notes.push(Note::info(format!(
                "{n} run{} stored out of commit order (bisect --store's, results stored late) \
                 placed at {} commit{} in the repository's history",
                if n == 1 { "" } else { "s" },
                if n == 1 { "its" } else { "their" },
                if n == 1 { "" } else { "s" },
            )));
        }
        if self.selection.branch.is_none() && self.branches.len() > 1 {
            let names: Vec<&str> = self.branches.iter().map(String::as_str).collect();
            notes.push(Note::warning(format!(
                "runs of {} branches ({}) are read as one history, so one branch's runs count as \
                 changes of the others (bisect --store's runs have branch none); --branch NAME \
                 reads one branch alone",
                names.len(),
                names.join(", ")
            )));
        }
        notes
    }

    /// The error for a survey that found no point at all.
    pub fn nothing(&self, store: &Store) -> Error {
        Error::Input(format!(
            "{}: no stored run has {} for {}",
            store.describe(),
            self.selection.metric.as_deref().unwrap_or("figures"),
            self.selection.bench.as_deref().unwrap_or("any benchmark")
        ))
    }
}

/// Every series of `selection` judged as one family at `alpha`: the changes that hold, and
/// what `keep` made of each series (given its points, its changes, and whether the first
/// point is the `--since` run) on the way.
pub fn regressions<T>(
    store: &mut Store,
    selection: &Selection,
    alpha: f64,
    mut keep: impl FnMut(&str, &[Point], &SeriesChanges, bool) -> T,
) -> Result<(Vec<Finding>, Vec<T>, Vec<Note>)> {
    let mut survey = Survey::open(store, selection)?;
    let family = Family {
        alpha,
        series: survey.len(),
    };
    let (mut judged, mut kept) = (Vec::new(), Vec::new());
    survey.each(store, |bench, points, from_base| {
        let changes = family.judge(bench, &points);
        kept.push(keep(bench, &points, &changes, from_base));
        judged.push(changes);
        Ok(())
    })?;
    if kept.is_empty() {
        return Err(survey.nothing(store));
    }
    let mut notes = std::mem::take(&mut survey.notes);
    notes.extend(survey.reading_notes());
    notes.push(Note::info(format!(
        "changes that hold among {} series at alpha {alpha} (family-wise): change points of \
         each run's figure (rank-sum binary segmentation of the spans less their trend, \
         Bonferroni over splits and series), steady trends between them (Mann-Kendall, \
         Theil-Sen's slope; Bonferroni over segments and series), and the newest 1-10 runs \
         against up to 20 before them (Student's t on the runs' log figures, Holm over series)",
        family.series
    )));
    let mut findings = family.decide(judged);
    for f in &mut findings {
        if let (Some(before), Some(after)) = (&f.before.commit, &f.after.commit) {
            f.commits = crate::store::git::commits_between(before, after);
        }
    }
    Ok((findings, kept, notes))
}

/// Puts `points` (in the order stored) in the order of their commits in `history`, runs of
/// one commit in the order stored; returns the runs that were stored after a run of a later
/// commit. Left as stored when a run's commit is not in `history`: there is no order to give
/// it.
fn in_commit_order(points: &mut Vec<Point>, history: &HashMap<String, usize>) -> Vec<i64> {
    let places: Option<Vec<usize>> = points
        .iter()
        .map(|p| history.get(p.run.commit.as_deref()?).copied())
        .collect();
    let Some(places) = places else {
        return Vec::new();
    };
    let mut latest = 0;
    let mut late = Vec::new();
    for (point, &place) in points.iter().zip(&places) {
        if place < latest {
            late.push(point.run.id);
        }
        latest = latest.max(place);
    }
    if !late.is_empty() {
        let mut keyed: Vec<(usize, Point)> = places.into_iter().zip(points.drain(..)).collect();
        keyed.sort_by_key(|(place, _)| *place);
        points.extend(keyed.into_iter().map(|(_, point)| point));
    }
    late
}

/// The stored run `--since` names, with the figures it left.
struct Since {
    text: String,
    run: StoredRun,
    figures: Vec<Figure>,
}

impl Since {
    fn of(store: &mut Store, text: &str) -> Result<Since> {
        let (run, decoded, _) = load(store, &reference(text)?)?;
        Ok(Since {
            text: text.to_string(),
            run,
            figures: figures(&decoded),
        })
    }

    /// The base run's point of `bench`'s figure; `None` when it has none.
    fn point(&self, bench: &str, metric: Option<&str>, statistic: &str) -> Option<Point> {
        let figure = self.figures.iter().find(|f| {
            f.bench == bench && f.statistic == statistic && metric.is_none_or(|m| m == f.metric)
        })?;
        Some(Point {
            run: self.run.clone(),
            figure: figure.clone(),
        })
    }

    /// What the series measure from, and the benchmarks shown without the base.
    fn notes(&self, without_base: &[String]) -> Vec<Note> {
        let mut notes = vec![Note::info(format!(
            "--since {}: each series starts at run #{} ({})",
            self.text,
            self.run.id,
            self.run
                .short_commit()
                .unwrap_or_else(|| "no commit".into())
        ))];
        if !without_base.is_empty() {
            notes.push(Note::info(format!(
                "not in the base run, so shown without it: {}",
                without_base.join(", ")
            )));
        }
        notes
    }
}

/// A glob, or exit 2 naming where it came from.
fn glob(pattern: &str, from: &str) -> Result<globset::Glob> {
    globset::Glob::new(pattern)
        .map_err(|e| Error::Input(format!("{from}: `{pattern}` is not a glob: {e}")))
}

/// The globs of `--ignore` and of the ignore file (one a line, `#` comments), compiled.
fn ignore_globs(selection: &Selection) -> Result<(globset::GlobSet, Vec<Note>)> {
    let mut set = globset::GlobSetBuilder::new();
    for pattern in &selection.ignore {
        set.add(glob(pattern, "--ignore")?);
    }
    let mut notes = Vec::new();
    let (path, named) = match &selection.ignore_file {
        Some(path) => (path.as_path(), true),
        None => (Path::new(IGNORE_FILE), false),
    };
    // A repository's own file: read as any hand-written spec is, bounded and regular only.
    // `--ignore-file /dev/null` says "none".
    let missing = !named && std::fs::symlink_metadata(path).is_err();
    if !missing && path != Path::new("/dev/null") {
        let text = crate::error::read_text(path).map_err(|e| {
            Error::Input(format!(
                "cannot read the ignore file {}: {e}",
                path.display()
            ))
        })?;
        let mut count = 0;
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            set.add(glob(line, &format!("{}:{}", path.display(), number + 1))?);
            count += 1;
        }
        notes.push(Note::info(format!(
            "{count} glob(s) of benchmarks to ignore read from {}",
            path.display()
        )));
    }
    let set = set
        .build()
        .map_err(|e| Error::Input(format!("the ignore globs: {e}")))?;
    Ok((set, notes))
}

/// The stored benchmarks `pattern` matches (all without one), each with the figure its
/// history follows by default; none is an error.
fn matching_benches(
    store: &mut Store,
    pattern: Option<&str>,
) -> Result<Vec<(String, String, String)>> {
    let glob = match pattern {
        Some(pattern) => Some(glob(pattern, "the benchmark glob")?.compile_matcher()),
        None => None,
    };
    let benches: Vec<(String, String, String)> = store
        .benches()?
        .into_iter()
        .filter(|(bench, _, _)| glob.as_ref().is_none_or(|g| g.is_match(bench)))
        .collect();
    if benches.is_empty() {
        return Err(Error::Input(format!(
            "{}: no stored benchmark matches {}",
            store.describe(),
            pattern.unwrap_or("anything (the store is empty)")
        )));
    }
    Ok(benches)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(id: i64, commit: &str) -> Point {
        Point::sample(id, Some(commit), id as f64)
    }

    fn ids(points: &[Point]) -> Vec<i64> {
        points.iter().map(|p| p.run.id).collect()
    }

    #[test]
    fn runs_stored_late_go_to_their_commits_and_runs_of_one_commit_keep_their_order() {
        let history: HashMap<String, usize> = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .map(|(i, c)| (c.to_string(), i))
            .collect();
        // b, c, d stored in order, then a re-run of b and a run of a (bisect's).
        let mut points = vec![at(1, "b"), at(2, "c"), at(3, "d"), at(4, "b"), at(5, "a")];
        assert_eq!(in_commit_order(&mut points, &history), [4, 5]);
        assert_eq!(ids(&points), [5, 1, 4, 2, 3]);
        // In order already: nothing moves.
        let mut points = vec![at(1, "a"), at(2, "a"), at(3, "c")];
        assert!(in_commit_order(&mut points, &history).is_empty());
        assert_eq!(ids(&points), [1, 2, 3]);
        // A commit the history does not have: the order stored stands.
        let mut points = vec![at(1, "d"), at(2, "x"), at(3, "a")];
        assert!(in_commit_order(&mut points, &history).is_empty());
        assert_eq!(ids(&points), [1, 2, 3]);
    }
}
