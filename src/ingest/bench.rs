//! `BENCH <name>: key=value[unit] ...` lines, as standalone C benches print them
//! (`BENCH encode_raw: min=36us avg=38us max=715us`, `BENCH tcp: throughput=2515.1 MB/s`).
//! A unit may follow its value directly or as the next word; a bare number is unitless.

use super::problems::Skipped;
use super::{Input, InputFormat, Named, Parsed, for_each_text_line};
use crate::error::{Error, Result};
use crate::model::{BenchName, Environment, RunBuilder};
use std::io::BufRead;

pub const EXAMPLE_LINE: &str = "BENCH encode_raw: min=36us avg=38us max=715us";

pub struct BenchParser {
    file: String,
    line: u64,
    /// Result lines read.
    results: u64,
    builder: RunBuilder,
    skipped: Skipped,
}

impl BenchParser {
    pub fn new(file: &str) -> Self {
        BenchParser {
            file: file.to_string(),
            line: 0,
            results: 0,
            builder: RunBuilder::default(),
            skipped: Skipped::default(),
        }
    }

    /// Reads the next line; `None` stands for a line too long to read.
    pub fn feed(&mut self, line: Option<&str>) {
        self.line += 1;
        let Some(line) = line else {
            return self.skip(super::LINE_TOO_LONG.into());
        };
        let Some(rest) = line.trim().strip_prefix("BENCH ") else {
            return;
        };
        match parse_line(rest) {
            Ok((name, pairs)) => {
                self.results += 1;
                let name = crate::model::from_bench_line_name(name);
                let bench = self.builder.benchmark(&name, None, BenchName::plain);
                for (key, value, unit) in pairs {
                    if let Err(e) = self.builder.record_checked(bench, key, unit, value) {
                        self.skip(format!("{e}; value skipped"));
                    }
                }
            }
            Err(msg) => self.skip(format!(
                "{msg}; line skipped (expected e.g. `{EXAMPLE_LINE}`)"
            )),
        }
    }

    /// Result lines read so far.
    pub fn results(&self) -> u64 {
        self.results
    }

    /// What was read, as the input of `source`.
    pub fn into_input(self, source: crate::model::Source) -> Result<Input> {
        let file = self.file.clone();
        bench_input(&file, self.finish(), source)
    }

    fn skip(&mut self, message: String) {
        self.skipped.line(&self.file, self.line, message);
    }

    pub fn finish(self) -> Parsed {
        Parsed {
            builder: self.builder,
            config: Vec::new(),
            timer: None,
            malformed: self.skipped.count,
            notes: self.skipped.into_notes(&self.file),
        }
    }
}

type Pair<'a> = (&'a str, f64, &'a str);

fn parse_line(rest: &str) -> std::result::Result<(&str, Vec<Pair<'_>>), String> {
    let (name, fields) = rest
        .split_once(':')
        .ok_or("no `:` after the benchmark name")?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("`{name}` is not a benchmark name"));
    }
    let mut pairs: Vec<Pair> = Vec::new();
    for word in fields.split_whitespace() {
        match word.split_once('=') {
            Some((key, text)) => {
                let number_end = crate::model::number_prefix(text);
                let value: f64 = text[..number_end]
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| {
                        format!("`{word}`: `{}` is not a finite number", &text[..number_end])
                    })?;
                pairs.push((key, value, &text[number_end..]));
            }
            // A unit written as its own word belongs to the value before it.
            None => match pairs.last_mut() {
                Some(last) if last.2.is_empty() => last.2 = word,
                _ => return Err(format!("`{word}` is neither key=value nor a unit")),
            },
        }
    }
    if pairs.is_empty() {
        return Err("no key=value pairs".into());
    }
    Ok((name, pairs))
}

/// `BENCH` lines as an input format.
pub struct Bench;

impl InputFormat for Bench {
    fn name(&self) -> &'static str {
        "bench"
    }

    fn describe(&self) -> &'static str {
        "`BENCH name: key=value` lines, e.g. `BENCH encode_raw: min=36us avg=38us`"
    }

    fn detect(&self, head: &str) -> bool {
        head.lines().any(|l| l.trim_start().starts_with("BENCH "))
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut parser = BenchParser::new(input.path);
        for_each_text_line(reader, input.path, |l| parser.feed(l))?;
        bench_input(input.path, parser.finish(), input.source(self))
    }
}

fn bench_input(path: &str, out: Parsed, source: crate::model::Source) -> Result<Input> {
    if out.builder.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no BENCH results found. A BENCH line looks like:\n  {}",
            EXAMPLE_LINE
        )));
    }
    let mut input = out.into_input(source, Environment::default());
    // A BENCH line's figures (min, avg, max, throughput) stand side by side.
    input.runs[0].peer_metrics = true;
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rootstream_lines() {
        let mut p = BenchParser::new("b.txt");
        p.feed(Some("BENCH encode_raw: min=36us avg=38us max=715us"));
        p.feed(Some(
            "BENCH tcp_loopback: throughput=2515.1 MB/s latency=43us",
        ));
        p.feed(Some("some other output"));
        p.feed(Some("BENCH frames: count=120"));
        let out = p.finish();
        assert_eq!(out.malformed, 0);
        let b = out.builder.finish();
        assert_eq!(b[0].metric("avg").unwrap().values, [38_000.0]);
        let t = b[1].metric("throughput").unwrap();
        assert_eq!(
            (t.values[0], t.source_unit.as_str()),
            (2_515_100_000.0, "MB/s")
        );
        assert_eq!(b[1].metric("latency").unwrap().values, [43_000.0]);
        assert_eq!(b[2].metric("count").unwrap().values, [120.0]);
    }

    #[test]
    fn malformed_lines() {
        for bad in [
            "BENCH x min=3us",
            "BENCH x: min=fast",
            "BENCH x: us",
            "BENCH x:",
            "BENCH a b: x=1",
            "BENCH x: lat=1e999us",
        ] {
            let mut p = BenchParser::new("b.txt");
            p.feed(Some(bad));
            assert_eq!(p.finish().malformed, 1, "{bad}");
        }
    }

    #[test]
    fn each_value_keeps_its_own_unit() {
        let mut p = BenchParser::new("b.txt");
        p.feed(Some("BENCH stage: lat=5ms"));
        p.feed(Some("BENCH stage: lat=500us"));
        p.feed(Some("BENCH stage: lat=3 MB/s"));
        let out = p.finish();
        assert_eq!(out.malformed, 1);
        assert_eq!(out.notes[0].line, Some(3));
        assert!(
            out.notes[0].message.contains("cannot join"),
            "{}",
            out.notes[0]
        );
        let b = out.builder.finish();
        assert_eq!(b[0].metric("lat").unwrap().values, [5e6, 5e5]);
    }
}
