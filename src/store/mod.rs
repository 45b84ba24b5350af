//! The history store: every run kept whole (values, distributions, environment, notes) with
//! the commit it measured, in embedded SQLite or a shared PostgreSQL. One schema with numbered
//! migrations and every query are written once here over a small [`Connection`] seam; each
//! backend only moves values in and out.

pub mod git;
#[cfg(feature = "postgres")]
mod postgres;
mod read;
mod refs;
mod sqlite;

pub use git::Provenance;
pub use refs::StoredRef;

use crate::error::{Error, Result};
use crate::model::{Note, Run};
use std::path::PathBuf;

/// A value crossing the seam, typed even when absent (PostgreSQL types its NULLs).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Bool(Option<bool>),
}

impl Value {
    fn text(s: impl Into<String>) -> Value {
        Value::Text(Some(s.into()))
    }

    fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|i| i as f64),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(v) => *v,
            Value::Int(v) => v.map(|i| i != 0),
            _ => None,
        }
    }
}

/// What a backend must do: run SQL with `$1`-style parameters inside transactions.
trait Connection {
    fn batch(&mut self, sql: &str) -> Result<()>;
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64>;
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>>;
    /// Starts a transaction that holds the write lock from its first statement, so two
    /// writers (or two migrations) never interleave.
    fn begin_write(&mut self) -> Result<()>;
    /// The column type of an auto-numbered primary key.
    fn serial(&self) -> &'static str;
    /// Where the store is, for messages (never a password).
    fn describe(&self) -> String;
}

/// Fills `benches`: each benchmark with the figure its newest run reports first.
macro_rules! list_benches {
    () => {
        "INSERT INTO benches (bench, metric, statistic)
        SELECT bench, metric, statistic FROM (
            SELECT bench, metric, statistic, ROW_NUMBER() OVER (
                PARTITION BY bench ORDER BY run_id DESC, position) AS rank
            FROM figures) ranked
        WHERE rank = 1;"
    };
}

mod schema;
use schema::{MIGRATIONS, Migration};

/// Parameters per statement: below SQLite's limit (32,766) and PostgreSQL's (65,535).
/// Also the chunk size of IN lists.
const PARAMETERS_PER_INSERT: usize = 10_000;

/// `head (row), (row), ... tail` with many rows per statement: one round trip per row made
/// PostgreSQL ten times slower.
fn insert_rows(
    conn: &mut dyn Connection,
    head: &str,
    tail: &str,
    rows: impl IntoIterator<Item = Vec<Value>>,
) -> Result<()> {
    let mut sql = String::from(head);
    let mut params: Vec<Value> = Vec::new();
    let mut flush = |sql: &mut String, params: &mut Vec<Value>| -> Result<()> {
        if !params.is_empty() {
            sql.push_str(tail);
            conn.execute(sql, params)?;
            params.clear();
            *sql = String::from(head);
        }
        Ok(())
    };
    for row in rows {
        if params.len() + row.len() > PARAMETERS_PER_INSERT {
            flush(&mut sql, &mut params)?;
        }
        if !params.is_empty() {
            sql.push_str(", ");
        }
        let first = params.len();
        let marks: Vec<String> = (1..=row.len()).map(|c| format!("${}", first + c)).collect();
        sql.push_str(&format!("({})", marks.join(", ")));
        params.extend(row);
    }
    flush(&mut sql, &mut params)
}

/// One figure of a stored run: a metric's median over repetitions (statistic `""`), or a
/// statistic of a distribution (`p99`).
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub bench: String,
    pub metric: String,
    pub statistic: String,
    pub source_unit: String,
    pub n: u64,
    pub value: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Every repetition's value, so later comparisons can test, not just subtract.
    pub repetitions: Vec<f64>,
}

impl Figure {
    /// What the figure is, as tables head it: `ns/op`, `latency p99`.
    pub fn label(&self) -> String {
        figure_label(&self.metric, &self.statistic)
    }
}

/// A figure's name as tables head it, from its metric and statistic (`""` for repetitions).
pub fn figure_label(metric: &str, statistic: &str) -> String {
    match statistic {
        "" => metric.to_string(),
        statistic => format!("{metric} {statistic}"),
    }
}

/// A stored run's description, without the run itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StoredRun {
    pub id: i64,
    pub stored_at: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub dirty: Option<bool>,
    pub tag: Option<String>,
    pub format: String,
    pub benchmarks: u64,
}

impl StoredRun {
    /// The commit as people quote it (10 hex digits), `+dirty` when the tree had changes.
    pub fn short_commit(&self) -> Option<String> {
        let c = self.commit.as_deref()?;
        let short = &c[..c.len().min(10)];
        Some(match self.dirty {
            Some(true) => format!("{short}+dirty"),
            _ => short.to_string(),
        })
    }
}

/// One point of a benchmark's history.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub run: StoredRun,
    pub figure: Figure,
}

#[cfg(test)]
impl Point {
    /// Run `id` at `commit` with one figure, `value` ns/op, for the engines' tests.
    pub fn sample(id: i64, commit: Option<&str>, value: f64) -> Point {
        Point {
            run: StoredRun {
                id,
                stored_at: String::new(),
                commit: commit.map(str::to_string),
                branch: None,
                dirty: None,
                tag: None,
                format: "go".into(),
                benchmarks: 1,
            },
            figure: Figure {
                bench: "B".into(),
                metric: "ns/op".into(),
                statistic: String::new(),
                source_unit: "ns/op".into(),
                n: 1,
                value,
                ci_low: None,
                ci_high: None,
                repetitions: Vec::new(),
            },
        }
    }
}

/// Which stored runs a listing wants, newest first.
#[derive(Clone, Debug, Default)]
pub struct RunQuery {
    pub branch: Option<String>,
    pub tag: Option<String>,
    pub last: Option<usize>,
}

/// Which stored runs a series takes: those on `branch`, stored after run `after`, the newest
/// `last` of them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span<'a> {
    pub branch: Option<&'a str>,
    pub after: Option<i64>,
    pub last: Option<usize>,
}

pub struct Store {
    conn: Box<dyn Connection>,
}

/// `--db`, else `LATKIT_DB`, else `$XDG_DATA_HOME/latkit/history.db` (`~/.local/share/...`),
/// the variables as the command's `vars` hold them.
pub fn default_location(db: Option<&str>, vars: &crate::env::Vars) -> Result<String> {
    if let Some(db) = db {
        return Ok(db.to_string());
    }
    if let Some(db) = vars.get("LATKIT_DB") {
        return Ok(db.to_string_lossy().into_owned());
    }
    let data = vars
        .get("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            vars.get("HOME")
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or_else(|| Error::Input("no history database: set --db, LATKIT_DB or HOME".into()))?;
    Ok(data.join("latkit/history.db").display().to_string())
}

const RUN_COLUMNS: &str =
    "id, stored_at, git_commit, git_branch, git_dirty, tag, format, benchmarks";

fn stored_run(row: &[Value]) -> StoredRun {
    StoredRun {
        id: row[0].as_i64().unwrap_or_default(),
        stored_at: row[1].as_str().unwrap_or_default().to_string(),
        commit: row[2].as_str().map(str::to_string),
        branch: row[3].as_str().map(str::to_string),
        dirty: row[4].as_bool(),
        tag: row[5].as_str().map(str::to_string),
        format: row[6].as_str().unwrap_or_default().to_string(),
        benchmarks: row[7].as_i64().unwrap_or_default().max(0) as u64,
    }
}

/// A PostgreSQL URL or keyword connection string (`host=db dbname=bench`), else a SQLite
/// path.
pub fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://")
        || location.starts_with("postgresql://")
        || crate::model::secrets::is_keyword_string(location)
}

/// A location that looks meant for PostgreSQL but is not one the driver reads (`POSTGRES://`,
/// ` postgres://`, `postgres:/u:pw@h/db`): refused (exit 2), never taken for a SQLite file
/// whose path would hold the password. Named without what may be a password.
fn refuse_near_miss(location: &str) -> Result<()> {
    let folded = location.trim().to_ascii_lowercase();
    let meant = ["postgres:", "postgresql:", "pg:"]
        .iter()
        .any(|scheme| folded.starts_with(scheme));
    match meant && !is_postgres(location) {
        true => Err(Error::Input(format!(
            "{}: not a PostgreSQL location (write postgres://USER@HOST/DB, lower case, with no \
             space before it); a SQLite store is a file path",
            crate::model::redact::in_text(location.split('@').next_back().unwrap_or_default())
        ))),
        false => Ok(()),
    }
}

/// A connection to the PostgreSQL store at `location`.
#[cfg(feature = "postgres")]
fn postgres_connection(location: &str) -> Result<Box<dyn Connection>> {
    Ok(Box::new(postgres::Postgres::connect(location)?))
}

/// This build has no PostgreSQL driver: the location is named (without what may be a
/// password) with the way to a build that has one.
#[cfg(not(feature = "postgres"))]
fn postgres_connection(location: &str) -> Result<Box<dyn Connection>> {
    Err(Error::Environment(format!(
        "{}: this latkit was built without PostgreSQL support (cargo's `postgres` feature, on by \
         default): reinstall it with the default features, or keep the history in a SQLite file",
        crate::model::secrets::without_password(location)
    )))
}

impl Store {
    /// Opens a store that must already exist, for commands that only read or remove: a SQLite
    /// path with no file is an error naming it, not a new empty store (a mistyped `--db`
    /// would otherwise answer "no runs" and leave a stray file).
    pub fn open_existing(location: &str) -> Result<Store> {
        refuse_near_miss(location)?;
        if !is_postgres(location) {
            match std::fs::metadata(location) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::Input(format!(
                        "{location}: no history store there yet (runs are kept with --store \
                         or `latkit store add`; --db or LATKIT_DB names another)"
                    )));
                }
                // A folder this user may not enter (another user's 0700 one) is said so, not
                // taken for a store that is not there.
                Err(e) => return Err(Error::io(location, e)),
                Ok(_) => {}
            }
        }
        let path = std::path::Path::new(location);
        if !is_postgres(location) && !sqlite::writable(path) {
            return Store::open_read_only(location);
        }
        Store::open(location)
    }

    /// A SQLite store this user may only read: nothing written, and a store whose schema
    /// is older than this latkit's is named rather than migrated.
    fn open_read_only(location: &str) -> Result<Store> {
        let mut store = Store {
            conn: Box::new(sqlite::Sqlite::open_read_only(location)?),
        };
        let rows = store
            .conn
            .query("SELECT MAX(version) FROM latkit_schema", &[])?;
        let have = rows.first().and_then(|r| r[0].as_i64()).unwrap_or(0).max(0) as usize;
        if have != MIGRATIONS.len() {
            return Err(Error::Input(format!(
                "{location}: history schema version {have}, this latkit reads {}; it is \
                 read-only here, so it cannot be migrated: open it once as a user who may write it",
                MIGRATIONS.len()
            )));
        }
        Ok(store)
    }

    /// Opens (creating and migrating when needed) the store at `location`: a
    /// `postgres://` or `postgresql://` URL, or a SQLite file path.
    pub fn open(location: &str) -> Result<Store> {
        refuse_near_miss(location)?;
        let conn: Box<dyn Connection> = if is_postgres(location) {
            postgres_connection(location)?
        } else {
            Box::new(sqlite::Sqlite::open(location)?)
        };
        let mut store = Store { conn };
        store.migrate()?;
        Ok(store)
    }

    pub fn describe(&self) -> String {
        self.conn.describe()
    }

    /// Applies the migrations this store lacks, all in one transaction under the write lock
    /// (two processes opening a new store at once must not both create it).
    fn migrate(&mut self) -> Result<()> {
        self.transaction(|conn| {
            conn.batch("CREATE TABLE IF NOT EXISTS latkit_schema (version BIGINT NOT NULL)")?;
            let rows = conn.query("SELECT MAX(version) FROM latkit_schema", &[])?;
            let have = rows.first().and_then(|r| r[0].as_i64()).unwrap_or(0).max(0) as usize;
            if have > MIGRATIONS.len() {
                return Err(Error::Input(format!(
                    "{}: history schema version {have} is newer than this latkit knows ({}); \
                     upgrade latkit",
                    conn.describe(),
                    MIGRATIONS.len()
                )));
            }
            for (i, step) in MIGRATIONS.iter().enumerate().skip(have) {
                match step {
                    Migration::Sql(sql) => conn.batch(&sql.replace("{serial}", conn.serial()))?,
                    Migration::Code(migrate) => migrate(conn)?,
                }
                conn.execute(
                    "INSERT INTO latkit_schema (version) VALUES ($1)",
                    &[Value::Int(Some(i as i64 + 1))],
                )?;
            }
            Ok(())
        })
    }

    /// Runs `work` in a write transaction: committed whole, or rolled back whole.
    fn transaction<T>(&mut self, work: impl FnOnce(&mut dyn Connection) -> Result<T>) -> Result<T> {
        self.conn.begin_write()?;
        match work(self.conn.as_mut()) {
            Ok(value) => {
                self.conn.batch("COMMIT")?;
                Ok(value)
            }
            Err(e) => {
                let _ = self.conn.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Stores `run` whole with its notes, provenance and figures; returns its id.
    pub fn put(
        &mut self,
        run: &Run,
        notes: &[Note],
        provenance: &Provenance,
        tag: Option<&str>,
        figures: &[Figure],
    ) -> Result<i64> {
        let document = serde_json::to_string(run)
            .map_err(|e| Error::Input(format!("cannot encode the run for the store: {e}")))?;
        let notes = serde_json::to_string(notes)
            .map_err(|e| Error::Input(format!("cannot encode notes for the store: {e}")))?;
        let stored_at = crate::model::timestamp(std::time::SystemTime::now());
        self.transaction(|conn| {
            let rows = conn.query(
                "INSERT INTO runs (stored_at, git_commit, git_branch, git_dirty, tag, format, \
                 benchmarks, document, notes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 RETURNING id",
                &[
                    Value::text(stored_at),
                    Value::Text(provenance.commit.clone()),
                    Value::Text(provenance.branch.clone()),
                    Value::Bool(provenance.dirty),
                    Value::Text(tag.map(crate::model::redact::in_text)),
                    Value::text(run.source.format.clone()),
                    Value::Int(Some(run.benchmarks.len() as i64)),
                    Value::text(document),
                    Value::text(notes),
                ],
            )?;
            let id = rows
                .first()
                .and_then(|r| r[0].as_i64())
                .ok_or_else(|| Error::Input("the store returned no id for the run".into()))?;
            // Each benchmark's first figure in this run becomes its default.
            let mut seen = std::collections::HashSet::new();
            insert_rows(
                conn,
                "INSERT INTO benches (bench, metric, statistic) VALUES ",
                " ON CONFLICT (bench) DO UPDATE SET metric = excluded.metric, \
                 statistic = excluded.statistic",
                figures
                    .iter()
                    .filter(|f| seen.insert(f.bench.as_str()))
                    .map(|f| {
                        vec![
                            Value::text(f.bench.clone()),
                            Value::text(f.metric.clone()),
                            Value::text(f.statistic.clone()),
                        ]
                    }),
            )?;
            let mut rows = Vec::with_capacity(figures.len());
            for (position, f) in figures.iter().enumerate() {
                let repetitions = serde_json::to_string(&f.repetitions)
                    .map_err(|e| Error::Input(format!("cannot encode repetitions: {e}")))?;
                rows.push(vec![
                    Value::Int(Some(id)),
                    Value::Int(Some(position as i64)),
                    Value::text(f.bench.clone()),
                    Value::text(f.metric.clone()),
                    Value::text(f.statistic.clone()),
                    Value::text(f.source_unit.clone()),
                    Value::Int(Some(f.n.min(i64::MAX as u64) as i64)),
                    Value::Real(Some(f.value)),
                    Value::Real(f.ci_low),
                    Value::Real(f.ci_high),
                    Value::text(repetitions),
                ]);
            }
            insert_rows(
                conn,
                "INSERT INTO figures (run_id, position, bench, metric, statistic, source_unit, \
                 n, value, ci_low, ci_high, repetitions) VALUES ",
                "",
                rows,
            )?;
            Ok(id)
        })
    }
}

#[cfg(test)]
mod tests;
