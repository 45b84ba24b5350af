//! The geomean row of a repetition table: the geometric mean of each side's figures over
//! the benchmarks every side has, columns and change alike; or, as compare.py's
//! `OVERALL_GEOMEAN`, of every repetition of every benchmark on each side (each side's own).

use super::*;

/// benchstat's geomean row: each column's geometric mean, and its change as the geometric
/// mean of the per-benchmark ratios to the base (no test: it summarises the rows above). Both
/// are over the benchmarks every column has: benchstat takes each column over its own and
/// warns that they are then not comparable; a row whose figures and change are over two sets
/// reads as one thing and is another.
pub(super) struct Geomean {
    /// Each column's centres.
    pub(super) centres: Vec<Vec<f64>>,
    /// Each column's ratios to the base, where both have the benchmark; `None` for a zero base
    /// under a non-zero value.
    pub(super) ratios: Vec<Vec<Option<f64>>>,
    /// Benchmarks the base has.
    pub(super) in_base: usize,
    /// Benchmarks in it.
    pub(super) rows: usize,
    /// Benchmarks some column lacks, left out of a geomean of medians.
    pub(super) left_out: usize,
    /// What the geometric mean is of.
    pub(super) of: GeomeanOf,
    /// Each column's repetitions: the sum of their logarithms and how many (`None` once one
    /// is not positive).
    pub(super) repetitions: Vec<Option<(f64, usize)>>,
}

impl Geomean {
    pub(super) fn new(columns: usize, of: GeomeanOf) -> Self {
        Geomean {
            centres: vec![Vec::new(); columns],
            ratios: vec![Vec::new(); columns],
            in_base: 0,
            rows: 0,
            left_out: 0,
            of,
            repetitions: vec![Some((0.0, 0)); columns],
        }
    }

    /// A benchmark's figures (one per column) and its repetitions (`samples`).
    pub(super) fn add(&mut self, figures: &[Option<Figure>], samples: &[Option<&[f64]>]) {
        // Only the geomean of repetitions reads them: the logarithm of every one of them is
        // otherwise a cost for nothing.
        if self.of == GeomeanOf::Repetitions {
            for (sums, values) in self.repetitions.iter_mut().zip(samples) {
                for &v in values.iter().copied().flatten() {
                    *sums = sums
                        .filter(|_| v > 0.0)
                        .map(|(sum, n)| (sum + v.ln(), n + 1));
                }
            }
        }
        let base = figures[0].as_ref().map(|f| f.centre);
        self.in_base += usize::from(base.is_some());
        self.rows += 1;
        if self.of == GeomeanOf::Medians && figures.iter().any(Option::is_none) {
            self.left_out += 1;
            return;
        }
        for (i, figure) in figures.iter().enumerate() {
            let Some(f) = figure else { continue };
            self.centres[i].push(f.centre);
            if let (true, Some(b)) = (i > 0, base) {
                self.ratios[i].push(match (f.centre, b) {
                    (a, b) if a == b => Some(1.0),
                    (_, 0.0) => None,
                    (a, b) => Some(a / b),
                });
            }
        }
    }

    pub(super) fn row(&self, metric: &Metric, better: Better, footnotes: &mut Footnotes) -> Row {
        footnotes.geomean_of = Some(self.of);
        let mut cells = vec![Cell::Text {
            text: "geomean".into(),
        }];
        let means: Vec<Option<f64>> = match self.of {
            GeomeanOf::Medians => self.centres.iter().map(|c| geometric_mean(c)).collect(),
            GeomeanOf::Repetitions => (self.repetitions.iter())
                .map(|r| {
                    r.filter(|&(_, n)| n > 0)
                        .map(|(sum, n)| (sum / n as f64).exp())
                })
                .collect(),
        };
        for (i, centres) in self.centres.iter().enumerate() {
            match means[i] {
                Some(mean) => cells.push(Cell::value_of(mean, metric)),
                None => {
                    if !footnotes.geomean_not_positive.contains(&metric.name) {
                        footnotes.geomean_not_positive.push(metric.name.clone());
                    }
                    cells.push(Cell::Empty);
                }
            }
            cells.push(Cell::Empty);
            if i == 0 {
                continue;
            }
            let ratios = &self.ratios[i];
            footnotes.geomean_sets_differ |= ratios.len() != self.in_base || self.left_out > 0;
            let ratio = match self.of {
                GeomeanOf::Medians => ratios
                    .iter()
                    .copied()
                    .collect::<Option<Vec<f64>>>()
                    .and_then(|r| geometric_mean(&r)),
                GeomeanOf::Repetitions => means[i].zip(means[0]).map(|(new, base)| new / base),
            };
            cells.push(Cell::Change(Box::new(Change {
                better,
                percent: ratio.map(|r| (r - 1.0) * 100.0),
                p: None,
                interval: None,
                n_base: self.in_base as u64,
                n: centres.len() as u64,
                verdict: ChangeVerdict::Summary,
                diagnostics: Vec::new(),
            })));
        }
        Row {
            benchmark: "geomean".into(),
            cells,
        }
    }
}
