//! latkit under misuse and attack: special files as outputs, hostile names, panics on
//! degenerate inputs. Special files are made with mknod/mkfifo in a temporary directory, never
//! on the machine's /dev.

use crate::common::{latkit, vector};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// `latkit parse` of the Go vector written to `out` as CSV.
fn parse_to(out: &Path) -> std::process::Output {
    latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .args(["--format", "csv", "--out"])
        .arg(out)
        .output()
        .unwrap()
}

/// `dir/null`: the same device as /dev/null (1, 3), made here (root only).
fn null_device(dir: &Path) -> std::path::PathBuf {
    let null = dir.join("null");
    nix::sys::stat::mknod(
        &null,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .unwrap();
    null
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs root (makes a device node); `--features interop` runs it"
)]
fn a_character_device_is_written_through_never_replaced() {
    assert!(
        crate::common::is_root(),
        "this test makes a device node: run it as root (CI does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let null = null_device(dir.path());
    for extra in [vec![], vec!["--json"]] {
        let mut cmd = latkit();
        cmd.arg("parse").arg(vector("viiper-count3.gobench.txt"));
        if extra.is_empty() {
            cmd.arg("--out").arg(&null);
        } else {
            cmd.arg("--json").arg(&null).args(["--format", "csv"]);
        }
        let out = cmd.output().unwrap();
        crate::common::assert_succeeded(&out);
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(
            kind.is_char_device(),
            "{extra:?}: the device is still a device"
        );
    }
    // Nothing was left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_fifo_reader_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // An end of our own on the FIFO (read-write never blocks) keeps the reader from waiting for
    // ever should latkit not write to it: closing ours ends the reader's input either way.
    let ours = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = parse_to(&fifo);
    crate::common::assert_succeeded(&out);
    drop(ours);
    let got = reader.join().unwrap();
    assert!(got.starts_with("table,cycle,Benchmark"), "{got}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_symlink_keeps_pointing_and_its_target_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.csv");
    let link = dir.path().join("latest.csv");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = parse_to(&link);
    crate::common::assert_succeeded(&out);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("table,cycle")
    );
}

/// `--out /dev/stdout`, through a link of its own in a temporary directory (the machine's
/// /dev/stdout is what a broken latkit would replace).
#[test]
fn dev_stdout_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout).unwrap();
    let out = parse_to(&stdout);
    crate::common::assert_succeeded(&out);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("table,cycle,Benchmark"));
    assert!(
        std::fs::symlink_metadata(&stdout)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// `text` with `from` replaced, written to `dir/name`.
fn edited(dir: &Path, name: &str, text: &str, from: &str, to: &str) -> std::path::PathBuf {
    assert!(text.contains(from), "{from}");
    let path = dir.join(name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path
}

#[test]
fn a_budget_of_nothing_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let targets =
        std::fs::read_to_string(crate::common::fixture("check/rootstream-targets.toml")).unwrap();
    for total in ["0 ms", "1e-400 ms", "-5 ms"] {
        let file = edited(
            dir.path(),
            "t.toml",
            &targets,
            "total = \"20 ms\"",
            &format!("total = \"{total}\""),
        );
        let out = latkit()
            .args(["check", "--targets"])
            .arg(&file)
            .arg(vector("rootstream-bench.txt"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{total}: {err}");
        assert!(
            err.contains("t.toml:20: budget total") && err.contains("more than zero"),
            "{err}"
        );
    }
    let spec = std::fs::read_to_string(crate::common::fixture("page/sdk-page.toml")).unwrap();
    let file = edited(
        dir.path(),
        "p.toml",
        &spec,
        "budget = \"16.67 ms\"",
        "budget = \"0 ms\"",
    );
    let out = latkit()
        .args(["page", "--spec"])
        .arg(&file)
        .arg(crate::common::fixture("page/sdk.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("p.toml:16: budget `0 ms` must be more than zero")
    );
}

#[test]
fn a_page_of_zero_times_has_infinite_factors_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(crate::common::fixture("page/sdk.json")).unwrap())
            .unwrap();
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        b["real_time"] = 0.into();
        b["cpu_time"] = 0.into();
    }
    let zero = dir.path().join("zero.json");
    std::fs::write(&zero, doc.to_string()).unwrap();
    let page = crate::common::stdout_of(
        latkit()
            .args(["page", "--spec"])
            .arg(crate::common::fixture("page/sdk-page.toml"))
            .arg(&zero),
    );
    assert!(page.contains("~∞x headroom"), "{page}");
}

/// A benchmark name that clears the screen, sets the window title and opens a script tag.
const EVIL: &str = "BenchmarkEvil\u{1b}[2J\u{1b}]0;pwned\u{7}<script>alert(1)</script>";

fn controls(bytes: &[u8], keep_lines: bool) -> Vec<u8> {
    bytes
        .iter()
        .copied()
        .filter(|&b| (b < 0x20 || b == 0x7f) && !(keep_lines && matches!(b, b'\n' | b'\r' | b'\t')))
        .collect()
}

#[test]
fn control_characters_from_input_never_act() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("evil.txt");
    std::fs::write(
        &input,
        format!("{EVIL}-8 100 5 ns/op\n{EVIL}-8 100 6 ns/op\n{EVIL} 1 x\u{1b}[31m ns/op\n"),
    )
    .unwrap();
    let svg = dir.path().join("evil.svg");
    for format in ["table", "markdown", "html", "csv"] {
        let out = latkit()
            .arg("parse")
            .arg(&input)
            .args(["--format", format, "--plot"])
            .arg(&svg)
            .args(["--plot-kind", "bars"])
            .output()
            .unwrap();
        crate::common::assert_succeeded(&out);
        // The malformed third line is a warning on stderr, with its text.
        assert!(!out.stderr.is_empty());
        assert_eq!(
            controls(&out.stderr, true),
            b"\n".repeat(controls(&out.stderr, true).len())
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
            "{format}: {stdout}"
        );
        // A terminal runs no HTML; markdown and HTML viewers might.
        if matches!(format, "markdown" | "html") {
            assert!(!stdout.contains("<script"), "{format}: {stdout}");
        }
        let drawn = std::fs::read(&svg).unwrap();
        assert!(
            controls(&drawn, true)
                .iter()
                .all(|b| matches!(b, b'\n' | b'\r' | b'\t'))
        );
    }
    // A page title is markdown too.
    let spec = dir.path().join("page.toml");
    std::fs::write(
        &spec,
        "title = \"<script>alert(1)</script>\"\n[[glance]]\ntask = \"t\"\nbench = \"BM_Write\"\n",
    )
    .unwrap();
    let page = crate::common::stdout_of(
        latkit()
            .args(["page", "--spec"])
            .arg(&spec)
            .arg(crate::common::fixture("page/sdk.json")),
    );
    assert!(page.starts_with("# &lt;script>"), "{page}");
}

/// A store another user owns reads as it is (list, history, show, export): reading writes
/// nothing, so it needs no write access.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs root (reads as uid 65534); `--features interop` runs it"
)]
fn a_store_this_user_may_not_write_can_be_read() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        crate::common::is_root(),
        "this test reads a root-owned store as uid 65534: run it as root"
    );
    let nobody = crate::common::Nobody::new();
    let db = nobody.dir.path().join("history.db");
    let db = db.to_str().unwrap();
    let stored = latkit()
        .args(["store", "add", "-q", "--db", db])
        .arg(vector("viiper-count3.gobench.txt"))
        .output()
        .unwrap();
    crate::common::assert_succeeded(&stored);
    std::fs::set_permissions(db, std::fs::Permissions::from_mode(0o644)).unwrap();
    for args in [
        vec!["store", "list"],
        vec!["store", "show", "@latest"],
        vec!["store", "export", "@latest"],
        vec!["history", "Benchmark_Xbox360_Delay*"],
    ] {
        let out = nobody
            .latkit()
            .args(&args)
            .args(["--db", db])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?} as uid 65534: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    // Nothing was written beside it (the folder holds the store and latkit's copy).
    let mut names: Vec<String> = std::fs::read_dir(nobody.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["history.db", "latkit"]);
}

/// Past `ulimit -f` a write fails with an output error latkit reports (exit 4, no temporary
/// file left), instead of SIGXFSZ killing it silently.
#[test]
fn a_file_size_limit_is_an_error_not_a_silent_death() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("big.json");
    let out =
        std::process::Command::new(crate::common::peer("prlimit", "apt-get install util-linux"))
            .arg("--fsize=2000")
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .arg("parse")
            .arg(vector("viiper-steamdeck.gobench.txt"))
            .args(["--format", "json", "--out"])
            .arg(&out_path)
            .output()
            .unwrap();
    assert_eq!(out.status.code(), Some(4), "{:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stderr).contains("File too large"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("c.txt");
    std::fs::copy(vector("viiper-count3.gobench.txt"), &results).unwrap();
    let before = std::fs::read(&results).unwrap();
    for command in [
        vec!["parse", "c.txt", "--out", "./c.txt"],
        vec!["parse", "c.txt", "--json", "c.txt"],
        vec!["compare", "c.txt", "c.txt", "--out", "c.txt"],
    ] {
        let out = latkit()
            .current_dir(dir.path())
            .args(&command)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("names the same file as"));
    }
    assert_eq!(
        std::fs::read(&results).unwrap(),
        before,
        "the input is untouched"
    );
}

/// A revision git cannot find is named, with no empty cause after it.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git; `--features interop` runs it"
)]
fn a_bad_revision_names_itself() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new(crate::common::peer("git", "apt-get install git"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("go.mod"), "module example.com/x\n").unwrap();
    let out = latkit()
        .current_dir(dir.path())
        .args(["go", ".", "--interleave", "no-such-rev"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.trim_end().ends_with(&format!(
            "`no-such-rev` is not a commit of {}",
            dir.path().canonicalize().unwrap().display()
        )),
        "{err}"
    );
}

/// A command that fails before any run is stored leaves no empty store behind; one that
/// stores keeps it.
#[test]
fn a_failed_run_leaves_no_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let failed = latkit()
        .args(["exec", "--store", "-q", "--runs", "2", "--db"])
        .arg(&db)
        .args(["no-such-command-latkit"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(2));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no store was left"
    );
    let stored = latkit()
        .args(["exec", "--store", "-q", "--runs", "2", "--db"])
        .arg(&db)
        .args(["true"])
        .output()
        .unwrap();
    assert!(stored.status.success());
    assert!(db.exists());
}

/// latkit's JSON from the first schema (v1: no metric `kind`, no tool's own summary) stays
/// readable: its timer per-interval figures are series again.
#[test]
fn a_v1_document_is_migrated_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = crate::common::json_of(
        latkit()
            .arg("parse")
            .arg(vector("xenomai-latency-h.txt"))
            .args(["--format", "json"]),
    );
    doc["schema"] = "latkit.result.v1".into();
    for bench in doc["runs"][0]["benchmarks"].as_array_mut().unwrap() {
        let bench = bench.as_object_mut().unwrap();
        bench.remove("timer");
        for metric in bench["metrics"].as_array_mut().unwrap() {
            let metric = metric.as_object_mut().unwrap();
            for derived in ["kind", "summary", "percentiles"] {
                metric.remove(derived);
            }
        }
    }
    let v1 = dir.path().join("v1.json");
    std::fs::write(&v1, doc.to_string()).unwrap();
    let back = crate::common::json_of(latkit().arg("parse").arg(&v1).args(["--format", "json"]));
    let bench = &back["runs"][0]["benchmarks"][0];
    assert_eq!(
        crate::common::metric(bench, "interval_max")["kind"],
        "series"
    );
    assert!(crate::common::metric(bench, "latency")["percentiles"]["p99"].is_number());
    assert!(
        back["notes"]
            .to_string()
            .contains("latkit.result.v1 document")
    );
}

fn times_of(doc: &serde_json::Value, name: &str) -> Vec<f64> {
    doc["runs"][0]["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .map(|b| {
            crate::common::metric(b, "time")["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// Ctrl-C on a terminal reaches latkit and the command it times alike. The commands that
/// finished are printed, written and stored, the run cut short is no sample (even with -i),
/// and the exit code is 130. The first command's results are on disk before the second starts.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real signals and real processes on the real clock; `--features interop` runs it"
)]
fn ctrl_c_keeps_every_finished_run_and_discards_the_one_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut job = crate::common::Job::start(
        &[
            "exec",
            "-i",
            "--runs",
            "5",
            "--json",
            "r.json",
            "--store",
            "--db",
            "h.db",
            "sleep 0.05",
            "sleep 0.4",
        ],
        dir.path(),
    );
    crate::common::wait_until("the first command's results are written", || json.exists());
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(times_of(&first, "sleep 0.05").len(), 5);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    job.ctrl_c();
    let out = job.finish("Ctrl-C");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("sleep 0.05"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(times_of(&doc, "sleep 0.05").len(), 5);
    let second = times_of(&doc, "sleep 0.4");
    assert!(second.len() < 5, "{second:?}");
    assert!(
        second.iter().all(|t| *t >= 0.4),
        "a run cut short became a sample: {second:?}"
    );
    assert!(
        doc["notes"]
            .to_string()
            .contains("in progress was discarded")
    );
    let listed = latkit()
        .current_dir(dir.path())
        .args(["store", "list", "--db", "h.db", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let stored: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(stored.as_array().unwrap().len(), 1);
    assert_eq!(
        stored[0]["benchmarks"].as_u64().unwrap() as usize,
        doc["runs"][0]["benchmarks"].as_array().unwrap().len()
    );
}

/// A command that ignores SIGINT and SIGTERM is killed, with everything it started, after
/// the grace period; nothing it did counts as a sample.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real signals and real processes on the real clock; `--features interop` runs it"
)]
fn a_command_deaf_to_interrupts_is_killed_after_a_grace() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = crate::common::Job::start(
        &[
            "exec",
            "--runs",
            "2",
            "--json",
            "r.json",
            "true",
            "sh -c 'trap \"\" INT TERM; sleep 3001; sleep 3001'",
        ],
        dir.path(),
    );
    let json = dir.path().join("r.json");
    crate::common::wait_until("the first command's results are written", || json.exists());
    std::thread::sleep(std::time::Duration::from_millis(300));
    job.ctrl_c();
    let out = job.finish("a deaf command");
    assert_eq!(out.status.code(), Some(130));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(times_of(&doc, "true").len(), 2);
    assert_eq!(doc["runs"][0]["benchmarks"].as_array().unwrap().len(), 1);
    // The sleeps it started are gone too (SIGKILL is delivered, not waited for: bounded poll).
    crate::common::wait_until("the command's sleeps are killed", || {
        std::process::Command::new(crate::common::peer("pgrep", "apt-get install procps"))
            .args(["-f", "sleep 3001"])
            .output()
            .unwrap()
            .stdout
            .is_empty()
    });
}

/// A CI job's time limit: GNU timeout sends SIGTERM (to latkit and its group). The finished
/// runs are reported and the exit code is latkit's 130.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real signals and real processes on the real clock; `--features interop` runs it"
)]
fn a_ci_time_limit_reports_what_finished() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        std::process::Command::new(crate::common::peer("timeout", "apt-get install coreutils"))
            .args(["--preserve-status", "-s", "TERM", "2"])
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .args(["exec", "--runs", "1000", "sleep 0.1", "--format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let times = times_of(&doc, "sleep 0.1");
    assert!(
        !times.is_empty() && times.iter().all(|t| *t >= 0.1),
        "{times:?}"
    );
}

/// Scripts pass `-q` to every latkit command: the store's and history's accept it, and
/// `store rm -q` says nothing.
#[test]
fn every_store_command_takes_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let db = db.to_str().unwrap();
    for _ in 0..2 {
        crate::common::assert_succeeded(
            &latkit()
                .args(["store", "add", "-q", "--db", db])
                .arg(vector("viiper-count3.gobench.txt"))
                .output()
                .unwrap(),
        );
    }
    for args in [
        vec!["store", "list", "-q"],
        vec!["store", "show", "-q", "@latest"],
        vec!["store", "export", "-q", "@latest"],
        vec!["history", "-q", "Benchmark_Xbox360_Delay*"],
    ] {
        let out = latkit().args(&args).args(["--db", db]).output().unwrap();
        crate::common::assert_succeeded(&out);
        assert!(!out.stdout.is_empty(), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
    }
    let removed = latkit()
        .args(["store", "rm", "-q", "@latest", "--db", db])
        .output()
        .unwrap();
    crate::common::assert_succeeded(&removed);
    assert!(removed.stdout.is_empty() && removed.stderr.is_empty());
    let left = latkit()
        .args(["store", "list", "--format", "json", "--db", db])
        .output()
        .unwrap();
    let left: serde_json::Value = serde_json::from_slice(&left.stdout).unwrap();
    assert_eq!(left.as_array().unwrap().len(), 1);
}

/// An output option naming a file the command reads (by any spelling: `./`, a symbolic link)
/// is refused before anything runs, exit 2, and the file is left as it was; every output and
/// every kind of input, spec and store.
#[test]
fn no_output_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(vector("viiper-count3.gobench.txt"), d.join("in.txt")).unwrap();
    std::fs::copy(vector("viiper-count3.gobench.txt"), d.join("b.txt")).unwrap();
    std::fs::copy(
        crate::common::fixture("page/sdk-page.toml"),
        d.join("s.toml"),
    )
    .unwrap();
    std::fs::copy(crate::common::fixture("page/sdk.json"), d.join("x.json")).unwrap();
    std::fs::write(
        d.join("t.toml"),
        "[[target]]\nbenchmark = \"*\"\nmetric = \"ns/op\"\nmax = 1e12\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("in.txt", d.join("link")).unwrap();
    let before: Vec<Vec<u8>> = ["in.txt", "b.txt", "s.toml", "x.json", "t.toml"]
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    for args in [
        "parse in.txt --plot in.txt",
        "parse in.txt --out ./link",
        "compare in.txt b.txt --plot in.txt",
        "check --targets t.toml in.txt --out t.toml",
        "check --targets t.toml in.txt --junit ./t.toml",
        "parse in.txt --check t.toml --json t.toml",
        "page --spec s.toml x.json --out s.toml",
        "parse in.txt --db link",
        "parse in.txt --export-markdown in.txt",
        "parse in.txt --export-csv ./in.txt",
        "parse in.txt --json x.json --export-markdown x.json",
        "exec --check t.toml true --export-markdown t.toml",
        // Any word of a measured command that names a file: `cat in.txt`, `./prog`.
        "exec --output in.txt cat\tin.txt",
        "exec --output ./b.txt ./b.txt\t--version",
    ] {
        let out = latkit()
            .current_dir(d)
            .args(args.split(' ').map(|a| a.replace('\t', " ")))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {stderr}");
        assert!(
            stderr.contains("names the same file as"),
            "{args}: {stderr}"
        );
    }
    let after: Vec<Vec<u8>> = ["in.txt", "b.txt", "s.toml", "x.json", "t.toml"]
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    assert!(before == after, "an input was changed");
}

/// Reports follow the umask as `open(2)` would (under `umask 077` nobody else reads them), and
/// an existing file keeps its mode and its owner when latkit (root here) writes it again.
#[test]
fn outputs_follow_the_umask_and_keep_an_existing_files_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let report = |umask: &str, out: &Path| {
        let run = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" parse \"$1\" --format csv --out \"$2\""
            ))
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .arg(vector("viiper-count3.gobench.txt"))
            .arg(out)
            .output()
            .unwrap();
        crate::common::assert_succeeded(&run);
        std::fs::metadata(out).unwrap()
    };
    let fresh = dir.path().join("fresh.csv");
    assert_eq!(report("077", &fresh).mode() & 0o777, 0o600);
    let shared = dir.path().join("shared.csv");
    assert_eq!(report("002", &shared).mode() & 0o777, 0o664);
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(report("077", &shared).mode() & 0o777, 0o640);
    if crate::common::is_root() {
        std::os::unix::fs::chown(&shared, Some(65534), Some(65534)).unwrap();
        let meta = report("022", &shared);
        assert_eq!(
            (meta.uid(), meta.gid(), meta.mode() & 0o777),
            (65534, 65534, 0o640)
        );
    }
}

/// A store is a regular SQLite file or a new path: `--db` naming a device, a FIFO or a
/// directory is refused, exit 2, and nothing is created beside it (SQLite made
/// `null-journal` next to a device before).
#[test]
fn a_store_on_a_device_or_fifo_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let mut places = vec![fifo, dir.path().join("folder")];
    std::fs::create_dir(&places[1]).unwrap();
    if crate::common::is_root() {
        let null = null_device(dir.path());
        places.push(null);
    }
    for db in &places {
        for args in [
            vec!["store", "list"],
            vec![
                "parse",
                "--store",
                vector("viiper-count3.gobench.txt").to_str().unwrap(),
            ],
        ] {
            let out = latkit().args(&args).arg("--db").arg(db).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{args:?} {}: {stderr}",
                db.display()
            );
            assert!(stderr.contains("not a history store"), "{stderr}");
        }
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected = vec!["fifo", "folder"];
    if crate::common::is_root() {
        expected.push("null");
    }
    assert_eq!(left, expected);
}

/// A name with a newline, an escape, `:` and `%` cannot forge a second `BENCH` line or reach
/// the terminal raw: `--format bench` escapes it, and latkit reads back exactly that name.
#[test]
fn bench_lines_carry_any_name_and_read_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "a b\nBENCH forged: min=1us\u{1b}[2J 50%:\t";
    let text = std::fs::read_to_string(vector("hyperfine-1.15.json"))
        .unwrap()
        .replacen("\"sleep 0.01\"", &serde_json::to_string(evil).unwrap(), 1);
    let input = dir.path().join("h.json");
    std::fs::write(&input, text).unwrap();
    let lines = crate::common::stdout_of(
        latkit()
            .arg("parse")
            .arg(&input)
            .args(["--format", "bench"]),
    );
    assert!(!lines.contains('\u{1b}'), "{lines}");
    assert!(
        lines
            .lines()
            .all(|l| l.starts_with("BENCH ") && !l.contains("BENCH forged")),
        "{lines}"
    );
    let written = dir.path().join("lines.txt");
    std::fs::write(&written, &lines).unwrap();
    let doc = crate::common::json_of(latkit().arg("parse").arg(&written).args([
        "--input-format",
        "bench",
        "--format",
        "json",
    ]));
    let names: Vec<&str> = doc["runs"][0]["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["full_name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&evil), "{names:?}");
    assert_eq!(names.len(), lines.lines().count());
}

/// A benchmark name carrying markup, quotes, tabs, line breaks and an escape reaches JUnit
/// XML well-formed, and an XML 1.0 parser reads every character back that XML 1.0 can hold.
#[test]
fn junit_is_well_formed_whatever_the_names() {
    let dir = tempfile::tempdir().unwrap();
    // No glob characters: a target's `bench` is a pattern.
    let evil = "a<b>&\"c'\td\ne\u{1b}(0\u{7f}";
    let text = std::fs::read_to_string(vector("hyperfine-1.15.json"))
        .unwrap()
        .replacen("\"sleep 0.01\"", &serde_json::to_string(evil).unwrap(), 1);
    std::fs::write(dir.path().join("h.json"), text).unwrap();
    let targets = format!(
        "[[target]]\nbench = {}\nmetric = \"time\"\nbelow = \"1 us\"\n",
        toml::Value::String(evil.into())
    );
    std::fs::write(dir.path().join("t.toml"), targets).unwrap();
    latkit()
        .current_dir(dir.path())
        .args(["check", "--targets", "t.toml", "h.json", "--junit", "j.xml"])
        .assert()
        .code(1);
    let xml = std::fs::read_to_string(dir.path().join("j.xml")).unwrap();
    assert!(!xml.contains('\u{1b}'), "{xml}");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    // ESC cannot be in XML 1.0 in any form: it is shown as a symbol, the rest is exact.
    assert_eq!(
        case.attribute("classname"),
        Some("a<b>&\"c'\td\ne\u{241b}(0\u{7f}")
    );
    assert!(case.children().any(|n| n.has_tag_name("failure")), "{xml}");
}

/// Every byte of every place a run is written to, with the secrets given on the command line.
fn holds(path: &Path, secret: &str) -> bool {
    std::fs::read(path)
        .unwrap()
        .windows(secret.len())
        .any(|w| w == secret.as_bytes())
}

/// `json` added to the store `db`, then exported again beside it: the export's path.
fn stored_and_exported(json: &Path, db: &Path) -> std::path::PathBuf {
    latkit()
        .args(["store", "add"])
        .arg(json)
        .arg("--db")
        .arg(db)
        .assert()
        .success();
    let out = latkit()
        .args(["store", "export", "@latest", "--db"])
        .arg(db)
        .output()
        .unwrap();
    crate::common::assert_succeeded(&out);
    let export = db.with_extension("export.json");
    std::fs::write(&export, out.stdout).unwrap();
    export
}

/// `--token` and a password in `--db` (or in a connection string anywhere on the command
/// line) reach no sink: not JSON, HTML, CSV, the store, its export, nor a report read back
/// from an old file that held them.
#[test]
fn no_secret_is_written_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let token = "tok3n-s3cret";
    let password = "pa55-s3cret";
    let url = format!("postgres://ci:{password}@127.0.0.1:1/bench");
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    latkit()
        .args([
            "net", "loopback", "--test", "tcp-rtt", "--count", "20", "--warmup", "0",
        ])
        .args(["--token", token, "--format", "json", "--out"])
        .arg(&json)
        .arg("--json")
        .arg(dir.path().join("again.json"))
        .assert()
        .success();
    // `--db` of a command that stores: the URL is kept without its password.
    latkit()
        .args([
            "net", "loopback", "--test", "tcp-rtt", "--count", "20", "--warmup", "0",
        ])
        .arg(format!("--token={token}"))
        .args(["--format", "html", "--out"])
        .arg(&html)
        .args(["--db", &url])
        .assert()
        .success();
    let export = stored_and_exported(&json, &db);
    for file in [&json, &html, &db, &export, &dir.path().join("again.json")] {
        for secret in [token, password] {
            assert!(!holds(file, secret), "{secret} in {}", file.display());
        }
    }
    let html_text = std::fs::read_to_string(&html).unwrap();
    assert!(
        html_text.contains("postgres://ci@127.0.0.1:1/bench"),
        "the location stays"
    );
    // A file written before redaction: its secrets are dropped on reading.
    let old =
        std::fs::read_to_string(&json)
            .unwrap()
            .replacen("\"***\"", &format!("\"{token}\""), 1);
    assert!(old.contains(token));
    let old_file = dir.path().join("old.json");
    std::fs::write(&old_file, old).unwrap();
    let again = crate::common::parse_as(&old_file, "json");
    assert!(!again.contains(token), "{again}");
}

/// Progress drawn on a terminal, `store add`'s line and `store list`'s tags show control
/// sequences and bidi overrides from a name, a path or a tag; none reaches the terminal raw
/// (OSC 52 would write the clipboard, OSC 8 make a link, CSI 2J clear the screen).
#[test]
fn progress_and_store_lines_show_controls_never_run_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hostile = "x\u{1b}]52;c;SGVsbG8=\u{7}\u{1b}[2J\u{1b}]8;;http://x\u{7}y\u{202e}z";
    // latkit's own cursor moves and line clears are its to send; the name's are not.
    let raw = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        ["\u{1b}]52", "\u{1b}[2J", "\u{1b}]8;", "\u{7}", "\u{202e}"]
            .iter()
            .any(|s| text.contains(s))
    };
    // On a terminal (util-linux's `script` gives the run one), the progress bar names it.
    let binary = assert_cmd::cargo::cargo_bin("latkit");
    let line = format!(
        "{} exec -n {} -r 20 'sleep 0.01'",
        binary.display(),
        shlex::try_quote(hostile).unwrap()
    );
    let typescript = d.join("typescript");
    let out = std::process::Command::new(crate::common::peer("script", "apt-get install bsdutils"))
        .args(["-q", "-e", "-c", &line])
        .arg(&typescript)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let drawn = std::fs::read(&typescript).unwrap();
    // The typescript's first line is script's own header, which quotes the command.
    let after_header = drawn.splitn(2, |&b| b == b'\n').nth(1).unwrap_or_default();
    assert!(after_header.len() > 20, "nothing drawn");
    assert!(
        !raw(after_header),
        "{}",
        String::from_utf8_lossy(after_header)
    );
    let input = d.join(format!("run{}.txt", hostile.replace('/', "_")));
    std::fs::copy(vector("viiper-count3.gobench.txt"), &input).unwrap();
    let db = d.join("s.db");
    for args in [
        vec!["store".into(), "add".into(), input.display().to_string()],
        vec!["store".into(), "list".into()],
    ] {
        let out = latkit()
            .args(&args)
            .args(["--tag", hostile, "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let shown = [out.stdout.clone(), out.stderr.clone()].concat();
        assert!(
            !raw(&shown),
            "{args:?}: {}",
            String::from_utf8_lossy(&shown)
        );
    }
}

/// A measured command's secrets, in every spelling users type, reach no output: not its name,
/// the JSON, the exports, the HTML, the store, the site, or the terminal.
#[test]
fn a_measured_commands_secrets_are_written_nowhere() {
    let d = assert_written_nowhere(
        &[],
        &[
            "true -u alice:SECRET1",
            "echo https://bob:SECRET2@host",
            "true --password=SECRET3",
            "true -H 'Authorization: Bearer SECRET4'",
            "env PGPASSWORD=SECRET5 true",
            "true --token SECRET6",
            "true postgres://ci:SECRET7@127.0.0.1:1/bench",
        ],
    );
    // Named by their redacted form, the user and host kept.
    let json = std::fs::read_to_string(d.path().join("a.json")).unwrap();
    assert!(
        json.contains("alice:***") && json.contains("bob:***@host"),
        "{json}"
    );
}

/// The spellings an audit found reaching every output (issue 75): headers joined to their
/// option, clients' own password flags (behind a wrapper too), `*_PWD`/`*_PASS` variables,
/// query keys, cookies, bodies. `true ||` keeps each client from running.
#[test]
fn the_spellings_users_type_for_secrets_are_written_nowhere() {
    let d = assert_written_nowhere(
        &["--shell", "sh"],
        &[
            "true || curl -H'Authorization: Bearer SECRET1' h",
            "true || curl --header='X-Goog-Api-Key: SECRET2' h",
            "true || sshpass -pSECRET3 ssh host",
            "true || redis-cli -a SECRET4 ping",
            "true || docker login -u me -p SECRET5 registry",
            "true || sudo mysql -pSECRET6 db",
            "MYSQL_PWD=SECRET7 true",
            "true 'https://h/p?key=SECRET8&page=2'",
            "true || curl -b 'session=SECRET9' h",
            r#"true -d '{"user":"a","password":"SECRET10"}'"#,
            "DB_PASS=SECRET11 true",
            "true || hey -a alice:SECRET12 http://h/",
        ],
    );
    let json = std::fs::read_to_string(d.path().join("a.json")).unwrap();
    assert!(
        json.contains("page=2") && json.contains("session=***"),
        "{json}"
    );
}

/// A secret given as a `-L` value, and one in a failing `--setup`, reach neither the name,
/// the JSON nor the terminal.
#[test]
fn a_secret_in_a_parameter_or_a_helper_is_written_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = latkit()
        .current_dir(dir.path())
        .args([
            "exec",
            "-r",
            "2",
            "-L",
            "url",
            "https://u:SECRET1@h/",
            "true {url}",
        ])
        .args(["--json", "a.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let written = [out.stdout, out.stderr].concat();
    assert!(!String::from_utf8_lossy(&written).contains("SECRET1"));
    let json = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert!(
        !json.contains("SECRET1") && json.contains("u:***@h"),
        "{json}"
    );
    for helper in ["--setup", "--prepare", "--conclude", "--cleanup"] {
        let out = latkit()
            .current_dir(dir.path())
            .args([
                "exec",
                "-r",
                "1",
                helper,
                "false --password SECRET2",
                "true",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(helper), "{stderr}");
        assert!(!stderr.contains("SECRET2"), "{stderr}");
    }
}

/// Runs `commands` (with `args`) into every output (JSON, exports, HTML, the store, the site,
/// the terminal) and checks that none holds `SECRETn` for any n; the folder they are in.
fn assert_written_nowhere(args: &[&str], commands: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = latkit()
        .current_dir(d)
        .args(["exec", "-r", "2"])
        .args(args)
        .args(commands)
        .args(["--json", "a.json", "--export-markdown", "a.md"])
        .args(["--export-csv", "a.csv", "--store", "--db", "s.db"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    latkit()
        .current_dir(d)
        .args([
            "parse", "a.json", "--format", "html", "--out", "a.html", "-q",
        ])
        .assert()
        .success();
    latkit()
        .current_dir(d)
        .args(["site", "--db", "s.db", "--out", "site", "-q"])
        .assert()
        .success();
    let terminal = [out.stdout, out.stderr].concat();
    let mut files = vec![d.join("a.json"), d.join("a.md"), d.join("a.csv")];
    files.extend([d.join("a.html"), d.join("s.db")]);
    files.extend(walk(&d.join("site")));
    for i in (1..=commands.len()).rev() {
        let secret = format!("SECRET{i}");
        assert!(
            !String::from_utf8_lossy(&terminal).contains(&secret),
            "{secret} on the terminal"
        );
        for file in &files {
            assert!(!holds(file, &secret), "{secret} in {}", file.display());
        }
    }
    dir
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        match entry.file_type().unwrap().is_dir() {
            true => files.extend(walk(&entry.path())),
            false => files.push(entry.path()),
        }
    }
    files
}

/// `store add` in a checkout reads its commit and dirty flag, and runs none of the
/// repository's own commands: a `core.fsmonitor` hook there is not latkit's to run.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git; `--features interop` runs it"
)]
fn storing_inside_a_checkout_runs_none_of_its_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let marker = dir.path().join("hook-ran");
    let hook = dir.path().join("fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    crate::common::git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    crate::common::git(&repo, &["add", "."]);
    crate::common::git(&repo, &["commit", "-qm", "a"]);
    crate::common::git(&repo, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    std::fs::write(repo.join("a.txt"), "changed\n").unwrap();
    latkit()
        .current_dir(&repo)
        .args(["store", "add"])
        .arg(vector("rootstream-bench.txt"))
        .arg("--db")
        .arg(dir.path().join("h.db"))
        .assert()
        .success();
    assert!(!marker.exists(), "the repository's fsmonitor hook ran");
    let listed = crate::common::stdout_of(
        latkit()
            .args(["store", "list", "--db"])
            .arg(dir.path().join("h.db")),
    );
    assert!(listed.contains("main"), "{listed}");
}

/// Ctrl-C before any timed run finished: exit 130, and a word on why nothing was reported.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "real signals and real processes on the real clock; `--features interop` runs it"
)]
fn exec_interrupted_before_its_first_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut job =
        crate::common::Job::start(&["exec", "--runs", "3", "--", "sleep", "20"], dir.path());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    job.ctrl_c();
    let out = job.finish("exec interrupted before its first run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was measured"), "{stderr}");
}

/// latkit's own errors say what and where in the user's terms: its line breaks are line
/// breaks, a missing folder is named (not the temporary file beside it), hyperfine's
/// `--shell "bash --norc"` runs, a bare repository and a 5-digit HdrHistogram are understood.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git; `--features interop` runs it"
)]
fn errors_say_what_went_wrong_in_the_users_terms() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "nothing here\n").unwrap();
    let out = latkit()
        .arg("parse")
        .arg(&empty)
        .args(["--input-format", "bench"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("looks like:\n  BENCH"), "{stderr}");
    assert!(!stderr.contains('\u{240a}'), "{stderr}");
    let missing = dir.path().join("no/such/r.txt");
    let out = latkit()
        .arg("parse")
        .arg(vector("rootstream-bench.txt"))
        .arg("--out")
        .arg(&missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(4),
        "an output that cannot be written: {stderr}"
    );
    assert!(
        stderr.contains("does not exist") && !stderr.contains(".partial"),
        "{stderr}"
    );
    latkit()
        .args(["exec", "-S", "bash --norc", "--runs", "2", "--", "true"])
        .assert()
        .success();
    let (work, bare) = (dir.path().join("work"), dir.path().join("bare.git"));
    std::fs::create_dir_all(&work).unwrap();
    crate::common::git(&work, &["init", "-q", "-b", "main"]);
    for step in ["one", "two"] {
        std::fs::write(work.join("step.txt"), step).unwrap();
        crate::common::git(&work, &["add", "."]);
        crate::common::git(&work, &["commit", "-qm", step]);
    }
    let clone = [
        "clone",
        "-q",
        "--bare",
        work.to_str().unwrap(),
        bare.to_str().unwrap(),
    ];
    crate::common::git(dir.path(), &clone);
    latkit()
        .args(["bisect", "--good", "HEAD~1", "--bad", "HEAD", "--dir"])
        .arg(&bare)
        .args(["--", "exec", "true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bare repository"));
    // HdrHistogram's finest resolution is 5 digits: such an interval is read, not skipped.
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 5).unwrap();
    h.record_n(123_456, 3).unwrap();
    let mut bytes = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2DeflateSerializer::new(),
        &h,
        &mut bytes,
    )
    .unwrap();
    use base64::Engine;
    let log = dir.path().join("fine.hlog");
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    std::fs::write(&log, format!("0.1,1.0,0.123,{encoded}\n")).unwrap();
    let doc = crate::common::json_of(latkit().arg("parse").arg(&log).args(["--format", "json"]));
    let latency = &doc["runs"][0]["benchmarks"][0]["metrics"][0];
    assert_eq!(latency["percentiles"]["count"], 3, "{doc}");
    assert_eq!(latency["percentiles"]["p50"], 123_456.0, "{doc}");
}

/// What latkit writes it reads back: the JSON of rtla and timerlat runs (no period given)
/// and `store export` of them.
#[test]
fn latkits_own_json_and_exports_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for fixture in [
        "rtla/real-6.1-timerlat-hist.txt",
        "rtla/real-6.1-timerlat-top-q.txt",
        "rtla/timerlat-trace-doc.txt",
    ] {
        let json = dir.path().join("run.json");
        std::fs::write(
            &json,
            crate::common::parse_as(&crate::common::fixture(fixture), "json"),
        )
        .unwrap();
        crate::common::parse_as(&json, "json");
        crate::common::parse_as(&stored_and_exported(&json, &db), "json");
    }
}

/// A location meant for PostgreSQL that the driver does not read (`POSTGRES://`, a space
/// before it, one slash) is refused (exit 2) without its password, and no SQLite file whose
/// path holds the password is made.
#[test]
fn a_near_miss_postgres_location_is_refused_not_made_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(vector("viiper-count3.gobench.txt"), d.join("in.txt")).unwrap();
    for location in [
        "POSTGRES://u:PW-s3cret@127.0.0.1:1/db",
        " postgres://u:PW-s3cret@127.0.0.1:1/db",
        "postgres:/u:PW-s3cret@127.0.0.1/db",
    ] {
        for args in [&["store", "list"][..], &["store", "add", "in.txt"]] {
            let out = latkit()
                .current_dir(d)
                .args(args)
                .args(["--db", location])
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{location} {args:?}: {said}");
            assert!(said.contains("not a PostgreSQL location"), "{said}");
            assert!(!said.contains("s3cret"), "{said}");
        }
    }
    let made: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(made, ["in.txt"], "files made: {made:?}");
}
