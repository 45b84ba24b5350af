//! Rust libtest's `cargo bench` lines: `test name ... bench:  1,234 ns/iter (+/- 56)`, with an
//! optional `= 830 MB/s`. libtest's `+/-` is the max − min of its samples (after trimming
//! outliers), not a confidence interval: it is kept as its own metric, `spread`, and said so.

use super::problems::Skipped;
use super::{Input, InputFormat, Named, Parsed, for_each_numbered_line};
use crate::error::{Error, Result};
use crate::model::{BenchName, Environment, Note, RunBuilder, fits_base_unit};
use std::io::BufRead;

const EXAMPLE_LINE: &str = "test bench_add ... bench:       1,234 ns/iter (+/- 56)";

pub struct Libtest;

/// `1,234.5` → 1234.5.
fn number(text: &str) -> Option<f64> {
    text.replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// The name, ns/iter, spread and optional MB/s of one result line.
fn parse_line(line: &str) -> std::result::Result<(&str, f64, f64, Option<f64>), String> {
    let rest = line.strip_prefix("test ").ok_or("no `test ` prefix")?;
    let (name, figures) = rest
        .split_once(" ... bench:")
        .ok_or("no ` ... bench:` after the name")?;
    let (per_iter, rest) = figures
        .trim_start()
        .split_once(" ns/iter")
        .ok_or("no `ns/iter` figure")?;
    let value = number(per_iter.trim()).ok_or(format!("`{per_iter}` is not a number of ns"))?;
    let spread_text = rest
        .trim_start()
        .strip_prefix("(+/-")
        .and_then(|r| r.split_once(')'))
        .ok_or("no `(+/- N)` after ns/iter")?;
    let spread = number(spread_text.0.trim())
        .ok_or(format!("`{}` is not a number of ns", spread_text.0.trim()))?;
    let rate = match spread_text.1.trim().strip_prefix('=') {
        Some(r) => Some(
            r.trim()
                .strip_suffix("MB/s")
                .and_then(|n| number(n.trim()))
                .filter(|rate| fits_base_unit(*rate, "MB/s"))
                .ok_or(format!("`{}` is not `N MB/s` within range", r.trim()))?,
        ),
        None => None,
    };
    Ok((name.trim(), value, spread, rate))
}

impl InputFormat for Libtest {
    fn name(&self) -> &'static str {
        "libtest"
    }

    fn describe(&self) -> &'static str {
        "Rust libtest `cargo bench` lines, e.g. `test add ... bench: 1,234 ns/iter (+/- 56)`"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines()
            .any(|l| l.starts_with("test ") && l.contains(" ... bench:") && l.contains("ns/iter"))
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let path = input.path;
        let mut builder = RunBuilder::default();
        let mut skipped = Skipped::default();
        for_each_numbered_line(reader, path, &mut skipped, |skipped, line_number, line| {
            if !(line.starts_with("test ") && line.contains(" ... bench:")) {
                return;
            }
            match parse_line(line) {
                Ok((name, value, spread, rate)) => {
                    let bench = builder.benchmark(name, None, BenchName::plain);
                    builder.record(bench, "ns/iter", "ns/iter", value);
                    builder.record(bench, "spread", "ns/iter", spread);
                    if let Some(rate) = rate {
                        builder.record(bench, "MB/s", "MB/s", rate);
                    }
                }
                Err(msg) => skipped.line(
                    path,
                    line_number,
                    format!("{msg}; line skipped (expected e.g. `{EXAMPLE_LINE}`)"),
                ),
            }
        })?;
        if builder.is_empty() {
            return Err(Error::Input(format!(
                "{path}: no libtest bench results found. A result line looks like:\n  {EXAMPLE_LINE}"
            )));
        }
        let note = Note::info(
            "libtest: `spread` is libtest's ± (the max − min of its samples), not a confidence interval",
        );
        let parsed = Parsed::of_results(builder, skipped, path, vec![note]);
        Ok(parsed.into_input(input.source(self), Environment::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_line;

    #[test]
    fn old_and_new_line_shapes_read() {
        assert_eq!(
            parse_line("test tests::add ... bench:       1,234 ns/iter (+/- 56)"),
            Ok(("tests::add", 1234.0, 56.0, None))
        );
        assert_eq!(
            parse_line("test b ... bench:          21.71 ns/iter (+/- 0.34) = 830 MB/s"),
            Ok(("b", 21.71, 0.34, Some(830.0)))
        );
        assert!(parse_line("test b ... bench: fast ns/iter (+/- 1)").is_err());
    }
}
