//! Counts that vary, with the real valgrind: a Go benchmark over a map whose hash Go seeds at
//! random in every run, and a C++ google/benchmark whose work depends on the allocator's
//! addresses. (crypto/rand is left out: its first call sometimes ran outside the counted
//! function, so that a run of 12 iterations counted fewer than one of 2, which latkit refuses
//! to turn into a figure.) Four runs of the same code pass the gate in every pair; 10 %
//! more work fails it.

use crate::common::{build_gbench, latkit, peer};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs latkit with `args`; its exit code and what it printed.
fn exit_of(args: &[&str]) -> (Option<i32>, String) {
    let out = latkit().args(args).output().unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

/// Every ordered pair of `runs` passes `rule`, and each against `changed` fails it.
fn every_pair_passes_and_the_change_fails(runs: &[PathBuf], changed: &Path, rule: &str) {
    for a in runs {
        for b in runs.iter().filter(|b| *b != a) {
            let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
            let (code, said) = exit_of(&["compare", a, b, "--fail-on", rule, "-q"]);
            assert_eq!(code, Some(0), "{a} vs {b}: {said}");
        }
    }
    let (base, changed) = (runs[0].to_str().unwrap(), changed.to_str().unwrap());
    let (code, said) = exit_of(&["compare", base, changed, "--fail-on", rule, "-q"]);
    assert_eq!(code, Some(1), "{said}");
}

/// The counts of `metric` of benchmark `name` in a latkit JSON file.
fn counts_in(path: &Path, name: &str, metric: &str) -> Vec<f64> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let bench = (doc["runs"][0]["benchmarks"].as_array().unwrap().iter())
        .find(|b| b["name"].as_str().unwrap().contains(name))
        .unwrap_or_else(|| panic!("no {name} in {doc}"));
    let metric = (bench["metrics"].as_array().unwrap().iter())
        .find(|m| m["name"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {bench}"));
    (metric["values"].as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// A Go module whose BenchmarkMap fills a map of `entries` and reads them back.
fn map_module(dir: &Path, entries: u32) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("go.mod"), "module example.com/maps\n\ngo 1.19\n").unwrap();
    std::fs::write(
        dir.join("map_test.go"),
        format!(
            "package maps\n\nimport \"testing\"\n\nvar sink int\n\n\
             func BenchmarkMap(b *testing.B) {{\n\
             \tfor i := 0; i < b.N; i++ {{\n\t\tm := make(map[int]int)\n\
             \t\tfor k := 0; k < {entries}; k++ {{\n\t\t\tm[k*7919] = k\n\t\t}}\n\
             \t\tfor k := 0; k < {entries}; k++ {{\n\t\t\tsink += m[k*7919]\n\t\t}}\n\
             \t}}\n}}\n"
        ),
    )
    .unwrap();
}

#[test]
#[ignore = "flaky beside CI's load: callgrind's toggle sometimes stops counting inside a Go map \
            benchmark (12 iterations counted 145,565 against 376,374 at 2), which latkit \
            refuses; `--features interop -- --ignored` runs it"]
fn a_go_map_counted_four_times_passes_every_pair_and_ten_percent_more_fails() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let (same, more) = (dir.path().join("same"), dir.path().join("more"));
    map_module(&same, 200);
    map_module(&more, 220);
    let count = |module: &Path, out: &Path| {
        let (module, out) = (module.to_str().unwrap(), out.to_str().unwrap());
        let args = ["go", "--dir", module, "--measure", "instructions"];
        let (code, said) = exit_of(&[&args[..], &["-q", "--json", out]].concat());
        assert_eq!(code, Some(0), "{said}");
    };
    let runs: Vec<PathBuf> = (0..4)
        .map(|i| dir.path().join(format!("{i}.json")))
        .collect();
    for run in &runs {
        count(&same, run);
    }
    let changed = dir.path().join("more.json");
    count(&more, &changed);
    // Go seeds each map's hash: the counts spread beyond the floor, so each run took six.
    let first = counts_in(&runs[0], "BenchmarkMap", "instructions/op");
    assert_eq!(first.len(), 6, "{first:?}");
    every_pair_passes_and_the_change_fails(&runs, &changed, "instructions/op:+0.5%");
}

/// A google/benchmark binary whose work hashes `entries` heap addresses into buckets.
fn pointer_binary(dir: &Path, name: &str, entries: u32) -> PathBuf {
    let source = dir.join(format!("{name}.cc"));
    std::fs::write(
        &source,
        format!(
            "#include <benchmark/benchmark.h>\n#include <cstdint>\n#include <memory>\n\
             #include <unordered_set>\n#include <vector>\n\
             static void BM_PointerSet(benchmark::State& state) {{\n\
             for (auto _ : state) {{\n  std::vector<std::unique_ptr<int>> owned;\n\
             std::unordered_set<std::uintptr_t> seen;\n\
             for (int i = 0; i < {entries}; ++i) {{\n\
             owned.push_back(std::make_unique<int>(i));\n\
             seen.insert(reinterpret_cast<std::uintptr_t>(owned.back().get()) >> 4);\n  }}\n\
             benchmark::DoNotOptimize(seen.size());\n}}\n}}\n\
             BENCHMARK(BM_PointerSet);\nBENCHMARK_MAIN();\n"
        ),
    )
    .unwrap();
    let binary = dir.join(name);
    build_gbench(&source, &binary);
    binary
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and libbenchmark-dev; `--features interop` runs it"
)]
fn a_benchmark_of_heap_addresses_counted_four_times_passes_every_pair_and_ten_percent_fails() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (same, more) = (
        pointer_binary(d, "same", 2000),
        pointer_binary(d, "more", 2200),
    );
    let count = |binary: &Path, out: &Path| {
        let (binary, out) = (binary.to_str().unwrap(), out.to_str().unwrap());
        let args = ["gbench", binary, "--measure", "instructions", "-q"];
        let (code, said) = exit_of(&[&args[..], &["--json", out]].concat());
        assert_eq!(code, Some(0), "{said}");
    };
    let runs: Vec<PathBuf> = (0..4).map(|i| d.join(format!("{i}.json"))).collect();
    for run in &runs {
        count(&same, run);
    }
    let changed = d.join("more.json");
    count(&more, &changed);
    let doc: Value = serde_json::from_slice(&std::fs::read(&runs[0]).unwrap()).unwrap();
    let toolchains = doc["runs"][0]["environment"]["toolchains"].to_string();
    assert!(
        toolchains.contains("address randomisation off"),
        "{toolchains}"
    );
    let metric = match toolchains.contains("with its setup") {
        true => "instructions/iteration+setup",
        false => "instructions/op",
    };
    every_pair_passes_and_the_change_fails(&runs, &changed, &format!("{metric}:+0.5%"));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind; `--features interop` runs it"
)]
fn a_counted_process_runs_with_address_randomisation_off_and_python_hashes_fixed() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let (seen, script) = (dir.path().join("seen"), dir.path().join("look.sh"));
    std::fs::write(
        &script,
        format!(
            "cat /proc/self/personality > {0}; echo \"$PYTHONHASHSEED\" >> {0}\n",
            seen.display()
        ),
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let (code, said) = exit_of(&["exec", "--measure", "instructions", "--runs", "2", &command]);
    assert_eq!(code, Some(0), "{said}");
    let text = std::fs::read_to_string(&seen).unwrap();
    let mut lines = text.lines();
    let persona = u32::from_str_radix(lines.next().unwrap().trim(), 16).unwrap();
    // ADDR_NO_RANDOMIZE, as `setarch -R` sets it.
    assert_ne!(persona & 0x0040000, 0, "{text}");
    assert_eq!(lines.next(), Some("0"), "{text}");
}
