//! Helpers shared by the readers of timer-tool output.

use super::builder::RunBuilder;
use crate::model::{LinearHistogram, Metric, Note, TimerInfo};

/// What a reader of timer-tool output yields.
pub struct TimerOutput {
    pub builder: RunBuilder,
    pub timer: TimerInfo,
    pub notes: Vec<Note>,
    pub malformed: u64,
}
use hdrhistogram::Histogram;

/// `"1.485"` µs (as Xenomai and cyclictest print) → 1485 ns.
pub fn us_to_ns(text: &str) -> Option<i64> {
    let us: f64 = text.trim().parse().ok()?;
    us.is_finite().then(|| (us * 1000.0).round() as i64)
}

/// A `latency` metric whose distribution is rebuilt from fixed buckets: each bucket's samples
/// count at its lower edge, and samples past the last bucket at `overflow_at_ns` (the tool's
/// reported maximum), so tail percentiles err high rather than low.
pub fn histogram_distribution(h: &LinearHistogram, overflow_at_ns: Option<u64>) -> Option<Metric> {
    let total: u64 = h.counts.iter().sum::<u64>() + h.overflow;
    if total == 0 {
        return None;
    }
    let mut hdr = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).ok()?;
    for (i, &n) in h.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        hdr.saturating_record_n(i as u64 * h.bucket_ns, n);
    }
    if h.overflow > 0 {
        let at = overflow_at_ns.unwrap_or(h.counts.len() as u64 * h.bucket_ns);
        hdr.saturating_record_n(at, h.overflow);
    }
    Some(Metric::time_distribution("latency", hdr))
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
        let hdr = &m.histogram.unwrap().0;
        assert_eq!(hdr.len(), 5);
        assert_eq!(hdr.value_at_quantile(0.5), 2000);
        assert!(hdr.max() >= 8_068_000 && hdr.max() < 8_080_000);
    }
}
