//! The shared backend: a PostgreSQL server many machines write their history to.

use super::{Connection, Value};
use crate::error::{Error, Result};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};

pub struct Postgres {
    client: Client,
    /// The URL without its password, for messages.
    shown: String,
}

/// A key for the advisory lock that serialises writers (and migrations) across processes.
const WRITE_LOCK: i64 = 0x6c61_746b_6974; // "latkit"

impl Postgres {
    pub fn connect(url: &str) -> Result<Postgres> {
        let shown = without_password(url);
        let client = Client::connect(url, NoTls)
            .map_err(|e| Error::Input(format!("{shown}: cannot connect: {}", explain(&e))))?;
        let mut pg = Postgres { client, shown };
        // Quiet "relation already exists" notices from CREATE TABLE IF NOT EXISTS.
        pg.batch("SET client_min_messages = warning")?;
        Ok(pg)
    }

    fn fail(&self, e: postgres::Error) -> Error {
        Error::Input(format!("{}: {}", self.shown, explain(&e)))
    }
}

/// What went wrong, in the server's words where it answered (`database "x" does not exist`,
/// `password authentication failed for user "ci"`), else the cause under the driver's summary
/// (`error connecting to server: Connection refused`), never just "db error".
fn explain(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// Keywords of a libpq connection string (`host=db port=5432 dbname=bench`).
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "connect_timeout",
    "application_name",
    "options",
    "target_session_attrs",
];

/// Whether `location` is a keyword connection string rather than a SQLite path.
pub fn is_keyword_string(location: &str) -> bool {
    location
        .split_whitespace()
        .next()
        .and_then(|word| word.split_once('='))
        .is_some_and(|(key, _)| KEYWORDS.contains(&key))
}

/// The location with any password removed, for messages: `postgres://user:secret@host/db` →
/// `postgres://user@host/db`, `?password=secret&sslmode=x` → `?sslmode=x`, and a keyword
/// string's `password=secret` (or `password='a secret'`) dropped.
fn without_password(location: &str) -> String {
    if is_keyword_string(location) {
        return without_password_keyword(location);
    }
    let url = match (location.find("://"), location.find('?')) {
        (Some(scheme), query) => {
            let end = query.unwrap_or(location.len());
            match location[..end].rfind('@') {
                Some(at) if at > scheme => {
                    let credentials = &location[scheme + 3..at];
                    let user = credentials.split(':').next().unwrap_or_default();
                    format!("{}{user}@{}", &location[..scheme + 3], &location[at + 1..])
                }
                _ => location.to_string(),
            }
        }
        _ => location.to_string(),
    };
    match url.split_once('?') {
        Some((base, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            if kept.is_empty() {
                base.to_string()
            } else {
                format!("{base}?{}", kept.join("&"))
            }
        }
        None => url,
    }
}

fn without_password_keyword(conninfo: &str) -> String {
    let mut out = Vec::new();
    let mut rest = conninfo.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').unwrap_or((rest, ""));
        let key = key.trim();
        // A value runs to the next space, or is quoted with '…' (\' inside).
        let (value, next) = match after.strip_prefix('\'') {
            Some(quoted) => {
                let mut end = quoted.len();
                let mut escaped = false;
                for (i, c) in quoted.char_indices() {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '\'' if !escaped => {
                            end = i;
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                let stop = (end + 1).min(quoted.len());
                (&after[..stop + 1], &quoted[stop..])
            }
            None => after.split_once(char::is_whitespace).unwrap_or((after, "")),
        };
        if key != "password" {
            out.push(format!("{key}={value}"));
        }
        rest = next.trim_start();
    }
    out.join(" ")
}

fn params(values: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Value::Int(i) => Box::new(*i),
                Value::Real(f) => Box::new(*f),
                Value::Text(s) => Box::new(s.clone()),
                Value::Bool(b) => Box::new(*b),
            }
        })
        .collect()
}

fn cell(row: &postgres::Row, i: usize) -> std::result::Result<Value, postgres::Error> {
    let ty = row.columns()[i].type_();
    Ok(if *ty == Type::INT8 {
        Value::Int(row.try_get(i)?)
    } else if *ty == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *ty == Type::FLOAT8 {
        Value::Real(row.try_get(i)?)
    } else if *ty == Type::BOOL {
        Value::Bool(row.try_get(i)?)
    } else {
        Value::Text(row.try_get(i)?)
    })
}

impl Connection for Postgres {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(|e| self.fail(e))
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        let boxed = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        self.client.execute(sql, &refs).map_err(|e| self.fail(e))
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>> {
        let boxed = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.query(sql, &refs).map_err(|e| self.fail(e))?;
        rows.iter()
            .map(|row| (0..row.len()).map(|i| cell(row, i)).collect())
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.fail(e))
    }

    fn begin_write(&mut self) -> Result<()> {
        self.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))
    }

    fn serial(&self) -> &'static str {
        "BIGSERIAL"
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_messages() {
        for (given, shown) in [
            (
                "postgres://ci:s3cret@db.example:5432/bench",
                "postgres://ci@db.example:5432/bench",
            ),
            ("postgres://127.0.0.1/x", "postgres://127.0.0.1/x"),
            (
                "postgres://ci@h/x?password=s3cret&sslmode=disable",
                "postgres://ci@h/x?sslmode=disable",
            ),
            ("postgresql://h/x?password=s3cret", "postgresql://h/x"),
            (
                "host=db password='a s3cret' dbname=bench",
                "host=db dbname=bench",
            ),
            ("host=db password=s3cret", "host=db"),
        ] {
            assert_eq!(super::without_password(given), shown);
        }
        assert!(super::is_keyword_string(
            "host=127.0.0.1 port=5432 dbname=x"
        ));
        assert!(!super::is_keyword_string("/var/lib/latkit/history.db"));
    }
}
