//! The table of a metric with repetitions: each side's median with its interval, and each
//! change from the base tested (the U test, as benchstat) with its diagnostics.

use super::*;

pub(super) fn header_columns(columns: &[Side], unit: &str, first: &[(&str, &str)]) -> Vec<Column> {
    let mut out: Vec<Column> = first.iter().map(|(h, k)| Column::new(*h, *k)).collect();
    let labels: Vec<&str> = columns.iter().map(|c| c.label).collect();
    let short = short_labels(&labels);
    for (i, (c, short)) in columns.iter().zip(short).enumerate() {
        out.push(
            Column::new(c.label.to_string(), keys::value_of(i))
                .in_unit(unit)
                .narrow_header(short),
        );
        out.push(Column::new(format!("± 95% CI ({})", c.label), keys::ci95_of(i)).dropped_at(2));
        if i > 0 {
            out.push(
                Column::new(format!("{} vs base", c.label), keys::change_of(i))
                    .narrow_header("vs base"),
            );
        }
    }
    out
}

/// The labels without the ending they all share (`old`, `new` for `old.txt`, `new.txt`),
/// each kept whole where that would leave nothing.
pub(super) fn short_labels(labels: &[&str]) -> Vec<String> {
    let shared_ending = match labels {
        [first, rest @ ..] if !rest.is_empty() => first
            .char_indices()
            .map(|(i, _)| &first[i..])
            .find(|ending| ending.starts_with('.') && rest.iter().all(|l| l.ends_with(ending)))
            .unwrap_or(""),
        _ => "",
    };
    labels
        .iter()
        .map(|l| match l.strip_suffix(shared_ending) {
            Some(short) if !short.is_empty() => short.to_string(),
            _ => l.to_string(),
        })
        .collect()
}

pub(super) fn spread(
    n: usize,
    interval: Option<crate::analyze::stats::Interval>,
    centre: f64,
) -> Cell {
    Cell::Spread {
        n,
        relative_percent: interval.as_ref().map(|ci| ci.relative_spread(centre)),
        interval,
    }
}

pub(super) fn percent_change(base: f64, new: f64) -> Option<f64> {
    if base == new {
        Some(0.0)
    } else if base == 0.0 {
        None
    } else {
        Some((new / base - 1.0) * 100.0)
    }
}

/// Which way is better and what may be assumed of `metric`'s values, taken from every input:
/// a direction any input declares (`Unit X better=higher`, `--better`) over the unit's own,
/// and exact when any input says so, as benchstat reads unit metadata from all its files.
pub(super) fn metadata(columns: &[Side], metric: &str) -> (Better, Assume) {
    let metrics: Vec<&Metric> = columns
        .iter()
        .flat_map(|c| c.all_named(metric).iter().map(|(_, m)| *m))
        .collect();
    let better = metrics
        .iter()
        .find(|m| m.better != m.unit.better())
        .or(metrics.first())
        .map_or(Better::Lower, |m| m.better);
    let assume = if metrics.iter().any(|m| m.assume == Assume::Exact) {
        Assume::Exact
    } else if metrics.iter().any(|m| m.assume == Assume::Counted) {
        Assume::Counted
    } else {
        Assume::Nothing
    };
    (better, assume)
}

/// One column's figure of a benchmark: the median with its confidence interval, or for exact
/// values the mode with the range (benchstat's summaries).
pub(super) struct Figure {
    pub(super) centre: f64,
    pub(super) interval: Option<Interval>,
    pub(super) n: usize,
    /// For exact values that vary: their range.
    pub(super) varies: Option<(f64, f64)>,
}

pub(super) fn figure(sample: &Sample, assume: Assume) -> Option<Figure> {
    let sorted = &sample.sorted;
    match assume {
        Assume::Nothing | Assume::Counted => {
            Summary::of_sorted(&sample.measured, sorted).map(|s| Figure {
                centre: s.median,
                interval: s.median_ci,
                n: s.n,
                varies: None,
            })
        }
        Assume::Exact => {
            let (&low, &high) = (sorted.first()?, sorted.last()?);
            // The most frequent value, the smallest among equally frequent ones.
            let mut mode = (low, 0);
            for run in sorted.chunk_by(|a, b| a == b) {
                if run.len() > mode.1 {
                    mode = (run[0], run.len());
                }
            }
            Some(Figure {
                centre: mode.0,
                interval: Some(Interval {
                    low,
                    high,
                    level: 1.0,
                    coverage: 1.0,
                }),
                n: sorted.len(),
                varies: (low != high).then_some((low, high)),
            })
        }
    }
}

pub(super) fn repetition_table(
    columns: &[Side],
    metric: &MetricName,
    opts: &CompareOptions,
    footnotes: &mut Footnotes,
) -> (Table, Vec<Compared>) {
    let decide = Decide::for_metric(columns, &metric.name, opts);
    let mut rows = Vec::new();
    let mut compared = Vec::new();
    let mut unit_info: Option<(&Metric, String)> = None;
    let mut geomean = Geomean::new(columns.len(), opts.geomean);
    for key in keys(columns) {
        let samples: Vec<Option<Sample>> = columns
            .iter()
            .map(|c| c.values(&key, &metric.name).map(Sample::new))
            .collect();
        if samples.iter().all(Option::is_none) {
            continue;
        }
        footnotes.partial(&key, columns, |i| samples[i].is_some());
        let figures: Vec<Option<Figure>> = samples
            .iter()
            .map(|s| s.as_ref().and_then(|s| figure(s, decide.assume)))
            .collect();
        let some_metric = samples.iter().flatten().next().map(|s| s.metric);
        if let (None, Some(m)) = (&unit_info, some_metric) {
            unit_info = Some((m, m.source_unit.clone()));
        }
        let mut cells = vec![Cell::Text { text: key.clone() }];
        for (i, (sample, fig)) in samples.iter().zip(&figures).enumerate() {
            let metric_of = sample.as_ref().map(|s| s.metric);
            let label = columns[i].label;
            cells.extend(figure_cells(
                metric_of,
                fig.as_ref(),
                footnotes,
                &key,
                label,
            ));
            if i > 0 {
                let row = Compare {
                    key: &key,
                    metric: &metric.name,
                    columns,
                };
                cells.push(decide.cell(&row, i, (&samples, &figures), footnotes, &mut compared));
            }
        }
        // A statistic of another row's repetitions (a mean, a stddev, a fit) is no benchmark
        // of its own, as compare.py leaves aggregates out of its geomean; nor, in a geomean of
        // repetitions, is a median standing in for repetitions never given.
        let standing_in = geomean.of == GeomeanOf::Repetitions;
        let standing_in = standing_in && columns.iter().any(|c| c.stands_in(&key));
        if !standing_in && !columns.iter().any(|c| c.is_aggregate(&key)) {
            let repetitions: Vec<Option<&[f64]>> = samples
                .iter()
                .map(|s| s.as_ref().map(|s| &*s.measured))
                .collect();
            geomean.add(&figures, &repetitions);
        }
        rows.push(Row {
            benchmark: key,
            cells,
        });
    }
    let source_unit = unit_info.as_ref().map_or(String::new(), |(_, u)| u.clone());
    if let Some((m, _)) = unit_info
        && geomean.rows > 1
    {
        rows.push(geomean.row(m, decide.better, footnotes));
    }
    let table = Table {
        title: Some(metric.name.clone()),
        run: 0,
        cycle: None,
        columns: header_columns(columns, &source_unit, &[("Benchmark", keys::BENCHMARK)]),
        rows,
    };
    (table, compared)
}

/// The row being compared: its benchmark, metric and the inputs' columns.
struct Compare<'a> {
    key: &'a str,
    metric: &'a str,
    columns: &'a [Side<'a>],
}

/// One side's repetitions of a row: as measured (a drift is read in their order) and sorted
/// once, for every statistic of their values (median, interval, modes, U test, ratio).
pub(super) struct Sample<'m> {
    pub(super) measured: Cow<'m, [f64]>,
    pub(super) sorted: Vec<f64>,
    pub(super) metric: &'m Metric,
}

impl<'m> Sample<'m> {
    pub(super) fn new((measured, metric): (Cow<'m, [f64]>, &'m Metric)) -> Sample<'m> {
        let mut sorted = measured.to_vec();
        crate::model::summary::sort_floats(&mut sorted);
        Sample {
            measured,
            sorted,
            metric,
        }
    }
}

/// Each column's samples of a row and their figures.
type RowSamples<'a, 'm> = (&'a [Option<Sample<'m>>], &'a [Option<Figure>]);

/// A column's figure and its spread, or two empty cells; notes what the footnotes say of it.
pub(super) fn figure_cells(
    metric: Option<&Metric>,
    figure: Option<&Figure>,
    footnotes: &mut Footnotes,
    key: &str,
    label: &str,
) -> [Cell; 2] {
    match (metric, figure) {
        (Some(m), Some(f)) => {
            footnotes.too_few_for_ci |= f.interval.is_none();
            if let Some(range) = f.varies {
                footnotes.inexact(key, label, m, range);
            }
            [
                Cell::value_of(f.centre, m),
                spread(f.n, f.interval.clone(), f.centre),
            ]
        }
        _ => [Cell::Empty, Cell::Empty],
    }
}

/// How a repetition table decides a change: the metric's direction, what may be assumed of
/// its values, and the significance level.
pub(super) struct Decide {
    pub(super) better: Better,
    pub(super) assume: Assume,
    pub(super) alpha: f64,
    /// google/benchmark's real or CPU time, which compare.py tests too.
    pub(super) gbench_time: bool,
    /// Changes decided elsewhere, of this metric.
    pub(super) decided: Vec<Decided>,
    /// Whether a gate (`--fail-on`) reads the changes: only then are their repetitions copied
    /// out for it.
    gated: bool,
    /// Whether each change's interval is selected: for an output that shows it, or a gate.
    interval: bool,
}

impl Decide {
    pub(super) fn for_metric(columns: &[Side], metric: &str, opts: &CompareOptions) -> Decide {
        let (better, assume) = metadata(columns, metric);
        Decide {
            better,
            assume,
            alpha: opts.alpha,
            gbench_time: [vocab::REAL_TIME, vocab::CPU_TIME].contains(&metric),
            decided: (opts.decided.iter())
                .filter(|d| d.metric == metric)
                .cloned()
                .collect(),
            gated: !opts.rules.is_empty(),
            interval: opts.change_interval || !opts.rules.is_empty(),
        }
    }

    /// Column `i`'s change from the first in `row`, as a cell (empty where a side lacks the
    /// figure); what a gate reads of it goes to `compared`. A change decided elsewhere
    /// (`--runs auto`) is shown as it was decided.
    fn cell(
        &self,
        row: &Compare,
        i: usize,
        (samples, figures): RowSamples,
        footnotes: &mut Footnotes,
        compared: &mut Vec<Compared>,
    ) -> Cell {
        let (Some(a), Some(b), Some(fa), Some(fb)) =
            (&samples[0], &samples[i], &figures[0], &figures[i])
        else {
            return Cell::Empty;
        };
        let m = b.metric;
        let given = (self.decided.iter())
            .find(|d| d.bench == row.key || d.full_name == row.key)
            .map(|d| d.change.clone());
        let mut change = given.unwrap_or_else(|| self.change(a, b, fa, fb, footnotes));
        let sides = [(a, row.columns[0].label), (b, row.columns[i].label)];
        change.diagnostics = footnotes.diagnose(row.key, m, &sides);
        if self.gated {
            let at = (row.key, row.columns[i].label);
            let measured = (&a.measured[..], &b.measured[..], fa, fb);
            compared.push(self.compared(row.metric, m, at, measured, &change));
        }
        Cell::Change(Box::new(change))
    }

    /// What the gate reads of one decided change of benchmark `at.0` in column `at.1`, from
    /// base samples `a` to `b` (their figures `fa`, `fb`).
    pub(super) fn compared(
        &self,
        metric: &str,
        m: &Metric,
        at: (&str, &str),
        (a, b, fa, fb): (&[f64], &[f64], &Figure, &Figure),
        change: &Change,
    ) -> Compared {
        Compared {
            bench: at.0.to_string(),
            figure: metric.to_string(),
            names: vec![metric.to_string()],
            better: self.better,
            unit: m.unit.clone(),
            column: at.1.to_string(),
            value: fb.centre,
            change: change.clone(),
            noise: regression::relative_noise(a, b, fa.centre),
            unfit: unfit_reasons(&change.diagnostics),
            repetitions: Some([a.to_vec(), b.to_vec()]),
            counted: self.assume == Assume::Counted,
        }
    }

    /// The change from base samples `a` to `b` (their figures `fa`, `fb`).
    fn change(
        &self,
        a: &Sample,
        b: &Sample,
        fa: &Figure,
        fb: &Figure,
        footnotes: &mut Footnotes,
    ) -> Change {
        let untested = |verdict| Change {
            better: self.better,
            percent: percent_change(fa.centre, fb.centre),
            p: None,
            interval: None,
            n_base: a.sorted.len() as u64,
            n: b.sorted.len() as u64,
            verdict,
            diagnostics: Vec::new(),
        };
        let (a, b) = (&a.sorted[..], &b.sorted[..]);
        match self.assume {
            Assume::Exact => untested(ChangeVerdict::Exact),
            // Counts that agree are decided by the change's size.
            Assume::Counted if counted::agree(a) && counted::agree(b) => {
                footnotes.counted = true;
                untested(ChangeVerdict::Counted)
            }
            // One count a side: how counts vary is unknown, so neither size nor a test.
            Assume::Counted if counted::once(a, b) => {
                footnotes.counted_once = true;
                untested(ChangeVerdict::CountedOnce)
            }
            // One value on a side is no sample: nothing can be tested of it, and a p-value
            // (the U test's least is 2 / (n + 1)) would read as a verdict.
            _ if a.len() < 2 || b.len() < 2 => untested(ChangeVerdict::Untested),
            Assume::Counted => {
                footnotes.counts_spread = true;
                self.tested(a, b, fa, fb, footnotes)
            }
            Assume::Nothing => self.tested(a, b, fa, fb, footnotes),
        }
    }

    /// The U test's change (benchstat's) from `a` to `b`, both sorted.
    fn tested(
        &self,
        a: &[f64],
        b: &[f64],
        fa: &Figure,
        fb: &Figure,
        footnotes: &mut Footnotes,
    ) -> Change {
        // The U test and the ratio sort their copies again: of a sorted sample, in one pass.
        let test = mann_whitney(a, b);
        let all_equal = a.iter().chain(b).all(|v| *v == a[0]);
        footnotes.all_equal |= all_equal;
        footnotes.exact_beyond_scipy |= self.gbench_time
            && test
                .is_some_and(|t| t.exact && !all_equal && (t.ties || (a.len() > 8 && b.len() > 8)));
        let p = test.map_or(1.0, |t| t.p);
        // benchstat's rule: the p-value alone decides, so equal medians
        // with p ≤ alpha are a significant 0.00 %.
        let significant = p <= self.alpha;
        let need = min_samples_to_detect(self.alpha).unwrap_or(usize::MAX);
        footnotes.too_few_to_detect |= !significant && a.len() < need && b.len() < need;
        let interval = (self.interval)
            .then(|| crate::analyze::ratio::ratio_of_medians(b, a))
            .flatten()
            .and_then(|r| r.interval)
            .map(|(low, high)| ((low - 1.0) * 100.0, (high - 1.0) * 100.0));
        Change {
            better: self.better,
            percent: percent_change(fa.centre, fb.centre),
            p: Some(p),
            interval,
            n_base: a.len() as u64,
            n: b.len() as u64,
            verdict: if significant {
                ChangeVerdict::Significant
            } else {
                ChangeVerdict::Noise
            },
            diagnostics: Vec::new(),
        }
    }
}

/// The reasons of the findings that make a comparison unfit to decide, or `None`.
pub(super) fn unfit_reasons(diagnostics: &[Diagnostic]) -> Option<String> {
    let reasons: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.unfit)
        .map(|d| d.reason.as_str())
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}
