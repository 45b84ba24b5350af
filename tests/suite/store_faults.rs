//! A store that fails or stalls costs only itself: every other output of the run is written,
//! the exit is 4 (an output not written), and no store command waits forever on a server that
//! stopped answering.

use crate::common::latkit;
use crate::store_suite::PgServer;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// `exec` of `true` five times with `--store` at `url`, JSON and CSV written beside it, and
/// `--cleanup` doing `cleanup` to the server once the runs are done; its output.
fn exec_storing(dir: &Path, url: &str, cleanup: &str) -> std::process::Output {
    latkit()
        .current_dir(dir)
        .args(["exec", "--runs", "5", "--store", "--db", url])
        .args(["--json", "run.json", "--export-csv", "run.csv"])
        .args(["--cleanup", cleanup, "--", "true"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// The run's files hold its five runs, whatever became of the store.
fn outputs_written(dir: &Path) {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let time = &json["runs"][0]["benchmarks"][0]["metrics"][0];
    assert_eq!(time["name"], "time", "{json}");
    assert_eq!(time["values"].as_array().unwrap().len(), 5, "{json}");
    let csv = std::fs::read_to_string(dir.join("run.csv")).unwrap();
    assert!(csv.lines().count() >= 2, "{csv}");
}

#[test]
fn a_server_that_went_away_loses_the_store_only_and_exits_4() {
    let server = PgServer::start();
    let url = server.database_url("gone");
    let dir = tempfile::tempdir().unwrap();
    // SIGQUIT is PostgreSQL's immediate shutdown: the server and its backends end at once.
    let pid = server.pid().unwrap();
    let out = exec_storing(dir.path(), &url, &format!("kill -QUIT {pid}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("the run was not stored"), "{stderr}");
    assert!(
        stderr.contains("every other output was written"),
        "{stderr}"
    );
    outputs_written(dir.path());
}

#[test]
fn a_stalled_server_is_a_deadline_not_a_hang() {
    let server = PgServer::start();
    let url = format!("{}?connect_timeout=2", server.database_url("stalled"));
    let dir = tempfile::tempdir().unwrap();
    // SIGSTOP looks the same as a partition: the kernel still holds the connection open.
    let pid = server.pid().unwrap();
    let stop = format!("pkill -STOP -P {pid}; kill -STOP {pid}");
    let started = Instant::now();
    let out = exec_storing(dir.path(), &url, &stop);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("did not answer within 2 s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "{stderr}");
    outputs_written(dir.path());
    // Every store command meets the same deadline, on the stopped server as on one that
    // accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let silent_url = format!("postgres://latkit@127.0.0.1:{port}/x?connect_timeout=2");
    for location in [&url, &silent_url] {
        for command in [&["store", "list"][..], &["history"][..]] {
            let out = latkit()
                .args(command)
                .args(["--db", location])
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(5),
                "{command:?} {location}: {stderr}"
            );
            assert!(stderr.contains("did not answer within 2 s"), "{stderr}");
        }
    }
}

/// A store on a full disk (a 1 MiB tmpfs of the test's own, in a private mount namespace)
/// costs only itself too, and `store add` onto it is an output not written (exit 4).
#[test]
fn a_full_disk_under_the_store_loses_the_store_only_and_exits_4() {
    if !crate::common::is_root() {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("small")).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("latkit");
    let add = format!(
        "{} store add --db small/h.db {}",
        bin.display(),
        crate::common::vector("viiper-count3.gobench.txt").display()
    );
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs small && {add} && NO_COLOR=1 {bin} exec --runs 5 \
         --store --db small/h.db --json run.json --export-csv run.csv --cleanup 'head -c 2M \
         /dev/zero > small/fill || true' -- true; echo exec=$? >&2; {add}; echo add=$? >&2",
        bin = bin.display(),
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("exec=4\n"), "{stderr}");
    assert!(stderr.contains("the run was not stored"), "{stderr}");
    assert!(stderr.contains("add=4\n"), "{stderr}");
    outputs_written(dir.path());
}

/// Another user's store in a folder only they may enter is refused for what it is, not
/// called a store that is not there yet.
#[test]
fn a_store_in_a_folder_this_user_may_not_enter_says_so() {
    if !crate::common::is_root() {
        eprintln!("skipped: needs root to act as another user");
        return;
    }
    let nobody = crate::common::Nobody::new();
    let private = tempfile::tempdir().unwrap();
    let db = private.path().join("h.db");
    latkit()
        .args(["store", "add", "--db"])
        .arg(&db)
        .arg(crate::common::vector("viiper-count3.gobench.txt"))
        .assert()
        .success();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = nobody
        .latkit()
        .args(["store", "list", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(!stderr.contains("no history store there yet"), "{stderr}");
}
