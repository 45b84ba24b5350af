//! `latkit bisect` in a scripted repository: the ends and each tested commit are played, so
//! the search, its skips, its refusals and its interruption are asserted exactly.

use super::latkit;
use crate::commands::scripted::{Played, World};
use crate::error::Error;
use serde_json::Value;

/// `sh work.sh @cNN` takes 10 ms, 30 % more from `c07` on, within ±2 % that differs run to
/// run; `make @c09` fails (the commit does not build). The other scripts are as `work.sh`
/// but: `broken.sh` fails at `c06`, `slight.sh` is only 1 % slower, `faster.sh` 30 % faster,
/// and `halfway.sh` takes 11.5 ms at `c06`. A search tests `c06` first.
fn repository(command: &str, nth: usize) -> Played {
    let (line, commit) = command.rsplit_once(" @c").expect("a command of a commit");
    let commit: usize = commit.parse().unwrap();
    let jitter = ((nth * 7919 + commit * 104_729) % 1000) as f64 / 1000.0 - 0.5;
    let noisy = |seconds: f64| (seconds * (1.0 + 0.04 * jitter), 0);
    let slower = |by: f64| {
        noisy(if commit >= 7 {
            0.010 * (1.0 + by)
        } else {
            0.010
        })
    };
    match line {
        "make" if commit == 9 => (0.5, 2),
        "make" => (0.5, 0),
        "sh work.sh" => slower(0.30),
        "sh broken.sh" if commit == 6 => (0.001, 1),
        "sh broken.sh" => slower(0.30),
        "sh slight.sh" => slower(0.01),
        "sh faster.sh" => slower(-0.30),
        "sh halfway.sh" if commit == 6 => noisy(0.0115),
        "sh halfway.sh" => slower(0.30),
        "false" => (0.001, 1),
        other => panic!("the repository has no `{other}`"),
    }
}

/// `latkit bisect --good c00 --bad cNN OPTIONS --format json -q -- exec sh SCRIPT` in a
/// history of 13 commits, and the report.
fn bisect(world: &World, options: &[&str], script: &str) -> (crate::error::Result<()>, Value) {
    let mut args = vec!["bisect", "--good", "c00", "--bad", "c12"];
    args.extend(options);
    args.extend(["--format", "json", "-q", "--", "exec", "sh", script]);
    let ended = latkit(world, &args);
    (
        ended,
        serde_json::from_str(&world.stdout()).unwrap_or(Value::Null),
    )
}

/// Each tested commit (by subject) and what it was found to be, in commit order.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    let rows = report["tables"][0]["rows"].as_array();
    let rows = rows.unwrap_or_else(|| panic!("no table in {report}"));
    rows.iter()
        .map(|row| {
            let text = |i: usize| row["cells"][i]["text"].as_str().unwrap_or("").to_string();
            (text(1), text(7))
        })
        .collect()
}

/// The report's notes.
fn notes(report: &Value) -> Vec<String> {
    let notes = report["notes"].as_array().into_iter().flatten();
    notes
        .map(|n| n["message"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts that one of the report's notes starts with `said`.
#[track_caller]
fn assert_said(report: &Value, said: &str) {
    let notes = notes(report);
    assert!(
        notes.iter().any(|n| n.starts_with(said)),
        "no `{said}` in {notes:?}"
    );
}

fn history() -> World {
    World::new(repository).history(13)
}

#[test]
fn the_search_names_the_first_slower_commit_and_skips_one_that_does_not_build() {
    let world = history();
    let (ended, report) = bisect(&world, &["--build", "make"], "work.sh");
    ended.unwrap();
    assert_said(
        &report,
        "first bad commit: c07 change 7 (2027-01-15T08:00:00+00:00)",
    );
    let verdicts = verdicts(&report);
    for (subject, verdict) in &verdicts {
        let commit: usize = subject.strip_prefix("change ").unwrap().parse().unwrap();
        let expected = match commit {
            9 => "skipped: does not build",
            0..7 => "good",
            _ => "bad",
        };
        assert!(
            verdict.starts_with(expected),
            "{subject}: {verdict} in {verdicts:?}"
        );
    }
    // Every checkout was built once; each commit measured in rounds between both ends.
    let builds: Vec<String> = world
        .spawned()
        .into_iter()
        .filter(|s| s.starts_with("make"))
        .collect();
    assert_eq!(builds.len(), verdicts.len(), "{builds:?}");
    assert!(
        builds.contains(&"make @c09".to_string()),
        "c09 was tried: {builds:?}"
    );
    let spawned = world.spawned();
    let rounds = spawned.iter().filter(|s| !s.starts_with("make"));
    let first: Vec<&str> = rounds.take(4).map(String::as_str).collect();
    assert_eq!(
        first,
        [
            "sh work.sh @c00",
            "sh work.sh @c12",
            "sh work.sh @c00",
            "sh work.sh @c12"
        ]
    );
    assert_said(&report, "c09 skipped, as `git bisect skip`: does not build");
}

#[test]
fn runs_n_measures_every_commit_exactly_n_rounds() {
    let world = history();
    let (ended, report) = bisect(&world, &["--runs", "6"], "work.sh");
    ended.unwrap();
    let rows = report["tables"][0]["rows"].as_array().unwrap();
    assert!(rows.len() >= 5, "{rows:?}");
    for row in rows {
        let counts: Vec<&Value> = row["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "count")
            .collect();
        assert_eq!(counts.len(), 1, "{row}");
        assert_eq!(counts[0]["count"], 6, "{row}");
    }
}

#[test]
fn ends_within_noise_or_better_blame_nobody() {
    let world = history();
    let (ended, report) = bisect(&world, &[], "slight.sh");
    let Err(Error::Failed(why)) = ended else {
        panic!("{ended:?}")
    };
    assert!(
        why.starts_with("good and bad do not differ beyond noise: wall +"),
        "{why}"
    );
    assert!(
        why.contains("rounds a side (--rounds "),
        "says how many rounds would tell: {why}"
    );
    assert!(
        !notes(&report)
            .iter()
            .any(|n| n.starts_with("first bad commit"))
    );
    assert_eq!(verdicts(&report).len(), 2, "only the ends were measured");

    let world = history();
    let (ended, _) = bisect(&world, &[], "faster.sh");
    let Err(Error::Failed(why)) = ended else {
        panic!("{ended:?}")
    };
    assert!(
        why.starts_with("the bad end is better than the good one: wall -"),
        "{why}"
    );
}

#[test]
fn a_commit_that_fails_to_run_is_skipped_and_an_end_that_fails_ends_it() {
    let world = history();
    let (ended, report) = bisect(&world, &[], "broken.sh");
    ended.unwrap();
    assert_said(&report, "first bad commit: c07");
    assert_said(
        &report,
        "c06 skipped, as `git bisect skip`: does not run: sh broken.sh @c06 failed",
    );

    let world = history();
    let args = [
        "bisect", "--good", "c00", "--bad", "c12", "-q", "--", "exec", "false",
    ];
    let Err(Error::Peer(why)) = latkit(&world, &args) else {
        panic!("the end's failure is the harness's")
    };
    assert!(
        why.starts_with("the good end failed to run: false @c00 failed"),
        "{why}"
    );
}

#[test]
fn a_commit_the_rounds_cannot_place_goes_with_the_nearer_median_and_says_so() {
    let world = history();
    let (ended, report) = bisect(&world, &["--max-rounds", "8"], "halfway.sh");
    ended.unwrap();
    let within = "1 of 4 tested commits could not be told from both ends within --max-rounds 8";
    assert_said(&report, within);
    let c06 = verdicts(&report)
        .into_iter()
        .find(|(subject, _)| subject == "change 6");
    assert_eq!(c06, Some(("change 6".into(), "bad (nearer median)".into())));
}

#[test]
fn ctrl_c_during_the_search_keeps_what_was_tested_and_where_the_culprit_can_be() {
    // Ctrl-C comes during the 40th run: after the ends and c06, while c09 is measured.
    let world = history().interrupt_at(40);
    let (ended, report) = bisect(&world, &[], "work.sh");
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    // c06 was placed with good; Ctrl-C came while c09 was measured, which is left out.
    assert_eq!(
        notes(&report),
        ["stopped early: the first bad commit is c12 or one of the 5 untested commits before it"]
    );
    let verdicts = verdicts(&report);
    let placed: Vec<(&str, &str)> = verdicts
        .iter()
        .map(|(s, v)| (s.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        placed,
        [
            ("change 0", "good"),
            ("change 6", "good"),
            ("change 12", "bad")
        ]
    );
}
