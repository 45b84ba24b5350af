//! The hot paths, each on its own so that a change that slows one shows in the next run
//! (`cargo bench --bench hot_paths`): Go lines through the parser (many, and a few with many
//! metrics each), a Go file and a google/benchmark JSON file read whole, the U test on large
//! samples, comparisons of wide suites, the JSON report, and the frame converters. The
//! end-to-end comparisons against the peer tools are the bench/*.sh scripts.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use latkit::analyze::compare::{CompareInput, CompareOptions, compare};
use latkit::analyze::{EnrichOptions, build_report};
use latkit::ingest::go::GoParser;
use latkit::probe::frame::{Converter, FrameConfig, Operation, PixelFormat};
use latkit::report::{JSON, Reader};
use std::hint::black_box;
use std::io::Write;

/// Go benchmark output: `lines` results over 40 benchmarks, four metrics each.
fn go_lines(lines: usize) -> String {
    let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/bench\n");
    for i in 0..lines {
        text.push_str(&format!(
            "BenchmarkPipeline/stage_{:02}-8 \t   10000\t {}.{} ns/op\t     232 B/op\t       5 allocs/op\t {}.5 MB/s\n",
            i % 40,
            10_000 + i % 977,
            i % 10,
            100 + i % 31
        ));
    }
    text
}

/// google/benchmark JSON with `rows` rows, as 1.7 writes it.
fn gbench_json(rows: usize) -> String {
    let mut text = String::from(
        "{\n  \"context\": {\n    \"num_cpus\": 2,\n    \"library_build_type\": \"release\"\n  },\n  \"benchmarks\": [\n",
    );
    for i in 0..rows {
        let name = format!("BM_Replay/window:{}/real_time", 1 << (i % 8));
        text.push_str(&format!(
            "    {{\n      \"name\": \"{name}\",\n      \"family_index\": {},\n      \"run_name\": \"{name}\",\n      \"run_type\": \"iteration\",\n      \"repetitions\": 1,\n      \"repetition_index\": 0,\n      \"threads\": 1,\n      \"iterations\": 1000,\n      \"real_time\": {}.25,\n      \"cpu_time\": {}.5,\n      \"time_unit\": \"ns\",\n      \"bytes_per_second\": 1.5e9,\n      \"items\": {}\n    }}{}\n",
            i % 8,
            1000 + i % 97,
            990 + i % 89,
            i,
            if i + 1 < rows { "," } else { "" }
        ));
    }
    text.push_str("  ]\n}\n");
    text
}

/// One Go benchmark whose lines carry `metrics` metrics each (a custom-metrics-heavy harness):
/// finding a metric by name must not cost a scan of all the others.
fn wide_go_lines(lines: usize, metrics: usize) -> String {
    let line: String = (0..metrics).map(|m| format!(" {m}.5 m{m}/op")).collect();
    format!("BenchmarkWide-8 1000 12.5 ns/op{line}\n").repeat(lines)
}

fn parse_lines(text: &str) -> u64 {
    let mut parser = GoParser::new("bench");
    for line in text.lines() {
        parser.feed(black_box(Some(line.as_bytes())));
    }
    black_box(parser.finish().malformed)
}

fn temp_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

fn parsing(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.sample_size(20);
    let text = go_lines(20_000);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("go_parser_20k_lines", |b| b.iter(|| parse_lines(&text)));
    let wide = wide_go_lines(3, 20_000);
    group.throughput(Throughput::Bytes(wide.len() as u64));
    group.bench_function("go_parser_3_lines_of_20k_metrics", |b| {
        b.iter(|| parse_lines(&wide))
    });
    // Files large enough for the parallel paths (Go pieces from 16 MiB, JSON row workers).
    for (name, text) in [
        ("go_file_200k_lines", go_lines(200_000)),
        ("gbench_json_40k_rows", gbench_json(40_000)),
    ] {
        let file = temp_file(&text);
        let path = file.path().to_str().unwrap().to_string();
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(latkit::ingest::read_path(&path, None).unwrap().runs.len()))
        });
    }
    group.finish();
}

fn analysis(c: &mut Criterion) {
    let mut group = c.benchmark_group("analyze");
    group.sample_size(20);
    // Two samples of 25,000 with ties, as two 1M-line files of 40 benchmarks give.
    let a: Vec<f64> = (0..25_000u64)
        .map(|i| (10_000 + (i * 7919) % 977) as f64)
        .collect();
    let b: Vec<f64> = (0..25_000u64)
        .map(|i| (10_100 + (i * 104_729) % 983) as f64)
        .collect();
    group.bench_function("u_test_25k_vs_25k", |bench| {
        bench.iter(|| black_box(latkit::analyze::utest::mann_whitney(&a, &b).unwrap().p))
    });
    // The Hodges-Lehmann interval of the same size, on times as Go prints them (0.1 ns
    // steps, few ties) and on throughputs in 0.01 MB/s steps (hundreds of ties each).
    let spread = |i: u64, seed: u64| ((i * seed) % 10_007) as f64 / 10_007.0;
    let times = |scale: f64, seed: u64| -> Vec<f64> {
        (0..25_000u64)
            .map(|i| (scale * (0.95 + 0.13 * spread(i, seed)) * 10.0).round() / 10.0)
            .collect()
    };
    let (old, new) = (times(33_000.0, 7_919), times(33_990.0, 104_729));
    let per_second = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .map(|t| (t / 1000.0 * 100.0).round() / 100.0)
            .collect()
    };
    let (old_rate, new_rate) = (per_second(&old), per_second(&new));
    // Sorted, as compare holds every sample once it has its median.
    let sorted = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v
    };
    let (old, new, old_rate, new_rate) = (
        sorted(&old),
        sorted(&new),
        sorted(&old_rate),
        sorted(&new_rate),
    );
    for (name, a, b) in [
        ("ratio_interval_25k_times", &old, &new),
        ("ratio_interval_25k_tied_rates", &old_rate, &new_rate),
    ] {
        group.bench_function(name, |bench| {
            bench.iter(|| black_box(latkit::analyze::ratio::ratio_of_medians(b, a).unwrap()))
        });
    }
    // The gate's exact permutation test at its largest, 16 rounds a side (as `--runs auto`
    // and interleaved A/B runs reach): every split of 32 values counted.
    let rounds = |base: f64| -> Vec<f64> {
        (0..16u32)
            .map(|i| base * (1.0 + f64::from((i * 7919) % 97) / 1000.0))
            .collect()
    };
    let (before, after) = (rounds(1000.0), rounds(1010.0));
    group.bench_function("permutation_16_vs_16", |bench| {
        bench.iter(|| black_box(latkit::analyze::permutation::higher(&before, &after)))
    });
    let go = temp_file(&go_lines(200_000));
    let input = latkit::ingest::read_path(go.path().to_str().unwrap(), None).unwrap();
    group.bench_function("json_report_200k_lines", |bench| {
        bench.iter(|| {
            let report =
                build_report(input.runs.clone(), Vec::new(), &EnrichOptions::default()).unwrap();
            let reader = Reader::default();
            let mut out = std::io::sink();
            (JSON.reporter)().render(&report, reader, &mut out).unwrap();
        })
    });
    // Suites compared as wide as they come: many benchmarks, or one with many metrics; each
    // row and metric must be found by hash, not by a scan of the others.
    let many_names: String = (0..3)
        .flat_map(|rep| {
            (0..10_000).map(move |i| format!("BenchmarkN{i}-8 1000 {}.5 ns/op\n", 12 + rep))
        })
        .collect();
    for (name, text) in [
        ("compare_10k_benchmarks", many_names),
        ("compare_1_benchmark_10k_metrics", wide_go_lines(3, 10_000)),
    ] {
        let file = temp_file(&text);
        let runs = latkit::ingest::read_path(file.path().to_str().unwrap(), None)
            .unwrap()
            .runs;
        group.bench_function(name, |bench| {
            bench.iter(|| {
                let inputs = ["old", "new"].map(|label| CompareInput {
                    label: label.into(),
                    runs: runs.clone(),
                });
                black_box(
                    compare(inputs.into(), &CompareOptions::default())
                        .unwrap()
                        .tables
                        .len(),
                )
            })
        });
    }
    group.finish();
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(20);
    for converter in Converter::ALL {
        if !converter.available() {
            continue;
        }
        let config = FrameConfig {
            width: 1280,
            height: 720,
            pixfmt: PixelFormat::Nv12,
            op: Operation::Convert,
            iterations: 10,
            warmup: 0,
            converter,
        };
        group.bench_function(format!("nv12_1280x720_x10_{}", converter.name()), |b| {
            let stamp = latkit::env::Stamp {
                clock: &latkit::env::SystemClock,
                host: &latkit::env::ThisHost,
            };
            b.iter(|| black_box(latkit::probe::frame::run(&config, stamp).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, parsing, analysis, frames);
criterion_main!(benches);
