//! Fuzzing every reader through the whole pipeline: real outputs (the seed vectors), mutated
//! the way a fuzzer mutates them — bytes flipped, digits inserted, numbers replaced by huge,
//! negative or non-finite ones, lines repeated or cut — are read, analysed and rendered in
//! every format. Nothing may panic. `PROPTEST_CASES` scales the run (CI sets it).

mod common;

use latkit::analyze::{EnrichOptions, build_report};
use latkit::ingest::read_path;
use latkit::report::FORMATS;
use proptest::prelude::*;
use std::io::Write;

const SEEDS: [&str; 16] = [
    "services/cargo-criterion-1.1.0.jsonl",
    "services/pytest-benchmark.json",
    "vectors/hyperfine-1.15.json",
    "services/viiper.bmf.json",
    "services/viiper.gab.json",
    "services/libtest-bench.txt",
    "vectors/gbench-1.7.1.json",
    "gbench/replay-6reps.json",
    "gbench/replay-6reps.console.txt",
    "vectors/viiper-count3.gobench.txt",
    "vectors/xenomai-latency-h.txt",
    "vectors/cyclictest-h200.txt",
    "vectors/cyclictest-h200.json",
    "vectors/rootstream-bench.txt",
    "variants.gobench.txt",
    "stream.gobench.txt",
];

/// Numbers a fuzzer likes: the edges of every integer type, huge exponents, non-finite words.
const NASTY: [&str; 12] = [
    "18446744073709551615",
    "4294967295",
    "9223372036854775808",
    "-1",
    "0",
    "1e999",
    "-1e999",
    "NaN",
    "inf",
    "1e-400",
    "99999999999",
    "",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, &'static str),
    ReplaceNumber(usize, &'static str),
    RepeatLine(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), proptest::sample::select(&NASTY[..]))
            .prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), proptest::sample::select(&NASTY[..]))
            .prop_map(|(at, s)| Mutation::ReplaceNumber(at, s)),
        (any::<usize>(), 1usize..2000).prop_map(|(at, n)| Mutation::RepeatLine(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Largest mutated input.
const MAX_MUTATED: usize = 8 << 20;

fn apply(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for m in mutations {
        if bytes.is_empty() {
            break;
        }
        match *m {
            Mutation::Flip(at, b) => {
                let i = at % bytes.len();
                bytes[i] ^= b;
            }
            Mutation::Insert(at, s) => {
                let i = at % bytes.len();
                bytes.splice(i..i, s.bytes());
            }
            Mutation::ReplaceNumber(at, s) => {
                // The run of digits at or after `at`.
                let start = (at % bytes.len()..bytes.len())
                    .find(|&i| bytes[i].is_ascii_digit())
                    .unwrap_or(bytes.len());
                let end = (start..bytes.len())
                    .find(|&i| !bytes[i].is_ascii_digit() && bytes[i] != b'.')
                    .unwrap_or(bytes.len());
                bytes.splice(start..end, s.bytes());
            }
            Mutation::RepeatLine(at, n) => {
                let i = at % bytes.len();
                let start = bytes[..i]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
                let line = bytes[start..end].to_vec();
                let at = end;
                // Repeats compound (a one-line JSON file is its own line), so the input is
                // capped where it stops finding new paths and starts costing gigabytes.
                let room = MAX_MUTATED.saturating_sub(bytes.len());
                let repeated: Vec<u8> = line
                    .iter()
                    .copied()
                    .cycle()
                    .take((line.len() * n).min(room))
                    .collect();
                bytes.splice(at..at, repeated);
            }
            Mutation::Truncate(at) => bytes.truncate(at % bytes.len()),
        }
    }
    bytes
}

/// Reads `bytes` as a file and renders whatever it yields in every format.
fn read_and_render(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let path = file.path().to_str().unwrap().to_string();
    let Ok(input) = read_path(&path, None) else {
        return Ok(());
    };
    let Ok(report) = build_report(input.runs, input.notes, &EnrichOptions::default()) else {
        return Ok(());
    };
    for format in FORMATS {
        let mut out = Vec::new();
        let _ = (format.reporter)().render(&report, &mut out);
        prop_assert!(out.len() < 64 << 20, "{}: {} bytes", format.name, out.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_outputs_never_panic(
        seed in 0..SEEDS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seed = std::fs::read(common::fixture(SEEDS[seed])).unwrap();
        read_and_render(&apply(&seed, &mutations))?;
    }

    #[test]
    fn mutated_latkit_json_never_panics(
        seed in 0..SEEDS.len(),
        values in proptest::collection::vec(prop_oneof![Just(f64::MAX), Just(-1.0), Just(0.0), any::<f64>()], 0..4),
        counts in proptest::collection::vec(any::<u64>(), 0..4),
        which in any::<usize>(),
    ) {
        // latkit's own JSON of a real output, with a metric's values and a histogram's counts
        // replaced: empty arrays, huge, negative and zero numbers.
        let text = common::parse_as(&common::fixture(SEEDS[seed]), "json");
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let benches = doc["runs"][0]["benchmarks"].as_array_mut().unwrap();
        let n = benches.len();
        let bench = &mut benches[which % n];
        if let Some(m) = bench["metrics"].as_array_mut().and_then(|m| m.first_mut()) {
            m["values"] = serde_json::json!(values.iter().filter(|v| v.is_finite()).collect::<Vec<_>>());
        }
        if let Some(h) = bench["histograms"].as_array_mut().and_then(|h| h.first_mut()) {
            h["counts"] = serde_json::json!(counts);
        }
        read_and_render(doc.to_string().as_bytes())?;
    }
}
