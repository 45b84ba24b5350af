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
            .map_err(|e| Error::Input(format!("{shown}: cannot connect: {e}")))?;
        let mut pg = Postgres { client, shown };
        // Quiet "relation already exists" notices from CREATE TABLE IF NOT EXISTS.
        pg.batch("SET client_min_messages = warning")?;
        Ok(pg)
    }

    fn fail(&self, e: postgres::Error) -> Error {
        Error::Input(format!("{}: {e}", self.shown))
    }
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`.
fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
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
        assert_eq!(
            super::without_password("postgres://ci:s3cret@db.example:5432/bench"),
            "postgres://ci@db.example:5432/bench"
        );
        assert_eq!(
            super::without_password("postgres://127.0.0.1/x"),
            "postgres://127.0.0.1/x"
        );
    }
}
