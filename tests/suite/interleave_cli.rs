//! `--interleave REV`: the base revision (a git worktree) and the working tree run in turns
//! with the real go toolchain and a real google/benchmark build, then compare.

use crate::common::{git, latkit, worktrees};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// One interleaved comparison measures at a time: side by side on a 2-CPU machine they make
/// each other's noise.
/// A repository with `files` committed, then `changed` written over them uncommitted.
fn repository(files: &[(&str, &str)], changed: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "base"]);
    for (name, text) in changed {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// The `vs base` change of `bench` in the first comparison table.
fn change_of<'a>(report: &'a Value, bench: &str) -> &'a Value {
    let table = &report["tables"][0];
    let row = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"].as_str().unwrap().contains(bench))
        .unwrap_or_else(|| panic!("no row for {bench}: {table}"));
    row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "change")
        .unwrap_or_else(|| panic!("no change cell: {row}"))
}

fn go_sources(work: u32) -> String {
    format!(
        "package spin\n\nimport \"testing\"\n\nvar sink uint64\n\n\
         func spin(n int) {{\n\tx := uint64(1)\n\tfor i := 0; i < n; i++ {{\n\t\tx = x*6364136223846793005 + 1\n\t}}\n\tsink += x\n}}\n\n\
         func BenchmarkWork(b *testing.B) {{\n\tfor i := 0; i < b.N; i++ {{\n\t\tspin({work})\n\t}}\n}}\n"
    )
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn go_interleaves_base_and_working_tree_and_gates_on_the_change() {
    let _cores = crate::common::measuring();
    let repo = repository(
        &[
            ("go.mod", "module example.com/spin\n\ngo 1.19\n"),
            ("spin_test.go", &go_sources(20_000)),
        ],
        &[("spin_test.go", &go_sources(40_000))],
    );
    let out = latkit()
        .arg("go")
        .arg("--dir")
        .arg(repo.path())
        .args([
            "--interleave",
            "HEAD",
            "--benchtime",
            "300x",
            // Ten rounds, not the default six: on a 2-core machine shared with the other
            // tests, six a side once left a real 2x change "within noise" (p above alpha).
            "--count",
            "10",
            "--format",
            "json",
            "-q",
            "--fail-on",
            "ns/op:+20%",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the 2x slowdown fails: {stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let change = change_of(&report, "Work");
    assert_eq!(change["verdict"], "significant", "{change}");
    // Ten rounds: ten samples a side.
    assert_eq!(change["n_base"], 10);
    assert_eq!(change["n"], 10);
    let percent = change["percent"].as_f64().unwrap();
    assert!(percent > 50.0, "twice the work: {percent}");
    let columns: Vec<&str> = report["tables"][0]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["header"].as_str().unwrap())
        .collect();
    assert!(
        columns.iter().any(|c| c.starts_with("HEAD (")) && columns.contains(&"working tree"),
        "{columns:?}"
    );
    // The base checkout is gone again.
    let list = Command::new(crate::common::peer("git", "apt-get install git"))
        .current_dir(repo.path())
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn interleave_refuses_what_it_cannot_do() {
    let repo = repository(&[("go.mod", "module example.com/x\n\ngo 1.19\n")], &[]);
    let refused = |args: &[&str], expected: &str| {
        let out = latkit()
            .arg("go")
            .arg("--dir")
            .arg(repo.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    };
    refused(&["--interleave", "no-such-rev"], "is not a commit");
    refused(
        &["--interleave", "HEAD", "--format", "xenomai"],
        "--format must be one of",
    );
    refused(&["--interleave", "HEAD", "--store"], "does not store");
    refused(&["--interleave", "HEAD", "--raw", "r.txt"], "--raw");
    refused(&["--fail-on", "ns/op:+5%"], "give --interleave REV");
    refused(
        &["--interleave", "HEAD", "--runs", "auto"],
        "runs until a --fail-on gate is decided",
    );
    refused(
        &["--interleave", "HEAD", "--runs", "8", "--count", "8"],
        "give one",
    );
    let gated = ["--interleave", "HEAD", "--fail-on", "ns/op:+5%", "--runs"];
    refused(
        &[&gated[..], &["8", "--max-runs", "9"]].concat(),
        "bound --runs auto",
    );
    refused(
        &[&gated[..], &["auto", "--min-runs", "9", "--max-runs", "5"]].concat(),
        "is below --min-runs",
    );
    refused(&[&gated[..], &["often"]].concat(), "nor `auto`");
    let elsewhere = tempfile::tempdir().unwrap();
    let out = latkit()
        .arg("go")
        .arg("--dir")
        .arg(elsewhere.path())
        .args(["--interleave", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in a git repository"));
}

fn gbench_source(work: u32) -> String {
    format!(
        "#include <benchmark/benchmark.h>\n#include <cstdint>\n\
         static void BM_Spin(benchmark::State& state) {{\n\
           for (auto _ : state) {{\n\
             uint64_t x = 1;\n\
             for (int i = 0; i < {work}; ++i) {{ x = x * 6364136223846793005ULL + 1; benchmark::DoNotOptimize(x); }}\n\
           }}\n\
         }}\n\
         BENCHMARK(BM_Spin);\nBENCHMARK_MAIN();\n"
    )
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn gbench_builds_both_trees_and_compares_them() {
    let _cores = crate::common::measuring();
    let repo = repository(
        &[("spin.cc", &gbench_source(20_000))],
        &[("spin.cc", &gbench_source(40_000))],
    );
    let build = "g++ -O2 -std=c++17 -o spin spin.cc -lbenchmark -lpthread";
    let run = |extra: &[&str]| {
        latkit()
            .current_dir(repo.path())
            .args([
                "gbench",
                "./spin",
                "--interleave",
                "HEAD",
                // Ten rounds of 50 ms a side: a 2x change stays significant when a few rounds
                // share the CPUs with other work (six of 20 ms did not, once, under a build).
                "--repetitions",
                "10",
            ])
            .args(["--min-time", "0.05", "--format", "json", "-q"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Without --build the base checkout has no binary (build outputs are not committed).
    std::fs::write(repo.path().join("spin"), "").unwrap();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --build"));

    let out = run(&["--build", build]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let change = change_of(&report, "BM_Spin");
    assert_eq!(change["verdict"], "significant", "{change}");
    assert!(change["percent"].as_f64().unwrap() > 50.0, "{change}");
    assert_eq!(change["n"], 10);

    let out = run(&["--build", "exit 3"]);
    assert_eq!(out.status.code(), Some(6));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--build `exit 3` failed"));
}

/// `latkit gbench ./spin --interleave HEAD --build CMD`, started as a terminal job in `repo`.
fn building(repo: &Path, build: &str) -> crate::common::Job {
    crate::common::Job::start(
        &[
            "gbench",
            "./spin",
            "--interleave",
            "HEAD",
            "--format",
            "json",
            "-q",
            "--build",
            build,
        ],
        repo,
    )
}

/// A build that says it started (the file `mark`), then takes far longer than any test.
fn slow_build(mark: &Path) -> String {
    format!("touch '{}'; sleep 300; sleep 300", mark.display())
}

/// Ctrl-C (SIGINT to the job) or SIGTERM (to latkit alone, as `kill` sends it) while the base
/// checkout builds: the build is stopped, the benchmark never runs, the checkout is removed
/// and latkit exits 130.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn an_interrupt_during_the_build_stops_it_and_removes_the_checkout() {
    for terminal in [true, false] {
        let repo = repository(&[("spin.cc", &gbench_source(10))], &[]);
        let mark = repo.path().join("build-started");
        let mut job = building(repo.path(), &slow_build(&mark));
        crate::common::wait_until("the build started", || mark.exists());
        assert_eq!(worktrees(repo.path()).len(), 2, "the base is checked out");
        match terminal {
            true => job.ctrl_c(),
            false => {
                nix::sys::signal::kill(job.group(), nix::sys::signal::Signal::SIGTERM).unwrap()
            }
        }
        let out = job.finish("interrupted build");
        assert_eq!(
            out.status.code(),
            Some(130),
            "terminal {terminal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(worktrees(repo.path()).len(), 1, "terminal {terminal}");
        let left = Command::new(crate::common::peer("pgrep", "apt-get install procps"))
            .args(["-f", &mark.display().to_string()])
            .output()
            .unwrap();
        assert!(left.stdout.is_empty(), "the build is still running");
    }
}

/// A run killed outright (SIGKILL cannot be caught) leaves its checkout behind; the next
/// `--interleave` in that repository removes it.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn a_checkout_left_by_a_killed_run_is_pruned_by_the_next() {
    let repo = repository(&[("spin.cc", &gbench_source(10))], &[]);
    let mark = repo.path().join("build-started");
    let mut job = building(repo.path(), &slow_build(&mark));
    crate::common::wait_until("the build started", || mark.exists());
    let stale = worktrees(repo.path())[1].clone();
    use nix::sys::signal::{Signal, kill, killpg};
    kill(job.group(), Signal::SIGKILL).unwrap();
    // The orphaned build (it holds latkit's stderr open) is ended by hand, with its sleeps,
    // in whichever process group it is.
    let builds = Command::new(crate::common::peer("pgrep", "apt-get install procps"))
        .args(["-f", &mark.display().to_string()])
        .output()
        .unwrap();
    for pid in String::from_utf8_lossy(&builds.stdout).split_whitespace() {
        let pid = nix::unistd::Pid::from_raw(pid.parse().unwrap());
        let _ = killpg(pid, Signal::SIGKILL);
    }
    let _ = killpg(job.group(), Signal::SIGKILL);
    let _ = job.finish("killed run");
    assert!(Path::new(&stale).exists());
    let out = building(repo.path(), "exit 3").finish("next run");
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(worktrees(repo.path()).len(), 1);
    assert!(!Path::new(&stale).exists(), "{stale} was removed");
}

/// A Go benchmark that sleeps `ms` milliseconds per iteration: a large, real effect that a
/// loaded machine cannot hide.
fn go_nap(ms: u32) -> String {
    format!(
        "package nap\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n\
         func BenchmarkNap(b *testing.B) {{\n\tfor i := 0; i < b.N; i++ {{\n\t\t\
         time.Sleep({ms} * time.Millisecond)\n\t}}\n}}\n"
    )
}

/// `latkit go --interleave REV --runs auto ARGS` in `repo`, as JSON.
fn go_auto(repo: &Path, rev: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = latkit()
        .arg("go")
        .arg("--dir")
        .arg(repo)
        .args(["--interleave", rev, "--runs", "auto", "--benchtime", "3x"])
        .args(["--format", "json", "-q"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code(), report, stderr)
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn go_runs_auto_stops_once_a_real_change_is_decided() {
    let _cores = crate::common::measuring();
    let module = ("go.mod", "module example.com/nap\n\ngo 1.19\n");
    let repo = repository(
        &[module, ("nap_test.go", &go_nap(20))],
        &[("nap_test.go", &go_nap(30))],
    );
    let (code, report, stderr) = go_auto(repo.path(), "HEAD", &["--fail-on", "ns/op:+5%"]);
    assert_eq!(
        code,
        Some(1),
        "20 ms against 30 ms fails the gate: {stderr}"
    );
    let target = &report["verdict"]["targets"][0];
    assert_eq!(target["status"], "fail", "{target}");
    assert_eq!(target["bench"], "BenchmarkNap", "{target}");
    // Decided long before the most rounds: the table holds as many samples as rounds ran.
    let rounds = change_of(&report, "Nap")["n"].as_u64().unwrap();
    assert!((3..30).contains(&rounds), "{rounds} rounds");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(&format!("--runs auto: {rounds} rounds of at most 30")),
        "{notes}"
    );

    // No change can be shown within +0.001 %, and at alpha 0.001 none is found: undecided
    // after the most rounds is its own exit code, never a pass.
    git(repo.path(), &["checkout", "-q", "--", "."]);
    let (code, report, stderr) = go_auto(
        repo.path(),
        "HEAD",
        &[
            "--fail-on",
            "ns/op:+0.001%",
            "--alpha",
            "0.001",
            "--max-runs",
            "3",
        ],
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("inconclusive after 3 rounds"), "{stderr}");
    // The advice keeps naming the flag, not the count.
    assert!(stderr.contains("more rounds (--max-runs)"), "{stderr}");
    assert_eq!(report["verdict"]["targets"][0]["status"], "undecided");
}

fn gbench_nap(ms: u32) -> String {
    format!(
        "#include <benchmark/benchmark.h>\n#include <chrono>\n#include <thread>\n\
         static void BM_Nap(benchmark::State& state) {{\n\
           for (auto _ : state) std::this_thread::sleep_for(std::chrono::milliseconds({ms}));\n\
         }}\n\
         BENCHMARK(BM_Nap)->UseRealTime()->Iterations(3);\nBENCHMARK_MAIN();\n"
    )
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn gbench_runs_auto_stops_once_a_real_change_is_decided() {
    let _cores = crate::common::measuring();
    let repo = repository(
        &[("nap.cc", &gbench_nap(20))],
        &[("nap.cc", &gbench_nap(30))],
    );
    let out = latkit()
        .current_dir(repo.path())
        .args(["gbench", "./nap", "--interleave", "HEAD", "--runs", "auto"])
        .args([
            "--build",
            "g++ -O2 -std=c++17 -o nap nap.cc -lbenchmark -lpthread",
        ])
        .args(["--fail-on", "real_time:+5%", "--format", "json", "-q"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"]["targets"][0]["status"], "fail");
    let rounds = change_of(&report, "BM_Nap")["n"].as_u64().unwrap();
    assert!((3..30).contains(&rounds), "{rounds} rounds");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn merge_base_judges_a_branch_against_where_it_left_main() {
    let _cores = crate::common::measuring();
    let module = ("go.mod", "module example.com/nap\n\ngo 1.19\n");
    let repo = repository(&[module, ("nap_test.go", &go_nap(20))], &[]);
    let dir = repo.path();
    let forked = String::from_utf8(
        Command::new("git")
            .args(["-C"])
            .arg(dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let forked = forked.trim();
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("nap_test.go"), go_nap(30)).unwrap();
    git(dir, &["commit", "-qam", "slower"]);
    // main moves on after the branch left it, and is slower still: against main the branch
    // would look faster.
    git(dir, &["checkout", "-q", "main"]);
    std::fs::write(dir.join("nap_test.go"), go_nap(45)).unwrap();
    git(dir, &["commit", "-qam", "slower on main"]);
    git(dir, &["checkout", "-q", "feature"]);
    let (code, report, stderr) = go_auto(dir, "merge-base", &["--fail-on", "ns/op:+5%"]);
    assert_eq!(code, Some(1), "30 ms against the fork's 20 ms: {stderr}");
    let columns = report["tables"][0]["columns"].to_string();
    assert!(
        columns.contains(&format!("merge-base ({})", &forked[..10])),
        "{columns}"
    );
    let notes = report["notes"].to_string();
    assert!(notes.contains(forked), "{notes}");

    // A stored run is looked up at the same commit.
    let db = dir.join("runs.db");
    let results = dir.join("new.txt");
    std::fs::write(&results, "BenchmarkNap-2 \t 10 \t 30000000 ns/op\n").unwrap();
    let stored = latkit()
        .current_dir(dir)
        .env("LATKIT_DB", &db)
        .args(["store", "add"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(stored.status.success(), "{stored:?}");
    let out = latkit()
        .current_dir(dir)
        .env("LATKIT_DB", &db)
        .args(["compare", "@merge-base:main", "@latest"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("no stored run is at the merge base {forked}")),
        "{stderr}"
    );
}
