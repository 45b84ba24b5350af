//! Property tests for the readers of other harnesses and services (hyperfine, libtest,
//! pytest-benchmark, criterion, Bencher Metric Format, github-action-benchmark): well-formed
//! documents read back value for value, and hostile numbers (huge, negative, zero, empty
//! arrays, mismatched lengths) give a result or an error, never a panic or a non-finite value.

use latkit::ingest::format::{BUILTIN, by_name};
use latkit::ingest::{Input, Named};
use latkit::model::{Benchmark, Dimension};
use proptest::prelude::*;
use serde_json::{Value, json};

fn read(format: &str, bytes: &[u8]) -> latkit::error::Result<Input> {
    let format = by_name(BUILTIN, format).expect("a registered format");
    format.read(&Named { path: "prop" }, &mut std::io::Cursor::new(bytes))
}

fn read_json(format: &str, doc: &Value) -> latkit::error::Result<Input> {
    read(format, doc.to_string().as_bytes())
}

fn bench<'a>(input: &'a Input, name: &str) -> &'a Benchmark {
    input.runs[0]
        .benchmarks
        .iter()
        .find(|b| b.name.full_name == name)
        .unwrap_or_else(|| panic!("no benchmark {name}"))
}

fn values<'a>(bench: &'a Benchmark, metric: &str) -> &'a [f64] {
    &bench
        .metrics
        .iter()
        .find(|m| m.name == metric)
        .unwrap_or_else(|| panic!("no metric {metric}"))
        .values
}

/// How many values of `metric` the run holds, over all benchmarks.
fn recorded(input: &Input, metric: &str) -> usize {
    input.runs[0]
        .benchmarks
        .iter()
        .flat_map(|b| &b.metrics)
        .filter(|m| m.name == metric)
        .map(|m| m.values.len())
        .sum()
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Whatever a reader returned is finite, and times are not negative.
fn sane(input: &Input) -> Result<(), TestCaseError> {
    for b in &input.runs[0].benchmarks {
        for m in &b.metrics {
            prop_assert!(
                m.values.iter().all(|v| v.is_finite()),
                "{}: {:?}",
                m.name,
                m.values
            );
            if m.unit.dimension == Dimension::Time {
                prop_assert!(
                    m.values.iter().all(|v| *v >= 0.0),
                    "{}: {:?}",
                    m.name,
                    m.values
                );
            }
        }
    }
    Ok(())
}

/// Numbers that break naive readers, and ordinary ones.
fn hostile_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(f64::MAX)),
        Just(json!(1e300)),
        Just(json!(-1.0)),
        Just(json!(0.0)),
        Just(json!(5e-324)),
        Just(json!(u64::MAX)),
        Just(json!(null)),
        Just(json!("12")),
        (0.0..1e6f64).prop_map(|v| json!(v)),
    ]
}

/// Benchmark names: unicode, slashes, quotes and spaces included.
fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _/:.\"é-]{1,16}"
}

/// Distinct names, so each generated benchmark can be found again.
fn names(max: usize) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(name(), 1..max).prop_map(|s| s.into_iter().collect())
}

proptest! {
    #[test]
    fn hyperfine_runs_read_back(
        commands in names(6),
        times in proptest::collection::vec(proptest::collection::vec(0.0..100.0f64, 1..20), 6),
    ) {
        let results: Vec<Value> = commands.iter().zip(&times).map(|(c, t)| json!({
            "command": c, "mean": t[0], "user": 0.001, "system": 0.002, "times": t,
            "exit_codes": vec![0; t.len()],
        })).collect();
        // A command is recorded as latkit records every command line: its secrets redacted
        // (`-ua:b` is curl's user and password, kept as `-ua:***`).
        let shown: Vec<String> = commands.iter().map(|c| latkit::model::redact::line(c)).collect();
        prop_assume!(shown.iter().collect::<std::collections::BTreeSet<_>>().len() == shown.len());
        let input = read_json("hyperfine", &json!({"results": results})).unwrap();
        for (c, t) in shown.iter().zip(&times) {
            let got = values(bench(&input, c), "time");
            prop_assert_eq!(got.len(), t.len());
            prop_assert!(got.iter().zip(t).all(|(g, s)| same(*g, s * 1e9)), "{got:?} vs {t:?}");
        }
    }

    #[test]
    fn hyperfine_hostile_numbers_never_panic(
        figures in proptest::collection::vec((hostile_number(), proptest::collection::vec(hostile_number(), 0..5)), 0..4),
    ) {
        let results: Vec<Value> = figures.iter().map(|(mean, times)| json!({
            "command": "c", "mean": mean, "times": times, "memory_usage_byte": times,
        })).collect();
        if let Ok(input) = read_json("hyperfine", &json!({"results": results})) {
            sane(&input)?;
            // Read means every time kept: none dropped for being out of range.
            prop_assert_eq!(recorded(&input, "time"), figures.iter().map(|(_, t)| t.len()).sum::<usize>());
        }
    }

    #[test]
    fn libtest_lines_read_back(
        results in proptest::collection::vec(("[a-z_:]{1,12}", 0u64..10_000_000_000, 0u64..1_000_000, proptest::option::of(0u32..100_000)), 1..20),
    ) {
        // libtest groups thousands with commas.
        let grouped = |n: u64| {
            let digits = n.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        let mut text = String::from("running 3 tests\n");
        for (name, ns, spread, rate) in &results {
            let rate = rate.map(|r| format!(" = {r} MB/s")).unwrap_or_default();
            text += &format!("test {name} ... bench: {:>12} ns/iter (+/- {}){rate}\n", grouped(*ns), grouped(*spread));
        }
        let input = read("libtest", text.as_bytes()).unwrap();
        for (name, ns, spread, _) in &results {
            let b = bench(&input, name);
            prop_assert!(values(b, "ns/iter").contains(&(*ns as f64)));
            prop_assert!(values(b, "spread").contains(&(*spread as f64)));
        }
    }

    #[test]
    fn libtest_hostile_lines_never_panic(
        lines in proptest::collection::vec(prop_oneof![
            "test [a-z]{0,5} \\.\\.\\. bench: +[0-9,.eE+-]{0,25} ns/iter \\(\\+/- [0-9,.eE-]{0,25}\\)( = [0-9.eE-]{0,12} MB/s)?",
            any::<String>(),
        ], 0..20),
    ) {
        if let Ok(input) = read("libtest", lines.join("\n").as_bytes()) {
            sane(&input)?;
            prop_assert!(input.malformed as usize <= lines.len());
        }
    }

    #[test]
    fn pytest_benchmark_rounds_read_back(
        names in names(6),
        data in proptest::collection::vec(proptest::collection::vec(0.0..10.0f64, 1..30), 6),
        iterations in 1u64..1000,
    ) {
        let benchmarks: Vec<Value> = names.iter().zip(&data).map(|(n, d)| json!({
            "name": n, "fullname": n,
            "stats": {"median": d[0], "ops": 1.0, "iterations": iterations, "rounds": d.len(), "data": d},
        })).collect();
        let doc = json!({"machine_info": {"node": "h", "cpu": {"count": 2}}, "commit_info": {"id": "abc"}, "benchmarks": benchmarks});
        let input = read_json("pytest-benchmark", &doc).unwrap();
        for (n, d) in names.iter().zip(&data) {
            let b = bench(&input, n);
            let got = values(b, "time");
            prop_assert!(got.len() == d.len() && got.iter().zip(d).all(|(g, s)| same(*g, s * 1e9)));
            prop_assert!(b.iterations.iter().all(|i| *i == iterations));
        }
    }

    #[test]
    fn pytest_benchmark_hostile_numbers_never_panic(
        stats in proptest::collection::vec((hostile_number(), hostile_number(), proptest::option::of(proptest::collection::vec(hostile_number(), 0..4))), 0..4),
    ) {
        let benchmarks: Vec<Value> = stats.iter().map(|(median, ops, data)| json!({
            "name": "b", "stats": {"median": median, "ops": ops, "iterations": ops, "data": data},
        })).collect();
        let doc = json!({"machine_info": {}, "commit_info": {}, "benchmarks": benchmarks});
        if let Ok(input) = read_json("pytest-benchmark", &doc) {
            sane(&input)?;
            // A list holding anything but numbers is a shortened one: the median stands in.
            let rounds = stats.iter().map(|(_, _, data)| {
                data.as_ref().filter(|d| !d.is_empty() && d.iter().all(Value::is_number)).map_or(1, Vec::len)
            }).sum::<usize>();
            prop_assert_eq!(recorded(&input, "time"), rounds);
        }
    }

    #[test]
    fn criterion_messages_read_back(
        ids in names(6),
        samples in proptest::collection::vec(proptest::collection::vec((1u64..10_000_000, 0.0..1e9f64), 1..40), 6),
        bytes in proptest::option::of(1u64..1 << 20),
    ) {
        let mut text = String::new();
        for (id, s) in ids.iter().zip(&samples) {
            let (iters, times): (Vec<u64>, Vec<f64>) = s.iter().copied().unzip();
            let throughput: Vec<Value> = bytes.iter().map(|b| json!({"per_iteration": b, "unit": "bytes"})).collect();
            text += &json!({"reason": "benchmark-complete", "id": id, "iteration_count": iters,
                "measured_values": times, "unit": "ns", "throughput": throughput, "change": null}).to_string();
            text += "\n";
            text += &json!({"reason": "group-complete", "group_name": id, "benchmarks": [id]}).to_string();
            text += "\n";
        }
        let input = read("criterion", text.as_bytes()).unwrap();
        for (id, s) in ids.iter().zip(&samples) {
            let b = bench(&input, id);
            let got = values(b, "time");
            prop_assert_eq!(got.len(), s.len());
            for (g, (n, t)) in got.iter().zip(s) {
                prop_assert!(same(*g, t / *n as f64));
            }
            let expected: Vec<u64> = s.iter().map(|(n, _)| *n).collect();
            prop_assert_eq!(&b.iterations, &expected);
            if let Some(per) = bytes {
                let rates = values(b, "throughput");
                for (rate, g) in rates.iter().zip(got.iter().filter(|g| **g > 0.0)) {
                    prop_assert!(same(*rate, per as f64 / (g * 1e-9)));
                }
            }
        }
    }

    #[test]
    fn criterion_hostile_messages_never_panic(
        messages in proptest::collection::vec((proptest::collection::vec(hostile_number(), 0..5), proptest::collection::vec(hostile_number(), 0..5), prop_oneof![Just("ns"), Just("ms"), Just("cycles"), Just("")], hostile_number()), 0..5),
    ) {
        let text: String = messages.iter().map(|(iters, times, unit, per)| {
            json!({"reason": "benchmark-complete", "id": "b", "iteration_count": iters,
                "measured_values": times, "unit": unit,
                "throughput": [{"per_iteration": per, "unit": "elements"}]}).to_string() + "\n"
        }).collect();
        if let Ok(input) = read("criterion", text.as_bytes()) {
            sane(&input)?;
            // Each sample is kept whole (time, iteration count, rate) or not at all.
            for b in &input.runs[0].benchmarks {
                let kept = |name: &str| b.metrics.iter().find(|m| m.name == name).map_or(0, |m| m.values.len());
                let samples = b.iterations.len();
                let per_iteration: usize = b.metrics.iter().filter(|m| m.name != "throughput").map(|m| m.values.len()).sum();
                prop_assert_eq!(per_iteration, samples);
                prop_assert!(kept("throughput") == 0 || kept("throughput") == kept("time"));
            }
        }
    }

    #[test]
    fn bmf_and_gab_read_back(
        names in names(8),
        figures in proptest::collection::vec((0.0..1e12f64, 0.0..1e12f64), 8),
    ) {
        let mut bmf = serde_json::Map::new();
        let mut gab = Vec::new();
        for (n, (latency, rate)) in names.iter().zip(&figures) {
            bmf.insert(n.clone(), json!({"latency": {"value": latency, "lower_value": latency * 0.9, "upper_value": latency * 1.1}, "throughput": {"value": rate}}));
            gab.push(json!({"name": n, "unit": "ns/op", "value": latency, "range": "± 1%"}));
        }
        let from_bmf = read_json("bmf", &Value::Object(bmf)).unwrap();
        let from_gab = read_json("gab", &Value::Array(gab)).unwrap();
        for (n, (latency, rate)) in names.iter().zip(&figures) {
            prop_assert_eq!(values(bench(&from_bmf, n), "latency"), &[*latency]);
            prop_assert_eq!(values(bench(&from_bmf, n), "throughput"), &[*rate]);
            prop_assert_eq!(values(bench(&from_gab, n), "ns/op"), &[*latency]);
        }
    }

    #[test]
    fn bmf_and_gab_hostile_numbers_never_panic(
        entries in proptest::collection::vec((name(), prop_oneof![Just("ns/op"), Just("s"), Just("MB/s"), Just("x"), Just("")], hostile_number()), 0..6),
    ) {
        let gab: Vec<Value> = entries.iter().map(|(n, unit, v)| json!({"name": n, "unit": unit, "value": v})).collect();
        if let Ok(input) = read_json("gab", &Value::Array(gab)) {
            sane(&input)?;
        }
        let bmf: serde_json::Map<String, Value> = entries.iter().map(|(n, unit, v)| (n.clone(), json!({"latency": {"value": v, "upper_value": v}, *unit: {"value": v}}))).collect();
        if let Ok(input) = read_json("bmf", &Value::Object(bmf)) {
            sane(&input)?;
        }
    }
}
