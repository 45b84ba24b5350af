//! The embedded backend: one SQLite file, written in WAL mode so readers never wait for a
//! writer, and writers queue on the file lock instead of failing.

use super::{Connection, Value};
use crate::error::{Error, Result};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::path::Path;
use std::time::Duration;

pub struct Sqlite {
    conn: rusqlite::Connection,
    path: String,
}

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Puts the file in WAL mode. The switch needs the file to itself and SQLite does not run
/// the busy handler for it, so processes creating a store at once would fail with "database
/// is locked": WAL persists in the file, so it is only switched when not yet on, and a busy
/// switch is retried (with backoff, within the busy timeout) until someone's switch took.
fn use_wal(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let mode = |conn: &rusqlite::Connection| {
        conn.query_row("PRAGMA journal_mode", [], |row| row.get::<_, String>(0))
    };
    let switch = |conn: &rusqlite::Connection| {
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        })
    };
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        match mode(conn).and_then(|now| {
            if now.eq_ignore_ascii_case("wal") {
                Ok(now)
            } else {
                switch(conn)
            }
        }) {
            Ok(now) if now.eq_ignore_ascii_case("wal") => return Ok(()),
            // Not switched (another connection holds the file): try again.
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) => {}
            Err(e) => return Err(e),
        }
        if std::time::Instant::now() >= deadline {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some("could not switch to WAL mode: the file stayed locked".into()),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

impl Sqlite {
    pub fn open(path: &str) -> Result<Sqlite> {
        refuse_special(path)?;
        if let Some(dir) = Path::new(path).parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::writing(&dir.display().to_string(), e))?;
        }
        let fail = |e| failure(path, e);
        let conn = rusqlite::Connection::open(path).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        use_wal(&conn).map_err(fail)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(fail)?;
        Ok(Sqlite {
            conn,
            path: path.to_string(),
        })
    }

    /// Opens a store this user may read but not write (another user's, or a read-only
    /// mount) without writing anything: no WAL switch, no migration, no journal. Where the
    /// directory allows no `-shm` file either, the file is read as immutable.
    pub fn open_read_only(path: &str) -> Result<Sqlite> {
        use rusqlite::OpenFlags;
        refuse_special(path)?;
        let fail = |e| failure(path, e);
        let dir = match Path::new(path).parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let shm_possible = Path::new(&format!("{path}-shm")).exists() || writable(dir);
        let mode = if shm_possible {
            "mode=ro"
        } else {
            "immutable=1"
        };
        let uri = format!("file:{}?{mode}", uri_path(path));
        let conn = rusqlite::Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        Ok(Sqlite {
            conn,
            path: path.to_string(),
        })
    }

    fn fail(&self, e: rusqlite::Error) -> Error {
        failure(&self.path, e)
    }
}

/// What SQLite's refusal means: a full disk, an I/O error or a read-only file is the
/// system's, an output not written (exit 4); anything else (a file that is no store, a
/// corrupt one) is the input's.
fn failure(path: &str, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode::{DiskFull, ReadOnly, SystemIoFailure};
    let why = format!("{path}: {e}");
    match e.sqlite_error_code() {
        Some(DiskFull | SystemIoFailure | ReadOnly) => Error::Output(why),
        _ => Error::Input(why),
    }
}

/// Whether this process may write `path` (a file, or a directory to create files in).
/// A store is a regular file or a path still to be made: SQLite beside a device or a FIFO
/// (`--db /dev/null`) would create its journal files next to it, in /dev.
fn refuse_special(path: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            let kind = match meta.file_type() {
                t if t.is_dir() => "a directory",
                _ => "a device, FIFO or socket",
            };
            Err(Error::Input(format!(
                "{path}: is {kind}, not a history store (a SQLite file, or a new path for one)"
            )))
        }
        _ => Ok(()),
    }
}

pub fn writable(path: &Path) -> bool {
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// A path as a SQLite URI's path: `%`, `?` and `#` percent-encoded.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

fn to_sql(value: &Value) -> ToSqlOutput<'_> {
    use rusqlite::types::Value as V;
    ToSqlOutput::Owned(match value {
        Value::Int(Some(i)) => V::Integer(*i),
        Value::Real(Some(f)) => V::Real(*f),
        Value::Text(Some(s)) => V::Text(s.clone()),
        Value::Bool(Some(b)) => V::Integer(i64::from(*b)),
        Value::Int(None) | Value::Real(None) | Value::Text(None) | Value::Bool(None) => V::Null,
    })
}

fn from_sql(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(i) => Value::Int(Some(i)),
        ValueRef::Real(f) => Value::Real(Some(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::Text(Some(String::from_utf8_lossy(t).into_owned()))
        }
    }
}

/// `$1` as SQLite's numbered `?1`: SQLite reads `$1` as a *named* parameter and looks each
/// name up in a list, which made a 1,000-row INSERT take seconds. The store's SQL never
/// holds a `$` other than in a placeholder.
fn numbered(sql: &str) -> String {
    sql.replace('$', "?")
}

impl Connection for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(|e| self.fail(e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let params: Vec<ToSqlOutput> = params.iter().map(to_sql).collect();
        self.conn
            .execute(&numbered(sql), rusqlite::params_from_iter(params))
            .map(|n| n as u64)
            .map_err(|e| self.fail(e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let params: Vec<ToSqlOutput> = params.iter().map(to_sql).collect();
        let run = || -> rusqlite::Result<Vec<Vec<Value>>> {
            let mut stmt = self.conn.prepare_cached(&numbered(sql))?;
            let columns = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push(
                    (0..columns)
                        .map(|i| row.get_ref(i).map(from_sql))
                        .collect::<rusqlite::Result<_>>()?,
                );
            }
            Ok(out)
        };
        run().map_err(|e| self.fail(e))
    }

    fn begin_write(&mut self) -> Result<()> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn serial(&self) -> &'static str {
        // SQLite numbers rows itself when the key is exactly INTEGER PRIMARY KEY.
        "INTEGER"
    }

    fn describe(&self) -> String {
        self.path.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::Sqlite;

    #[test]
    fn processes_creating_a_store_at_once_all_open_it() {
        // Sixteen openers released together on each of several fresh files: switching a new
        // file to WAL takes it exclusively, without SQLite's busy handler.
        let dir = tempfile::tempdir().unwrap();
        for round in 0..40 {
            let path = dir.path().join(format!("race{round}.db"));
            let path = path.to_str().unwrap().to_string();
            let start = std::sync::Arc::new(std::sync::Barrier::new(16));
            let openers: Vec<_> = (0..16)
                .map(|_| {
                    let (path, start) = (path.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        Sqlite::open(&path).map(|_| ()).map_err(|e| e.to_string())
                    })
                })
                .collect();
            for opener in openers {
                assert_eq!(opener.join().unwrap(), Ok(()), "round {round}");
            }
        }
    }
}
