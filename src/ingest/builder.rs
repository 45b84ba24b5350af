//! Accumulates parsed results into benchmarks, folding repetitions of the same name together.

use crate::model::{BenchName, Benchmark, Better, Metric, Unit};
use rustc_hash::FxHashMap;

#[derive(Default)]
pub struct RunBuilder {
    benchmarks: Vec<Benchmark>,
    /// Full name → indices of benchmarks with that name, one per package.
    index: FxHashMap<String, Vec<usize>>,
    /// Per benchmark, per metric: factor from the source unit to the base unit.
    factors: Vec<Vec<f64>>,
}

impl RunBuilder {
    /// Finds or creates the benchmark `full_name` in `package`; `parse_name` runs only on creation.
    pub fn benchmark(
        &mut self,
        full_name: &str,
        package: Option<&str>,
        parse_name: fn(&str) -> BenchName,
    ) -> usize {
        if let Some(candidates) = self.index.get(full_name)
            && let Some(&i) = candidates
                .iter()
                .find(|&&i| self.benchmarks[i].package.as_deref() == package)
        {
            return i;
        }
        let i = self.benchmarks.len();
        self.benchmarks.push(Benchmark {
            name: parse_name(full_name),
            package: package.map(str::to_string),
            iterations: Vec::new(),
            metrics: Vec::new(),
            histograms: Vec::new(),
        });
        self.factors.push(Vec::new());
        self.index.entry(full_name.to_string()).or_default().push(i);
        i
    }

    pub fn record_iterations(&mut self, bench: usize, iterations: u64) {
        self.benchmarks[bench].iterations.push(iterations);
    }

    /// Appends one repetition's value, given in the unit `source_unit`, to the metric `name`.
    pub fn record(&mut self, bench: usize, name: &str, source_unit: &str, value: f64) {
        let metrics = &mut self.benchmarks[bench].metrics;
        let m = match metrics.iter().position(|m| m.name == name) {
            Some(m) => m,
            None => {
                let parsed = Unit::parse(source_unit);
                self.factors[bench].push(parsed.to_base);
                metrics.push(Metric::new(name, &parsed, source_unit));
                metrics.len() - 1
            }
        };
        metrics[m].values.push(value * self.factors[bench][m]);
    }

    /// Overrides the direction of improvement of every metric written in `source_unit`.
    pub fn set_better(&mut self, source_unit: &str, better: Better) {
        self.benchmarks
            .iter_mut()
            .flat_map(|b| b.metrics.iter_mut())
            .filter(|m| m.source_unit == source_unit)
            .for_each(|m| m.better = better);
    }

    /// A builder that continues from benchmarks already read.
    pub fn from_benchmarks(benchmarks: Vec<Benchmark>) -> Self {
        let mut builder = RunBuilder::default();
        builder.append(benchmarks, None);
        builder
    }

    /// Folds `benchmarks` in: the same name and package pool their repetitions, in order; new
    /// ones are added whole. Benchmarks without a package take `default_package`.
    pub fn append(&mut self, benchmarks: Vec<Benchmark>, default_package: Option<&str>) {
        for mut bench in benchmarks {
            if bench.package.is_none() {
                bench.package = default_package.map(str::to_string);
            }
            let existing = self
                .index
                .get(&bench.name.full_name)
                .and_then(|candidates| {
                    candidates
                        .iter()
                        .copied()
                        .find(|&i| self.benchmarks[i].package == bench.package)
                });
            let Some(i) = existing else {
                let factors = bench
                    .metrics
                    .iter()
                    .map(|m| Unit::parse(&m.source_unit).to_base)
                    .collect();
                self.index
                    .entry(bench.name.full_name.clone())
                    .or_default()
                    .push(self.benchmarks.len());
                self.benchmarks.push(bench);
                self.factors.push(factors);
                continue;
            };
            let target = &mut self.benchmarks[i];
            target.iterations.extend(bench.iterations);
            for metric in bench.metrics {
                match target.metrics.iter_mut().find(|m| m.name == metric.name) {
                    Some(m) => m.values.extend(metric.values),
                    None => {
                        self.factors[i].push(Unit::parse(&metric.source_unit).to_base);
                        target.metrics.push(metric);
                    }
                }
            }
        }
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

    pub fn finish(self) -> Vec<Benchmark> {
        self.benchmarks
    }
}
