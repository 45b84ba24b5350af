//! Accumulates parsed results into benchmarks, folding repetitions of the same name together.

use super::{
    Assume, BenchName, Benchmark, Better, ConfigEntry, Environment, LinearHistogram, Metric,
    MetricKind, Run, Source, Summary, TimerSummary, Unit,
};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::hash::BuildHasher;

#[derive(Default)]
pub struct RunBuilder {
    benchmarks: Vec<Benchmark>,
    /// A full name's digest → the benchmarks with that name, one per package or configuration
    /// (and any other name of the same digest). Neither names nor lists are allocated for it:
    /// a suite of 100,000 benchmarks took 30 ms to free them.
    index: FxHashMap<u64, SmallVec<[usize; 1]>>,
    /// Per benchmark: where its metrics are found by name, and their unit factors.
    slots: Vec<MetricSlots>,
}

/// A benchmark's metrics by name, found in constant time however many it has (a google/benchmark
/// row can hold thousands of counters, a Go line as many metrics).
#[derive(Default)]
struct MetricSlots {
    /// Per metric: the factor from its source unit to its base unit, so that the common case
    /// (every value in the first value's unit) parses no unit. Held inline for a few metrics.
    to_base: SmallVec<[f64; 4]>,
    /// Per metric: whether its name is its source unit (every Go metric), so that a value
    /// recorded under one string for both is known to be in that unit without comparing.
    named_by_unit: SmallVec<[bool; 4]>,
    /// The metric after the one last found: readers record a result's metrics in the same order
    /// every time, so this is nearly always the one asked for next.
    next: usize,
    /// Name → position, kept once a benchmark has more metrics than a scan finds quickly.
    by_name: Option<FxHashMap<String, usize>>,
}

/// Metrics up to this many are found by a scan, without a map.
const SCANNED_METRICS: usize = 16;

/// A benchmark's metrics vector grows one at a time up to this many.
const EXACT_METRICS: usize = 4;

impl MetricSlots {
    fn of(metrics: &[Metric]) -> Self {
        let mut slots = MetricSlots::default();
        for (i, m) in metrics.iter().enumerate() {
            slots.added(&metrics[..=i], i, Unit::parse(&m.source_unit).to_base);
        }
        slots
    }

    /// Where the metric `name` is in `metrics` (this benchmark's).
    fn find(&mut self, metrics: &[Metric], name: &str) -> Option<usize> {
        let found = if metrics.get(self.next).is_some_and(|m| m.name == name) {
            Some(self.next)
        } else if let Some(by_name) = &self.by_name {
            by_name.get(name).copied()
        } else {
            metrics.iter().position(|m| m.name == name)
        }?;
        self.next = (found + 1) % metrics.len();
        Some(found)
    }

    /// Notes that `metrics[at]` was just added, with the factor `to_base`.
    fn added(&mut self, metrics: &[Metric], at: usize, to_base: f64) {
        self.to_base.push(to_base);
        self.named_by_unit
            .push(metrics[at].name == metrics[at].source_unit);
        self.next = 0;
        if let Some(by_name) = &mut self.by_name {
            by_name.entry(metrics[at].name.clone()).or_insert(at);
        } else if metrics.len() > SCANNED_METRICS {
            // Names are unique within a benchmark (readers and the latkit JSON check see to
            // it); were one repeated, the first would be found, as a scan finds it.
            let mut by_name = FxHashMap::default();
            for (i, m) in metrics.iter().enumerate() {
                by_name.entry(m.name.clone()).or_insert(i);
            }
            self.by_name = Some(by_name);
        }
    }
}

impl RunBuilder {
    /// Finds or creates the benchmark `full_name` in `package`; `parse_name` runs only on creation.
    pub fn benchmark(
        &mut self,
        full_name: &str,
        package: Option<&str>,
        parse_name: fn(&str) -> BenchName,
    ) -> usize {
        self.benchmark_in(full_name, package, &[], parse_name)
    }

    /// As [`RunBuilder::benchmark`], under configuration lines that differ from the run's.
    pub fn benchmark_in(
        &mut self,
        full_name: &str,
        package: Option<&str>,
        config: &[ConfigEntry],
        parse_name: fn(&str) -> BenchName,
    ) -> usize {
        if let Some(i) = self.find(full_name, package, config) {
            return i;
        }
        self.push(Benchmark {
            name: parse_name(full_name),
            package: package.map(str::to_string),
            iterations: Vec::new(),
            metrics: Vec::new(),
            histograms: Vec::new(),
            config: config.to_vec(),
            timer: None,
            aggregate: None,
            stands_in: None,
            exit_codes: Vec::new(),
        })
    }

    fn find(
        &self,
        full_name: &str,
        package: Option<&str>,
        config: &[ConfigEntry],
    ) -> Option<usize> {
        let same_digest = self.index.get(&name_digest(full_name))?;
        same_digest.iter().copied().find(|&i| {
            let b = &self.benchmarks[i];
            b.name.full_name == full_name && b.package.as_deref() == package && b.config == config
        })
    }

    fn push(&mut self, bench: Benchmark) -> usize {
        let i = self.benchmarks.len();
        self.index
            .entry(name_digest(&bench.name.full_name))
            .or_default()
            .push(i);
        self.slots.push(MetricSlots::of(&bench.metrics));
        self.benchmarks.push(bench);
        i
    }

    /// Names `params` as the benchmark's own parameters (a command's `-L` value), beside the
    /// configuration that keeps it apart from the same name under other values.
    pub fn name_params(&mut self, bench: usize, params: &[ConfigEntry]) {
        let name = &mut self.benchmarks[bench].name;
        for p in params {
            if !name.params.contains(p) {
                name.params.push(p.clone());
            }
        }
    }

    /// Marks `bench` as the statistic `aggregate` of another benchmark's repetitions.
    pub fn mark_aggregate(&mut self, bench: usize, aggregate: &str) {
        self.benchmarks[bench].aggregate = Some(aggregate.to_string());
    }

    /// Marks `bench` as given only as the statistic `aggregate` of its repetitions.
    pub fn mark_standing_in(&mut self, bench: usize, aggregate: &str) {
        self.benchmarks[bench].stands_in = Some(aggregate.to_string());
    }

    /// Appends a timed command's exit code at its next run (`None`: a signal ended it).
    pub fn record_exit(&mut self, bench: usize, code: Option<i32>) {
        self.benchmarks[bench].exit_codes.push(code);
    }

    /// Every run's exit status, taking the reader's vector (hyperfine's can hold millions).
    pub fn record_exits(&mut self, bench: usize, codes: Vec<Option<i32>>) {
        let exits = &mut self.benchmarks[bench].exit_codes;
        if exits.is_empty() {
            *exits = codes;
        } else {
            exits.extend(codes);
        }
    }

    pub fn record_iterations(&mut self, bench: usize, iterations: u64) {
        self.benchmarks[bench].iterations.push(iterations);
    }

    /// Records `iterations` for each of `repetitions` at once (a vector of their count).
    pub fn record_iterations_of(&mut self, bench: usize, iterations: u64, repetitions: usize) {
        let kept = &mut self.benchmarks[bench].iterations;
        kept.extend(std::iter::repeat_n(iterations, repetitions));
    }

    /// Appends one repetition's value, given in the unit `source_unit`, to the metric `name`.
    /// Each value is converted with its own unit; a unit of another dimension than the
    /// metric's first is refused with the reason (readers of formats whose units vary).
    pub fn record_checked(
        &mut self,
        bench: usize,
        name: &str,
        source_unit: &str,
        value: f64,
    ) -> Result<(), String> {
        // The same rule latkit JSON is read back by: a benchmark never takes negative time.
        if value < 0.0 && Unit::parse(source_unit).unit.dimension == super::Dimension::Time {
            return Err(negative_time(name, value, source_unit));
        }
        self.record_as(bench, name, source_unit, value, MetricKind::Repetitions)
    }

    /// Appends every value of `values` as [`record_checked`](Self::record_checked) appends
    /// one, converting them where they are: a reader holding millions hands its vector over
    /// instead of copying it.
    pub fn record_all_checked(
        &mut self,
        bench: usize,
        name: &str,
        source_unit: &str,
        mut values: Vec<f64>,
    ) -> Result<(), String> {
        let Some(&first) = values.first() else {
            return Ok(());
        };
        // The first value makes the metric, or is refused by it, as one alone would be; it is
        // taken back to join the rest.
        self.record_checked(bench, name, source_unit, first)?;
        let metrics = &mut self.benchmarks[bench].metrics;
        let m = self.slots[bench]
            .find(metrics, name)
            .expect("recorded above");
        metrics[m].values.pop();
        let parsed = Unit::parse(source_unit);
        for value in &mut values {
            if *value < 0.0 && parsed.unit.dimension == super::Dimension::Time {
                return Err(negative_time(name, *value, source_unit));
            }
            if !super::fits_base_unit(*value, source_unit) {
                return Err(too_large(name, *value, source_unit));
            }
            *value *= parsed.to_base;
        }
        let kept = &mut metrics[m].values;
        if kept.is_empty() {
            *kept = values;
        } else {
            kept.extend(values);
        }
        Ok(())
    }

    /// Appends one repetition's value for a source that writes each metric in one fixed unit
    /// (Go names metrics by their unit; probes choose theirs), so it always converts.
    pub fn record(&mut self, bench: usize, name: &str, source_unit: &str, value: f64) {
        let converted = self.record_as(bench, name, source_unit, value, MetricKind::Repetitions);
        debug_assert!(converted.is_ok(), "{converted:?}");
    }

    /// Appends one interval's value to the per-interval series `name` (fixed unit, as `record`).
    pub fn record_series(&mut self, bench: usize, name: &str, source_unit: &str, value: f64) {
        let converted = self.record_as(bench, name, source_unit, value, MetricKind::Series);
        debug_assert!(converted.is_ok(), "{converted:?}");
    }

    fn record_as(
        &mut self,
        bench: usize,
        name: &str,
        source_unit: &str,
        value: f64,
        kind: MetricKind,
    ) -> Result<(), String> {
        if !super::fits_base_unit(value, source_unit) {
            return Err(too_large(name, value, source_unit));
        }
        let metrics = &mut self.benchmarks[bench].metrics;
        let slots = &mut self.slots[bench];
        let Some(m) = slots.find(metrics, name) else {
            let parsed = Unit::parse(source_unit);
            let mut metric = Metric::new(name, &parsed, source_unit);
            metric.kind = kind;
            metric.values.push(value * parsed.to_base);
            // Most benchmarks have one to three metrics, of about 250 bytes each: grown one at
            // a time, such a vector is never shrunk after (100,000 of them took 60 ms); more
            // grow as usual, so a wide row's are not copied once per metric.
            if metrics.len() < EXACT_METRICS {
                metrics.reserve_exact(1);
            }
            metrics.push(metric);
            slots.added(metrics, metrics.len() - 1, parsed.to_base);
            return Ok(());
        };
        let metric = &mut metrics[m];
        let same_string = std::ptr::eq(name, source_unit) && slots.named_by_unit[m];
        let to_base = if same_string || metric.source_unit == source_unit {
            slots.to_base[m]
        } else {
            let parsed = Unit::parse(source_unit);
            if parsed.unit != metric.unit {
                return Err(format!(
                    "`{name}` in `{source_unit}` cannot join earlier values in `{}`",
                    metric.source_unit
                ));
            }
            parsed.to_base
        };
        metric.values.push(value * to_base);
        Ok(())
    }

    /// Overrides the direction of improvement of every metric written in `source_unit`.
    pub fn set_better(&mut self, source_unit: &str, better: Better) {
        self.metrics_in(source_unit).for_each(|m| m.better = better);
    }

    /// Every metric written in `source_unit`.
    fn metrics_in<'a>(&'a mut self, source_unit: &'a str) -> impl Iterator<Item = &'a mut Metric> {
        self.benchmarks
            .iter_mut()
            .flat_map(|b| b.metrics.iter_mut())
            .filter(move |m| m.source_unit == source_unit)
    }

    /// The harness's own summary of `metric` of `bench`, for repetitions it did not keep.
    pub fn set_reported(&mut self, bench: usize, metric: &str, reported: Option<Summary>) {
        let metrics = &mut self.benchmarks[bench].metrics;
        if let Some(m) = self.slots[bench].find(metrics, metric) {
            metrics[m].reported = reported.map(Box::new);
        }
    }

    /// Sets what may be assumed of every metric written in `source_unit`.
    pub fn set_assume(&mut self, source_unit: &str, assume: Assume) {
        self.metrics_in(source_unit).for_each(|m| m.assume = assume);
    }

    /// A builder that continues from benchmarks already read.
    pub fn from_benchmarks(benchmarks: Vec<Benchmark>) -> Self {
        let mut builder = RunBuilder::default();
        for bench in benchmarks {
            builder.push(bench);
        }
        builder
    }

    /// Folds `benchmarks` in: the same name and package pool their repetitions, histograms and
    /// timer summaries, in order; new ones are added whole. Benchmarks without a package take
    /// `default_package`. Returns what could not be pooled, one message each.
    pub fn append(
        &mut self,
        benchmarks: Vec<Benchmark>,
        default_package: Option<&str>,
    ) -> Vec<String> {
        let mut refused = Vec::new();
        for mut bench in benchmarks {
            if bench.package.is_none() {
                bench.package = default_package.map(str::to_string);
            }
            match self.find(
                &bench.name.full_name,
                bench.package.as_deref(),
                &bench.config,
            ) {
                Some(i) => {
                    pool(
                        &mut self.benchmarks[i],
                        &mut self.slots[i],
                        bench,
                        &mut refused,
                    );
                }
                None => {
                    self.push(bench);
                }
            }
        }
        refused
    }

    pub fn is_empty(&self) -> bool {
        self.benchmarks.is_empty()
    }

    /// Whether any metric holds a value or a distribution.
    pub fn has_values(&self) -> bool {
        self.benchmarks
            .iter()
            .flat_map(|b| &b.metrics)
            .any(|m| !m.values.is_empty() || m.histogram.is_some())
    }

    pub fn finish(mut self) -> Vec<Benchmark> {
        // A vector of metrics grows four at a time, and a metric is about half a KB: most
        // benchmarks have one to three, so a suite of many would hold twice what it needs.
        // Values grow by doubling: forty rounds would hold sixty-four; so do the benchmarks.
        self.benchmarks.shrink_to_fit();
        for bench in &mut self.benchmarks {
            bench.metrics.shrink_to_fit();
            for metric in &mut bench.metrics {
                metric.values.shrink_to_fit();
            }
        }
        self.benchmarks
    }
}

/// The key of a full name in a builder's index.
fn name_digest(full_name: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(full_name)
}

fn negative_time(name: &str, value: f64, source_unit: &str) -> String {
    format!("`{name}` = {value} {source_unit} is a negative time, which a benchmark cannot take")
}

fn too_large(name: &str, value: f64, source_unit: &str) -> String {
    format!("`{name}` = {value:e} {source_unit} is too large to store in base units")
}

/// Pools `from` into `into` (the same benchmark), noting in `refused` what cannot be pooled.
fn pool(into: &mut Benchmark, slots: &mut MetricSlots, from: Benchmark, refused: &mut Vec<String>) {
    let name = crate::error::visible(&from.name.full_name).into_owned();
    into.iterations.extend(from.iterations);
    for metric in from.metrics {
        let Some(at) = slots.find(&into.metrics, &metric.name) else {
            let to_base = Unit::parse(&metric.source_unit).to_base;
            into.metrics.push(metric);
            slots.added(&into.metrics, into.metrics.len() - 1, to_base);
            continue;
        };
        let m = &mut into.metrics[at];
        if m.unit != metric.unit || m.kind != metric.kind {
            refused.push(format!(
                "{name}: `{}` in `{}` left out: earlier runs give it in `{}`",
                metric.name, metric.source_unit, m.source_unit
            ));
            continue;
        }
        m.values.extend(metric.values);
        match (&mut m.histogram, metric.histogram) {
            (Some(a), Some(b)) => a.add(&b),
            (slot, b) => *slot = slot.take().or(b),
        }
    }
    for h in from.histograms {
        let same_kind = into.histograms.iter().any(|x| x.of == h.of);
        match into
            .histograms
            .iter_mut()
            .find(|x| x.of == h.of && x.bucket_ns == h.bucket_ns)
        {
            Some(x) if !x.counts.is_empty() && !h.counts.is_empty() => {
                add_counts(x, &h);
                // Statistics read from one run no longer describe the pooled buckets.
                x.reported = None;
            }
            Some(_) => refused.push(format!(
                "{name}: the `{}` histogram statistics of later runs were left out (only their summary was read, no buckets to pool)",
                h.of
            )),
            None if same_kind => refused.push(format!(
                "{name}: the `{}` histogram of a later run has other bucket widths and was left out",
                h.of
            )),
            None => into.histograms.push(h),
        }
    }
    into.timer = match (into.timer.take(), from.timer) {
        (Some(a), Some(b)) => TimerSummary::combine([&a, &b]),
        (a, b) => a.or(b),
    };
}

fn add_counts(into: &mut LinearHistogram, from: &LinearHistogram) {
    if into.counts.len() < from.counts.len() {
        into.counts.resize(from.counts.len(), 0);
    }
    for (a, b) in into.counts.iter_mut().zip(&from.counts) {
        *a = a.saturating_add(*b);
    }
    into.overflow = into.overflow.saturating_add(from.overflow);
}

/// Assembles a run from what a reader collected.
pub fn new_run(
    source: Source,
    environment: Environment,
    config: Vec<ConfigEntry>,
    builder: RunBuilder,
) -> Run {
    let benchmarks = builder.finish();
    Run {
        id: content_id(&source, &environment, &config, &benchmarks),
        started: None,
        ended: None,
        latkit_version: env!("CARGO_PKG_VERSION").to_string(),
        source,
        environment,
        config,
        benchmarks,
        timer: None,
        peer_metrics: false,
    }
}

/// A run's id: a digest of what it holds (its source, environment, configuration and every
/// benchmark's name and values), so that the same input always gives the same id and a report
/// of it the same bytes. SipHash-1-3 with fixed keys: stable across builds, cheap beside
/// reading the values it digests.
fn content_id(
    source: &Source,
    environment: &Environment,
    config: &[ConfigEntry],
    benchmarks: &[Benchmark],
) -> String {
    use siphasher::sip128::{Hasher128, SipHasher13};
    use std::hash::{Hash, Hasher};
    let mut digest = SipHasher13::new();
    // The small parts as their JSON; serialising them cannot fail.
    let head = serde_json::to_vec(&(source, environment, config)).unwrap_or_default();
    digest.write(&head);
    for bench in benchmarks {
        bench.name.full_name.hash(&mut digest);
        bench.package.hash(&mut digest);
        bench.iterations.hash(&mut digest);
        for metric in &bench.metrics {
            metric.name.hash(&mut digest);
            metric.source_unit.hash(&mut digest);
            metric.values.len().hash(&mut digest);
            write_values(&mut digest, &metric.values);
        }
    }
    format!("{:032x}", digest.finish128().as_u128())
}

/// Digests `values` as the bytes of their bits, little-endian: what a `write_u64` of each
/// digests on a little-endian machine, written a block at a time (per value, the call cost
/// more than the digest of its eight bytes).
fn write_values(digest: &mut impl std::hash::Hasher, values: &[f64]) {
    let mut block = [0u8; 512];
    for chunk in values.chunks(block.len() / 8) {
        for (bytes, v) in block.chunks_exact_mut(8).zip(chunk) {
            bytes.copy_from_slice(&v.to_bits().to_le_bytes());
        }
        digest.write(&block[..chunk.len() * 8]);
    }
}

#[cfg(test)]
mod tests;
