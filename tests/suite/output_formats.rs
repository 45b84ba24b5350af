//! The report-format registry and the sink interface: a new format is one file behind
//! `Reporter` and one registry entry, and every sink path (files written whole, fan-out)
//! carries it without another change.

use latkit::analyze::Report;
use latkit::analyze::{EnrichOptions, build_report};
use latkit::env::Console;
use latkit::ingest::read_path;
use latkit::report::sink::{Destination, FanOut, LiveEvent, Rendered};
use latkit::report::{FORMATS, OutputFormat, Reader, Reporter};
use std::io::{self, Write};

/// A format that exists only for the test: one line per benchmark.
struct Names;

impl Reporter for Names {
    fn render(&self, report: &Report, _: Reader, out: &mut dyn Write) -> io::Result<()> {
        for bench in report.runs.iter().flat_map(|r| &r.benchmarks) {
            writeln!(out, "{}", bench.name.full_name)?;
        }
        Ok(())
    }
}

static NAMES: OutputFormat = OutputFormat {
    name: "names",
    help: "One benchmark name per line",
    reporter: || Box::new(Names),
    can: latkit::report::Can {
        compare: false,
        follow_a_timer: false,
        draw: false,
        change_interval: true,
    },
};

#[test]
fn a_new_format_plugs_into_the_sinks() {
    let input = read_path(
        crate::common::vector("viiper-count3.gobench.txt")
            .to_str()
            .unwrap(),
        None,
    )
    .unwrap();
    let mut report = build_report(input.runs, input.notes, &EnrichOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (names, json) = (dir.path().join("names.txt"), dir.path().join("r.json"));
    let mut sinks = FanOut::new(true, &Console::system(), std::time::SystemTime::UNIX_EPOCH);
    sinks.push(Rendered::new(
        &NAMES,
        Destination::open(Some(&names), &Console::system().stdout).unwrap(),
    ));
    sinks.push(Rendered::new(
        latkit::report::output_format("json").unwrap(),
        Destination::open(Some(&json), &Console::system().stdout).unwrap(),
    ));
    sinks.finish(&mut report).unwrap();
    let text = std::fs::read_to_string(&names).unwrap();
    assert_eq!(text.lines().count(), 4);
    assert!(text.starts_with("Benchmark_Xbox360_Delay/1_Go-Client-Write-8\n"));
    assert!(
        std::fs::read_to_string(&json)
            .unwrap()
            .contains("latkit.result.v2")
    );
}

#[test]
fn every_registered_format_is_a_format_choice() {
    let help = crate::common::stdout_of(crate::common::latkit().args(["parse", "--help"]));
    for format in FORMATS {
        assert!(help.contains(format.help), "--help lacks {}", format.name);
        // Formats of distributions take a timer result.
        let input = if matches!(format.name, "xenomai" | "hgrm") {
            crate::common::vector("cyclictest-h200.json")
        } else {
            crate::common::vector("viiper-count3.gobench.txt")
        };
        let out = crate::common::parse_as(&input, format.name);
        assert!(!out.is_empty(), "{}", format.name);
    }
}

/// A sink that counts the live events and the reports it hears of; it fails on a partial
/// report when told to.
struct Counting {
    heard: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    fail_on_partial: bool,
}

impl latkit::report::sink::Sink for Counting {
    fn live(&mut self, event: &LiveEvent) -> io::Result<()> {
        self.heard.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match event {
            LiveEvent::Partial(_) if self.fail_on_partial => Err(io::Error::other("full")),
            _ => Ok(()),
        }
    }

    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let runs = report.runs.len();
        self.heard
            .fetch_add(100 * runs, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn close(self: Box<Self>) -> latkit::error::Result<Option<String>> {
        Ok(None)
    }

    fn name(&self) -> String {
        "counting".into()
    }
}

/// Every sink hears every live event, whatever the command, and then the finished report;
/// a sink that fails stops the event there, named.
#[test]
fn live_events_and_the_report_reach_every_sink() {
    let runs = ["viiper-count3.gobench.txt", "viiper-steamdeck.gobench.txt"]
        .iter()
        .flat_map(|v| {
            read_path(crate::common::vector(v).to_str().unwrap(), None)
                .unwrap()
                .runs
        })
        .collect();
    let mut report = build_report(runs, Vec::new(), &EnrichOptions::default()).unwrap();
    let counter = || std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (first, second) = (counter(), counter());
    let mut sinks = FanOut::new(true, &Console::system(), std::time::SystemTime::UNIX_EPOCH);
    for (heard, fail_on_partial) in [(&first, false), (&second, false)] {
        sinks.push(Counting {
            heard: heard.clone(),
            fail_on_partial,
        });
    }
    let info = latkit::model::TimerInfo::default();
    sinks.live(&LiveEvent::TimerStarted(&info)).unwrap();
    sinks.live(&LiveEvent::Partial(&report)).unwrap();
    sinks.finish(&mut report).unwrap();
    for heard in [&first, &second] {
        assert_eq!(heard.load(std::sync::atomic::Ordering::SeqCst), 2 + 200);
    }

    let (failing, after) = (counter(), counter());
    let mut sinks = FanOut::new(true, &Console::system(), std::time::SystemTime::UNIX_EPOCH);
    for (heard, fail_on_partial) in [(&failing, true), (&after, false)] {
        sinks.push(Counting {
            heard: heard.clone(),
            fail_on_partial,
        });
    }
    let (name, e) = sinks.live(&LiveEvent::Partial(&report)).unwrap_err();
    assert_eq!(
        (name.as_str(), e.to_string().as_str()),
        ("counting", "full")
    );
    assert_eq!(after.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// `--format hgrm` of a saved timer result shows the distribution `timer --hgrm` wrote: the
/// thread Xenomai's format shows (`all` with several threads), not merely the first.
#[test]
fn format_hgrm_and_timer_hgrm_show_the_same_distribution() {
    let dir = tempfile::tempdir().unwrap();
    let (json, hgrm) = (dir.path().join("t.json"), dir.path().join("t.hgrm"));
    let out = crate::common::latkit()
        .args([
            "timer", "-T", "1", "-c", "all", "-q", "--format", "json", "--out",
        ])
        .arg(&json)
        .arg("--hgrm")
        .arg(&hgrm)
        .output()
        .unwrap();
    crate::common::assert_succeeded(&out);
    let doc = crate::common::parse_json(&json);
    let threads = doc["runs"][0]["benchmarks"].as_array().unwrap().len();
    let from_json = crate::common::parse_as(&json, "hgrm");
    assert_eq!(from_json, std::fs::read_to_string(&hgrm).unwrap());
    // Several threads and their `all`: the first benchmark is not the one shown.
    assert!(threads > 1, "{threads} threads");
    assert_ne!(doc["runs"][0]["benchmarks"][0]["name"], "all");
}

/// Which formats can show a comparison is said once, in the registry: `compare` and
/// `history` offer exactly those, and `--interleave` accepts exactly those (html included,
/// which a list of its own had left out).
#[test]
fn comparison_formats_come_from_the_registry() {
    let input = crate::common::vector("viiper-count3.gobench.txt");
    let dir = tempfile::tempdir().unwrap();
    for format in FORMATS {
        let out = crate::common::latkit()
            .arg("compare")
            .arg(&input)
            .arg(&input)
            .args(["--format", format.name, "-q", "--out"])
            .arg(dir.path().join(format.name))
            .output()
            .unwrap();
        let expected = if format.can.compare { 0 } else { 2 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "compare --format {}",
            format.name
        );
        let help = crate::common::stdout_of(crate::common::latkit().args(["history", "--help"]));
        assert_eq!(
            help.contains(&format!("- {}:", format.name)),
            format.can.compare,
            "history --format {}",
            format.name
        );
    }
    let interleaved = crate::common::latkit()
        .args(["go", "--interleave", "HEAD", "--format", "bmf", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&interleaved.stderr);
    assert!(
        stderr.contains("--format must be one of table, markdown, json, html, csv"),
        "{stderr}"
    );
}

/// A value is never printed under another value's unit: google/benchmark's own test file
/// mixes ns and s in one column, and markdown and CSV print each value in the header's unit.
#[test]
fn markdown_and_csv_print_every_value_in_its_columns_unit() {
    let file = crate::common::fixture("conformance/gbench/test1_run1.json");
    let markdown = crate::common::parse_as(&file, "markdown");
    let row = markdown
        .lines()
        .find(|l| l.starts_with("| BM_NotBadTimeUnit |"))
        .unwrap();
    let header = markdown
        .lines()
        .take_while(|l| *l != row)
        .filter(|l| l.starts_with("| Benchmark"))
        .last()
        .unwrap();
    let cells =
        |line: &str| -> Vec<String> { line.split('|').map(|c| c.trim().to_string()).collect() };
    let at = cells(header)
        .iter()
        .position(|h| h == "real_time (ns)")
        .unwrap_or_else(|| panic!("{header}"));
    // 0.4 s, as the terminal table's 400.0 ms; its cpu_time, 0.5 s, in a table of its own.
    assert_eq!(cells(row)[at], "400000000", "{row}");
    assert!(
        markdown.contains("| BM_NotBadTimeUnit | 1000 | 500000000 |"),
        "{markdown}"
    );
    let csv = crate::common::parse_as(&file, "csv");
    let headers: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv
        .lines()
        .find(|l| l.contains("BM_NotBadTimeUnit"))
        .unwrap()
        .split(',')
        .collect();
    let at = headers.iter().position(|h| *h == "real_time (ns)").unwrap();
    assert_eq!(row[at], "400000000", "{csv}");
}
