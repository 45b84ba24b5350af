//! The third attack audit's findings (issue 75), each through the release binary: what made
//! latkit panic, hang, lose results, count the wrong thing or write what it must not.

use crate::common::{json_of, latkit};
use std::time::Duration;

/// Counted instructions alone, as JSON on standard output.
const COUNTED_JSON: [&str; 5] = ["--measure", "instructions", "--format", "json", "-q"];

/// A Go result file of one benchmark whose allocs/op is `value`.
fn one_value(dir: &std::path::Path, value: &str) -> std::path::PathBuf {
    let file = dir.join("huge.txt");
    std::fs::write(&file, format!("BenchmarkA 1 {value} allocs/op\n")).unwrap();
    file
}

#[test]
fn a_millisecond_source_date_epoch_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = one_value(dir.path(), "5");
    // The year 10000 and later: a four-digit year cannot write it (was exit 101).
    for epoch in ["1700000000000", "253402300800"] {
        latkit()
            .env("SOURCE_DATE_EPOCH", epoch)
            .args(["parse", "--format", "json"])
            .arg(&file)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "SOURCE_DATE_EPOCH `{epoch}` is not whole seconds since 1970 before the year 10000"
            )));
    }
    latkit()
        .env("SOURCE_DATE_EPOCH", "253402300799")
        .args(["parse", "--format", "json"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicates::str::contains("9999-12-31T23:59:59"));
}

#[test]
fn a_value_no_axis_can_show_is_a_note_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    // 46 bytes that made `parse --format html` and `--plot` spin forever.
    for value in ["1.7976931348623157e308", "-1.7976931348623157e308"] {
        let file = one_value(dir.path(), value);
        latkit()
            .timeout(Duration::from_secs(60))
            .args(["parse", "--format", "html"])
            .arg(&file)
            .assert()
            .success()
            .stdout(predicates::str::contains("which no axis can show"));
        latkit()
            .timeout(Duration::from_secs(60))
            .arg("parse")
            .arg(&file)
            .arg("--plot")
            .arg(dir.path().join("plots"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains("which no axis can show"));
    }
}

/// A `valgrind` first on PATH that writes two count files of 2^64 − 1 instructions each.
fn overflowing_valgrind(dir: &std::path::Path) -> std::ffi::OsString {
    let script = dir.join("valgrind");
    std::fs::write(
        &script,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo valgrind-3.19.0; exit 0; }\n\
         for a in \"$@\"; do case \"$a\" in --cachegrind-out-file=*) \
         out=\"${a#--cachegrind-out-file=}\";; esac; done\nd=$(dirname \"$out\")\n\
         for p in 1 2; do printf 'events: Ir\\nsummary: 18446744073709551615\\n' > \"$d/count.$p\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)))
        .unwrap()
}

#[test]
fn counts_that_add_up_beyond_two_to_the_sixty_four_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    latkit()
        .env("PATH", overflowing_valgrind(dir.path()))
        .args(["exec", "--measure", "instructions", "--runs", "1", "true"])
        .assert()
        .code(6)
        .stderr(predicates::str::contains(
            "add up to more than 2^64 instructions",
        ));
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind; `--features interop` runs it"
)]
fn a_program_killed_under_valgrind_is_reported_by_its_signal_not_valgrinds_advice() {
    crate::common::peer("valgrind", "apt-get install valgrind");
    latkit()
        .args(["exec", "--measure", "instructions", "--runs", "1"])
        .arg("sh -c 'kill -SEGV $$'")
        .assert()
        .code(6)
        .stderr(predicates::str::contains(
            "Process terminating with default action of signal 11",
        ));
}

/// A google/benchmark of a 1,000-step loop, with `BENCHMARK_MAIN()` or a main() of its own
/// (which on 1.7.1 takes `--benchmark_min_time=1x` with a warning and runs timed iterations).
fn spin_source(own_main: bool) -> String {
    let main = match own_main {
        true => {
            "int main(int argc, char** argv) {\n  benchmark::Initialize(&argc, argv);\n  \
                 benchmark::RunSpecifiedBenchmarks();\n  benchmark::Shutdown();\n}\n"
        }
        false => "BENCHMARK_MAIN();\n",
    };
    format!(
        "#include <benchmark/benchmark.h>\nstatic void BM_Spin(benchmark::State& state) {{\n\
         for (auto _ : state) {{\n    unsigned x = 1;\n\
         for (int i = 0; i < 1000; ++i) x = x * 1664525u + 1013904223u;\n\
         benchmark::DoNotOptimize(x);\n  }}\n}}\nBENCHMARK(BM_Spin);\n{main}"
    )
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and libbenchmark-dev; `--features interop` runs it"
)]
fn a_benchmark_with_its_own_main_is_counted_at_the_iterations_it_ran() {
    crate::common::peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let counted = |own_main: bool| {
        let source = dir.path().join(format!("spin{own_main}.cc"));
        std::fs::write(&source, spin_source(own_main)).unwrap();
        let binary = dir.path().join(format!("spin{own_main}"));
        crate::common::build_gbench(&source, &binary);
        let doc = json_of(latkit().arg("gbench").arg(&binary).args(COUNTED_JSON));
        let metric = crate::common::gbench_metric(&doc);
        crate::common::counts_of(&doc, "BM_Spin", metric)
    };
    // Its own main() once made the count that of two timed runs (about a million iterations
    // each) over ten: 50–3400× the true one. Now it counts what BENCHMARK_MAIN() does.
    let (standard, own) = (counted(false), counted(true));
    let ratio = own[0] / standard[0];
    assert!(
        (0.99..=1.01).contains(&ratio),
        "{standard:?} against {own:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs valgrind and go; `--features interop` runs it"
)]
fn go_counts_the_program_its_build_flags_build() {
    crate::common::peer("valgrind", "apt-get install valgrind");
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path();
    let write = |name: &str, text: &str| std::fs::write(module.join(name), text).unwrap();
    write("go.mod", "module example.com/tagged\n\ngo 1.19\n");
    let spin = |tag: &str, steps: u32| {
        format!(
            "//go:build {tag}\n\npackage tagged\n\nvar sink uint64\n\n\
             func work() {{\n\tx := uint64(1)\n\tfor i := 0; i < {steps}; i++ {{\n\
             \t\tx = x*6364136223846793005 + 1\n\t}}\n\tsink += x\n}}\n"
        )
    };
    write("fast.go", &spin("fast", 1000));
    write("slow.go", &spin("!fast", 10000));
    write(
        "work_test.go",
        "package tagged\n\nimport \"testing\"\n\n\
         func BenchmarkWork(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\twork()\n\t}\n}\n",
    );
    let counted = |extra: &[&str]| {
        let mut go = latkit();
        go.args(["go", "--dir"]).arg(module).args(COUNTED_JSON);
        let doc = json_of(go.arg("--").args(extra));
        crate::common::counts_of(&doc, "BenchmarkWork", "instructions/op")[0]
    };
    // The count was of the untagged loop, ten times longer, whatever the tags.
    let (fast, slow) = (counted(&["-tags=fast"]), counted(&[]));
    assert!(
        (8.0..12.0).contains(&(slow / fast)),
        "{fast} against {slow}"
    );
    // The same tags apart, beside a flag of the binary's: the same loop, within the floor.
    let apart = counted(&["-tags", "fast", "-short"]);
    assert!((apart / fast - 1.0).abs() < 1e-3, "{fast} against {apart}");
}

#[test]
fn an_empty_latkit_token_is_refused_not_taken_as_none() {
    // Unauthenticated off loopback would need --insecure; on loopback `LATKIT_TOKEN=` ran a
    // server without a token (docs/net.md says an empty variable is refused).
    latkit()
        .env("LATKIT_TOKEN", "")
        .args(["net", "server", "--bind", "127.0.0.1:0"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "LATKIT_TOKEN: the token is empty",
        ));
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("token");
    std::fs::write(&big, vec![b'x'; 2 << 20]).unwrap();
    latkit()
        .args(["net", "server", "--bind", "127.0.0.1:0", "--token-file"])
        .arg(&big)
        .timeout(Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "too large for a hand-written file (a spec, a token",
        ));
}

#[test]
fn names_reach_markdown_and_csv_as_text_never_as_images_links_or_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.txt");
    // RootStream's BENCH lines carry any name a repository gives.
    std::fs::write(
        &file,
        "BENCH ![x](//example.invalid/p.png): min=10us avg=12us\n\
         BENCH =HYPERLINK(\"//example.invalid\"): min=11us avg=13us\n",
    )
    .unwrap();
    let parse = |format: &str| {
        crate::common::stdout_of(latkit().arg("parse").arg(&file).args(["--format", format]))
    };
    let markdown = parse("markdown");
    assert!(
        markdown.contains(r"!\[x\](//example.invalid/p.png)"),
        "{markdown}"
    );
    assert!(!markdown.contains("![x]("), "{markdown}");
    let csv = parse("csv");
    assert!(
        csv.contains("\"'=HYPERLINK(\"\"//example.invalid\"\")\""),
        "{csv}"
    );
}

#[test]
fn a_backtick_in_a_command_does_not_close_its_code_span_in_exports() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("t.md");
    latkit()
        .args(["exec", "--runs", "2", "--warmup", "0", "echo 'a`b'"])
        .arg("--export-markdown")
        .arg(&export)
        .assert()
        .success();
    let text = std::fs::read_to_string(&export).unwrap();
    assert!(text.contains("| ``echo 'a`b'`` |"), "{text}");
}
