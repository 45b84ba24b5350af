//! Xenomai `latency` output, to the byte: `==` header, `RTT`/`RTH`/`RTD` lines, `HSD`/`HSH`/
//! `HSS` histogram sections, the `RTS` summary; then latkit's `PCH`/`PCT` percentile lines,
//! which Xenomai lacks.

use super::{Reader, Reporter};
use crate::analyze::Report;
use crate::model::vocab;
use crate::model::{
    Benchmark, LinearHistogram, Percentiles, Run, RunningOverall, Second, TimerInfo, TimerOverall,
};
use std::io::{self, Write};

pub fn header(period_ns: u64, mode: &str) -> String {
    format!(
        "== Sampling period: {} us\n== Test mode: {mode}\n== All results in microseconds\n",
        period_ns / 1000
    )
}

pub const WARMING_UP: &str = "warming up...\n";

fn hms(seconds: i64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        (seconds / 60) % 60,
        seconds % 60
    )
}

/// The `RTT` and `RTH` lines printed before every `lines_per_header` data lines.
pub fn rtt_rth(elapsed_s: i64, info: &TimerInfo) -> String {
    format!(
        "RTT|  {}  ({}, {} us period, priority {})\nRTH|{:>11}|{:>11}|{:>11}|{:>8}|{:>6}|{:>11}|{:>11}\n",
        hms(elapsed_s),
        info.mode,
        info.period_ns / 1000,
        info.priority,
        "----lat min",
        "----lat avg",
        "----lat max",
        "-overrun",
        "---msw",
        "---lat best",
        "--lat worst"
    )
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// One `RTD` line: this second's min/avg/max, the overruns and mode switches so far, and the
/// best and worst so far.
pub fn rtd(min: i64, avg: i64, max: i64, so_far: &TimerOverall) -> String {
    format!(
        "RTD|{:11.3}|{:11.3}|{:11.3}|{:8}|{:6}|{:11.3}|{:11.3}\n",
        us(min),
        us(avg),
        us(max),
        so_far.overruns,
        so_far.mode_switches,
        us(so_far.min_ns),
        us(so_far.max_ns)
    )
}

const KINDS: [(&str, &str); 3] = [
    (vocab::INTERVAL_MIN, "min"),
    ("samples", "avg"),
    (vocab::INTERVAL_MAX, "max"),
];

/// The histogram sections: `HSD` lines (when there are bucket counts and `buckets` asks for
/// them, as `-h` does), then `HSH` and `HSS`.
pub fn histograms(bench: &Benchmark, buckets: bool) -> String {
    let find = |of: &str| bench.histograms.iter().find(|h| h.of == of);
    let mut out = String::new();
    for (of, kind) in KINDS {
        if let Some(h) = find(of).filter(|h| buckets && !h.counts.is_empty()) {
            out.push_str("---|--param|----range-|--samples\n");
            for (i, &n) in h.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
                out.push_str(&format!("HSD|    {kind}| {i:3} -{:3} | {n:8}\n", i + 1));
            }
        }
    }
    if KINDS.iter().any(|(of, _)| find(of).is_some()) {
        out.push_str("HSH|--param|--samples-|--average--|---stddev--\n");
        for (of, kind) in KINDS {
            if let Some(h) = find(of) {
                let s = h.stats();
                // C prints the 0/0 average of an empty histogram as "nan".
                let average = match s.samples {
                    0 => format!("{:>10}", "nan"),
                    _ => format!("{:10.3}", s.average),
                };
                out.push_str(&format!(
                    "HSS|    {kind}| {:9}| {average}| {:10.3}\n",
                    s.samples, s.stddev
                ));
            }
        }
    }
    out
}

/// Xenomai's closing rule, 81 columns as Xenomai prints it.
const RULE: &str =
    "---|-----------|-----------|-----------|--------|------|-------------------------";

/// The closing rule and `RTS` line; on a terminal narrower than the rule, the rule ends at
/// its edge instead of spilling one dash onto a line of its own.
pub fn rts(info: &TimerInfo, width: Option<usize>) -> String {
    let o = info.overall.clone().unwrap_or_default();
    let requested = if info.requested_s == 0 {
        info.duration_s
    } else {
        info.requested_s
    };
    let rule = &RULE[..width.map_or(RULE.len(), |w| w.clamp(40, RULE.len()))];
    format!(
        "{rule}\nRTS|{:11.3}|{:11.3}|{:11.3}|{:8}|{:6}|    {}/{}\n",
        us(o.min_ns),
        us(o.avg_ns),
        us(o.max_ns),
        o.overruns,
        o.mode_switches,
        hms(info.duration_s as i64),
        hms(requested as i64)
    )
}

/// latkit's percentile lines (µs), from the distribution of every sample, 80 columns wide.
/// HDR keeps three significant digits, so figures are capped at the exact maximum when it
/// is known.
pub fn percentiles(p: &Percentiles, exact_max_ns: Option<i64>) -> String {
    let cap = exact_max_ns.map_or(f64::INFINITY, |m| m as f64);
    let f = |ns: f64| format!("{:10.3}", ns.min(cap) / 1000.0);
    format!(
        "PCH|{:>10}|{:>10}|{:>10}|{:>10}|{:>10}|{:>10}|{:>10}\nPCT|{}|{}|{}|{}|{}|{}|{:10}\n",
        "-------p50",
        "-------p90",
        "-------p99",
        "-----p99.9",
        "----p99.99",
        "-------max",
        "---samples",
        f(p.p50),
        f(p.p90),
        f(p.p99),
        f(p.p99_9),
        f(p.p99_99),
        f(p.max),
        p.count
    )
}

/// Xenomai's gnuplot file of the every-sample histogram (bucket centres in µs, counts + 1).
pub fn gnuplot(h: &LinearHistogram) -> String {
    let width_us = h.bucket_ns as f64 / 1000.0;
    let used: Vec<usize> = (0..h.counts.len()).filter(|&i| h.counts[i] > 0).collect();
    let (Some(&start), Some(&stop)) = (used.first(), used.last()) else {
        return String::new();
    };
    let mut out = format!("{} 1\n", c_g(start as f64 * width_us));
    for i in start..=stop {
        out.push_str(&format!(
            "{} {}\n",
            c_g((i as f64 + 0.5) * width_us),
            h.counts[i] + 1
        ));
    }
    out.push_str(&format!("{} 1\n", c_g((stop + 1) as f64 * width_us)));
    out
}

/// C's `%g`: six significant digits, trailing zeros dropped, exponent outside [1e-4, 1e6).
pub fn c_g(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let exp = v.abs().log10().floor() as i32;
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    // Rounding to 6 digits can carry into the next power of ten (999999.5 → 1e+06).
    let rounded: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    let exp = if rounded.abs() >= 10f64.powi(exp + 1) {
        exp + 1
    } else {
        exp
    };
    if !(-4..6).contains(&exp) {
        let mantissa = trim(format!("{:.5}", rounded / 10f64.powi(exp)));
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        trim(format!("{v:.*}", (5 - exp).max(0) as usize))
    }
}

/// The benchmark Xenomai's single-task format shows: all threads combined when there are
/// several, else the only one.
pub fn shown(run: &Run) -> Option<&Benchmark> {
    run.benchmarks
        .iter()
        .find(|b| b.name.name == vocab::ALL_THREADS)
        .or_else(|| run.benchmarks.first())
}

/// Writes timer results in Xenomai's format. `live_part_done` skips what the live display
/// already printed (header and RTD lines); `buckets` prints the HSD lines of bucket counts.
pub struct Xenomai {
    pub live_part_done: bool,
    pub buckets: bool,
}

impl Reporter for Xenomai {
    fn render(&self, report: &Report, reader: Reader, out: &mut dyn Write) -> io::Result<()> {
        for run in &report.runs {
            let (Some(info), Some(bench)) = (&run.timer, shown(run)) else {
                continue;
            };
            if !self.live_part_done {
                out.write_all(header(info.period_ns, &info.mode).as_bytes())?;
                out.write_all(WARMING_UP.as_bytes())?;
                write_rtd_lines(info, bench, out)?;
            }
            out.write_all(histograms(bench, self.buckets).as_bytes())?;
            out.write_all(rts(info, reader.width).as_bytes())?;
            if let Some(p) = bench
                .metric(vocab::LATENCY)
                .and_then(|m| m.percentiles.as_ref())
            {
                let exact_max = info.overall.as_ref().map(|o| o.max_ns);
                out.write_all(percentiles(p, exact_max).as_bytes())?;
            }
            if let Some(hit) = &info.break_hit {
                writeln!(
                    out,
                    "# break: thread {} woke {:.3} us late {}",
                    hit.thread,
                    hit.latency_ns as f64 / 1000.0,
                    hit.when()
                )?;
            }
        }
        for note in super::note_lines(report, &reader) {
            writeln!(out, "# {note}")?;
        }
        Ok(())
    }
}

/// The RTT/RTH/RTD lines of a recorded series, 21 data lines per header as Xenomai's default.
fn write_rtd_lines(info: &TimerInfo, bench: &Benchmark, out: &mut dyn Write) -> io::Result<()> {
    let values = |name: &str| {
        bench
            .metric(name)
            .map(|m| m.values.iter().map(|v| *v as i64).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let (mins, avgs, maxs) = (
        values(vocab::INTERVAL_MIN),
        values(vocab::INTERVAL_AVG),
        values(vocab::INTERVAL_MAX),
    );
    let (overruns, switches) = (values(vocab::OVERRUNS), values(vocab::MODE_SWITCHES));
    let mut running = RunningOverall::default();
    for k in 0..mins.len().min(avgs.len()).min(maxs.len()) {
        let so_far = running.add(&Second {
            min_ns: mins[k],
            avg_ns: avgs[k],
            max_ns: maxs[k],
            overruns: overruns.get(k).copied().unwrap_or(0) as u64,
            mode_switches: switches.get(k).copied().unwrap_or(0) as u64,
        });
        if k % 21 == 0 {
            out.write_all(rtt_rth(k as i64 + 1, info).as_bytes())?;
        }
        out.write_all(rtd(mins[k], avgs[k], maxs[k], so_far).as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> TimerInfo {
        TimerInfo {
            period_ns: 100_000,
            mode: "in-kernel periodic task".into(),
            priority: 99,
            duration_s: 5,
            requested_s: 5,
            overall: Some(TimerOverall {
                min_ns: 1485,
                avg_ns: 2711,
                max_ns: 86141,
                overruns: 0,
                mode_switches: 0,
            }),
            ..TimerInfo::default()
        }
    }

    #[test]
    fn lines_match_the_reference_byte_for_byte() {
        assert_eq!(
            header(100_000, "in-kernel periodic task"),
            "== Sampling period: 100 us\n== Test mode: in-kernel periodic task\n== All results in microseconds\n"
        );
        assert_eq!(
            rtt_rth(1, &info()),
            "RTT|  00:00:01  (in-kernel periodic task, 100 us period, priority 99)\n\
             RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst\n"
        );
        let so_far = TimerOverall {
            min_ns: 1485,
            max_ns: 83739,
            ..TimerOverall::default()
        };
        assert_eq!(
            rtd(2616, 2703, 34086, &so_far),
            "RTD|      2.616|      2.703|     34.086|       0|     0|      1.485|     83.739\n"
        );
        assert_eq!(
            rts(&info(), None),
            "---|-----------|-----------|-----------|--------|------|-------------------------\n\
             RTS|      1.485|      2.711|     86.141|       0|     0|    00:00:05/00:00:05\n"
        );
    }

    #[test]
    fn negative_latencies_overruns_and_long_durations() {
        let so_far = TimerOverall {
            min_ns: -2345,
            max_ns: 1_234_567,
            overruns: 12,
            ..TimerOverall::default()
        };
        assert_eq!(
            rtd(-2345, -5, 1_234_567, &so_far),
            "RTD|     -2.345|     -0.005|   1234.567|      12|     0|     -2.345|   1234.567\n"
        );
        let mut long = info();
        long.duration_s = 3 * 3600 + 61;
        long.requested_s = 0;
        assert!(rts(&long, None).ends_with("|    03:01:01/03:01:01\n"));
        assert!(rts(&long, Some(80)).starts_with(&format!("{}\nRTS", &RULE[..80])));
    }

    #[test]
    fn histogram_sections() {
        let mut min = LinearHistogram::new(vocab::INTERVAL_MIN, 1000, 0);
        min.counts = vec![0, 1, 3];
        let mut max = LinearHistogram::new(vocab::INTERVAL_MAX, 1000, 0);
        max.counts = vec![0; 87];
        for i in [34, 63, 83, 86] {
            max.counts[i] = 1;
        }
        let bench = Benchmark {
            name: crate::model::BenchName::plain("t"),
            package: None,
            iterations: vec![],
            metrics: vec![],
            histograms: vec![min, max],
            config: Vec::new(),
            timer: None,
            aggregate: None,
            stands_in: None,
            exit_codes: Vec::new(),
        };
        let text = histograms(&bench, true);
        assert!(text.starts_with(
            "---|--param|----range-|--samples\nHSD|    min|   1 -  2 |        1\nHSD|    min|   2 -  3 |        3\n"
        ));
        assert!(text.contains("HSD|    max|  34 - 35 |        1\n"));
        assert!(text.contains("HSS|    min|         4|      1.750|      0.500\n"));
        assert!(text.ends_with("HSS|    max|         4|     66.500|     23.951\n"));
    }

    #[test]
    fn gnuplot_uses_c_percent_g() {
        assert_eq!(c_g(2.5), "2.5");
        assert_eq!(c_g(1.0), "1");
        assert_eq!(c_g(1234567.0), "1.23457e+06");
        assert_eq!(c_g(0.00001), "1e-05");
        assert_eq!(c_g(100.5), "100.5");
        let mut h = LinearHistogram::new("samples", 1000, 0);
        h.counts = vec![0, 2, 0, 5];
        assert_eq!(gnuplot(&h), "1 1\n1.5 3\n2.5 1\n3.5 6\n4 1\n");
    }

    #[test]
    fn percentile_line() {
        let p = Percentiles {
            count: 49978,
            min: 1485.0,
            p50: 2711.0,
            p90: 2900.0,
            p99: 5100.0,
            p99_9: 30100.0,
            p99_99: 80000.0,
            max: 86143.0,
        };
        assert_eq!(
            percentiles(&p, Some(86141)),
            "PCH|-------p50|-------p90|-------p99|-----p99.9|----p99.99|-------max|---samples\n\
             PCT|     2.711|     2.900|     5.100|    30.100|    80.000|    86.141|     49978\n"
        );
    }
}
