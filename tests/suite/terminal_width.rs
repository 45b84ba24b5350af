//! Tables fit the terminal they are read on: `COLUMNS`, or a pty's width, folds them as
//! benchstat prints them and leaves out (and names) what does not fit; a file or a pipe
//! without `COLUMNS` gets every column.

use crate::common::{fixture, latkit, vector};

/// The widest line of `text`, in terminal columns (box-drawing characters are one each).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// stdout of latkit run with `args` at `COLUMNS=columns`, with the exit status checked.
fn at_width(columns: Option<usize>, args: &[&str]) -> String {
    let mut cmd = latkit();
    cmd.env("LATKIT_DB", "").args(args);
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn path(p: std::path::PathBuf) -> String {
    p.to_str().unwrap().to_string()
}

/// Every command's report at 80 and 100 columns: not one line wider (the issue measured
/// 122–195 at 80).
#[test]
fn every_report_fits_80_and_100_columns() {
    let go = path(vector("viiper-count3.gobench.txt"));
    let go_base = path(vector("viiper-steamdeck.gobench.txt"));
    let gbench = path(fixture("gbench/replay-6reps.json"));
    let cyclictest = path(vector("cyclictest-h200.txt"));
    let xenomai = path(vector("xenomai-latency-h.txt"));
    let targets = path(fixture("check/rootstream-targets.toml"));
    let bench = path(vector("rootstream-bench.txt"));
    let commands: Vec<Vec<&str>> = vec![
        vec!["parse", &go],
        vec!["parse", &gbench],
        vec!["parse", &cyclictest],
        vec!["parse", &xenomai],
        vec!["compare", &go_base, &go],
        vec!["compare", &gbench, &gbench],
        vec!["net", "loopback", "--test", "udp-rate", "--count", "200"],
        vec!["net", "loopback", "--test", "tcp-rtt", "--count", "200"],
        vec![
            "net",
            "loopback",
            "--test",
            "tcp-throughput",
            "--bytes",
            "1MiB",
        ],
        vec!["frame", "--iterations", "50"],
        vec!["exec", "-r", "6", "true", "sleep 0"],
        vec!["timer", "-T", "1", "-p", "1000", "--format", "table"],
        vec!["check", "--targets", &targets, &bench],
    ];
    for columns in [80, 100] {
        for args in &commands {
            let text = at_width(Some(columns), args);
            assert!(
                widest(&text) <= columns,
                "{args:?} at {columns} columns is {} wide:\n{text}",
                widest(&text)
            );
        }
    }
}

/// Folded as benchstat prints it: figure and interval in one cell, the files' shared ending
/// and the benchmarks' shared path out of the cells, changes without their counts.
#[test]
fn a_narrow_comparison_is_folded_not_cut() {
    let base = path(vector("viiper-steamdeck.gobench.txt"));
    let new = path(vector("viiper-count3.gobench.txt"));
    let whole = at_width(None, &["compare", &base, &new]);
    assert!(widest(&whole) > 200, "{whole}");
    assert!(
        whole.contains("± 95% CI (viiper-count3.gobench.txt)"),
        "{whole}"
    );

    let narrow = at_width(Some(80), &["compare", &base, &new]);
    // The path the names share heads the table; every name stays whole, to be copied into
    // -bench or --filter.
    assert!(
        narrow.starts_with("ns/op · Benchmark_Xbox360_Delay\n"),
        "{narrow}"
    );
    for name in [
        "1_Go-Client-Write",
        "2_InputDelay-Without-Client",
        "3_E2E-InputDelay",
        "4_E2E-PressAndRelease",
    ] {
        assert!(narrow.contains(&format!("│ {name} ")), "{name}: {narrow}");
    }
    assert!(!narrow.contains('…'), "nothing is cut: {narrow}");
    assert!(
        regex::Regex::new(r"┆ viiper-steamdeck +┆ viiper-count3 +┆ vs base")
            .unwrap()
            .is_match(&narrow),
        "{narrow}"
    );
    // One run a side is no sample: not tested, said in few characters.
    assert!(narrow.contains("+0.00% (1"), "{narrow}");
    assert!(
        !narrow.contains("left out"),
        "nothing is left out: {narrow}"
    );

    // Six repetitions a side: the interval joins its figure.
    let gbench = path(fixture("gbench/replay-6reps.json"));
    let narrow = at_width(Some(80), &["compare", &gbench, &gbench]);
    assert!(
        regex::Regex::new(r"┆ +[0-9.]+ [µnm]s ± \d+% ┆")
            .unwrap()
            .is_match(&narrow),
        "{narrow}"
    );
}

/// What cannot fit is left out and named, the columns a reader needs most stay, and the
/// notes wrap; piped without `COLUMNS` every column is there.
#[test]
fn columns_left_out_are_named_and_a_pipe_gets_them_all() {
    let cyclictest = path(vector("cyclictest-h200.txt"));
    let narrow = at_width(Some(80), &["parse", &cyclictest]);
    let header = narrow
        .lines()
        .find(|l| l.starts_with("│ Benchmark"))
        .unwrap();
    for kept in ["min", "p50", "p99", "max"] {
        assert!(header.contains(&format!("┆ {kept} ")), "{narrow}");
    }
    assert!(!header.contains("p99.99"), "{narrow}");
    let left_out = narrow
        .lines()
        .skip_while(|l| !l.starts_with("(left out to fit 80 columns:"))
        .take_while(|l| l.starts_with('(') || l.starts_with(' '))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(left_out.contains("p99.99"), "{narrow}");
    assert!(
        left_out.contains("--format markdown shows them all"),
        "{narrow}"
    );

    let piped = at_width(None, &["parse", &cyclictest]);
    let header = piped
        .lines()
        .find(|l| l.starts_with("│ Benchmark"))
        .unwrap();
    assert!(
        header.contains("p99.99") && header.contains("avg"),
        "{piped}"
    );
    assert!(!piped.contains("left out"), "{piped}");
    assert!(widest(&piped) > 100, "{piped}");

    // A file written with --out is whole whatever COLUMNS says.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.txt");
    at_width(
        Some(80),
        &["parse", &cyclictest, "--out", out.to_str().unwrap()],
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains("p99.99") && !written.contains("left out"),
        "{written}"
    );
}

/// On a real terminal (a pty of 80 columns, no `COLUMNS` in the environment), as root and
/// as an unprivileged user.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs root (runs as uid 65534); `--features interop` runs it"
)]
fn a_terminal_of_80_columns_gets_a_table_of_80() {
    // The unprivileged user runs a copy from an open folder: the checkout may be under /root.
    let nobody = crate::common::Nobody::new();
    let input = path(nobody.share(&vector("cyclictest-h200.txt")));
    let setpriv = crate::common::peer("setpriv", "apt-get install util-linux");
    for user in ["", "--reuid=65534 --regid=65534 --clear-groups"] {
        let run = match user {
            "" => format!("{} parse {input}", nobody.binary.display()),
            _ => format!(
                "{} {user} {} parse {input}",
                setpriv.display(),
                nobody.binary.display()
            ),
        };
        let out =
            std::process::Command::new(crate::common::peer("script", "apt-get install bsdutils"))
                .env_remove("COLUMNS")
                .env("NO_COLOR", "1")
                .args(["-qec", &format!("stty cols 80 rows 50; {run}"), "/dev/null"])
                .output()
                .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        assert!(out.status.success(), "{user}: {text}");
        assert!(text.contains("│ Benchmark"), "{user}: {text}");
        assert!(
            widest(&text) <= 80,
            "{user}: {} wide\n{text}",
            widest(&text)
        );
        assert!(
            text.contains("left out to fit 80 columns"),
            "{user}: {text}"
        );
    }
}

/// `latkit ARGS` on a pty of 80 columns; what the terminal showed (stdout and stderr).
fn on_a_pty(args: &str) -> String {
    let latkit = assert_cmd::cargo::cargo_bin("latkit");
    let out = std::process::Command::new(crate::common::peer("script", "apt-get install bsdutils"))
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .args([
            "-qec",
            &format!("stty cols 80 rows 50; {} {args}", latkit.display()),
            "/dev/null",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    assert!(out.status.success(), "{args}: {text}");
    text
}

/// A run longer than a second shows a live status line on a terminal (elapsed, ETA, the
/// figures so far), cleared before the result; off a terminal nothing but the result, and
/// every file written is named once on stderr.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn long_runs_talk_on_a_terminal_and_name_what_they_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("timer.json");
    let shown = on_a_pty(&format!(
        "timer -T 3 -p 1000 --format table --json {}",
        report.display()
    ));
    assert!(
        shown.contains("timer ") && shown.contains("ETA") && shown.contains("worst so far"),
        "{shown}"
    );
    assert_eq!(
        shown
            .matches(&format!("latkit: wrote {}", report.display()))
            .count(),
        1,
        "{shown}"
    );
    let off = latkit()
        .args([
            "timer", "-T", "2", "-p", "1000", "--format", "table", "--json",
        ])
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&off.stderr);
    assert!(
        off.status.success() && !stderr.contains("ETA") && !stderr.contains("worst so far"),
        "{stderr}"
    );
    assert!(stderr.contains("latkit: wrote "), "{stderr}");
    // -q writes the file and says nothing.
    let quiet = latkit()
        .args(["timer", "-T", "1", "-p", "1000", "-q", "--json"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("wrote"));
}

/// Xenomai's text, latkit's percentile lines and the doctor's advice fit 80 columns on a
/// terminal; the Xenomai rule keeps its 81 columns in a file, as Xenomai prints it.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "the timer probe on the real clock; `--features interop` runs it"
)]
fn timer_text_and_doctor_fit_80_columns() {
    let timer = on_a_pty("timer -T 1 -p 1000");
    assert!(timer.contains("PCT|") && timer.contains("RTS|"), "{timer}");
    assert!(widest(&timer) <= 80, "{} wide:\n{timer}", widest(&timer));
    let doctor = on_a_pty("doctor");
    assert!(widest(&doctor) <= 80, "{} wide:\n{doctor}", widest(&doctor));
    let file = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
        .args(["timer", "-T", "1", "-p", "1000"])
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&file.stdout);
    assert!(
        text.contains("---|-----------|-----------|-----------|--------|------|-------------------------\nRTS|"),
        "{text}"
    );
}
