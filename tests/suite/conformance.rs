//! Conformance with the peers, figure for figure: each peer's own test data (named in
//! `tests/fixtures/conformance/README.md`) run through the real peer and through latkit, and
//! every row compared. Each test prints its agreement count.

use crate::common::{fixture, json_of, latkit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

fn conformance(path: &str) -> PathBuf {
    fixture(&format!("conformance/{path}"))
}

/// Prints `what: agreed/compared` and fails listing every figure that differs, or when fewer
/// than `at_least` figures were compared.
fn settle(what: &str, agreed: usize, deliberate: usize, differ: &[String], at_least: usize) {
    println!(
        "{what}: {agreed}/{} figures agree, {deliberate} differ by a documented rule",
        agreed + differ.len()
    );
    assert!(
        differ.is_empty(),
        "figures that differ:\n{}",
        differ.join("\n")
    );
    assert!(agreed >= at_least, "only {agreed} figures compared");
}

/// Rows that differ between `theirs` and `ours`, listed; prints `peer: agreed/total`.
fn agreement<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    peer: &str,
    theirs: &BTreeMap<K, V>,
    ours: &BTreeMap<K, V>,
) -> Vec<String> {
    let mut differ = Vec::new();
    for (key, want) in theirs {
        match ours.get(key) {
            Some(got) if got == want => {}
            got => differ.push(format!("{key:?}: {peer} {want:?}, latkit {got:?}")),
        }
    }
    for key in ours.keys().filter(|k| !theirs.contains_key(k)) {
        differ.push(format!("{key:?}: only in latkit's output"));
    }
    println!(
        "{peer}: {}/{} rows agree",
        theirs.len() - differ.len().min(theirs.len()),
        theirs.len()
    );
    differ
}

// ---------------------------------------------------------------------------------------------
// benchstat

/// One row of a comparison as benchstat prints it in CSV: each column's centre (9 significant
/// digits) and CI, then the delta and the `p=… n=…` cell.
type BenchstatRow = Vec<String>;

fn sig9(v: f64) -> String {
    format!("{v:.8e}")
}

/// `Encode/format=json-48` and `BenchmarkEncode/format=json` alike: without the `Benchmark`
/// prefix and the GOMAXPROCS suffix.
fn bench_key(name: &str) -> String {
    let name = name.strip_prefix("Benchmark").unwrap_or(name);
    match name.rsplit_once('-') {
        Some((head, procs)) if procs.chars().all(|c| c.is_ascii_digit()) && !procs.is_empty() => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

/// benchstat's CSV: tables of `,label,,label,,,` / `,unit,CI,unit,CI,vs base,P` and rows.
/// Rows are keyed by table (benchstat's tables of one configuration, latkit's `--table`
/// headings, counted in order), unit and benchmark.
type RowKey = (usize, String, String);

fn benchstat_rows(dir: &Path, args: &[&str]) -> BTreeMap<RowKey, BenchstatRow> {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let csv = crate::common::benchstat_csv(dir, &args);
    let mut rows = BTreeMap::new();
    let mut unit = String::new();
    let mut in_table = 0;
    // A configuration line after a table starts the next group of tables.
    let (mut group, mut rows_seen) = (0, false);
    for line in csv.lines() {
        if !line.contains(',') && line.contains(": ") {
            group += usize::from(rows_seen);
            rows_seen = false;
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() < 2 || (fields[0].is_empty() && fields[1].is_empty()) {
            continue;
        }
        if fields[0].is_empty() {
            if fields.get(2) == Some(&"CI") {
                unit = fields[1].to_string();
                in_table = 0;
            }
            continue;
        }
        in_table += 1;
        // Its CSV writes a geomean under a single row too; its tables (the golden outputs)
        // do not, and neither does latkit.
        if fields[0] == "geomean" && in_table == 2 {
            continue;
        }
        let mut row: BenchstatRow = Vec::new();
        let columns = (fields.len() + 1) / 3;
        for i in 0..columns.max(1) {
            let at = if i == 0 { 1 } else { 1 + 2 + (i - 1) * 4 };
            let centre = fields.get(at).copied().unwrap_or("");
            row.push(match centre.parse::<f64>() {
                Ok(v) => sig9(v),
                Err(_) => centre.to_string(),
            });
            row.push(fields.get(at + 1).copied().unwrap_or("").to_string());
            if i > 0 {
                row.push(fields.get(at + 2).copied().unwrap_or("").to_string());
                row.push(fields.get(at + 3).copied().unwrap_or("").to_string());
            }
        }
        while row.last().is_some_and(String::is_empty) {
            row.pop();
        }
        rows_seen = true;
        rows.insert((group, unit.clone(), bench_key(fields[0])), row);
    }
    rows
}

/// `latkit compare --format json ARGS INPUTS`.
fn compare_json(inputs: &[PathBuf], args: &[&str]) -> Value {
    json_of(
        latkit()
            .args(["compare", "--format", "json"])
            .args(args)
            .args(inputs),
    )
}

/// latkit's comparison in benchstat's cells, from its JSON report.
fn latkit_rows(inputs: &[PathBuf], args: &[&str]) -> BTreeMap<RowKey, BenchstatRow> {
    let doc = compare_json(inputs, args);
    let mut rows = BTreeMap::new();
    let mut headings: Vec<String> = Vec::new();
    for table in doc["tables"].as_array().unwrap() {
        let title = table["title"].as_str().unwrap();
        let title = title.trim_end_matches(" (environments differ)");
        let (heading, title) = title.rsplit_once(" · ").unwrap_or(("", title));
        if !headings.iter().any(|h| h == heading) {
            headings.push(heading.to_string());
        }
        let group = headings.len() - 1;
        // benchstat tidies ns/op into sec/op and MB/s into B/s; latkit keeps base units.
        let (unit, scale) = match title {
            "ns/op" => ("sec/op".to_string(), 1e-9),
            "MB/s" => ("B/s".to_string(), 1.0),
            t => (t.to_string(), 1.0),
        };
        for row in table["rows"].as_array().unwrap() {
            let name = row["benchmark"].as_str().unwrap();
            let geomean = name == "geomean";
            let mut cells: BenchstatRow = Vec::new();
            for cell in &row["cells"].as_array().unwrap()[1..] {
                let text = match cell["type"].as_str().unwrap() {
                    "value" => sig9(cell["value"].as_f64().unwrap() * scale),
                    "spread" => match cell["relative_percent"].as_f64() {
                        Some(p) => format!("{p:.0}%"),
                        None => "∞".to_string(),
                    },
                    "change" => {
                        let percent = cell["percent"].as_f64();
                        let delta = match (cell["verdict"].as_str().unwrap(), percent) {
                            ("noise", _) => "~".to_string(),
                            (_, None) => "?".to_string(),
                            // benchstat writes an unchanged figure as 0.00%, a geomean's
                            // ratio always with its sign.
                            (_, Some(p)) if p == 0.0 && !geomean => "0.00%".to_string(),
                            (_, Some(p)) => format!("{p:+.2}%"),
                        };
                        let counts = if geomean {
                            String::new()
                        } else {
                            let (a, b) = (
                                cell["n_base"].as_u64().unwrap(),
                                cell["n"].as_u64().unwrap(),
                            );
                            let n = if a == b {
                                format!("n={a}")
                            } else {
                                format!("n={a}+{b}")
                            };
                            match cell["p"].as_f64() {
                                Some(p) => format!("p={p:.3} {n}"),
                                None => n,
                            }
                        };
                        cells.push(delta);
                        counts
                    }
                    _ => String::new(),
                };
                cells.push(text);
            }
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            rows.insert((group, unit.clone(), bench_key(name)), cells);
        }
    }
    rows
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go and benchstat; `--features interop` runs it"
)]
fn benchstat_testdata_row_for_row() {
    let data = conformance("benchstat");
    let mut differ = Vec::new();
    let mut total = 0;
    let owned = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.to_string()).collect() };
    // (benchstat's arguments, latkit's inputs, latkit's arguments): benchstat's own golden
    // cases (cmd/benchstat/main_test.go), and each pair in the other order too.
    let mut cases: Vec<(Vec<String>, Vec<PathBuf>, Vec<String>)> = Vec::new();
    for (a, b, extra) in [
        ("old.txt", "new.txt", vec![]),
        ("new.txt", "old.txt", vec![]),
        // `-ignore note` (crcIgnore), typed as benchstat takes it: the files' notes differ.
        ("crc-old.txt", "crc-new.txt", vec!["-ignore", "note"]),
        ("crc-new.txt", "crc-old.txt", vec!["-ignore", "note"]),
    ] {
        let mut args: Vec<String> = vec![a.into(), b.into()];
        if a.starts_with("crc") {
            args.splice(0..0, ["-ignore".to_string(), "note".to_string()]);
        }
        cases.push((args, vec![data.join(a), data.join(b)], owned(&extra)));
    }
    // benchstat's `-col note` golden cases, typed as benchstat takes them.
    for single in ["units", "zero", "smallSample", "issue19565", "issue19634"] {
        cases.push((
            vec!["-col".into(), "note".into(), format!("{single}.txt")],
            vec![data.join(format!("{single}.txt"))],
            owned(&["-col", "note"]),
        ));
    }
    // benchstat's projections: its golden crcSizeVsPoly and csvErrors, and the examples of
    // its documentation; crcOldNew's split by configuration is latkit's `--table .config`.
    for (args, latkit_args) in [
        (
            "-filter /align:0 -row /size -col /poly crc-new.txt",
            "-filter /align:0 -row /size -col /poly",
        ),
        ("-row .name new.txt", "-row .name"),
        ("-col /format new.txt", "-col /format"),
        ("-col /format -row .name new.txt", "-col /format -row .name"),
        (
            "-col /format@(gob|json) -row .name -ignore .file new.txt",
            "-col /format@(gob|json) -row .name -ignore .file",
        ),
        ("crc-old.txt crc-new.txt", "-table .config"),
        (
            "-table /align -row /size@num -col /poly@(Koopman|IEEE) crc-new.txt",
            "-table /align -row /size@num -col /poly@(Koopman|IEEE)",
        ),
        (
            "-ignore note -table .name -row /poly -col /align crc-old.txt crc-new.txt",
            "-ignore note -table .name -row /poly -col /align",
        ),
    ] {
        // `|` stands for a space inside one argument.
        let split =
            |text: &str| -> Vec<String> { text.split(' ').map(|w| w.replace('|', " ")).collect() };
        let args = split(args);
        let inputs = (args.iter())
            .filter(|a| a.ends_with(".txt"))
            .map(|a| data.join(a))
            .collect();
        cases.push((args, inputs, split(latkit_args)));
    }
    // One file alone: a summary with its geomean.
    cases.push((vec!["old.txt".into()], vec![data.join("old.txt")], vec![]));
    // benchstat's filters, typed as benchstat takes them (`-filter EXPR`).
    for filter in [
        "/align:0",
        "/size:(512 OR 4kB) -/poly:Koopman",
        "/poly:/^C/ .unit:sec/op",
        "(/align:1 AND /size:15) OR /poly:IEEE",
    ] {
        cases.push((
            [
                "-ignore",
                "note",
                "-filter",
                filter,
                "crc-old.txt",
                "crc-new.txt",
            ]
            .map(String::from)
            .to_vec(),
            vec![data.join("crc-old.txt"), data.join("crc-new.txt")],
            owned(&["-ignore", "note", "-filter", filter]),
        ));
    }
    cases.push((
        [
            "-filter",
            ".fullname:Encode/format=json-48",
            "old.txt",
            "new.txt",
        ]
        .map(String::from)
        .to_vec(),
        vec![data.join("old.txt"), data.join("new.txt")],
        owned(&["-filter", ".fullname:Encode/format=json-48"]),
    ));
    let mut deliberate = 0;
    for (args, inputs, extra) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let mut theirs = benchstat_rows(&data, &args);
        let mut ours = latkit_rows(inputs, &extra);
        // A side of one value is no sample: benchstat tests it (`~ p=1.000 n=1`), latkit
        // gives the change's size and says it was not tested (`+1.00% n=1`).
        theirs.retain(|key, row| {
            let one = row
                .last()
                .is_some_and(|p| p.starts_with("p=") && p.ends_with(" n=1"));
            let untested = one
                && ours.get(key).is_some_and(|our| {
                    our.len() == row.len()
                        && our[..row.len() - 2] == row[..row.len() - 2]
                        && our[row.len() - 1] == "n=1"
                        && our[row.len() - 2].ends_with('%')
                });
            if one && untested {
                ours.remove(key);
                deliberate += 1;
            }
            !(one && untested)
        });
        // Where the inputs' benchmark sets differ, benchstat takes each geomean column over
        // its own input's benchmarks and its change over the common ones; latkit takes both
        // over the common ones, and says so. The change is the same.
        let sets_differ = |table: &(usize, String, String)| {
            theirs.iter().any(|(k, row)| {
                (k.0, &k.1) == (table.0, &table.1)
                    && k.2 != "geomean"
                    && row.contains(&String::new())
            })
        };
        let by_rule: Vec<_> = (theirs.iter())
            .filter(|(k, row)| {
                k.2 == "geomean"
                    && sets_differ(k)
                    && ours
                        .get(*k)
                        .is_some_and(|our| our.last() == row.last() && our != *row)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in by_rule {
            theirs.remove(&key);
            ours.remove(&key);
            deliberate += 1;
        }
        total += theirs.len();
        // A filter or projection keeps what benchstat keeps, no more.
        let selective = ["-filter", "-row", "-col", "-table"];
        if extra.iter().any(|a| selective.contains(a)) && !theirs.keys().eq(ours.keys()) {
            let extra: Vec<_> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
            differ.push(format!(
                "benchstat {}: latkit also kept {extra:?}",
                args.join(" ")
            ));
        }
        differ.extend(agreement(
            &format!("benchstat {}", args.join(" ")),
            &theirs,
            &ours,
        ));
    }
    let agreed = total.saturating_sub(differ.len());
    settle("benchstat testdata", agreed, deliberate, &differ, 230);
}

/// A real Base/Tip pair from the Go toolchain: one package benchmarked twice, with -benchmem,
/// so that integer B/op and allocs/op give ties and equal medians.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go and benchstat; `--features interop` runs it"
)]
fn benchstat_on_a_real_go_pair() {
    // go builds and benchmarks: never beside another test's measurement.
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("pair");
    std::fs::create_dir(&module).unwrap();
    std::fs::write(
        module.join("go.mod"),
        "module example.com/pair\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(
        module.join("pair_test.go"),
        r#"package pair

import (
	"sort"
	"strings"
	"testing"
)

var sink interface{}

func BenchmarkJoin(b *testing.B) {
	parts := []string{"alpha", "beta", "gamma", "delta"}
	for i := 0; i < b.N; i++ {
		sink = strings.Join(parts, ",")
	}
}

func BenchmarkSort(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := []int{9, 3, 7, 1, 8, 2, 6, 4, 5, 0}
		sort.Ints(s)
		sink = s
	}
}

func BenchmarkMap(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := make(map[int]int, 8)
		for j := 0; j < 8; j++ {
			m[j] = j
		}
		sink = m
	}
}
"#,
    )
    .unwrap();
    let go = crate::common::peer("go", "apt-get install golang-go");
    let mut files = Vec::new();
    for name in ["base.txt", "tip.txt"] {
        let out = Process::new(&go)
            .current_dir(&module)
            .args([
                "test",
                "-run",
                "^$",
                "-bench",
                ".",
                "-benchmem",
                "-count",
                "8",
            ])
            .args(["-benchtime", "20000x"])
            .env("GOFLAGS", "-mod=mod")
            .output()
            .expect("go test runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = dir.path().join(name);
        std::fs::write(&path, &out.stdout).unwrap();
        files.push(path);
    }
    let mut differ = Vec::new();
    let mut total = 0;
    for (a, b) in [(0, 1), (1, 0)] {
        let theirs = benchstat_rows(
            dir.path(),
            &[files[a].to_str().unwrap(), files[b].to_str().unwrap()],
        );
        let ours = latkit_rows(&[files[a].clone(), files[b].clone()], &[]);
        total += theirs.len();
        differ.extend(agreement("benchstat (real go pair)", &theirs, &ours));
    }
    assert!(
        differ.is_empty(),
        "rows that differ:\n{}",
        differ.join("\n")
    );
    assert_eq!(
        total,
        2 * 3 * 4,
        "3 units × (3 benchmarks + geomean), both orders"
    );
}

// ---------------------------------------------------------------------------------------------
// google/benchmark's compare.py

/// compare.py (Debian's libbenchmark-tools) run with the Python that has scipy; its
/// `--dump_to_json` report.
fn compare_py(dir: &Path, args: &[&str]) -> Vec<Value> {
    let script = Path::new("/usr/share/benchmark/compare.py");
    assert!(
        script.exists(),
        "google/benchmark's compare.py is not installed; `bash .ci/setup` installs it \
         (apt-get install libbenchmark-tools python3-scipy)"
    );
    let dump = dir.join("compare.json");
    let out = Process::new("/usr/bin/python3")
        .arg(script)
        .args(["--no-color", "-d"])
        .arg(&dump)
        .args(args)
        .output()
        .expect("python3 runs compare.py");
    assert!(
        out.status.success(),
        "compare.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&std::fs::read(&dump).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// latkit's change cells by (metric, benchmark): the cell and the row's values per column.
fn latkit_changes(inputs: &[PathBuf], args: &[&str]) -> BTreeMap<(String, String), Value> {
    let doc = compare_json(inputs, args);
    let mut changes = BTreeMap::new();
    for table in doc["tables"].as_array().unwrap() {
        let metric = table["title"].as_str().unwrap().to_string();
        for row in table["rows"].as_array().unwrap() {
            let change = row["cells"].as_array().unwrap().last().unwrap().clone();
            let name = row["benchmark"].as_str().unwrap().to_string();
            changes.insert((metric.clone(), name), change);
        }
    }
    changes
}

/// Whether scipy's `mannwhitneyu` (method auto) and latkit both compute the exact p-value.
fn both_exact(a: &[f64], b: &[f64]) -> bool {
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let ties = pooled.windows(2).any(|w| w[0] == w[1]);
    // scipy counts exactly unless both samples exceed 8 or any value ties.
    let scipy = !(ties || a.len() > 8 && b.len() > 8);
    let latkit = a.len() <= 50 && b.len() <= 50;
    scipy && latkit
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs google/benchmark's compare.py and scipy; `--features interop` runs it"
)]
fn compare_py_on_its_own_inputs() {
    let data = conformance("gbench");
    let file = |name: &str| data.join(name).to_string_lossy().into_owned();
    // (compare.py's arguments, latkit's inputs, latkit's arguments)
    let cases: Vec<(Vec<String>, Vec<PathBuf>, Vec<&str>)> = vec![
        (
            vec![
                "benchmarks".into(),
                file("test1_run1.json"),
                file("test1_run2.json"),
            ],
            vec![data.join("test1_run1.json"), data.join("test1_run2.json")],
            vec![],
        ),
        (
            vec![
                "benchmarks".into(),
                file("test3_run0.json"),
                file("test3_run1.json"),
            ],
            vec![data.join("test3_run0.json"), data.join("test3_run1.json")],
            vec![],
        ),
        (
            vec![
                "benchmarks".into(),
                file("test4_run0.json"),
                file("test4_run1.json"),
            ],
            vec![data.join("test4_run0.json"), data.join("test4_run1.json")],
            vec![],
        ),
        (
            vec![
                "benchmarks".into(),
                file("test5_run0.json"),
                file("test5_run1.json"),
            ],
            vec![data.join("test5_run0.json"), data.join("test5_run1.json")],
            vec![],
        ),
        (
            vec![
                "filters".into(),
                file("test2_run.json"),
                "BM_Z.ro".into(),
                "BM_O.e".into(),
            ],
            vec![data.join("test2_run.json")],
            vec!["--family", "BM_Z.ro", "--family", "BM_O.e"],
        ),
        (
            vec![
                "benchmarksfiltered".into(),
                file("test2_run.json"),
                "BM_Z.ro".into(),
                file("test2_run.json"),
                "BM_O.e".into(),
            ],
            vec![data.join("test2_run.json"), data.join("test2_run.json")],
            vec!["--family", "BM_Z.ro", "--family", "BM_O.e"],
        ),
    ];
    let (agreed, deliberate, differ) = agree_with_compare_py(&cases);
    settle("compare.py on its inputs", agreed, deliberate, &differ, 51);
    // Where its p-values differ by rule (test3's ties), the report says why.
    let doc = compare_json(&cases[1].1, &[]);
    assert!(
        doc["notes"]
            .to_string()
            .contains("compare.py (scipy) takes the normal approximation"),
        "{}",
        doc["notes"]
    );
}

/// A real google/benchmark binary built here, run twice with repetitions: every aggregate row
/// (mean, median, stddev, cv as a percentage), the complexity fit (BigO, RMS) and the U test
/// on the repetitions, as compare.py reports them.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++, google/benchmark and its compare.py; `--features interop` runs it"
)]
fn compare_py_on_a_real_run_with_aggregates() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for name in ["a.json", "b.json"] {
        let path = dir.path().join(name);
        let status = Process::new(crate::common::replay_bench())
            .args([
                "--benchmark_min_time=0.01",
                "--benchmark_repetitions=4",
                "--benchmark_filter=Entity|DiffFrames",
            ])
            .arg(format!("--benchmark_out={}", path.display()))
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        files.push(path);
    }
    let text = |p: &PathBuf| p.to_string_lossy().into_owned();
    let cases = vec![(
        vec!["benchmarks".to_string(), text(&files[0]), text(&files[1])],
        files.clone(),
        vec![],
    )];
    let (agreed, deliberate, differ) = agree_with_compare_py(&cases);
    settle("compare.py on a real run", agreed, deliberate, &differ, 48);
    // 5 benchmarks: mean, median, stddev and cv, time and CPU each, and two p-values.
}

type CompareCase<'a> = (Vec<String>, Vec<PathBuf>, Vec<&'a str>);

/// Whether an input has rows of run_type `aggregate` without an `aggregate_name`.
fn unnamed_aggregates(inputs: &[PathBuf]) -> bool {
    inputs.iter().any(|file| {
        let doc: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        doc["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["run_type"] == "aggregate" && b.get("aggregate_name").is_none())
    })
}

/// Runs each case through compare.py and latkit: (figures that agree, figures that differ by
/// a documented rule, figures that differ).
fn agree_with_compare_py(cases: &[CompareCase]) -> (usize, usize, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let (mut agreed, mut deliberate) = (0, 0);
    let mut differ = Vec::new();
    for (args, inputs, extra) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let theirs = compare_py(dir.path(), &args);
        let ours = latkit_changes(inputs, extra);
        let single = ours
            .values()
            .filter(|c| c["type"] == "change" && c["n"].is_u64())
            .all(|c| c["n"] == 1 && c["n_base"] == 1);
        for entry in &theirs {
            let name = entry["name"].as_str().unwrap();
            let row = if name == "OVERALL_GEOMEAN" {
                "geomean"
            } else {
                name
            };
            // compare.py's geomean is over every repetition row, latkit's over each
            // benchmark's median unless `--geomean repetitions` asks for compare.py's: the
            // same figure when every benchmark ran once.
            if row == "geomean" && !single && unnamed_aggregates(inputs) {
                // Rows marked aggregate that name no statistic (test3's, written by hand):
                // compare.py leaves them out of its geomean by run_type, latkit reads them as
                // the repetitions they look like.
                deliberate += 2;
                continue;
            }
            if row == "geomean" && !single {
                let mut repetitions = extra.clone();
                repetitions.extend(["--geomean", "repetitions"]);
                let ours = latkit_changes(inputs, &repetitions);
                for (field, metric) in [("time", "real_time"), ("cpu", "cpu_time")] {
                    let want = entry["measurements"][0][field].as_f64().unwrap();
                    let got = ours[&(metric.to_string(), row.to_string())]["percent"].as_f64();
                    match got.map(|p| format!("{:+.4}", p / 100.0)) {
                        Some(got) if got == format!("{want:+.4}") => agreed += 1,
                        got => differ.push(format!("{args:?} geomean {metric}: {want} vs {got:?}")),
                    }
                }
                deliberate += 1;
                continue;
            }
            let measurements = entry["measurements"].as_array().unwrap();
            for (field, metric, values) in [
                ("time", "real_time", "real_time"),
                ("cpu", "cpu_time", "cpu_time"),
            ] {
                let Some(change) = ours.get(&(metric.to_string(), row.to_string())) else {
                    let rows = ours.keys().filter(|(m, _)| m == metric).count();
                    if row == "geomean" && rows == 1 {
                        // One benchmark: its geomean is itself, which latkit (as benchstat)
                        // does not repeat.
                        deliberate += 1;
                    } else {
                        differ.push(format!("{args:?} {row} {metric}: not in latkit's output"));
                    }
                    continue;
                };
                let one_each = change["n"] == 1 && change["n_base"] == 1;
                if measurements.len() == 1 && (one_each || row == "geomean") {
                    let want = format!("{:+.4}", measurements[0][field].as_f64().unwrap());
                    let got = change["percent"]
                        .as_f64()
                        .map(|p| format!("{:+.4}", p / 100.0));
                    if got.as_deref() == Some(want.as_str()) {
                        agreed += 1;
                    } else {
                        differ.push(format!("{args:?} {row} {metric}: {want} vs {got:?}"));
                    }
                }
                let utest = &entry["utest"];
                let Some(p) = utest[format!("{field}_pvalue")].as_f64() else {
                    continue;
                };
                let (n1, n2) = (
                    utest["nr_of_repetitions"].as_u64().unwrap(),
                    utest["nr_of_repetitions_other"].as_u64().unwrap(),
                );
                let samples = |file: &Path| -> Vec<f64> {
                    let doc: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
                    doc["benchmarks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|b| b["name"] == name && b.get("aggregate_name").is_none())
                        .map(|b| b[values].as_f64().unwrap())
                        .collect()
                };
                let (a, b) = (samples(&inputs[0]), samples(&inputs[inputs.len() - 1]));
                assert_eq!((a.len() as u64, b.len() as u64), (n1, n2), "{name}");
                if both_exact(&a, &b) {
                    let got = change["p"].as_f64().unwrap();
                    if (got - p).abs() < 1e-9 {
                        agreed += 1;
                    } else {
                        differ.push(format!("{args:?} {row} {metric} p: {p} vs {got}"));
                    }
                } else {
                    // scipy takes the normal approximation here; latkit counts exactly.
                    deliberate += 1;
                }
            }
        }
    }
    (agreed, deliberate, differ)
}

// ---------------------------------------------------------------------------------------------
// HdrHistogram (the Java reference implementation)

/// Sample sets in ns: a sequence where many percentile levels fall on whole counts, a long
/// tail, values repeated in few buckets, and a handful.
fn sample_sets() -> Vec<(&'static str, Vec<u64>)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let tail: Vec<u64> = (0..20_000)
        .map(|_| {
            let u: f64 = next();
            // A body near 20 µs with a Pareto tail reaching tens of ms.
            (20_000.0 * (1.0 + 0.2 * u) / (1.0 - 0.999 * next()).powf(0.8)) as u64
        })
        .collect();
    let few_buckets: Vec<u64> = (0..5_000)
        .map(|i| [1_000, 5_000, 5_000, 80_000][i % 4])
        .collect();
    vec![
        ("sequence", (1..=3000).map(|v| v * 1000).collect()),
        ("tail", tail),
        ("few-buckets", few_buckets),
        (
            "seven",
            vec![3_100, 2_900, 3_000, 150_000, 3_050, 2_950, 3_020],
        ),
    ]
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs java and HdrHistogram; `--features interop` runs it"
)]
fn hdrhistogram_reference_rows_and_figures() {
    let jar = Path::new("/usr/share/java/hdrhistogram.jar");
    assert!(
        jar.exists(),
        "HdrHistogram's Java implementation is not installed; `bash .ci/setup` installs it \
         (apt-get install libhdrhistogram-java default-jdk-headless)"
    );
    let java = crate::common::peer("java", "apt-get install default-jdk-headless");
    let dir = tempfile::tempdir().unwrap();
    let (mut agreed, mut compared) = (0, 0);
    let mut differ = Vec::new();
    for (name, samples) in sample_sets() {
        let values = dir.path().join(format!("{name}.txt"));
        let text: Vec<String> = samples.iter().map(u64::to_string).collect();
        std::fs::write(&values, text.join("\n")).unwrap();
        let out = dir.path().join(name);
        let status = Process::new(&java)
            .arg("-cp")
            .arg(jar)
            .arg(conformance("hdrhistogram/Reference.java"))
            .arg(&values)
            .arg(&out)
            .arg("3")
            .status()
            .expect("java runs");
        assert!(status.success(), "Reference.java on {name}");
        let file = |ext: &str| out.with_extension(ext);
        // 1. The .hgrm latkit writes from the interval log, row for row.
        let theirs = std::fs::read_to_string(file("hgrm")).unwrap();
        let ours = crate::common::stdout_of(
            latkit()
                .arg("parse")
                .arg(file("hlog"))
                .args(["--format", "hgrm"]),
        );
        let (theirs, ours): (Vec<&str>, Vec<&str>) =
            (theirs.lines().collect(), ours.lines().collect());
        for (i, want) in theirs.iter().enumerate() {
            compared += 1;
            match ours.get(i) {
                Some(got) if got == want => agreed += 1,
                got => differ.push(format!("{name}.hgrm line {}: {want:?} vs {got:?}", i + 1)),
            }
        }
        if ours.len() != theirs.len() {
            differ.push(format!(
                "{name}.hgrm: {} lines vs {}",
                theirs.len(),
                ours.len()
            ));
        }
        // 2. latkit's own figures of the log equal the reference's.
        let figures: BTreeMap<String, f64> = std::fs::read_to_string(file("txt"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
            .collect();
        let doc = json_of(
            latkit()
                .arg("parse")
                .arg(file("hlog"))
                .args(["--format", "json"]),
        );
        let latency = crate::common::metric(&doc["runs"][0]["benchmarks"][0], "latency");
        let (p, s) = (&latency["percentiles"], &latency["summary"]);
        for (key, got) in [
            ("count", &p["count"]),
            ("min", &p["min"]),
            ("max", &p["max"]),
            ("p50.0", &p["p50"]),
            ("p90.0", &p["p90"]),
            ("p99.0", &p["p99"]),
            ("p99.9", &p["p99_9"]),
            ("p99.99", &p["p99_99"]),
            ("mean", &s["mean"]),
        ] {
            compared += 1;
            let (want, got) = (figures[key], got.as_f64().unwrap());
            if (want - got).abs() <= 1e-6 * want.abs().max(1.0) {
                agreed += 1;
            } else {
                differ.push(format!("{name} {key}: {want} vs {got}"));
            }
        }
        // 3. The .hgrm read back: its own count, maximum and mean.
        let doc = json_of(
            latkit()
                .arg("parse")
                .arg(file("hgrm"))
                .args(["--format", "json"]),
        );
        let s = &crate::common::metric(&doc["runs"][0]["benchmarks"][0], "latency")["summary"];
        for (key, got, tolerance) in [
            ("count", &s["n"], 0.0),
            ("max", &s["max"], 0.5),
            ("mean", &s["mean"], 0.5),
        ] {
            compared += 1;
            let (want, got) = (figures[key], got.as_f64().unwrap());
            // The .hgrm prints µs to three decimals.
            if (want - got).abs() <= tolerance {
                agreed += 1;
            } else {
                differ.push(format!("{name}.hgrm read back {key}: {want} vs {got}"));
            }
        }
    }
    settle("HdrHistogram", agreed, 0, &differ, compared.min(100));
    assert_eq!(agreed, compared);
}

// ---------------------------------------------------------------------------------------------
// pytest-benchmark

/// pytest-benchmark's own storage files (saved without per-round data, as version 2.5 and
/// `--benchmark-autosave` keep them): `pytest-benchmark compare --csv` on each against
/// latkit's figures of the same file.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs python3 and pytest-benchmark; `--features interop` runs it"
)]
fn pytest_benchmark_storage_files_figure_for_figure() {
    let _cores = crate::common::busy();
    let compare = crate::common::pytest().with_file_name("pytest-benchmark");
    let dir = tempfile::tempdir().unwrap();
    let data = conformance("pytest-benchmark");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let columns = ["min", "max", "mean", "stddev", "median", "rounds", "ops"];
    let (mut agreed, mut differ) = (0, Vec::new());
    for file in &files {
        let csv = dir.path().join("out");
        let out = Process::new(&compare)
            .arg("compare")
            .arg(format!("--csv={}", csv.display()))
            .arg(format!("--columns={}", columns.join(",")))
            .arg(file)
            .output()
            .expect("pytest-benchmark runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(csv.with_extension("csv")).unwrap();
        let doc = json_of(
            latkit()
                .arg("parse")
                .arg(file)
                .args(["--format", "json", "-q"]),
        );
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split(',').collect();
            let bench = crate::common::bench(&doc, fields[0]);
            let summary = &crate::common::metric(bench, "time")["summary"];
            let ops = crate::common::first_value(bench, "ops");
            for (column, theirs) in columns.iter().zip(&fields[1..]) {
                let theirs: f64 = theirs.parse().unwrap();
                let ours = match *column {
                    "rounds" => summary["n"].as_f64().unwrap(),
                    "ops" => ops,
                    // latkit keeps times in ns.
                    key => summary[key].as_f64().unwrap_or(0.0) / 1e9,
                };
                if (ours - theirs).abs() <= 1e-12 * theirs.abs().max(1e-300) {
                    agreed += 1;
                } else {
                    differ.push(format!("{} {}: {theirs} vs {ours}", file.display(), column));
                }
            }
        }
    }
    settle("pytest-benchmark", agreed, 0, &differ, 7 * files.len());
    // A shortened `data` list (a text marker where rounds were left out) is no list of every
    // round: the file's own figures stand, as without `data`.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let stats = &mut doc["benchmarks"][0]["stats"];
    stats["data"] = serde_json::json!([2.2e-7, 2.3e-7, "... omitted"]);
    let rounds = stats["rounds"].clone();
    let shortened = dir.path().join("shortened.json");
    std::fs::write(&shortened, doc.to_string()).unwrap();
    let ours = json_of(
        latkit()
            .arg("parse")
            .arg(&shortened)
            .args(["--format", "json", "-q"]),
    );
    let bench = &ours["runs"][0]["benchmarks"][0];
    assert_eq!(crate::common::metric(bench, "time")["summary"]["n"], rounds);
    assert!(
        ours["notes"].to_string().contains("shortened"),
        "{}",
        ours["notes"]
    );
}

// ---------------------------------------------------------------------------------------------
// Bencher and github-action-benchmark (no peer runs here: their published files and meaning)

/// Exit code of `latkit compare ARGS` on `base` and `new`.
fn compare_exit(base: &Path, new: &Path, args: &[&str]) -> i32 {
    let out = latkit()
        .arg("compare")
        .args(args)
        .arg(base)
        .arg(new)
        .output()
        .unwrap();
    out.status.code().unwrap()
}

/// `file` with the `value` (and bounds) of every figure of `measure` scaled by `factor`.
fn scaled_bmf(file: &Path, measure: &str, factor: f64, out: &Path) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    for (_, measures) in doc.as_object_mut().unwrap() {
        if let Some(figures) = measures.get_mut(measure).and_then(Value::as_object_mut) {
            for (_, v) in figures.iter_mut() {
                *v = serde_json::json!(v.as_f64().unwrap() * factor);
            }
        }
    }
    std::fs::write(out, doc.to_string()).unwrap();
}

#[test]
fn bencher_metric_format_values_units_and_directions() {
    let (mut agreed, mut differ) = (0, Vec::new());
    let mut check = |what: String, ok: bool| {
        if ok {
            agreed += 1;
        } else {
            differ.push(what);
        }
    };
    // Bencher's adapter fixture: every value and bound, in ns.
    let doc = crate::common::parse_json(&conformance("bencher/report_latency.json"));
    for (name, value, bound) in [
        ("tests::benchmark_a", 3247.0, 1044.0),
        ("tests::benchmark_b", 3443.0, 2275.0),
        ("tests::benchmark_c", 3361.0, 1093.0),
    ] {
        let bench = crate::common::bench(&doc, name);
        check(
            format!("{name} latency"),
            crate::common::first_value(bench, "latency") == value,
        );
        check(
            format!("{name} latency lower"),
            crate::common::first_value(bench, "latency lower") == bound,
        );
        check(
            format!("{name} latency upper"),
            crate::common::first_value(bench, "latency upper") == bound,
        );
    }
    // The reference page's example: Bencher's built-in measures with their units and
    // directions (throughput is operations per second, higher is better).
    let example = conformance("bencher/reference-example.json");
    let doc = crate::common::parse_json(&example);
    for (bench, measure, base_value, dimension, better) in [
        ("benchmark_name", "latency", 88.0, "time", "lower"),
        ("benchmark_name", "throughput", 5.55, "event_rate", "higher"),
        (
            "/bin/sh -c ./my_build_script.sh",
            "build-time",
            87e9,
            "time",
            "lower",
        ),
        ("my_binary", "file-size", 42.0, "bytes", "lower"),
    ] {
        let m = crate::common::metric(crate::common::bench(&doc, bench), measure);
        check(
            format!("{bench} {measure}: {m}"),
            m["values"][0].as_f64() == Some(base_value)
                && m["unit"]["dimension"] == dimension
                && m["better"] == better,
        );
    }
    // A gate on throughput fails when it falls, not when it rises.
    let dir = tempfile::tempdir().unwrap();
    let (fell, rose) = (dir.path().join("fell.json"), dir.path().join("rose.json"));
    scaled_bmf(&example, "throughput", 0.8, &fell);
    scaled_bmf(&example, "throughput", 1.2, &rose);
    let gate = ["--fail-on", "throughput:5%", "--strict"];
    check(
        "throughput -20 % fails".into(),
        compare_exit(&example, &fell, &gate) == 1,
    );
    check(
        "throughput +20 % passes".into(),
        compare_exit(&example, &rose, &gate) == 0,
    );
    // latkit's own BMF keeps every time a time: exec's user and system read back in ns.
    let bmf = dir.path().join("exec.bmf.json");
    let status = latkit()
        .args(["exec", "--runs", "3", "-q", "--format", "bmf", "--out"])
        .arg(&bmf)
        .args(["true"])
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let doc = crate::common::parse_json(&bmf);
    let bench = &doc["runs"][0]["benchmarks"][0];
    for measure in ["latency", "latency-user", "latency-system"] {
        check(
            format!("exec BMF {measure} is a time"),
            crate::common::metric(bench, measure)["unit"]["dimension"] == "time",
        );
    }
    settle("Bencher Metric Format", agreed, 0, &differ, 17);
}

#[test]
fn github_action_benchmark_files_both_ways() {
    let bigger = conformance("github-action-benchmark/customBiggerIsBetter_output.json");
    let smaller = conformance("github-action-benchmark/customSmallerIsBetter_output2.json");
    let (mut agreed, mut differ) = (0, Vec::new());
    let doc = crate::common::parse_json(&smaller);
    for (name, value) in [
        ("No instrumentation", 90.9439),
        ("Deactivated probe", 445.661),
        ("No logging", 1847.38),
        ("Binary file", 3886.75),
    ] {
        let m = crate::common::metric(crate::common::bench(&doc, name), "ns");
        if m["values"][0].as_f64() == Some(value) && m["better"] == "lower" {
            agreed += 1;
        } else {
            differ.push(format!("{name}: {m}"));
        }
    }
    // A customBiggerIsBetter file: every figure higher is better, by its tool's name or by
    // --better; a fall fails the gate, a rise passes.
    let doc = json_of(
        latkit()
            .args([
                "parse",
                "--input-format",
                "gab-bigger",
                "--format",
                "json",
                "-q",
            ])
            .arg(&bigger),
    );
    for (name, unit, value) in [
        (
            "My Custom Bigger Is Better Benchmark - Throughput",
            "req/s",
            70.0,
        ),
        (
            "My Custom Bigger Is Better Benchmark - Free Memory",
            "Megabytes",
            150.0,
        ),
    ] {
        let m = crate::common::metric(crate::common::bench(&doc, name), unit);
        if m["values"][0].as_f64() == Some(value) && m["better"] == "higher" {
            agreed += 1;
        } else {
            differ.push(format!("{name}: {m}"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut less: Value = serde_json::from_slice(&std::fs::read(&bigger).unwrap()).unwrap();
    for entry in less.as_array_mut().unwrap() {
        entry["value"] = serde_json::json!(entry["value"].as_f64().unwrap() * 0.8);
    }
    let fell = dir.path().join("fell.json");
    std::fs::write(&fell, less.to_string()).unwrap();
    for (args, expected) in [
        (vec!["--input-format", "gab-bigger"], 1),
        (vec!["--better", "Megabytes=higher"], 1),
        (vec![], 0),
    ] {
        let mut all = args.clone();
        all.extend(["--fail-on", "Megabytes:5%", "--strict"]);
        let got = compare_exit(&bigger, &fell, &all);
        if got == expected {
            agreed += 1;
        } else {
            differ.push(format!(
                "Free Memory -20 % with {args:?}: exit {got}, expected {expected}"
            ));
        }
    }
    settle("github-action-benchmark", agreed, 0, &differ, 9);
}

// ---------------------------------------------------------------------------------------------
// VIIPER's lat_bench.go

/// The data rows of a markdown table of six columns (lat_bench.go's and latkit's first table):
/// benchmark, count, ns/op, % of Full, client share, latency share.
fn six_column_rows(markdown: &str) -> BTreeMap<String, Vec<String>> {
    let mut rows = BTreeMap::new();
    let table = markdown
        .split("\n\n")
        .find(|t| t.contains("Client Share %"));
    for line in table.unwrap_or_default().lines() {
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let data = cells.len() == 6 && cells[1].chars().all(|c| c.is_ascii_digit());
        if data && !cells[1].is_empty() {
            rows.insert(cells[0].clone(), cells[1..].to_vec());
        }
    }
    rows
}

#[test]
fn lat_bench_go_roles_and_percent_of_full() {
    // The real script's output on rows under an `E2E` parent, and with the baseline row gone
    // (`% of` the largest then, as the script falls back, with the missing role said).
    for (case, missing) in [
        ("e2e-parent", None),
        ("e2e-no-baseline", Some("*E2E*InputDelay*")),
    ] {
        let input = conformance(&format!("lat_bench/{case}.gobench.txt"));
        let theirs =
            std::fs::read_to_string(conformance(&format!("lat_bench/{case}.lat_bench.md")))
                .unwrap();
        let out = latkit()
            .args(["parse", "--format", "markdown"])
            .arg(&input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let ours = String::from_utf8_lossy(&out.stdout);
        let (want, got) = (six_column_rows(&theirs), six_column_rows(&ours));
        let differ = agreement("lat_bench.go", &want, &got);
        settle(case, want.len() - differ.len(), 0, &differ, 3);
        match missing {
            Some(role) => {
                assert!(theirs.contains("Missing roles: e2e-inputdelay"), "{theirs}");
                assert!(ours.contains(&format!("no benchmark for role composite (`{role}`)")));
            }
            None => assert!(!ours.contains("no benchmark for role"), "{ours}"),
        }
    }
}

#[test]
fn a_role_two_benchmarks_play_is_never_the_first_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("two.txt");
    let text = std::fs::read_to_string(conformance("lat_bench/e2e-parent.gobench.txt")).unwrap();
    let doubled = text.replace(
        "BenchmarkE2E/4_E2E-PressAndRelease-8",
        "BenchmarkE2E/3_E2E-InputDelay-Again-8",
    );
    std::fs::write(&input, doubled).unwrap();
    let both = "3_E2E-InputDelay-8, BenchmarkE2E/3_E2E-InputDelay-Again-8";
    // The built-in preset stands aside, saying why: no "% of Full" of either row.
    let out = latkit()
        .args(["parse", "--format", "markdown"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        !md.contains("% of Full") && !md.contains("Client Share"),
        "{md}"
    );
    assert!(
        md.contains("(`*E2E*InputDelay*`) is played by 2 benchmarks in BenchmarkE2E")
            && md.contains(both)
            && md.contains("the preset is not applied"),
        "{md}"
    );
    // A suite file's roles are the user's: exit 2 naming both.
    let suite = dir.path().join("latkit.toml");
    std::fs::write(
        &suite,
        "[attribution]\npart = { bench = \"*Client-Write*\", label = \"Client\" }\n\
         rest = { bench = \"*Without-Client*\", label = \"Latency\" }\n\
         baseline = { bench = \"*E2E-InputDelay*\", label = \"Full\" }\n",
    )
    .unwrap();
    let out = latkit()
        .args(["parse", "--suite"])
        .arg(&suite)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("role Full (`*E2E-InputDelay*`) is played by 2") && err.contains(both));
    // An explicit --baseline names one benchmark too.
    let out = latkit()
        .args(["parse", "--baseline", "*InputDelay*"])
        .arg(conformance("lat_bench/e2e-parent.gobench.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("baseline `*InputDelay*` names 2 benchmarks"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// VTX's committed google/benchmark runs: the console and the JSON of one run

/// Every figure of a parsed run, by benchmark and metric, in order.
fn figures_of(report: &Value) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for bench in report["runs"][0]["benchmarks"].as_array().unwrap() {
        for metric in bench["metrics"].as_array().unwrap() {
            for value in metric["values"].as_array().unwrap() {
                let name = bench["name"].as_str().unwrap().to_string();
                let metric = metric["name"].as_str().unwrap().to_string();
                out.push((name, metric, value.as_f64().unwrap()));
            }
        }
    }
    out
}

/// The figures of one google/benchmark run read from its console output and from its JSON,
/// which must agree figure for figure as the console prints them (at least `at_least`): the
/// console's.
fn console_against_json(
    what: &str,
    console: &Path,
    json: &Path,
    at_least: usize,
) -> Vec<(String, String, f64)> {
    let read = |file: &Path| {
        json_of(
            latkit()
                .args(["parse", "--strict", "--format", "json"])
                .arg(file),
        )
    };
    let (ours, theirs) = (figures_of(&read(console)), figures_of(&read(json)));
    let mut differ: Vec<String> = (ours.iter().zip(&theirs))
        .filter(|(c, j)| !printed_as(c, j))
        .map(|(c, j)| format!("console {c:?}, JSON {j:?}"))
        .collect();
    if ours.len() != theirs.len() {
        differ.push(format!("{} figures against {}", ours.len(), theirs.len()));
    }
    let agreed = ours.len() - differ.len().min(ours.len());
    settle(what, agreed, 0, &differ, at_least);
    ours
}

/// Whether a figure read from google/benchmark's console is the JSON's as the console prints
/// it: three or more significant digits, and a `_cv` row's percentages with two decimals
/// (`0.52 %`, so 0.005 of a percent either way).
fn printed_as(console: &(String, String, f64), json: &(String, String, f64)) -> bool {
    let (c, j) = (console.2, json.2);
    let close = (c - j).abs() <= 0.006 * j.abs().max(1e-300);
    let percent = console.0.ends_with("_cv") && (c - j).abs() <= 0.0051;
    console.0 == json.0 && console.1 == json.1 && (close || percent)
}

#[test]
fn vtx_console_output_reads_as_its_json_line_for_line() {
    // The console drops nothing: the rows with an inverted counter (`158.948us`, seconds per
    // frame) were skipped, 27 lines of aggregates with their times.
    for run in ["bench_20260423_154238", "bench_20260423_162008"] {
        let console = fixture(&format!("vtx/{run}.txt"));
        let json = fixture(&format!("vtx/{run}.json"));
        let figures = console_against_json(run, &console, &json, 200);
        assert!(figures.iter().any(|f| f.1 == "ns_per_frame"), "{figures:?}");
    }
}

/// VTX's two committed runs: families reported as aggregates only (`repeats:5`), and benchmark
/// sets that differ. compare.py's OVERALL_GEOMEAN leaves every aggregate out (latkit took the
/// medians standing in for those families as repetitions: −52.77 % against −60.23 %).
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs google/benchmark's compare.py and scipy; `--features interop` runs it"
)]
fn compare_py_on_vtx_runs_with_aggregates_only_families() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        fixture("vtx/bench_20260423_154238.json"),
        fixture("vtx/bench_20260423_162008.json"),
    ];
    let text = |p: &PathBuf| p.to_string_lossy().into_owned();
    let theirs = compare_py(
        dir.path(),
        &["benchmarks", &text(&inputs[0]), &text(&inputs[1])],
    );
    let overall = theirs
        .iter()
        .find(|e| e["name"] == "OVERALL_GEOMEAN")
        .expect("compare.py's OVERALL_GEOMEAN");
    let ours = latkit_changes(&inputs, &["--geomean", "repetitions"]);
    let mut compared = 0;
    for (field, metric) in [("time", "real_time"), ("cpu", "cpu_time")] {
        let want = overall["measurements"][0][field].as_f64().unwrap() * 100.0;
        let key = ours
            .keys()
            .find(|(title, row)| title.contains(metric) && row == "geomean")
            .unwrap_or_else(|| panic!("no geomean of {metric}"));
        let got = ours[key]["percent"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-6,
            "{metric}: compare.py {want}, latkit {got}"
        );
        compared += 1;
    }
    println!("compare.py OVERALL_GEOMEAN on VTX: {compared}/2 agree");
}

/// A google/benchmark binary built here with an inverted rate counter (`kIsRate | kInvert`,
/// seconds per frame, printed as `158.948us`) and an items rate, run with repetitions: its
/// console output, written by its own `ConsoleReporter`, reads as the JSON of the same run.
const INVERTED_COUNTER_BENCH: &str = r#"
#include <benchmark/benchmark.h>
#include <vector>
static void BM_Frames(benchmark::State& state) {
    std::vector<int> v(4096, 1);
    long sum = 0;
    for (auto _ : state) {
        for (int x : v) sum += x;
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * 64);
    state.counters["ns_per_frame"] = benchmark::Counter(
        state.iterations() * 64.0,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Frames);
BENCHMARK(BM_Frames)->Name("BM_FramesAggregatesOnly")->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK_MAIN();
"#;

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs g++ and libbenchmark-dev; `--features interop` runs it"
)]
fn gbench_console_with_inverted_counters_reads_as_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("frames.cc");
    std::fs::write(&source, INVERTED_COUNTER_BENCH).unwrap();
    let binary = dir.path().join("frames");
    let built = Process::new("g++")
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&binary)
        .arg(&source)
        .args(["-lbenchmark", "-lpthread"])
        .status()
        .unwrap();
    assert!(built.success());
    let json = dir.path().join("run.json");
    let out = Process::new(&binary)
        .args(["--benchmark_min_time=0.01", "--benchmark_repetitions=2"])
        .arg(format!("--benchmark_out={}", json.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let console = dir.path().join("run.txt");
    std::fs::write(&console, &out.stdout).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ns_per_frame=") && text.contains("s "),
        "{text}"
    );
    let figures = console_against_json("gbench console with kInvert", &console, &json, 20);
    assert!(figures.iter().any(|f| f.1 == "ns_per_frame"), "{figures:?}");
}
