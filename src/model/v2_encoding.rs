//! HdrHistogram's V2 exchange encoding of a distribution (as latkit's JSON and stores carry
//! it), read straight into the buckets it holds.

use super::Distribution;
use super::distribution::Recorder;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::io::Read;

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
        decode_histogram(&text).map_err(serde::de::Error::custom)
    }
}

/// A histogram in HdrHistogram's exchange form: its V2 encoding, compressed or not, in base64
/// (as latkit's JSON and HdrHistogram's interval logs carry it).
pub fn decode_histogram(text: &str) -> Result<Distribution, String> {
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
/// HdrHistogram's finest: 5 digits (latkit writes 3).
const MAX_DIGITS: u32 = 5;
/// The largest decompressed encoding read: a fully populated 4-digit histogram of 64-bit
/// values is a few megabytes, so anything larger is a decompression bomb.
const MAX_PLAIN: usize = 16 << 20;

/// Decodes a V2 histogram, compressed or not, straight into the buckets it holds, as
/// HdrHistogram's decoder reads it: trusting no length or range in its header, memory
/// follows the counts really present (HdrHistogram's own decoder first allocates the whole
/// range the header declares).
fn decode(bytes: &[u8]) -> Result<Distribution, String> {
    let plain = match word(bytes, 0) {
        Some(V2_COOKIE) => bytes,
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
            if word(&plain, 0) != Some(V2_COOKIE) {
                return Err(
                    "histogram decoding: the compressed encoding holds no V2 histogram".into(),
                );
            }
            return decode_plain(&plain);
        }
        _ => return Err("not an HdrHistogram V2 encoding".into()),
    };
    decode_plain(plain)
}

/// A big-endian u32 at `at`, if the bytes reach it.
fn word(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// An uncompressed V2 encoding: its header, then ZigZag LEB128 numbers, each a count of the
/// next slot or (negative) a run of empty slots.
fn decode_plain(plain: &[u8]) -> Result<Distribution, String> {
    let header = plain.get(..V2_HEADER).ok_or("histogram truncated")?;
    let long = |at: usize| u64::from_be_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    let claimed = word(header, 4).expect("in the header") as usize;
    let offset = word(header, 8).expect("in the header");
    let digits = word(header, 12).expect("in the header");
    let (low, high, ratio) = (long(16), long(24), f64::from_bits(long(32)));
    let payload = &plain[V2_HEADER..];
    if claimed > payload.len() {
        return Err(format!(
            "histogram header claims {claimed} payload bytes but {} follow",
            payload.len()
        ));
    }
    if digits > MAX_DIGITS {
        return Err(format!(
            "histogram keeps {digits} significant digits; latkit reads at most {MAX_DIGITS}"
        ));
    }
    if offset != 0 || ratio != 1.0 {
        return Err(
            "histogram decoding: a normalizing offset or a value ratio latkit does not read".into(),
        );
    }
    let slots = Slots::new(low, high, digits as u8)
        .ok_or_else(|| format!("histogram decoding: no histogram has lowest value {low}, highest {high} and {digits} digits"))?;
    let mut recorder = Recorder::with_lowest(digits as u8, low);
    let mut payload = &payload[..claimed];
    let mut slot = 0u64;
    while !payload.is_empty() {
        let (encoded, used) =
            leb128(payload).ok_or("histogram decoding: the counts end inside a number")?;
        payload = &payload[used..];
        let number = ((encoded >> 1) as i64) ^ -((encoded & 1) as i64);
        if number < 0 {
            slot = slot.saturating_add(number.unsigned_abs());
            continue;
        }
        if number > 0 {
            let value = slots
                .value(slot)
                .ok_or("histogram decoding: counts run past the highest value its header gives")?;
            recorder.record_n(value, number as u64);
        }
        slot += 1;
    }
    Ok(recorder.finish())
}

/// A LEB128 number of at most nine bytes, the ninth kept whole, and the bytes it took.
fn leb128(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (at, &byte) in bytes.iter().enumerate().take(9) {
        if at == 8 {
            return Some((value | u64::from(byte) << 56, 9));
        }
        value |= u64::from(byte & 0x7f) << (7 * at);
        if byte & 0x80 == 0 {
            return Some((value, at + 1));
        }
    }
    None
}

/// The slots of an HdrHistogram's counts array, as `Histogram::new_with_bounds` lays them
/// out, without the array.
struct Slots {
    unit_bits: u32,
    half_count_bits: u32,
    len: u64,
}

impl Slots {
    /// `None` for bounds HdrHistogram refuses.
    fn new(low: u64, high: u64, digits: u8) -> Option<Slots> {
        if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || digits > 5 {
            return None;
        }
        let unit_bits = (low as f64).log2().floor() as u32;
        let count_bits = (2.0 * 10f64.powi(i32::from(digits))).log2().ceil() as u32;
        if unit_bits + count_bits > 63 {
            return None;
        }
        // Buckets doubling from the first's range until one holds `high`.
        let mut untrackable = 1u64 << (unit_bits + count_bits);
        let mut buckets = 1u64;
        while untrackable <= high {
            if untrackable > u64::MAX / 2 {
                buckets += 1;
                break;
            }
            untrackable <<= 1;
            buckets += 1;
        }
        let half_count_bits = count_bits - 1;
        Some(Slots {
            unit_bits,
            half_count_bits,
            len: (buckets + 1) << half_count_bits,
        })
    }

    /// The lowest value of slot `index`; `None` past the array.
    fn value(&self, index: u64) -> Option<u64> {
        if index >= self.len {
            return None;
        }
        let half_count = 1u64 << self.half_count_bits;
        let (bucket, sub_bucket) = match (index >> self.half_count_bits).checked_sub(1) {
            Some(bucket) => (bucket, (index & (half_count - 1)) + half_count),
            None => (0, index & (half_count - 1)),
        };
        Some(sub_bucket << (bucket + u64::from(self.unit_bits)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::distribution::tests::layout_and_samples;
    use hdrhistogram::Histogram;

    /// What HdrHistogram's own decoder makes of `bytes`: the buckets held and its max.
    fn decoded_by_hdrhistogram(bytes: &[u8]) -> Option<(Distribution, u64)> {
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .ok()?;
        Some((Distribution::of(&h), h.max()))
    }

    proptest::proptest! {
        /// The sparse decoder reads every V2 encoding, compressed or not, to the buckets and
        /// max HdrHistogram's decoder gives, and refuses what it refuses; with a byte of the
        /// header or the counts changed, too.
        #[test]
        fn decodes_as_hdrhistogram(
            (digits, lowest_bits, values) in layout_and_samples(),
            compressed: bool,
            flip in proptest::option::of((0usize..400, 0u8..=255)),
        ) {
            let lowest = 1u64 << lowest_bits;
            let mut h = Histogram::<u64>::new_with_bounds(lowest, lowest * 2, digits).unwrap();
            h.auto(true);
            values.iter().for_each(|&v| h.saturating_record(v));
            let mut bytes = Vec::new();
            if compressed {
                V2DeflateSerializer::new().serialize(&h, &mut bytes).unwrap();
            } else {
                hdrhistogram::serialization::V2Serializer::new().serialize(&h, &mut bytes).unwrap();
            }
            // A changed byte in the plain encoding (past its cookie); a compressed one with a
            // changed byte fails zlib's checksum, which latkit checks and HdrHistogram does not.
            if let (Some((at, byte)), false) = (flip, compressed) {
                let at = 4 + at % (bytes.len() - 4);
                bytes[at] = byte;
            }
            let ours = decode(&bytes).ok();
            // HdrHistogram's decoder allocates the whole range a header declares (hundreds of
            // megabytes for a changed one): it is asked up to a million slots.
            let long = |at: usize| u64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
            let declared = word(&bytes, 12)
                .and_then(|digits| Slots::new(long(16), long(24), u8::try_from(digits).ok()?));
            if !compressed && declared.is_some_and(|slots| slots.len > 1 << 20) {
                return Ok(());
            }
            let theirs = decoded_by_hdrhistogram(&bytes);
            proptest::prop_assert_eq!(ours.is_some(), theirs.is_some());
            if let (Some(ours), Some((theirs, max))) = (ours, theirs) {
                let our_max = match ours.is_empty() {
                    true => 0,
                    false => ours.highest_equivalent(ours.max()),
                };
                proptest::prop_assert_eq!(our_max, max);
                proptest::prop_assert_eq!(ours, theirs);
            }
        }
    }

    /// A run of empty slots as long as an i64 allows: HdrHistogram's decoder negated it and
    /// panicked on the overflow (latkit exited 101 on a 58-byte interval log line).
    #[test]
    fn the_longest_run_of_empty_slots_is_read_without_a_panic() {
        let mut bytes = Vec::new();
        for word in [V2_COOKIE, 9, 0, 3] {
            bytes.extend(word.to_be_bytes());
        }
        bytes.extend(1u64.to_be_bytes());
        bytes.extend(2u64.to_be_bytes());
        bytes.extend(1f64.to_be_bytes());
        // ZigZag's encoding of i64::MIN is u64::MAX: nine bytes of LEB128.
        bytes.extend([0xff; 9]);
        let read = decode(&bytes).unwrap();
        assert!(read.is_empty());
        bytes.extend([0x02]);
        bytes[4..8].copy_from_slice(&10u32.to_be_bytes());
        let err = decode(&bytes).unwrap_err();
        assert!(err.contains("past the highest value"), "{err}");
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
