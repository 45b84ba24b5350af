//! Units as values: parsed once at the edge, stored in base units, scaled only when printed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a number measures. Values of a dimension are stored in its base unit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "dimension", content = "of")]
pub enum Dimension {
    /// Base unit: nanoseconds.
    Time,
    /// Base unit: bytes.
    Bytes,
    /// Base unit: bytes per second.
    ByteRate,
    /// Base unit: events per second (ops/s, Hz).
    EventRate,
    /// Base unit: percent (0–100).
    Percent,
    /// Countable things named by the harness ("allocs", "frames"); empty for a bare number.
    Count(String),
}

/// A typed unit: a dimension, optionally "per" something (`ns/op` is time per op).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unit {
    #[serde(flatten)]
    pub dimension: Dimension,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per: Option<String>,
}

/// Whether a smaller or a larger value is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// `--better METRIC=higher|lower`: the direction of a metric whose input does not carry one
/// (a Bencher measure, a github-action-benchmark file of bigger-is-better figures).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BetterOverride {
    pub metric: String,
    pub better: Better,
}

impl std::str::FromStr for BetterOverride {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || format!("`{text}`: expected METRIC=higher or METRIC=lower");
        let (metric, direction) = text.rsplit_once('=').ok_or_else(expected)?;
        let better = match direction {
            "higher" => Better::Higher,
            "lower" => Better::Lower,
            _ => return Err(expected()),
        };
        if metric.is_empty() {
            return Err(expected());
        }
        Ok(BetterOverride {
            metric: metric.to_string(),
            better,
        })
    }
}

/// A unit as written by a harness together with the factor that converts to the base unit.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedUnit {
    pub unit: Unit,
    pub to_base: f64,
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("μs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("sec", 1e9),
];

const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

fn lookup(table: &[(&str, f64)], symbol: &str) -> Option<f64> {
    table.iter().find(|(s, _)| *s == symbol).map(|(_, f)| *f)
}

impl Unit {
    pub fn new(dimension: Dimension) -> Self {
        Unit {
            dimension,
            per: None,
        }
    }

    pub fn per(dimension: Dimension, per: &str) -> Self {
        Unit {
            dimension,
            per: Some(per.to_string()),
        }
    }

    /// Parses any unit string. Unknown units become counts of that name, so nothing is rejected;
    /// use [`Unit::parse_known`] where an unknown unit is an error.
    pub fn parse(symbol: &str) -> ParsedUnit {
        Self::parse_known(symbol).unwrap_or_else(|| {
            let (what, per) = match symbol.split_once('/') {
                Some((what, per)) => (what, Some(per.to_string())),
                None => (symbol, None),
            };
            ParsedUnit {
                unit: Unit {
                    dimension: Dimension::Count(what.to_string()),
                    per,
                },
                to_base: 1.0,
            }
        })
    }

    /// Parses a unit of a known dimension: time, bytes, byte or event rates, percent, and each of
    /// those "per" something (`ns/op`, `B/op`). Returns `None` for anything else.
    pub fn parse_known(symbol: &str) -> Option<ParsedUnit> {
        let symbol = symbol.trim();
        if symbol == "%" {
            return Some(ParsedUnit {
                unit: Unit::new(Dimension::Percent),
                to_base: 1.0,
            });
        }
        // Rates first: "MB/s" is a byte rate, not megabytes "per s".
        if let Some(bytes) = symbol.strip_suffix("/s")
            && let Some(f) = lookup(BYTE_UNITS, bytes)
        {
            return Some(ParsedUnit {
                unit: Unit::new(Dimension::ByteRate),
                to_base: f,
            });
        }
        if matches!(symbol, "ops/s" | "op/s" | "/s" | "Hz" | "1/s") {
            return Some(ParsedUnit {
                unit: Unit::new(Dimension::EventRate),
                to_base: 1.0,
            });
        }
        let (what, per) = match symbol.split_once('/') {
            Some((what, per)) if !per.is_empty() => (what, Some(per)),
            _ => (symbol, None),
        };
        let (dimension, to_base) = if let Some(f) = lookup(TIME_UNITS, what) {
            (Dimension::Time, f)
        } else if let Some(f) = lookup(BYTE_UNITS, what) {
            (Dimension::Bytes, f)
        } else {
            return None;
        };
        Some(ParsedUnit {
            unit: Unit {
                dimension,
                per: per.map(str::to_string),
            },
            to_base,
        })
    }

    /// The direction of improvement implied by the dimension (Go's convention, benchunit's too).
    pub fn better(&self) -> Better {
        match self.dimension {
            Dimension::ByteRate | Dimension::EventRate => Better::Higher,
            // Things per second (`items/s`, `frames/s`) are rates too.
            Dimension::Count(_) if matches!(self.per.as_deref(), Some("s" | "sec")) => {
                Better::Higher
            }
            _ => Better::Lower,
        }
    }

    /// Symbol of the base unit, e.g. `ns/op`, `B/s`, `allocs/op`.
    pub fn base_symbol(&self) -> String {
        let what = match &self.dimension {
            Dimension::Time => "ns",
            Dimension::Bytes => "B",
            Dimension::ByteRate => "B/s",
            Dimension::EventRate => "/s",
            Dimension::Percent => "%",
            Dimension::Count(name) => name,
        };
        self.with_per(what)
    }

    fn with_per(&self, what: &str) -> String {
        match &self.per {
            Some(per) => format!("{what}/{per}"),
            None => what.to_string(),
        }
    }

    /// Formats a base-unit value with a prefix chosen for readability. Byte sizes use binary
    /// prefixes and byte rates decimal ones, each labelled as such.
    ///
    /// ```
    /// use latkit::model::Unit;
    ///
    /// let ns_per_op = Unit::parse("ns/op").unit;
    /// assert_eq!(ns_per_op.format_scaled(10668.0), "10.67 µs/op");
    /// assert_eq!(Unit::parse("B/op").unit.format_scaled(1536.0), "1.500 KiB/op");
    /// assert_eq!(Unit::parse("MB/s").unit.format_scaled(104.9e6), "104.9 MB/s");
    /// assert_eq!(Unit::parse("items/s").unit.format_scaled(111205383.0), "111.2 M items/s");
    /// ```
    pub fn format_scaled(&self, value: f64) -> String {
        match &self.dimension {
            Dimension::Time | Dimension::Bytes | Dimension::ByteRate | Dimension::Percent => {
                let (divisor, symbol) = self.scale(value);
                join_number_and_symbol(format_significant(value / divisor, 4), &symbol)
            }
            // A rate of events or things (`items/s`) with a decimal prefix: 9.536 M items/s.
            _ if self.better() == Better::Higher => {
                let (divisor, symbol) = self.scale(value);
                join_number_and_symbol(format_significant(value / divisor, 4), &symbol)
            }
            // A whole count as counted; a fractional one (a geomean, a median of two) to four
            // significant digits like every other figure on screen.
            _ if value.fract() == 0.0 => {
                join_number_and_symbol(format_exact(value), &self.base_symbol())
            }
            _ => join_number_and_symbol(format_significant(value, 4), &self.base_symbol()),
        }
    }

    /// The divisor and symbol that make `value` readable (`(1e3, "µs/op")` for 10668 ns/op);
    /// plots scale a whole axis by its largest value this way.
    pub fn scale(&self, value: f64) -> (f64, String) {
        match &self.dimension {
            Dimension::Time => {
                let (f, s) =
                    pick_scale(value, &[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")]);
                (f, self.with_per(s))
            }
            Dimension::Bytes => {
                let (f, s) = pick_scale(
                    value,
                    &[
                        (1.0, "B"),
                        (1024.0, "KiB"),
                        (1048576.0, "MiB"),
                        (1073741824.0, "GiB"),
                    ],
                );
                (f, self.with_per(s))
            }
            Dimension::ByteRate => {
                let (f, s) = pick_scale(
                    value,
                    &[(1.0, "B/s"), (1e3, "kB/s"), (1e6, "MB/s"), (1e9, "GB/s")],
                );
                (f, s.to_string())
            }
            _ if self.better() == Better::Higher => {
                let (f, prefix) = pick_scale(
                    value,
                    &[(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")],
                );
                let base = self.base_symbol();
                let symbol = match (prefix, base.starts_with('/')) {
                    ("", _) => base,
                    (prefix, true) => format!("{prefix}{base}"),
                    (prefix, false) => format!("{prefix} {base}"),
                };
                (f, symbol)
            }
            _ => (1.0, self.base_symbol()),
        }
    }
}

fn join_number_and_symbol(number: String, symbol: &str) -> String {
    match symbol {
        "" => number,
        "%" => format!("{number}%"),
        _ => format!("{number} {symbol}"),
    }
}

/// Whether `value`, given in `symbol`, stays finite in the base unit (`1e305 s` does not fit
/// in ns). Only huge values can fail, so only they parse the unit.
pub fn fits_base_unit(value: f64, symbol: &str) -> bool {
    value.abs() < 1e290 || (value * Unit::parse(symbol).to_base).is_finite()
}

/// A number with a unit, as people write limits: `5 ms`, `500us`, `100 MB/s`, `2.5 GiB/s`,
/// `42` (unitless). Returns the value in the unit's base unit. Conversions are exact for the
/// decimal and binary prefixes: `500 us` and `0.5 ms` are both 500000 ns.
///
/// ```
/// use latkit::model::{Dimension, parse_quantity};
///
/// let (ns, unit) = parse_quantity("500 us").unwrap();
/// assert_eq!(ns, 500_000.0);
/// assert_eq!(unit.dimension, Dimension::Time);
/// assert_eq!(parse_quantity("0.5 ms").unwrap().0, ns);
/// // MB is 10^6 bytes, MiB is 2^20: they are never confused.
/// assert_eq!(parse_quantity("100 MB/s").unwrap().0, 100e6);
/// assert_eq!(parse_quantity("100 MiB/s").unwrap().0, 104_857_600.0);
/// assert!(parse_quantity("5 parsecs").is_none());
/// ```
pub fn parse_quantity(text: &str) -> Option<(f64, Unit)> {
    let text = text.trim();
    let split = number_prefix(text);
    let value: f64 = text[..split].parse().ok()?;
    let symbol = text[split..].trim();
    // `1e310` parses as infinity, and `1e300 s` overflows in ns: neither is a quantity.
    if symbol.is_empty() {
        return value
            .is_finite()
            .then(|| (value, Unit::new(Dimension::Count(String::new()))));
    }
    let parsed = Unit::parse_known(symbol)?;
    let base = value * parsed.to_base;
    base.is_finite().then_some((base, parsed.unit))
}

/// Length of the number at the start of `text`: digits, a decimal point, a sign at the start
/// or after an exponent marker, and `e`/`E` when a digit or sign follows it.
pub fn number_prefix(text: &str) -> usize {
    let b = text.as_bytes();
    let mut end = 0;
    while let Some(&c) = b.get(end) {
        let sign_allowed = end == 0 || matches!(b[end - 1], b'e' | b'E');
        let exponent = matches!(c, b'e' | b'E')
            && end > 0
            && b.get(end + 1)
                .is_some_and(|n| n.is_ascii_digit() || matches!(n, b'-' | b'+'));
        if c.is_ascii_digit() || c == b'.' || (matches!(c, b'-' | b'+') && sign_allowed) || exponent
        {
            end += 1;
        } else {
            break;
        }
    }
    end
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base_symbol())
    }
}

fn pick_scale<'a>(value: f64, scales: &[(f64, &'a str)]) -> (f64, &'a str) {
    let magnitude = value.abs();
    let mut chosen = scales[0];
    for &scale in scales {
        if magnitude >= scale.0 {
            chosen = scale;
        }
    }
    chosen
}

/// Formats with at least `digits` significant digits, never dropping integer digits:
/// 10668.0 → "10668", 10.668 → "10.67", 0.33412 → "0.3341".
pub fn format_significant(value: f64, digits: i32) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let integer_digits = value.abs().log10().floor() as i32 + 1;
    let decimals = (digits - integer_digits).max(0) as usize;
    // Beyond nine decimals a fixed-point figure is a row of zeros (5e-324 s printed 398
    // characters): scientific notation says the same in a cell.
    if decimals > MAX_DECIMALS {
        let precision = (digits - 1).max(0) as usize;
        return format!("{value:.precision$e}");
    }
    format!("{value:.decimals$}")
}

/// The most decimals a fixed-point figure shows before it is written in scientific notation.
const MAX_DECIMALS: usize = 9;

/// Formats a value exactly as far as it is known: the shortest decimal that round-trips, after
/// rounding away binary noise beyond 12 significant digits (so 0.1+0.2 prints as 0.3).
pub fn format_exact(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let rounded: f64 = format!("{value:.11e}").parse().unwrap_or(value);
    match magnitude {
        m if m < -(MAX_DECIMALS as i32) || m > 15 => format!("{rounded:e}"),
        _ => format!("{rounded}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_far_from_one_fit_a_cell() {
        assert_eq!(format_significant(5e-315, 4), "5.000e-315");
        assert_eq!(format_significant(0.33412, 4), "0.3341");
        assert_eq!(format_exact(5e-324), "5e-324");
        assert_eq!(format_exact(0.1 + 0.2), "0.3");
        assert_eq!(format_exact(1e300), "1e300");
    }

    #[test]
    fn parses_go_units() {
        let ns = Unit::parse("ns/op");
        assert_eq!(ns.unit, Unit::per(Dimension::Time, "op"));
        assert_eq!(ns.to_base, 1.0);
        let bytes = Unit::parse("B/op");
        assert_eq!(bytes.unit, Unit::per(Dimension::Bytes, "op"));
        let allocs = Unit::parse("allocs/op");
        assert_eq!(
            allocs.unit,
            Unit::per(Dimension::Count("allocs".into()), "op")
        );
        let rate = Unit::parse("MB/s");
        assert_eq!(rate.unit, Unit::new(Dimension::ByteRate));
        assert_eq!(rate.to_base, 1e6);
        assert_eq!(rate.unit.better(), Better::Higher);
    }

    #[test]
    fn parses_time_and_binary_prefixes_exactly() {
        assert_eq!(Unit::parse("us").to_base, 1e3);
        assert_eq!(Unit::parse("µs").to_base, 1e3);
        assert_eq!(Unit::parse("ms").to_base, 1e6);
        assert_eq!(Unit::parse("MiB/s").to_base, 1048576.0);
        assert_eq!(Unit::parse("KiB").unit.dimension, Dimension::Bytes);
        assert!(Unit::parse_known("furlongs").is_none());
        assert_eq!(
            Unit::parse("frames").unit.dimension,
            Dimension::Count("frames".into())
        );
    }

    #[test]
    fn quantities_convert_exactly() {
        let (a, ua) = parse_quantity("500 us").unwrap();
        let (b, ub) = parse_quantity("0.5 ms").unwrap();
        assert_eq!((a, &ua), (b, &ub));
        assert_eq!(a, 500_000.0);
        assert_eq!(parse_quantity("5ms").unwrap().0, 5e6);
        assert_eq!(parse_quantity("100 MB/s").unwrap().0, 1e8);
        assert_eq!(parse_quantity("100 MiB/s").unwrap().0, 104_857_600.0);
        assert_eq!(parse_quantity("2 µs").unwrap().0, 2000.0);
        assert_eq!(parse_quantity("1.5e3 ns").unwrap().0, 1500.0);
        assert_eq!(parse_quantity("1e-3 s").unwrap().0, 1e6);
        assert_eq!(parse_quantity("-2 ms").unwrap().0, -2e6);
        assert_eq!(parse_quantity("2e").map(|q| q.0), None);
        assert_eq!(
            parse_quantity("42").unwrap().1.dimension,
            Dimension::Count(String::new())
        );
        assert!(parse_quantity("5 parsecs").is_none());
        // Infinite or overflowing quantities are refused (a target of `1e310` gated nothing).
        assert!(parse_quantity("1e310").is_none());
        assert!(parse_quantity("1e300 s").is_none());
        assert!(parse_quantity("fast").is_none());
        assert!(parse_quantity("").is_none());
    }

    #[test]
    fn scales_for_display() {
        let t = Unit::per(Dimension::Time, "op");
        assert_eq!(t.format_scaled(10668.0), "10.67 µs/op");
        assert_eq!(t.format_scaled(184870.0), "184.9 µs/op");
        assert_eq!(t.format_scaled(12.5), "12.50 ns/op");
        assert_eq!(t.format_scaled(2.5e9), "2.500 s/op");
        let b = Unit::per(Dimension::Bytes, "op");
        assert_eq!(b.format_scaled(1536.0), "1.500 KiB/op");
        let r = Unit::new(Dimension::ByteRate);
        assert_eq!(r.format_scaled(2515.1e6), "2.515 GB/s");
        assert_eq!(r.format_scaled(104.9e6), "104.9 MB/s");
        let a = Unit::per(Dimension::Count("allocs".into()), "op");
        assert_eq!(a.format_scaled(5.0), "5 allocs/op");
        assert_eq!(a.format_scaled(11.5245677458), "11.52 allocs/op");
        assert_eq!(a.format_scaled(1234567.5), "1234568 allocs/op");
        assert_eq!(a.format_scaled(123456789.0), "123456789 allocs/op");
    }

    #[test]
    fn exact_formatting_keeps_decimals_and_drops_noise() {
        assert_eq!(format_exact(10668.0), "10668");
        assert_eq!(format_exact(12.5), "12.5");
        assert_eq!(format_exact(0.3341), "0.3341");
        assert_eq!(format_exact(0.1 + 0.2), "0.3");
        assert_eq!(format_exact(-3.25), "-3.25");
    }
}
