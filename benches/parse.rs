//! Parser throughput on generated Go benchmark output (the end-to-end comparison against
//! benchstat lives in bench/parse-vs-benchstat.sh).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latkit::ingest::go::GoParser;
use std::hint::black_box;

fn generated(lines: usize) -> String {
    let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/bench\n");
    for i in 0..lines {
        text.push_str(&format!(
            "BenchmarkPipeline/stage_{:02}-8 \t   10000\t {}.{} ns/op\t     232 B/op\t       5 allocs/op\n",
            i % 40,
            10_000 + i % 977,
            i % 10
        ));
    }
    text
}

fn parse(c: &mut Criterion) {
    let text = generated(20_000);
    let mut group = c.benchmark_group("go_parser");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("feed_20k_lines", |b| {
        b.iter(|| {
            let mut parser = GoParser::new("bench");
            for line in text.lines() {
                parser.feed(black_box(Some(line.as_bytes())));
            }
            black_box(parser.finish().malformed)
        })
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
