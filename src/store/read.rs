//! Reading the store: runs, one run whole, its environment, the benchmarks it knows and each
//! one's series of figures.

use super::*;

impl Store {
    /// Stored runs, newest first.
    pub fn runs(&mut self, query: &RunQuery) -> Result<Vec<StoredRun>> {
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE 1 = 1");
        let mut params = Vec::new();
        if let Some(branch) = &query.branch {
            params.push(Value::text(branch.clone()));
            sql.push_str(&format!(" AND git_branch = ${}", params.len()));
        }
        if let Some(tag) = &query.tag {
            params.push(Value::text(tag.clone()));
            sql.push_str(&format!(" AND tag = ${}", params.len()));
        }
        sql.push_str(" ORDER BY id DESC");
        if let Some(last) = query.last {
            sql.push_str(&format!(" LIMIT {}", last.min(i64::MAX as usize)));
        }
        let rows = self.conn.query(&sql, &params)?;
        Ok(rows.iter().map(|r| stored_run(r)).collect())
    }

    /// The newest `limit` runs with figures of any of `benches` (full names), newest first,
    /// found from the figures index without decoding a run.
    pub fn runs_with_benches(&mut self, benches: &[&str], limit: usize) -> Result<Vec<StoredRun>> {
        let mut ids = std::collections::BTreeSet::new();
        // The IN list in chunks, within every backend's parameter limit.
        for chunk in benches.chunks(PARAMETERS_PER_INSERT) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let params: Vec<Value> = chunk.iter().map(|b| Value::text(*b)).collect();
            let rows = self.conn.query(
                &format!(
                    "SELECT DISTINCT run_id FROM figures WHERE bench IN ({})",
                    marks.join(", ")
                ),
                &params,
            )?;
            ids.extend(rows.iter().filter_map(|r| r[0].as_i64()));
        }
        let mut runs = Vec::new();
        for id in ids.into_iter().rev().take(limit) {
            let rows = self.conn.query(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"),
                &[Value::Int(Some(id))],
            )?;
            runs.extend(rows.iter().map(|r| stored_run(r)));
        }
        Ok(runs)
    }

    /// Runs whose commit starts with `prefix`, newest first.
    pub fn runs_at_commit(&mut self, prefix: &str) -> Result<Vec<StoredRun>> {
        let pattern = format!("{}%", prefix.replace(['%', '_'], ""));
        let rows = self.conn.query(
            &format!("SELECT {RUN_COLUMNS} FROM runs WHERE git_commit LIKE $1 ORDER BY id DESC"),
            &[Value::text(pattern)],
        )?;
        Ok(rows.iter().map(|r| stored_run(r)).collect())
    }

    /// The run stored as `id`, exactly as it was stored, with its notes.
    pub fn load(&mut self, id: i64) -> Result<Option<(StoredRun, Run, Vec<Note>)>> {
        let rows = self.conn.query(
            &format!("SELECT {RUN_COLUMNS}, document, notes FROM runs WHERE id = $1"),
            &[Value::Int(Some(id))],
        )?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let place = self.conn.describe();
        let decode_err = |what: &str, e: serde_json::Error| {
            Error::Input(format!(
                "{place}: stored run {id}: cannot decode its {what}: {e}"
            ))
        };
        let mut run: Run = serde_json::from_str(row[8].as_str().unwrap_or_default())
            .map_err(|e| decode_err("run", e))?;
        run.infer_missing_peer_metrics();
        let notes: Vec<Note> = serde_json::from_str(row[9].as_str().unwrap_or("[]"))
            .map_err(|e| decode_err("notes", e))?;
        Ok(Some((stored_run(row), run, notes)))
    }

    /// The environment the run `id` was stored with, read without decoding its benchmarks;
    /// `None` when there is no such run or its document has none.
    pub fn environment(&mut self, id: i64) -> Result<Option<crate::model::Environment>> {
        #[derive(serde::Deserialize)]
        struct Only {
            environment: crate::model::Environment,
        }
        let rows = self.conn.query(
            "SELECT document FROM runs WHERE id = $1",
            &[Value::Int(Some(id))],
        )?;
        Ok(rows
            .first()
            .and_then(|row| serde_json::from_str::<Only>(row[0].as_str()?).ok())
            .map(|only| only.environment))
    }

    /// Deletes the run `id` and its figures; false when there was none.
    pub fn remove(&mut self, id: i64) -> Result<bool> {
        self.transaction(|conn| {
            conn.execute(
                "DELETE FROM figures WHERE run_id = $1",
                &[Value::Int(Some(id))],
            )?;
            let removed =
                conn.execute("DELETE FROM runs WHERE id = $1", &[Value::Int(Some(id))])?;
            conn.batch(
                "DELETE FROM benches WHERE NOT EXISTS \
                 (SELECT 1 FROM figures f WHERE f.bench = benches.bench)",
            )?;
            Ok(removed > 0)
        })
    }

    /// Every benchmark with stored figures, by name, with the figure `history` follows by
    /// default: the first (metric, statistic) of its newest stored run.
    pub fn benches(&mut self) -> Result<Vec<(String, String, String)>> {
        let rows = self.conn.query(
            "SELECT bench, metric, statistic FROM benches ORDER BY bench",
            &[],
        )?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Ok(rows
            .iter()
            .map(|r| (text(&r[0]), text(&r[1]), text(&r[2])))
            .collect())
    }

    /// Every figure stored, as (metric, statistic), `""` the statistic of repetitions.
    pub fn figures(&mut self) -> Result<Vec<(String, String)>> {
        let rows = self.conn.query(
            "SELECT DISTINCT metric, statistic FROM figures ORDER BY metric, statistic",
            &[],
        )?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Ok(rows.iter().map(|r| (text(&r[0]), text(&r[1]))).collect())
    }

    /// The figures `bench` has stored, as (metric, statistic), `""` the statistic of
    /// repetitions.
    pub fn bench_figures(&mut self, bench: &str) -> Result<Vec<(String, String)>> {
        let rows = self.conn.query(
            "SELECT DISTINCT metric, statistic FROM figures WHERE bench = $1 \
             ORDER BY metric, statistic",
            &[Value::text(bench)],
        )?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Ok(rows.iter().map(|r| (text(&r[0]), text(&r[1]))).collect())
    }

    /// The figures of `bench` for `metric` (and `statistic`, `""` for repetitions), oldest
    /// first, from the runs `span` takes.
    pub fn series(
        &mut self,
        bench: &str,
        metric: Option<&str>,
        statistic: &str,
        span: &Span,
    ) -> Result<Vec<Point>> {
        let mut params = vec![Value::text(bench), Value::text(statistic)];
        let mut sql = String::from(
            "SELECT r.id, r.stored_at, r.git_commit, r.git_branch, r.git_dirty, r.tag, \
             r.format, r.benchmarks, f.metric, f.source_unit, f.n, f.value, f.ci_low, \
             f.ci_high, f.repetitions FROM figures f JOIN runs r ON r.id = f.run_id \
             WHERE f.bench = $1 AND f.statistic = $2",
        );
        if let Some(metric) = metric {
            params.push(Value::text(metric));
            sql.push_str(&format!(" AND f.metric = ${}", params.len()));
        }
        if let Some(branch) = span.branch {
            params.push(Value::text(branch));
            sql.push_str(&format!(" AND r.git_branch = ${}", params.len()));
        }
        if let Some(after) = span.after {
            params.push(Value::Int(Some(after)));
            sql.push_str(&format!(" AND f.run_id > ${}", params.len()));
        }
        // run_id, not r.id: the index on figures then yields the rows in order.
        sql.push_str(" ORDER BY f.run_id DESC");
        if let Some(last) = span.last {
            sql.push_str(&format!(" LIMIT {}", last.min(i64::MAX as usize)));
        }
        let rows = self.conn.query(&sql, &params)?;
        let mut points: Vec<Point> = rows
            .iter()
            .map(|r| Point {
                run: stored_run(&r[..8]),
                figure: Figure {
                    bench: bench.to_string(),
                    metric: r[8].as_str().unwrap_or_default().to_string(),
                    statistic: statistic.to_string(),
                    source_unit: r[9].as_str().unwrap_or_default().to_string(),
                    n: r[10].as_i64().unwrap_or_default().max(0) as u64,
                    value: r[11].as_f64().unwrap_or(f64::NAN),
                    ci_low: r[12].as_f64(),
                    ci_high: r[13].as_f64(),
                    repetitions: serde_json::from_str(r[14].as_str().unwrap_or("[]"))
                        .unwrap_or_default(),
                },
            })
            .collect();
        points.reverse();
        Ok(points)
    }
}
