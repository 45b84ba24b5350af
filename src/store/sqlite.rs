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

impl Sqlite {
    pub fn open(path: &str) -> Result<Sqlite> {
        if let Some(dir) = Path::new(path).parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(&dir.display().to_string(), e))?;
        }
        let fail = |e: rusqlite::Error| Error::Input(format!("{path}: {e}"));
        let conn = rusqlite::Connection::open(path).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(fail)?;
        Ok(Sqlite {
            conn,
            path: path.to_string(),
        })
    }

    fn fail(&self, e: rusqlite::Error) -> Error {
        Error::Input(format!("{}: {e}", self.path))
    }
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
