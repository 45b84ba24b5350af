//! Commands run in-process in a scripted world (`commands::scripted`): the command line parsed
//! as typed, the timed commands played back, time virtual, Ctrl-C when the test says, and
//! the report read from the captured stdout. No process starts and no time passes, so what
//! these tests assert holds on any machine under any load.

use crate::commands::scripted::{Played, World};
use crate::error::Result;
use serde_json::Value;

/// `latkit ARGS…` in `world`.
fn latkit(world: &World, args: &[&str]) -> Result<()> {
    let command = super::parse(std::iter::once("latkit").chain(args.iter().copied()))?;
    crate::commands::run(command, &world.env)
}

/// `latkit exec ARGS… --format json -q` in `world`, and the report it wrote.
fn exec_json(world: &World, args: &[&str]) -> (Result<()>, Value) {
    let mut all = vec!["exec"];
    all.extend(args);
    all.extend(["--format", "json", "-q"]);
    let ended = latkit(world, &all);
    let stdout = world.stdout();
    let doc = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (ended, doc)
}

/// The values of `metric` of the benchmark `name`.
fn values(doc: &Value, name: &str, metric: &str) -> Vec<f64> {
    let benches = doc["runs"][0]["benchmarks"].as_array();
    let bench = benches
        .and_then(|b| b.iter().find(|b| b["full_name"] == name))
        .unwrap_or_else(|| panic!("no benchmark {name} in {doc}"));
    let metrics = bench["metrics"].as_array().unwrap();
    let found = metrics.iter().find(|m| m["name"] == metric).unwrap();
    found["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// `sleep S` takes S seconds and 1 ms to start, within ±2 % that differs run to run but not
/// test to test; `false` fails; `no-such-command` is not there; anything else takes 1 ms.
fn machine(command: &str, nth: usize) -> Played {
    let jitter = ((nth * 7919 + command.len() * 104_729) % 1000) as f64 / 1000.0 - 0.5;
    let seconds = |s: f64| (s + 0.001) * (1.0 + 0.04 * jitter);
    match command.split_whitespace().collect::<Vec<_>>()[..] {
        ["sleep", s] => (seconds(s.parse().unwrap()), 0),
        ["false"] => (seconds(0.0), 1),
        ["no-such-command"] => (0.0, 127),
        _ => (seconds(0.0), 0),
    }
}

/// The cell of `column` in the row named `name` (its first cell), in the report's first table.
fn cell<'a>(doc: &'a Value, name: &str, column: &str) -> &'a Value {
    let table = &doc["tables"][0];
    let columns = table["columns"].as_array().unwrap();
    let at = columns.iter().position(|c| c["key"] == column);
    let at = at.unwrap_or_else(|| panic!("no column {column} in {table}"));
    let rows = table["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["cells"][0]["text"] == name);
    &row.unwrap_or_else(|| panic!("no row {name} in {table}"))["cells"][at]
}

mod bisect;
mod counts;
mod interleave;
mod reports;
mod runs;
