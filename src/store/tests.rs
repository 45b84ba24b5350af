//! The store on a SQLite file: a first-version store migrated on opening, and what a build
//! without the PostgreSQL driver says.

use super::*;

/// A figure of `bench` as `history` keeps it.
fn figure(bench: &str, metric: &str) -> Figure {
    Figure {
        bench: bench.into(),
        metric: metric.into(),
        statistic: String::new(),
        source_unit: metric.into(),
        n: 1,
        value: 1.0,
        ci_low: None,
        ci_high: None,
        repetitions: vec![1.0],
    }
}

/// A store at `location` as the first schema left it: two runs, the newer reporting B/op first.
fn first_version_store(location: &str) {
    let mut conn = sqlite::Sqlite::open(location).unwrap();
    let Migration::Sql(first) = MIGRATIONS[0] else {
        unreachable!("the first schema is SQL")
    };
    conn.batch(&first.replace("{serial}", conn.serial()))
        .unwrap();
    conn.batch(
        "CREATE TABLE latkit_schema (version BIGINT NOT NULL);
         INSERT INTO latkit_schema VALUES (1);
         INSERT INTO runs (id, stored_at, format, benchmarks, document, notes)
             VALUES (1, 't', 'go', 2, '{}', '[]'), (2, 't', 'go', 1, '{}', '[]');",
    )
    .unwrap();
    for (run, position, bench, metric) in [
        (1, 0, "A", "ns/op"),
        (1, 1, "B", "ns/op"),
        (2, 0, "A", "B/op"),
        (2, 1, "A", "ns/op"),
    ] {
        conn.execute(
            "INSERT INTO figures (run_id, position, bench, metric, statistic, \
             source_unit, n, value, repetitions) VALUES ($1, $2, $3, $4, '', '', 1, 1, '[]')",
            &[
                Value::Int(Some(run)),
                Value::Int(Some(position)),
                Value::text(bench),
                Value::text(metric),
            ],
        )
        .unwrap();
    }
}

#[test]
fn a_first_version_store_gains_its_benchmark_list_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    let location = path.display().to_string();
    first_version_store(&location);
    let mut store = Store::open(&location).unwrap();
    let pair = |b: &str, m: &str| (b.to_string(), m.to_string(), String::new());
    assert_eq!(
        store.benches().unwrap(),
        vec![pair("A", "B/op"), pair("B", "ns/op")]
    );
    // New runs keep the list and each benchmark's default figure current.
    let run = Run {
        id: "x".into(),
        started: None,
        ended: None,
        latkit_version: "0".into(),
        source: crate::model::Source {
            kind: crate::model::SourceKind::File,
            format: "go".into(),
            path: None,
            command: Vec::new(),
        },
        environment: Default::default(),
        config: Vec::new(),
        benchmarks: Vec::new(),
        timer: None,
        peer_metrics: false,
    };
    store
        .put(
            &run,
            &[],
            &Provenance::default(),
            None,
            &[figure("A", "ns/op"), figure("C", "allocs/op")],
        )
        .unwrap();
    assert_eq!(
        store.benches().unwrap(),
        vec![
            pair("A", "ns/op"),
            pair("B", "ns/op"),
            pair("C", "allocs/op")
        ]
    );
    // Removing the only run of C drops it from the list.
    let newest = store.runs(&RunQuery::default()).unwrap()[0].id;
    store.remove(newest).unwrap();
    let names: Vec<String> = store.benches().unwrap().into_iter().map(|b| b.0).collect();
    assert_eq!(names, ["A", "B"]);
}

/// `cargo test --no-default-features --lib`: a build without the driver names the
/// location (without its password) and the way to a build that has one.
#[cfg(not(feature = "postgres"))]
#[test]
fn without_the_driver_a_postgres_store_is_refused_by_name() {
    let refused = Store::open("postgres://ci:s3cret@db/bench").err().unwrap();
    assert_eq!(refused.exit_code(), 5);
    let said = refused.to_string();
    assert!(said.starts_with("postgres://"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
    assert!(said.contains("without PostgreSQL support"), "{said}");
}
