//! Distributions (a latency histogram per benchmark): statistics with order-statistic
//! bounds, compared by whether the bounds overlap.

use super::*;

/// A statistic of a distribution with its 95 % order-statistic bounds.
pub(in crate::analyze) struct Bounded {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub samples: u64,
}

/// The statistic (the tool's own min/avg/max where it reported them) and, for percentiles,
/// the ranks `n·q ± 1.96·√(n·q·(1−q))` read back from the histogram, widened to the
/// histogram's resolution; extremes and the mean get no bounds.
pub(in crate::analyze) fn bounded(
    bench: &Benchmark,
    metric: &Metric,
    statistic: Statistic,
) -> Option<Bounded> {
    let h = metric.histogram.as_ref()?;
    if h.is_empty() {
        return None;
    }
    let is_main = bench
        .metrics
        .iter()
        .find(|m| m.percentiles.is_some())
        .map(|m| &m.name)
        == Some(&metric.name);
    let own = || {
        let timer = crate::analyze::figure::timer_figure(bench, statistic).map(|m| m.value);
        timer.or_else(|| statistic.of_percentiles(metric.percentiles.as_ref()?))
    };
    let value = match is_main.then(own).flatten() {
        Some(value) => value,
        None => match statistic {
            Statistic::Min => h.min() as f64,
            Statistic::Max => h.max() as f64,
            Statistic::Mean => h.mean(),
            s => h.value_at_quantile(s.quantile()?) as f64,
        },
    };
    let n = h.len();
    let (low, high) = match statistic.quantile() {
        Some(q) => {
            let centre = n as f64 * q;
            let half = 1.96 * (centre * (1.0 - q)).sqrt();
            let rank_low = (centre - half).floor().max(1.0);
            let rank_high = (centre + half).ceil().min(n as f64);
            let at = |rank: f64| h.value_at_quantile(rank / n as f64);
            (
                h.lowest_equivalent(at(rank_low)) as f64,
                h.highest_equivalent(at(rank_high)) as f64,
            )
        }
        None => (value, value),
    };
    Some(Bounded {
        value,
        low: low.min(value),
        high: high.max(value),
        samples: n,
    })
}

impl Bounded {
    /// The figure and its bounds as a spread.
    pub(super) fn cells(&self, m: &Metric) -> [Cell; 2] {
        let interval = (self.low < self.high).then_some(crate::analyze::stats::Interval {
            low: self.low,
            high: self.high,
            level: CONFIDENCE,
            coverage: CONFIDENCE,
        });
        [
            Cell::value_of(self.value, m),
            spread(self.samples as usize, interval, self.value),
        ]
    }

    /// The change to `b`: significant when the bounds do not overlap (a percentile's; other
    /// statistics are untested).
    pub(super) fn change_to(&self, b: &Bounded, better: Better, statistic: Statistic) -> Change {
        let tested = statistic.quantile().is_some();
        let apart = b.low > self.high || b.high < self.low;
        Change {
            better,
            percent: percent_change(self.value, b.value),
            p: None,
            interval: None,
            n_base: self.samples,
            n: b.samples,
            verdict: match (tested, apart) {
                (false, _) => ChangeVerdict::Untested,
                (true, true) => ChangeVerdict::Significant,
                (true, false) => ChangeVerdict::Noise,
            },
            diagnostics: Vec::new(),
        }
    }
}

/// Each column's distribution of `metric` for benchmark `key`, with its benchmark.
pub(super) fn distributions_of<'a>(
    columns: &'a [Side],
    key: &str,
    metric: &str,
) -> Vec<Option<(&'a Benchmark, &'a Metric)>> {
    columns
        .iter()
        .map(|c| {
            c.with_metric(key, metric)
                .iter()
                .find(|(_, m)| m.values.is_empty() && m.histogram.is_some())
                .copied()
        })
        .collect()
}

/// The statistics `compare` was asked for, each with the name it was asked by.
fn statistics(opts: &CompareOptions) -> impl Iterator<Item = (Statistic, &String)> {
    opts.statistics.iter().filter_map(|named| {
        let statistic = Statistic::parse_among(named, &Statistic::OF_DISTRIBUTION)?;
        Some((statistic, named))
    })
}

pub(super) fn distribution_table(
    columns: &[Side],
    metric: &MetricName,
    opts: &CompareOptions,
    footnotes: &mut Footnotes,
) -> (Table, Vec<Compared>) {
    let (mut rows, mut compared, mut source_unit) = (Vec::new(), Vec::new(), String::new());
    for key in keys(columns) {
        let metrics = distributions_of(columns, &key, &metric.name);
        if metrics.iter().all(Option::is_none) {
            continue;
        }
        footnotes.partial(&key, columns, |i| {
            !columns[i].with_metric(&key, &metric.name).is_empty()
        });
        footnotes.distributions = true;
        for (statistic, named) in statistics(opts) {
            let figures: Vec<Option<(Bounded, &Metric)>> = metrics
                .iter()
                .map(|bm| bm.and_then(|(b, m)| bounded(b, m, statistic).map(|x| (x, m))))
                .collect();
            let Some((_, m)) = figures.iter().flatten().next() else {
                continue;
            };
            source_unit = m.source_unit.clone();
            let mut cells: Vec<Cell> = [&key, named]
                .map(|text| Cell::Text { text: text.clone() })
                .into();
            for (i, figure) in figures.iter().enumerate() {
                match figure {
                    Some((f, m)) => cells.extend(f.cells(m)),
                    None => cells.extend([Cell::Empty, Cell::Empty]),
                }
                if i == 0 {
                    continue;
                }
                let cell = match (&figures[0], figure) {
                    (Some((a, _)), Some((b, m))) => {
                        let change = a.change_to(b, m.better, statistic);
                        compared.push(Compared {
                            bench: key.clone(),
                            figure: format!("{} {named}", metric.name),
                            names: vec![metric.name.clone(), named.clone()],
                            better: m.better,
                            unit: m.unit.clone(),
                            column: columns[i].label.to_string(),
                            value: b.value,
                            change: change.clone(),
                            noise: None,
                            // Distributions are samples within one run, not repetitions.
                            unfit: None,
                            repetitions: None,
                            counted: false,
                        });
                        Cell::Change(Box::new(change))
                    }
                    _ => Cell::Empty,
                };
                cells.push(cell);
            }
            rows.push(Row {
                benchmark: key.clone(),
                cells,
            });
        }
    }
    let table = Table {
        title: Some(format!("{} (distribution)", metric.name)),
        run: 0,
        cycle: None,
        columns: header_columns(
            columns,
            &source_unit,
            &[("Benchmark", keys::BENCHMARK), ("Statistic", "statistic")],
        ),
        rows,
    };
    (table, compared)
}
