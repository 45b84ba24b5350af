//! The rtla readers against the output the kernel's rtla documentation publishes
//! (fixtures name their page), and against the damage real files suffer.

use crate::common::{fixture, latkit, parse_json};
use predicates::prelude::*;
use serde_json::Value;

/// The benchmark called `name` in a parsed run.
fn bench<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no benchmark {name}"))
}

/// The run's benchmark names, in order.
fn names(run: &Value) -> Vec<&str> {
    run["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect()
}

/// Each `(benchmark, count, min, avg, max)` as rtla printed them, in µs.
fn assert_figures(run: &Value, expected: &[(&str, u64, i64, i64, i64)]) {
    for &(name, count, min, avg, max) in expected {
        let timer = &bench(run, name)["timer"];
        assert_eq!(timer["samples"], count, "{name}");
        assert_eq!(timer["min_ns"], min * 1000, "{name}");
        assert_eq!(
            timer["avg_ns"].as_f64().unwrap(),
            (avg * 1000) as f64,
            "{name}"
        );
        assert_eq!(timer["max_ns"], max * 1000, "{name}");
    }
}

#[test]
fn timerlat_hist_gives_the_tools_own_figures_per_cpu_and_context() {
    let doc = parse_json(&fixture("rtla/timerlat-hist-doc.txt"));
    let run = &doc["runs"][0];
    assert_eq!(
        run["source"]["format"], "rtla-hist",
        "detected without --input-format"
    );
    assert_eq!(run["timer"]["mode"], "rtla timerlat hist");
    let names = names(run);
    assert_eq!(names.len(), 10);
    assert_eq!(&names[..2], ["cpu0/irq", "cpu0/thread"]);
    // The summary rows as rtla printed them (µs): count, min, avg, max.
    assert_figures(
        run,
        &[
            ("cpu0/irq", 600002, 0, 0, 16),
            ("cpu1/thread", 600002, 1, 5, 58),
            ("cpu2/irq", 600002, 0, 0, 24),
            ("cpu3/thread", 600002, 1, 4, 46),
            ("cpu4/thread", 600002, 1, 5, 50),
        ],
    );
    // Every bucket is kept: the counts add up to the count row, 1 µs wide, 58 the last used.
    let histogram = &bench(run, "cpu1/thread")["histograms"][0];
    assert_eq!(histogram["bucket_ns"], 1000);
    let counts: Vec<u64> = histogram["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 600002);
    assert_eq!((counts.len(), counts[58], counts[7]), (59, 1, 124758));
    // The overall extremes over every CPU and context.
    assert_eq!(run["timer"]["overall"]["max_ns"], 58000);
}

/// A file cut off mid-row (a run killed while writing), a row with a stray word and a
/// header with an unknown column: what can be read is, the rest is named by line.
#[test]
fn damaged_hist_files_keep_what_they_can_and_name_the_rest() {
    let whole = std::fs::read_to_string(fixture("rtla/timerlat-hist-doc.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.txt");
    let upto = whole.find("10           13").unwrap() + 20;
    std::fs::write(&cut, &whole[..upto]).unwrap();
    let out = latkit()
        .args(["parse", "--format", "json"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("\"line\":17") && notes.contains("1 value(s) under 10 columns"),
        "{notes}"
    );
    // No summary rows: no tool figures, but the buckets read so far are a distribution.
    let thread = bench(&doc["runs"][0], "cpu1/thread");
    assert!(thread["timer"].is_null());
    assert!(crate::common::metric(thread, "latency")["percentiles"].is_object());

    let stray = dir.path().join("stray.txt");
    std::fs::write(&stray, whole.replace("3282    122584", "3282    12x584")).unwrap();
    latkit()
        .args(["parse", "--strict"])
        .arg(&stray)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("stray.txt:9").and(predicate::str::contains("not a number")),
        );

    // A count no histogram can hold (found by the fuzz test: it overflowed a sum).
    let huge = dir.path().join("huge.txt");
    std::fs::write(
        &huge,
        whole.replace("count:   600002", "count:   60000184467440737095516152"),
    )
    .unwrap();
    latkit()
        .args(["parse", "--strict"])
        .arg(&huge)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("huge.txt:55").and(predicate::str::contains("out of range")),
        );
    latkit().arg("parse").arg(&huge).assert().success();

    let unknown = dir.path().join("unknown.txt");
    std::fs::write(&unknown, whole.replace("IRQ-000", "XYZ-000")).unwrap();
    latkit()
        .args(["parse", "--input-format", "rtla-hist"])
        .arg(&unknown)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no rtla-hist results"));
}

/// osnoise's hist has one column per CPU and its own title; `-b` buckets wider than one unit
/// are found from the indexes; nanoseconds are read as such; `ALL:` totals are their own
/// benchmarks and do not count twice in the overall figures.
#[test]
fn osnoise_hist_wide_buckets_nanoseconds_and_totals() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("osnoise.txt");
    std::fs::write(
        &file,
        "# RTLA osnoise histogram\n# Time unit is nanoseconds (ns)\n\
         Index   CPU-000   CPU-001\n\
         0            10        20\n\
         10            5         0\n\
         30            1         2\n\
         over:         0         1\n\
         count:       16        23\n\
         min:          0         0\n\
         avg:          5         4\n\
         max:         30        95\n\
         ALL:   IRQ   Thr\n\
         count:       39        39\n\
         min:          0         0\n\
         avg:          4         4\n\
         max:         95        95\n",
    )
    .unwrap();
    let doc = parse_json(&file);
    let run = &doc["runs"][0];
    assert_eq!(run["timer"]["mode"], "rtla osnoise hist");
    let cpu1 = bench(run, "cpu1");
    assert_eq!(cpu1["histograms"][0]["bucket_ns"], 10);
    assert_eq!(
        cpu1["histograms"][0]["counts"],
        serde_json::json!([20, 0, 0, 2])
    );
    assert_eq!(cpu1["timer"]["max_ns"], 95);
    assert_eq!(bench(run, "all/irq")["timer"]["samples"], 39);
    assert_eq!(run["timer"]["overall"]["max_ns"], 95);
}

#[test]
fn timerlat_top_gives_each_cpus_irq_and_thread_figures() {
    let doc = parse_json(&fixture("rtla/timerlat-top-doc.txt"));
    let run = &doc["runs"][0];
    assert_eq!(
        run["source"]["format"], "rtla-top",
        "detected without --input-format"
    );
    assert_eq!(run["timer"]["mode"], "rtla timerlat top");
    assert_eq!(run["benchmarks"].as_array().unwrap().len(), 46);
    assert_figures(
        run,
        &[
            ("cpu1/irq", 12322, 0, 1, 15),
            ("cpu1/thread", 12322, 3, 9, 31),
            ("cpu12/thread", 12321, 3, 8, 23),
            ("cpu23/irq", 12320, 0, 1, 28),
            ("cpu23/thread", 12320, 3, 11, 41),
        ],
    );
    // The auto-analysis under the table is no result.
    assert_eq!(run["timer"]["overall"]["max_ns"], 41000);
}

/// Real output of Debian 12's rtla 6.1 on its PREEMPT_RT kernel (2 vCPUs under qemu TCG, so
/// millisecond maxima), captured by the real-kernel test's set-up (`rtla timerlat top -q -d
/// 5s > file`, `rtla osnoise top -q -d 5s`): rtla colours its headers with SGR sequences even
/// into a file. Detected without `--input-format`, with rtla's printed figures.
#[test]
fn real_rtla_top_screens_with_coloured_headers_are_read() {
    let top = std::fs::read_to_string(fixture("rtla/real-6.1-timerlat-top-q.txt")).unwrap();
    assert!(
        top.starts_with("\u{1b}[2;37;40m"),
        "the capture keeps rtla's colours"
    );
    let doc = parse_json(&fixture("rtla/real-6.1-timerlat-top-q.txt"));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "rtla-top");
    assert_eq!(
        names(run),
        ["cpu0/irq", "cpu0/thread", "cpu1/irq", "cpu1/thread"]
    );
    assert_figures(
        run,
        &[
            ("cpu0/irq", 4764, 28, 118, 6089),
            ("cpu0/thread", 4764, 74, 253, 6778),
            ("cpu1/irq", 4780, 7, 143, 5945),
            ("cpu1/thread", 4780, 65, 207, 7492),
        ],
    );
    let doc = parse_json(&fixture("rtla/real-6.1-osnoise-top-q.txt"));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "osnoise-top");
    assert_eq!(names(run), ["cpu0", "cpu1"]);
    let hist = parse_json(&fixture("rtla/real-6.1-timerlat-hist.txt"));
    assert_eq!(hist["runs"][0]["source"]["format"], "rtla-hist");
}

/// A live screen saved with `script` redraws the table with cursor escapes: the last
/// figures of each CPU count; a row that lost a column is named by its line.
#[test]
fn a_live_timerlat_top_screen_keeps_each_cpus_last_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.txt");
    let screen = |max: u32| {
        format!(
            "\u{1b}[H\u{1b}[2J                                     Timer Latency\n\
             \u{20}   0 00:00:01   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)\n\
             \u{20} CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max\n\
             \u{20}   0 #1000      |        1         0         1         {max} |        5         2         4        20\n"
        )
    };
    let text = format!(
        "{}{}    1 #1000      |        1         0         1\n",
        screen(9),
        screen(12)
    );
    std::fs::write(&file, text).unwrap();
    let doc = crate::common::json_of(latkit().args(["parse", "--format", "json"]).arg(&file));
    assert_eq!(bench(&doc["runs"][0], "cpu0/irq")["timer"]["max_ns"], 12000);
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("\"line\":9") && notes.contains("cur, min, avg and max"),
        "{notes}"
    );
}

/// rtla run twice into the same file: the histograms share column names, so the last one is
/// read (whole, not mixed with the first), and a note says where it starts.
#[test]
fn an_appended_second_histogram_replaces_the_first_with_a_note() {
    let whole = std::fs::read_to_string(fixture("rtla/timerlat-hist-doc.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("twice.txt");
    let second = whole.replace("max:         16", "max:         17");
    std::fs::write(&file, format!("{whole}{second}")).unwrap();
    let doc = parse_json(&file);
    let run = &doc["runs"][0];
    assert_eq!(run["benchmarks"].as_array().unwrap().len(), 10);
    assert_figures(
        run,
        &[
            ("cpu0/irq", 600002, 0, 0, 17),
            ("cpu1/thread", 600002, 1, 5, 58),
        ],
    );
    let counts = &bench(run, "cpu1/thread")["histograms"][0]["counts"];
    let total: u64 = counts
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(total, 600002, "the two histograms were mixed");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("another histogram starts here") && notes.contains("\"line\":64"),
        "{notes}"
    );
}

#[test]
fn timerlat_trace_lines_give_every_cpus_exact_irq_and_thread_figures() {
    let doc = parse_json(&fixture("rtla/timerlat-trace-doc.txt"));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "timerlat-trace");
    let names = names(run);
    assert_eq!(
        names,
        [
            "cpu0/irq",
            "cpu0/thread",
            "cpu1/irq",
            "cpu1/thread",
            "cpu5/irq",
            "cpu5/thread",
            "cpu7/irq",
            "cpu7/thread"
        ]
    );
    // By hand from the documentation's lines (ns); osnoise events and stacks are not samples.
    for (name, count, min, sum, max) in [
        ("cpu0/irq", 2, 769, 932 + 769, 932),
        ("cpu0/thread", 2, 3070, 11700 + 3070, 11700),
        ("cpu1/thread", 2, 4351, 9820 + 4351, 9820),
        ("cpu5/irq", 1, 13585, 13585, 13585),
        ("cpu7/thread", 1, 859_978, 859_978, 859_978),
    ] {
        let timer = &bench(run, name)["timer"];
        assert_eq!(timer["samples"], count, "{name}");
        assert_eq!(timer["min_ns"], min, "{name}");
        assert_eq!(timer["max_ns"], max, "{name}");
        assert_eq!(
            timer["avg_ns"].as_f64().unwrap(),
            sum as f64 / count as f64,
            "{name}"
        );
    }
    assert_eq!(run["timer"]["overall"]["max_ns"], 859_978);
}

#[test]
fn a_damaged_trace_names_its_lines_and_counts_what_the_kernel_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pipe.txt");
    std::fs::write(
        &path,
        "  <idle>-0 [000] d.h1 1.0: #1 context    irq timer_latency   900 ns\n\
         CPU:0 [LOST 42 EVENTS]\n\
         \x20 <...>-9 [000] .... 1.1: #1 context thread timer_latency  12x00 ns\n\
         \x20 <...>-9 [000] .... 1.2: #2 context thread timer_latency  5000 ns\n\
         \x20 <...>-9 [000] .... 1.3: #3 context thr",
    )
    .unwrap();
    let out = latkit()
        .args(["parse", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(bench(run, "cpu0/thread")["timer"]["samples"], 1);
    assert_eq!(bench(run, "cpu0/irq")["timer"]["max_ns"], 900);
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("\"line\":3") && notes.contains("timer_latency that is not a number"),
        "{notes}"
    );
    assert!(notes.contains("lost 42 events on CPU 0"), "{notes}");
    latkit()
        .args(["parse", "--strict"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pipe.txt:3"));
}

#[test]
fn osnoise_top_gives_each_cpus_figures_as_printed() {
    let doc = parse_json(&fixture("rtla/osnoise-top-doc.txt"));
    let run = &doc["runs"][0];
    assert_eq!(run["source"]["format"], "osnoise-top");
    assert_eq!(names(run), ["cpu0", "cpu1", "cpu2", "cpu3"]);
    // The documentation's row for CPU 1, in µs, %, and counts.
    let cpu1 = bench(run, "cpu1");
    for (metric, value) in [
        ("periods", 59.0),
        ("runtime", 53_100_000e3),
        ("noise", 338_339e3),
        ("cpu_available", 99.36282),
        ("max_noise", 8092e3),
        ("max_single", 24e3),
        ("hw", 399.0),
        ("nmi", 0.0),
        ("irq", 53130.0),
        ("softirq", 1448.0),
        ("thread", 31.0),
    ] {
        assert_eq!(crate::common::first_value(cpu1, metric), value, "{metric}");
    }
    assert_eq!(
        crate::common::metric(cpu1, "cpu_available")["better"],
        "higher"
    );
    assert_eq!(crate::common::metric(cpu1, "max_single")["better"], "lower");
}

/// A live osnoise top screen: each CPU's last row counts, `time is in ns` scales, and a row
/// cut short is named by its line.
#[test]
fn a_live_osnoise_top_screen_keeps_each_cpus_last_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.txt");
    let screen = |noise: u32| {
        format!(
            "\u{1b}[H\u{1b}[2J                                          Operating System Noise\n\
             \u{20} duration:   0 00:00:0{noise} | time is in ns\n\
             \u{20} CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW          NMI          IRQ      Softirq       Thread\n\
             \u{20}   0 #{noise}         1000000       {noise}00    99.9    {noise}00           {noise}0         1            0        10         1           0\n"
        )
    };
    let text = format!("{}{}    1 #2   1000000  300\n", screen(1), screen(2));
    std::fs::write(&file, text).unwrap();
    let doc = crate::common::json_of(latkit().args(["parse", "--format", "json"]).arg(&file));
    let cpu0 = bench(&doc["runs"][0], "cpu0");
    assert_eq!(crate::common::first_value(cpu0, "periods"), 2.0);
    assert_eq!(crate::common::first_value(cpu0, "max_single"), 20.0);
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("\"line\":9") && notes.contains("2 figures after the periods"),
        "{notes}"
    );
    latkit()
        .args(["parse", "--strict"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("live.txt:9"));
}
