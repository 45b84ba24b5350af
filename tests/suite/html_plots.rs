//! HTML reports and SVG plots: the structure of every plot kind (snapshots), and every
//! command's HTML report opened in a real headless Chromium: no console message, no request,
//! a picture that is not blank, and the table values in the DOM.

use crate::common::{latkit, stdout_of, vector};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Go benchmark output with `benches` `(name, ns/op)`, six repetitions with fixed jitter.
fn go_file(path: &Path, benches: &[(&str, f64)]) {
    let mut text =
        String::from("goos: linux\ngoarch: amd64\npkg: example.com/p\ncpu: Test CPU @ 2.00GHz\n");
    for jitter in [0.0, 0.4, -0.3, 0.8, -0.6, 0.2] {
        for (name, ns) in benches {
            text.push_str(&format!(
                "Benchmark{name}-8\t1000\t{:.1} ns/op\n",
                ns * (1.0 + jitter / 100.0)
            ));
        }
    }
    std::fs::write(path, text).unwrap();
}

/// The shape of an SVG: how many of each element, and every text it prints.
fn structure(svg: &str) -> String {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for piece in svg.split('<').skip(1) {
        let tag: String = piece
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if !tag.is_empty() {
            *counts.entry(tag).or_default() += 1;
        }
    }
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')
                .and_then(|(_, rest)| rest.split_once("</text>"))
        })
        .map(|(text, _)| text.trim())
        .filter(|text| !text.is_empty())
        .collect();
    let mut out: Vec<String> = counts.iter().map(|(t, n)| format!("{t}: {n}")).collect();
    out.push(format!("texts: {}", texts.join(" | ")));
    out.join("\n")
}

/// `latkit ARGS --plot FILE --plot-kind KIND` in `dir`, returning the SVG.
fn plot(dir: &Path, args: &[&str], kind: &str) -> String {
    let file = dir.join(format!("{kind}.svg"));
    stdout_of(
        latkit()
            .current_dir(dir)
            .args(args)
            .arg("--plot")
            .arg(&file)
            .args(["--plot-kind", kind]),
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(
        svg.starts_with("<svg"),
        "{kind}: {}",
        &svg[..svg.len().min(80)]
    );
    svg
}

/// A store with twelve runs of two benchmarks, Encode 20 % slower from the seventh: enough
/// runs for the change to hold among both series.
fn history_store(dir: &Path) -> PathBuf {
    let db = dir.join("history.db");
    let encodes = (0..12).map(|run| if run < 6 { 100.0 } else { 120.0 });
    for (i, encode) in encodes.enumerate() {
        let file = dir.join(format!("run{i}.txt"));
        go_file(&file, &[("Encode", encode), ("Decode", 50.0)]);
        stdout_of(
            latkit()
                .current_dir(dir)
                .args(["store", "add"])
                .arg(&file)
                .arg("--db")
                .arg(&db),
        );
    }
    db
}

#[test]
fn each_plot_kind_draws_axes_series_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let xenomai = vector("xenomai-latency-h.txt");
    let xenomai = xenomai.to_str().unwrap();
    let go = vector("viiper-count3.gobench.txt");
    let (old, new) = (d.join("old.txt"), d.join("new.txt"));
    go_file(&old, &[("Encode", 100.0), ("Decode", 50.0), ("Send", 10.0)]);
    go_file(&new, &[("Encode", 120.0), ("Decode", 50.0), ("Send", 9.0)]);
    let db = history_store(d);
    let targets = crate::common::fixture("check/rootstream-targets.toml");
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("spectrum", vec!["parse".into(), xenomai.into()]),
        ("histogram", vec!["parse".into(), xenomai.into()]),
        ("series", vec!["parse".into(), xenomai.into()]),
        ("bars", vec!["parse".into(), go.display().to_string()]),
        (
            "compare",
            vec![
                "compare".into(),
                old.display().to_string(),
                new.display().to_string(),
            ],
        ),
        (
            "trend",
            vec![
                "history".into(),
                "*Encode*".into(),
                "--db".into(),
                db.display().to_string(),
            ],
        ),
        (
            "budget",
            vec![
                "check".into(),
                "--targets".into(),
                targets.display().to_string(),
                vector("rootstream-bench.txt").display().to_string(),
            ],
        ),
    ];
    for (kind, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let svg = plot(d, &args, kind);
        insta::assert_snapshot!(format!("plot_{kind}"), structure(&svg));
    }
}

#[test]
fn plot_mistakes_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let go = vector("viiper-count3.gobench.txt");
    let refused = |extra: &[&str], expected: &str| {
        let out = latkit().arg("parse").arg(&go).args(extra).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
    };
    let svg = dir.path().join("x.svg");
    let svg = svg.to_str().unwrap();
    refused(
        &["--plot", svg, "--plot-kind", "pie"],
        "invalid value 'pie'",
    );
    // A plot that cannot be written is the output's fault, not the input's: exit 4.
    let out = latkit()
        .arg("parse")
        .arg(&go)
        .args(["--plot", "/nonexistent/dir/x.svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dir"));
    refused(
        &["--plot", svg, "--plot-kind", "spectrum"],
        "nothing to draw as a spectrum plot",
    );
    refused(
        &[
            "--plot",
            svg,
            "--plot-kind",
            "bars",
            "--plot-kind",
            "spectrum",
        ],
        "give one kind, or one per --plot",
    );
    // Nothing half-written is left behind.
    assert!(!Path::new(svg).exists());
}

pub(crate) fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            && out.status.success()
        {
            return PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        }
    }
    panic!("headless Chromium is needed (apt-get install chromium; .ci/setup installs it)");
}

/// Chromium's view of `page`: the DOM after load, and the page's console messages.
pub(crate) fn open(page: &Path) -> (String, Vec<String>) {
    open_address(&format!("file://{}", page.display()))
}

/// Chromium's view of the page at `address` (a `file://` URL, with a fragment if need be).
pub(crate) fn open_address(address: &str) -> (String, Vec<String>) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(address)
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed on {address}");
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// The spread of grey levels in a screenshot of `page`: zero for a blank page.
pub(crate) fn screenshot_variance(page: &Path, dir: &Path) -> f64 {
    let shot = dir.join("shot.png");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1000,1400",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let greys: Vec<f64> = pixels[..info.buffer_size()]
        .chunks(channels)
        .map(|p| p.iter().take(3).map(|&c| c as f64).sum::<f64>() / 3.0)
        .collect();
    let mean = greys.iter().sum::<f64>() / greys.len() as f64;
    greys.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / greys.len() as f64
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs chromium; `--features interop` runs it"
)]
fn every_html_report_opens_cleanly_in_chromium() {
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The detector works: a page that requests something is caught.
    let bad = d.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'\"></head><body><img src=\"http://127.0.0.1:9/x.png\"></body></html>",
    )
    .unwrap();
    assert!(
        !open(&bad).1.is_empty(),
        "a blocked request shows on the console"
    );
    let blank = d.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    assert!(
        screenshot_variance(&blank, d) < 1.0,
        "an empty page is blank"
    );

    let (old, new) = (d.join("old.txt"), d.join("new.txt"));
    go_file(&old, &[("Encode", 100.0), ("Decode", 50.0)]);
    go_file(&new, &[("Encode", 120.0), ("Decode", 50.0)]);
    let db = history_store(d);
    let s = |p: &Path| p.display().to_string();
    // (report, arguments, texts its tables must show, plots it must hold)
    let reports: Vec<(&str, Vec<String>, Vec<&str>, usize)> = vec![
        (
            "go",
            vec!["parse".into(), s(&vector("viiper-count3.gobench.txt"))],
            vec!["10.67 µs/op", "Benchmark_Xbox360_Delay"],
            1,
        ),
        (
            "xenomai",
            vec!["parse".into(), s(&vector("xenomai-latency-h.txt"))],
            vec!["86.14 µs", "49978"],
            3,
        ),
        (
            "cyclictest",
            vec!["parse".into(), s(&vector("cyclictest-h200.txt"))],
            vec!["Samples"],
            2,
        ),
        (
            "timer",
            vec!["timer".into(), "-T".into(), "1".into(), "-q".into()],
            vec!["p99.9"],
            3,
        ),
        (
            "net",
            [
                "net", "loopback", "--test", "udp-rtt", "--count", "500", "-q",
            ]
            .map(String::from)
            .to_vec(),
            vec!["rtt"],
            2,
        ),
        (
            "frame",
            ["frame", "--iterations", "30", "-q"]
                .map(String::from)
                .to_vec(),
            vec!["frame"],
            2,
        ),
        (
            "compare",
            vec!["compare".into(), s(&old), s(&new)],
            vec!["+19.98% (p=0.002 n=6)", "vs base"],
            1,
        ),
        (
            "history",
            vec!["history".into(), "--db".into(), s(&db)],
            vec!["▲ up", "a step at its run"],
            2,
        ),
        (
            "check",
            vec![
                "check".into(),
                "--targets".into(),
                s(&crate::common::fixture("check/rootstream-targets.toml")),
                s(&vector("rootstream-bench.txt")),
            ],
            vec!["encode_raw", "Pass"],
            1,
        ),
    ];
    let gbench = d.join("replay_bench");
    let built = Command::new(crate::common::peer("g++", "apt-get install g++"))
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&gbench)
        .arg(crate::common::fixture("gbench/replay_bench.cc"))
        .args(["-lbenchmark", "-lpthread"])
        .status()
        .expect("g++ runs (apt-get install g++ libbenchmark-dev)");
    assert!(built.success());
    let reports = reports.into_iter().chain([
        (
            "go",
            vec![
                "go".into(),
                "--dir".into(),
                s(&crate::common::fixture("inputpipe")),
                "--benchtime".into(),
                "20x".into(),
                "-q".into(),
            ],
            vec!["Benchmark"],
            1,
        ),
        (
            "gbench",
            vec![
                "gbench".into(),
                s(&gbench),
                "--min-time".into(),
                "0.01".into(),
                "--repetitions".into(),
                "2".into(),
                "-q".into(),
            ],
            vec!["BM_EntityGetHot"],
            1,
        ),
        (
            "page",
            vec![
                "page".into(),
                "--spec".into(),
                s(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/replay-page.toml")),
                s(&crate::common::fixture("gbench/replay-6reps.json")),
            ],
            vec!["At a glance", "Actively bad"],
            3,
        ),
    ]);
    for (name, args, texts, plots) in reports {
        let page = d.join(format!("{name}.html"));
        let out = latkit()
            .current_dir(d)
            .args(&args)
            .args(["--format", "html", "--out"])
            .arg(&page)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let html = std::fs::read_to_string(&page).unwrap();
        for forbidden in ["<script", " src=", " href=", "@import", "url("] {
            assert!(!html.contains(forbidden), "{name}: {forbidden} in the page");
        }
        let (dom, console) = open(&page);
        assert!(console.is_empty(), "{name}: console: {console:?}");
        for text in texts {
            assert!(dom.contains(text), "{name}: `{text}` not in the DOM");
        }
        let drawn = dom.matches("<svg").count();
        assert!(
            drawn >= plots,
            "{name}: {drawn} plots, expected at least {plots}"
        );
        assert!(dom.contains("<table"), "{name}: no table");
        let variance = screenshot_variance(&page, d);
        assert!(
            variance > 100.0,
            "{name}: the screenshot looks blank ({variance})"
        );
    }
}

#[test]
fn terminal_tables_show_distribution_shapes_only_on_a_terminal() {
    let xenomai = vector("xenomai-latency-h.txt");
    // `script` gives latkit a real terminal.
    let on_terminal = |no_color: Option<&str>| {
        let mut cmd = Command::new(crate::common::peer("script", "apt-get install bsdutils"));
        cmd.args(["-qc"])
            .arg(format!(
                "{} parse {}",
                assert_cmd::cargo::cargo_bin("latkit").display(),
                xenomai.display()
            ))
            .arg("/dev/null")
            .env_remove("NO_COLOR");
        if let Some(value) = no_color {
            cmd.env("NO_COLOR", value);
        }
        let out = cmd.output().expect("script (util-linux) runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_terminal(None);
    let line = shown
        .lines()
        .find(|l| l.contains("(p99.9)"))
        .unwrap_or_else(|| panic!("no sparkline on a terminal:\n{shown}"));
    assert!(line.starts_with("latency  1.485 µs "), "{line}");
    assert!(
        line.contains('█') && line.ends_with("9.007 µs (p99.9)"),
        "{line}"
    );
    assert!(
        !on_terminal(Some("1")).contains("(p99.9)"),
        "NO_COLOR turns it off"
    );
    let piped = stdout_of(latkit().arg("parse").arg(&xenomai).env_remove("NO_COLOR"));
    assert!(!piped.contains("(p99.9)"), "piped output has no pictures");
}

/// Bars draw the measured benchmarks, not google/benchmark's own statistics beside them
/// (`_mean`, `_cv` in %, `_BigO` in ns/N: an empty row on a µs axis), and a command's runs.
#[test]
fn bars_leave_out_the_harness_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let replay = crate::common::fixture("gbench/replay-6reps.json");
    let svg = plot(dir.path(), &["parse", replay.to_str().unwrap()], "bars");
    let texts = structure(&svg);
    assert!(texts.contains("BM_OpenIndex"), "{texts}");
    for statistic in ["_BigO", "_RMS", "_cv", "_mean", "_median", "_stddev"] {
        assert!(!texts.contains(statistic), "{statistic}: {texts}");
    }
    let svg = plot(dir.path(), &["exec", "-r", "3", "true", "-q"], "bars");
    assert!(structure(&svg).contains("| true |"), "{}", structure(&svg));
}

/// A report an engineer pastes into a review: titled from its inputs, "1 run" not "1 run(s)",
/// the environment as a table, statuses as words, rows of a distribution's comparison named
/// by their statistic, and no `-0` tick.
#[test]
fn html_reports_read_as_a_review_would_want() {
    let dir = tempfile::tempdir().unwrap();
    let cyclictest = vector("cyclictest-h200.txt");
    let html = stdout_of(
        latkit()
            .arg("parse")
            .arg(&cyclictest)
            .args(["--format", "html"]),
    );
    assert!(
        html.contains("<title>latkit: cyclictest-h200.txt</title>") && html.contains("· 1 run</p>"),
        "{}",
        &html[..html.len().min(2000)]
    );
    assert!(
        !html.contains("<dl>") && html.contains("<h3>Run 1 · cyclictest"),
        "{html}"
    );
    let targets = dir.path().join("t.toml");
    std::fs::write(
        &targets,
        "[[target]]\nbench = \"*\"\nmetric = \"ns/op\"\nbelow = \"1 s\"\n",
    )
    .unwrap();
    let a = dir.path().join("a.txt");
    go_file(&a, &[("Fast", 100.0), ("Slow", 200.0)]);
    let checked = stdout_of(
        latkit()
            .args(["check", "--format", "html", "--targets"])
            .arg(&targets)
            .arg(&a),
    );
    assert!(
        !checked.contains('✅') && checked.contains("<span class=\"better\">Pass</span>"),
        "{checked}"
    );
    let b = dir.path().join("b.txt");
    std::fs::copy(&cyclictest, &b).unwrap();
    let compared = stdout_of(
        latkit()
            .arg("compare")
            .arg(&cyclictest)
            .arg(&b)
            .args(["--format", "html"]),
    );
    assert!(
        compared.contains("thread0 · p99") || compared.contains("· p99"),
        "rows named by statistic"
    );
    assert!(!compared.contains(">-0<"), "a negative zero tick");
}
