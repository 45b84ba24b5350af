//! Latency distributions as HDR histograms, serialized compactly for JSON and stores.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

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
        let bytes = STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("histogram base64: {e}")))?;
        Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map(Distribution)
            .map_err(|e| serde::de::Error::custom(format!("histogram decoding: {e:?}")))
    }
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
}
