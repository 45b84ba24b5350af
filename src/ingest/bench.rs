//! `BENCH <name>: key=value[unit] ...` lines, as standalone C benches print them
//! (`BENCH encode_raw: min=36us avg=38us max=715us`, `BENCH tcp: throughput=2515.1 MB/s`).
//! A unit may follow its value directly or as the next word; a bare number is unitless.

use super::builder::RunBuilder;
use crate::model::{BenchName, Note};

pub const EXAMPLE_LINE: &str = "BENCH encode_raw: min=36us avg=38us max=715us";

pub struct BenchOutput {
    pub builder: RunBuilder,
    pub notes: Vec<Note>,
    pub malformed: u64,
}

pub struct BenchParser {
    file: String,
    line: u64,
    out: BenchOutput,
}

impl BenchParser {
    pub fn new(file: &str) -> Self {
        BenchParser {
            file: file.to_string(),
            line: 0,
            out: BenchOutput {
                builder: RunBuilder::default(),
                notes: Vec::new(),
                malformed: 0,
            },
        }
    }

    pub fn feed(&mut self, line: &str) {
        self.line += 1;
        let Some(rest) = line.trim().strip_prefix("BENCH ") else {
            return;
        };
        match parse_line(rest) {
            Ok((name, pairs)) => {
                let bench = self.out.builder.benchmark(name, None, BenchName::plain);
                for (key, value, unit) in pairs {
                    self.out.builder.record(bench, key, unit, value);
                }
            }
            Err(msg) => {
                self.out.malformed += 1;
                self.out.notes.push(Note::warning_at(
                    &self.file,
                    self.line,
                    format!("{msg}; line skipped (expected e.g. `{EXAMPLE_LINE}`)"),
                ));
            }
        }
    }

    pub fn finish(self) -> BenchOutput {
        self.out
    }
}

type Pair<'a> = (&'a str, f64, &'a str);

fn parse_line(rest: &str) -> Result<(&str, Vec<Pair<'_>>), String> {
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
                    .map_err(|_| format!("`{word}`: `{}` is not a number", &text[..number_end]))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rootstream_lines() {
        let mut p = BenchParser::new("b.txt");
        p.feed("BENCH encode_raw: min=36us avg=38us max=715us");
        p.feed("BENCH tcp_loopback: throughput=2515.1 MB/s latency=43us");
        p.feed("some other output");
        p.feed("BENCH frames: count=120");
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
        ] {
            let mut p = BenchParser::new("b.txt");
            p.feed(bad);
            assert_eq!(p.finish().malformed, 1, "{bad}");
        }
    }
}
