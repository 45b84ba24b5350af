//! `latkit store` and `latkit history`, and stored runs as inputs everywhere (`@latest`).

use super::Env;
use super::{
    Reading, ReportOptions, deliver, enrich_options, load_suite, read_inputs, say_warnings,
};
use crate::analyze::Report;
use crate::analyze::build_report;
use crate::analyze::history::figures;
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::{Note, Run};
use crate::report::sink::print_whole;
use crate::report::sink::{Destination, FanOut, Rendered};
use crate::store::{Provenance, RunQuery, Store, StoredRef, StoredRun};
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

/// The store `--db` (or its defaults) names, opened on first use.
pub struct LazyStore<'a> {
    db: Option<&'a str>,
    vars: &'a crate::env::Vars,
    store: Option<Store>,
}

impl<'a> LazyStore<'a> {
    pub fn new(db: Option<&'a str>, vars: &'a crate::env::Vars) -> Self {
        LazyStore {
            db,
            vars,
            store: None,
        }
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
            let location = crate::store::default_location(self.db, self.vars)?;
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
) -> Result<ReadInput> {
    match StoredRef::parse(spec)? {
        Some(reference) => {
            let (stored, mut run, mut notes) = load(store.existing()?, &reference)?;
            reading.directions(std::slice::from_mut(&mut run), spec, &mut notes);
            Ok((label_of(spec, &stored), vec![run], notes))
        }
        None => read_file_input(spec, reading, console),
    }
}

/// One input read: its label, its runs and what reading it noted.
pub type ReadInput = (String, Vec<Run>, Vec<Note>);

/// The input `spec` names when it is a file (or `-`), not a stored run.
pub fn read_file_input(spec: &str, reading: &Reading, console: &Console) -> Result<ReadInput> {
    let (runs, notes) = read_inputs(
        std::slice::from_ref(&spec.to_string()),
        reading,
        false,
        console,
    )?;
    Ok((file_label(spec), runs, notes))
}

/// benchstat's `label=path`: a file read under a column label of its own (`O=old.txt`), when
/// `spec` itself names no file and `path` does.
pub fn labelled_file(spec: &str) -> (Option<&str>, &str) {
    if std::path::Path::new(spec).exists() {
        return (None, spec);
    }
    match spec.split_once('=') {
        Some((label, path)) if !label.is_empty() && std::path::Path::new(path).is_file() => {
            (Some(label), path)
        }
        _ => (None, spec),
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

pub(super) fn load(
    store: &mut Store,
    reference: &StoredRef,
) -> Result<(StoredRun, Run, Vec<Note>)> {
    let stored = reference.resolve(store)?;
    store
        .load(stored.id)?
        .ok_or_else(|| Error::Input(format!("stored run #{} vanished while reading", stored.id)))
}

pub(super) fn reference(text: &str) -> Result<StoredRef> {
    StoredRef::parse(text)?.ok_or_else(|| {
        Error::Input(format!(
            "`{text}` is not a stored run: stored runs start with @ (@latest, @-1, @ID, \
             @COMMIT, @tag:NAME, @branch:NAME, @merge-base[:BRANCH])"
        ))
    })
}

pub fn run(action: StoreAction, db: Option<&str>, env: &Env) -> Result<()> {
    let console = &env.console;
    let mut store = LazyStore::new(db, &env.vars);
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
                let path = crate::error::visible(path);
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
            let sinks = super::output_sinks(&report.output, env)?;
            deliver(build_report(vec![run], notes, &opts)?, sinks)
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
            let mut report = Report {
                generated: None,
                runs: vec![run],
                tables: Vec::new(),
                notes,
                verdict: None,
            };
            let mut sinks = FanOut::new(false, console, env.report_time()?);
            sinks.push(Rendered::new(
                &crate::report::JSON,
                Destination::open(out.as_deref(), &console.stdout)?,
            ));
            sinks.finish(&mut report)
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
                let cells = [
                    format!("#{}", r.id),
                    r.stored_at.clone(),
                    commit,
                    r.branch.clone().unwrap_or_default(),
                    r.tag.clone().unwrap_or_default(),
                    r.format.clone(),
                    r.benchmarks.to_string(),
                ];
                // Tags and branches are anyone's text: shown, never acting on the terminal.
                grid.add_row(cells.map(|c| crate::error::visible(&c).into_owned()));
            }
            grid.to_string()
        }
    };
    text.push('\n');
    print_whole(console, text.as_bytes())
}
