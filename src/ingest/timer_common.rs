//! Helpers shared by the readers of timer-tool output.

use super::{Input, InputFormat, Named, Parsed};
use crate::error::{Error, Result};
use crate::model::vocab;
use crate::model::{Environment, LinearHistogram, Metric, Recorder};
use std::collections::BTreeMap;

/// The most buckets a timer histogram read from input may have (100 ms in 1 µs buckets):
/// beyond it a bucket number is an error, not an allocation.
pub const MAX_BUCKETS: usize = 100_000;
/// The most samples one histogram read from input may count: every count stays exact in an
/// f64 and every sum fits the HDR encoding.
pub const MAX_SAMPLES: u64 = 1 << 53;
/// The longest sampling period a timer tool's output may state (1 s).
pub const MAX_PERIOD_US: u64 = 1_000_000;

/// Bucket counts as a reader meets them, in any order, bounded in index and total.
#[derive(Default)]
pub struct BucketCounts {
    counts: BTreeMap<usize, u64>,
    total: u64,
}

impl BucketCounts {
    pub fn add(&mut self, index: usize, count: u64) -> std::result::Result<(), String> {
        if index >= MAX_BUCKETS {
            return Err(format!(
                "bucket {index} is beyond the {MAX_BUCKETS} buckets latkit reads"
            ));
        }
        match self.total.checked_add(count).filter(|&t| t <= MAX_SAMPLES) {
            Some(total) => self.total = total,
            None => return Err(format!("more than {MAX_SAMPLES} samples in one histogram")),
        }
        *self.counts.entry(index).or_default() += count;
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The histogram, up to its last used bucket or `size` buckets, whichever is more.
    pub fn into_histogram_sized(self, of: &str, bucket_ns: u64, size: usize) -> LinearHistogram {
        let used = self.counts.keys().next_back().map_or(0, |&i| i + 1);
        let mut h = LinearHistogram::new(of, bucket_ns, used.max(size.min(MAX_BUCKETS)));
        for (i, n) in self.counts {
            h.counts[i] = n;
        }
        h
    }

    pub fn into_histogram(self, of: &str, bucket_ns: u64) -> LinearHistogram {
        self.into_histogram_sized(of, bucket_ns, 0)
    }
}

/// The run a timer tool's output describes; an error when it held no result at all.
pub fn timer_input(parsed: Parsed, input: &Named, format: &dyn InputFormat) -> Result<Input> {
    let measured = parsed.timer.as_ref().is_some_and(|t| t.overall.is_some());
    if !parsed.builder.has_values() && !measured {
        return Err(Error::Input(format!(
            "{}: no {} results found{}",
            input.path,
            format.name(),
            parsed
                .notes
                .first()
                .map(|n| format!(" (first problem: {n})"))
                .unwrap_or_default()
        )));
    }
    Ok(parsed.into_input(input.source(format), Environment::default()))
}

/// `"1.485"` µs (as Xenomai and cyclictest print) → 1485 ns.
pub fn us_to_ns(text: &str) -> Option<i64> {
    let us: f64 = text.trim().parse().ok()?;
    // Beyond an hour a wake-up is no latency figure but a corrupt line.
    (us.abs() <= 3.6e9).then(|| (us * 1000.0).round() as i64)
}

/// A `latency` metric whose distribution is rebuilt from fixed buckets: each bucket's samples
/// count at its lower edge, and samples past the last bucket at `overflow_at_ns` (the tool's
/// reported maximum), so tail percentiles err high rather than low.
pub fn histogram_distribution(h: &LinearHistogram, overflow_at_ns: Option<u64>) -> Option<Metric> {
    if h.counts.iter().all(|&n| n == 0) && h.overflow == 0 {
        return None;
    }
    let mut hdr = Recorder::new(3);
    for (i, &n) in h.counts.iter().enumerate() {
        hdr.record_n((i as u64).saturating_mul(h.bucket_ns), n);
    }
    let at = overflow_at_ns.unwrap_or((h.counts.len() as u64).saturating_mul(h.bucket_ns));
    hdr.record_n(at, h.overflow);
    Some(Metric::time_distribution(vocab::LATENCY, hdr.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_to_nanoseconds_exactly() {
        assert_eq!(us_to_ns("1.485"), Some(1485));
        assert_eq!(us_to_ns("  86.141"), Some(86141));
        assert_eq!(us_to_ns("-0.005"), Some(-5));
        assert_eq!(us_to_ns("8068"), Some(8_068_000));
        assert_eq!(us_to_ns("x"), None);
    }

    #[test]
    fn distribution_from_buckets_with_overflow() {
        let mut h = LinearHistogram::new("samples", 1000, 0);
        h.counts = vec![0, 0, 3, 1];
        h.overflow = 1;
        let m = histogram_distribution(&h, Some(8_068_000)).unwrap();
        let hdr = &m.histogram.unwrap().histogram();
        assert_eq!(hdr.len(), 5);
        assert_eq!(hdr.value_at_quantile(0.5), 2000);
        assert!(hdr.max() >= 8_068_000 && hdr.max() < 8_080_000);
    }
}
