//! The statistics a figure can be read as: one list of them, each with the names people
//! write for it, what it is in a distribution, and its value in a run's percentiles or its
//! repetitions' summary. Rules, targets, tables, the store and pages all name them here.

use super::{Percentiles, Summary};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Statistic {
    Min,
    Mean,
    Median,
    P90,
    P99,
    P999,
    P9999,
    Max,
    Stddev,
    /// How many samples (or repetitions) there are.
    Count,
    /// A timer test's missed periods.
    Overruns,
}

use Statistic::*;

impl Statistic {
    /// Every statistic, in the order tables show them.
    pub const ALL: [Statistic; 11] = [
        Min, Mean, Median, P90, P99, P999, P9999, Max, Stddev, Count, Overruns,
    ];
    /// Those a distribution (a latency histogram) has, as the distribution table shows them.
    pub const OF_DISTRIBUTION: [Statistic; 8] = [Min, Mean, Median, P90, P99, P999, P9999, Max];
    /// What `compare` reads of a distribution unless told: its median and tail.
    pub const COMPARED_BY_DEFAULT: [Statistic; 4] = [Median, P99, P999, Max];

    /// The name latkit writes.
    pub fn name(self) -> &'static str {
        self.names()[0]
    }

    /// Every name it is known by, latkit's own first.
    fn names(self) -> &'static [&'static str] {
        match self {
            Min => &["min"],
            Mean => &["avg", "mean"],
            Median => &["p50", "median"],
            P90 => &["p90"],
            P99 => &["p99"],
            P999 => &["p99.9"],
            P9999 => &["p99.99"],
            Max => &["max"],
            Stddev => &["stddev"],
            Count => &["count", "samples"],
            Overruns => &["overruns"],
        }
    }

    /// The statistic `text` names, by any of its names.
    pub fn parse(text: &str) -> Option<Statistic> {
        Self::ALL.into_iter().find(|s| s.names().contains(&text))
    }

    /// The statistic `text` names, if it is one of `among`.
    pub fn parse_among(text: &str, among: &[Statistic]) -> Option<Statistic> {
        Self::parse(text).filter(|s| among.contains(s))
    }

    /// Every name of every statistic in `among`, for a message that lists what is expected.
    pub fn all_names(among: &[Statistic]) -> String {
        among
            .iter()
            .flat_map(|s| s.names().iter().copied())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The quantile a percentile stands for.
    pub fn quantile(self) -> Option<f64> {
        Some(match self {
            Median => 0.5,
            P90 => 0.9,
            P99 => 0.99,
            P999 => 0.999,
            P9999 => 0.9999,
            _ => return None,
        })
    }

    /// Its value among a distribution's percentiles (the mean, deviation and overruns are
    /// not among them).
    pub fn of_percentiles(self, p: &Percentiles) -> Option<f64> {
        Some(match self {
            Min => p.min,
            Median => p.p50,
            P90 => p.p90,
            P99 => p.p99,
            P999 => p.p99_9,
            P9999 => p.p99_99,
            Max => p.max,
            Count => p.count as f64,
            Mean | Stddev | Overruns => return None,
        })
    }

    /// Its value in a summary of repetitions; percentiles of a few repetitions would be
    /// invented precision.
    pub fn of_summary(self, s: &Summary) -> Option<f64> {
        Some(match self {
            Min => s.min,
            Max => s.max,
            Mean => s.mean,
            Median => s.median,
            Stddev => s.stddev?,
            Count => s.n as f64,
            P90 | P99 | P999 | P9999 | Overruns => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_statistic_and_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for statistic in Statistic::ALL {
            assert_eq!(Statistic::parse(statistic.name()), Some(statistic));
            for name in statistic.names() {
                assert!(seen.insert(*name), "{name} names two statistics");
                assert_eq!(Statistic::parse(name), Some(statistic));
            }
        }
        assert_eq!(Statistic::parse("median"), Some(Median));
        assert_eq!(Statistic::parse("mean"), Some(Mean));
        assert_eq!(Statistic::parse("p95"), None);
        assert_eq!(
            Statistic::parse_among("stddev", &Statistic::OF_DISTRIBUTION),
            None
        );
        let percentiles: Vec<f64> = Statistic::ALL.iter().filter_map(|s| s.quantile()).collect();
        assert_eq!(percentiles, [0.5, 0.9, 0.99, 0.999, 0.9999]);
    }

    #[test]
    fn values_come_from_what_holds_them() {
        let p = Percentiles {
            count: 7,
            min: 1.0,
            p50: 2.0,
            p90: 3.0,
            p99: 4.0,
            p99_9: 5.0,
            p99_99: 6.0,
            max: 9.0,
        };
        let read: Vec<Option<f64>> = Statistic::ALL
            .iter()
            .map(|s| s.of_percentiles(&p))
            .collect();
        let expected = [1.0, -1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 9.0, -1.0, 7.0, -1.0];
        let expected: Vec<Option<f64>> =
            expected.iter().map(|v| (*v >= 0.0).then_some(*v)).collect();
        assert_eq!(read, expected);
        let s = Summary {
            n: 3,
            min: 1.0,
            max: 3.0,
            mean: 2.5,
            median: 2.0,
            stddev: None,
            median_ci: None,
        };
        assert_eq!(Mean.of_summary(&s), Some(2.5));
        assert_eq!(
            Stddev.of_summary(&s),
            None,
            "fewer than two values have none"
        );
        assert_eq!(P99.of_summary(&s), None);
        assert_eq!(Count.of_summary(&s), Some(3.0));
    }
}
