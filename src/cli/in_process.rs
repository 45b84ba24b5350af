//! Commands run in-process in a scripted world (`commands::scripted`): the command line parsed
//! as typed, the timed commands played back, time virtual, Ctrl-C when the test says, and
//! the report read from the captured stdout. No process starts and no time passes, so what
//! these tests assert holds on any machine under any load.

use crate::commands::scripted::{Played, World};
use crate::error::{Error, Result};
use serde_json::Value;

/// `latkit ARGS…` in `world`.
fn latkit(world: &World, args: &[&str]) -> Result<()> {
    let command = super::parse(std::iter::once("latkit").chain(args.iter().copied()))?;
    crate::commands::run(command, &world.env)
}

/// `latkit exec ARGS… --format json -q` in `world`, and the report it wrote.
fn exec_json(world: &World, args: &[&str]) -> (Result<()>, Value) {
    let mut all = vec!["exec"];
    all.extend(args);
    all.extend(["--format", "json", "-q"]);
    let ended = latkit(world, &all);
    let stdout = world.stdout();
    let doc = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (ended, doc)
}

/// The values of `metric` of the benchmark `name`.
fn values(doc: &Value, name: &str, metric: &str) -> Vec<f64> {
    let benches = doc["runs"][0]["benchmarks"].as_array();
    let bench = benches
        .and_then(|b| b.iter().find(|b| b["full_name"] == name))
        .unwrap_or_else(|| panic!("no benchmark {name} in {doc}"));
    let metrics = bench["metrics"].as_array().unwrap();
    let found = metrics.iter().find(|m| m["name"] == metric).unwrap();
    found["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// `sleep S` takes S seconds and 1 ms to start, within ±2 % that differs run to run but not
/// test to test; `false` fails; `no-such-command` is not there; anything else takes 1 ms.
fn machine(command: &str, nth: usize) -> Played {
    let jitter = ((nth * 7919 + command.len() * 104_729) % 1000) as f64 / 1000.0 - 0.5;
    let seconds = |s: f64| (s + 0.001) * (1.0 + 0.04 * jitter);
    match command.split_whitespace().collect::<Vec<_>>()[..] {
        ["sleep", s] => (seconds(s.parse().unwrap()), 0),
        ["false"] => (seconds(0.0), 1),
        ["no-such-command"] => (0.0, 127),
        _ => (seconds(0.0), 0),
    }
}

#[test]
fn min_time_and_run_bounds_set_the_run_count_from_the_first_run() {
    let runs = |args: &[&str]| {
        let world = World::new(machine);
        let mut all = vec!["-c", "sleep 0.01"];
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
    let failed = latkit(&world, &["exec", "--runs", "3", "-c", "false"]);
    assert!(
        matches!(failed, Err(Error::Peer(ref m)) if m.contains("--ignore-failure")),
        "{failed:?}"
    );
    assert_eq!(failed.unwrap_err().exit_code(), 6);
    assert_eq!(world.spawned(), ["false"], "the first failure stops it");

    let world = World::new(machine);
    let (ended, doc) = exec_json(&world, &["--runs", "3", "-i", "-c", "false"]);
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
fn helpers_run_around_the_runs_and_parameters_name_the_rows() {
    let world = World::new(machine);
    let args = [
        "--runs",
        "4",
        "--warmup",
        "2",
        "--setup",
        "make",
        "--prepare",
        "sync",
        "--cleanup",
        "rm -f x",
        "-c",
        "true",
    ];
    let (ended, doc) = exec_json(&world, &args);
    ended.unwrap();
    let mut expected = vec!["--setup make".to_string()];
    expected.extend(std::iter::repeat_n("--prepare sync".to_string(), 6));
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

/// The cell of `column` in the row named `name` (its first cell), in the report's first table.
fn cell<'a>(doc: &'a Value, name: &str, column: &str) -> &'a Value {
    let table = &doc["tables"][0];
    let columns = table["columns"].as_array().unwrap();
    let at = columns.iter().position(|c| c["key"] == column);
    let at = at.unwrap_or_else(|| panic!("no column {column} in {table}"));
    let rows = table["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["cells"][0]["text"] == name);
    &row.unwrap_or_else(|| panic!("no row {name} in {table}"))["cells"][at]
}

#[test]
fn several_commands_get_a_relative_column_with_an_interval() {
    let world = World::new(machine);
    let (ended, doc) = exec_json(&world, &["-c", "true", "-c", "sleep 0.005", "--runs", "6"]);
    ended.unwrap();
    let fastest = cell(&doc, "true", "relative");
    assert_eq!(fastest["ratio"], 1.0);
    assert!(fastest.get("interval").is_none(), "the reference has none");
    let median = |values: Vec<f64>| {
        let mut sorted = values;
        sorted.sort_by(f64::total_cmp);
        (sorted[2] + sorted[3]) / 2.0
    };
    let slower = cell(&doc, "sleep 0.005", "relative");
    let ratio = slower["ratio"].as_f64().unwrap();
    // The ratio is of the median wall times the table shows beside it.
    let medians =
        median(values(&doc, "sleep 0.005", "time")) / median(values(&doc, "true", "time"));
    assert!((ratio - medians).abs() < 1e-9 * ratio, "{ratio} {medians}");
    assert!((5.5..6.5).contains(&ratio), "6 ms against 1 ms: {ratio}");
    let (low, high) = (
        slower["interval"][0].as_f64(),
        slower["interval"][1].as_f64(),
    );
    let (low, high) = (low.unwrap(), high.unwrap());
    assert!(low > 0.0 && low <= ratio && ratio <= high, "{slower}");
    // One command alone has nothing to be relative to, unless asked.
    let world = World::new(machine);
    let (ended, one) = exec_json(&world, &["-c", "true", "--runs", "2"]);
    ended.unwrap();
    let keys = one["tables"][0]["columns"].to_string();
    assert!(!keys.contains("relative"), "{keys}");
}

#[test]
fn a_parameter_scan_is_one_table_with_every_value_as_a_row() {
    let world = World::new(machine);
    let args = [
        "-r",
        "2",
        "-c",
        "sleep 0.00{t}",
        "-c",
        "true",
        "-L",
        "t",
        "1,2",
    ];
    let (ended, doc) = exec_json(&world, &args);
    ended.unwrap();
    let tables = doc["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1, "{tables:?}");
    let rows: Vec<&str> = tables[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cells"][0]["text"].as_str().unwrap())
        .collect();
    // A command that does not spell the parameter is told apart by it.
    assert_eq!(
        rows,
        ["sleep 0.001", "sleep 0.002", "true (t=1)", "true (t=2)"]
    );
    // One Relative column over the whole scan: the fastest row is 1, every other relative
    // to it.
    let ratio = |row: &str| cell(&doc, row, "relative")["ratio"].as_f64().unwrap();
    let ones = rows.iter().filter(|row| ratio(row) == 1.0).count();
    assert_eq!(ones, 1, "one best row");
    assert!(ratio("true (t=1)").min(ratio("true (t=2)")) == 1.0);
    assert!(
        (1.8..2.2).contains(&ratio("sleep 0.001")),
        "2 ms against 1 ms"
    );
    assert!(
        (2.7..3.3).contains(&ratio("sleep 0.002")),
        "3 ms against 1 ms"
    );
    let benches = doc["runs"][0]["benchmarks"].as_array().unwrap();
    let sleep = benches
        .iter()
        .find(|b| b["full_name"] == "sleep 0.002")
        .unwrap();
    // The value stays part of each benchmark's identity and is named as its parameter.
    assert_eq!(sleep["config"][0]["value"], "2");
    assert_eq!(sleep["params"][0]["value"], "2");
}

#[test]
fn hyperfine_flags_and_command_names_work_as_there() {
    let world = World::new(machine);
    let args = [
        "-N",
        "-m",
        "2",
        "-M",
        "3",
        "--min-time",
        "0",
        "-n",
        "fast",
        "-c",
        "true",
        "-c",
        "sleep 0.001",
    ];
    let (ended, doc) = exec_json(&world, &args);
    ended.unwrap();
    assert_eq!(values(&doc, "fast", "time").len(), 2);
    assert_eq!(values(&doc, "sleep 0.001", "time").len(), 2);
    // The command line is kept as the source even where a name stands in for it.
    let source = &doc["runs"][0]["source"]["command"];
    assert_eq!(*source, serde_json::json!(["true", "sleep 0.001"]));
    // -N: the words themselves run, no shell in between.
    assert_eq!(world.spawned()[0], "true");

    let world = World::new(machine);
    let args = [
        "-r",
        "2",
        "-n",
        "nap {t}",
        "-c",
        "sleep 0.00{t}",
        "-L",
        "t",
        "1,2",
    ];
    let (ended, scanned) = exec_json(&world, &args);
    ended.unwrap();
    for name in ["nap 1", "nap 2"] {
        assert_eq!(values(&scanned, name, "time").len(), 2, "{name}");
    }
    assert_eq!(
        world.spawned(),
        ["sleep 0.001", "sleep 0.001", "sleep 0.002", "sleep 0.002"]
    );
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
        "-c",
        "sleep 0.05",
        "-c",
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

/// `calibrate -- exec` runs the command against itself in rounds and saves a floor; a gate
/// finer than the floor is then said to be undecidable with the rounds it has.
#[test]
fn exec_against_itself_saves_a_floor_that_gates_then_heed() {
    let dir = tempfile::tempdir().unwrap();
    let floor = dir.path().join("floor.json");
    let world = World::new(machine);
    let save = floor.to_str().unwrap();
    let args = [
        "calibrate",
        "--rounds",
        "5",
        "--effect",
        "2%",
        "--save",
        save,
        "--",
        "exec",
        "--runs",
        "10",
        "--format",
        "json",
        "sleep 0.02",
    ];
    latkit(&world, &args).unwrap();
    // Each arm once a round; --runs says what the detectable change is figured for.
    assert_eq!(world.spawned().len(), 5 * 2);
    let report: Value = serde_json::from_str(&world.stdout()).unwrap();
    let rows = report["tables"][0]["rows"].as_array().unwrap();
    let cells = rows
        .iter()
        .find(|r| r["cells"][0]["text"] == "sleep 0.02" && r["cells"][1]["text"] == "time")
        .unwrap()["cells"]
        .as_array()
        .unwrap();
    assert_eq!(cells[2]["count"], 5, "rounds: {cells:?}");
    // The script varies each run by ±2 %: the arms' medians vary by a fraction of that.
    let variation = cells[3]["percent"].as_f64().unwrap();
    assert!(variation > 0.0 && variation < 2.0, "{variation}");
    let detectable = cells[5]["percent"].as_f64().unwrap();
    assert!(detectable > variation * 0.5, "{detectable} vs {variation}");
    let columns = report["tables"][0]["columns"].to_string();
    assert!(columns.contains("detectable %, 10 runs"), "{columns}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&floor).unwrap()).unwrap();
    assert_eq!(saved["latkit_calibration"], 1);
    assert_eq!(saved["runs"], 10);
    assert_eq!(saved["figures"][0]["bench"], "sleep 0.02");
    assert!(world.stderr().contains("wrote"), "{}", world.stderr());

    let world = World::new(machine);
    let gate = [
        "--runs",
        "auto",
        "--max-runs",
        "4",
        "--fail-on",
        "time:+0.01%",
        "--calibration",
        save,
        "true",
        "sleep 0.02",
    ];
    let (ended, report) = exec_json(&world, &gate);
    assert!(
        matches!(ended, Err(Error::Failed(_))),
        "21 ms against 1 ms: {ended:?}"
    );
    let notes = report["notes"].to_string();
    let undecidable = "sleep 0.02 time: a time:+0.01% gate cannot be decided here with 4 rounds";
    assert!(notes.contains(undecidable), "{notes}");
}

#[test]
fn progress_is_drawn_for_a_person_watching_stderr_and_never_with_quiet() {
    let args = [
        "exec",
        "--runs",
        "3",
        "--format",
        "json",
        "sleep 0.01",
        "sleep 0.02",
    ];
    let world = World::watched(machine);
    latkit(&world, &args).unwrap();
    let stderr = world.stderr();
    // Each command's bar, by its name, counting its runs. (Frames are drawn at most so
    // often in real time, and no real time passes here: the first frame is the one kept.)
    for name in ["sleep 0.01", "sleep 0.02"] {
        let drawn = stderr.lines().find(|l| l.starts_with(name));
        assert!(
            drawn.is_some_and(|l| l.ends_with("/3 runs, ETA 0s")),
            "{name}: {stderr}"
        );
    }
    assert!(
        serde_json::from_str::<Value>(&world.stdout()).is_ok(),
        "the report stays clean"
    );

    let world = World::watched(machine);
    latkit(&world, &[&args[..], &["-q"]].concat()).unwrap();
    assert_eq!(world.stderr(), "", "-q draws nothing");
    let world = World::new(machine);
    latkit(&world, &args).unwrap();
    assert!(
        !world.stderr().contains("runs"),
        "stderr read by a program: {}",
        world.stderr()
    );
}

/// `go test -bench . | latkit parse`: standard input is the console's, read as a pipe.
#[test]
fn parse_reads_standard_input_from_the_console() {
    let go = "goos: linux\nBenchmarkEncode-8 \t 1000\t 120 ns/op\nBenchmarkEncode-8 \t 1000\t 100 ns/op\n\
              BenchmarkEncode-8 \t 1000\t 110 ns/op\nPASS\n";
    let world = World::new(machine).stdin(go);
    latkit(&world, &["parse", "--format", "json"]).unwrap();
    let doc: Value = serde_json::from_str(&world.stdout()).unwrap();
    assert_eq!(
        values(&doc, "BenchmarkEncode-8", "ns/op"),
        [120.0, 100.0, 110.0]
    );
    assert!(world.spawned().is_empty());
    // Given as `-` beside nothing else, the same.
    let world = World::new(machine).stdin(go);
    latkit(&world, &["parse", "-", "--format", "csv"]).unwrap();
    assert!(
        world.stdout().contains(",BenchmarkEncode,3,1000,110,"),
        "{}",
        world.stdout()
    );
    // Nothing on standard input is no result, said as such.
    let world = World::new(machine).stdin("");
    let ended = latkit(&world, &["parse", "--format", "json"]);
    assert!(matches!(ended, Err(Error::Input(_))), "{ended:?}");
}
