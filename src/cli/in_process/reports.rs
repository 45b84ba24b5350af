//! What in-process commands report: relative columns and scans, hyperfine's flags, a
//! calibration, progress on a watched terminal, and standard input.

use super::{cell, exec_json, latkit, machine, values};
use crate::commands::scripted::World;
use crate::error::Error;
use serde_json::Value;

#[test]
fn several_commands_get_a_relative_column_with_an_interval() {
    let world = World::new(machine);
    let (ended, doc) = exec_json(&world, &["true", "sleep 0.005", "--runs", "6"]);
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
    let (ended, one) = exec_json(&world, &["true", "--runs", "2"]);
    ended.unwrap();
    let keys = one["tables"][0]["columns"].to_string();
    assert!(!keys.contains("relative"), "{keys}");
}

#[test]
fn a_parameter_scan_is_one_table_with_every_value_as_a_row() {
    let world = World::new(machine);
    let args = ["-r", "2", "sleep 0.00{t}", "true", "-L", "t", "1,2"];
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
        "true",
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

/// A figure the same in every run (here the peak memory) is one line, not a row that says
/// nothing.
#[test]
fn calibrate_folds_figures_that_never_varied() {
    let world = World::new(machine);
    let args = [
        "calibrate",
        "--rounds",
        "3",
        "--",
        "exec",
        "-r",
        "4",
        "--format",
        "json",
        "sleep 0.02",
    ];
    latkit(&world, &args).unwrap();
    let report: Value = serde_json::from_str(&world.stdout()).unwrap();
    let rows = report["tables"][0]["rows"].as_array().unwrap();
    let metrics: Vec<&Value> = rows.iter().map(|r| &r["cells"][1]["text"]).collect();
    assert!(metrics.contains(&&Value::from("time")), "{metrics:?}");
    assert!(!metrics.contains(&&Value::from("max_rss")), "{metrics:?}");
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("never varied") && notes.contains("max_rss of every benchmark"),
        "{notes}"
    );
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
    assert_eq!(
        saved["host"], "scripted",
        "the world's host, not this machine"
    );
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
    assert!(
        !world.stderr().contains("calibrated on"),
        "the same host: {}",
        world.stderr()
    );
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
