//! A format that exists only for the test: `DUMMY name value` lines, one benchmark each.

use latkit::error::Result;
use latkit::ingest::{Input, InputFormat, Named, for_each_line};
use latkit::model::{BenchName, Environment, RunBuilder, new_run};
use std::io::BufRead;

pub struct Dummy;

impl InputFormat for Dummy {
    fn name(&self) -> &'static str {
        "dummy"
    }

    fn describe(&self) -> &'static str {
        "`DUMMY name value` lines"
    }

    fn detect(&self, head: &str) -> bool {
        head.starts_with("DUMMY ")
    }

    fn read(&self, input: &Named, reader: &mut dyn BufRead) -> Result<Input> {
        let mut builder = RunBuilder::default();
        for_each_line(reader, |line| {
            let text = String::from_utf8_lossy(line.unwrap_or_default()).to_string();
            let mut words = text.split_whitespace().skip(1);
            if let (Some(name), Some(value)) = (words.next(), words.next()) {
                let bench = builder.benchmark(name, None, BenchName::plain);
                builder.record(bench, "value", "ns", value.parse().unwrap_or(0.0));
            }
        })
        .map_err(|e| latkit::error::Error::io(input.path, e))?;
        Ok(Input {
            runs: vec![new_run(
                input.source(self),
                Environment::default(),
                Vec::new(),
                builder,
            )],
            notes: Vec::new(),
            malformed: 0,
        })
    }
}
