//! Numbers as people write them on a performance page: two significant figures, `~` where
//! rounding moved the value, SI prefixes for rates, the time unit that reads best.

/// A number as people write it: two significant digits (three from 100 up), and whether
/// rounding moved it by more than 0.5 % (then it is shown with a `~`).
pub(super) fn approx(value: f64) -> (String, bool) {
    // A time of zero makes a factor infinite; zero itself has no magnitude to round.
    if value.is_nan() {
        return ("?".to_string(), false);
    }
    if value.is_infinite() {
        return (if value < 0.0 { "-∞" } else { "∞" }.to_string(), false);
    }
    if value == 0.0 {
        return ("0".to_string(), false);
    }
    let magnitude = value.abs();
    let (rounded, digits) = if magnitude >= 100.0 {
        // Three significant digits, the rest zeros: 158712 → 159000.
        let step = 10f64.powi(magnitude.log10().floor() as i32 - 2);
        ((value / step).round() * step, 0)
    } else if magnitude >= 10.0 {
        (value, 0)
    } else if magnitude >= 1.0 {
        (value, 1)
    } else {
        (
            value,
            (1 - magnitude.log10().floor() as i32).max(1) as usize,
        )
    };
    let text = format!("{rounded:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let shown: f64 = text.parse().unwrap_or(value);
    let moved = value != 0.0 && ((shown - value) / value).abs() > 0.005;
    (text, moved)
}

/// `~82` when rounding moved the value, else `82`.
pub(super) fn tilde((text, moved): (String, bool)) -> String {
    if moved { format!("~{text}") } else { text }
}

pub(super) fn plain((text, _): (String, bool)) -> String {
    text
}

/// `59 %` for a ratio of 1.59, `~1800x` from a ratio of 2 up.
pub(super) fn by_how_much(ratio: f64) -> String {
    if ratio >= 2.0 {
        format!("{}x", tilde(approx(ratio)))
    } else {
        format!("{} %", plain(approx((ratio - 1.0) * 100.0)))
    }
}

pub(super) fn signed(percent: f64) -> String {
    let text = plain(approx(percent.abs()));
    if percent < 0.0 {
        format!("-{text}")
    } else {
        format!("+{text}")
    }
}

/// `~80 ns`, `4 us`, `~5.6 s`.
pub(super) fn time_text(ns: f64) -> String {
    let (scaled, unit) = scale(ns, &[(1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")]);
    format!("{} {unit}", tilde(approx(scaled)))
}

/// `82 k`, `13 M`: a count per second with its decimal prefix (the caller adds what/s).
pub(super) fn rate_number(per_second: f64) -> (String, bool) {
    let (scaled, prefix) = scale(
        per_second,
        &[(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")],
    );
    let (text, moved) = approx(scaled);
    let text = if prefix.is_empty() {
        text
    } else {
        format!("{text} {prefix}")
    };
    (text, moved)
}

pub(super) fn throughput_text(bytes_per_second: f64) -> String {
    let (scaled, unit) = scale(
        bytes_per_second,
        &[
            (1.0, "B/s"),
            (1e3, "kB/s"),
            (1e6, "MB/s"),
            (1e9, "GB/s"),
            (1e12, "TB/s"),
        ],
    );
    format!("{} {unit}", tilde(approx(scaled)))
}

pub(super) fn scale(value: f64, steps: &[(f64, &'static str)]) -> (f64, &'static str) {
    let mut chosen = steps[0];
    for step in steps {
        if value.abs() >= step.0 * 0.9995 {
            chosen = *step;
        }
    }
    (value / chosen.0, chosen.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_write_them() {
        assert_eq!(time_text(79.6), "~80 ns");
        assert_eq!(time_text(4000.0), "4 us");
        assert_eq!(time_text(5.64e9), "~5.6 s");
        assert_eq!(time_text(5.62e9), "5.6 s");
        assert_eq!(time_text(1.7), "1.7 ns");
        assert_eq!(time_text(0.7418), "0.74 ns");
        assert_eq!(time_text(0.7438), "~0.74 ns");
        assert_eq!(plain(rate_number(1e9 / 79.6)), "13 M");
        assert_eq!(tilde(rate_number(267_000.0)), "267 k");
        assert_eq!(tilde(rate_number(81_500.0)), "~82 k");
        assert_eq!(tilde(rate_number(81_900.0)), "82 k");
        assert_eq!(throughput_text(1.23e9), "~1.2 GB/s");
        assert_eq!(time_text(999.9), "1 us");
        assert_eq!(tilde(approx(158_712.0)), "159000");
        assert_eq!(by_how_much(1.59), "59 %");
        assert_eq!(by_how_much(1750.4), "1750x");
    }
}
