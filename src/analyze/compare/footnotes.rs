//! What the notes under the comparison tables must say, gathered while the tables are built.

use super::*;

/// What the notes under the tables must say.
#[derive(Default)]
pub(super) struct Footnotes {
    /// A median without a confidence interval was shown.
    pub(super) too_few_for_ci: bool,
    /// A comparison could not have reached significance.
    pub(super) too_few_to_detect: bool,
    /// Both sides held one value repeated: nothing to test.
    pub(super) all_equal: bool,
    /// Benchmarks missing from some inputs: (benchmark, labels of the inputs that have it),
    /// once per metric table that found it so.
    pub(super) partial: Vec<(String, Vec<String>)>,
    pub(super) distributions: bool,
    /// Exact values (assume=exact) that vary: warnings, one per benchmark and input.
    pub(super) inexact: Vec<String>,
    /// An exact p-value where scipy's U test (google/benchmark's compare.py) would take the
    /// normal approximation: ties, or more than 8 values on each side.
    pub(super) exact_beyond_scipy: bool,
    /// A geomean over benchmark sets that differ from the base's.
    pub(super) geomean_sets_differ: bool,
    /// Metrics whose geomean was left out, as a figure of theirs is 0.
    pub(super) geomean_not_positive: Vec<String>,
    /// A geomean row was shown, of these values.
    pub(super) geomean_of: Option<GeomeanOf>,
    /// Counted figures were decided by their size.
    pub(super) counted: bool,
    /// Counted figures spread beyond the floor, and were tested instead.
    pub(super) counts_spread: bool,
    /// Counted figures with one count on a side: neither decided nor tested.
    pub(super) counted_once: bool,
    /// Findings on figures' repetitions (`bench figure`, the finding): warnings.
    pub(super) diagnosed: Vec<(String, Diagnostic)>,
}

impl Footnotes {
    /// Takes in the footnotes of the metric compared after the ones already here.
    pub(super) fn absorb(&mut self, other: Footnotes) {
        // Every field named, so that a new one cannot be forgotten here.
        let Footnotes {
            too_few_for_ci,
            too_few_to_detect,
            all_equal,
            partial,
            distributions,
            inexact,
            exact_beyond_scipy,
            geomean_sets_differ,
            geomean_not_positive,
            geomean_of,
            counted,
            counts_spread,
            counted_once,
            diagnosed,
        } = other;
        self.too_few_for_ci |= too_few_for_ci;
        self.too_few_to_detect |= too_few_to_detect;
        self.all_equal |= all_equal;
        self.partial.extend(partial);
        self.distributions |= distributions;
        self.inexact.extend(inexact);
        self.exact_beyond_scipy |= exact_beyond_scipy;
        self.geomean_sets_differ |= geomean_sets_differ;
        for metric in geomean_not_positive {
            if !self.geomean_not_positive.contains(&metric) {
                self.geomean_not_positive.push(metric);
            }
        }
        self.geomean_of = self.geomean_of.or(geomean_of);
        self.counted |= counted;
        self.counts_spread |= counts_spread;
        self.counted_once |= counted_once;
        self.diagnosed.extend(diagnosed);
    }

    /// What the counted figures and the geomean rows shown need said.
    fn summary_notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if self.counted || self.counts_spread || self.counted_once {
            notes.push(Note::info(crate::analyze::counted::WHAT_COUNTS_MISS));
        }
        if self.counted_once {
            notes.push(Note::warning(
                "counted once: repeatability unknown: a side has one count of a counted \
                 figure, and counts of the same code can differ run to run (random map seeds, \
                 crypto/rand, an allocator's addresses), so its change is neither decided by \
                 its size nor tested; count each side at least twice (latkit counts three \
                 times unless told)",
            ));
        }
        if self.counts_spread {
            notes.push(Note::warning(format!(
                "counted figures whose repetitions spread by more than {}% are not exact: they \
                 were tested as any figure is (the same binary and input should count the \
                 same: check that the runs did the same work)",
                crate::analyze::counted::FLOOR_PERCENT
            )));
        }
        match self.geomean_of {
            Some(GeomeanOf::Medians) => notes.push(Note::info(
                "geomean: of each benchmark's median, its change the geometric mean of the \
                 benchmarks' ratios (benchstat's); google/benchmark's compare.py \
                 OVERALL_GEOMEAN is of every repetition: --geomean repetitions",
            )),
            Some(GeomeanOf::Repetitions) => notes.push(Note::info(
                "geomean: of every repetition of every benchmark on each side, aggregates left \
                 out, its change the ratio of the two (compare.py's OVERALL_GEOMEAN)",
            )),
            None => {}
        }
        notes
    }

    pub(super) fn notes(&self, columns: &[Side], alpha: f64) -> Vec<Note> {
        let mut notes = Vec::new();
        if self.too_few_for_ci {
            notes.push(Note::info(format!(
                "need >= {} samples for a confidence interval at level {CONFIDENCE}",
                min_samples_for_ci(CONFIDENCE)
            )));
        }
        if self.too_few_to_detect {
            let need = min_samples_to_detect(alpha)
                .map_or_else(|| "more".to_string(), |n| format!(">= {n}"));
            notes.push(Note::info(format!(
                "need {need} samples to detect a difference at alpha {alpha}"
            )));
        }
        if self.all_equal {
            notes.push(Note::info(
                "all samples are equal where a figure never varied (p=1.000): nothing to test",
            ));
        }
        // A benchmark missing from an input is missing from every metric's table: said once,
        // as the first table found it.
        let mut said: FxHashSet<&str> = FxHashSet::default();
        for (bench, present) in self.partial.iter().filter(|(b, _)| said.insert(b)) {
            let absent: Vec<&str> = columns
                .iter()
                .map(|c| c.label)
                .filter(|l| !present.iter().any(|p| p == l))
                .collect();
            notes.push(Note::info(format!(
                "{bench}: missing from {}; compared where present",
                absent.join(", ")
            )));
        }
        notes.extend(self.inexact.iter().map(Note::warning));
        notes.extend(self.diagnosed.iter().map(|(figure, d)| {
            Note::warning(format!("{figure}: {}: {}", d.reason, d.kind.advice()))
        }));
        if self.exact_beyond_scipy {
            notes.push(Note::info(
                "p-values count the U test's exact distribution (up to 25 values with ties, 50 \
                 without, as benchstat does); google/benchmark's compare.py (scipy) takes the \
                 normal approximation where values tie or both sides exceed 8, so its p-values \
                 differ there",
            ));
        }
        notes.extend(self.summary_notes());
        match (self.geomean_sets_differ, self.geomean_of) {
            (true, Some(GeomeanOf::Medians)) => notes.push(Note::warning(
                "geomean: the inputs' benchmark sets differ, so its figures and its change are \
                 over the benchmarks every input has (benchstat's figures are each over its \
                 input's own, which it says may not be comparable; its change is this one)",
            )),
            (true, _) => notes.push(Note::warning(
                "geomean: the benchmark set differs from the base's; each side's geomean is of \
                 its own repetitions, as compare.py's, and may not be comparable",
            )),
            _ => {}
        }
        if !self.geomean_not_positive.is_empty() {
            notes.push(Note::info(format!(
                "geomean of {}: left out, as a figure of 0 has no logarithm (a geomean needs \
                 every figure > 0); the rows compare as they are",
                self.geomean_not_positive.join(", ")
            )));
        }
        if self.distributions {
            notes.push(Note::info(
                "distributions: each percentile's 95% bounds are order statistics of the \
                 samples (distribution-free, but they assume independent samples: consecutive \
                 timer and network samples are correlated, so treat narrow bounds with care); \
                 a change counts when the bounds do not overlap; a maximum is one sample and \
                 is never called significant",
            ));
        }
        notes
    }

    /// What the repetitions of each of `sides` (values, label) of `bench`'s `metric` say about
    /// their fitness to be compared, kept for the notes.
    pub(super) fn diagnose(
        &mut self,
        bench: &str,
        metric: &Metric,
        sides: &[(&Sample, &str)],
    ) -> Vec<Diagnostic> {
        // Drift, modes and outliers are the machine's doing, which counts do not see: what
        // counts that vary need said is their spread (`counted::notes`).
        if metric.assume == crate::model::Assume::Counted {
            return Vec::new();
        }
        let scale = Unit::parse(&metric.source_unit).to_base;
        let show = |v: f64| format!("{} {}", format_exact(v / scale), metric.source_unit);
        let found: Vec<Diagnostic> = sides
            .iter()
            .flat_map(|(sample, label)| {
                crate::analyze::diagnose::diagnose(&sample.measured, &sample.sorted, label, &show)
            })
            .collect();
        let figure = format!("{bench} {}", metric.name);
        self.diagnosed
            .extend(found.iter().map(|d| (figure.clone(), d.clone())));
        found
    }

    /// benchstat's warning for exact values that vary.
    pub(super) fn inexact(
        &mut self,
        bench: &str,
        label: &str,
        metric: &Metric,
        (low, high): (f64, f64),
    ) {
        let scale = Unit::parse(&metric.source_unit).to_base;
        self.inexact.push(format!(
            "{bench} {} ({label}): exact values expected (assume=exact), but they range from {} to {}",
            metric.name,
            format_exact(low / scale),
            format_exact(high / scale)
        ));
    }

    pub(super) fn partial(
        &mut self,
        bench: &str,
        columns: &[Side],
        present: impl Fn(usize) -> bool,
    ) {
        let have: Vec<String> = (columns.iter().enumerate())
            .filter(|(i, _)| present(*i))
            .map(|(_, c)| c.label.to_string())
            .collect();
        if have.len() < columns.len() {
            self.partial.push((bench.to_string(), have));
        }
    }
}
