//! Xenomai `latency` output: `==` header, RTT/RTD lines, HSD/HSS histogram sections and the
//! RTS summary, into one timer benchmark. Read line by line: memory follows what the lines
//! hold, never what a number in them claims.

use super::problems::Skipped;
use super::timer_common::{BucketCounts, histogram_distribution, timer_input, us_to_ns};
use super::{Input, InputFormat, Named, Parsed, for_each_text_line};
use crate::error::Result;
use crate::model::RunBuilder;
use crate::model::vocab;
use crate::model::{
    BenchName, BucketStats, LinearHistogram, TimerInfo, TimerOverall, TimerSummary,
};
use std::io::BufRead;

/// Xenomai prints bucket indices, not widths; `-B` defaults to 1000 ns.
const DEFAULT_BUCKET_NS: u64 = 1000;

const KINDS: [(&str, &str); 3] = [
    ("min", vocab::INTERVAL_MIN),
    ("avg", "samples"),
    ("max", vocab::INTERVAL_MAX),
];

/// Xenomai `latency` output as an input format.
pub struct Xenomai;

impl InputFormat for Xenomai {
    fn name(&self) -> &'static str {
        "xenomai"
    }

    fn describe(&self) -> &'static str {
        "Xenomai `latency` output: `== Sampling period`, `RTD|`, `RTS|` lines"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().any(|l| {
            l.starts_with("== Sampling period") || l.starts_with("RTD|") || l.starts_with("RTS|")
        })
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = XenomaiParser::new(input.path);
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        timer_input(parser.finish(), input, self)
    }
}

/// Reads Xenomai output given as lines.
pub fn parse<'a>(file: &str, lines: impl Iterator<Item = &'a str>) -> Parsed {
    let mut parser = XenomaiParser::new(file);
    lines.for_each(|l| parser.feed(Some(l)));
    parser.finish()
}

pub struct XenomaiParser {
    file: String,
    line: u64,
    timer: TimerInfo,
    skipped: Skipped,
    builder: RunBuilder,
    bench: usize,
    buckets: [BucketCounts; 3],
    reported: [Option<BucketStats>; 3],
    last_overruns: u64,
    last_switches: u64,
    rtd_lines: u64,
}

impl XenomaiParser {
    pub fn new(file: &str) -> Self {
        let mut builder = RunBuilder::default();
        let bench = builder.benchmark("latency", None, BenchName::plain);
        XenomaiParser {
            file: file.to_string(),
            line: 0,
            timer: TimerInfo::default(),
            skipped: Skipped::default(),
            builder,
            bench,
            buckets: Default::default(),
            reported: [None; 3],
            last_overruns: 0,
            last_switches: 0,
            rtd_lines: 0,
        }
    }

    /// Reads the next line; `None` stands for a line too long to read.
    pub fn feed(&mut self, line: Option<&str>) {
        self.line += 1;
        let Some(line) = line else {
            return self.bad(super::LINE_TOO_LONG);
        };
        if let Some(rest) = line.strip_prefix("== Sampling period:") {
            match rest.trim().trim_end_matches("us").trim().parse::<u64>() {
                Ok(us) if (1..=super::timer_common::MAX_PERIOD_US).contains(&us) => {
                    self.timer.period_ns = us * 1000
                }
                _ => self.bad("malformed header line skipped"),
            }
            return;
        }
        if let Some(rest) = line.strip_prefix("== Test mode:") {
            self.timer.mode = rest.trim().to_string();
            return;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        match fields[0] {
            "RTT" => {
                if let Some(p) = line
                    .rsplit_once("priority ")
                    .and_then(|(_, p)| p.trim_end_matches(')').parse().ok())
                {
                    self.timer.priority = p;
                }
            }
            "RTD" => self.rtd(&fields),
            "HSD" => self.hsd(&fields),
            "HSS" => {
                let parsed = (|| {
                    let name = *fields.get(1)?;
                    let kind = KINDS.iter().position(|(k, _)| *k == name)?;
                    let stats = BucketStats {
                        samples: fields.get(2)?.parse().ok()?,
                        average: fields.get(3)?.parse().ok()?,
                        stddev: fields.get(4)?.parse().ok()?,
                    };
                    (stats.average.is_finite() && stats.stddev.is_finite()).then_some((kind, stats))
                })();
                match parsed {
                    Some((kind, stats)) => self.reported[kind] = Some(stats),
                    None => self.bad("malformed HSS line skipped"),
                }
            }
            "RTS" => self.rts(&fields),
            _ => {}
        }
    }

    fn bad(&mut self, message: &str) {
        self.skipped.line(&self.file, self.line, message);
    }

    fn rtd(&mut self, fields: &[&str]) {
        let numbers: Option<Vec<i64>> = fields.get(1..8).and_then(|f| {
            let mut v: Vec<i64> = f[0..3].iter().map(|s| us_to_ns(s)).collect::<Option<_>>()?;
            for count in &f[3..5] {
                v.push(count.parse::<u32>().ok()?.into());
            }
            Some(v)
        });
        let Some(v) = numbers else {
            return self.bad("malformed RTD line skipped");
        };
        let (overruns, switches) = (v[3] as u64, v[4] as u64);
        let (b, bench) = (&mut self.builder, self.bench);
        b.record_series(bench, vocab::INTERVAL_MIN, "ns", v[0] as f64);
        b.record_series(bench, vocab::INTERVAL_AVG, "ns", v[1] as f64);
        b.record_series(bench, vocab::INTERVAL_MAX, "ns", v[2] as f64);
        // Xenomai prints running totals; the model keeps each second's own count.
        let new_overruns = overruns.saturating_sub(self.last_overruns);
        b.record_series(bench, vocab::OVERRUNS, "overruns", new_overruns as f64);
        let new_switches = switches.saturating_sub(self.last_switches);
        b.record_series(bench, vocab::MODE_SWITCHES, "switches", new_switches as f64);
        (self.last_overruns, self.last_switches) = (overruns, switches);
        self.rtd_lines += 1;
    }

    fn hsd(&mut self, fields: &[&str]) {
        let parsed = (|| {
            let name = *fields.get(1)?;
            let kind = KINDS.iter().position(|(k, _)| *k == name)?;
            let index: usize = fields.get(2)?.split('-').next()?.trim().parse().ok()?;
            let count: u64 = fields.get(3)?.parse().ok()?;
            Some((kind, index, count))
        })();
        let Some((kind, index, count)) = parsed else {
            return self.bad("malformed HSD line skipped");
        };
        if let Err(e) = self.buckets[kind].add(index, count) {
            self.bad(&format!("HSD line skipped: {e}"));
        }
    }

    fn rts(&mut self, fields: &[&str]) {
        let parsed = (|| {
            let ns = |i: usize| us_to_ns(fields.get(i)?);
            let (actual, requested) = fields.get(6)?.split_once('/')?;
            // A minimum above the maximum is a damaged line, as every reader takes it.
            let (min_ns, max_ns) = Some((ns(1)?, ns(3)?)).filter(|(min, max)| min <= max)?;
            Some((
                TimerOverall {
                    min_ns,
                    avg_ns: ns(2)?,
                    max_ns,
                    overruns: fields.get(4)?.parse().ok()?,
                    mode_switches: fields.get(5)?.parse().ok()?,
                },
                hms_seconds(actual)?,
                hms_seconds(requested)?,
            ))
        })();
        match parsed {
            Some((overall, actual, requested)) if overall.min_ns <= overall.max_ns => {
                self.timer.overall = Some(overall);
                self.timer.duration_s = actual;
                self.timer.requested_s = requested;
            }
            _ => self.bad("malformed RTS line skipped"),
        }
    }

    pub fn finish(self) -> Parsed {
        let XenomaiParser {
            file,
            timer,
            skipped,
            builder,
            buckets,
            reported,
            rtd_lines,
            ..
        } = self;
        let histograms: Vec<LinearHistogram> = buckets
            .into_iter()
            .zip(reported)
            .zip(KINDS)
            .map(|((counts, reported), (_, of))| LinearHistogram {
                reported,
                ..counts.into_histogram(of, DEFAULT_BUCKET_NS)
            })
            .collect();
        let every_sample = &histograms[1];
        let mut benchmarks = builder.finish();
        if let Some(b) = benchmarks.first_mut() {
            let max_ns = timer.overall.as_ref().map(|o| o.max_ns.max(0) as u64);
            if let Some(latency) = histogram_distribution(every_sample, max_ns) {
                b.metrics.insert(0, latency);
            }
            b.timer = timer.overall.as_ref().map(|o| TimerSummary {
                min_ns: o.min_ns,
                avg_ns: o.avg_ns as f64,
                max_ns: o.max_ns,
                samples: samples(&timer, every_sample, rtd_lines),
                overruns: Some(o.overruns),
            });
            b.histograms = histograms
                .into_iter()
                .filter(|h| !h.counts.is_empty() || h.reported.is_some())
                .collect();
        }
        Parsed {
            builder: RunBuilder::from_benchmarks(benchmarks),
            config: Vec::new(),
            timer: Some(timer),
            malformed: skipped.count,
            notes: skipped.into_notes(&file),
        }
    }
}

/// How many samples Xenomai took: its every-sample histogram counts each one; without it,
/// each RTD line (or each second of the RTS duration) stands for one second of samples.
fn samples(timer: &TimerInfo, every_sample: &LinearHistogram, rtd_lines: u64) -> Option<u64> {
    if !every_sample.counts.is_empty() {
        return Some(every_sample.counts.iter().sum());
    }
    if let Some(stats) = every_sample.reported {
        return Some(stats.samples);
    }
    let per_second = 1_000_000_000u64.checked_div(timer.period_ns)?;
    let seconds = if rtd_lines > 0 {
        rtd_lines
    } else {
        timer.duration_s
    };
    seconds.checked_mul(per_second)
}

fn hms_seconds(text: &str) -> Option<u64> {
    let parts: Vec<u64> = text
        .trim()
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts[..] {
        [h, m, s] if m < 60 && s < 60 && h < 1_000_000 => Some(h * 3600 + m * 60 + s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_bucket_indices_and_counts_are_refused_cheaply() {
        let out = parse(
            "f",
            [
                "HSD|    avg| 1000000000 - 0 |        1",
                "HSD|    avg| 18446744073709551615 - 0 |        1",
                "HSD|    avg|   4294967295 - 0 |        1",
                "HSD|    avg|   2 -  3 | 18446744073709551615",
                "HSD|    avg|   2 -  3 |        5",
            ]
            .into_iter(),
        );
        assert_eq!(out.malformed, 4);
        let b = out.builder.finish();
        assert_eq!(b[0].histograms[0].counts, [0, 0, 5]);
    }
}
