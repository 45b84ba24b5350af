//! `latkit bisect` in a scripted repository: the ends and each tested commit are played, so
//! the search, its skips, its refusals and its interruption are asserted exactly.

use super::latkit;
use crate::commands::scripted::{Played, World};
use crate::error::Error;
use serde_json::Value;

/// `sh work.sh @cNN` takes 10 ms, 30 % more from `c07` on, within ±2 % that differs run to
/// run; `make @c09` fails (the commit does not build). The other scripts are as `work.sh`
/// but: `broken.sh` fails at `c06`, `slight.sh` is only 1 % slower, `faster.sh` 30 % faster,
/// `halfway.sh` takes 11.5 ms at `c06` (a first change of 15 %), and `unsure.sh` 11.4 ms at
/// `c06` within a factor of 4.5 either way (nothing can place it in 30 rounds). A search
/// tests `c06` first.
fn repository(command: &str, nth: usize) -> Played {
    let (line, commit) = command.rsplit_once(" @c").expect("a command of a commit");
    let commit: usize = commit.parse().unwrap();
    // Each run's own luck, in [-0.5, 0.5): drawn from the run, so that no commit is
    // systematically luckier than another.
    let mut draw = crate::analyze::changes::generated::uniform((nth * 1000 + commit) as u64);
    let jitter = draw() - 0.5;
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
        "sh unsure.sh" if commit == 6 => (0.0114 * (3.0 * jitter).exp(), 0),
        "sh unsure.sh" => slower(0.30),
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
    // The ends first, 10 rounds of one run each, in an order drawn for each round.
    let spawned = world.spawned();
    let runs: Vec<&str> = spawned
        .iter()
        .filter(|s| !s.starts_with("make"))
        .map(String::as_str)
        .collect();
    let mut orders = std::collections::HashSet::new();
    for round in runs[..20].chunks(2) {
        let mut sorted = round.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, ["sh work.sh @c00", "sh work.sh @c12"], "{runs:?}");
        orders.insert(round[0]);
    }
    assert_eq!(orders.len(), 2, "both orders drawn: {runs:?}");
    assert_said(&report, "c09 skipped, as `git bisect skip`: does not build");
}

#[test]
fn runs_n_measures_every_commit_exactly_n_rounds() {
    let world = history();
    let (ended, report) = bisect(&world, &["--runs", "12"], "work.sh");
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
        assert_eq!(counts[0]["count"], 12, "{row}");
    }
}

/// Ends the rounds cannot tell apart are undecided (exit 3: 1 % within ±2 % noise is neither
/// shown nor shown absent); with a threshold the same rounds decide that nothing changed by
/// that much (exit 1), and a faster bad end blames nobody (exit 1).
#[test]
fn ends_undecided_within_the_threshold_or_better_blame_nobody() {
    let world = history();
    let (ended, report) = bisect(&world, &[], "slight.sh");
    let Err(Error::Undecided(why)) = ended else {
        panic!("{ended:?}")
    };
    assert!(
        why.starts_with(
            "undecided: the ends' rounds cannot tell whether bad is worse than good: wall +"
        ),
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
    let (ended, _) = bisect(&world, &["--threshold", "5"], "slight.sh");
    let Err(Error::Failed(why)) = ended else {
        panic!("{ended:?}")
    };
    assert!(
        why.starts_with("good and bad do not differ by 5% or more: wall ")
            && why.contains("that it is worse by less, 10 rounds a side"),
        "{why}"
    );

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
    // The end measured first in the round drawn (here bad) is the one that failed.
    assert!(
        why.starts_with("the bad end failed to run: false @c12 failed"),
        "{why}"
    );
}

#[test]
fn a_commit_worse_than_good_and_better_than_bad_is_the_first_change_with_its_own_size() {
    let world = history();
    let (ended, report) = bisect(&world, &[], "halfway.sh");
    ended.unwrap();
    let c06 = verdicts(&report)
        .into_iter()
        .find(|(subject, _)| subject == "change 6");
    assert_eq!(c06, Some(("change 6".into(), "bad (first change)".into())));
    let first = notes(&report)
        .into_iter()
        .find(|n| n.starts_with("first bad commit"));
    let first = first.expect("a commit is named");
    assert!(
        first.starts_with("first bad commit: c06 change 6"),
        "{first}"
    );
    // Its own size, from its own rounds: +15 %, not the ends' +30 %.
    assert!(first.contains(": wall +15."), "{first}");
    assert!(first.contains("(bad +30."), "{first}");
    assert!(first.contains("this is the first"), "{first}");
}

#[test]
fn a_commit_the_rounds_cannot_place_stops_the_search_undecided_with_the_range_that_holds_it() {
    let world = history();
    let (ended, report) = bisect(&world, &[], "unsure.sh");
    let Err(Error::Undecided(why)) = ended else {
        panic!("{ended:?}")
    };
    assert!(
        why.starts_with("undecided: c06 (change 6) could not be placed within --max-rounds 30"),
        "{why}"
    );
    // Nothing was decided but the ends: the culprit is somewhere after c00, up to c12.
    assert!(
        why.contains("the first bad commit is one of the 12 commits c00..c12"),
        "{why}"
    );
    assert!(
        why.contains("rounds would place it (--max-rounds "),
        "{why}"
    );
    assert!(
        !notes(&report)
            .iter()
            .any(|n| n.starts_with("first bad commit"))
    );
    let c06 = verdicts(&report)
        .into_iter()
        .find(|(subject, _)| subject == "change 6");
    assert_eq!(c06, Some(("change 6".into(), "undecided".into())));

    // --guess goes on with the end it moved less from, says so, and stays undecided (exit 3).
    let world = history();
    let (ended, report) = bisect(&world, &["--guess"], "unsure.sh");
    assert!(matches!(ended, Err(Error::Undecided(_))), "{ended:?}");
    let c06 = verdicts(&report)
        .into_iter()
        .find(|(subject, _)| subject == "change 6");
    assert!(
        c06.as_ref().is_some_and(|(_, v)| v.ends_with("(guess)")),
        "{c06:?}"
    );
    assert_said(&report, "first bad commit (a guess: --guess): c0");
    assert_said(
        &report,
        "1 of 4 tested commits could not be placed within --max-rounds 30",
    );
}

#[test]
fn ctrl_c_during_the_search_keeps_what_was_tested_and_where_the_culprit_can_be() {
    // Ctrl-C comes during the 55th run: after the ends (20 runs) and c06 (30), while c09 is
    // measured.
    let world = history().interrupt_at(55);
    let (ended, report) = bisect(&world, &[], "work.sh");
    assert!(matches!(ended, Err(Error::Interrupted)), "{ended:?}");
    // c06 was placed with good; Ctrl-C came while c09 was measured, which is left out.
    assert_eq!(
        notes(&report),
        [
            "stopped early: the first bad commit is one of the 6 commits c06..c12 (after c06, up \
             to and including c12)"
        ]
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

#[test]
fn a_verdict_taken_beside_other_work_says_so_and_points_at_counts() {
    let world = history().others_busy(1.2);
    let (ended, report) = bisect(&world, &[], "work.sh");
    ended.unwrap();
    let first = notes(&report)
        .into_iter()
        .find(|n| n.starts_with("first bad commit"));
    let first = first.expect("a commit is named");
    assert!(
        first.contains("measured on a busy machine (other processes kept 1.20 of "),
        "{first}"
    );
    assert!(first.contains("`--measure instructions`"), "{first}");
}
