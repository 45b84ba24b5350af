//! `--measure instructions` in-process: valgrind's counts played back, so that what latkit
//! does with them (per iteration, the environment, the gates, bisect's one count a commit)
//! is asserted exactly.

use super::{exec_json, latkit, values};
use crate::commands::scripted::{Played, Printed, World};
use crate::error::Error;
use serde_json::Value;

/// `valgrind work N` counts N instructions and a 1 % slower `work` at `slow`; `valgrind false`
/// fails; a machine whose `valgrind --version` is not there (127) when `installed` is false.
fn counter(installed: bool) -> impl Fn(&str, usize) -> Played {
    move |line, nth| match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["valgrind", "--version"] if !installed => (0.0, 127),
        ["valgrind", "work" | "copy", n] => (n.parse().unwrap(), 0),
        // Counts that vary run to run by up to 2 %, as a map's seeds make them.
        ["valgrind", "vary", n] => (
            n.parse::<f64>().unwrap() * (1.0 + 0.01 * (nth % 3) as f64),
            0,
        ),
        ["valgrind", "false"] => (0.0, 1),
        _ => (0.001, 0),
    }
}

#[test]
fn exec_counts_a_command_once_a_run_and_records_how() {
    let world = World::new(counter(true));
    let args = ["--measure", "instructions", "work 1000000", "work 1010000"];
    let (ended, doc) = exec_json(&world, &args);
    ended.unwrap();
    // Three counted runs a command when no count is asked for, as they agree; nothing timed.
    assert_eq!(values(&doc, "work 1000000", "instructions"), [1e6; 3]);
    assert_eq!(world.spawned().len(), 6, "{:?}", world.spawned());
    let run = &doc["runs"][0];
    let metric = &run["benchmarks"][0]["metrics"][0];
    assert_eq!(metric["assume"], "counted", "{metric}");
    assert_eq!(run["benchmarks"][0]["metrics"].as_array().unwrap().len(), 1);
    let toolchains = run["environment"]["toolchains"].to_string();
    assert!(toolchains.contains("valgrind-3.19.0"), "{toolchains}");
    assert!(toolchains.contains("cachegrind"), "{toolchains}");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("counts do not see memory stalls"), "{notes}");
}

#[test]
fn counts_that_vary_are_counted_six_times_and_tested_not_decided_by_size() {
    let world = World::new(counter(true));
    let (ended, doc) = exec_json(&world, &["--measure", "instructions", "vary 1000000"]);
    ended.unwrap();
    let counts = values(&doc, "vary 1000000", "instructions");
    assert_eq!(counts.len(), 6, "{counts:?}");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("spread by 1.980%"), "{notes}");
    // --runs as given, whatever the counts do.
    let world = World::new(counter(true));
    let args = ["--measure", "instructions", "--runs", "2", "vary 1000000"];
    let (_, doc) = exec_json(&world, &args);
    assert_eq!(values(&doc, "vary 1000000", "instructions").len(), 2);
}

#[test]
fn a_count_of_mostly_rep_movsb_says_it_grows_with_the_bytes() {
    let world = World::new(counter(true));
    let (ended, doc) = exec_json(
        &world,
        &["--measure", "instructions", "copy 1000", "work 1000"],
    );
    ended.unwrap();
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("`copy 1000`: 90.0 % of its count"),
        "{notes}"
    );
    assert!(!notes.contains("`work 1000`: "), "{notes}");
}

#[test]
fn a_counted_run_beside_busy_processes_carries_no_busy_warning() {
    let world = World::new(counter(true)).others_busy(1.7);
    let (ended, doc) = exec_json(&world, &["--measure", "instructions", "work 1000"]);
    ended.unwrap();
    let checks = doc["runs"][0]["environment"]["checks"].to_string();
    assert!(!checks.contains("CPUs busy"), "{checks}");
    // Timed beside the same processes, it does.
    let world = World::new(counter(true)).others_busy(1.7);
    let (_, doc) = exec_json(&world, &["work 1000"]);
    let checks = doc["runs"][0]["environment"]["checks"].to_string();
    assert!(checks.contains("1.70 of"), "{checks}");
}

#[test]
fn a_gate_on_counts_is_decided_at_the_fewest_rounds_and_by_size() {
    let world = World::new(counter(true));
    let args = [
        "exec",
        "--measure",
        "instructions",
        "--runs",
        "auto",
        "--fail-on",
        "instructions:+0.5%",
        "-q",
        "work 1000000",
        "work 1010000",
    ];
    let ended = latkit(&world, &args);
    assert!(matches!(ended, Err(Error::Failed(_))), "{ended:?}");
    // The fewest rounds --runs auto takes (3), two commands each.
    assert_eq!(world.spawned().len(), 6, "{:?}", world.spawned());
    let said = world.stderr();
    assert!(said.contains("+1.00%"), "{said}");

    // Within the threshold: a pass, as soon.
    let world = World::new(counter(true));
    let mut within = args;
    within[9] = "work 1001000";
    latkit(&world, &within).unwrap();
    assert_eq!(world.spawned().len(), 6, "{:?}", world.spawned());
}

#[test]
fn without_valgrind_or_with_a_program_it_cannot_run_the_exit_code_says_which() {
    let world = World::new(counter(false));
    let missing = latkit(&world, &["exec", "--measure", "instructions", "work 5"]);
    let Err(error) = missing else {
        panic!("{missing:?}")
    };
    assert_eq!(error.exit_code(), 5, "{error}");
    assert!(
        error.to_string().contains("apt-get install valgrind"),
        "{error}"
    );
    assert!(
        world.spawned().is_empty(),
        "nothing ran: {:?}",
        world.spawned()
    );

    let world = World::new(counter(true));
    let failed = latkit(&world, &["exec", "--measure", "instructions", "false"]);
    let Err(error) = failed else {
        panic!("{failed:?}")
    };
    assert_eq!(error.exit_code(), 6, "{error}");
    assert!(
        error.to_string().contains("failed under valgrind"),
        "{error}"
    );
    assert!(
        error.to_string().contains("the scripted valgrind's log"),
        "{error}"
    );
}

/// `go test` lists BenchmarkWork; its test binary counts 4,000,000 instructions of start-up
/// and 120,012 an iteration, and prints its result; BenchmarkNope prints none.
fn go_module(line: &str, _nth: usize) -> Printed {
    let printed = |s: &str| (s.to_string(), 0);
    if line.starts_with("go test -run ^$ -bench") {
        return printed(
            "goos: linux\npkg: example.com/spin\nBenchmarkWork-2 \t 1\t 300 ns/op\n\
             BenchmarkNope-2 \t 1\t 3 ns/op\nPASS\n",
        );
    }
    if line.starts_with("go test -c") {
        return printed("");
    }
    let n: u64 = line
        .split_once("-test.benchtime ")
        .and_then(|(_, rest)| rest.split_once('x'))
        .map_or(0, |(n, _)| n.parse().unwrap());
    // Go's first call (b.N = 1) and then n iterations.
    let count = 4_000_000 + 120_012 * (1 + n);
    match line.contains("^BenchmarkWork$") {
        true => printed(&format!("{count}\nBenchmarkWork \t {n}\t 300 ns/op\nPASS")),
        false => printed(&format!("{count}\nPASS")),
    }
}

#[test]
fn go_counts_one_iteration_as_the_difference_of_two_runs() {
    let world = World::new(counter(true)).harnesses(go_module);
    let args = [
        "go",
        ".",
        "--bench",
        "Work",
        "--measure",
        "instructions",
        "--format",
        "json",
        "-q",
    ];
    // BenchmarkNope printed no result: named, exit 2.
    let ended = latkit(&world, &args);
    let Err(error) = ended else {
        panic!("{ended:?}")
    };
    assert_eq!(error.exit_code(), 2, "{error}");
    assert!(
        error
            .to_string()
            .contains("printed no result for `BenchmarkNope`"),
        "{error}"
    );
    let counted: Vec<String> = world
        .spawned()
        .into_iter()
        .filter(|l| l.starts_with("valgrind") && l.contains("BenchmarkWork"))
        .collect();
    // Each benchmark alone, GOMAXPROCS=1's name, at 2 iterations and then 2 + Δ, Δ growing
    // a hundredfold while the difference is lost in start-up, then to what reaches 2 × 10^8
    // instructions (1,667 iterations at 120,012), with a quarter to spare: 2,084.
    assert!(
        counted[0]
            .ends_with("-test.run ^$ -test.bench ^BenchmarkWork$ -test.benchtime 2x -test.count 1"),
        "{counted:?}"
    );
    let at: Vec<&str> = counted
        .iter()
        .map(|l| l.split("-test.benchtime ").nth(1).unwrap())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        at,
        ["2x", "3x", "102x", "2086x", "2x", "2086x", "2x", "2086x"],
        "{counted:?}"
    );
}

#[test]
fn go_counts_become_instructions_per_op_with_how_they_were_taken() {
    let only_work = |line: &str, nth: usize| {
        let (printed, code) = go_module(line, nth);
        (
            printed.replace("BenchmarkNope-2 \t 1\t 3 ns/op\n", ""),
            code,
        )
    };
    let world = World::new(counter(true)).harnesses(only_work);
    let args = [
        "go",
        ".",
        "--measure",
        "instructions",
        "--format",
        "json",
        "-q",
    ];
    latkit(&world, &args).unwrap();
    let doc: Value = serde_json::from_str(&world.stdout()).unwrap();
    // The start-up cancels, three times: counts that agree.
    assert_eq!(
        values(&doc, "BenchmarkWork", "instructions/op"),
        [120_012.0; 3]
    );
    let toolchains = doc["runs"][0]["environment"]["toolchains"].to_string();
    assert!(
        toolchains.contains("GOMAXPROCS=1 GOGC=off GOMEMLIMIT=1GiB GODEBUG=asyncpreemptoff=1"),
        "{toolchains}"
    );
    assert!(
        toolchains.contains("(the count at 2 + Δ iterations − at 2) / Δ"),
        "{toolchains}"
    );
    // Counts that agree need no interval: no note asks for repetitions.
    let notes = doc["notes"].to_string();
    assert!(notes.contains("counted by valgrind"), "{notes}");
    assert!(!notes.contains("too few samples"), "{notes}");
}

/// `sh work.sh @cNN` counts 100,000 instructions, 40 % more from c07 on.
fn counted_history(line: &str, _nth: usize) -> Played {
    let commit: usize = line
        .rsplit_once("@c")
        .map_or(0, |(_, c)| c.parse().unwrap());
    match line.starts_with("valgrind sh work.sh") {
        true if commit >= 7 => (140_000.0, 0),
        true => (100_000.0, 0),
        false => (0.001, 0),
    }
}

#[test]
fn bisect_by_counts_measures_each_commit_twice_when_the_ends_agree() {
    let world = World::new(counted_history).history(13);
    let args = [
        "bisect",
        "--good",
        "c00",
        "--bad",
        "c12",
        "--format",
        "json",
        "-q",
        "--",
        "exec",
        "--measure",
        "instructions",
        "sh",
        "work.sh",
    ];
    latkit(&world, &args).unwrap();
    let doc: Value = serde_json::from_str(&world.stdout()).unwrap();
    let notes = doc["notes"].to_string();
    assert!(notes.contains("first bad commit: c07 change 7"), "{notes}");
    assert!(notes.contains("+40.00% from good"), "{notes}");
    let spawned = world.spawned();
    // Three rounds of the ends show that their counts agree; then two counts a commit.
    assert_eq!(
        spawned.iter().filter(|l| l.ends_with("@c00")).count(),
        3,
        "{spawned:?}"
    );
    assert_eq!(
        spawned.iter().filter(|l| l.ends_with("@c06")).count(),
        2,
        "{spawned:?}"
    );
    assert!(spawned.len() <= 6 + 2 * 4, "{spawned:?}");
}
