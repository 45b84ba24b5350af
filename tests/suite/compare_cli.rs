//! `latkit compare`: benchstat's verdicts and p-values on the same files (the real benchstat),
//! environment checks, the regression gate and its exit codes.

use crate::common::{fixture, json_of, latkit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A small deterministic generator, so every run of the suite compares the same files.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Go benchmark output: each benchmark `(name, ns/op, relative shift)` repeated `count`
/// times with ±`noise` uniform jitter; `integer` rounds ns/op (ties, as real fast benchmarks
/// have).
fn go_file(
    path: &Path,
    seed: u64,
    count: usize,
    benches: &[(&str, f64, f64)],
    noise: f64,
    integer: bool,
) {
    let mut rng = Lcg(seed);
    let mut text =
        String::from("goos: linux\ngoarch: amd64\npkg: example.com/cmp\ncpu: Test CPU @ 2.00GHz\n");
    for _ in 0..count {
        for (name, ns, shift) in benches {
            let v = ns * shift * (1.0 + noise * (2.0 * rng.next() - 1.0));
            let v = if integer {
                format!("{}", v.round())
            } else {
                format!("{v:.1}")
            };
            text.push_str(&format!(
                "Benchmark{name}-8\t1000000\t{v} ns/op\t16 B/op\t1 allocs/op\n"
            ));
        }
    }
    std::fs::write(path, text).unwrap();
}

/// `old.txt` and `new.txt` in `dir`: `count` repetitions of each list with 1 % jitter.
fn pair(
    dir: &Path,
    count: usize,
    old: &[(&str, f64, f64)],
    new: &[(&str, f64, f64)],
) -> (PathBuf, PathBuf) {
    let (old_path, new_path) = (dir.join("old.txt"), dir.join("new.txt"));
    go_file(&old_path, 1, count, old, 0.01, false);
    go_file(&new_path, 2, count, new, 0.01, false);
    (old_path, new_path)
}

/// benchstat's verdicts: (unit, benchmark) → (`+12.54%` or `~`, `p=0.001 n=6+8`).
fn benchstat_verdicts(old: &Path, new: &Path) -> BTreeMap<(String, String), (String, String)> {
    let csv = crate::common::benchstat_csv(Path::new("."), &[old.as_os_str(), new.as_os_str()]);
    let mut unit = String::new();
    let mut verdicts = BTreeMap::new();
    for line in csv.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() == 7 && fields[0].is_empty() && fields[6] == "P" {
            unit = fields[1].replace("sec/op", "ns/op");
        } else if fields.len() == 7 && fields[6].starts_with("p=") {
            let name = fields[0].trim_end_matches("-8").to_string();
            verdicts.insert(
                (unit.clone(), name),
                (fields[5].to_string(), fields[6].to_string()),
            );
        }
    }
    verdicts
}

/// latkit's verdicts in the same shape, from its JSON report.
fn latkit_verdicts(old: &Path, new: &Path) -> BTreeMap<(String, String), (String, String)> {
    let doc = json_of(
        latkit()
            .args(["compare", "--format", "json"])
            .arg(old)
            .arg(new),
    );
    let mut verdicts = BTreeMap::new();
    for table in doc["tables"].as_array().unwrap() {
        let unit = table["title"].as_str().unwrap().to_string();
        for row in table["rows"].as_array().unwrap() {
            let name = row["benchmark"].as_str().unwrap();
            if name == "geomean" {
                continue;
            }
            let change = row["cells"].as_array().unwrap().last().unwrap();
            let (n1, n2) = (
                change["n_base"].as_u64().unwrap(),
                change["n"].as_u64().unwrap(),
            );
            let n = if n1 == n2 {
                format!("n={n1}")
            } else {
                format!("n={n1}+{n2}")
            };
            let p = change["p"].as_f64().unwrap();
            let delta = match change["verdict"].as_str().unwrap() {
                "significant" => format!("{:+.2}%", change["percent"].as_f64().unwrap()),
                _ => "~".to_string(),
            };
            let name = name.trim_start_matches("Benchmark").to_string();
            verdicts.insert((unit.clone(), name), (delta, format!("p={p:.3} {n}")));
        }
    }
    verdicts
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go and benchstat; `--features interop` runs it"
)]
fn verdicts_and_p_values_match_the_real_benchstat() {
    let dir = tempfile::tempdir().unwrap();
    let benches = |shift: f64| {
        vec![
            ("Same", 1000.0, 1.0),
            ("Slight", 2000.0, 1.0 + (shift - 1.0) / 8.0),
            ("Shifted", 500.0, shift),
            ("Faster/size=64", 40.0, 2.0 - shift),
        ]
    };
    // (old count, new count, shift, noise, integer values): exact without ties (n ≤ 50),
    // exact with ties (n ≤ 25), and the normal approximation with and without ties beyond.
    let cases: &[(usize, usize, f64, f64, bool)] = &[
        (6, 8, 1.12, 0.03, false),
        (3, 3, 1.20, 0.03, false),
        (4, 4, 1.30, 0.01, false),
        (10, 10, 1.03, 0.05, false),
        (20, 20, 1.05, 0.08, true),
        (30, 30, 1.02, 0.05, true),
        (60, 55, 1.01, 0.03, false),
        // Ties with unequal sizes: the exact p-value is not symmetric under swapping the
        // samples (in benchstat too), so both orders are checked.
        (7, 9, 1.08, 0.05, true),
    ];
    let mut compared = 0;
    for (i, &(n_old, n_new, shift, noise, integer)) in cases.iter().enumerate() {
        let old = dir.path().join(format!("old{i}.txt"));
        let new = dir.path().join(format!("new{i}.txt"));
        go_file(&old, 2 * i as u64 + 1, n_old, &benches(1.0), noise, integer);
        go_file(
            &new,
            2 * i as u64 + 2,
            n_new,
            &benches(shift),
            noise,
            integer,
        );
        for (base, other) in [(&old, &new), (&new, &old)] {
            let theirs = benchstat_verdicts(base, other);
            let ours = latkit_verdicts(base, other);
            assert_eq!(theirs.len(), 12, "case {i}: benchstat rows {theirs:?}");
            if integer {
                // With ties the exact distribution of U is not symmetric: latkit counts the
                // splits at least as far from the mean, benchstat doubles one tail (which can
                // pass 1). The two agree on every verdict and to within 0.01.
                assert_eq!(ours.len(), theirs.len(), "case {i}");
                for (key, (delta, p_n)) in &theirs {
                    let (our_delta, our_p_n) = &ours[key];
                    assert_eq!(our_delta, delta, "case {i} {key:?}");
                    let split = |s: &str| {
                        let (p, n) = s.trim_start_matches("p=").split_once(' ').unwrap();
                        (p.parse::<f64>().unwrap(), n.to_string())
                    };
                    let ((p, n), (our_p, our_n)) = (split(p_n), split(our_p_n));
                    assert_eq!(our_n, n, "case {i} {key:?}");
                    assert!(
                        (our_p - p).abs() <= 0.01,
                        "case {i} {key:?}: {our_p} vs {p}"
                    );
                }
            } else {
                assert_eq!(ours, theirs, "case {i}: {n_old} vs {n_new}, shift {shift}");
            }
            compared += ours.len();
        }
    }
    assert_eq!(compared, 2 * 12 * cases.len());
}

#[test]
fn a_table_per_metric_with_ci_geomean_and_footnotes() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(
        dir.path(),
        3,
        &[("A", 100.0, 1.0), ("B", 200.0, 1.0)],
        &[("A", 100.0, 1.5), ("C", 50.0, 1.0)],
    );
    let out = crate::common::stdout_of(
        latkit()
            .args(["compare", "--format", "markdown", "--metric", "ns/op"])
            .arg(&old)
            .arg(&new),
    );
    assert!(out.contains("### ns/op"), "{out}");
    assert!(out.contains("| new.txt vs base |"), "{out}");
    assert!(
        out.contains("~ (p=0.100 n=3)"),
        "3 against 3 cannot reach 0.05: {out}"
    );
    assert!(
        out.contains("need >= 6 samples for a confidence interval at level 0.95"),
        "{out}"
    );
    assert!(
        out.contains("need >= 4 samples to detect a difference at alpha 0.05"),
        "{out}"
    );
    assert!(out.contains("BenchmarkB: missing from new.txt"), "{out}");
    assert!(out.contains("BenchmarkC: missing from old.txt"), "{out}");
    // Its figures and its change over the one benchmark both have (A), its change benchstat's;
    // benchstat's figures are each over its own input's (141.6 and 86.96 here).
    assert!(
        out.contains("| geomean | 100.3 |  | 150.6 |  | +50.15% |"),
        "{out}"
    );
    assert!(
        out.contains("its figures and its change are over the benchmarks every input has"),
        "{out}"
    );
}

#[test]
fn stdin_is_an_input_and_identical_runs_show_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.txt");
    go_file(
        &old,
        3,
        6,
        &[("A", 100.0, 1.0), ("B", 10.0, 1.0)],
        0.02,
        false,
    );
    let text = std::fs::read_to_string(&old).unwrap();
    let doc = json_of(
        latkit()
            .args(["compare", "--format", "json", "--metric", "ns/op"])
            .arg(&old)
            .arg("-")
            .write_stdin(text),
    );
    let table = &doc["tables"][0];
    assert_eq!(table["columns"][3]["header"], "stdin");
    for row in table["rows"].as_array().unwrap() {
        let change = &row["cells"].as_array().unwrap()[5];
        assert_eq!(change["percent"], 0.0, "{row}");
        if row["benchmark"] != "geomean" {
            assert_eq!(change["verdict"], "noise");
            assert_eq!(change["p"], 1.0);
        }
    }
}

fn with_cpu(path: &Path, cpu: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(
        path,
        text.replace("cpu: Test CPU @ 2.00GHz", &format!("cpu: {cpu}")),
    )
    .unwrap();
}

#[test]
fn different_machines_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(dir.path(), 6, &[("A", 100.0, 1.0)], &[("A", 100.0, 1.0)]);
    with_cpu(&new, "Other CPU @ 3.50GHz");
    let out = latkit()
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cpu model: Test CPU @ 2.00GHz (old.txt) vs Other CPU @ 3.50GHz (new.txt)"),
        "{err}"
    );
    assert!(err.contains("--allow-env-mismatch"), "{err}");

    for format in ["markdown", "csv", "json", "table"] {
        let out = crate::common::stdout_of(
            latkit()
                .args(["compare", "--allow-env-mismatch", "-q", "--format", format])
                .arg(&old)
                .arg(&new),
        );
        assert!(out.contains("environments differ"), "{format}: {out}");
        assert!(
            out.contains("environment differs: cpu model"),
            "{format}: {out}"
        );
    }
}

#[test]
fn gomaxprocs_settings_pair_up_only_with_the_mismatch_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(dir.path(), 6, &[("A", 100.0, 1.0)], &[("A", 100.0, 1.0)]);
    let text = std::fs::read_to_string(&new).unwrap();
    std::fs::write(&new, text.replace("BenchmarkA-8", "BenchmarkA-4")).unwrap();
    let out = latkit()
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("GOMAXPROCS: 8 (old.txt) vs 4 (new.txt)")
    );
    let doc = json_of(
        latkit()
            .args([
                "compare",
                "--allow-env-mismatch",
                "-q",
                "--format",
                "json",
                "--metric",
                "ns/op",
            ])
            .arg(&old)
            .arg(&new),
    );
    assert_eq!(doc["tables"][0]["rows"][0]["benchmark"], "BenchmarkA");
}

#[test]
fn the_gate_fails_only_on_significant_regressions_beyond_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(
        dir.path(),
        8,
        &[("A", 100.0, 1.0), ("B", 100.0, 1.0)],
        &[("A", 100.0, 1.12), ("B", 100.0, 0.9)],
    );
    let junit = dir.path().join("gate.xml");
    let out = latkit()
        .args(["compare", "--fail-on", "ns/op:+5%", "--junit"])
        .arg(&junit)
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("BenchmarkA") && err.contains("❌ Fail"),
        "{err}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    // A test case is named by its rule, the same every run; what was measured is its message.
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let name = case.attribute("name").unwrap();
        assert!(name.ends_with("+5%") && !name.contains("got"), "{name}");
    }
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert!(
        failure.attribute("message").unwrap().contains("got +"),
        "{xml}"
    );

    // Within the threshold; and a faster B is no regression of a lower-is-better metric.
    let pass = |rule: &str| {
        latkit()
            .args(["compare", "-q", "--fail-on", rule])
            .arg(&old)
            .arg(&new)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(pass("ns/op:+15%"), Some(0));
    assert_eq!(
        pass("ns/op:5%"),
        Some(1),
        "direction from the unit: higher ns/op is worse"
    );
    assert_eq!(
        pass("ns/op:-5%"),
        Some(1),
        "an explicit -5%: B's 10 % drop fails"
    );
}

#[test]
fn beyond_the_threshold_but_within_noise_needs_more_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(dir.path(), 2, &[("A", 100.0, 1.0)], &[("A", 100.0, 1.3)]);
    let out = latkit()
        .args(["compare", "--fail-on", "ns/op:+5%"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // 2 against 2 can never reach p ≤ 0.05, even one-sided (the smallest p is 1 / C(4, 2)):
    // the warning says how many repetitions could.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is beyond ns/op:+5% but within noise (one-sided permutation p=0.167)")
            && stderr.contains("repetitions a side (now 2 and 2) would tell it"),
        "{stderr}"
    );
    for flag in ["--fail-within-noise", "--strict"] {
        let strict = latkit()
            .args(["compare", "-q", flag, "--fail-on", "ns/op:+5%"])
            .arg(&old)
            .arg(&new)
            .output()
            .unwrap();
        assert_eq!(strict.status.code(), Some(1), "{flag}");
    }
}

/// One meaning per flag name: `--strict` rejects malformed lines where it is offered;
/// compare's "fail within noise" has its own name.
#[test]
fn strict_has_one_meaning() {
    for (command, shown) in [("compare", false), ("parse", true), ("check", true)] {
        let help = crate::common::stdout_of(latkit().args([command, "--help"]));
        assert_eq!(help.contains("--strict"), shown, "{command}:\n{help}");
    }
    let help = crate::common::stdout_of(latkit().args(["compare", "--help"]));
    assert!(help.contains("--fail-within-noise"), "{help}");
}

#[test]
fn bad_rules_and_inputs_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.txt");
    go_file(&old, 1, 6, &[("A", 100.0, 1.0)], 0.01, false);
    for (args, expected) in [
        (vec!["--fail-on", "ns/op"], "not a regression rule"),
        (vec!["--fail-on", "ns/op:+x%"], "not a regression rule"),
        (
            vec!["--fail-on", "latency:+5%"],
            "no compared figure is called `latency`",
        ),
        (vec!["--alpha", "1.5"], "not a significance level"),
        (vec!["--statistics", "p42"], "not a statistic"),
    ] {
        let out = latkit()
            .arg("compare")
            .args(&args)
            .arg(&old)
            .arg(&old)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    // Inputs with no benchmark in common: said so, not "(compared: )".
    let other = dir.path().join("other.txt");
    go_file(&other, 2, 6, &[("B", 100.0, 1.0)], 0.01, false);
    let disjoint = latkit()
        .args(["compare", "--fail-on", "time:+5%"])
        .arg(&old)
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(disjoint.status.code(), Some(2));
    let err = String::from_utf8_lossy(&disjoint.stderr);
    assert!(err.contains("no benchmark is in both"), "{err}");
    // One input is a summary, as `benchstat old.txt` is: no change column.
    let one = crate::common::stdout_of(latkit().arg("compare").arg(&old));
    assert!(
        one.contains("BenchmarkA") && !one.contains("vs base"),
        "{one}"
    );
    let missing = latkit()
        .arg("compare")
        .arg(&old)
        .arg(dir.path().join("nope.txt"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.txt"));
}

#[test]
fn two_real_timer_runs_compare_as_distributions() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<PathBuf> = (0..2)
        .map(|i| {
            let path = dir.path().join(format!("timer{i}.json"));
            latkit()
                .args(["timer", "-T", "1", "-q", "--format", "json", "--out"])
                .arg(&path)
                .assert()
                .success();
            path
        })
        .collect();
    let doc = json_of(
        latkit()
            .args(["compare", "--format", "json", "--metric", "latency"])
            .arg(&runs[0])
            .arg(&runs[1]),
    );
    let table = &doc["tables"][0];
    assert_eq!(table["title"], "latency (distribution)");
    let rows = table["rows"].as_array().unwrap();
    let statistics: Vec<&str> = rows
        .iter()
        .map(|r| r["cells"][1]["text"].as_str().unwrap())
        .collect();
    assert_eq!(statistics, ["p50", "p99", "p99.9", "max"]);
    for row in rows {
        let change = &row["cells"][6];
        if row["cells"][1]["text"] == "max" {
            assert_eq!(
                change["verdict"], "untested",
                "a max is never significant alone"
            );
        } else {
            assert_ne!(change["verdict"], "untested");
            assert!(
                row["cells"][3]["interval"]["low"].as_f64() <= row["cells"][2]["value"].as_f64()
            );
        }
    }
    // The timer's own maximum, not a bucket edge.
    let run = &doc["runs"][0];
    let max_ns = run["benchmarks"][0]["timer"]["max_ns"].as_f64().unwrap();
    assert_eq!(rows[3]["cells"][2]["value"].as_f64().unwrap(), max_ns);
}

#[test]
fn check_judges_regression_rules_against_a_base() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = pair(dir.path(), 8, &[("A", 100.0, 1.0)], &[("A", 100.0, 1.12)]);
    let targets = dir.path().join("targets.toml");
    // Writes the targets file with one rule and runs `check` against `old.txt` (or no base).
    let check = |threshold: &str, base: bool| {
        let rule = format!("[[regression]]\nmetric = \"ns/op\"\nthreshold = \"{threshold}\"\n");
        std::fs::write(&targets, rule).unwrap();
        let mut cmd = latkit();
        cmd.args(["check", "--targets"]).arg(&targets);
        if base {
            cmd.arg("--base").arg(&old);
        }
        let out = cmd.arg(&new).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (
            out.status.code(),
            text + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = check("+5%", true);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("ns/op: results vs old.txt") && text.contains("❌ Fail"),
        "{text}"
    );
    let (code, text) = check("+20%", true);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = check("+20%", false);
    assert_eq!(code, Some(2));
    assert!(text.contains("need a base"), "{text}");
    let (code, text) = check("5 percent", true);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("targets.toml:1:") && text.contains("not a regression rule"),
        "{text}"
    );
}

/// x/perf unit metadata holds for every input wherever it was written, as benchstat reads it:
/// `better=higher` in the base file alone makes a fall in the other a regression (a unit it
/// does not know is lower-is-better otherwise).
#[test]
fn unit_metadata_from_one_input_holds_for_all() {
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = (dir.path().join("base.txt"), dir.path().join("new.txt"));
    let lines = |v: f64| -> String {
        (0..6)
            .map(|i| format!("BenchmarkServe 1 {} points\n", v + f64::from(i)))
            .collect()
    };
    std::fs::write(
        &base,
        format!("Unit points better=higher\n{}", lines(100.0)),
    )
    .unwrap();
    std::fs::write(&new, lines(80.0)).unwrap();
    let gate = |a: &Path, b: &Path| {
        latkit()
            .arg("compare")
            .args(["--fail-on", "points:5%"])
            .arg(a)
            .arg(b)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(gate(&base, &new), Some(1), "a 20 % fall in points is worse");
    assert_eq!(gate(&new, &base), Some(0), "a 25 % rise is better");
}

/// A comparison of commands started differently says so: latkit's runs that differ (no shell
/// against `sh`) are told apart as environments; hyperfine's JSON, which does not record
/// whether it used a shell, is compared with a warning.
#[test]
fn commands_started_through_a_shell_or_not_are_never_compared_silently() {
    let dir = tempfile::tempdir().unwrap();
    let exec = |name: &str, args: &[&str]| {
        let file = dir.path().join(name);
        let out = latkit()
            .args(["exec", "-r", "6", "-q", "true"])
            .args(args)
            .arg(&file)
            .output()
            .unwrap();
        crate::common::assert_succeeded(&out);
        file
    };
    let direct = exec("direct.json", &["--json"]);
    let shelled = exec("shelled.json", &["-S", "sh", "--json"]);
    let hyperfine = exec("hyperfine.json", &["--export-json"]);
    let refused = latkit()
        .arg("compare")
        .args([&direct, &shelled])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("shell: none") && said.contains("vs sh"),
        "{said}"
    );
    let doc = json_of(
        latkit()
            .arg("compare")
            .args([&hyperfine, &direct])
            .args(["--format", "json", "-q"]),
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("does not record whether its commands ran through a shell")
            && notes.contains("spawned its commands directly"),
        "{notes}"
    );
    // The same way on both sides: no such warning.
    let doc = json_of(
        latkit()
            .arg("compare")
            .args([&direct, &direct])
            .args(["--format", "json", "-q"]),
    );
    assert!(
        !doc["notes"].to_string().contains("shell"),
        "{}",
        doc["notes"]
    );
}

/// A geomean left out for a figure of 0 says of which metric, and why.
#[test]
fn a_geomean_left_out_names_its_metric() {
    let dir = tempfile::tempdir().unwrap();
    let benches = [("A", 100.0, 1.0), ("B", 300.0, 1.0)];
    let (old, new) = pair(dir.path(), 6, &benches, &benches);
    for file in [&old, &new] {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, text.replace("16 B/op", "0 B/op")).unwrap();
    }
    let doc = json_of(
        latkit()
            .arg("compare")
            .args([&old, &new])
            .args(["--format", "json", "-q"]),
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("geomean of B/op: left out, as a figure of 0 has no logarithm"),
        "{notes}"
    );
    assert!(!notes.contains("allocs/op: left out"), "{notes}");
}

/// benchstat's `-row`, `-col` and `-table` as typed for benchstat, on its crc testdata: rows
/// and columns in the orders asked for, one table per `/align` headed as benchstat heads it,
/// results pooled across a hidden key said, inputs labelled `label=path`, and bad projections
/// refused with exit 2.
#[test]
fn rows_columns_and_tables_follow_benchstats_projections() {
    let crc = fixture("conformance/benchstat/crc-new.txt");
    let doc = json_of(latkit().arg("compare").arg(&crc).args([
        "-table",
        "/align",
        "-row",
        "/size@num",
        "-col",
        "/poly@(Koopman IEEE)",
        "--metric",
        "ns/op",
        "--format",
        "json",
    ]));
    let tables = doc["tables"].as_array().unwrap();
    let titles: Vec<&str> = tables
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["/align: 0 · ns/op", "/align: 1 · ns/op"]);
    let rows: Vec<&str> = (tables[0]["rows"].as_array().unwrap().iter())
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["15", "40", "512", "1kB", "4kB", "32kB", "geomean"]);
    let headers: Vec<&str> = (tables[0]["columns"].as_array().unwrap().iter())
        .map(|c| c["header"].as_str().unwrap())
        .collect();
    let koopman = headers
        .iter()
        .position(|h| h.starts_with("Koopman"))
        .unwrap();
    let ieee = headers.iter().position(|h| h.starts_with("IEEE")).unwrap();
    assert!(koopman < ieee, "{headers:?}");
    // Castagnoli is not in the fixed order: none of its results is shown.
    assert!(
        !headers.iter().any(|h| h.contains("Castagnoli")),
        "{headers:?}"
    );

    let out = latkit()
        .arg("compare")
        .arg(fixture("conformance/benchstat/new.txt"))
        .args(["-row", ".name"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("benchmarks vary in .fullname in Encode (new.txt)"),
        "{warned}"
    );
    let out = latkit()
        .arg("compare")
        .arg(fixture("conformance/benchstat/new.txt"))
        .args(["-row", ".name", "-ignore", ".fullname"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("vary in"));
    let out = latkit()
        .arg("compare")
        .arg(fixture("conformance/benchstat/new.txt"))
        .args(["-col", "/fromat"])
        .output()
        .unwrap();
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("-col /fromat: no result has a value for /fromat"),
        "{warned}"
    );

    // benchstat's `label=path` inputs: columns headed by the labels; the files are still
    // inputs that no output may replace.
    let (old, new) = (
        fixture("conformance/benchstat/old.txt"),
        fixture("conformance/benchstat/new.txt"),
    );
    let labelled = |label: &str, path: &Path| format!("{label}={}", path.display());
    let doc = json_of(latkit().arg("compare").args([
        labelled("O", &old),
        labelled("N", &new),
        "--format".into(),
        "json".into(),
    ]));
    let headers = doc["tables"][0]["columns"].to_string();
    assert!(headers.contains("\"N vs base\""), "{headers}");
    let out = latkit()
        .arg("compare")
        .args([labelled("O", &old), labelled("N", &new)])
        .arg("--out")
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names the same file as input O="));

    for (args, said) in [
        (["-row", ".unit"], ".unit is only allowed in filters"),
        (["-col", "/poly@sideways"], "unknown order `sideways`"),
        (["-table", "/poly@(IEEE"], "expected `)`"),
    ] {
        let out = latkit()
            .arg("compare")
            .arg(&crc)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(said),
            "{args:?}"
        );
    }
}
