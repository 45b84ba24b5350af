//! The Go reader on hand-written lines: fields, config lines, repetitions, units, failures,
//! malformed lines and the rounding of its fast number path.

use super::*;

#[test]
fn fields_split_as_the_standard_library_splits_them() {
    // Every length to past two blocks, over an alphabet of each whitespace byte, control
    // bytes that are not whitespace (0x0B, 0x1F), and text.
    let alphabet = b" \t\n\x0C\r\x0B\x1Fa9.\xC3";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut fields = Vec::new();
    for len in 0..200 {
        for _ in 0..50 {
            let line: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            split_fields(&line, &mut fields);
            let got: Vec<&[u8]> = fields.iter().map(|&(a, b)| &line[a..b]).collect();
            let want: Vec<&[u8]> = line
                .split(u8::is_ascii_whitespace)
                .filter(|f| !f.is_empty())
                .collect();
            assert_eq!(got, want, "{line:?}");
        }
    }
}

fn parse(text: &str) -> Parsed {
    let mut p = GoParser::new("t.txt");
    for line in text.lines() {
        p.feed(Some(line.as_bytes()));
    }
    p.finish()
}

#[test]
fn reads_config_results_and_repetitions() {
    let out = parse(
        "goos: linux\npkg: example.com/x\ncpu: Some CPU @ 2GHz\n\
         BenchmarkA-8  \t 100\t 12.5 ns/op\t 3 B/op\t 1 allocs/op\n\
         BenchmarkA-8  \t 100\t 13 ns/op\t 3 B/op\t 1 allocs/op\n\
         BenchmarkB/sub 5 1.5 MB/s\nPASS\nok  \texample.com/x\t1.0s\n",
    );
    assert_eq!(out.config.len(), 3);
    assert_eq!(out.config[2].value, "Some CPU @ 2GHz");
    let benches = out.builder.finish();
    assert_eq!(benches.len(), 2);
    assert_eq!(benches[0].iterations, [100, 100]);
    assert_eq!(benches[0].metrics[0].values, [12.5, 13.0]);
    assert_eq!(benches[0].metrics[2].name, "allocs/op");
    assert_eq!(benches[0].package.as_deref(), Some("example.com/x"));
    assert_eq!(benches[1].metrics[0].values, [1.5e6]);
    assert_eq!(benches[1].metrics[0].better, Better::Higher);
    assert!(out.notes.is_empty());
}

#[test]
fn malformed_lines_are_skipped_with_position() {
    let out = parse(
        "BenchmarkA 10 5 ns/op\nBenchmarkA x 5 ns/op\nBenchmarkA 10 5\nBenchmarkA 10 z ns/op\nBenchmarkA 10\n",
    );
    assert_eq!(out.malformed, 4);
    assert_eq!(out.notes[0].line, Some(2));
    assert!(out.notes[0].message.contains("iteration count `x`"));
    assert!(out.notes[1].message.contains("value without a unit"));
    assert!(out.notes[2].message.contains("`z` is not a number"));
    assert!(out.notes[3].message.contains("missing measurements"));
    let benches = out.builder.finish();
    assert_eq!(benches[0].iterations, [10]);
}

#[test]
fn ignores_prose_and_bare_names() {
    let out =
        parse("Benchmarking is fun\nBenchmarkLogs-8\nsome log line\nBenchmarkLogs-8 1 2 ns/op\n");
    assert_eq!(out.malformed, 0);
    assert_eq!(out.builder.finish()[0].metrics[0].values, [2.0]);
}

#[test]
fn unit_lines_and_failures() {
    let out = parse(
        "Unit frames/s better=higher\nUnit x better=sideways\nBenchmarkF 1 60 frames/s\n\
         --- FAIL: BenchmarkG\nFAIL\texample.com/x\t0.1s\n",
    );
    let benches = out.builder.finish();
    assert_eq!(benches[0].metrics[0].better, Better::Higher);
    assert_eq!(out.malformed, 1);
    assert!(
        out.notes
            .iter()
            .any(|n| n.message.contains("--- FAIL: BenchmarkG"))
    );
    assert!(
        out.notes
            .iter()
            .any(|n| n.message.contains("FAIL\texample.com/x"))
    );
}

#[test]
fn fast_number_path_is_correctly_rounded() {
    for text in [
        "0",
        "12.5",
        "0.3341",
        "184870",
        "1234567.891",
        "0.1",
        "9007199254740991",
        "1e3",
        "-2.5",
        "1.7976931348623157e308",
    ] {
        assert_eq!(
            parse_f64(text.as_bytes()),
            text.parse::<f64>().ok(),
            "{text}"
        );
    }
    for bad in ["", ".", "1.2.3", "abc", "NaN", "inf", "1e999"] {
        assert_eq!(parse_f64(bad.as_bytes()), None, "{bad}");
    }
}

#[test]
fn config_line_rules() {
    assert_eq!(parse_config_line(b"goos: linux"), Some(("goos", "linux")));
    assert_eq!(parse_config_line(b"note:"), Some(("note", "")));
    assert_eq!(parse_config_line(b"Goos: linux"), None);
    assert_eq!(parse_config_line(b"has space: x"), None);
    assert_eq!(parse_config_line(b"url:http"), None);
}
