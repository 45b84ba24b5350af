//! Change points of a benchmark's history that hold up: binary segmentation of the stored
//! runs by the rank-sum test on the repetitions pooled on each side of a split, each split
//! judged against every split it was chosen from, so that a history of hundreds of runs does
//! not mark a change at one step in twenty as a run-against-run test at 0.05 does.
//!
//! Each run is a group of repetitions. All repetitions of the span being split are ranked once
//! (ties share their mid-rank); a split after run k is scored by the rank sum of the runs
//! before it, read from prefix sums, so every split of a span costs one addition. The split
//! with the largest standardized rank sum is kept when its two-sided p-value (normal
//! approximation with the tie correction), times the number of splits tried in that span and
//! times `tests` (the series judged together), is at most alpha; then both sides are split
//! in turn.
//!
//! A span's steady trend (Theil–Sen's slope) is taken out before its splits are scored: a
//! drift is a trend (`analyze::trend`), not a staircase of steps, while a step on top of a
//! drift still stands out of what is left.
//!
//! The test decides whether a span changed; where is told by least squares on the runs'
//! medians. The rank sum alone drifts towards a short end: two unchanged runs that happen to
//! rank high add to its sum, and it would mark the change two runs early.

use statrs::distribution::{ContinuousCDF, Normal};

/// A change between the runs before `at` and the runs from `at` on.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangePoint {
    /// The first run after the change.
    pub at: usize,
    /// The median of the repetitions from here to the next change, in percent of the median of
    /// those since the change before, less 100.
    pub percent: f64,
    /// The split's two-sided p-value, and that value adjusted for the splits tried and the
    /// series judged together.
    pub p: f64,
    pub adjusted: f64,
}

/// The change points of `runs` (each run's repetitions, oldest first), in run order. `tests`:
/// how many series are judged together (Bonferroni); `min_runs`: the fewest runs on either side
/// of a split.
pub fn change_points(
    runs: &[Vec<f64>],
    alpha: f64,
    tests: usize,
    min_runs: usize,
) -> Vec<ChangePoint> {
    let mut found = Vec::new();
    let min_runs = min_runs.max(1);
    // Every span's split is judged against every split of the whole series: a span left by an
    // earlier split is no fresh family, and a drift cut by a step must not yield more steps.
    let splits = (runs.len() + 1).saturating_sub(2 * min_runs).max(1);
    // Spans of runs still to split, as (start, end).
    let mut spans = vec![(0, runs.len())];
    while let Some((start, end)) = spans.pop() {
        let span = start..end;
        if let Some(point) = best_split(&runs[span.clone()], tests * splits, min_runs)
            .filter(|point| point.adjusted <= alpha)
        {
            let at = span.start + point.at;
            spans.push((span.start, at));
            spans.push((at, span.end));
            found.push(ChangePoint { at, ..point });
        }
    }
    found.sort_by_key(|point| point.at);
    // Each change's size is between its neighbouring segments, not the span it was split from.
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|p| p.at))
        .chain(std::iter::once(runs.len()))
        .collect();
    for (i, point) in found.iter_mut().enumerate() {
        point.percent = change(&runs[bounds[i]..point.at], &runs[point.at..bounds[i + 2]]);
    }
    found
}

/// The median of the repetitions `after`, in percent of those `before`, less 100.
fn change(before: &[Vec<f64>], after: &[Vec<f64>]) -> f64 {
    let pooled = |runs: &[Vec<f64>]| median(runs.iter().flatten().copied().collect());
    let (m0, m1) = (pooled(before), pooled(after));
    if m0 != 0.0 {
        (m1 / m0 - 1.0) * 100.0
    } else {
        f64::NAN
    }
}

/// `runs` on a log scale when every value is positive (a drift compounds), else as they are;
/// ranks, and so the test, are the same on either.
fn scaled(runs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    match runs.iter().flatten().all(|&v| v > 0.0) {
        true => runs
            .iter()
            .map(|r| r.iter().map(|v| v.ln()).collect())
            .collect(),
        false => runs.to_vec(),
    }
}

/// The split of `runs` whose sides differ most, with its p-value and that value times
/// `tests` (the splits and series it is judged among). Two
/// tests must both hold (the larger p is the split's): the rank-sum test of the figures as
/// they are, which no wild run can sway, and the t test of a step beyond a straight line
/// (least squares on the runs' medians: a line plus a step at the split against the line
/// alone), so that a drift, which every split of the rank sums takes for a step, is no step,
/// while a step on top of a drift is one. The split is where that step fits best.
fn best_split(runs: &[Vec<f64>], tests: usize, min_runs: usize) -> Option<ChangePoint> {
    if runs.len() < 2 * min_runs {
        return None;
    }
    let scaled = scaled(runs);
    let (_, z) = strongest_split(&scaled, min_runs)?;
    let p_ranks = 2.0 * Normal::standard().sf(z);
    let centres: Vec<f64> = scaled.iter().map(|r| median(r.clone())).collect();
    let (at, p) = match step_beyond_line(&centres, min_runs) {
        Some((at, p_step)) => (at, p_ranks.max(p_step)),
        // Too few runs to fit a line and a step: the rank sums and least squares decide.
        None => (least_squares_split(&scaled, min_runs), p_ranks),
    };
    Some(ChangePoint {
        at,
        percent: change(&runs[..at], &runs[at..]),
        p,
        adjusted: (p * tests.max(1) as f64).min(1.0),
    })
}

/// The step beyond a straight line that `values` show most: for every split (at least
/// `min_runs` a side), least squares of a line plus a step there, and the step's two-sided t
/// test (Student's t with n − 3 degrees of freedom); the split with the largest |t| and its
/// p-value. `None` with fewer than five values.
fn step_beyond_line(values: &[f64], min_runs: usize) -> Option<(usize, f64)> {
    let n = values.len();
    if n < 5 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    // Places centred, so that the sums stay well conditioned.
    let centre = (n - 1) as f64 / 2.0;
    let x: Vec<f64> = (0..n).map(|i| i as f64 - centre).collect();
    let (sx, sxx): (f64, f64) = (x.iter().sum(), x.iter().map(|v| v * v).sum());
    let (sy, sxy, syy): (f64, f64, f64) = (
        values.iter().sum(),
        x.iter().zip(values).map(|(a, b)| a * b).sum(),
        values.iter().map(|v| v * v).sum(),
    );
    let freedom = (n - 3) as f64;
    let t = statrs::distribution::StudentsT::new(0.0, 1.0, freedom).ok()?;
    let mut best: Option<(usize, f64)> = None;
    // Sums over the runs from the split on (the step's column): count, Σx, Σy, grown one run
    // at a time as the split moves down.
    let (mut m, mut smx, mut smy) = (0.0, 0.0, 0.0);
    let least = min_runs.max(1);
    for k in (least..n).rev() {
        m += 1.0;
        smx += x[k];
        smy += values[k];
        if k > n - least {
            continue;
        }
        // The normal equations of [1, x, step] and their solution.
        let a = [[n as f64, sx, m], [sx, sxx, smx], [m, smx, m]];
        let b = [sy, sxy, smy];
        let Some((beta, inverse_33)) = solve(a, b) else {
            continue;
        };
        let rss = (syy - beta[0] * b[0] - beta[1] * b[1] - beta[2] * b[2]).max(0.0);
        let error = (rss / freedom * inverse_33).sqrt();
        let score = match error > 0.0 {
            true => (beta[2] / error).abs(),
            false if beta[2] != 0.0 => f64::INFINITY,
            false => 0.0,
        };
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((k, score));
        }
    }
    let (at, score) = best?;
    Some((at, (2.0 * t.sf(score)).min(1.0)))
}

/// The solution of the symmetric 3×3 system `a β = b`, and the last diagonal element of
/// `a`'s inverse; `None` when `a` is singular.
fn solve(a: [[f64; 3]; 3], b: [f64; 3]) -> Option<([f64; 3], f64)> {
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(a);
    let scale = a.iter().flatten().fold(0.0_f64, |s, v| s.max(v.abs()));
    if d.abs() <= 1e-12 * scale.powi(3) {
        return None;
    }
    let column = |j: usize| {
        let mut m = a;
        for (row, value) in m.iter_mut().zip(b) {
            row[j] = value;
        }
        det(m) / d
    };
    let inverse_33 = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) / d;
    Some(([column(0), column(1), column(2)], inverse_33))
}

/// The split of `runs` (at least `min_runs` a side) with the largest standardized rank sum:
/// where it falls (the first run after it) and that z.
fn strongest_split(runs: &[Vec<f64>], min_runs: usize) -> Option<(usize, f64)> {
    let ranks = mid_ranks(runs);
    let n: usize = runs.iter().map(Vec::len).sum();
    let total = n as f64;
    // The tie correction of the rank sum's variance: sum of t^3 - t over tie groups.
    let ties = ranks.ties;
    let mut left_n = 0usize;
    let mut left_sum = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for (k, sum) in ranks.per_run.iter().enumerate().take(runs.len() - min_runs) {
        left_n += runs[k].len();
        left_sum += sum;
        if k + 1 < min_runs || left_n == 0 || left_n == n {
            continue;
        }
        let (n1, n2) = (left_n as f64, (n - left_n) as f64);
        let mean = n1 * (total + 1.0) / 2.0;
        let variance = n1 * n2 / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
        if variance <= 0.0 {
            continue;
        }
        // Continuity correction, as the U test's normal approximation takes it.
        let z = ((left_sum - mean).abs() - 0.5).max(0.0) / variance.sqrt();
        if best.is_none_or(|(_, b)| z > b) {
            best = Some((k + 1, z));
        }
    }
    best
}

/// The split of `runs` (at least `min_runs` a side) whose two sides' run medians lie closest
/// to their own means, from prefix sums.
fn least_squares_split(runs: &[Vec<f64>], min_runs: usize) -> usize {
    let centres: Vec<f64> = runs.iter().map(|r| median(r.clone())).collect();
    let (mut sum, mut squares) = (vec![0.0], vec![0.0]);
    for c in &centres {
        sum.push(sum.last().unwrap_or(&0.0) + c);
        squares.push(squares.last().unwrap_or(&0.0) + c * c);
    }
    let cost = |from: usize, to: usize| {
        let (s, n) = (sum[to] - sum[from], (to - from) as f64);
        squares[to] - squares[from] - s * s / n
    };
    let n = runs.len();
    (min_runs..=n - min_runs)
        .min_by(|&a, &b| (cost(0, a) + cost(a, n)).total_cmp(&(cost(0, b) + cost(b, n))))
        .unwrap_or(min_runs)
}

/// Each run's sum of mid-ranks among all the runs' repetitions, and the ties' correction.
struct Ranks {
    per_run: Vec<f64>,
    ties: f64,
}

fn mid_ranks(runs: &[Vec<f64>]) -> Ranks {
    let mut tagged: Vec<(f64, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(run, values)| values.iter().map(move |&v| (v, run)))
        .collect();
    tagged.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut per_run = vec![0.0; runs.len()];
    let mut ties = 0.0;
    let mut start = 0;
    while start < tagged.len() {
        let end = start
            + tagged[start..]
                .iter()
                .take_while(|t| t.0 == tagged[start].0)
                .count();
        // Ranks start + 1 ..= end share their middle.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &(_, run) in &tagged[start..end] {
            per_run[run] += rank;
        }
        let t = (end - start) as f64;
        ties += t * t * t - t;
        start = end;
    }
    Ranks { per_run, ties }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n => (values[(n - 1) / 2] + values[n / 2]) / 2.0,
    }
}

/// What the engines' tests generate: numbers from a seed, and the slowdowns
/// bench/gen-history.py injects.
#[cfg(test)]
pub(crate) mod generated {
    /// splitmix64's uniform numbers in [0, 1] from `seed`.
    pub fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as f64 / u64::MAX as f64
        }
    }

    /// (commit, benchmark, percent) of 300 benchmarks over 500 commits, as gen-history.py
    /// injects them: every 97 commits, three benchmarks slower by 10, 25 and 50 %.
    pub fn injected() -> Vec<(usize, usize, f64)> {
        (97..500)
            .step_by(97)
            .flat_map(|c| {
                [10.0, 25.0, 50.0]
                    .into_iter()
                    .enumerate()
                    .map(move |(k, size)| (c, (c * 7 + k * 101) % 300, size))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `runs` runs of `reps` repetitions: 1,000 ± 3 % (uniform, splitmix64 from `seed`), times
    /// `factor(run)`.
    fn history(
        seed: u64,
        runs: usize,
        reps: usize,
        factor: impl Fn(usize) -> f64,
    ) -> Vec<Vec<f64>> {
        let mut uniform = generated::uniform(seed);
        (0..runs)
            .map(|run| {
                (0..reps)
                    .map(|_| 1000.0 * factor(run) * (0.97 + 0.06 * uniform()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn no_change_in_three_hundred_histories_of_five_hundred_runs_marks_nothing() {
        let mut marked = 0;
        for seed in 0..300 {
            marked += change_points(&history(seed, 500, 5, |_| 1.0), 0.05, 300, 1).len();
        }
        assert_eq!(marked, 0);
    }

    #[test]
    fn slowdowns_are_found_where_they_happened_with_their_size() {
        // +10 % from run 97, +25 % more from run 291.
        let runs = history(7, 500, 5, |run| match run {
            0..97 => 1.0,
            97..291 => 1.10,
            _ => 1.10 * 1.25,
        });
        let found = change_points(&runs, 0.05, 300, 1);
        let at: Vec<usize> = found.iter().map(|p| p.at).collect();
        assert_eq!(at, [97, 291]);
        assert!((found[0].percent - 10.0).abs() < 1.0, "{found:?}");
        assert!((found[1].percent - 25.0).abs() < 1.5, "{found:?}");
    }

    #[test]
    fn a_change_in_the_latest_run_alone_is_too_little_evidence_among_many_series() {
        // Five repetitions against 995: p = 1.1e-4, enough in one series (times 199 splits),
        // not among 300 (the latest run's regressions are judged on their own, over benchmarks).
        let runs = history(3, 200, 5, |run| if run == 199 { 1.5 } else { 1.0 });
        let alone: Vec<usize> = change_points(&runs, 0.05, 1, 1)
            .iter()
            .map(|p| p.at)
            .collect();
        assert_eq!(alone, [199]);
        assert!(change_points(&runs, 0.05, 300, 1).is_empty());
        assert!(
            change_points(&runs, 0.05, 1, 2).is_empty(),
            "two runs a side at least"
        );
    }

    #[test]
    fn in_a_project_of_300_benchmarks_over_500_commits_the_injected_slowdowns_are_all_found() {
        // As bench/gen-history.py injects them: every 97 commits, three benchmarks slower by
        // 10, 25 and 50 %; everything else ±3 % noise.
        let injected = generated::injected();
        let mut found = Vec::new();
        for bench in 0..300 {
            let factor = |run: usize| {
                let slower = injected.iter().filter(|&&(c, b, _)| b == bench && run >= c);
                slower
                    .map(|&(_, _, size)| 1.0 + size / 100.0)
                    .product::<f64>()
            };
            let points = change_points(&history(bench as u64, 500, 5, factor), 0.05, 300, 1);
            found.extend(points.iter().map(|p| (p.at, bench, p.percent)));
        }
        assert_eq!(found.len(), injected.len(), "{found:?}");
        found.sort_by_key(|&(at, bench, _)| (at, bench));
        let mut injected = injected;
        injected.sort_by_key(|&(c, b, _)| (c, b));
        for ((at, bench, percent), (c, b, size)) in found.iter().zip(&injected) {
            assert_eq!((*at, *bench), (*c, *b));
            assert!((percent - size).abs() < 1.5, "{percent} for {size}");
        }
    }

    #[test]
    fn a_drift_is_no_step_and_a_step_on_a_drift_is_found_at_its_run() {
        // 1.5 % a run over 40 runs, 3 % noise, one figure a run, 200 histories.
        let drift = |run: usize| 1.015f64.powi(run as i32);
        let marked = (0..200)
            .filter(|&seed| !change_points(&history(seed, 40, 1, drift), 0.05, 1, 2).is_empty())
            .count();
        // A run-against-run look marks nearly every one; alpha allows 10 of 200.
        assert!(marked <= 10, "{marked} of 200 drifts marked a step");
        // The same drift with a 20 % step at run 25: found there every time, and a second step
        // (in the drift on either side) no more often than alpha allows.
        let (mut found, mut more) = (0, 0);
        for seed in 0..200 {
            let runs = history(seed, 40, 1, |run| {
                drift(run) * if run >= 25 { 1.2 } else { 1.0 }
            });
            let at: Vec<usize> = change_points(&runs, 0.05, 1, 2)
                .iter()
                .map(|p| p.at)
                .collect();
            found += usize::from(at.contains(&25));
            more += usize::from(at.len() > 1);
        }
        assert_eq!(found, 200);
        assert!(more <= 10, "{more} of 200 marked more than the step");
    }

    #[test]
    fn ranks_share_ties_and_sum_to_the_total() {
        let ranks = mid_ranks(&[vec![1.0, 2.0], vec![2.0, 3.0]]);
        assert_eq!(ranks.per_run, [1.0 + 2.5, 2.5 + 4.0]);
        assert_eq!(ranks.ties, 6.0);
    }
}
