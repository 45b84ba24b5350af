//! latkit's own JSON (`--format json`): its runs come back as they were written, after the same
//! checks every other input gets.

use super::json_split::{Kind, Layout, join_piece, part_refused, split_rows};
use super::{Input, InputFormat, Named, validate};
use crate::error::{Error, Result};
use crate::model::{Benchmark, JSON_SCHEMA, MetricKind, Note, Run, vocab};
use std::io::BufRead;

pub struct LatkitJson;

impl InputFormat for LatkitJson {
    fn name(&self) -> &'static str {
        "latkit"
    }

    fn describe(&self) -> &'static str {
        "latkit's own JSON, `latkit parse --format json`"
    }

    fn detect(&self, head: &str) -> bool {
        head.trim_start().starts_with('{') && head.contains("\"latkit.result.")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        read_latkit_json(input.path, reader)
    }
}

/// What a document is, in errors.
const EXPECTED: &str = "a latkit JSON result";

/// A run's benchmarks (a million in a large one) come in pieces, parsed on every core as the
/// document streams; the report's tables and the version that wrote it are passed over.
const LAYOUT: Layout = Layout {
    rows: "runs",
    keep: &["schema", "notes"],
    streamed: &["benchmarks"],
    expected: EXPECTED,
};

/// A part of the document, parsed.
enum Parsed {
    Benchmarks(Vec<Benchmark>),
    /// A run, its benchmarks empty: they came before it in pieces.
    Run(Box<Run>),
}

/// latkit's own JSON: its runs come back as they were written (summaries are derived again),
/// after the same checks every other input gets. Read as it streams, into runs directly: a
/// document of a million benchmarks never becomes a tree of JSON values first.
fn read_latkit_json(path: &str, reader: &mut dyn BufRead) -> Result<Input> {
    let (mut schema, mut notes) = (None, Vec::new());
    let (mut runs, mut benchmarks) = (Vec::new(), Vec::new());
    split_rows(
        path,
        reader,
        LAYOUT,
        |line, key, value| {
            let refused = |e| part_refused(path, line, EXPECTED, &e);
            match key {
                "notes" => notes = serde_json::from_slice(value).map_err(refused)?,
                "schema" => {
                    let named: String = serde_json::from_slice(value).map_err(refused)?;
                    // Named before runs of another shape: it is the schema that is refused.
                    if let Some(refused) = unknown_schema(path, &named) {
                        return Err(refused);
                    }
                    schema = Some(named);
                }
                // The split hands over only the fields `LAYOUT` keeps.
                _ => {}
            }
            Ok(())
        },
        |line, kind, bytes| {
            let refused = |e| part_refused(path, line, EXPECTED, &e);
            Ok(match kind {
                Kind::Row => Parsed::Run(serde_json::from_slice(bytes).map_err(refused)?),
                Kind::Piece(_) => {
                    Parsed::Benchmarks(serde_json::from_slice(bytes).map_err(refused)?)
                }
            })
        },
        |parsed| match parsed {
            Parsed::Benchmarks(piece) => join_piece(&mut benchmarks, piece),
            Parsed::Run(mut run) => {
                run.benchmarks = std::mem::take(&mut benchmarks);
                runs.push(*run);
            }
        },
    )?;
    let Some(schema) = schema else {
        return Err(Error::Input(format!(
            "{path}: not a latkit JSON result: no `schema`"
        )));
    };
    if let Some(refused) = unknown_schema(path, &schema) {
        return Err(refused);
    }
    let v1 = schema == SCHEMA_V1;
    for run in &mut runs {
        if v1 {
            migrate_v1(run);
        }
        validate::run(run).map_err(|e| Error::Input(format!("{path}: {e}")))?;
        run.infer_missing_peer_metrics();
    }
    if v1 {
        notes.push(Note::info(format!(
            "{path}: a {SCHEMA_V1} document, read as {JSON_SCHEMA}: timer per-interval \
             figures are series again; it has no tool's own overall summary, so timer \
             minimum, average and maximum come from the distribution"
        )));
    }
    Ok(Input {
        runs,
        notes,
        malformed: 0,
    })
}

/// The refusal of a schema this latkit does not read.
fn unknown_schema(path: &str, schema: &str) -> Option<Error> {
    (schema != JSON_SCHEMA && schema != SCHEMA_V1).then(|| {
        Error::Input(format!(
            "{path}: schema `{schema}` is not `{JSON_SCHEMA}` (or `{SCHEMA_V1}`), which this latkit reads"
        ))
    })
}

/// The first schema, which stored a timer's per-interval figures as repetitions.
const SCHEMA_V1: &str = "latkit.result.v1";

/// A v1 run as v2 has it: metrics with a timer series' name, in a timer run, are series (v1
/// had no `kind`, so they read as repetitions, one "repetition" per interval).
fn migrate_v1(run: &mut Run) {
    if run.timer.is_none() {
        return;
    }
    const SERIES: [&str; 5] = [
        vocab::INTERVAL_MIN,
        vocab::INTERVAL_AVG,
        vocab::INTERVAL_MAX,
        vocab::OVERRUNS,
        vocab::MODE_SWITCHES,
    ];
    for metric in run
        .benchmarks
        .iter_mut()
        .flat_map(|b| b.metrics.iter_mut())
        .filter(|m| SERIES.contains(&m.name.as_str()))
    {
        metric.kind = MetricKind::Series;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match read_latkit_json("doc.json", &mut text.as_bytes()) {
            Ok(_) => panic!("read: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_run_of_many_benchmarks_comes_back_whole_and_errors_name_their_line() {
        use crate::model::{BenchName, Environment, RunBuilder, Source, SourceKind, new_run};
        let mut builder = RunBuilder::default();
        for i in 0..3000 {
            let bench = builder.benchmark(&format!("bench_{i}"), None, BenchName::plain);
            for r in 0..5 {
                builder.record(bench, "time", "ns", i as f64 + r as f64 / 8.0);
            }
        }
        let source = Source {
            kind: SourceKind::File,
            format: "go".into(),
            path: Some("x.txt".into()),
            command: Vec::new(),
        };
        let run = new_run(source, Environment::default(), Vec::new(), builder);
        let doc = serde_json::json!({"schema": JSON_SCHEMA, "runs": [run, run], "notes": []});
        let text = serde_json::to_string_pretty(&doc).unwrap();
        assert!(text.len() > 8 * (64 << 10), "several pieces a run");
        let input = read_latkit_json("doc.json", &mut text.as_bytes()).unwrap();
        let back = serde_json::to_value(&input.runs).unwrap();
        assert_eq!(back, doc["runs"]);
        // A benchmark deep in the second run's pieces, spoilt: the file's own line.
        let at = text.rfind("\"bench_2999\"").unwrap();
        let spoilt = format!("{}\"bench_2999\": 1{}", &text[..at], &text[at + 12..]);
        let line = spoilt[..at].lines().count();
        let err = refusal(&spoilt);
        assert!(
            err.starts_with(&format!("doc.json:{line}: expected")),
            "{err}"
        );
    }

    #[test]
    fn a_schema_named_first_is_refused_before_runs_of_another_shape() {
        let newer = r#"{"schema": "latkit.result.v9", "runs": [{"shape": "new"}], "notes": []}"#;
        let err = refusal(newer);
        assert!(
            err.contains("schema `latkit.result.v9` is not `latkit.result.v2`"),
            "{err}"
        );
        let unnamed = r#"{"runs": []}"#;
        let err = refusal(unnamed);
        assert!(err.contains("no `schema`"), "{err}");
    }
}
