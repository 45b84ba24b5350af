//! `latkit bisect` on real repositories with the real go toolchain (and a plain command):
//! it names the commit that made the benchmark slower, skips one that does not build,
//! refuses to blame anyone when nothing changed, and leaves no checkout behind, interrupted
//! or not.

use crate::common::{Job, git, latkit};
use serde_json::Value;
use std::path::Path;

/// One bisection measures at a time: two measuring side by side on this 2-CPU machine made
/// each other's noise (a truly good commit was once placed with the bad end).
fn go_sources(work: u32) -> String {
    format!(
        "package spin\n\nimport \"testing\"\n\nvar sink uint64\n\n\
         func spin(n int) {{\n\tx := uint64(1)\n\tfor i := 0; i < n; i++ {{\n\t\tx = x*6364136223846793005 + 1\n\t}}\n\tsink += x\n}}\n\n\
         func BenchmarkWork(b *testing.B) {{\n\tfor i := 0; i < b.N; i++ {{\n\t\tspin({work})\n\t}}\n}}\n"
    )
}

/// Commits c0…c12 of a Go package: c7 makes BenchmarkWork 40 % slower (20,000 → 28,000
/// steps), c9 does not build (fixed in c10), the others change a note.
fn go_history() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("go.mod"), "module example.com/spin\n\ngo 1.19\n").unwrap();
    std::fs::write(repo.join("spin_test.go"), go_sources(20_000)).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "c0: the benchmark"]);
    for i in 1..=12 {
        std::fs::write(repo.join("notes.txt"), format!("change {i}\n")).unwrap();
        match i {
            7 => std::fs::write(repo.join("spin_test.go"), go_sources(28_000)).unwrap(),
            9 => std::fs::write(repo.join("broken.go"), "package spin\nfunc broken( {\n").unwrap(),
            10 => std::fs::remove_file(repo.join("broken.go")).unwrap(),
            _ => {}
        }
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", &format!("c{i}: change {i}")]);
    }
    dir
}

/// The subject of every row, and its verdict.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["tables"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let cells = row["cells"].as_array().unwrap();
            let text = |i: usize| cells[i]["text"].as_str().unwrap_or_default().to_string();
            (text(1), text(7))
        })
        .collect()
}

/// The checkouts git knows of besides the repository itself.
fn checkouts_left(repo: &Path) -> usize {
    crate::common::worktrees(repo).len() - 1
}

/// `latkit bisect OPTIONS --dir REPO -- HARNESS`, run to its end, alone.
fn bisect(repo: &Path, options: &[&str], harness: &[&str]) -> std::process::Output {
    let _cores = crate::common::measuring();
    bisect_holding_the_cores(repo, options, harness)
}

/// The same, for a test that holds the cores already.
fn bisect_holding_the_cores(
    repo: &Path,
    options: &[&str],
    harness: &[&str],
) -> std::process::Output {
    latkit()
        .arg("bisect")
        .args(options)
        .arg("--dir")
        .arg(repo)
        .arg("--")
        .args(harness)
        .output()
        .unwrap()
}

/// A bisection that succeeded, named the commit with `subject`, and searched `metric`.
fn assert_names(out: &std::process::Output, subject: &str, metric: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("first bad commit") && stdout.contains(subject),
        "{stdout}"
    );
    assert!(stdout.contains(metric), "{stdout}");
}

/// The Go harness of the fixture: 200 iterations per run.
const GO: [&str; 4] = ["go", ".", "-benchtime", "200x"];

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn go_bisect_names_the_commit_that_made_it_slower() {
    let repo = go_history();
    let db = repo.path().join("history.db");
    let db = db.to_str().unwrap();
    let options = [
        "--good", "HEAD~12", "--bad", "HEAD", "--format", "json", "--store", "--db", db,
    ];
    let out = bisect(repo.path(), &options, &GO);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = report["notes"].to_string();
    assert!(notes.contains("first bad commit: "), "{notes}");
    assert!(notes.contains("c7: change 7"), "{notes}");
    let rows = verdicts(&report);
    // The ends, and each tested commit in order: c6 (the middle) good, then c9, which does
    // not build and is skipped as `git bisect skip` would, then its neighbour.
    assert_eq!(rows.first().unwrap().1, "good");
    assert_eq!(rows.last().unwrap().1, "bad");
    let c6 = rows
        .iter()
        .find(|(s, _)| s == "c6: change 6")
        .expect("c6 tested");
    assert_eq!(c6.1, "good");
    let c9 = rows
        .iter()
        .find(|(s, _)| s == "c9: change 9")
        .expect("c9 tested");
    assert!(c9.1.starts_with("skipped: does not build"), "{c9:?}");
    assert!(!notes.contains("may be the first bad instead"), "{notes}");
    let c7 = rows
        .iter()
        .find(|(s, _)| s == "c7: change 7")
        .expect("c7 tested");
    assert_eq!(c7.1, "bad");
    // A plain binary search over 12 commits takes about 4 steps; with one skip, at most 5
    // commits are built besides the ends.
    assert!(rows.len() <= 7, "{rows:?}");
    assert!(stderr.contains("step 1: testing"), "{stderr}");
    assert_eq!(checkouts_left(repo.path()), 0);
    // --store: every measured commit's runs, filed under that commit.
    let stored =
        crate::common::json_of(latkit().args(["store", "list", "--format", "json", "--db", db]));
    let commits: Vec<&str> = stored
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["commit"].as_str().unwrap())
        .collect();
    let culprit = notes.split("first bad commit: ").nth(1).unwrap();
    assert!(
        commits.iter().any(|c| culprit.starts_with(c)),
        "{commits:?}"
    );
    // The ends are filed at every step: at least twice each.
    assert!(commits.len() >= 6, "{commits:?}");
    // Starting again from the stored ends: their stored rounds replace the opening ones.
    let rev = |r: &str| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo.path())
            .args(["rev-parse", r])
            .output()
            .unwrap();
        format!("@{}", String::from_utf8_lossy(&out.stdout).trim())
    };
    let (good, bad) = (rev("HEAD~12"), rev("HEAD"));
    let options = ["--good", &good, "--bad", &bad, "--db", db];
    let again = bisect(repo.path(), &options, &GO);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("the ends' stored rounds"), "{stderr}");
    assert!(!stderr.contains("measuring the ends"), "{stderr}");
    assert_names(&again, "c7: change 7", "ns/op");
}

/// Beside load that comes and goes (busy loops started and killed every 0.5-2 s), a bisection
/// is right or says it cannot tell: it names c7 (exit 0), or stops undecided (exit 3) with a
/// range that holds c7; it never names another commit, and never calls the ends alike.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn beside_load_that_comes_and_goes_a_bisection_is_right_or_undecided() {
    let repo = go_history();
    let out = {
        let _load = crate::common::BurstyLoad::alone(0x5eed_b15e);
        let options = ["--good", "HEAD~12", "--bad", "HEAD", "--format", "json"];
        bisect_holding_the_cores(repo.path(), &options, &GO)
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let notes = report["notes"].to_string();
    match out.status.code() {
        Some(0) => assert!(
            notes.contains("first bad commit: ") && notes.contains("c7: change 7"),
            "{notes}"
        ),
        Some(3) => {
            // The range it claims holds c7: after a commit before c7, up to one from c7 on.
            let rows = verdicts(&report);
            let good: Vec<usize> = rows
                .iter()
                .filter(|(_, v)| v == "good")
                .map(|(s, _)| subject_number(s))
                .collect();
            let bad: Vec<usize> = rows
                .iter()
                .filter(|(_, v)| v.starts_with("bad"))
                .map(|(s, _)| subject_number(s))
                .collect();
            assert!(
                good.iter().all(|&c| c < 7) && bad.iter().all(|&c| c >= 7),
                "{rows:?}"
            );
            assert!(notes.contains("undecided: "), "{notes}");
        }
        code => panic!("exit {code:?}: {notes}\n{stderr}"),
    }
    // The verdict says the machine was busy, and what does not mind.
    assert!(notes.contains("measured on a busy machine"), "{notes}");
    assert_eq!(checkouts_left(repo.path()), 0);
}

/// By counted instructions, beside the same load, a bisection needs no luck: one count a
/// commit names c7 with its size, about +40 %, and the good end's and the bad end's counts agree
/// with the commits around them.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git, go and valgrind; `--features interop` runs it"
)]
fn by_counted_instructions_a_bisection_beside_load_names_the_commit_and_its_size() {
    crate::common::peer("valgrind", "apt-get install valgrind");
    let repo = go_history();
    // Beside the other busy tests: counts do not mind what runs beside them (but a measurement
    // would mind the load).
    let _load = crate::common::BurstyLoad::start(0xb15e_00c7);
    let out = latkit()
        .args([
            "bisect", "--good", "HEAD~12", "--bad", "HEAD", "--format", "json",
        ])
        .arg("--dir")
        .arg(repo.path())
        .args(["--", "go", ".", "--measure", "instructions"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("first bad commit: ") && notes.contains("c7: change 7"),
        "{notes}"
    );
    assert!(notes.contains("instructions/op"), "{notes}");
    // Every tested commit but the broken one is placed, none undecided.
    let rows = verdicts(&report);
    assert!(
        rows.iter()
            .all(|(_, v)| v == "good" || v == "bad" || v.starts_with("skipped")),
        "{rows:?}"
    );
    let culprit = report["tables"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["cells"][1]["text"].as_str() == Some("c7: change 7"))
        .map(|row| {
            row["cells"][3]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .unwrap_or_default();
    // 20,000 → 28,000 steps is +40 % of the loop; the call around it is a few instructions
    // more each side, and the whole process is counted (±0.05 % run to run: +39.98 % and
    // +40.02 % seen).
    let size: f64 = culprit
        .trim_start_matches('+')
        .trim_end_matches('%')
        .parse()
        .unwrap_or_else(|e| panic!("{e}: {culprit:?}"));
    assert!((39.5..=40.5).contains(&size), "{culprit}");
    assert_eq!(checkouts_left(repo.path()), 0);
}

/// `c7: change 7` → 7.
fn subject_number(subject: &str) -> usize {
    subject[1..subject.find(':').unwrap()].parse().unwrap()
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn a_range_with_no_real_change_blames_nobody() {
    let repo = go_history();
    // c8..c12 run the same code, but builds and a busy machine can still shift a median by a
    // few percent now and then; --threshold is how a user says which change is worth a search.
    let options = ["--good", "HEAD~4", "--bad", "HEAD", "--threshold", "15"];
    let out = bisect(repo.path(), &options, &GO);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("good and bad do not differ by 15% or more"),
        "{stderr}"
    );
    assert!(!stdout.contains("first bad commit"), "{stdout}");
    assert_eq!(checkouts_left(repo.path()), 0);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn exec_bisect_times_a_command_of_each_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q", "-b", "main"]);
    let script = |n: u32| format!("i=0\nwhile [ $i -lt {n} ]; do i=$((i+1)); done\n");
    std::fs::write(repo.join("work.sh"), script(20_000)).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "e0: a loop"]);
    for i in 1..=4 {
        if i == 3 {
            std::fs::write(repo.join("work.sh"), script(60_000)).unwrap();
        }
        std::fs::write(repo.join("notes.txt"), format!("{i}\n")).unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", &format!("e{i}: step {i}")]);
    }
    let options = ["--good", "HEAD~4", "--bad", "HEAD", "--threshold", "20%"];
    let out = bisect(repo, &options, &["exec", "sh", "work.sh"]);
    assert_names(&out, "e3: step 3", "wall");
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn an_interrupted_bisect_exits_130_and_leaves_no_checkout() {
    let repo = go_history();
    let root = repo.path().to_str().unwrap();
    let _cores = crate::common::measuring();
    let mut job = Job::start(
        &[
            "bisect",
            "--good",
            "HEAD~12",
            "--bad",
            "HEAD",
            "--rounds",
            "1000",
            "--max-rounds",
            "1000",
            "--dir",
            root,
            "--",
            "go",
            ".",
            "-benchtime",
            "200x",
        ],
        repo.path(),
    );
    // Wait until the ends are checked out and measuring.
    crate::common::wait_until("the ends are checked out", || {
        checkouts_left(repo.path()) == 2
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    job.ctrl_c();
    let out = job.finish("interrupted bisect");
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert_eq!(checkouts_left(repo.path()), 0);
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn bad_usage_exits_2() {
    let repo = go_history();
    for (args, expected) in [
        (
            vec!["--good", "HEAD", "--bad", "HEAD~3", "--", "go"],
            "must be an ancestor",
        ),
        (
            vec!["--good", "HEAD~3", "--bad", "HEAD", "--", "cargo"],
            "is no harness",
        ),
        (
            vec!["--good", "nope", "--bad", "HEAD", "--", "go"],
            "`nope` is not a commit",
        ),
        (
            vec!["--good", "@latest", "--bad", "HEAD", "--", "go"],
            "give both --good and --bad as stored runs",
        ),
        (
            vec![
                "--good", "HEAD~3", "--bad", "HEAD", "--runs", "1", "--", "go",
            ],
            "at least 2 rounds",
        ),
        (
            vec![
                "--good",
                "HEAD~3",
                "--bad",
                "HEAD",
                "--runs",
                "4",
                "--max-runs",
                "6",
                "--",
                "go",
            ],
            "--runs N fixes the rounds",
        ),
    ] {
        let out = latkit()
            .arg("bisect")
            .args(["--dir", repo.path().to_str().unwrap()])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // An end that fails is the harness's failure (a peer, exit 6), not bad usage.
    let out = latkit()
        .arg("bisect")
        .args(["--dir", repo.path().to_str().unwrap()])
        .args(["--good", "HEAD~3", "--bad", "HEAD", "--", "exec", "false"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    // Each round draws which end runs first: either may be the one that failed.
    assert!(
        stderr.contains("the good end failed to run")
            || stderr.contains("the bad end failed to run"),
        "{stderr}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn gbench_bisect_builds_each_checkout_and_names_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q", "-b", "main"]);
    let source = |steps: u32| {
        format!(
            "#include <benchmark/benchmark.h>\n#include <cstdint>\n\
             static void BM_Work(benchmark::State& state) {{\n  for (auto _ : state) {{\n\
             \x20   uint64_t x = 1;\n    for (int i = 0; i < {steps}; ++i) {{ x = x * 6364136223846793005ULL + 1; benchmark::DoNotOptimize(x); }}\n\
             \x20 }}\n}}\nBENCHMARK(BM_Work);\nBENCHMARK_MAIN();\n"
        )
    };
    std::fs::write(repo.join("bench.cc"), source(20_000)).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "g0: the benchmark"]);
    for i in 1..=4 {
        if i == 3 {
            std::fs::write(repo.join("bench.cc"), source(60_000)).unwrap();
        }
        std::fs::write(repo.join("notes.txt"), format!("{i}\n")).unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", &format!("g{i}: step {i}")]);
    }
    let build = "g++ -O2 bench.cc -lbenchmark -lpthread -o bench";
    let options = ["--good", "HEAD~4", "--bad", "HEAD", "--build", build];
    let out = bisect(
        repo,
        &options,
        &["gbench", "./bench", "--benchmark_min_time=0.02"],
    );
    assert_names(&out, "g3: step 3", "real_time");
    assert_eq!(checkouts_left(repo), 0);
}

/// A bisect killed outright (SIGKILL: no cleanup of its own runs) leaves its scratch
/// directory; the next bisect removes it, and leaves a running one's alone.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git and go; `--features interop` runs it"
)]
fn scratch_left_by_a_killed_bisect_is_removed_by_the_next() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let (repo, tmp) = (dir.path().join("repo"), dir.path().join("tmp"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("work.sh"), "sleep 0.05\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "s0"]);
    std::fs::write(repo.join("work.sh"), "sleep 0.2\n").unwrap();
    git(&repo, &["commit", "-qam", "s1"]);
    let scratch = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("latkit-bisect-"))
            .collect()
    };
    let _cores = crate::common::measuring();
    // A bisect of the two commits, its scratch in `tmp`.
    let bisect = |rounds: &str| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"));
        command
            .args(["bisect", "--good", "HEAD~1", "--bad", "HEAD"])
            .args(["--rounds", rounds, "--max-rounds", rounds])
            .arg("--dir")
            .arg(&repo)
            .args(["--", "exec", "sh", "work.sh"])
            .env("TMPDIR", &tmp)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        command
    };
    let mut killed = bisect("50").spawn().unwrap();
    crate::common::wait_until("a scratch directory", || !scratch().is_empty());
    killed.kill().unwrap();
    killed.wait().unwrap();
    let left = scratch();
    assert!(!left.is_empty());
    let status = bisect("5").status().unwrap();
    assert!(status.code().is_some(), "{status:?}");
    assert!(
        scratch().iter().all(|name| !left.contains(name)),
        "{left:?} still there"
    );
}

/// A repository's own commands are not latkit's to run: `git worktree add` for each commit
/// runs neither its `core.fsmonitor` nor a post-checkout hook under `core.hooksPath`, and a
/// revision that git would read as an option (`merge-base:--octopus`) is refused (exit 2).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git; `--features interop` runs it"
)]
fn checkouts_run_none_of_the_repositorys_hooks_and_no_revision_is_an_option() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let marker = dir.path().join("ran");
    let hook = dir.path().join("hook.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho \"$0\" >> '{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = dir.path().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    std::fs::copy(&hook, hooks.join("post-checkout")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for i in 0..3 {
        std::fs::write(repo.join("n.txt"), format!("{i}\n")).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", &format!("c{i}")]);
    }
    git(&repo, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    git(
        &repo,
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    );
    let _ = std::fs::remove_file(&marker);
    let out = latkit()
        .args([
            "bisect", "--good", "HEAD~2", "--bad", "HEAD", "--rounds", "3",
        ])
        .arg("--dir")
        .arg(&repo)
        .args(["--", "exec", "true"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    assert!(
        !marker.exists(),
        "a hook ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    assert_eq!(checkouts_left(&repo), 0);
    for args in [
        &["go", ".", "--interleave", "merge-base:--octopus"][..],
        &[
            "bisect",
            "--good=--all",
            "--bad",
            "HEAD",
            "--",
            "exec",
            "true",
        ],
    ] {
        let out = latkit().current_dir(&repo).args(args).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains("does not start with `-`"), "{said}");
    }
}
