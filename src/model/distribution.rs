//! Latency distributions as HDR histograms, serialized compactly for JSON and stores.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::io::Read;

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

    /// HdrHistogram's `lowest_equivalent`, without a counts array: a value's bucket keeps its
    /// top `sub_bucket_bits` bits, and no fewer than the first bucket's.
    fn lowest_equivalent(self, value: u64) -> u64 {
        let length = (64 - value.leading_zeros()).max(self.mask_bits);
        let shift = length - self.sub_bucket_bits;
        (value >> shift) << shift
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

    /// Pools `other`'s samples into this distribution, in this one's buckets.
    pub fn add(&mut self, other: &Distribution) {
        let mut pooled = Recorder::like(self);
        for &(value, count) in self.counts.iter().chain(&other.counts) {
            pooled.record_n(value, count);
        }
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
        Recorder {
            buckets: Buckets::new(digits, 1),
            counts: Default::default(),
        }
    }

    fn like(d: &Distribution) -> Recorder {
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
        Distribution {
            buckets: self.buckets,
            counts: self.counts.into_iter().collect(),
        }
    }
}

impl Serialize for Distribution {
    /// HdrHistogram's V2 compressed encoding in base64, as its other implementations exchange it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.histogram(), &mut bytes)
            .map_err(|e| serde::ser::Error::custom(format!("histogram encoding: {e:?}")))?;
        serializer.serialize_str(&STANDARD.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        decode_histogram(&text)
            .map(|h| Distribution::of(&h))
            .map_err(serde::de::Error::custom)
    }
}

/// A histogram in HdrHistogram's exchange form: its V2 encoding, compressed or not, in base64
/// (as latkit's JSON and HdrHistogram's interval logs carry it).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD
        .decode(text.as_bytes())
        .map_err(|e| format!("histogram base64: {e}"))?;
    decode(&bytes)
}

// HdrHistogram's V2 cookies, with the word-size bits (0x10) its Rust encoder sets.
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// V2 header: cookie, payload length, normalizing offset, digits, low, high, ratio.
const V2_HEADER: usize = 40;
/// HdrHistogram's finest: 5 digits (latkit writes 3). Decoding one sizes a counts array to
/// its range for a moment (tens of MB at most); what is kept is sparse.
const MAX_DIGITS: u32 = 5;
/// The largest decompressed encoding read: a fully populated 4-digit histogram of 64-bit
/// values is a few megabytes, so anything larger is a decompression bomb.
const MAX_PLAIN: usize = 16 << 20;

/// Decodes a V2 histogram, compressed or not, trusting no length or range in its header:
/// memory follows the bytes really present, never what the header claims.
fn decode(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let word = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let plain = match word(bytes, 0) {
        Some(V2_COOKIE) => bytes.to_vec(),
        Some(V2_COMPRESSED_COOKIE) => {
            let len = word(bytes, 4).ok_or("histogram truncated")? as usize;
            let compressed = bytes.get(8..).ok_or("histogram truncated")?;
            let compressed = &compressed[..len.min(compressed.len())];
            let limit = MAX_PLAIN as u64;
            let mut plain = Vec::new();
            flate2::read::ZlibDecoder::new(compressed)
                .take(limit + 1)
                .read_to_end(&mut plain)
                .map_err(|e| format!("histogram decompression: {e}"))?;
            if plain.len() as u64 > limit {
                return Err("histogram payload is larger than any latkit reads".into());
            }
            plain
        }
        _ => return Err("not an HdrHistogram V2 encoding".into()),
    };
    let claimed = word(&plain, 4).ok_or("histogram truncated")? as usize;
    let digits = word(&plain, 12).ok_or("histogram truncated")?;
    if claimed > plain.len().saturating_sub(V2_HEADER) {
        return Err(format!(
            "histogram header claims {claimed} payload bytes but {} follow",
            plain.len().saturating_sub(V2_HEADER)
        ));
    }
    if digits > MAX_DIGITS {
        return Err(format!(
            "histogram keeps {digits} significant digits; latkit reads at most {MAX_DIGITS}"
        ));
    }
    Deserializer::new()
        .deserialize(&mut plain.as_slice())
        .map_err(|e| format!("histogram decoding: {e:?}"))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn a_header_that_lies_about_its_size_is_refused_without_allocating_it() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record(1000).unwrap();
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        bytes[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let err = decode(&bytes).unwrap_err();
        assert!(err.contains("claims 4294967295 payload bytes"), "{err}");
        assert!(decode(&[0x1c, 0x84, 0x93, 0x14, 0xff, 0xff]).is_err());
        assert!(decode(&[]).is_err());
    }
}
