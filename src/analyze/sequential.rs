//! Run until decided (`--runs auto`): interleaved rounds are added until a gate is decided (a
//! change beyond its threshold, or equivalence within it) or the most rounds are reached.
//!
//! Looking at the data after every round and stopping on the first significant result would
//! raise far more false alarms than alpha. The design is group-sequential (docs/sequential.md
//! says why this and not an always-valid test): alpha is spent over the looks by the Lan-DeMets
//! function of Pocock type, α·ln(1 + (e − 1)·t) at information fraction t = rounds / most
//! rounds, and each look's one-sided critical value is found by numerical integration of the
//! joint distribution of the looks' z statistics (Armitage, McPherson and Rowe's recursion).
//! Each look then tests the rounds' paired log ratios (a paired t test: interleaving cancels
//! drift between rounds, logs make the change multiplicative) at that look's nominal level.
//!
//! Several figures under one gate are a family: Holm's step-down over the figures at each look,
//! a rejection passing its alpha to the rest (valid for group-sequential tests as for fixed
//! ones, Maurer and Bretz 2013). Equivalence ("within the threshold") must hold for every
//! figure, an intersection-union test that needs no adjustment.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use std::sync::Mutex;

/// The most looks a design takes: beyond, the looks are spread evenly between the bounds, so
/// that the integration stays small whatever the most rounds.
const MOST_LOOKS: usize = 50;
/// Grid points per standard deviation of one look's step in the integration.
const POINTS_PER_STEP: f64 = 6.0;
/// The integration's lower end, in standard deviations: below it nothing is left to count.
const FLOOR: f64 = -8.0;

/// The bounds of a sequential comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Design {
    pub alpha: f64,
    /// Rounds before the first look (at least 3: two pairs leave a t test one degree of
    /// freedom).
    pub min_rounds: usize,
    pub max_rounds: usize,
}

/// One gated figure after some rounds: each round's log ratio new/base, signed so that a
/// positive value is the worse direction, and the threshold on the same scale.
#[derive(Clone, Debug)]
pub struct Figure {
    pub worse_log_ratios: Vec<f64>,
    /// ln(1 + percent) for a rise that is bad, −ln(1 − percent) for a fall.
    pub threshold: f64,
}

/// What a look decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not yet decided: run another round.
    Continue,
    /// The figure at this index is worse beyond the threshold, and the change is real.
    Changed(usize),
    /// Every figure is within the threshold.
    Within,
    /// The most rounds ran without a decision.
    Undecided,
}

/// How one figure stands at the last look.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Standing {
    /// Found worse by Holm's step-down (it stays so at later looks).
    pub worse: bool,
    /// Shown to be within the threshold.
    pub within: bool,
}

/// Nominal levels computed: for alpha (its bits) and the looks.
type Computed = (u64, Vec<usize>, Vec<f64>);

/// A sequential comparison: its design, the looks, and how each figure stands.
pub struct Sequential {
    design: Design,
    looks: Vec<usize>,
    standings: Vec<Standing>,
}

impl Sequential {
    pub fn new(design: Design) -> Sequential {
        Sequential {
            design,
            looks: looks(design.min_rounds, design.max_rounds),
            standings: Vec::new(),
        }
    }

    /// How each figure stood at the last look.
    pub fn standings(&self) -> &[Standing] {
        &self.standings
    }

    /// The rounds at which the comparison is looked at.
    pub fn looks(&self) -> &[usize] {
        &self.looks
    }

    /// The nominal one-sided level of the look after `rounds` rounds; `None` when no look
    /// falls there.
    pub fn level_at(&self, rounds: usize) -> Option<f64> {
        let k = self.looks.iter().position(|&n| n == rounds)?;
        Some(self.level(self.design.alpha, k))
    }

    /// Decides after `rounds` rounds.
    pub fn look(&mut self, rounds: usize, figures: &[Figure]) -> Decision {
        let Some(k) = self.looks.iter().position(|&n| n == rounds) else {
            return if rounds >= self.design.max_rounds {
                Decision::Undecided
            } else {
                Decision::Continue
            };
        };
        self.standings.resize(figures.len(), Standing::default());
        let tests: Vec<Paired> = figures.iter().map(Paired::of).collect();
        let worse_ps: Vec<f64> = tests.iter().map(|t| t.p_above(0.0)).collect();
        self.holm(k, &worse_ps);
        let level = self.level(self.design.alpha, k);
        for ((standing, test), figure) in self.standings.iter_mut().zip(&tests).zip(figures) {
            standing.within = test.p_below(figure.threshold) <= level;
        }
        if let Some(i) = (0..figures.len())
            .find(|&i| self.standings[i].worse && tests[i].mean > figures[i].threshold)
        {
            return Decision::Changed(i);
        }
        if self.standings.iter().all(|s| s.within) {
            return Decision::Within;
        }
        if rounds >= self.design.max_rounds {
            Decision::Undecided
        } else {
            Decision::Continue
        }
    }

    /// Holm's step-down at look `k`: the smallest p among the figures not yet found worse is
    /// tested at alpha over how many remain, and so on while one is rejected.
    fn holm(&mut self, k: usize, ps: &[f64]) {
        loop {
            let remaining: Vec<usize> = (0..ps.len())
                .filter(|&i| !self.standings[i].worse)
                .collect();
            let Some(&smallest) = remaining.iter().min_by(|&&a, &&b| ps[a].total_cmp(&ps[b]))
            else {
                return;
            };
            let level = self.level(self.design.alpha / remaining.len() as f64, k);
            if ps[smallest] > level {
                return;
            }
            self.standings[smallest].worse = true;
        }
    }

    /// The nominal level of look `k` for a design spending `alpha`. The levels depend only on
    /// alpha and the looks, so each set is computed once per process.
    fn level(&self, alpha: f64, k: usize) -> f64 {
        static COMPUTED: Mutex<Vec<Computed>> = Mutex::new(Vec::new());
        let mut computed = COMPUTED.lock().unwrap_or_else(|e| e.into_inner());
        let key = alpha.to_bits();
        if let Some((_, _, levels)) = computed
            .iter()
            .find(|(a, looks, _)| *a == key && *looks == self.looks)
        {
            return levels[k];
        }
        let levels = nominal_levels(alpha, &self.looks);
        let level = levels[k];
        computed.push((key, self.looks.clone(), levels));
        level
    }
}

/// The rounds to look at: every round from the least to the most, or at most `MOST_LOOKS`
/// spread evenly, the last always the most.
fn looks(min_rounds: usize, max_rounds: usize) -> Vec<usize> {
    let first = min_rounds.clamp(3, max_rounds.max(3));
    let last = max_rounds.max(first);
    let span = last - first;
    if span < MOST_LOOKS {
        return (first..=last).collect();
    }
    let mut looks: Vec<usize> = (0..MOST_LOOKS)
        .map(|i| first + (span * i).div_ceil(MOST_LOOKS - 1))
        .collect();
    looks.dedup();
    looks
}

/// Alpha spent by information fraction `t`: Lan and DeMets' function of Pocock type, which
/// spends early and so stops soonest on a real change.
fn spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln()
}

/// Each look's nominal one-sided level: the chance that the first crossing of the z
/// statistics' boundary happens at look k is the alpha spent between looks k − 1 and k. The
/// joint distribution of the looks is that of a random walk observed at `looks` steps; the
/// density of z over the region not yet crossed is carried from look to look on a grid.
pub fn nominal_levels(alpha: f64, looks: &[usize]) -> Vec<f64> {
    let normal = Normal::standard();
    let Some(&most) = looks.last() else {
        return Vec::new();
    };
    let fraction = |n: usize| n as f64 / most as f64;
    // The narrowest step of the walk on the z scale sets the grid's spacing.
    let narrowest = looks
        .windows(2)
        .map(|w| ((w[1] - w[0]) as f64 / w[1] as f64).sqrt())
        .fold(1.0_f64, f64::min);
    let h = narrowest / POINTS_PER_STEP;
    let first = normal.inverse_cdf(1.0 - spent(alpha, fraction(looks[0])));
    let mut bounds = vec![first];
    let mut grid = Grid::new(first, h, density);
    for w in looks.windows(2) {
        let (before, now) = (w[0] as f64, w[1] as f64);
        let carry = (before / now).sqrt();
        let step = ((now - before) / now).sqrt();
        let target = spent(alpha, fraction(w[1])) - spent(alpha, fraction(w[0]));
        let crossing = |c: f64| grid.integral(|u| normal.sf((c - carry * u) / step));
        let bound = bisect(crossing, target);
        let next = Grid::new(bound, h, |z| {
            grid.integral(|u| density((z - carry * u) / step) / step)
        });
        grid = next;
        bounds.push(bound);
    }
    bounds.into_iter().map(|c| normal.sf(c)).collect()
}

fn density(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The critical value at which `crossing` (falling in c) equals `target`.
fn bisect(crossing: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut low, mut high) = (-4.0, 12.0);
    for _ in 0..80 {
        let mid = (low + high) / 2.0;
        if crossing(mid) > target {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

/// A sub-density on a uniform grid from `FLOOR` to a bound, integrated by the trapezoid rule.
struct Grid {
    points: Vec<(f64, f64)>,
    h: f64,
}

impl Grid {
    fn new(bound: f64, h: f64, f: impl Fn(f64) -> f64) -> Grid {
        let steps = ((bound - FLOOR) / h).ceil().max(1.0) as usize;
        let h = (bound - FLOOR) / steps as f64;
        let points = (0..=steps)
            .map(|i| {
                let z = FLOOR + h * i as f64;
                (z, f(z))
            })
            .collect();
        Grid { points, h }
    }

    fn integral(&self, g: impl Fn(f64) -> f64) -> f64 {
        let last = self.points.len() - 1;
        self.points
            .iter()
            .enumerate()
            .map(|(i, &(z, f))| {
                let weight = if i == 0 || i == last { 0.5 } else { 1.0 };
                weight * f * g(z)
            })
            .sum::<f64>()
            * self.h
    }
}

/// A paired t test's figures for one sample of log ratios.
/// The paired test's one-sided p-value that `figure` got worse, as a look tests it.
pub fn p_worse(figure: &Figure) -> f64 {
    Paired::of(figure).p_above(0.0)
}

struct Paired {
    mean: f64,
    /// The standard error of the mean; zero when every ratio is the same.
    error: f64,
    freedom: f64,
}

impl Paired {
    fn of(figure: &Figure) -> Paired {
        let v = &figure.worse_log_ratios;
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let variance = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Paired {
            mean,
            error: (variance / n).sqrt(),
            freedom: n - 1.0,
        }
    }

    /// One-sided p of "the true mean is above `value`".
    fn p_above(&self, value: f64) -> f64 {
        self.p_exceeds(self.mean - value)
    }

    /// One-sided p of "the true mean is below `value`".
    fn p_below(&self, value: f64) -> f64 {
        self.p_exceeds(value - self.mean)
    }

    /// One-sided p that the true difference is positive, `excess` the observed one.
    fn p_exceeds(&self, excess: f64) -> f64 {
        if self.freedom.is_nan() || self.freedom < 1.0 || excess.is_nan() {
            return 1.0;
        }
        if self.error == 0.0 || !self.error.is_finite() {
            return if excess > 0.0 { 0.0 } else { 1.0 };
        }
        let t = StudentsT::new(0.0, 1.0, self.freedom).expect("at least one degree of freedom");
        t.sf(excess / self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(level: f64) -> f64 {
        Normal::standard().inverse_cdf(1.0 - level)
    }

    #[test]
    fn two_looks_match_published_pocock_type_bounds() {
        // Lan-DeMets Pocock-type spending, one-sided 0.025, looks at half and all the
        // information: 2.157 and 2.201 (Jennison and Turnbull, Group Sequential Methods, §7.2).
        let levels = nominal_levels(0.025, &[5, 10]);
        assert!((z(levels[0]) - 2.157).abs() < 0.001, "{levels:?}");
        assert!((z(levels[1]) - 2.201).abs() < 0.001, "{levels:?}");
    }

    #[test]
    fn five_looks_match_published_pocock_type_bounds() {
        // The same spending over five equally spaced looks: 2.438, 2.427, 2.410, 2.397, 2.386.
        let levels = nominal_levels(0.025, &[2, 4, 6, 8, 10]);
        let bounds: Vec<f64> = levels.iter().map(|&l| z(l)).collect();
        for (bound, published) in bounds.iter().zip([2.438, 2.427, 2.410, 2.397, 2.386]) {
            assert!((bound - published).abs() < 0.001, "{bounds:?}");
        }
    }

    #[test]
    fn looks_cover_every_round_or_at_most_fifty_spread_evenly() {
        assert_eq!(looks(3, 6), [3, 4, 5, 6]);
        assert_eq!(looks(1, 4), [3, 4]);
        let many = looks(3, 1000);
        assert_eq!(many.len(), MOST_LOOKS);
        assert_eq!((many[0], many[MOST_LOOKS - 1]), (3, 1000));
    }

    fn figure(ratios: &[f64]) -> Figure {
        Figure {
            worse_log_ratios: ratios.to_vec(),
            threshold: 1.05_f64.ln(),
        }
    }

    #[test]
    fn exact_figures_decide_at_the_first_look() {
        let design = Design {
            alpha: 0.05,
            min_rounds: 3,
            max_rounds: 10,
        };
        let same = figure(&[0.0; 3]);
        let mut test = Sequential::new(design);
        assert_eq!(
            test.look(2, std::slice::from_ref(&same)),
            Decision::Continue
        );
        assert_eq!(test.look(3, std::slice::from_ref(&same)), Decision::Within);
        let doubled = figure(&[2.0_f64.ln(); 3]);
        let mut test = Sequential::new(design);
        assert_eq!(test.look(3, &[same, doubled]), Decision::Changed(1));
        assert!(test.standings()[1].worse && test.standings()[0].within);
    }

    #[test]
    fn the_most_rounds_end_it_undecided() {
        let design = Design {
            alpha: 0.05,
            min_rounds: 3,
            max_rounds: 4,
        };
        // Noisy around the threshold: neither worse for sure nor within it.
        let noisy = figure(&[0.3, -0.2, 0.25, -0.1]);
        let mut test = Sequential::new(design);
        assert_eq!(
            test.look(3, std::slice::from_ref(&noisy)),
            Decision::Continue
        );
        assert_eq!(test.look(4, &[noisy]), Decision::Undecided);
    }
}
