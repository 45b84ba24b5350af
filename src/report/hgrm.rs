//! HdrHistogram's percentile-distribution text (`.hgrm`), values in microseconds, as
//! `outputPercentileDistribution` writes it (5 ticks per half distance).

use hdrhistogram::Histogram;
use std::io::{self, Write};

/// Nanoseconds per printed unit (µs).
const SCALE: f64 = 1000.0;

pub fn write(h: &Histogram<u64>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    let digits = h.sigfig() as usize;
    let mut total = 0u64;
    for step in h.iter_quantiles(5) {
        total += step.count_since_last_iteration();
        let value = step.value_iterated_to() as f64 / SCALE;
        let quantile = step.quantile_iterated_to();
        if quantile < 1.0 {
            writeln!(
                out,
                "{value:12.digits$} {quantile:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - quantile)
            )?;
        } else {
            writeln!(out, "{value:12.digits$} {quantile:2.12} {total:10}")?;
        }
    }
    writeln!(
        out,
        "#[Mean    = {:12.digits$}, StdDeviation   = {:12.digits$}]",
        h.mean() / SCALE,
        h.stdev() / SCALE
    )?;
    writeln!(
        out,
        "#[Max     = {:12.digits$}, Total count    = {:12}]",
        h.max() as f64 / SCALE,
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

#[cfg(test)]
mod tests {
    use super::*;

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
