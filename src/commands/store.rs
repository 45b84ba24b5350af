//! `latkit store` and `latkit history`, and stored runs as inputs everywhere (`@latest`).

use super::Env;
use super::{
    Plots, Reading, ReportOptions, deliver, enrich_options, load_suite, read_inputs, say_warnings,
};
use crate::analyze::Report;
use crate::analyze::build_report;
use crate::analyze::history::{figures, split_metric, trend};
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::{Note, Run};
use crate::report::sink::print_whole;
use crate::report::sink::{Destination, FanOut, Rendered};
use crate::store::{Figure, Point, Provenance, RunQuery, Span, Store, StoredRef, StoredRun};
use std::path::PathBuf;

/// What `latkit store` does.
pub enum StoreAction {
    /// Store results files as runs, with the working directory's git provenance.
    Add {
        files: Vec<String>,
        reading: Reading,
        tag: Option<String>,
        quiet: bool,
    },
    List {
        query: RunQuery,
        format: ListFormat,
    },
    /// Report a stored run as `parse` would.
    Show {
        reference: String,
        report: Box<ReportOptions>,
    },
    Remove {
        references: Vec<String>,
        quiet: bool,
    },
    /// A stored run as latkit JSON, to `out` or standard output.
    Export {
        reference: String,
        out: Option<PathBuf>,
    },
}

/// How `store list` prints the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// Aligned terminal table.
    Table,
    /// One JSON array of runs.
    Json,
}

/// The trends `latkit history` shows.
pub struct HistoryOptions {
    /// Benchmarks (name or glob); `None`: all.
    pub bench: Option<String>,
    /// The figure to follow: `METRIC`, `METRIC:STATISTIC` or a statistic.
    pub metric: Option<String>,
    /// The newest this many stored runs.
    pub last: usize,
    pub branch: Option<String>,
    /// A stored run (`@merge-base`, `@tag:v1`, ...) the trends start at and are measured from.
    pub since: Option<String>,
    /// Significance level for changes between consecutive runs.
    pub alpha: f64,
    pub format: &'static crate::report::OutputFormat,
    /// The report's file; `None` is standard output.
    pub out: Option<PathBuf>,
    /// The history store's location.
    pub db: Option<String>,
    pub plots: Plots,
}

/// The store `--db` (or its defaults) names, opened on first use.
pub struct LazyStore<'a> {
    db: Option<&'a str>,
    store: Option<Store>,
}

impl<'a> LazyStore<'a> {
    pub fn new(db: Option<&'a str>) -> Self {
        LazyStore { db, store: None }
    }

    /// The store, created if there is none yet (for adding runs).
    pub fn get(&mut self) -> Result<&mut Store> {
        self.open_with(Store::open)
    }

    /// The store, which must exist (for reading and removing runs).
    pub fn existing(&mut self) -> Result<&mut Store> {
        self.open_with(Store::open_existing)
    }

    fn open_with(&mut self, open: fn(&str) -> Result<Store>) -> Result<&mut Store> {
        if self.store.is_none() {
            let location = crate::store::default_location(self.db)?;
            self.store = Some(open(&location)?);
        }
        Ok(self.store.as_mut().expect("opened above"))
    }
}

/// An input named on the command line: a stored run (`@...`) or a file. Returns a label for
/// column headings, the runs and the reader's notes.
pub fn read_input(
    spec: &str,
    reading: &Reading,
    store: &mut LazyStore,
    console: &Console,
) -> Result<(String, Vec<Run>, Vec<Note>)> {
    match StoredRef::parse(spec)? {
        Some(reference) => {
            let (stored, mut run, mut notes) = load(store.existing()?, &reference)?;
            reading.directions(std::slice::from_mut(&mut run), spec, &mut notes);
            Ok((label_of(spec, &stored), vec![run], notes))
        }
        None => {
            let (runs, notes) = read_inputs(
                std::slice::from_ref(&spec.to_string()),
                reading,
                false,
                console,
            )?;
            Ok((file_label(spec), runs, notes))
        }
    }
}

/// A column's heading for a file: its name, as benchstat heads its columns.
pub fn file_label(spec: &str) -> String {
    match spec {
        "-" => "stdin".to_string(),
        path => std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned()),
    }
}

/// `@latest (#12 3f2a9c1d)`.
fn label_of(spec: &str, stored: &StoredRun) -> String {
    let commit = stored
        .commit
        .as_deref()
        .map(|c| format!(" {}", &c[..c.len().min(8)]))
        .unwrap_or_default();
    format!("{spec} (#{}{commit})", stored.id)
}

fn load(store: &mut Store, reference: &StoredRef) -> Result<(StoredRun, Run, Vec<Note>)> {
    let stored = reference.resolve(store)?;
    store
        .load(stored.id)?
        .ok_or_else(|| Error::Input(format!("stored run #{} vanished while reading", stored.id)))
}

fn reference(text: &str) -> Result<StoredRef> {
    StoredRef::parse(text)?.ok_or_else(|| {
        Error::Input(format!(
            "`{text}` is not a stored run: stored runs start with @ (@latest, @-1, @ID, \
             @COMMIT, @tag:NAME, @branch:NAME, @merge-base[:BRANCH])"
        ))
    })
}

pub fn run(action: StoreAction, db: Option<&str>, env: &Env) -> Result<()> {
    let console = &env.console;
    let mut store = LazyStore::new(db);
    match action {
        StoreAction::Add {
            files,
            reading,
            tag,
            quiet,
        } => {
            let (mut runs, notes) = read_inputs(&files, &reading, false, console)?;
            crate::analyze::enrich::summarize_all(&mut runs);
            if !quiet {
                say_warnings(&notes, console);
            }
            let provenance = Provenance::of_working_directory();
            let store = store.get()?;
            for run in &runs {
                let id = store.put(run, &notes, &provenance, tag.as_deref(), &figures(run))?;
                let path = run.source.path.as_deref().unwrap_or("stdin");
                let line = format!(
                    "stored #{id}: {path} ({} benchmarks)\n",
                    run.benchmarks.len()
                );
                print_whole(console, line.as_bytes())?;
            }
            Ok(())
        }
        StoreAction::List { query, format } => {
            list(&store.existing()?.runs(&query)?, format, console)
        }
        StoreAction::Show {
            reference: r,
            report,
        } => {
            let (_, run, notes) = load(store.existing()?, &reference(&r)?)?;
            let opts = enrich_options(&report, &load_suite(&report)?)?;
            let sinks = super::output_sinks(&report.output, console)?;
            deliver(&build_report(vec![run], notes, &opts)?, sinks)
        }
        StoreAction::Remove { references, quiet } => {
            let store = store.existing()?;
            let mut ids = Vec::new();
            // Resolve every reference first: `rm @latest @-1` means the two newest, not the
            // newest twice.
            for r in &references {
                ids.push(reference(r)?.resolve(store)?.id);
            }
            for id in ids {
                if store.remove(id)? && !quiet {
                    print_whole(console, format!("removed #{id}\n").as_bytes())?;
                }
            }
            Ok(())
        }
        StoreAction::Export { reference: r, out } => {
            let (_, mut run, notes) = load(store.existing()?, &reference(&r)?)?;
            // What analysis derives is not stored: it is derived again, as for the file.
            crate::analyze::enrich::summarize_all(std::slice::from_mut(&mut run));
            let report = Report {
                runs: vec![run],
                tables: Vec::new(),
                notes,
                verdict: None,
            };
            let mut sinks = FanOut::new(false, console);
            sinks.push(Rendered::new(
                &crate::report::JSON,
                Destination::open(out.as_deref(), &console.stdout)?,
            ));
            sinks.finish(&report)
        }
    }
}

fn list(runs: &[StoredRun], format: ListFormat, console: &Console) -> Result<()> {
    let mut text = match format {
        ListFormat::Json => serde_json::to_string_pretty(runs)
            .map_err(|e| Error::Input(format!("cannot encode the list: {e}")))?,
        ListFormat::Table => {
            let mut grid = crate::report::terminal::grid(console.stdout.reader().width);
            grid.set_header([
                "Run",
                "Stored",
                "Commit",
                "Branch",
                "Tag",
                "Format",
                "Benchmarks",
            ]);
            for r in runs {
                let commit = r.short_commit().unwrap_or_default();
                grid.add_row([
                    format!("#{}", r.id),
                    r.stored_at.clone(),
                    commit,
                    r.branch.clone().unwrap_or_default(),
                    r.tag.clone().unwrap_or_default(),
                    r.format.clone(),
                    r.benchmarks.to_string(),
                ]);
            }
            grid.to_string()
        }
    };
    text.push('\n');
    print_whole(console, text.as_bytes())
}

/// The stored run `--since` names (as written), with the figures it left.
struct Since<'a> {
    text: &'a str,
    run: StoredRun,
    figures: Vec<Figure>,
}

impl<'a> Since<'a> {
    fn of(store: &mut Store, text: &'a str) -> Result<Since<'a>> {
        let (run, decoded, _) = load(store, &reference(text)?)?;
        Ok(Since {
            text,
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

    /// What the trends measure from, and the benchmarks shown without the base.
    fn notes(&self, without_base: &[String]) -> Vec<Note> {
        let mut notes = vec![Note::info(format!(
            "--since {}: each trend starts at run #{} ({}) and `vs base` is each later run's \
             change from it, tested as consecutive runs are",
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

/// The stored benchmarks `pattern` matches (all without one), each with the figure its
/// history follows by default; none is an error.
fn matching_benches(
    store: &mut Store,
    pattern: Option<&str>,
) -> Result<Vec<(String, String, String)>> {
    let glob = match pattern {
        Some(pattern) => Some(
            globset::Glob::new(pattern)
                .map_err(|e| Error::Input(format!("`{pattern}` is not a glob: {e}")))?
                .compile_matcher(),
        ),
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

/// `latkit history`: one trend table per matching benchmark.
pub fn history(args: HistoryOptions, env: &Env) -> Result<()> {
    let mut sinks = FanOut::new(false, &env.console);
    sinks.push(Rendered::new(
        args.format,
        Destination::open(args.out.as_deref(), &env.console.stdout)?,
    ));
    sinks.push_plots(&args.plots.pairs()?)?;
    let mut lazy = LazyStore::new(args.db.as_deref());
    let store = lazy.existing()?;
    let benches = matching_benches(store, args.bench.as_deref())?;
    let since = match &args.since {
        Some(text) => Some(Since::of(store, text)?),
        None => None,
    };
    let span = Span {
        branch: args.branch.as_deref(),
        after: since.as_ref().map(|s| s.run.id),
        last: Some(args.last),
    };
    let mut tables = Vec::new();
    let mut without_base = Vec::new();
    for (bench, default_metric, default_statistic) in benches {
        let (metric, statistic) = match &args.metric {
            Some(text) => split_metric(text),
            None => (Some(default_metric), default_statistic),
        };
        let mut points = store.series(&bench, metric.as_deref(), &statistic, &span)?;
        let base = since
            .as_ref()
            .and_then(|s| s.point(&bench, metric.as_deref(), &statistic));
        let from_base = base.is_some();
        match base {
            Some(base) => points.insert(0, base),
            None if since.is_some() && !points.is_empty() => without_base.push(bench.clone()),
            None => {}
        }
        if !points.is_empty() {
            tables.push(trend(&bench, &points, args.alpha, from_base));
        }
    }
    if tables.is_empty() {
        return Err(Error::Input(format!(
            "{}: no stored run has {} for {}",
            store.describe(),
            args.metric.as_deref().unwrap_or("figures"),
            args.bench.as_deref().unwrap_or("any benchmark")
        )));
    }
    let mut notes = vec![Note::info(
        "change points: a change from the previous run that the U test finds significant \
         (both runs with >= 4 repetitions), bounds that do not overlap (distributions), or \
         a figure more than 3 scaled MADs from the median of the 10 runs before it",
    )];
    notes.extend(since.iter().flat_map(|s| s.notes(&without_base)));
    let report = Report {
        runs: Vec::new(),
        tables,
        notes,
        verdict: None,
    };
    sinks.finish(&report)
}
