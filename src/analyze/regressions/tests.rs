use super::*;
use crate::analyze::changes::generated::{injected, uniform};
use crate::store::Figure;

/// A series of `runs` runs at commits c0000.., 5 repetitions each: 1,000 ns/op times
/// `factor(run)`, each run off by up to ±`scatter` (a build's or boot's luck), each
/// repetition by ±3 %.
fn series(
    seed: u64,
    runs: usize,
    scatter: f64,
    unit: &str,
    factor: impl Fn(usize) -> f64,
) -> Vec<Point> {
    let mut uniform = uniform(seed);
    (0..runs)
        .map(|run| {
            let level = 1000.0 * factor(run) * (1.0 + scatter * (2.0 * uniform() - 1.0));
            let mut repetitions: Vec<f64> =
                (0..5).map(|_| level * (0.97 + 0.06 * uniform())).collect();
            let value = crate::model::summary::median(&mut repetitions.clone());
            repetitions.rotate_left(run % 5);
            Point {
                run: StoredRun {
                    id: run as i64 + 1,
                    stored_at: format!("2026-11-{:02}T00:00:00Z", 1 + run / 30),
                    commit: Some(format!("c{run:04}{}", "0".repeat(35))),
                    branch: Some("main".into()),
                    dirty: Some(false),
                    tag: None,
                    format: "go".into(),
                    benchmarks: 300,
                },
                figure: Figure {
                    bench: format!("B{seed}"),
                    metric: unit.into(),
                    statistic: String::new(),
                    source_unit: unit.into(),
                    n: 5,
                    value,
                    ci_low: None,
                    ci_high: None,
                    repetitions,
                },
            }
        })
        .collect()
}

fn judge_all(family: &Family, all: &[Vec<Point>]) -> Vec<Finding> {
    let judged = all
        .iter()
        .enumerate()
        .map(|(i, points)| family.judge(&format!("B{i}"), points))
        .collect();
    family.decide(judged)
}

#[test]
fn in_a_project_with_run_to_run_scatter_exactly_the_injected_slowdowns_are_found() {
    // As bench/gen-history.py injects them (every 97 commits, three benchmarks slower by
    // 10, 25 and 50 %), with each run also off by up to ±2 %.
    let injected = injected();
    let all: Vec<Vec<Point>> = (0..300)
        .map(|bench| {
            series(bench as u64, 500, 0.02, "ns/op", |run| {
                injected
                    .iter()
                    .filter(|&&(c, b, _)| b == bench && run >= c)
                    .map(|&(_, _, size)| 1.0 + size / 100.0)
                    .product()
            })
        })
        .collect();
    let found = judge_all(
        &Family {
            alpha: 0.05,
            series: 300,
        },
        &all,
    );
    let mut expected = injected.clone();
    expected.sort_by_key(|&(c, b, _)| (std::cmp::Reverse(c), format!("B{b}")));
    let shown: Vec<(usize, String, Kind)> = found
        .iter()
        .map(|f| (f.at, f.bench.clone(), f.kind))
        .collect();
    let wanted: Vec<(usize, String, Kind)> = expected
        .iter()
        .map(|&(c, b, _)| (c, format!("B{b}"), Kind::ChangePoint))
        .collect();
    assert_eq!(shown, wanted);
    for (f, &(c, _, size)) in found.iter().zip(&expected) {
        assert!(f.worse() && (f.percent - size).abs() < 2.0, "{f:?}");
        let (low, high) = f.interval.unwrap();
        assert!(
            low < f.percent && f.percent < high && high - low < 4.0,
            "{f:?}"
        );
        assert_eq!(
            f.before.commit.as_deref().unwrap()[..5],
            format!("c{:04}", c - 1)
        );
        assert_eq!(f.after.commit.as_deref().unwrap()[..5], format!("c{c:04}"));
    }
}

#[test]
fn no_change_in_three_hundred_scattered_histories_lists_nothing() {
    let all: Vec<Vec<Point>> = (0..300)
        .map(|bench| series(1000 + bench, 500, 0.02, "ns/op", |_| 1.0))
        .collect();
    assert_eq!(
        judge_all(
            &Family {
                alpha: 0.05,
                series: 300
            },
            &all
        ),
        []
    );
}

#[test]
fn a_slowdown_in_the_newest_runs_is_found_before_any_change_point_can_show_it() {
    for newest in [1, 3] {
        let mut all: Vec<Vec<Point>> = (0..300)
            .map(|bench| series(bench, 200, 0.0, "ns/op", |_| 1.0))
            .collect();
        all[42] = series(42, 200, 0.0, "ns/op", |run| {
            if run >= 200 - newest { 1.2 } else { 1.0 }
        });
        let found = judge_all(
            &Family {
                alpha: 0.05,
                series: 300,
            },
            &all,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(
            (f.bench.as_str(), f.kind, f.at, f.runs),
            ("B42", Kind::Recent, 200 - newest, newest)
        );
        assert!(f.worse() && (f.percent - 20.0).abs() < 2.0, "{f:?}");
        assert!(f.adjusted <= 0.05 && f.adjusted >= f.p);
    }
}

#[test]
fn improvements_come_after_regressions_and_higher_is_better_is_honoured() {
    let faster = series(
        1,
        100,
        0.0,
        "ns/op",
        |run| if run >= 40 { 0.7 } else { 1.0 },
    );
    let fewer_ops = series(
        2,
        100,
        0.0,
        "ops/s",
        |run| if run >= 60 { 0.7 } else { 1.0 },
    );
    let family = Family {
        alpha: 0.05,
        series: 2,
    };
    let found = family.decide(vec![
        family.judge("Faster", &faster),
        family.judge("Throughput", &fewer_ops),
    ]);
    let order: Vec<(&str, bool, usize)> = found
        .iter()
        .map(|f| (f.bench.as_str(), f.worse(), f.at))
        .collect();
    assert_eq!(order, [("Throughput", true, 60), ("Faster", false, 40)]);
}

#[test]
fn segments_run_between_change_points() {
    let flat = series(5, 50, 0.0, "ns/op", |run| if run >= 20 { 1.5 } else { 1.0 });
    let family = Family {
        alpha: 0.05,
        series: 1,
    };
    let changes = family.judge("B", &flat);
    assert_eq!(changes.segments(50), [0..20, 20..50]);
    let found = family.decide(vec![changes]);
    let kinds: Vec<(Kind, usize)> = found.iter().map(|f| (f.kind, f.at)).collect();
    assert_eq!(
        kinds,
        [(Kind::ChangePoint, 20)],
        "the newest runs are no change"
    );
}

#[test]
fn a_drift_is_one_trend_with_its_slope_and_a_step_on_it_is_found_at_its_run() {
    let family = Family {
        alpha: 0.05,
        series: 1,
    };
    let drift = |run: usize| 0.985f64.powi(run as i32);
    let (mut one_trend, mut stepped_right) = (0, 0);
    for seed in 0..100 {
        // 1.5 % faster a run over 40 runs, each run off by up to ±3 %.
        let points = series(seed, 40, 0.03, "ns/op", drift);
        let found = family.decide(vec![family.judge("B", &points)]);
        let kinds: Vec<(Kind, usize, usize)> =
            found.iter().map(|f| (f.kind, f.at, f.runs)).collect();
        if kinds == [(Kind::Trend, 0, 40)] {
            one_trend += 1;
            let slope = found[0].slope.unwrap();
            assert!((slope + 1.5).abs() < 0.3, "seed {seed}: {slope}");
            assert_eq!(
                found[0].found_by(),
                format!("trend {slope:+.2}%/run over 40 runs")
            );
            assert!(!found[0].worse());
        }
        // The same drift with a 20 % slowdown at run 25: the step at its run, its own size
        // (the jump there, each side's trend carried to it), never a drift's.
        let stepped = series(seed, 40, 0.03, "ns/op", |run| {
            drift(run) * if run >= 25 { 1.2 } else { 1.0 }
        });
        let found = family.decide(vec![family.judge("B", &stepped)]);
        let steps: Vec<&Finding> = found
            .iter()
            .filter(|f| f.kind == Kind::ChangePoint)
            .collect();
        let step = steps
            .iter()
            .find(|f| f.at == 25)
            .expect("the step is found");
        // Runs scatter by about 2 % here: the jump is read within 3 of those.
        assert!((step.percent - 20.0).abs() < 6.0, "seed {seed}: {step:?}");
        stepped_right += usize::from(steps.len() == 1);
    }
    // Alpha allows a few histories a false step in the drift.
    assert!(one_trend >= 95, "{one_trend} of 100 drifts were one trend");
    assert!(
        stepped_right >= 95,
        "{stepped_right} of 100 had only the step"
    );
}

#[test]
fn a_short_history_that_only_drifts_lists_a_trend_not_a_one_commit_step() {
    // xxhash's Sum64/4B over 9 stored runs: 7.10 → 5.70 → 4.77 → 3.83 → 3.26 ns.
    let figures = [7.10, 7.05, 5.70, 5.72, 4.77, 4.80, 3.83, 3.85, 3.26];
    let mut points = series(1, figures.len(), 0.0, "ns/op", |_| 1.0);
    for (point, value) in points.iter_mut().zip(figures) {
        point.figure.value = value;
    }
    let family = Family {
        alpha: 0.05,
        series: 10,
    };
    let found = family.decide(vec![family.judge("BenchmarkSum64/4B", &points)]);
    let kinds: Vec<Kind> = found.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [Kind::Trend], "{found:?}");
    assert!(
        (found[0].percent - (3.26 / 7.10 - 1.0) * 100.0).abs() < 10.0,
        "{found:?}"
    );
}

proptest::proptest! {
    /// Any history, zeros, negatives, ties and single values included, is judged without a
    /// panic, every change falls between two runs (a trend within them), and its drawing
    /// covers every run once.
    #[test]
    fn any_history_is_judged_and_drawn_whole(
        values in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::num::f64::NORMAL,
                proptest::strategy::Just(0.0),
                proptest::sample::select(vec![1.0, 2.0, 3.0]),
            ],
            0..80,
        ),
        repetitions in 0usize..4,
        series in 1usize..4,
    ) {
        let points = series_of(&values, repetitions);
        let family = Family { alpha: 0.05, series };
        let changes = family.judge("B", &points);
        let at: Vec<usize> = changes.change_points.iter().map(|f| f.at).collect();
        let found = family.decide(vec![changes]);
        for f in &found {
            match f.kind {
                // A trend spans its runs, from its first.
                Kind::Trend => proptest::prop_assert!(
                    f.runs >= MIN_TREND && f.at + f.runs <= points.len()
                ),
                _ => proptest::prop_assert!(f.at >= 1 && f.at < points.len()),
            }
            proptest::prop_assert!(f.runs >= 1 && f.runs_before >= 1);
        }
        let drawn = crate::analyze::downsample::downsample(&points, &at, 20, 60);
        let covered: Vec<usize> = drawn.iter().flat_map(|d| d.runs.clone()).collect();
        proptest::prop_assert_eq!(covered, (0..points.len()).collect::<Vec<_>>());
    }
}

/// Points of the given figures, each with `repetitions` copies of its figure.
fn series_of(values: &[f64], repetitions: usize) -> Vec<Point> {
    let mut points = series(0, values.len(), 0.0, "ns/op", |_| 1.0);
    for (point, &value) in points.iter_mut().zip(values) {
        point.figure.value = value;
        point.figure.repetitions = vec![value; repetitions];
    }
    points
}

/// A level that jumped once is a change at its run, sized as the jump, not a drift over the
/// whole history (twelve runs: too few for the change-point test over every split alone).
#[test]
fn a_short_history_with_one_jump_lists_a_step_not_a_trend() {
    let points = series(
        3,
        12,
        0.01,
        "ns/op",
        |run| if run >= 8 { 1.25 } else { 1.0 },
    );
    let family = Family {
        alpha: 0.05,
        series: 4,
    };
    let found = family.decide(vec![family.judge("B", &points)]);
    // Found at its run, by the newest runs' test or as a step, and never as a trend.
    let at: Vec<usize> = found.iter().map(|f| f.at).collect();
    assert_eq!(at, [8], "{found:?}");
    assert!(found[0].kind != Kind::Trend, "{found:?}");
    assert!((found[0].percent - 25.0).abs() < 4.0, "{found:?}");
}
