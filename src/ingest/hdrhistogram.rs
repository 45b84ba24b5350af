//! HdrHistogram's own files: interval logs (`.hlog`, as `HistogramLogWriter`, jHiccup and
//! wrk2 write them: one compressed histogram per interval) and percentile distributions
//! (`.hgrm`, as `outputPercentileDistribution` prints them). Both become a `latency`
//! distribution, so a histogram from any HdrHistogram user compares with latkit's own.

use super::problems::Skipped;
use super::{Input, InputFormat, Named, Parsed, for_each_numbered_line};
use crate::error::{Error, Result};
use crate::model::{BenchName, Environment, Metric, Note, Recorder, RunBuilder, Summary, vocab};
use hdrhistogram::Histogram;
use std::io::BufRead;

/// Nanoseconds per unit of the files' values: `.hlog` histograms hold what was recorded
/// (nanoseconds for jHiccup and most services), `.hgrm` rows what was printed (latkit and
/// jHiccup print microseconds).
const HLOG_NS: f64 = 1.0;
const HGRM_NS: f64 = 1000.0;

/// The legend line of an interval log.
const HLOG_LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

pub struct Hlog;

impl InputFormat for Hlog {
    fn name(&self) -> &'static str {
        "hlog"
    }

    fn describe(&self) -> &'static str {
        "HdrHistogram interval log (`.hlog`: `start,length,max,HISTF…` per interval), values in ns"
    }

    fn detect(&self, head: &str) -> bool {
        head.contains(HLOG_LEGEND)
            || head.contains("#[Histogram log format version")
            || head.lines().any(|l| interval_fields(l).is_some())
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut logs: Vec<(String, Recorder, Vec<f64>)> = Vec::new();
        let mut skipped = Skipped::default();
        for_each_numbered_line(reader, path, &mut skipped, |skipped, line_number, line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('"') {
                return;
            }
            let Some((tag, encoded)) = interval_fields(line) else {
                return skipped.line(
                    path,
                    line_number,
                    "expected `start,length,max,HISTF…` (an interval of an HdrHistogram log); line skipped",
                );
            };
            let interval = match crate::model::decode_histogram(encoded) {
                Ok(h) => h,
                Err(why) => {
                    return skipped.line(path, line_number, format!("{why}; interval skipped"));
                }
            };
            let name = tag.unwrap_or("hlog").to_string();
            let at = match logs.iter().position(|(n, _, _)| *n == name) {
                Some(at) => at,
                None => {
                    logs.push((name, Recorder::like(&interval), Vec::new()));
                    logs.len() - 1
                }
            };
            let (_, merged, maxima) = &mut logs[at];
            merged.add(&interval);
            // The decoded histogram's max, as HdrHistogram's decoder sets it: the end of the
            // highest bucket holding a count (values below the lowest discernible one too).
            let max = match interval.is_empty() {
                true => 0,
                false => interval.highest_equivalent(interval.max()),
            };
            maxima.push(max as f64 * HLOG_NS);
        })?;
        if logs.is_empty() {
            return Err(Error::Input(format!(
                "{path}: no interval histograms in it (an HdrHistogram log line looks like \
                 `0.127,1.007,2.769,HISTFAAAA…`)"
            )));
        }
        let mut builder = RunBuilder::default();
        for (name, _, maxima) in &logs {
            let bench = builder.benchmark(name, None, BenchName::plain);
            for max in maxima {
                builder.record_series(bench, "interval_max", "ns", *max);
            }
        }
        let mut benchmarks = builder.finish();
        for (bench, (_, merged, _)) in benchmarks.iter_mut().zip(logs) {
            bench.metrics.insert(
                0,
                Metric::time_distribution(vocab::LATENCY, merged.finish()),
            );
        }
        let note = "HdrHistogram interval log: every interval merged into one latency \
                    distribution per tag, values read as nanoseconds (the log carries no unit; \
                    wrk2 records microseconds)";
        Ok(finished(input, self, benchmarks, skipped, note))
    }
}

/// The run of `benchmarks`, with the lines skipped and what the reader must know.
fn finished(
    input: &Named,
    format: &dyn InputFormat,
    benchmarks: Vec<crate::model::Benchmark>,
    skipped: Skipped,
    note: &str,
) -> Input {
    let notes = vec![Note::info(format!("{}: {note}", input.path))];
    let parsed = Parsed::of_results(
        RunBuilder::from_benchmarks(benchmarks),
        skipped,
        input.path,
        notes,
    );
    parsed.into_input(input.source(format), Environment::default())
}

/// `[Tag=NAME,]start,length,max,HISTF…`: the tag and the encoded histogram.
fn interval_fields(line: &str) -> Option<(Option<&str>, &str)> {
    let (tag, rest) = match line.strip_prefix("Tag=") {
        Some(rest) => {
            let (tag, rest) = rest.split_once(',')?;
            (Some(tag), rest)
        }
        None => (None, line),
    };
    let mut fields = rest.splitn(4, ',');
    for _ in 0..3 {
        fields.next()?.trim().parse::<f64>().ok()?;
    }
    let encoded = fields.next()?.trim();
    encoded.starts_with("HIST").then_some((tag, encoded))
}

pub struct Hgrm;

impl InputFormat for Hgrm {
    fn name(&self) -> &'static str {
        "hgrm"
    }

    fn describe(&self) -> &'static str {
        "HdrHistogram percentile distribution (`.hgrm`: `Value Percentile TotalCount`), values in µs"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.starts_with(&["Value", "Percentile", "TotalCount"])
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut rows = Rows::default();
        let mut skipped = Skipped::default();
        for_each_numbered_line(reader, path, &mut skipped, |skipped, line_number, line| {
            if let Err(why) = rows.feed(line) {
                skipped.line(path, line_number, format!("{why}; line skipped"));
            }
        })?;
        let (histogram, reported) = rows.finish().ok_or_else(|| {
            Error::Input(format!(
                "{path}: no percentile rows in it (an .hgrm row looks like \
                 `  1500.159 0.500000000000   1500   2.00`)"
            ))
        })?;
        let mut builder = RunBuilder::default();
        builder.benchmark("hgrm", None, BenchName::plain);
        let mut benchmarks = builder.finish();
        let mut latency = Metric::time_distribution(vocab::LATENCY, histogram);
        latency.reported = reported.map(Box::new);
        benchmarks[0].metrics.push(latency);
        let note = "HdrHistogram percentile distribution: rebuilt from its rows, so percentiles \
                    between rows take the next row's value; values read as microseconds (the file \
                    carries no unit); its own count, mean, standard deviation and maximum are the \
                    figures";
        Ok(finished(input, self, benchmarks, skipped, note))
    }
}

/// The rows of an `.hgrm` read so far, and its footer's figures.
#[derive(Default)]
struct Rows {
    /// (value in ns, cumulative count).
    steps: Vec<(u64, u64)>,
    mean: Option<f64>,
    stddev: Option<f64>,
    max: Option<f64>,
    total: Option<u64>,
}

/// The largest value a row may hold: an hour, in ns.
const MAX_NS: f64 = 3.6e12;

impl Rows {
    fn feed(&mut self, line: &str) -> std::result::Result<(), String> {
        let line = line.trim();
        if let Some(footer) = line.strip_prefix("#[") {
            for (key, value) in footer.trim_end_matches(']').split(',').filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.trim(), v.trim()))
            }) {
                let number = value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0);
                match key {
                    "Mean" => self.mean = number.map(|v| v * HGRM_NS),
                    "StdDeviation" => self.stddev = number.map(|v| v * HGRM_NS),
                    "Max" => self.max = number.map(|v| v * HGRM_NS),
                    "Total count" => self.total = value.parse().ok(),
                    _ => {}
                }
            }
            return Ok(());
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() || words[0] == "Value" {
            return Ok(());
        }
        let (Some(value), Some(total)) = (words.first(), words.get(2)) else {
            return Err("expected `Value Percentile TotalCount [1/(1-Percentile)]`".into());
        };
        let value: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0 && v * HGRM_NS <= MAX_NS)
            .ok_or_else(|| format!("`{value}` is not a value up to an hour"))?;
        let total: u64 = total
            .parse()
            .map_err(|_| format!("`{total}` is not a count"))?;
        let previous = self.steps.last().map_or(0, |s| s.1);
        if total < previous {
            return Err(format!(
                "count {total} falls below the row before ({previous})"
            ));
        }
        self.steps.push(((value * HGRM_NS).round() as u64, total));
        Ok(())
    }

    /// The distribution the rows describe (each row's new counts at its value), and the
    /// footer's own figures where it has them.
    fn finish(self) -> Option<(Histogram<u64>, Option<Summary>)> {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, MAX_NS as u64, 3).ok()?;
        let mut previous = 0;
        for &(value, total) in &self.steps {
            histogram.saturating_record_n(value.max(1), total - previous);
            previous = total;
        }
        if histogram.is_empty() {
            return None;
        }
        let reported = match (self.mean, self.max) {
            (Some(mean), Some(max)) => Some(Summary {
                n: self.total.unwrap_or(histogram.len()) as usize,
                min: self.steps.first().map_or(0.0, |s| s.0 as f64),
                max,
                mean,
                median: histogram.value_at_quantile(0.5) as f64,
                stddev: self.stddev,
                median_ci: None,
            }),
            _ => None,
        };
        Some((histogram, reported))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_lines_with_and_without_tags() {
        assert_eq!(
            interval_fields("0.127,1.007,2.769,HISTFAAAAEV42pN"),
            Some((None, "HISTFAAAAEV42pN"))
        );
        assert_eq!(
            interval_fields("Tag=get,0.127,1.007,2.769,HISTFAAAAEV42pN"),
            Some((Some("get"), "HISTFAAAAEV42pN"))
        );
        assert_eq!(interval_fields("0.127,x,2.769,HISTF"), None);
        assert_eq!(
            interval_fields("\"StartTimestamp\",\"Interval_Length\""),
            None
        );
    }

    #[test]
    fn percentile_rows_rebuild_the_counts() {
        let mut rows = Rows::default();
        for line in [
            "       Value     Percentile TotalCount 1/(1-Percentile)",
            "",
            "       1.000 0.000000000000          1           1.00",
            "     300.031 0.100000000000        300           1.11",
            "    3000.319 1.000000000000       3000",
            "#[Mean    =     1500.504, StdDeviation   =      866.025]",
            "#[Max     =     3000.319, Total count    =         3000]",
        ] {
            rows.feed(line).unwrap();
        }
        assert!(rows.feed("    5.0 0.5 2").is_err(), "counts never fall");
        let (h, reported) = rows.finish().unwrap();
        assert_eq!(h.len(), 3000);
        assert_eq!(h.count_at(300_031), 299);
        let reported = reported.unwrap();
        assert_eq!((reported.n, reported.max), (3000, 3_000_319.0));
        assert!((reported.mean - 1_500_504.0).abs() < 1e-6);
    }
}
