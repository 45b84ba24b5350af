//! What periodic-timer latency tools (latkit timer, Xenomai `latency`, cyclictest) report
//! beyond per-metric values: the test setup, the tool's overall figures, and fixed-bucket
//! histograms exactly as those tools count them.

use serde::{Deserialize, Serialize};

/// The setup and overall result of a timer latency test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerInfo {
    /// 0 where the tool does not say (rtla, timerlat traces).
    pub period_ns: u64,
    /// Xenomai's "Test mode" text (`periodic user-mode task`, `in-kernel periodic task`).
    pub mode: String,
    pub priority: i32,
    /// Seconds measured (after warm-up).
    pub duration_s: u64,
    /// Seconds asked for; 0 = until interrupted.
    pub requested_s: u64,
    /// How the measuring threads waited: `nanosleep`, `timerfd`, `busy`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub method: Option<String>,
    /// Scheduling policy actually obtained (`fifo`, `other`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub policy: Option<String>,
    /// The overall figures, as the tool reported them (Xenomai's RTS line) or latkit computed
    /// them the same way.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub overall: Option<TimerOverall>,
    /// A `--break` threshold hit: the sample that stopped the test.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub break_hit: Option<BreakHit>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerOverall {
    pub min_ns: i64,
    /// Mean of the per-second averages, truncated to whole ns as Xenomai computes it.
    pub avg_ns: i64,
    pub max_ns: i64,
    pub overruns: u64,
    /// Xenomai's "msw" column: involuntary mode switches (always 0 outside Xenomai).
    pub mode_switches: u64,
}

/// The overall figures so far, second by second, as Xenomai's RTD lines show them: extremes
/// of the per-second extremes, the mean of the per-second averages, summed counts.
#[derive(Clone, Debug, Default)]
pub struct RunningOverall {
    overall: Option<TimerOverall>,
    avg_sum: i64,
    seconds: i64,
}

/// One second's figures.
pub struct Second {
    pub min_ns: i64,
    pub avg_ns: i64,
    pub max_ns: i64,
    pub overruns: u64,
    pub mode_switches: u64,
}

impl RunningOverall {
    /// Counts one more second and returns the figures including it.
    pub fn add(&mut self, s: &Second) -> &TimerOverall {
        self.avg_sum = self.avg_sum.saturating_add(s.avg_ns);
        self.seconds += 1;
        let o = self.overall.get_or_insert(TimerOverall {
            min_ns: s.min_ns,
            max_ns: s.max_ns,
            ..TimerOverall::default()
        });
        o.min_ns = o.min_ns.min(s.min_ns);
        o.max_ns = o.max_ns.max(s.max_ns);
        o.overruns = o.overruns.saturating_add(s.overruns);
        o.mode_switches = o.mode_switches.saturating_add(s.mode_switches);
        o.avg_ns = self.avg_sum / self.seconds;
        o
    }
}

/// One benchmark's overall figures as the timer tool reported them (Xenomai's RTS line,
/// cyclictest's per-thread summary) or latkit measured them exactly: these, never bucket edges
/// or per-second series, are the benchmark's min, avg, max, sample count and overruns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimerSummary {
    pub min_ns: i64,
    pub avg_ns: f64,
    pub max_ns: i64,
    /// Samples taken, when the tool says or it follows from what it says.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub samples: Option<u64>,
    /// Missed periods; absent where the tool does not count them (cyclictest).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub overruns: Option<u64>,
}

impl TimerSummary {
    /// As a run's overall figures, for readers of tools that count no overruns.
    pub fn overall(&self) -> TimerOverall {
        TimerOverall {
            min_ns: self.min_ns,
            avg_ns: self.avg_ns as i64,
            max_ns: self.max_ns,
            overruns: 0,
            mode_switches: 0,
        }
    }

    /// The summary of several threads' summaries together: extremes of the extremes, the
    /// sample-weighted mean (the plain mean of the averages when a count is missing), and the
    /// sums of samples and overruns.
    pub fn combine<'a>(parts: impl IntoIterator<Item = &'a TimerSummary>) -> Option<TimerSummary> {
        let parts: Vec<&TimerSummary> = parts.into_iter().collect();
        let first = parts.first()?;
        let counted = parts.iter().all(|p| p.samples.is_some_and(|n| n > 0));
        let samples = parts.iter().map(|p| p.samples).sum::<Option<u64>>();
        let avg_ns = match samples.filter(|_| counted) {
            Some(total) => {
                parts
                    .iter()
                    .map(|p| p.avg_ns * p.samples.unwrap_or(0) as f64)
                    .sum::<f64>()
                    / total as f64
            }
            None => parts.iter().map(|p| p.avg_ns).sum::<f64>() / parts.len() as f64,
        };
        Some(TimerSummary {
            min_ns: parts.iter().map(|p| p.min_ns).min().unwrap_or(first.min_ns),
            avg_ns,
            max_ns: parts.iter().map(|p| p.max_ns).max().unwrap_or(first.max_ns),
            samples,
            overruns: parts.iter().map(|p| p.overruns).sum::<Option<u64>>(),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BreakHit {
    pub thread: usize,
    pub latency_ns: i64,
    /// Seconds since measuring started (after warm-up); negative in the warm-up (a kernel
    /// mode's frozen trace breaks there too).
    pub at_s: f64,
}

impl BreakHit {
    /// `at 1.250 s`, or `in the warm-up, 0.599 s before its end`.
    pub fn when(&self) -> String {
        match self.at_s < 0.0 {
            true => format!("in the warm-up, {:.3} s before its end", -self.at_s),
            false => format!("at {:.3} s", self.at_s),
        }
    }
}

/// A histogram with fixed-width buckets counted the way Xenomai and cyclictest count them:
/// bucket `i` holds |value| in [i·width, (i+1)·width); the last bucket also takes everything
/// larger (Xenomai) unless `overflow` counts it separately (cyclictest).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearHistogram {
    /// `samples` (every sample), `interval_min` or `interval_max` (one per second).
    pub of: String,
    pub bucket_ns: u64,
    /// Counts from bucket 0; trailing empty buckets may be omitted.
    pub counts: Vec<u64>,
    #[serde(skip_serializing_if = "is_zero", default)]
    pub overflow: u64,
    /// Xenomai's HSS figures when they were read rather than computed (`-s` without `-h`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reported: Option<BucketStats>,
}

/// Count, mean and sample standard deviation of bucket indices (Xenomai's HSS line).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketStats {
    pub samples: u64,
    pub average: f64,
    pub stddev: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LinearHistogram {
    pub fn new(of: &str, bucket_ns: u64, buckets: usize) -> Self {
        LinearHistogram {
            of: of.to_string(),
            bucket_ns,
            counts: vec![0; buckets],
            overflow: 0,
            reported: None,
        }
    }

    /// Counts one value the way Xenomai's `add_histogram` does. Never allocates.
    pub fn add(&mut self, value_ns: i64) {
        let index = (value_ns.unsigned_abs() / self.bucket_ns.max(1)) as usize;
        let last = self.counts.len().saturating_sub(1);
        if let Some(slot) = self.counts.get_mut(index.min(last)) {
            *slot += 1;
        }
    }

    /// The HSS figures: the reported ones, or computed from the buckets as Xenomai does.
    pub fn stats(&self) -> BucketStats {
        if let Some(reported) = self.reported {
            return reported;
        }
        let samples: u64 = self.counts.iter().sum();
        let weighted: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, &n)| i as f64 * n as f64)
            .sum();
        let average = weighted / samples as f64;
        let squares: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, &n)| n as f64 * (i as f64 - average).powi(2))
            .sum();
        let stddev = if samples > 1 {
            (squares / (samples - 1) as f64).sqrt()
        } else {
            0.0
        };
        BucketStats {
            samples,
            average,
            stddev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_xenomai() {
        let mut h = LinearHistogram::new("samples", 1000, 4);
        for v in [1485, 2616, 2616, 2276, -1200, 999_999] {
            h.add(v);
        }
        assert_eq!(h.counts, [0, 2, 3, 1]);
        let s = h.stats();
        assert_eq!(s.samples, 6);
        assert!((s.average - 11.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn stats_of_the_vector_min_histogram() {
        // Xenomai vector: min histogram 1×[1,2) and 3×[2,3) → HSS 4, 1.750, 0.500.
        let h = LinearHistogram {
            counts: vec![0, 1, 3],
            ..LinearHistogram::new(crate::model::vocab::INTERVAL_MIN, 1000, 0)
        };
        let s = h.stats();
        assert_eq!(s.samples, 4);
        assert!((s.average - 1.75).abs() < 1e-12);
        assert!((s.stddev - 0.5).abs() < 1e-12);
    }
}
