//! exec's logic on a scripted spawner: run counts, failures, warnings, helpers and
//! interrupts, with no process started and no time passing.

use super::*;
use crate::model::vocab;
use std::cell::RefCell;
use std::os::unix::process::ExitStatusExt;
use std::rc::Rc;

/// Plays back wall times and exit codes (the last one repeats) instead of running
/// anything, and records the helpers it is asked to run.
struct Scripted {
    runs: RefCell<Vec<(f64, i32)>>,
    helpers: Rc<RefCell<Vec<String>>>,
}

impl Spawner for Scripted {
    fn time(&self, _argv: &[String]) -> std::io::Result<Sample> {
        let mut runs = self.runs.borrow_mut();
        let (wall, code) = if runs.len() > 1 {
            runs.remove(0)
        } else {
            runs[0]
        };
        Ok(Sample {
            wall,
            user: wall / 2.0,
            system: 0.0,
            max_rss: 1e6,
            status: ExitStatus::from_raw(code << 8),
            instructions: None,
            string: None,
        })
    }

    fn last_stderr(&self) -> Vec<String> {
        vec!["ls: cannot access '/nonexistent': No such file or directory".into()]
    }

    fn helper(&self, what: &str, _command: &str) -> Result<()> {
        self.helpers.borrow_mut().push(what.to_string());
        Ok(())
    }

    /// The played wall time, in microseconds, as the count.
    fn count(&self, argv: &[String]) -> std::io::Result<crate::runner::counts::Counted> {
        let sample = self.time(argv)?;
        Ok(crate::runner::counts::Counted {
            instructions: (sample.wall * 1e6) as u64,
            string: 0,
            status: sample.status,
            said: Vec::new(),
            printed: Vec::new(),
        })
    }
}

/// A clock that stands still, an interrupt that never comes, and a host with no facts.
struct Still;

impl crate::env::Clock for Still {
    fn now(&self) -> std::time::SystemTime {
        std::time::SystemTime::UNIX_EPOCH
    }

    fn cpu(&self) -> Option<crate::env::CpuReading> {
        None
    }
}

impl crate::env::Host for Still {
    fn capture(&self) -> crate::model::Environment {
        crate::model::Environment::default()
    }

    fn name(&self) -> Option<String> {
        None
    }
}

impl crate::env::Interrupt for Still {
    fn install(&self) {}

    fn requested(&self) -> bool {
        false
    }
}

fn timing() -> Timing {
    Timing {
        runs: None,
        min_runs: 2,
        max_runs: None,
        min_time: 3.0,
        warmup: 0,
        ignore_failure: false,
        shell: None,
        measure: crate::runner::counts::Measure::TIME,
    }
}

/// A command called `name` that runs `true`, with `helpers` around its runs.
fn planned(name: &str, helpers: Helpers<Option<String>>) -> Planned {
    Planned {
        command: "true".into(),
        name: name.into(),
        params: Vec::new(),
        helpers,
    }
}

/// Times one command through a script; returns what ended it, how many runs were
/// recorded, the notes, and the helpers run.
fn timed(runs: Vec<(f64, i32)>, timing: Timing) -> (Ending, usize, Vec<String>, Vec<String>) {
    timed_with(runs, timing, Helpers::default())
}

/// As [`timed`], with `around` the command's runs.
fn timed_with(
    runs: Vec<(f64, i32)>,
    timing: Timing,
    around: Helpers<Option<String>>,
) -> (Ending, usize, Vec<String>, Vec<String>) {
    let helpers = Rc::new(RefCell::new(Vec::new()));
    let spawner = Scripted {
        runs: RefCell::new(runs),
        helpers: helpers.clone(),
    };
    let exec = Exec {
        commands: vec![planned("true", around)],
        timing,
        spawner: Box::new(spawner),
        progress: None,
        clock: Arc::new(Still),
        interrupt: Arc::new(Still),
        host: Arc::new(Still),
        counting: Vec::new(),
    };
    let done = exec.run(&mut |_| Ok(())).unwrap();
    let (count, notes) = done.input.map_or((0, Vec::new()), |input| {
        let bench = &input.runs[0].benchmarks[0];
        let time = bench.metric(vocab::WALL_TIME).unwrap();
        (
            time.values.len(),
            input.notes.iter().map(|n| n.message.clone()).collect(),
        )
    });
    let helpers = helpers.borrow().clone();
    (done.ending, count, notes, helpers)
}

/// Two commands timed in rounds through a script, stopped by `decide` (which hears each
/// round's wall times); what ended it, each command's wall times, and the helpers run.
fn in_rounds(
    runs: Vec<(f64, i32)>,
    decide: impl Fn(&[f64]) -> bool,
) -> (Ending, Vec<Vec<f64>>, Vec<String>) {
    let helpers = Rc::new(RefCell::new(Vec::new()));
    let command = |name: &str| {
        let around = Helpers {
            setup: Some("s".into()),
            cleanup: Some("c".into()),
            ..Helpers::default()
        };
        planned(name, around)
    };
    let exec = Exec {
        commands: vec![command("a"), command("b")],
        timing: timing(),
        spawner: Box::new(Scripted {
            runs: RefCell::new(runs),
            helpers: helpers.clone(),
        }),
        progress: None,
        clock: Arc::new(Still),
        interrupt: Arc::new(Still),
        host: Arc::new(Still),
        counting: Vec::new(),
    };
    // In seconds, as scripted (the model keeps nanoseconds).
    let walls = |run: &crate::model::Run| -> Vec<Vec<f64>> {
        let seconds = |b: &crate::model::Benchmark| {
            let time = b.metric(vocab::WALL_TIME).unwrap();
            time.values.iter().map(|ns| ns / 1e9).collect()
        };
        run.benchmarks.iter().map(seconds).collect()
    };
    let done = exec
        .run_rounds(10, crate::runner::turn_order, &mut |run| {
            let round: Vec<f64> = walls(&run).concat();
            Ok(decide(&round))
        })
        .unwrap();
    let all = done.input.map_or(Vec::new(), |input| walls(&input.runs[0]));
    let helpers = helpers.borrow().clone();
    (done.ending, all, helpers)
}

#[test]
fn rounds_take_turns_and_stop_when_decided() {
    // a takes 0.1 s and b 0.2 s only if they run A B, B A, A B, ...
    let script = [(0.1, 0), (0.2, 0), (0.2, 0), (0.1, 0)].repeat(5);
    let (ending, walls, helpers) = in_rounds(script.clone(), |_| false);
    assert!(matches!(ending, Ending::Done));
    assert_eq!(
        walls,
        [vec![0.1; 10], vec![0.2; 10]],
        "A B, B A, to the most rounds"
    );
    assert_eq!(helpers, ["--setup", "--cleanup"]);
    // Decided at the third round: each round's run holds one sample of each, in turn.
    let seen = RefCell::new(0);
    let (_, walls, _) = in_rounds(script, |round| {
        assert_eq!(round, [0.1, 0.2]);
        *seen.borrow_mut() += 1;
        *seen.borrow() == 3
    });
    assert_eq!(walls, [vec![0.1; 3], vec![0.2; 3]]);
}

#[test]
fn a_failing_round_keeps_the_rounds_before_it() {
    // The second round runs b, then a, which fails.
    let script = vec![(0.1, 0), (0.2, 0), (0.2, 0), (0.1, 1)];
    let (ending, walls, helpers) = in_rounds(script, |_| false);
    assert!(matches!(ending, Ending::Failed(_)));
    assert_eq!(walls, [vec![0.1], vec![0.2, 0.2]]);
    assert_eq!(helpers, ["--setup", "--cleanup"]);
}

#[test]
fn min_time_sets_the_run_count_from_the_first_run_within_the_bounds() {
    // ⌈3 s / 0.25 s⌉ = 12 runs, as hyperfine plans them.
    assert_eq!(timed(vec![(0.25, 0)], timing()).1, 12);
    let capped = Timing {
        max_runs: Some(5),
        ..timing()
    };
    assert_eq!(timed(vec![(0.25, 0)], capped).1, 5);
    let slow = Timing {
        min_runs: 4,
        ..timing()
    };
    assert_eq!(timed(vec![(10.0, 0)], slow).1, 4);
    let exact = Timing {
        runs: Some(3),
        ..timing()
    };
    assert_eq!(timed(vec![(0.001, 0)], exact).1, 3);
}

#[test]
fn a_failing_run_stops_the_command_unless_failures_are_ignored() {
    let script = || vec![(0.1, 0), (0.1, 1), (0.1, 0)];
    let four = Timing {
        runs: Some(4),
        ..timing()
    };
    let (ending, count, _, _) = timed(script(), four.clone());
    let Ending::Failed(failure) = ending else {
        panic!("a failed run did not stop the command")
    };
    let said = failure.to_string();
    assert!(said.contains("--ignore-failure"), "{said}");
    assert!(
        said.ends_with(
            "the last of its stderr:\nls: cannot access '/nonexistent': No such file or directory"
        ),
        "{said}"
    );
    assert_eq!(count, 0, "nothing of a failed command is kept");
    let ignoring = Timing {
        ignore_failure: true,
        ..four
    };
    let (ending, count, notes, _) = timed(script(), ignoring);
    assert!(matches!(ending, Ending::Done));
    assert_eq!(count, 4);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("1 of 4 runs exited non-zero")),
        "{notes:?}"
    );
}

#[test]
fn helpers_run_around_the_runs_as_hyperfine_runs_them() {
    let three = Timing {
        runs: Some(3),
        warmup: 2,
        ..timing()
    };
    let around = Helpers {
        setup: Some("s".into()),
        prepare: Some("p".into()),
        conclude: Some("C".into()),
        cleanup: Some("c".into()),
    };
    let (_, count, _, helpers) = timed_with(vec![(0.01, 0)], three, around);
    assert_eq!(count, 3, "warm-up runs are not recorded");
    let mut expected = vec!["--setup"];
    for _ in 0..5 {
        expected.extend(["--prepare", "--conclude"]);
    }
    expected.push("--cleanup");
    assert_eq!(helpers, expected);
}
