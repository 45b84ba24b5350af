//! Property tests: no input makes the Go parser panic, and well-formed lines read back exactly.

use latkit::ingest::go::{GoParser, LineKind};
use proptest::prelude::*;

fn feed_all(lines: &[Vec<u8>]) -> latkit::ingest::Parsed {
    let mut parser = GoParser::new("prop");
    for line in lines {
        parser.feed(Some(line));
    }
    parser.finish()
}

/// Lines that stress the parser: random bytes, and near-misses of real result lines.
fn hostile_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..120),
        "Benchmark[A-Za-z0-9_/()=\\-]{0,20}( +[0-9a-z.eE+\\-]{0,12}){0,7}"
            .prop_map(String::into_bytes),
        "(Unit|goos:|pkg:|--- FAIL|FAIL|ok ) ?[ -~]{0,40}".prop_map(String::into_bytes),
    ]
}

proptest! {
    #[test]
    fn never_panics(lines in proptest::collection::vec(hostile_line(), 0..40)) {
        let out = feed_all(&lines);
        for bench in out.builder.finish() {
            prop_assert_eq!(bench.repetitions(), bench.iterations.len());
            for metric in &bench.metrics {
                prop_assert!(metric.values.iter().all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn well_formed_results_read_back_exactly(
        results in proptest::collection::vec(
            ("[A-Z][A-Za-z0-9_]{0,8}(/[0-9A-Za-z_=\\-]{1,8}){0,2}", 1u32..64, 1u64..1_000_000_000, 0u32..10_000_000, 0u8..4),
            1..30,
        )
    ) {
        let mut parser = GoParser::new("prop");
        for (name, procs, iters, value, decimals) in &results {
            let shown = *value as f64 / 10f64.powi(i32::from(*decimals));
            let line = format!("Benchmark{name}-{procs} \t {iters}\t {shown} ns/op\t {value} B/op");
            let kind = parser.feed(Some(line.as_bytes()));
            prop_assert!(matches!(kind, LineKind::Result { .. }), "{line}");
        }
        let benches = parser.finish().builder.finish();
        let total: usize = benches.iter().map(|b| b.iterations.len()).sum();
        prop_assert_eq!(total, results.len());
        for (name, procs, iters, value, decimals) in &results {
            let full = format!("Benchmark{name}-{procs}");
            let bench = benches.iter().find(|b| b.name.full_name == full).unwrap();
            prop_assert!(bench.iterations.contains(iters));
            let shown = *value as f64 / 10f64.powi(i32::from(*decimals));
            prop_assert!(bench.metrics[0].values.contains(&shown.to_string().parse::<f64>().unwrap()));
            prop_assert!(bench.metrics[1].values.contains(&(*value as f64)));
        }
    }
}

/// Lines shaped like Xenomai's and cyclictest's, with random fields.
fn timer_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "(RTD|RTS|HSD|HSS|RTT|RTH|---)\\|[ -~|]{0,80}",
        "== (Sampling period|Test mode): [ -~]{0,20}",
        "T: ?[0-9]{0,3} \\( ?[0-9]{0,5}\\) P:[0-9x]{0,3} I:[0-9]{0,5} C: +[0-9]{0,6} Min: +[0-9.-]{0,6} Act: +[0-9]{0,4} Avg: +[0-9.]{0,5} Max: +[0-9]{0,8}",
        "# (Histogram|Total|Min Latencies|Max Latencies|Avg Latencies|Histogram Overflows|Thread 0)(: [0-9 x]{0,30})?",
        "[0-9]{1,6}( [0-9]{1,6}){0,4}",
        // Bucket numbers, counts and thread columns up to and past every integer type.
        "HSD\\| +(min|avg|max)\\| +[0-9]{1,21} - +[0-9]{1,21} \\| +[0-9]{1,21}",
        "[0-9]{1,21}( [0-9]{1,21}){0,3}",
        (1usize..3000).prop_map(|columns| format!("000012{}", " 000001".repeat(columns))),
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn timer_readers_never_panic(lines in proptest::collection::vec(timer_line(), 0..60)) {
        let text = lines.join("\n");
        let x = latkit::ingest::xenomai::parse("prop", text.lines());
        prop_assert!(x.malformed as usize <= lines.len());
        for b in x.builder.finish() {
            for h in &b.histograms {
                prop_assert!(h.counts.len() <= latkit::ingest::timer_common::MAX_BUCKETS);
            }
        }
        let c = latkit::ingest::cyclictest::parse_text("prop", text.lines());
        prop_assert!(c.malformed as usize <= lines.len() * 8);
        let threads = c.builder.finish();
        prop_assert!(threads.len() <= latkit::ingest::cyclictest::MAX_THREADS);
        if let Ok(doc) = serde_json::from_str(&text) {
            let _ = latkit::ingest::cyclictest::parse_json("prop", &doc);
        }
    }
}

proptest! {
    #[test]
    fn bench_lines_and_quantities_never_panic(
        lines in proptest::collection::vec(
            prop_oneof![
                "BENCH [a-z_]{0,8}:?( [a-z]{0,6}=?[0-9.eE+-]{0,8}(us|ms|MB/s|MiB/s|x)?( MB/s)?){0,5}",
                any::<String>(),
            ],
            0..30,
        ),
        quantity in "[ 0-9.eE+-]{0,10}(ns|us|µs|ms|s|B|KiB|MB|MiB/s|MB/s|%|[a-z]{0,4})?",
    ) {
        let mut parser = latkit::ingest::bench::BenchParser::new("prop");
        for line in &lines {
            parser.feed(Some(line));
        }
        let out = parser.finish();
        prop_assert!(out.malformed as usize <= lines.len());
        for bench in out.builder.finish() {
            for m in &bench.metrics {
                prop_assert!(m.values.iter().all(|v| v.is_finite()));
            }
        }
        if let Some((value, _)) = latkit::model::parse_quantity(&quantity) {
            prop_assert!(value.is_finite());
        }
    }

    #[test]
    fn targets_files_never_panic(text in "(\\[\\[target\\]\\]|\\[budget\\]|\\[\\[budget.stage\\]\\]|bench = \"[a-z*]{0,5}\"|metric = \"[a-z0-9.]{0,5}\"|(below|above|total) = \"[0-9. a-zA-Z/]{0,8}\"|name = \"x\"|[ -~]{0,20})(\n(\\[\\[target\\]\\]|bench = \"[a-z*]{0,5}\"|metric = \"avg\"|(below|above|total) = \"[0-9. a-zA-Z/]{0,8}\"|[ -~]{0,20})){0,12}") {
        let _ = latkit::spec::targets::Targets::parse("prop.toml", &text);
    }
}

/// A google/benchmark JSON row with any of its fields missing or hostile.
fn gbench_row() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        Just("1e308".to_string()),
        Just("-1".to_string()),
        Just("18446744073709551616".to_string()),
        Just("\"NaN\"".to_string()),
        Just("null".to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| v.to_string()),
    ];
    (
        "[A-Za-z_/:0-9]{0,12}",
        prop_oneof![Just("iteration"), Just("aggregate"), Just("x")],
        prop_oneof![Just("mean"), Just("median"), Just("cv"), Just("BigO"), Just("RMS"), Just("")],
        prop_oneof![Just("ns"), Just("us"), Just("ms"), Just("s"), Just("parsec")],
        proptest::collection::vec(number, 5),
        any::<bool>(),
    )
        .prop_map(|(name, run_type, aggregate, unit, n, error)| {
            format!(
                "{{\"name\": \"{name}\", \"run_name\": \"{name}\", \"run_type\": \"{run_type}\", \"aggregate_name\": \"{aggregate}\", \"iterations\": {}, \"real_time\": {}, \"cpu_time\": {}, \"time_unit\": \"{unit}\", \"items_per_second\": {}, \"rms\": {}, \"error_occurred\": {error}}}",
                n[0], n[1], n[2], n[3], n[4]
            )
        })
}

proptest! {
    #[test]
    fn gbench_json_never_panics_and_keeps_only_finite_values(
        rows in proptest::collection::vec(gbench_row(), 0..12),
    ) {
        let doc = format!("{{\"context\": {{\"num_cpus\": 2}}, \"benchmarks\": [{}]}}", rows.join(",\n"));
        let source = latkit::model::Source { kind: latkit::model::SourceKind::File, format: "gbench-json".into(), path: None, command: Vec::new() };
        if let Ok(input) = latkit::ingest::gbench::json::read_from("prop", &mut doc.as_bytes(), source) {
            for bench in &input.runs[0].benchmarks {
                for m in &bench.metrics {
                    prop_assert!(m.values.iter().all(|v| v.is_finite()));
                }
            }
        }
    }

    #[test]
    fn gbench_console_never_panics(
        lines in proptest::collection::vec(
            prop_oneof![
                "BM_[a-z]{0,6}(_mean|_cv|_BigO|_RMS|/[0-9]{1,3})? +[0-9.eE+-]{0,8} (ns|us|%|N|x) +[0-9.eE+-]{0,8} (ns|us|%|N|x)( +[0-9-]{0,20})?( [a-z_]{1,8}=[0-9.]{0,6}[kMGi%]{0,2}(/s)?){0,3}",
                "BM_[a-z]{0,6} +(ERROR OCCURRED|SKIPPED): '[ -~]{0,10}'",
                "Benchmark +Time +CPU +Iterations( [a-z_]{1,8}){0,3}",
                "(Run on \\(|  L[0-9] |Load Average: )[ -~]{0,20}",
                any::<String>(),
            ],
            0..30,
        ),
    ) {
        let mut parser = latkit::ingest::gbench::console::ConsoleParser::new("prop");
        for line in &lines {
            parser.feed(Some(line));
        }
        let source = latkit::model::Source { kind: latkit::model::SourceKind::File, format: "gbench".into(), path: None, command: Vec::new() };
        let input = parser.into_input(source);
        prop_assert!(input.malformed as usize <= lines.len());
        for bench in &input.runs[0].benchmarks {
            for m in &bench.metrics {
                prop_assert!(m.values.iter().all(|v| v.is_finite()));
            }
        }
    }
}
