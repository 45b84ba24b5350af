//! History: the figures a run leaves in the store, and the trend of one benchmark across
//! stored runs with its change points.

use super::compare::bounded;
use super::counted;
use super::regressions::{Finding, Kind};
use super::stats::CONFIDENCE;
use super::utest::mann_whitney;
use super::view::{Cell, Change, ChangeVerdict, Column, Row, Table, keys};
use crate::model::summary::median_and_robust_sd;
use crate::model::{Metric, MetricKind, Run, Statistic, Summary, Unit, identities};
use crate::store::{Figure, Point};

/// What `history` and `--against-history` need of a run without decoding it: each metric's
/// median over repetitions with its interval and values, and a distribution's statistics.
pub fn figures(run: &Run) -> Vec<Figure> {
    let mut out = Vec::new();
    let names = identities(&run.benchmarks.iter().map(|b| &b.name).collect::<Vec<_>>());
    for (bench, name) in run.benchmarks.iter().zip(names) {
        for metric in &bench.metrics {
            if metric.kind == MetricKind::Series {
                continue;
            }
            if !metric.values.is_empty() {
                if let Some(s) = Summary::of(&metric.values) {
                    out.push(Figure {
                        bench: name.to_string(),
                        metric: metric.name.clone(),
                        statistic: String::new(),
                        source_unit: metric.source_unit.clone(),
                        n: s.n as u64,
                        value: s.median,
                        ci_low: s.median_ci.as_ref().map(|c| c.low),
                        ci_high: s.median_ci.as_ref().map(|c| c.high),
                        repetitions: metric.values.clone(),
                    });
                }
            } else if metric.histogram.is_some() {
                for statistic in Statistic::OF_DISTRIBUTION {
                    if let Some(b) = bounded(bench, metric, statistic) {
                        let bounds = (b.low < b.high).then_some((b.low, b.high));
                        out.push(Figure {
                            bench: name.to_string(),
                            metric: metric.name.clone(),
                            statistic: statistic.name().to_string(),
                            source_unit: metric.source_unit.clone(),
                            n: b.samples,
                            value: b.value,
                            ci_low: bounds.map(|b| b.0),
                            ci_high: bounds.map(|b| b.1),
                            repetitions: Vec::new(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// The stored figure `text` names among a benchmark's `stored` (metric, statistic) pairs
/// (`""` the statistic of repetitions), as [`crate::analyze::figure::resolve`] names a run's:
/// a metric by its name (a BENCH line's `avg` included), `METRIC:STATISTIC`, a statistic by
/// another of its names (`mean` is a BENCH line's `avg`), else that statistic of the
/// benchmark's one distribution. `Ok(None)`: the benchmark has no such figure; `Err`: the
/// metrics it could be.
pub fn stored_figure(
    text: &str,
    stored: &[(String, String)],
) -> std::result::Result<Option<(String, String)>, Vec<String>> {
    let has =
        |metric: &str, statistic: &str| stored.iter().any(|(m, s)| m == metric && s == statistic);
    let of_distribution = |text: &str| Statistic::parse_among(text, &Statistic::OF_DISTRIBUTION);
    if has(text, "") {
        return Ok(Some((text.to_string(), String::new())));
    }
    if let Some((metric, stat)) = text.rsplit_once(':')
        && let Some(statistic) = of_distribution(stat)
    {
        let name = statistic.name();
        return Ok(has(metric, name).then(|| (metric.to_string(), name.to_string())));
    }
    let Some(statistic) = Statistic::parse(text) else {
        return Ok(None);
    };
    let named: Vec<&String> = (stored.iter())
        .filter(|(m, s)| s.is_empty() && Statistic::parse(m) == Some(statistic))
        .map(|(m, _)| m)
        .collect();
    let distributions: Vec<&String> = (stored.iter())
        .filter(|(_, s)| *s == statistic.name())
        .map(|(m, _)| m)
        .collect();
    let statistic = match named.is_empty() {
        true => statistic.name(),
        false => "",
    };
    match (named.is_empty(), distributions.is_empty()) {
        (false, _) => one_of(named, statistic),
        (true, false) => one_of(distributions, statistic),
        (true, true) => Ok(None),
    }
}

fn one_of(
    metrics: Vec<&String>,
    statistic: &str,
) -> std::result::Result<Option<(String, String)>, Vec<String>> {
    match metrics[..] {
        [metric] => Ok(Some((metric.clone(), statistic.to_string()))),
        _ => Err(metrics.into_iter().cloned().collect()),
    }
}

/// How many earlier runs set the noise band of a run with too few repetitions to test.
const BAND_WINDOW: usize = 10;
/// Median absolute deviations (scaled to a standard deviation) a lone figure's step from the
/// previous one must pass to be a change.
const BAND_WIDTH: f64 = 3.0;

/// Whether `point` moved from `previous` by more than noise: the U test when both have
/// enough repetitions, bounds that do not overlap for distributions, else a step from the
/// previous figure wider than the preceding runs' noise (3 scaled MADs).
fn verdict(
    point: &Figure,
    previous: &Figure,
    earlier: &[&Figure],
    alpha: f64,
) -> (ChangeVerdict, Option<f64>) {
    let (a, b) = (&previous.repetitions, &point.repetitions);
    if a.len() >= 4 && b.len() >= 4 {
        let p = mann_whitney(a, b).map_or(1.0, |t| t.p);
        let v = if p <= alpha {
            ChangeVerdict::Significant
        } else {
            ChangeVerdict::Noise
        };
        return (v, Some(p));
    }
    if point.statistic == "max" {
        return (ChangeVerdict::Untested, None);
    }
    if let (Some(lo), Some(hi), Some(plo), Some(phi)) = (
        point.ci_low,
        point.ci_high,
        previous.ci_low,
        previous.ci_high,
    ) && !point.statistic.is_empty()
    {
        let apart = lo > phi || hi < plo;
        return (
            if apart {
                ChangeVerdict::Significant
            } else {
                ChangeVerdict::Noise
            },
            None,
        );
    }
    if earlier.len() < 3 {
        return (ChangeVerdict::Untested, None);
    }
    let mut values: Vec<f64> = earlier.iter().map(|f| f.value).collect();
    let (centre, mad) = median_and_robust_sd(&mut values);
    // The step from the previous run, not the distance from the band's centre: a run that
    // repeats a moved previous one has not moved.
    let outside = (point.value - previous.value).abs() > BAND_WIDTH * mad.max(centre.abs() * 1e-9);
    (
        if outside {
            ChangeVerdict::Significant
        } else {
            ChangeVerdict::Noise
        },
        None,
    )
}

/// Point `i`'s change from the run shown before it (none for the first).
fn change_cell(points: &[Point], i: usize, metric: &Metric, alpha: f64) -> Cell {
    let f = &points[i].figure;
    let Some(previous) = i.checked_sub(1).map(|j| &points[j].figure) else {
        return Cell::Empty;
    };
    let earlier: Vec<&Figure> = points[i.saturating_sub(BAND_WINDOW)..i]
        .iter()
        .map(|p| &p.figure)
        .collect();
    change_from(f, previous, &earlier, metric, alpha)
}

/// The marks of the run at `place` in its whole series: `▲ up` / `▼ down` where a change point
/// or the newest runs' change starts, `↗ trend +1.50%/run` where a trend starts and `↗` on
/// its other runs; the same changes `history --regressions` and the site list.
fn marks(place: usize, findings: &[&Finding]) -> String {
    let mut marks = Vec::new();
    for f in findings {
        let rising = f.percent > 0.0;
        match f.kind {
            Kind::ChangePoint | Kind::Recent if f.at == place => {
                marks.push(if rising { "▲ up" } else { "▼ down" }.to_string())
            }
            Kind::Trend if (f.at..f.at + f.runs).contains(&place) => {
                let arrow = if rising { "↗" } else { "↘" };
                marks.push(match (place == f.at, f.slope) {
                    (true, Some(slope)) => format!("{arrow} trend {slope:+.2}%/run"),
                    _ => arrow.to_string(),
                });
            }
            _ => {}
        }
    }
    marks.join(" ")
}

/// The change of figure `f` from `from`, judged as [`verdict`] judges it.
fn change_from(
    f: &Figure,
    from: &Figure,
    earlier: &[&Figure],
    metric: &Metric,
    alpha: f64,
) -> Cell {
    let (before, after) = (&from.repetitions, &f.repetitions);
    let (verdict, p) = if counted::decided(&f.metric, before, after) {
        (ChangeVerdict::Counted, None)
    } else if counted::stored_once(&f.metric, before, after) {
        (ChangeVerdict::CountedOnce, None)
    } else {
        verdict(f, from, earlier, alpha)
    };
    Cell::Change(Box::new(Change {
        better: metric.better,
        percent: (from.value != 0.0).then(|| (f.value / from.value - 1.0) * 100.0),
        p,
        interval: None,
        n_base: from.n,
        n: f.n,
        verdict,
        diagnostics: Vec::new(),
    }))
}

/// The trend of one benchmark's figure: one row per stored run shown, oldest first, with the
/// change from the run before and the changes of its whole series marked (`places`: each
/// shown run's place in the series, `findings`: that series' changes that hold); `from_base`:
/// the first run is the base (`--since`) and every run's change from it has a column too.
pub fn trend(
    bench: &str,
    points: &[Point],
    places: &[usize],
    findings: &[&Finding],
    alpha: f64,
    from_base: bool,
) -> Table {
    let figure = points.first().map(|p| &p.figure);
    let source_unit = figure.map_or("", |f| f.source_unit.as_str());
    let what = figure.map_or(String::new(), Figure::label);
    let mut columns = vec![
        Column::new("Run", keys::STORED_RUN),
        Column::new("Stored", keys::STORED_AT).dropped_at(3),
        Column::new("Commit", keys::COMMIT).dropped_at(1),
        Column::new("Branch", keys::BRANCH).dropped_at(3),
        Column::new(&what, keys::VALUE).in_unit(source_unit),
        Column::new("± 95% CI", keys::CI95).dropped_at(2),
        Column::new("vs previous", keys::CHANGE),
    ];
    if from_base {
        columns.push(Column::new("vs base", keys::CHANGE_FROM_BASE));
    }
    columns.push(Column::new("Change", keys::CHANGE_POINT).dropped_at(1));
    let mut rows = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let f = &point.figure;
        let parsed = Unit::parse(&f.source_unit);
        let metric = Metric::new(&f.metric, &parsed, &f.source_unit);
        let text = |t: String| Cell::Text { text: t };
        let commit = point.run.short_commit().unwrap_or_else(|| "—".into());
        let interval = match (f.ci_low, f.ci_high) {
            (Some(low), Some(high)) => Some(super::stats::Interval {
                low,
                high,
                level: CONFIDENCE,
                coverage: CONFIDENCE,
            }),
            _ => None,
        };
        let base_mark = if from_base && i == 0 { " (base)" } else { "" };
        let mut cells = vec![
            text(format!("#{}{base_mark}", point.run.id)),
            text(point.run.stored_at.clone()),
            text(commit),
            text(point.run.branch.clone().unwrap_or_else(|| "—".into())),
            Cell::value_of(f.value, &metric),
            Cell::Spread {
                n: f.n as usize,
                relative_percent: interval.as_ref().map(|c| c.relative_spread(f.value)),
                interval,
            },
        ];
        cells.push(change_cell(points, i, &metric, alpha));
        if from_base {
            cells.push(match i {
                0 => Cell::Empty,
                _ => change_from(f, &points[0].figure, &[], &metric, alpha),
            });
        }
        cells.push(text(marks(places[i], findings)));
        rows.push(Row {
            benchmark: bench.to_string(),
            cells,
        });
    }
    Table {
        title: Some(format!("{bench} · {what}")),
        run: 0,
        cycle: None,
        columns,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredRun;

    fn point(id: i64, value: f64, repetitions: Vec<f64>) -> Point {
        Point {
            run: StoredRun {
                id,
                stored_at: "2026-11-22T00:00:00Z".into(),
                commit: Some(format!("{id:040x}")),
                branch: Some("main".into()),
                dirty: Some(false),
                tag: None,
                format: "go".into(),
                benchmarks: 1,
            },
            figure: Figure {
                bench: "BenchmarkA".into(),
                metric: "ns/op".into(),
                statistic: String::new(),
                source_unit: "ns/op".into(),
                n: repetitions.len().max(1) as u64,
                value,
                ci_low: None,
                ci_high: None,
                repetitions,
            },
        }
    }

    fn marks_of(table: &Table) -> Vec<String> {
        table
            .rows
            .iter()
            .map(|r| match &r.cells[7] {
                Cell::Text { text } => text.clone(),
                _ => String::new(),
            })
            .collect()
    }

    /// The trend table of `points` (the whole series shown), marked with the changes the
    /// regressions engine finds in it alone.
    fn judged(points: &[Point]) -> Table {
        let family = super::super::regressions::Family {
            alpha: 0.05,
            series: 1,
        };
        let found = family.decide(vec![family.judge("BenchmarkA", points)]);
        let findings: Vec<&Finding> = found.iter().collect();
        let places: Vec<usize> = (0..points.len()).collect();
        trend("BenchmarkA", points, &places, &findings, 0.05, false)
    }

    #[test]
    fn a_step_in_single_values_is_marked_at_its_run_and_noise_is_not() {
        let values = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 130.0, 129.0, 131.0];
        let points: Vec<Point> = values
            .iter()
            .enumerate()
            .map(|(i, v)| point(i as i64 + 1, *v, Vec::new()))
            .collect();
        let m = marks_of(&judged(&points));
        assert_eq!(m[6], "▲ up", "{m:?}");
        assert!(
            m.iter().enumerate().all(|(i, m)| i == 6 || m.is_empty()),
            "{m:?}"
        );
    }

    #[test]
    fn a_drift_is_marked_as_one_trend_not_as_steps() {
        // 2 % faster a run over 20 runs, ±1 %: what the site and --regressions list too.
        let points: Vec<Point> = (0..20)
            .map(|i| {
                let wobble = [1.0, 0.99, 1.01, 1.005][i % 4];
                point(
                    i as i64 + 1,
                    100.0 * 0.98f64.powi(i as i32) * wobble,
                    Vec::new(),
                )
            })
            .collect();
        let m = marks_of(&judged(&points));
        assert!(m[0].starts_with("↘ trend -2."), "{m:?}");
        assert!(m[1..].iter().all(|m| m == "↘"), "{m:?}");
    }

    #[test]
    fn repetitions_are_tested_run_against_run() {
        let a = point(1, 100.0, vec![99.0, 100.0, 101.0, 100.5, 99.5, 100.2]);
        let b = point(2, 90.0, vec![89.0, 90.0, 91.0, 90.5, 89.5, 90.2]);
        let c = point(3, 90.1, vec![89.1, 90.1, 91.1, 90.4, 89.4, 90.3]);
        let table = judged(&[a, b, c]);
        let verdicts: Vec<Option<ChangeVerdict>> = table
            .rows
            .iter()
            .map(|r| match &r.cells[6] {
                Cell::Change(c) => Some(c.verdict),
                _ => None,
            })
            .collect();
        use ChangeVerdict::*;
        assert_eq!(verdicts, [None, Some(Significant), Some(Noise)]);
    }

    #[test]
    fn a_stored_figure_is_named_as_a_runs_is() {
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(m, s)| (m.to_string(), s.to_string()))
                .collect()
        };
        let found = |text: &str, stored: &[(String, String)]| {
            stored_figure(text, stored).map(|f| f.map(|(m, s)| format!("{m}|{s}")))
        };
        let bench = pairs(&[("min", ""), ("avg", ""), ("max", "")]);
        // A BENCH line's own statistics, `mean` its avg (it was "no stored run has avg").
        assert_eq!(found("avg", &bench), Ok(Some("avg|".into())));
        assert_eq!(found("mean", &bench), Ok(Some("avg|".into())));
        assert_eq!(found("max", &bench), Ok(Some("max|".into())));
        assert_eq!(found("p99", &bench), Ok(None));
        let go = pairs(&[("ns/op", ""), ("B/op", "")]);
        assert_eq!(found("ns/op", &go), Ok(Some("ns/op|".into())));
        let timer = pairs(&[("latency", "p99"), ("latency", "avg"), ("latency", "p50")]);
        assert_eq!(found("p99", &timer), Ok(Some("latency|p99".into())));
        assert_eq!(found("median", &timer), Ok(Some("latency|p50".into())));
        assert_eq!(found("latency:p99", &timer), Ok(Some("latency|p99".into())));
        assert_eq!(found("latency:p90", &timer), Ok(None));
        let two = pairs(&[("rtt", "p99"), ("latency", "p99")]);
        assert_eq!(
            found("p99", &two),
            Err(vec!["rtt".into(), "latency".into()])
        );
    }
}
