//! The schema, as numbered migrations applied in order: SQL, or code where the data need what
//! SQL cannot say portably.

use super::{Connection, Value};
use crate::error::Result;
use crate::model::BenchName;

/// One step of the schema: SQL (`{serial}` is the backend's auto-numbered key type), or
/// code where the data need what SQL cannot say portably.
pub(super) enum Migration {
    Sql(&'static str),
    Code(fn(&mut dyn Connection) -> Result<()>),
}

/// The schema, one migration per entry, applied in order. Never edit a released entry:
/// append a new one.
pub(super) const MIGRATIONS: &[Migration] = &[
    // 1: runs whole, and the figures `history` reads without decoding a run.
    Migration::Sql(
        "CREATE TABLE runs (
        id {serial} PRIMARY KEY,
        stored_at TEXT NOT NULL,
        git_commit TEXT,
        git_branch TEXT,
        git_dirty BOOLEAN,
        tag TEXT,
        format TEXT NOT NULL,
        benchmarks BIGINT NOT NULL,
        document TEXT NOT NULL,
        notes TEXT NOT NULL
    );
    CREATE INDEX runs_commit ON runs (git_commit);
    CREATE INDEX runs_branch ON runs (git_branch, id);
    CREATE INDEX runs_tag ON runs (tag, id);
    CREATE TABLE figures (
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        position BIGINT NOT NULL,
        bench TEXT NOT NULL,
        metric TEXT NOT NULL,
        statistic TEXT NOT NULL,
        source_unit TEXT NOT NULL,
        n BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        ci_low DOUBLE PRECISION,
        ci_high DOUBLE PRECISION,
        repetitions TEXT NOT NULL
    );
    CREATE INDEX figures_series ON figures (bench, metric, statistic, run_id);",
    ),
    // 2: each benchmark with the figure its newest run reports first, so `history` need not
    // scan every figure to list them; figures by run, so deleting a run need not scan them.
    Migration::Sql(concat!(
        "CREATE TABLE benches (
        bench TEXT PRIMARY KEY,
        metric TEXT NOT NULL,
        statistic TEXT NOT NULL
    );",
        list_benches!(),
        "CREATE INDEX figures_run ON figures (run_id);"
    )),
    // 3: Go benchmarks under the name every other command shows (see `identities`).
    Migration::Code(name_go_figures_as_everywhere),
];

/// Renames stored Go figures from the name as Go printed it (`Write-2`) to the name `parse`,
/// `compare` and new runs use (`Write`), run by run, and lists the benchmarks afresh.
fn name_go_figures_as_everywhere(conn: &mut dyn Connection) -> Result<()> {
    let rows = conn.query(
        "SELECT DISTINCT f.run_id, f.bench FROM figures f JOIN runs r ON r.id = f.run_id \
         WHERE r.format = 'go' ORDER BY f.run_id",
        &[],
    )?;
    let mut runs: Vec<(i64, Vec<BenchName>)> = Vec::new();
    for row in rows {
        let (Some(run), Value::Text(Some(bench))) = (row[0].as_i64(), &row[1]) else {
            continue;
        };
        let name = BenchName::parse_go(bench);
        match runs.last_mut() {
            Some((id, names)) if *id == run => names.push(name),
            _ => runs.push((run, vec![name])),
        }
    }
    for (run, names) in &runs {
        let renamed = crate::model::identities(&names.iter().collect::<Vec<_>>());
        for (name, new) in names.iter().zip(renamed) {
            if new != name.full_name {
                conn.execute(
                    "UPDATE figures SET bench = $1 WHERE run_id = $2 AND bench = $3",
                    &[
                        Value::text(new),
                        Value::Int(Some(*run)),
                        Value::text(name.full_name.clone()),
                    ],
                )?;
            }
        }
    }
    conn.batch(concat!("DELETE FROM benches;", list_benches!()))
}
