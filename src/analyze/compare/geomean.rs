//! The geomean row of a repetition table: the geometric mean of each side's figures over
//! the benchmarks every side has, and its change.

use super::*;

/// benchstat's geomean row: each column's geometric mean over the benchmarks it has, and its
/// change as the geometric mean of the per-benchmark ratios to the base (no test: it
/// summarises the rows above).
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
}

impl Geomean {
    pub(super) fn new(columns: usize) -> Self {
        Geomean {
            centres: vec![Vec::new(); columns],
            ratios: vec![Vec::new(); columns],
            in_base: 0,
            rows: 0,
        }
    }

    pub(super) fn add(&mut self, figures: &[Option<Figure>]) {
        let base = figures[0].as_ref().map(|f| f.centre);
        self.in_base += usize::from(base.is_some());
        self.rows += 1;
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
        let mut cells = vec![Cell::Text {
            text: "geomean".into(),
        }];
        for (i, centres) in self.centres.iter().enumerate() {
            match geometric_mean(centres) {
                Some(mean) => cells.push(Cell::value_of(mean, metric)),
                None => {
                    footnotes.geomean_not_positive = true;
                    cells.push(Cell::Empty);
                }
            }
            cells.push(Cell::Empty);
            if i == 0 {
                continue;
            }
            let ratios = &self.ratios[i];
            footnotes.geomean_sets_differ |= ratios.len() != self.in_base;
            let ratio = ratios
                .iter()
                .copied()
                .collect::<Option<Vec<f64>>>()
                .and_then(|r| geometric_mean(&r));
            cells.push(Cell::Change(Change {
                better,
                percent: ratio.map(|r| (r - 1.0) * 100.0),
                p: None,
                interval: None,
                n_base: self.in_base as u64,
                n: centres.len() as u64,
                verdict: ChangeVerdict::Summary,
                diagnostics: Vec::new(),
            }));
        }
        Row {
            benchmark: "geomean".into(),
            cells,
        }
    }
}
