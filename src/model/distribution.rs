//! Latency distributions as HDR histograms, serialized compactly for JSON and stores.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// An HDR histogram of samples in a metric's base unit.
#[derive(Clone, Debug)]
pub struct Distribution(pub Histogram<u64>);

impl Serialize for Distribution {
    /// HdrHistogram's V2 compressed encoding in base64, as its other implementations exchange it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .map_err(|e| serde::ser::Error::custom(format!("histogram encoding: {e:?}")))?;
        serializer.serialize_str(&STANDARD.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        decode_histogram(&text)
            .map(Distribution)
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
/// Finer histograms need counts arrays of many megabytes; latkit writes 3 digits.
const MAX_DIGITS: u32 = 4;
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
        let json = serde_json::to_string(&Distribution(h.clone())).unwrap();
        let back: Distribution = serde_json::from_str(&json).unwrap();
        assert_eq!(back.0.len(), 4);
        assert_eq!(back.0.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert_eq!(back.0.max(), h.max());
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
