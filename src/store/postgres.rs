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
        let shown = crate::model::secrets::without_password(url);
        let client = Client::connect(url, NoTls).map_err(|e| {
            let why = format!("{shown}: cannot connect: {}", explain(&e));
            // A server that answered refused what it was given (no such database, a wrong
            // password): the location is wrong. One that did not answer is not there.
            match e.as_db_error() {
                Some(_) => Error::Input(why),
                None => Error::Environment(why),
            }
        })?;
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
