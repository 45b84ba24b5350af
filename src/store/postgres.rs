//! The shared backend: a PostgreSQL server many machines write their history to.

use super::{Connection, Value};
use crate::error::{Error, Result};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::sync::mpsc;
use std::time::Duration;

/// The client lives on its own thread and every request waits for its answer only until a
/// deadline: a server that stalls (stopped, or cut off by a partition, where the kernel still
/// accepts the connection) is then an error, never a hang.
pub struct Postgres {
    requests: mpsc::Sender<Request>,
    replies: mpsc::Receiver<Result<Reply>>,
    /// How long one request may go unanswered: the location's `connect_timeout`, else
    /// [`DEADLINE`].
    deadline: Duration,
    /// The URL without its password, for messages.
    shown: String,
    /// A request went unanswered: the thread may still be waiting on it, so nothing more
    /// is sent.
    stalled: bool,
}

enum Request {
    Batch(String),
    Execute(String, Vec<Value>),
    Query(String, Vec<Value>),
}

/// What a request gave: the rows it changed (`Execute`) and the rows it read (`Query`).
#[derive(Default)]
struct Reply {
    count: u64,
    rows: Vec<Vec<Value>>,
}

/// How long a request may wait for the server when the location sets no `connect_timeout`.
const DEADLINE: Duration = Duration::from_secs(30);

/// A key for the advisory lock that serialises writers (and migrations) across processes.
const WRITE_LOCK: i64 = 0x6c61_746b_6974; // "latkit"

impl Postgres {
    pub fn connect(url: &str) -> Result<Postgres> {
        let shown = crate::model::secrets::without_password(url);
        let deadline = url
            .parse::<postgres::Config>()
            .ok()
            .and_then(|config| config.get_connect_timeout().copied())
            .filter(|timeout| !timeout.is_zero())
            .unwrap_or(DEADLINE);
        let (requests, asked) = mpsc::channel();
        let (answer, replies) = mpsc::channel();
        let (url, named) = (url.to_string(), shown.clone());
        std::thread::spawn(move || serve(&url, &named, asked, answer));
        let mut pg = Postgres {
            requests,
            replies,
            deadline,
            shown,
            stalled: false,
        };
        pg.answer()?;
        // Quiet "relation already exists" notices from CREATE TABLE IF NOT EXISTS.
        pg.batch("SET client_min_messages = warning")?;
        Ok(pg)
    }

    /// The answer to the last request (or to the connection), within the deadline.
    fn answer(&mut self) -> Result<Reply> {
        match self.replies.recv_timeout(self.deadline) {
            Ok(reply) => reply,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.stalled = true;
                Err(self.no_answer())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Environment(format!(
                "{}: the connection to the server ended",
                self.shown
            ))),
        }
    }

    fn no_answer(&self) -> Error {
        Error::Environment(format!(
            "{}: the server did not answer within {} s (a stopped server or a network \
             partition; the location's connect_timeout sets this deadline)",
            self.shown,
            self.deadline.as_secs_f64()
        ))
    }

    fn ask(&mut self, request: Request) -> Result<Reply> {
        if self.stalled || self.requests.send(request).is_err() {
            return Err(self.no_answer());
        }
        self.answer()
    }
}

/// The client's thread: connects, says how that went, then answers each request in turn
/// until the handle is dropped.
fn serve(
    url: &str,
    shown: &str,
    requests: mpsc::Receiver<Request>,
    replies: mpsc::Sender<Result<Reply>>,
) {
    let mut client = match Client::connect(url, NoTls) {
        Ok(client) => client,
        Err(e) => {
            let why = format!("{shown}: cannot connect: {}", explain(&e));
            // A server that answered refused what it was given (no such database, a wrong
            // password): the location is wrong. One that did not answer is not there.
            let _ = replies.send(Err(match e.as_db_error() {
                Some(_) => Error::Input(why),
                None => Error::Environment(why),
            }));
            return;
        }
    };
    if replies.send(Ok(Reply::default())).is_err() {
        return;
    }
    for request in requests {
        let fail = |e: postgres::Error| Error::Input(format!("{shown}: {}", explain(&e)));
        let reply = match request {
            Request::Batch(sql) => client.batch_execute(&sql).map(|_| Reply::default()),
            Request::Execute(sql, values) => {
                let boxed = params(&values);
                (client.execute(&sql, &refs(&boxed))).map(|count| Reply {
                    count,
                    ..Reply::default()
                })
            }
            Request::Query(sql, values) => {
                let boxed = params(&values);
                client.query(&sql, &refs(&boxed)).and_then(|rows| {
                    rows.iter()
                        .map(|row| (0..row.len()).map(|i| cell(row, i)).collect())
                        .collect::<std::result::Result<_, _>>()
                        .map(|rows| Reply { count: 0, rows })
                })
            }
        };
        if replies.send(reply.map_err(fail)).is_err() {
            return;
        }
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

fn refs(boxed: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    boxed.iter().map(|b| b.as_ref()).collect()
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
        self.ask(Request::Batch(sql.into())).map(|_| ())
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64> {
        Ok(self
            .ask(Request::Execute(sql.into(), values.to_vec()))?
            .count)
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>> {
        Ok(self.ask(Request::Query(sql.into(), values.to_vec()))?.rows)
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
