//! A long history drawn in bounded size: the newest runs one by one, the runs on either side of
//! each change point one by one, and the older runs between them in buckets that never span a
//! change point, each drawn as its runs' median with their range.

use crate::model::summary::median;
use crate::store::{Point, StoredRun};
use std::ops::Range;

/// One drawn point: a run, or a bucket of consecutive runs with no change point among them.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    /// The series' indices of the runs it stands for.
    pub runs: Range<usize>,
    pub first: StoredRun,
    pub last: StoredRun,
    /// The median of the runs' figures, and the lowest and highest of their figures (a single
    /// run: its interval when it has one).
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// `points` drawn in at most about `budget` points, the newest `recent` one by one; `changes`:
/// the indices of the first runs after change points.
pub fn downsample(points: &[Point], changes: &[usize], recent: usize, budget: usize) -> Vec<Drawn> {
    let n = points.len();
    let old_end = n.saturating_sub(recent);
    // Single runs: the newest, and the two runs around each change point.
    let mut single = vec![false; n];
    single[old_end..].fill(true);
    for &at in changes {
        for i in [at.wrapping_sub(1), at] {
            if let Some(s) = single.get_mut(i) {
                *s = true;
            }
        }
    }
    let singles = single.iter().filter(|s| **s).count();
    let bucketed = n - singles;
    let room = budget.saturating_sub(singles).max(1);
    let size = bucketed.div_ceil(room).max(1);
    let mut drawn = Vec::new();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        if !single[start] {
            while end < n && end - start < size && !single[end] && !changes.contains(&end) {
                end += 1;
            }
        }
        drawn.push(bucket(points, start..end));
        start = end;
    }
    drawn
}

fn bucket(points: &[Point], runs: Range<usize>) -> Drawn {
    let figures = &points[runs.clone()];
    let mut values: Vec<f64> = figures.iter().map(|p| p.figure.value).collect();
    let (low, high) = match figures {
        [only] => (
            only.figure.ci_low.unwrap_or(only.figure.value),
            only.figure.ci_high.unwrap_or(only.figure.value),
        ),
        _ => values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            }),
    };
    Drawn {
        first: figures[0].run.clone(),
        last: figures[figures.len() - 1].run.clone(),
        value: median(&mut values),
        low,
        high,
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(values: &[f64]) -> Vec<Point> {
        let ids = 1..;
        ids.zip(values)
            .map(|(id, &v)| Point::sample(id, None, v))
            .collect()
    }

    #[test]
    fn five_hundred_runs_fit_the_budget_and_no_bucket_spans_a_change() {
        let values: Vec<f64> = (0..500)
            .map(|i| {
                if i >= 291 {
                    150.0
                } else {
                    100.0 + (i % 7) as f64
                }
            })
            .collect();
        let drawn = downsample(&points(&values), &[291], 20, 60);
        assert!(drawn.len() <= 64, "{}", drawn.len());
        // Every run is drawn once, in order.
        let covered: Vec<usize> = drawn.iter().flat_map(|d| d.runs.clone()).collect();
        assert_eq!(covered, (0..500).collect::<Vec<_>>());
        // The runs around the change and the newest 20 stand alone.
        for i in [290, 291].into_iter().chain(480..500) {
            assert!(drawn.iter().any(|d| d.runs == (i..i + 1)), "run {i}");
        }
        assert!(
            drawn
                .iter()
                .all(|d| !(d.runs.start < 291 && d.runs.end > 291))
        );
        let old = &drawn[0];
        assert!(old.runs.len() > 1 && old.low == 100.0 && old.high >= 106.0 - 1e-9);
    }

    #[test]
    fn a_short_history_is_drawn_run_by_run() {
        let drawn = downsample(&points(&[1.0, 2.0, 3.0]), &[], 20, 60);
        assert_eq!(drawn.len(), 3);
        assert_eq!(drawn[2].value, 3.0);
    }
}
