//! exec's runs in-process: how many, in what order, what ends them, what is kept.

use super::{exec_json, latkit, machine, values};
use crate::commands::scripted::World;
use crate::error::Error;
use serde_json::Value;

#[test]
fn min_time_and_run_bounds_set_the_run_count_from_the_first_run() {
    let runs = |args: &[&str]| {
        let world = World::new(machine);
        let mut all = vec!["sleep 0.01"];
        all.extend(args);
        let (ended, doc) = exec_json(&world, &all);
        ended.unwrap();
        values(&doc, "sleep 0.01", "time")
    };
    // As hyperfine: the first run's time says how many fill --min-time.
    let filled = runs(&["--min-time", "0.2"]);
    assert_eq!(filled.len(), (0.2e9 / filled[0]).ceil() as usize);
    assert!(filled.len() > 10, "{}", filled.len());
    // hyperfine's default: at least 10 runs, however long the first one took.
    assert_eq!(runs(&["--min-time", "0"]).len(), 10);
    assert_eq!(runs(&["--min-time", "0", "--min-runs", "4"]).len(), 4);
    let bounded = ["--min-time", "10", "--max-runs", "5", "--min-runs", "2"];
    assert_eq!(runs(&bounded).len(), 5);
    assert_eq!(runs(&["--runs", "3", "--min-time", "10"]).len(), 3);
    let world = World::new(machine);
    let refused = latkit(
        &world,
        &["exec", "--min-runs", "5", "--max-runs", "2", "true"],
    );
    assert!(matches!(refused, Err(Error::Input(ref m)) if m.contains("below --min-runs")));
    assert!(
        world.spawned().is_empty(),
        "nothing runs: {:?}",
        world.spawned()
    );
}

#[test]
fn failures_stop_the_command_unless_ignored_and_missing_commands_are_the_users() {
    let world = World::new(machine);
    let failed = latkit(&world, &["exec", "--runs", "3", "false"]);
    assert!(
        matches!(failed, Err(Error::Peer(ref m)) if m.contains("--ignore-failure")),
        "{failed:?}"
    );
    assert_eq!(failed.unwrap_err().exit_code(), 6);
    assert_eq!(world.spawned(), ["false"], "the first failure stops it");

    let world = World::new(machine);
    let (ended, doc) = exec_json(&world, &["--runs", "3", "-i", "false"]);
    ended.unwrap();
    assert_eq!(values(&doc, "false", "time").len(), 3);
    assert!(
        doc["notes"]
            .to_string()
            .contains("3 of 3 runs exited non-zero")
    );

    let world = World::new(machine);
    let missing = latkit(&world, &["exec", "--runs", "2", "no-such-command"]);
    assert!(
        matches!(missing, Err(Error::Input(ref m)) if m.contains("no such command")),
        "{missing:?}"
    );
}

#[test]
fn dash_c_is_hyperfines_cleanup_never_a_command_to_time() {
    // `hyperfine -c 'make clean' make` typed as it is: `make` timed, `make clean` after.
    let world = World::new(machine);
    let (ended, doc) = exec_json(&world, &["-r", "2", "-c", "make clean", "make"]);
    ended.unwrap();
    let names: Vec<&str> = doc["runs"][0]["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["full_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["make"]);
    assert_eq!(world.spawned(), ["make", "make"]);
    assert_eq!(world.helpers(), ["--cleanup make clean"]);
}

#[test]
fn prepare_and_conclude_go_once_per_command_with_its_parameters() {
    let world = World::new(machine);
    let args = [
        "-r",
        "1",
        "-L",
        "n",
        "1,2",
        "-p",
        "pa {n}",
        "-p",
        "pb {n}",
        "-C",
        "end {n}",
        "-s",
        "build {n}",
        "sleep 0.00{n}",
    ];
    let (ended, _) = exec_json(&world, &args);
    ended.unwrap();
    let expected = [
        "--setup build 1",
        "--prepare pa 1",
        "--conclude end 1",
        "--setup build 2",
        "--prepare pb 2",
        "--conclude end 2",
    ];
    assert_eq!(world.helpers(), expected);
    // Neither once nor once per command (two after -L): refused before anything runs.
    let world = World::new(machine);
    let three = [
        "-r", "1", "-L", "n", "1,2", "-p", "a", "-p", "b", "-p", "c", "true",
    ];
    let (refused, _) = exec_json(&world, &three);
    assert!(
        matches!(&refused, Err(Error::Input(m)) if m.contains("--prepare given 3 times for 2")),
        "{refused:?}"
    );
    assert!(world.spawned().is_empty() && world.helpers().is_empty());
}

#[test]
fn helpers_run_around_the_runs_and_parameters_name_the_rows() {
    let world = World::new(machine);
    // hyperfine's letters: -s setup, -p prepare, -C conclude, -c cleanup.
    let args = [
        "--runs", "4", "--warmup", "2", "-s", "make", "-p", "sync", "-C", "kill", "-c", "rm -f x",
        "true",
    ];
    let (ended, doc) = exec_json(&world, &args);
    ended.unwrap();
    let mut expected = vec!["--setup make".to_string()];
    for _ in 0..6 {
        expected.extend(["--prepare sync".to_string(), "--conclude kill".to_string()]);
    }
    expected.push("--cleanup rm -f x".into());
    assert_eq!(world.helpers(), expected);
    assert_eq!(world.spawned().len(), 6, "2 warm-up runs, 4 timed");
    assert_eq!(values(&doc, "true", "time").len(), 4);

    let world = World::new(machine);
    let (ended, doc) = exec_json(
        &world,
        &["--runs", "2", "-L", "ms", "1,3", "sleep 0.00{ms}"],
    );
    ended.unwrap();
    let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
    let named: Vec<(&str, &str)> = benches
        .iter()
        .map(|b| {
            let name = b["full_name"].as_str().unwrap();
            (name, b["config"][0]["value"].as_str().unwrap())
        })
        .collect();
    assert_eq!(named, [("sleep 0.001", "1"), ("sleep 0.003", "3")]);
    let (fast, slow) = (
        values(&doc, "sleep 0.001", "time"),
        values(&doc, "sleep 0.003", "time"),
    );
    assert!(
        fast.iter().all(|f| slow.iter().all(|s| f < s)),
        "{fast:?} {slow:?}"
    );
}

#[test]
fn runs_auto_takes_turns_until_the_gate_is_decided() {
    let world = World::new(machine);
    let (ended, report) = exec_json(
        &world,
        &[
            "--runs",
            "auto",
            "--fail-on",
            "time:+5%",
            "sleep 0.02",
            "sleep 0.03",
        ],
    );
    assert!(
        matches!(ended, Err(Error::Failed(_))),
        "a 50 % slowdown: {ended:?}"
    );
    let target = &report["verdict"]["targets"][0];
    assert_eq!(target["status"], "fail", "{target}");
    assert_eq!(target["bench"], "sleep 0.03", "{target}");
    assert_eq!(target["metric"], "time: vs sleep 0.02", "{target}");
    let rounds = values(&report, "sleep 0.02", "time").len();
    assert_eq!(values(&report, "sleep 0.03", "time").len(), rounds);
    assert!((3..30).contains(&rounds), "{rounds} rounds");
    // A B, then B A: drift and going first hit both alike.
    let spawned = world.spawned();
    let (a, b) = ("sleep 0.02".to_string(), "sleep 0.03".to_string());
    assert_eq!(spawned[..4], [a.clone(), b.clone(), b, a]);

    // The same command against itself is never worse: the gate passes, or cannot decide
    // in its most rounds (exit 3), never fails.
    let world = World::new(machine);
    let args = [
        "--runs",
        "auto",
        "--max-runs",
        "12",
        "--fail-on",
        "time:+5%",
        "sleep 0.02",
    ];
    let (ended, _) = exec_json(&world, &[&args[..], &["sleep 0.02"]].concat());
    assert!(
        !matches!(ended, Err(Error::Failed(_))),
        "A/A failed: {ended:?}"
    );
}

#[test]
fn the_same_command_twice_is_two_rows() {
    let world = World::new(machine);
    let (ended, report) = exec_json(&world, &["-r", "3", "true", "true"]);
    ended.unwrap();
    assert_eq!(values(&report, "true", "time").len(), 3);
    assert_eq!(values(&report, "true (2)", "time").len(), 3);
}

#[test]
fn an_interrupt_reports_what_finished_and_exits_130() {
    // Ctrl-C during the 50th run: it is cut short, the 49 before it are the report.
    let world = World::new(machine).interrupt_at(50);
    let (ended, doc) = exec_json(&world, &["--runs", "100000", "sleep 0.01"]);
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    assert_eq!(values(&doc, "sleep 0.01", "time").len(), 49);
    assert!(
        doc["notes"].to_string().contains("interrupted"),
        "{}",
        doc["notes"]
    );

    // Of two commands, the first finished; the second was cut short in its first run.
    let world = World::new(machine).interrupt_at(4);
    let (ended, doc) = exec_json(&world, &["--runs", "3", "sleep 0.01", "sleep 0.02"]);
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    assert_eq!(values(&doc, "sleep 0.01", "time").len(), 3);
    assert_eq!(doc["runs"][0]["benchmarks"].as_array().unwrap().len(), 1);

    // Before any run finished: nothing is reported, and stderr says so.
    let world = World::new(machine).interrupt_at(1);
    let (ended, doc) = exec_json(&world, &["--runs", "3", "sleep 0.01"]);
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    assert_eq!(doc, Value::Null, "{}", world.stdout());
    assert!(
        world.stderr().contains("nothing was measured"),
        "{}",
        world.stderr()
    );
}

#[test]
fn other_work_during_the_run_is_said_with_the_report() {
    let busy_check = |world: World| {
        let (ended, report) = exec_json(&world, &["--runs", "8", "sleep 0.05"]);
        ended.unwrap();
        let checks = report["runs"][0]["environment"]["checks"]
            .as_array()
            .unwrap();
        let busy = checks.iter().find(|c| c["name"] == "busy").unwrap().clone();
        (busy, report["notes"].to_string())
    };
    let (busy, notes) = busy_check(World::new(machine).others_busy(1.0));
    assert_eq!(busy["status"], "warn", "{busy}");
    assert!(busy["found"].to_string().contains("kept 1.00 of"), "{busy}");
    assert!(notes.contains("exec: other processes kept"), "{notes}");
    let (busy, notes) = busy_check(World::new(machine));
    assert_eq!(busy["status"], "ok", "{busy}");
    assert!(!notes.contains("other processes kept"), "{notes}");
}

#[test]
fn runs_are_stamped_by_the_clock_they_ran_on() {
    let world = World::new(machine);
    let (ended, report) = exec_json(&world, &["--runs", "10", "sleep 1"]);
    ended.unwrap();
    let run = &report["runs"][0];
    assert_eq!(run["started"], "2027-01-15T08:00:00Z", "{run}");
    // On the world's machine, not the one the test runs on.
    assert_eq!(run["environment"]["hostname"], "scripted", "{run}");
    let ended_at = run["ended"].as_str().unwrap();
    assert!(
        ended_at.starts_with("2027-01-15T08:00:1"),
        "about 10 s later: {ended_at}"
    );
    assert!((world.seconds() - 10.01).abs() < 0.2, "{}", world.seconds());
}

/// hostile.rs's Ctrl-C test on the real terminal, in-process: the first command's results
/// are on disk before the second starts, the run cut short is no sample (even with -i), and
/// what finished is printed, written and stored.
#[test]
fn ctrl_c_keeps_every_finished_run_and_discards_the_one_cut_short() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let (json, db) = (dir.path().join("r.json"), dir.path().join("h.db"));
    let written_first = Arc::new(AtomicBool::new(false));
    let (seen, file) = (written_first.clone(), json.clone());
    // Ctrl-C during the 8th run: the second command's third.
    let world = World::new(move |command, nth| {
        if command == "sleep 0.4" && nth == 0 {
            seen.store(file.exists(), Ordering::SeqCst);
        }
        machine(command, nth)
    })
    .interrupt_at(8);
    let args = [
        "exec",
        "-i",
        "--runs",
        "5",
        "--json",
        json.to_str().unwrap(),
        "--store",
        "--db",
        db.to_str().unwrap(),
        "sleep 0.05",
        "sleep 0.4",
    ];
    let ended = latkit(&world, &args);
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    assert!(
        written_first.load(Ordering::SeqCst),
        "written before the second started"
    );
    assert!(world.stdout().contains("sleep 0.05"), "{}", world.stdout());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(values(&doc, "sleep 0.05", "time").len(), 5);
    assert_eq!(values(&doc, "sleep 0.4", "time").len(), 2);
    assert!(
        doc["notes"]
            .to_string()
            .contains("in progress was discarded"),
        "{}",
        doc["notes"]
    );
    let mut store = crate::store::Store::open(&db.display().to_string()).unwrap();
    let stored = store.runs(&Default::default()).unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].benchmarks, 2);
}

/// A command that fails after others were timed: exit 6, and the others are printed and
/// written, not lost.
#[test]
fn a_failing_command_keeps_those_timed_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let world = World::new(machine);
    let args = [
        "exec",
        "--runs",
        "2",
        "--json",
        json.to_str().unwrap(),
        "true",
        "echo",
        "false",
    ];
    let ended = latkit(&world, &args);
    assert!(
        matches!(ended, Err(Error::Peer(ref m)) if m.contains("`false` failed")),
        "{ended:?}"
    );
    let stdout = world.stdout();
    assert!(
        stdout.contains("true") && stdout.contains("echo"),
        "{stdout}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(values(&doc, "true", "time").len(), 2);
    assert_eq!(values(&doc, "echo", "time").len(), 2);
    assert_eq!(doc["runs"][0]["benchmarks"].as_array().unwrap().len(), 2);
}
