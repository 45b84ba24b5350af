//! Conformance with the peers, figure for figure: each peer's own test data (named in
//! `tests/fixtures/conformance/README.md`) run through the real peer and through latkit, and
//! every row compared. Each test prints its agreement count.

mod common;

use common::{fixture, json_of, latkit};
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
fn benchstat_rows(dir: &Path, args: &[&str]) -> BTreeMap<(String, String), BenchstatRow> {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let csv = common::benchstat_csv(dir, &args);
    let mut rows = BTreeMap::new();
    let mut unit = String::new();
    let mut in_table = 0;
    for line in csv.lines() {
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
        rows.insert((unit.clone(), bench_key(fields[0])), row);
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
fn latkit_rows(inputs: &[PathBuf], args: &[&str]) -> BTreeMap<(String, String), BenchstatRow> {
    let doc = compare_json(inputs, args);
    let mut rows = BTreeMap::new();
    for table in doc["tables"].as_array().unwrap() {
        let title = table["title"].as_str().unwrap();
        let title = title.trim_end_matches(" (environments differ)");
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
            rows.insert((unit.clone(), bench_key(name)), cells);
        }
    }
    rows
}

/// A one-file benchstat input split at its `note:` lines into a file per note, as
/// `benchstat -col note` splits it into columns; `Unit` lines stay where they were (the first
/// file), as benchstat honours unit metadata from anywhere in its inputs.
fn split_by_note(source: &Path, dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(source).unwrap();
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut preamble = String::new();
    for line in text.lines() {
        if let Some(note) = line.strip_prefix("note: ") {
            let stem = source.file_stem().unwrap().to_string_lossy();
            let path = dir.join(format!("{stem}.{note}.txt"));
            files.push((path, std::mem::take(&mut preamble)));
        } else if let Some((_, body)) = files.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else {
            preamble.push_str(line);
            preamble.push('\n');
        }
    }
    for (path, body) in &files {
        std::fs::write(path, body).unwrap();
    }
    files.into_iter().map(|(p, _)| p).collect()
}

#[test]
fn benchstat_testdata_row_for_row() {
    let data = conformance("benchstat");
    let dir = tempfile::tempdir().unwrap();
    let mut differ = Vec::new();
    let mut total = 0;
    // (benchstat's arguments, latkit's inputs, latkit's arguments): benchstat's own golden
    // cases (cmd/benchstat/main_test.go), and each pair in the other order too.
    let mut cases: Vec<(Vec<String>, Vec<PathBuf>, Vec<&str>)> = Vec::new();
    for (a, b, extra) in [
        ("old.txt", "new.txt", vec![]),
        ("new.txt", "old.txt", vec![]),
        // `-ignore note` (crcIgnore): latkit says the notes differ unless allowed.
        ("crc-old.txt", "crc-new.txt", vec!["--allow-env-mismatch"]),
        ("crc-new.txt", "crc-old.txt", vec!["--allow-env-mismatch"]),
    ] {
        let mut args: Vec<String> = vec![a.into(), b.into()];
        if a.starts_with("crc") {
            args.splice(0..0, ["-ignore".to_string(), "note".to_string()]);
        }
        cases.push((args, vec![data.join(a), data.join(b)], extra));
    }
    for single in ["units", "zero", "smallSample", "issue19565", "issue19634"] {
        let source = data.join(format!("{single}.txt"));
        let files = split_by_note(&source, dir.path());
        cases.push((
            vec!["-col".into(), "note".into(), format!("{single}.txt")],
            files,
            vec![],
        ));
    }
    // One file alone: a summary with its geomean.
    cases.push((vec!["old.txt".into()], vec![data.join("old.txt")], vec![]));
    for (args, inputs, extra) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let theirs = benchstat_rows(&data, &args);
        let ours = latkit_rows(inputs, extra);
        total += theirs.len();
        differ.extend(agreement(
            &format!("benchstat {}", args.join(" ")),
            &theirs,
            &ours,
        ));
    }
    let agreed = total.saturating_sub(differ.len());
    settle("benchstat testdata", agreed, 0, &differ, 180);
}

/// A real Base/Tip pair from the Go toolchain: one package benchmarked twice, with -benchmem,
/// so that integer B/op and allocs/op give ties and equal medians.
#[test]
fn benchstat_on_a_real_go_pair() {
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
    let go = common::peer("go", "apt-get install golang-go");
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
        "google/benchmark's compare.py is not installed; `bash .ci/run` installs it \
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
}

/// A real google/benchmark binary built here, run twice with repetitions: every aggregate row
/// (mean, median, stddev, cv as a percentage), the complexity fit (BigO, RMS) and the U test
/// on the repetitions, as compare.py reports them.
#[test]
fn compare_py_on_a_real_run_with_aggregates() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for name in ["a.json", "b.json"] {
        let path = dir.path().join(name);
        let status = Process::new(common::replay_bench())
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
            // benchmark's median: the same figure when every benchmark ran once.
            if row == "geomean" && !single {
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
