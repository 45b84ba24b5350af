//! `--measure instructions` with the real valgrind, beside load that comes and goes: a
//! google/benchmark binary built here from `libbenchmark-dev`, a Go module and a C program
//! counted per iteration (or per process), equal run to run, a 1 % longer loop read as 1 %
//! and gated with three counts a side. No test here takes the measuring lock: counts do not mind
//! what else the machine does, which is the point.

use crate::common::{BurstyLoad, build_gbench, counts_of as counts, gbench_metric, latkit, peer};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A google/benchmark binary whose `BM_Spin/N` steps a generator N + `extra` times per
/// iteration.
fn spin_binary(dir: &Path, name: &str, steps: &[u32], extra: u32) -> PathBuf {
    let args: String = steps.iter().map(|n| format!("->Arg({n})")).collect();
    let source = dir.join(format!("{name}.cc"));
    std::fs::write(
        &source,
        format!(
            "#include <benchmark/benchmark.h>\n#include <cstdint>\n\
             static void BM_Spin(benchmark::State& state) {{\n  uint64_t x = 1;\n\
             for (auto _ : state) {{\n    for (int64_t i = 0; i < state.range(0) + {extra}; ++i) \
             x = x * 6364136223846793005ULL + 1;\n    benchmark::DoNotOptimize(x);\n  }}\n}}\n\
             BENCHMARK(BM_Spin){args};\nBENCHMARK_MAIN();\n"
        ),
    )
    .unwrap();
    let binary = dir.join(name);
    build_gbench(&source, &binary);
    binary
}

/// latkit's JSON from `args`, which must exit `code`.
fn json_of(args: &[&str], code: i32) -> Value {
    let out = latkit().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and libbenchmark-dev; `--features interop` runs it"
)]
fn gbench_counts_a_one_percent_longer_loop_as_one_percent_beside_load() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let binary = spin_binary(d, "spin", &[100_000, 101_000], 0);
    let binary = binary.to_str().unwrap();
    let _load = BurstyLoad::start(0xc004_0417);
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for out in [a, b] {
        let args = ["gbench", binary, "--measure", "instructions", "-q"];
        let doc = json_of(&[&args[..], &["--format", "json"]].concat(), 0);
        std::fs::write(out, doc.to_string()).unwrap();
    }
    let first = json_of(&["parse", a, "--format", "json", "-q"], 0);
    let again = json_of(&["parse", b, "--format", "json", "-q"], 0);
    let metric = gbench_metric(&first);
    let (short, long) = (
        counts(&first, "BM_Spin/100000", metric),
        counts(&first, "BM_Spin/101000", metric),
    );
    // Three counts a run, as they agree; counted again beside other load: the same to
    // within 0.01 %.
    assert_eq!(short.len(), 3, "{short:?}");
    let repeat = counts(&again, "BM_Spin/100000", metric);
    assert!(
        (repeat[0] / short[0] - 1.0).abs() < 1e-4,
        "{short:?} vs {repeat:?}"
    );
    // 1 % more steps is 0.9-1.1 % more instructions per iteration (the loop dominates).
    let change = (long[0] / short[0] - 1.0) * 100.0;
    assert!(
        (0.9..=1.1).contains(&change),
        "{short:?} → {long:?}: {change}%"
    );
    // Both runs carry how they were counted, so compare accepts them as alike.
    let toolchains = first["runs"][0]["environment"]["toolchains"].to_string();
    assert!(toolchains.contains("valgrind-"), "{toolchains}");
    let rule = format!("{metric}:+0.5%");
    json_of(
        &[
            "compare",
            a,
            b,
            "--fail-on",
            &rule,
            "--format",
            "json",
            "-q",
        ],
        0,
    );
}

/// A benchmark named with `->Name()` or registered as a lambda has no function of its name:
/// it is counted over the whole process (exact iterations differenced), beside the others,
/// and named in a note; before, it failed the whole counted run (exit 2, no rows).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and libbenchmark-dev; `--features interop` runs it"
)]
fn named_and_lambda_benchmarks_are_counted_beside_the_others() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("named.cc");
    let spin = "uint64_t x = 1;\n  for (auto _ : state) {\n    for (int64_t i = 0; i < 20000; \
                ++i) x = x * 6364136223846793005ULL + 1;\n    benchmark::DoNotOptimize(x);\n  }";
    std::fs::write(
        &source,
        format!(
            "#include <benchmark/benchmark.h>\n#include <cstdint>\n\
             static void BM_Spin(benchmark::State& state) {{\n  {spin}\n}}\n\
             BENCHMARK(BM_Spin);\nBENCHMARK(BM_Spin)->Name(\"Custom\");\n\
             static auto* lambda = benchmark::RegisterBenchmark(\"Lambda\", \
             [](benchmark::State& state) {{\n  {spin}\n}});\nBENCHMARK_MAIN();\n"
        ),
    )
    .unwrap();
    let binary = dir.path().join("named");
    build_gbench(&source, &binary);
    let args = [
        "gbench",
        binary.to_str().unwrap(),
        "--measure",
        "instructions",
    ];
    let doc = json_of(&[&args[..], &["--format", "json", "-q"]].concat(), 0);
    let metric = gbench_metric(&doc);
    let own = counts(&doc, "BM_Spin", metric)[0];
    let notes = doc["notes"].to_string();
    if metric != "instructions/op" {
        // Before 1.8 (Debian 12's 1.7.1) a whole process's count of one run holds its
        // start-up: those two are left uncounted, named, and BM_Spin is still counted.
        for name in ["Custom", "Lambda"] {
            assert!(notes.contains(&format!("{name}: not counted")), "{notes}");
        }
        assert!(own > 20_000.0, "{own}");
        return;
    }
    for name in ["Custom", "Lambda"] {
        let whole = counts(&doc, name, metric)[0];
        let off = (whole / own - 1.0) * 100.0;
        assert!(
            off.abs() < 0.5,
            "{name}: {whole} against BM_Spin's {own}: {off:+.2}%"
        );
        assert!(
            doc["notes"]
                .to_string()
                .contains(&format!("{name}: no function")),
            "{doc}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and libbenchmark-dev; `--features interop` runs it"
)]
fn a_gate_on_counts_fails_a_one_percent_regression_in_one_run_a_side_of_three_counts() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = spin_binary(d, "before", &[100_000], 0);
    let after = spin_binary(d, "after", &[100_000], 1_000);
    let _load = BurstyLoad::start(0x0e01);
    let mut docs = Vec::new();
    for binary in [&before, &after] {
        let path = d.join(format!(
            "{}.json",
            binary.file_name().unwrap().to_str().unwrap()
        ));
        let args = [binary.to_str().unwrap(), "--measure", "instructions"];
        let out = latkit()
            .arg("gbench")
            .args(args)
            .args(["-q", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        docs.push(path);
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(&docs[0]).unwrap()).unwrap();
    let rule = format!("{}:+0.5%", gbench_metric(&doc));
    // The same benchmark, 1 % more steps after.
    let out = latkit()
        .arg("compare")
        .args(&docs)
        .args(["--fail-on", &rule])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("(counted n=3)"), "{stdout}");
    assert!(
        stdout.contains("+0.9") || stdout.contains("+1.0"),
        "{stdout}"
    );
    // Counts taken another way (a different counter, here its version) are not mixed.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&docs[1]).unwrap()).unwrap();
    let toolchains = &mut doc["runs"][0]["environment"]["toolchains"];
    let edited = toolchains.to_string().replace("valgrind-3.", "valgrind-9.");
    *toolchains = serde_json::from_str(&edited).unwrap();
    let other = d.join("other-valgrind.json");
    std::fs::write(&other, doc.to_string()).unwrap();
    let out = latkit()
        .arg("compare")
        .arg(&docs[0])
        .arg(&other)
        .args(["--fail-on", &rule])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("valgrind"), "{said}");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and go; `--features interop` runs it"
)]
fn go_counts_each_benchmark_per_iteration_without_its_one_time_costs() {
    peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path();
    std::fs::write(
        module.join("go.mod"),
        "module example.com/spin\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(
        module.join("spin_test.go"),
        "package spin\n\nimport \"testing\"\n\nvar sink uint64\n\n\
         func spin(n int) {\n\tx := uint64(1)\n\tfor i := 0; i < n; i++ {\n\t\tx = x*6364136223846793005 + 1\n\t}\n\tsink += x\n}\n\n\
         func BenchmarkShort(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tspin(20000)\n\t}\n}\n\n\
         func BenchmarkLong(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tspin(20200)\n\t}\n}\n",
    )
    .unwrap();
    let _load = BurstyLoad::start(0x90c0_de00);
    let module = module.to_str().unwrap();
    let args = [
        "go",
        "--dir",
        module,
        "--measure",
        "instructions",
        "--count",
        "2",
        "--format",
        "json",
        "-q",
    ];
    let doc = json_of(&args, 0);
    let (short, long) = (
        counts(&doc, "BenchmarkShort", "instructions/op"),
        counts(&doc, "BenchmarkLong", "instructions/op"),
    );
    assert_eq!(short.len(), 2, "{short:?}");
    // Per iteration, start-up and stack growth taken out: the two counts agree to 0.1 %,
    // and 1 % more steps reads 0.9-1.1 % more.
    assert!((short[1] / short[0] - 1.0).abs() < 1e-3, "{short:?}");
    let change = (long[0] / short[0] - 1.0) * 100.0;
    assert!(
        (0.9..=1.1).contains(&change),
        "{short:?} → {long:?}: {change}%"
    );
    let toolchains = doc["runs"][0]["environment"]["toolchains"].to_string();
    for setting in ["valgrind-", "GOMAXPROCS=1", "GOGC=off"] {
        assert!(toolchains.contains(setting), "{setting}: {toolchains}");
    }
}

/// A C program of N steps of a few instructions each (`steps N`), built in `d`.
fn steps_program(d: &std::path::Path) -> std::path::PathBuf {
    peer("valgrind", "apt-get install valgrind");
    let source = d.join("steps.c");
    std::fs::write(
        &source,
        "#include <stdlib.h>\n#include <stdio.h>\nint main(int c, char **v) {\n\
         unsigned long long x = 1, n = strtoull(v[1], 0, 10);\n\
         for (unsigned long long i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1;\n\
         printf(\"%llu\\n\", x);\n return 0;\n}\n",
    )
    .unwrap();
    let program = d.join("steps");
    let built = std::process::Command::new(peer("gcc", "apt-get install gcc"))
        .args(["-O1", "-o"])
        .arg(&program)
        .arg(&source)
        .status()
        .unwrap();
    assert!(built.success());
    program
}

/// `--shell`'s own instructions are measured and taken from every count, as its start-up is
/// from every time: through sh or bash, the count is the command's (bash alone added 1.08 M).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and a C compiler; `--features interop` runs it"
)]
fn a_shell_s_own_instructions_are_taken_from_every_count() {
    let dir = tempfile::tempdir().unwrap();
    let program = steps_program(dir.path());
    let command = format!("{} 1000000", program.display());
    let alone = json_of(
        &[
            "exec",
            "--measure",
            "instructions",
            &command,
            "--format",
            "json",
            "-q",
        ],
        0,
    );
    let own = counts(&alone, &command, "instructions")[0];
    for shell in ["sh", "bash"] {
        let args = [
            "exec",
            "--measure",
            "instructions",
            "--shell",
            shell,
            &command,
        ];
        let doc = json_of(&[&args[..], &["--format", "json", "-q"]].concat(), 0);
        let through = counts(&doc, &command, "instructions");
        let off = (through[0] / own - 1.0) * 100.0;
        assert!(
            off.abs() < 0.5,
            "{shell}: {through:?} against {own}: {off:+.2}%"
        );
        assert!(
            doc["notes"].to_string().contains("its own instructions"),
            "{doc}"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and a C compiler; `--features interop` runs it"
)]
fn exec_counts_a_whole_program_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let program = steps_program(dir.path());
    let program = program.to_str().unwrap();
    let _load = BurstyLoad::start(0xe7ec);
    let (alone, child) = (
        format!("{program} 1000000"),
        format!("sh -c '{program} 1000000'"),
    );
    let args = [
        "exec",
        "--measure",
        "instructions",
        &alone,
        &child,
        "--format",
        "json",
        "-q",
    ];
    let doc = json_of(&args, 0);
    let (own, through_sh) = (
        counts(&doc, &alone, "instructions"),
        counts(&doc, "sh -c", "instructions"),
    );
    // A million steps of a few instructions each, the same every run; through `sh` the
    // child is counted too, so the count is the program's and the shell's.
    assert!(own.iter().all(|&c| c == own[0]), "{own:?}");
    assert!((3e6..2e7).contains(&own[0]), "{own:?}");
    assert!(through_sh[0] > own[0], "{own:?} vs {through_sh:?}");
}
