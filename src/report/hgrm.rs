//! HdrHistogram's percentile-distribution text (`.hgrm`), values in microseconds, as
//! `outputPercentileDistribution` writes it (5 ticks per half distance).

use super::{Reader, Reporter};
use crate::analyze::Report;
use hdrhistogram::Histogram;
use std::io::{self, Write};

/// Nanoseconds per printed unit (µs).
const SCALE: f64 = 1000.0;
/// Rows per halving of the distance to 100 %, as `outputPercentileDistribution` defaults.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// One row of the distribution: the highest value equivalent to the bucket reached, the
/// percentile level it was reported for, and the count up to it.
#[derive(Debug, PartialEq)]
struct Step {
    value: u64,
    percentile: f64,
    total: u64,
}

/// HdrHistogram's `PercentileIterator`, step for step: levels are kept in percent (the
/// iterator of the hdrhistogram crate keeps fractions, whose rounding skips a level where
/// p × N is whole, one bucket past Java's row), a bucket is reported for every level its
/// cumulative count reaches, and a last row at 100 % repeats the maximum.
fn percentile_steps(h: &Histogram<u64>, ticks_per_half_distance: u32) -> Vec<Step> {
    let total = h.len();
    let mut steps = Vec::new();
    let mut level = 0.0f64;
    let mut running = 0u64;
    for bucket in h.iter_recorded() {
        running += bucket.count_at_value();
        let value = bucket.value_iterated_to();
        while 100.0 * running as f64 / total as f64 >= level {
            steps.push(Step {
                value,
                percentile: level,
                total: running,
            });
            if running == total {
                steps.push(Step {
                    value,
                    percentile: 100.0,
                    total,
                });
                return steps;
            }
            let halvings = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i32;
            let ticks = f64::from(ticks_per_half_distance) * 2f64.powi(halvings.saturating_add(1));
            let next = level + 100.0 / ticks;
            // Where the next level is no longer a different number (a count so large that
            // this bucket sits a hair below 100 %), there is no finer level to report: go on
            // to the next bucket instead of reporting this one for ever.
            if next <= level {
                break;
            }
            level = next;
        }
    }
    steps
}

/// `--format hgrm`: the first distribution of the report (a timer's latency, a round trip, a
/// frame stage, an HdrHistogram log's intervals), as HdrHistogram prints it.
pub struct Hgrm;

/// The distribution an `.hgrm` shows: a timer's latency of the thread Xenomai's format shows
/// (`all` where there is one), else the first distribution of any run.
pub fn distribution(report: &Report) -> Option<Histogram<u64>> {
    let timer = report
        .runs
        .iter()
        .filter_map(super::xenomai::shown)
        .find_map(|b| b.metric(crate::model::vocab::LATENCY)?.histogram.as_ref());
    let first = || {
        report
            .runs
            .iter()
            .flat_map(|r| &r.benchmarks)
            .flat_map(|b| &b.metrics)
            .find_map(|m| m.histogram.as_ref())
    };
    timer.or_else(first).map(|d| d.histogram())
}

impl Reporter for Hgrm {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        match distribution(report) {
            Some(h) => write(&h, out),
            None => Err(io::Error::other(
                "--format hgrm prints a latency distribution (timer, net or frame results, \
                 cyclictest, Xenomai, an HdrHistogram log), and the input holds none",
            )),
        }
    }
}

pub fn write(h: &Histogram<u64>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    let digits = h.sigfig() as usize;
    for step in percentile_steps(h, TICKS_PER_HALF_DISTANCE) {
        let value = java_fixed(step.value as f64 / SCALE, digits);
        let quantile = step.percentile / 100.0;
        let (level, total) = (java_fixed(quantile, 12), step.total);
        if step.percentile < 100.0 {
            let inverse = java_fixed(1.0 / (1.0 - quantile), 2);
            writeln!(out, "{value:>12} {level:>2} {total:10} {inverse:>14}")?;
        } else {
            writeln!(out, "{value:>12} {level:>2} {total:10}")?;
        }
    }
    writeln!(
        out,
        "#[Mean    = {:>12}, StdDeviation   = {:>12}]",
        java_fixed(h.mean() / SCALE, digits),
        java_fixed(h.stdev() / SCALE, digits)
    )?;
    writeln!(
        out,
        "#[Max     = {:>12}, Total count    = {:12}]",
        java_fixed(h.max() as f64 / SCALE, digits),
        h.len()
    )?;
    let sub_buckets = (2 * 10u64.pow(h.sigfig() as u32)).next_power_of_two();
    writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    )
}

/// `v` with `decimals` digits after the point as Java's `%.Nf` prints it: the shortest
/// decimal that reads back as `v`, rounded half up (Rust rounds the binary value half to
/// even, so `0.9997802734375` would end in …437 where HdrHistogram's rows end in …438).
fn java_fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let shortest = format!("{}", v.abs());
    let (whole, fraction) = shortest.split_once('.').unwrap_or((&shortest, ""));
    let mut digits: Vec<u8> = whole
        .bytes()
        .chain(fraction.bytes())
        .map(|b| b - b'0')
        .collect();
    let point = whole.len();
    let keep = point + decimals;
    let round_up = digits.get(keep).is_some_and(|&d| d >= 5);
    digits.resize(keep, 0);
    if round_up {
        let mut i = keep;
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let point = digits.len() - decimals;
    let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    let sign = if v.is_sign_negative() && digits.iter().any(|&d| d > 0) {
        "-"
    } else {
        ""
    };
    if decimals == 0 {
        format!("{sign}{text}")
    } else {
        format!("{sign}{}.{}", &text[..point], &text[point..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_as_java_prints_it() {
        assert_eq!(java_fixed(0.9997802734375, 12), "0.999780273438");
        assert_eq!(java_fixed(0.9999267578125, 12), "0.999926757813");
        assert_eq!(java_fixed(1500.159, 3), "1500.159");
        assert_eq!(java_fixed(0.1, 12), "0.100000000000");
        assert_eq!(java_fixed(9.995, 2), "10.00");
        assert_eq!(java_fixed(1.0, 2), "1.00");
        assert_eq!(java_fixed(0.0, 3), "0.000");
        assert_eq!(java_fixed(4551.111111111111, 2), "4551.11");
        assert_eq!(java_fixed(123.0, 0), "123");
    }

    #[test]
    fn a_level_reached_exactly_reports_the_bucket_that_reaches_it() {
        // 3,000 values 1..=3000 µs, each in a bucket of its own: 90 % is reached exactly by the
        // 2,700th, where Java's PercentileIterator reports it (`0.900000000000 2700`).
        let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 5).unwrap();
        for v in 1..=3000u64 {
            h.record(v * 1000).unwrap();
        }
        let steps = percentile_steps(&h, 5);
        let p90 = steps.iter().find(|s| s.percentile == 90.0).unwrap();
        assert_eq!(p90.total, 2700);
        assert_eq!(steps.last().unwrap().percentile, 100.0);
        assert_eq!(steps.last().unwrap().total, 3000);
    }

    #[test]
    fn counts_too_large_for_finer_levels_end() {
        // Everything but one sample in the first bucket: 100 × (N−1)/N rounds to 100, and
        // the levels below it stop being distinct numbers long before they reach it.
        let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
        h.record_n(1000, u64::MAX / 4).unwrap();
        h.record(2000).unwrap();
        let steps = percentile_steps(&h, 5);
        assert!(steps.len() < 10_000, "{} steps", steps.len());
        assert_eq!(steps.last().unwrap().percentile, 100.0);
        assert_eq!(steps.last().unwrap().total, u64::MAX / 4 + 1);
    }

    #[test]
    fn percentile_distribution_text() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let mut out = Vec::new();
        write(&h, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert!(
            lines[2].starts_with("       1.000 0.000000000000          1           1.00"),
            "{}",
            lines[2]
        );
        let last_data = lines[lines.len() - 4];
        assert!(
            last_data.starts_with("    1000.447 1.000000000000       1000"),
            "{last_data}"
        );
        assert!(
            text.contains("#[Max     =     1000.447, Total count    =         1000]"),
            "{text}"
        );
        assert!(text.ends_with(", SubBuckets     =         2048]\n"));
    }
}
