//! Lists of numbers written on one line even inside pretty-printed JSON: a run can hold
//! millions of repetitions, and one number per line would multiply the output and its writing
//! time. Writing the numbers is most of the time a large report takes, so a long list is cut
//! into pieces written on every core at once and joined in order. Each list is written when
//! the document reaches it, by nothing but its own numbers: no state outlives the call.

use serde::Serialize;
use serde_json::value::RawValue;

/// Numbers each core is given at least: fewer are written on the calling thread alone, as
/// starting a thread costs about what writing a few thousand numbers does.
const PER_CORE: usize = 64 << 10;

/// `serialize_with` for a list of counts: on one line.
pub(super) fn inline_counts<S: serde::Serializer>(counts: &[u64], s: S) -> Result<S::Ok, S::Error> {
    write_list(counts).serialize(s)
}

/// `serialize_with` for a list of values: on one line.
pub(super) fn inline_values<S: serde::Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
    write_list(values).serialize(s)
}

/// A number as serde_json writes it, into a buffer kept between numbers.
trait Number: Copy + Sync {
    type Buffer: Default;
    fn write(self, buffer: &mut Self::Buffer, json: &mut String);
}

impl Number for f64 {
    type Buffer = zmij::Buffer;
    /// The shortest decimal that reads back as the same `f64`, and `null` for what JSON has no
    /// number for.
    fn write(self, buffer: &mut zmij::Buffer, json: &mut String) {
        json.push_str(if self.is_finite() {
            buffer.format_finite(self)
        } else {
            "null"
        });
    }
}

impl Number for u64 {
    type Buffer = itoa::Buffer;
    fn write(self, buffer: &mut itoa::Buffer, json: &mut String) {
        json.push_str(buffer.format(self));
    }
}

/// `numbers` as serde_json writes a list, on one line; a long list is cut into pieces written
/// on every core at once and joined in order.
fn write_list<N: Number>(numbers: &[N]) -> Box<RawValue> {
    // Only a list long enough to be cut asks how many cores there are: the answer reads
    // three cgroup files each time, and a report can hold a few lists for each of 100,000s
    // of benchmarks (`parse --format json` of 100,000 pytest benchmarks: 8 s of system time).
    let pieces = match numbers.len() / PER_CORE {
        0 | 1 => 1,
        most => most.min(std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let mut json = String::with_capacity(numbers.len() * 12 + 2);
    json.push('[');
    if pieces == 1 {
        write_numbers(numbers, &mut json);
    } else {
        let mut chunks = numbers.chunks(numbers.len().div_ceil(pieces));
        let first = chunks.next().unwrap_or_default();
        std::thread::scope(|scope| {
            let others: Vec<_> = chunks
                .map(|chunk| {
                    scope.spawn(move || {
                        let mut text = String::with_capacity(chunk.len() * 12);
                        write_numbers(chunk, &mut text);
                        text
                    })
                })
                .collect();
            write_numbers(first, &mut json);
            for other in others {
                json.push(',');
                // Writing numbers into a string has nothing to panic on.
                json.push_str(&other.join().expect("a number writer panicked"));
            }
        });
    }
    json.push(']');
    // SAFETY: `[`, numbers as serde_json writes them or `null` separated by commas, and `]`:
    // one well-formed JSON value with no whitespace around it.
    unsafe { RawValue::from_string_unchecked(json) }
}

/// `numbers` separated by commas, written number by number into one buffer, which costs about
/// half of serde's element-by-element path.
fn write_numbers<N: Number>(numbers: &[N], json: &mut String) {
    let mut buffer = N::Buffer::default();
    for (i, &n) in numbers.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        n.write(&mut buffer, json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_serde_json_writes_them() {
        let tricky = [
            0.0,
            -0.0,
            1.0,
            -232.0,
            0.1 + 0.2,
            1e15,
            1e16,
            1e21,
            1e22,
            123456789012345680.0,
            1e-7,
            5e-324,
            2.2250738585072014e-308,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        assert_eq!(
            write_list(&tricky).get(),
            serde_json::to_string(&tricky[..]).unwrap()
        );
        assert_eq!(write_list::<f64>(&[]).get(), "[]");
    }

    #[test]
    fn long_lists_written_in_pieces_are_joined_in_order() {
        // Lengths around every piece boundary, with the tricky numbers at the seams.
        for len in [
            PER_CORE * 2 - 1,
            PER_CORE * 2,
            PER_CORE * 2 + 1,
            PER_CORE * 7 + 3,
        ] {
            let values: Vec<f64> = (0..len)
                .map(|i| match i % 5 {
                    0 => i as f64 / 3.0,
                    1 => -(i as f64),
                    2 => f64::NAN,
                    3 => 1e22 * i as f64,
                    _ => 0.0,
                })
                .collect();
            assert_eq!(
                write_list(&values).get(),
                serde_json::to_string(&values).unwrap(),
                "{len} numbers"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_numbers_are_written_as_serde_json_writes_them(
            bits in proptest::collection::vec(proptest::num::u64::ANY, 0..64),
        ) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
            let written = write_list(&values);
            proptest::prop_assert_eq!(written.get(), serde_json::to_string(&values).unwrap());
            let back: Vec<Option<f64>> = serde_json::from_str(written.get()).unwrap();
            let finite = values.iter().map(|v| v.is_finite().then_some(*v));
            proptest::prop_assert!(back.into_iter().zip(finite).all(|(a, b)| a == b));
        }
    }
}
