//! Latency distributions as HDR histograms, kept sparse (their exchange form: `v2_encoding`).

use hdrhistogram::Histogram;

/// An HDR histogram of samples in a metric's base unit, kept sparse: only the buckets that
/// hold samples take memory, so a distribution costs what it holds, never the range its
/// source declared. Queries run on [`Distribution::histogram`], the HdrHistogram it stands
/// for, built when asked for and dropped after.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    buckets: Buckets,
    /// `(lowest equivalent value, count)` of every bucket holding samples, ascending.
    counts: Vec<(u64, u64)>,
}

/// The bucket layout of an HdrHistogram: its significant digits and its smallest discernible
/// value. Two values share a bucket when they have the same lowest equivalent value.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Buckets {
    digits: u8,
    lowest: u64,
    /// Bits a bucket keeps of a value: `ceil(log2(2·10^digits))`, worked out once, not per
    /// sample recorded.
    sub_bucket_bits: u32,
    /// The first bucket's span in bits: the unit's bits and the sub-bucket bits.
    mask_bits: u32,
}

impl Buckets {
    fn new(digits: u8, lowest: u64) -> Buckets {
        let sub_bucket_bits = (2.0 * 10f64.powi(i32::from(digits))).log2().ceil() as u32;
        let unit_bits = 63 - lowest.max(1).leading_zeros();
        Buckets {
            digits,
            lowest,
            sub_bucket_bits,
            mask_bits: unit_bits + sub_bucket_bits,
        }
    }

    fn of(h: &Histogram<u64>) -> Buckets {
        Buckets::new(h.sigfig(), h.low())
    }

    /// An empty, auto-resizing histogram of this layout: its counts cover what is recorded.
    fn histogram(self) -> Histogram<u64> {
        let mut h =
            Histogram::new_with_bounds(self.lowest, self.lowest.saturating_mul(2), self.digits)
                .expect("the layout of a histogram that existed");
        h.auto(true);
        h
    }

    /// Bits of a value below its bucket's: a value's bucket keeps its top `sub_bucket_bits`
    /// bits, and no fewer than the first bucket's.
    fn shift(self, value: u64) -> u32 {
        (64 - value.leading_zeros()).max(self.mask_bits) - self.sub_bucket_bits
    }

    /// HdrHistogram's `lowest_equivalent`, without a counts array.
    fn lowest_equivalent(self, value: u64) -> u64 {
        let shift = self.shift(value);
        (value >> shift) << shift
    }

    /// HdrHistogram's `highest_equivalent`: the last value of `value`'s bucket.
    fn highest_equivalent(self, value: u64) -> u64 {
        if value == u64::MAX {
            return u64::MAX;
        }
        self.lowest_equivalent(value)
            .saturating_add(1 << self.shift(value))
            - 1
    }

    /// HdrHistogram's `median_equivalent`: the middle of `value`'s bucket, rounded up.
    fn median_equivalent(self, value: u64) -> u64 {
        self.lowest_equivalent(value) + ((1u64 << self.shift(value)) >> 1)
    }
}

impl Distribution {
    /// The buckets of `h` that hold samples.
    pub fn of(h: &Histogram<u64>) -> Distribution {
        let mut recorder = Recorder::like_histogram(h);
        recorder.add_histogram(h);
        recorder.finish()
    }

    /// The HdrHistogram these buckets stand for, sized to its largest value.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = self.buckets.histogram();
        // Largest first: the counts grow once, to cover it. Past what a histogram can grow
        // to (2^63), values count at its top, as HdrHistogram's saturating record does.
        for &(value, count) in self.counts.iter().rev() {
            if h.record_n(value, count).is_err() {
                h.saturating_record_n(value, count);
            }
        }
        h
    }

    /// How many samples it holds.
    pub fn len(&self) -> u64 {
        self.counts
            .iter()
            .fold(0, |sum, (_, n)| sum.saturating_add(*n))
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    // HdrHistogram's figures, worked out on the buckets held: the histogram they stand for
    // walks its whole counts array for each (millions of slots for a wide 5-digit one).

    /// HdrHistogram's `value_at_quantile`: the last value of the bucket where the count
    /// reaches `quantile` of the samples (its first value for quantile 0).
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        let quantile = if quantile > 1.0 { 1.0 } else { quantile };
        let target = ((quantile * self.len() as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for &(value, count) in &self.counts {
            seen = seen.saturating_add(count);
            if seen >= target {
                return if quantile == 0.0 {
                    value
                } else {
                    self.buckets.highest_equivalent(value)
                };
            }
        }
        0
    }

    /// HdrHistogram's `min`: the first value of the lowest bucket held; 0 when empty.
    pub fn min(&self) -> u64 {
        self.counts.first().map_or(0, |&(value, _)| value)
    }

    /// HdrHistogram's `max`: the last value of the highest bucket held; 0 when empty.
    pub fn max(&self) -> u64 {
        match self.counts.last() {
            Some(&(value, _)) if value > 0 => self.buckets.highest_equivalent(value),
            _ => 0,
        }
    }

    /// HdrHistogram's `mean`: each bucket counts at its middle, summed in its order.
    pub fn mean(&self) -> f64 {
        let total = self.len() as f64;
        self.counts.iter().fold(0.0, |sum, &(value, count)| {
            sum + self.buckets.median_equivalent(value) as f64 * count as f64 / total
        })
    }

    /// HdrHistogram's `stdev`: of the buckets' middles, over every sample.
    pub fn stdev(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let mean = self.mean();
        let squares = self.counts.iter().fold(0.0, |sum, &(value, count)| {
            let deviation = self.buckets.median_equivalent(value) as f64 - mean;
            sum + (deviation * deviation) * count as f64
        });
        (squares / self.len() as f64).sqrt()
    }

    /// The first value of `value`'s bucket.
    pub fn lowest_equivalent(&self, value: u64) -> u64 {
        self.buckets.lowest_equivalent(value)
    }

    /// The last value of `value`'s bucket.
    pub fn highest_equivalent(&self, value: u64) -> u64 {
        self.buckets.highest_equivalent(value)
    }

    /// Pools `other`'s samples into this distribution, in this one's buckets.
    pub fn add(&mut self, other: &Distribution) {
        let mut pooled = Recorder::like(self);
        pooled.add(self);
        pooled.add(other);
        *self = pooled.finish();
    }
}

impl From<Histogram<u64>> for Distribution {
    fn from(h: Histogram<u64>) -> Distribution {
        Distribution::of(&h)
    }
}

/// Records samples into a [`Distribution`] as an HdrHistogram of the same layout would count
/// them, with memory for the buckets used only.
pub struct Recorder {
    buckets: Buckets,
    counts: std::collections::BTreeMap<u64, u64>,
}

impl Recorder {
    /// A recorder of `digits` significant digits for values from 1 up.
    pub fn new(digits: u8) -> Recorder {
        Recorder::with_lowest(digits, 1)
    }

    /// A recorder of `digits` significant digits for values from `lowest` up.
    pub fn with_lowest(digits: u8, lowest: u64) -> Recorder {
        Recorder {
            buckets: Buckets::new(digits, lowest),
            counts: Default::default(),
        }
    }

    /// A recorder in the buckets of `d`.
    pub fn like(d: &Distribution) -> Recorder {
        Recorder {
            buckets: d.buckets,
            counts: Default::default(),
        }
    }

    /// A recorder in the buckets of `h`.
    pub fn like_histogram(h: &Histogram<u64>) -> Recorder {
        Recorder {
            buckets: Buckets::of(h),
            counts: Default::default(),
        }
    }

    /// Records every sample of `h`, at the lowest value of its bucket there.
    pub fn add_histogram(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            self.record_n(
                h.lowest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            );
        }
    }

    /// Records every sample of `d`, at the lowest value of its bucket there.
    pub fn add(&mut self, d: &Distribution) {
        for &(value, count) in &d.counts {
            self.record_n(value, count);
        }
    }

    pub fn record_n(&mut self, value: u64, count: u64) {
        if count > 0 {
            let slot = self
                .counts
                .entry(self.buckets.lowest_equivalent(value))
                .or_default();
            *slot = slot.saturating_add(count);
        }
    }

    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn finish(self) -> Distribution {
        let held = Distribution {
            buckets: self.buckets,
            counts: self.counts.into_iter().collect(),
        };
        // Past half of u64 HdrHistogram's counts stop growing and values count at its top:
        // the buckets become those it keeps, so that every figure is the one it gives.
        match held.counts.last() {
            Some(&(largest, _)) if largest > u64::MAX / 2 => {
                let mut recorder = Recorder::like(&held);
                recorder.add_histogram(&held.histogram());
                Distribution {
                    buckets: recorder.buckets,
                    counts: recorder.counts.into_iter().collect(),
                }
            }
            _ => held,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let mut h = Histogram::<u64>::new(3).expect("3 significant digits is valid");
        for v in [1_000u64, 2_000, 2_000, 90_000] {
            h.record(v)
                .expect("auto-resizing histogram accepts any value");
        }
        let json = serde_json::to_string(&Distribution::of(&h)).unwrap();
        let back = serde_json::from_str::<Distribution>(&json)
            .unwrap()
            .histogram();
        assert_eq!(back.len(), 4);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert_eq!(back.max(), h.max());
    }

    proptest::proptest! {
        /// The recorder's bucket arithmetic is HdrHistogram's, for every layout latkit meets.
        #[test]
        fn buckets_are_hdrhistograms(digits in 0u8..=5, lowest_bits in 0u32..20, value: u64) {
            let lowest = 1u64 << lowest_bits;
            let h = Histogram::<u64>::new_with_bounds(lowest, lowest * 2, digits).unwrap();
            let buckets = Buckets::new(digits, lowest);
            proptest::prop_assert_eq!(buckets.lowest_equivalent(value), h.lowest_equivalent(value));
        }

        /// A sparse distribution answers as the histogram it was made from, and pools as
        /// HdrHistogram's `add` does.
        #[test]
        fn sparse_answers_as_the_histogram(
            a in proptest::collection::vec(0u64..u64::MAX / 4, 1..200),
            b in proptest::collection::vec(0u64..1 << 40, 0..200),
        ) {
            let dense = |values: &[u64]| {
                let mut h = Histogram::<u64>::new(3).unwrap();
                values.iter().for_each(|&v| h.record(v).unwrap());
                h
            };
            let (mut ha, hb) = (dense(&a), dense(&b));
            let mut sparse = Distribution::of(&ha);
            let back = sparse.histogram();
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                proptest::prop_assert_eq!(back.value_at_quantile(q), ha.value_at_quantile(q));
            }
            proptest::prop_assert_eq!((back.min(), back.max(), back.len()), (ha.min(), ha.max(), ha.len()));
            proptest::prop_assert_eq!(back.mean(), ha.mean());
            sparse.add(&Distribution::of(&hb));
            ha.add(&hb).unwrap();
            proptest::prop_assert_eq!(sparse, Distribution::of(&ha));
        }
    }

    /// A histogram layout (digits, lowest value's bits) and samples across all of u64.
    pub(in crate::model) fn layout_and_samples()
    -> impl proptest::strategy::Strategy<Value = (u8, u32, Vec<u64>)> {
        use proptest::prelude::*;
        (
            0u8..=3,
            0u32..12,
            proptest::collection::vec(prop_oneof![0u64..5_000, 0u64..1 << 40, any::<u64>()], 0..60),
        )
    }

    proptest::proptest! {
        /// Figures worked out on the buckets held are, to the bit, those of the HdrHistogram
        /// they stand for, over the whole range of u64 (past half of it too).
        #[test]
        fn figures_are_the_histograms(
            (digits, lowest_bits, values) in layout_and_samples(),
            counts in proptest::collection::vec(1u64..1_000, 60),
            probe: u64,
        ) {
            let mut recorder = Recorder {
                buckets: Buckets::new(digits, 1 << lowest_bits),
                counts: Default::default(),
            };
            for (value, count) in values.iter().zip(&counts) {
                recorder.record_n(*value, *count);
            }
            let sparse = recorder.finish();
            let dense = sparse.histogram();
            for q in [0.0, 1e-9, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0, 1.5, -1.0, f64::NAN] {
                proptest::prop_assert_eq!(sparse.value_at_quantile(q), dense.value_at_quantile(q), "q {}", q);
            }
            proptest::prop_assert_eq!(
                (sparse.min(), sparse.max(), sparse.len()),
                (dense.min(), dense.max(), dense.len())
            );
            proptest::prop_assert_eq!(sparse.mean().to_bits(), dense.mean().to_bits());
            proptest::prop_assert_eq!(sparse.stdev().to_bits(), dense.stdev().to_bits());
            proptest::prop_assert_eq!(sparse.lowest_equivalent(probe), dense.lowest_equivalent(probe));
            proptest::prop_assert_eq!(sparse.highest_equivalent(probe), dense.highest_equivalent(probe));
            proptest::prop_assert_eq!(&Distribution::of(&dense), &sparse);
        }

    }

    #[test]
    fn memory_follows_the_buckets_used_not_the_range() {
        let mut r = Recorder::new(3);
        r.record(1 << 62);
        r.record(1);
        let d = r.finish();
        assert_eq!(d.counts.len(), 2);
        assert_eq!(
            d.histogram().max(),
            Histogram::<u64>::new(3)
                .unwrap()
                .highest_equivalent(1 << 62)
        );
    }
}
