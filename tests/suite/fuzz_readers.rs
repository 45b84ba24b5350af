//! Fuzzing every reader through the whole pipeline: real outputs (the seed vectors), mutated
//! the way a fuzzer mutates them — bytes flipped, digits inserted, numbers replaced by huge,
//! negative or non-finite ones, lines repeated or cut — are read, analysed and rendered in
//! every format. Nothing may panic. `PROPTEST_CASES` scales the run (CI sets it).

use latkit::analyze::{EnrichOptions, build_report};
use latkit::ingest::read_path;
use latkit::report::{FORMATS, Reader};
use proptest::prelude::*;
use std::io::Write;

const SEEDS: [&str; 23] = [
    "services/cargo-criterion-1.1.0.jsonl",
    "services/pytest-benchmark.json",
    "vectors/hyperfine-1.15.json",
    "services/viiper.bmf.json",
    "services/viiper.gab.json",
    "services/libtest-bench.txt",
    "vectors/gbench-1.7.1.json",
    "gbench/replay-6reps.json",
    "gbench/replay-6reps.console.txt",
    "vectors/viiper-count3.gobench.txt",
    "vectors/xenomai-latency-h.txt",
    "vectors/cyclictest-h200.txt",
    "vectors/cyclictest-h200.json",
    "rtla/timerlat-hist-doc.txt",
    "rtla/timerlat-top-doc.txt",
    "rtla/timerlat-trace-doc.txt",
    "rtla/osnoise-top-doc.txt",
    "rtla/real-6.1-timerlat-top-q.txt",
    "rtla/real-6.1-timerlat-hist.txt",
    "rtla/real-6.1-osnoise-top-q.txt",
    "vectors/rootstream-bench.txt",
    "variants.gobench.txt",
    "stream.gobench.txt",
];

/// Numbers a fuzzer likes: the edges of every integer type, huge exponents, non-finite words.
const NASTY: [&str; 12] = [
    "18446744073709551615",
    "4294967295",
    "9223372036854775808",
    "-1",
    "0",
    "1e999",
    "-1e999",
    "NaN",
    "inf",
    "1e-400",
    "99999999999",
    "",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, &'static str),
    ReplaceNumber(usize, &'static str),
    RepeatLine(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), proptest::sample::select(&NASTY[..]))
            .prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), proptest::sample::select(&NASTY[..]))
            .prop_map(|(at, s)| Mutation::ReplaceNumber(at, s)),
        (any::<usize>(), 1usize..2000).prop_map(|(at, n)| Mutation::RepeatLine(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Largest mutated input.
const MAX_MUTATED: usize = 8 << 20;

fn apply(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for m in mutations {
        if bytes.is_empty() {
            break;
        }
        match *m {
            Mutation::Flip(at, b) => {
                let i = at % bytes.len();
                bytes[i] ^= b;
            }
            Mutation::Insert(at, s) => {
                let i = at % bytes.len();
                bytes.splice(i..i, s.bytes());
            }
            Mutation::ReplaceNumber(at, s) => {
                // The run of digits at or after `at`.
                let start = (at % bytes.len()..bytes.len())
                    .find(|&i| bytes[i].is_ascii_digit())
                    .unwrap_or(bytes.len());
                let end = (start..bytes.len())
                    .find(|&i| !bytes[i].is_ascii_digit() && bytes[i] != b'.')
                    .unwrap_or(bytes.len());
                bytes.splice(start..end, s.bytes());
            }
            Mutation::RepeatLine(at, n) => {
                let i = at % bytes.len();
                let start = bytes[..i]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
                let line = bytes[start..end].to_vec();
                let at = end;
                // Repeats compound (a one-line JSON file is its own line), so the input is
                // capped where it stops finding new paths and starts costing gigabytes.
                let room = MAX_MUTATED.saturating_sub(bytes.len());
                let repeated: Vec<u8> = line
                    .iter()
                    .copied()
                    .cycle()
                    .take((line.len() * n).min(room))
                    .collect();
                bytes.splice(at..at, repeated);
            }
            Mutation::Truncate(at) => bytes.truncate(at % bytes.len()),
        }
    }
    bytes
}

/// Reads `bytes` as a file and renders whatever it yields in every format.
fn read_and_render(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let path = file.path().to_str().unwrap().to_string();
    let Ok(input) = read_path(&path, None) else {
        return Ok(());
    };
    let Ok(report) = build_report(input.runs, input.notes, &EnrichOptions::default()) else {
        return Ok(());
    };
    // Whole, and folded for a narrow terminal (which leaves columns out and wraps).
    let narrow = Reader {
        width: Some(40),
        at_terminal: true,
        ..Default::default()
    };
    for (format, reader) in FORMATS
        .iter()
        .flat_map(|f| [(f, Reader::default()), (f, narrow.clone())])
    {
        let mut out = Vec::new();
        let _ = (format.reporter)().render(&report, reader, &mut out);
        prop_assert!(out.len() < 64 << 20, "{}: {} bytes", format.name, out.len());
    }
    reads_back_equal(&report)
}

/// `report` as latkit JSON, without the moment it was written.
fn json_of(report: &latkit::analyze::Report) -> Option<serde_json::Value> {
    let json = FORMATS.iter().find(|f| f.name == "json").unwrap();
    let mut out = Vec::new();
    (json.reporter)()
        .render(report, Reader::default(), &mut out)
        .ok()?;
    let mut doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    doc.as_object_mut().unwrap().remove("generated");
    Some(doc)
}

/// What latkit writes as JSON, latkit reads back to the same document.
fn reads_back_equal(report: &latkit::analyze::Report) -> Result<(), TestCaseError> {
    let Some(written) = json_of(report) else {
        return Ok(());
    };
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(written.to_string().as_bytes()).unwrap();
    let path = file.path().to_str().unwrap().to_string();
    let latkit_json = latkit::ingest::format::by_name(latkit::ingest::format::BUILTIN, "latkit");
    let back = read_path(&path, latkit_json)
        .map_err(|e| TestCaseError::fail(format!("latkit's JSON refused: {e}\n{written}")))?;
    let report = build_report(back.runs, back.notes, &EnrichOptions::default())
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(json_of(&report), Some(written));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_outputs_never_panic(
        seed in 0..SEEDS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seed = std::fs::read(crate::common::fixture(SEEDS[seed])).unwrap();
        read_and_render(&apply(&seed, &mutations))?;
    }

    #[test]
    fn mutated_latkit_json_never_panics(
        seed in 0..SEEDS.len(),
        values in proptest::collection::vec(prop_oneof![Just(f64::MAX), Just(-1.0), Just(0.0), any::<f64>()], 0..4),
        counts in proptest::collection::vec(any::<u64>(), 0..4),
        which in any::<usize>(),
    ) {
        // latkit's own JSON of a real output, with a metric's values and a histogram's counts
        // replaced: empty arrays, huge, negative and zero numbers.
        let text = crate::common::parse_as(&crate::common::fixture(SEEDS[seed]), "json");
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let benches = doc["runs"][0]["benchmarks"].as_array_mut().unwrap();
        let n = benches.len();
        let bench = &mut benches[which % n];
        if let Some(m) = bench["metrics"].as_array_mut().and_then(|m| m.first_mut()) {
            m["values"] = serde_json::json!(values.iter().filter(|v| v.is_finite()).collect::<Vec<_>>());
        }
        if let Some(h) = bench["histograms"].as_array_mut().and_then(|h| h.first_mut()) {
            h["counts"] = serde_json::json!(counts);
        }
        read_and_render(doc.to_string().as_bytes())?;
    }
}

// ---------------------------------------------------------------------------------------------
// The release binary, as users run it, on mutated inputs of every format and every spec it
// takes. Each case is a process of its own: a panic (exit 101), a death by signal, a hang
// (over a minute) or more than 200 MB of RSS is a failure. `LATKIT_FUZZ_CASES` sets how many
// (10,000 by default, as CI runs them).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The most RSS one case may use.
const RSS_LIMIT_KIB: i64 = 200 << 10;
/// A case running longer than this is a hang.
const HANG: std::time::Duration = std::time::Duration::from_secs(60);

/// Every format latkit reads, by a real output: the file and the reader that is its own.
const READ_SEEDS: [(&str, &str); 34] = [
    ("services/cargo-criterion-1.1.0.jsonl", "criterion"),
    ("services/pytest-benchmark.json", "pytest-benchmark"),
    ("vectors/hyperfine-1.15.json", "hyperfine"),
    ("services/viiper.bmf.json", "bmf"),
    ("services/viiper.gab.json", "gab"),
    ("services/viiper.gab.json", "gab-bigger"),
    ("services/libtest-bench.txt", "libtest"),
    ("vectors/gbench-1.7.1.json", "gbench-json"),
    ("gbench/replay-6reps.json", "gbench-json"),
    ("gbench/replay-6reps.console.txt", "gbench"),
    ("vectors/viiper-count3.gobench.txt", "go"),
    ("variants.gobench.txt", "go"),
    ("vectors/xenomai-latency-h.txt", "xenomai"),
    ("vectors/cyclictest-h200.txt", "cyclictest"),
    ("vectors/cyclictest-h200.json", "cyclictest-json"),
    ("rtla/timerlat-hist-doc.txt", "rtla-hist"),
    ("rtla/timerlat-top-doc.txt", "rtla-top"),
    ("rtla/timerlat-trace-doc.txt", "timerlat-trace"),
    ("rtla/osnoise-top-doc.txt", "osnoise-top"),
    ("rtla/real-6.1-timerlat-top-q.txt", "rtla-top"),
    ("rtla/real-6.1-timerlat-hist.txt", "rtla-hist"),
    ("rtla/real-6.1-osnoise-top-q.txt", "osnoise-top"),
    ("vectors/rootstream-bench.txt", "bench"),
    ("fuzz/hdrhistogram-java.hgrm", "hgrm"),
    ("fuzz/tagged-Log.logV2.hlog", "hlog"),
    ("page/sdk.json", "gbench-json"),
    // latkit's own JSON, of a timer test and of a Go run (written by the test).
    ("latkit:vectors/xenomai-latency-h.txt", "latkit"),
    ("latkit:vectors/viiper-count3.gobench.txt", "latkit"),
    // Small files declaring huge structure (see `amplifying`).
    ("amplify:cyclictest", "cyclictest"),
    ("amplify:timerlat-trace", "timerlat-trace"),
    ("amplify:rtla-hist", "rtla-hist"),
    ("amplify:hlog", "hlog"),
    ("amplify:latkit", "latkit"),
    ("amplify:cyclictest-json", "cyclictest-json"),
];

/// What a case runs: the files it writes into its own directory, and latkit's arguments
/// (relative paths name those files, or fixtures by absolute path).
struct Case {
    files: Vec<(PathBuf, Vec<u8>)>,
    args: Vec<String>,
}

/// How a case ended.
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
    rss_kib: i64,
    hung: bool,
    stderr: String,
}

impl Ended {
    fn failed(&self) -> bool {
        self.hung
            || self.signal.is_some()
            || !matches!(self.code, Some(0..=2))
            || self.rss_kib > RSS_LIMIT_KIB
            || self.stderr.contains("panicked")
    }
}

/// Runs the release binary in `dir` with `args`, output discarded but stderr kept, and
/// measures its peak RSS; a case over [`HANG`] is killed. GNU time starts it and reports its
/// RSS: Linux carries the spawner's own peak into a child at exec, and this test process
/// holds large inputs, while time forks latkit from a process of a few MiB.
fn run_binary(dir: &Path, args: &[String]) -> Ended {
    use std::os::unix::process::CommandExt;
    let stderr_file = dir.join(".stderr");
    let rss_file = dir.join(".rss");
    let mut child = Command::new(crate::common::peer("time", "apt-get install time"))
        .args(["--quiet", "-f", "%M", "-o"])
        .arg(&rss_file)
        .arg(assert_cmd::cargo::cargo_bin("latkit"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_file).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    // Waited for by its exit (SIGCHLD), not polled.
    let (status, hung) = match wait_timeout::ChildExt::wait_timeout(&mut child, HANG).unwrap() {
        Some(status) => (status, false),
        None => {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            (child.wait().unwrap(), true)
        }
    };
    let rss_kib = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|text| text.lines().last()?.trim().parse().ok())
        .unwrap_or(i64::MAX);
    // GNU time exits 128 + N when the command died of signal N.
    let code = status.code();
    Ended {
        code: code.filter(|c| *c < 128),
        signal: code.filter(|c| *c >= 128).map(|c| c - 128),
        rss_kib,
        hung,
        stderr: std::fs::read_to_string(&stderr_file).unwrap_or_default(),
    }
}

/// A seed's bytes: a fixture, or latkit's JSON of one (`latkit:NAME`).
fn seed_bytes(seed: &str) -> Vec<u8> {
    if let Some(kind) = seed.strip_prefix("amplify:") {
        return amplifying(kind);
    }
    match seed.strip_prefix("latkit:") {
        Some(name) => crate::common::parse_as(&crate::common::fixture(name), "json").into_bytes(),
        None => std::fs::read(crate::common::fixture(seed)).unwrap(),
    }
}

/// A few lines of `items` separated by `sep`.
fn joined(items: impl Iterator<Item = String>, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

/// An HdrHistogram of 4 significant digits declaring a range up to 2^62 and holding one
/// sample, in the `.hlog` encoding: a few dozen bytes that decode into megabytes of counts.
fn widest_histogram() -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 62, 4).unwrap();
    h.record(1 << 40).unwrap();
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(&h, &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Small inputs that declare huge structure: many columns, CPUs, tags or histograms, each
/// with a value far up a histogram's range. Memory must follow the samples they hold.
fn amplifying(kind: &str) -> Vec<u8> {
    let text = match kind {
        // 1,024 threads (cyclictest's most) of three samples each.
        "cyclictest" => {
            let row = |i: usize| format!("{i:06} {}", joined((0..1024).map(|_| "1".into()), " "));
            format!(
                "# Histogram\n{}\n# Max Latencies: {}\n# Histogram Overflows: {}\n",
                joined((0..3).map(row), "\n"),
                joined((0..1024).map(|_| "99999".into()), " "),
                joined((0..1024).map(|_| "1".into()), " ")
            )
        }
        "cyclictest-json" => format!(
            "{{\"num_threads\": 1024, \"thread\": {{{}}}}}",
            joined(
                (0..1024).map(|t| format!(
                    "\"{t}\": {{\"histogram\": {{\"99999\": 1}}, \"cycles\": 1, \"min\": 1, \
                     \"max\": 99999, \"avg\": 99999}}"
                )),
                ", "
            )
        ),
        // 4,096 CPUs, each with an IRQ and a thread sample of 9 s.
        "timerlat-trace" => format!(
            "# tracer: timerlat\n{}\n",
            joined(
                (0..4096).flat_map(|cpu| ["irq", "thread"].map(move |context| format!(
                    "  <idle>-0 [{cpu:03}] d.h1 54.029328: #1 context {context:>6} \
                     timer_latency 9000000000 ns"
                ))),
                "\n"
            )
        ),
        // 4,096 CPUs × IRQ, thread and user columns, one row of 99,999 µs.
        "rtla-hist" => format!(
            "# RTLA timerlat histogram\n# Time unit is microseconds (us)\nIndex {}\n99999 {}\n",
            joined(
                (0..4096).map(|c| format!("IRQ-{c:03} Thr-{c:03} Usr-{c:03}")),
                " "
            ),
            joined((0..3 * 4096).map(|_| "1".into()), " ")
        ),
        "hlog" => {
            let h = widest_histogram();
            format!(
                "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n{}\n",
                joined((0..100).map(|t| format!("Tag=t{t},0.1,1.0,1.0,{h}")), "\n")
            )
        }
        // latkit's JSON of 1,000 runs, each with the widest histogram.
        "latkit" => {
            let dir = tempfile::tempdir().unwrap();
            let log = dir.path().join("one.hlog");
            std::fs::write(&log, amplifying("hlog")).unwrap();
            let one = crate::common::parse_as(&log, "json");
            let at = one.find("\"histogram\": \"").unwrap() + 14;
            let end = at + one[at..].find('"').unwrap();
            let widest = one.replace(&one[at..end], &widest_histogram());
            let doc: serde_json::Value = serde_json::from_str(&widest).unwrap();
            let mut runs = Vec::new();
            for _ in 0..10 {
                runs.extend(doc["runs"].as_array().unwrap().iter().cloned());
            }
            let mut doc = doc;
            doc["runs"] = serde_json::Value::Array(runs);
            doc.to_string()
        }
        _ => unreachable!("no amplifying input {kind}"),
    };
    text.into_bytes()
}

fn fixture_arg(name: &str) -> String {
    crate::common::fixture(name).display().to_string()
}

/// The files under `dir`, relative to it, with their bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().to_path_buf();
                files.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The seeds, read once.
struct Seeds {
    inputs: Vec<(Vec<u8>, &'static str)>,
    criterion: Vec<(PathBuf, Vec<u8>)>,
    specs: [Vec<u8>; 4],
    formats: Vec<&'static str>,
}

impl Seeds {
    fn load() -> Seeds {
        Seeds {
            inputs: READ_SEEDS
                .iter()
                .map(|(seed, reader)| (seed_bytes(seed), *reader))
                .collect(),
            criterion: tree(&crate::common::fixture("fuzz/criterion")),
            specs: [
                "check/rootstream-targets.toml",
                "fuzz/regression-targets.toml",
                "stream-suite.toml",
                "page/sdk-page.toml",
            ]
            .map(|name| std::fs::read(crate::common::fixture(name)).unwrap()),
            formats: FORMATS.iter().map(|f| f.name).collect(),
        }
    }

    /// Case `index`: its kind by `index % 8`, its mutations from a generator seeded by it.
    fn case(&self, index: usize) -> Case {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&(index as u64).to_le_bytes());
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
        );
        let mutations = proptest::collection::vec(mutation(), 1..6)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let mutated = |bytes: &[u8]| apply(bytes, &mutations);
        let round = index / 8;
        let format = self.formats[round % self.formats.len()].to_string();
        let file = |name: &str, bytes: Vec<u8>| vec![(PathBuf::from(name), bytes)];
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        match index % 8 {
            0..=2 => {
                let (bytes, reader) = &self.inputs[(index / 3 + round) % self.inputs.len()];
                // The reader forced every other time: detection would not pick it for
                // every mutation, and each reader must hold on its own.
                let forced = if round.is_multiple_of(2) {
                    *reader
                } else {
                    "auto"
                };
                Case {
                    files: file("input", mutated(bytes)),
                    args: args(&[
                        "parse",
                        "input",
                        "--input-format",
                        forced,
                        "--format",
                        &format,
                    ]),
                }
            }
            3 => {
                let which = round % 2;
                let mut list = vec!["check", "--targets", "targets.toml"];
                let (base, input) = match which {
                    0 => (None, fixture_arg("vectors/rootstream-bench.txt")),
                    _ => (
                        Some(fixture_arg("vectors/viiper-count3.gobench.txt")),
                        fixture_arg("vectors/viiper-steamdeck.gobench.txt"),
                    ),
                };
                if let Some(base) = &base {
                    list.extend(["--base", base]);
                }
                list.push(&input);
                Case {
                    files: file("targets.toml", mutated(&self.specs[which])),
                    args: args(&list),
                }
            }
            4 => Case {
                files: file("suite.toml", mutated(&self.specs[2])),
                args: args(&[
                    "parse",
                    &fixture_arg("stream.gobench.txt"),
                    "--suite",
                    "suite.toml",
                    "--format",
                    &format,
                ]),
            },
            5 => Case {
                files: file("page.toml", mutated(&self.specs[3])),
                args: args(&["page", "--spec", "page.toml", &fixture_arg("page/sdk.json")]),
            },
            6 => {
                let mut files = self.criterion.clone();
                let target = round % files.len();
                files[target].1 = mutated(&files[target].1);
                for (path, _) in &mut files {
                    *path = Path::new("criterion").join(&*path);
                }
                Case {
                    files,
                    args: args(&["parse", "criterion", "--format", &format]),
                }
            }
            _ => Case {
                files: file("new.txt", mutated(&self.inputs[10].0)),
                args: args(&[
                    "compare",
                    &fixture_arg("vectors/viiper-count3.gobench.txt"),
                    "new.txt",
                    "--format",
                    &format,
                ]),
            },
        }
    }
}

/// Runs `case` in a directory of its own; a failure keeps the directory for a look.
fn run_case(index: usize, case: &Case) -> Result<(i64, i32), String> {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in &case.files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let ended = run_binary(dir.path(), &case.args);
    if !ended.failed() {
        return Ok((ended.rss_kib, ended.code.unwrap_or(-1)));
    }
    let kept = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-failures")
        .join(index.to_string());
    let _ = std::fs::remove_dir_all(&kept);
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    let _ = std::fs::rename(dir.keep(), &kept);
    Err(format!(
        "case {index}: latkit {} in {}: exit {:?}, signal {:?}, hung {}, {} MiB RSS\n{}",
        case.args.join(" "),
        kept.display(),
        ended.code,
        ended.signal,
        ended.hung,
        ended.rss_kib >> 10,
        ended.stderr.lines().take(5).collect::<Vec<_>>().join("\n")
    ))
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs GNU time; minutes of CPU; `--features interop` runs it"
)]
fn the_release_binary_survives_mutated_inputs_and_specs() {
    let _cores = crate::common::busy();
    let cases: usize = std::env::var("LATKIT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let seeds = Seeds::load();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let peak = std::sync::atomic::AtomicI64::new(0);
    // How many cases ended with exit 0, 1 and 2: most must get past the readers.
    let exits = [0, 1, 2].map(|_| std::sync::atomic::AtomicUsize::new(0));
    let failures = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if index >= cases {
                        break;
                    }
                    match run_case(index, &seeds.case(index)) {
                        Ok((rss, code)) => {
                            peak.fetch_max(rss, std::sync::atomic::Ordering::Relaxed);
                            exits[code as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(failure) => failures.lock().unwrap().push(failure),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let exits = exits.map(|n| n.into_inner());
    eprintln!(
        "fuzz: {cases} cases through the release binary, {} failed, exit 0/1/2: {exits:?}, \
         peak RSS {} MiB",
        failures.len(),
        peak.into_inner() >> 10
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Small inputs declaring huge structure, read and rendered: memory must follow the samples
/// they hold. Each is under 1 MB, so the bound of 200 MB per 10 MB of input is
/// [`RSS_LIMIT_KIB`] for them all; before distributions were sparse they took 0.2–3 GB.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs GNU time; `--features interop` runs it"
)]
fn declared_structure_costs_no_memory() {
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    for (seed, reader) in READ_SEEDS.iter().filter(|(s, _)| s.starts_with("amplify:")) {
        let bytes = seed_bytes(seed);
        std::fs::write(dir.path().join("input"), &bytes).unwrap();
        for format in ["json", "table"] {
            let args = [
                "parse",
                "input",
                "--input-format",
                reader,
                "--format",
                format,
            ];
            let ended = run_binary(dir.path(), &args.map(String::from));
            let limit_kib = RSS_LIMIT_KIB;
            report.push(format!(
                "{seed} as {format}: {} KiB file, {} MiB RSS (limit {} MiB), exit {:?}",
                bytes.len() >> 10,
                ended.rss_kib >> 10,
                limit_kib >> 10,
                ended.code
            ));
            assert!(
                ended.code == Some(0) && ended.rss_kib <= limit_kib,
                "{}\n{}",
                report.last().unwrap(),
                ended.stderr
            );
        }
    }
    eprintln!("declared structure:\n{}", report.join("\n"));
}

/// Inputs far larger than their content: memory must follow what they hold, not their size.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs GNU time; `--features interop` runs it"
)]
fn large_inputs_cost_memory_by_content_not_size() {
    let _cores = crate::common::busy();
    const PADDING: usize = 220 << 20;
    let dir = tempfile::tempdir().unwrap();
    let padded = |seed: &str| {
        let mut bytes = std::fs::read(crate::common::fixture(seed)).unwrap();
        let end = bytes
            .iter()
            .rposition(|b| *b == b'}' || *b == b']')
            .unwrap();
        bytes.splice(end..end, std::iter::repeat_n(b' ', PADDING));
        bytes
    };
    let mut big_context =
        std::fs::read(crate::common::fixture("vectors/gbench-1.7.1.json")).unwrap();
    let at = big_context
        .windows(11)
        .position(|w| w == b"\"context\": ")
        .unwrap()
        + 12;
    let long = format!("\"padding\": \"{}\", ", "x".repeat(300 << 20));
    big_context.splice(at..at, long.into_bytes());
    let mut long_line = b"BenchmarkA-2 10 100 ns/op\n".to_vec();
    long_line.extend(std::iter::repeat_n(b'x', PADDING));
    long_line.extend(b"\nBenchmarkB-2 10 200 ns/op\n");
    let mut toml = b"[[target]]\nbench = \"".to_vec();
    toml.extend(std::iter::repeat_n(b'x', 10 << 20));
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "hyperfine",
            padded("vectors/hyperfine-1.15.json"),
            vec!["parse"],
        ),
        (
            "pytest-benchmark",
            padded("services/pytest-benchmark.json"),
            vec!["parse"],
        ),
        ("bmf", padded("services/viiper.bmf.json"), vec!["parse"]),
        ("gab", padded("services/viiper.gab.json"), vec!["parse"]),
        (
            "gbench-json",
            padded("vectors/gbench-1.7.1.json"),
            vec!["parse"],
        ),
        ("gbench context", big_context, vec!["parse"]),
        ("go long line", long_line, vec!["parse"]),
        ("targets TOML", toml, vec!["check", "--targets"]),
    ];
    let mut report = Vec::new();
    for (name, bytes, command) in cases {
        let file = dir.path().join("input");
        std::fs::write(&file, &bytes).unwrap();
        let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
        args.push("input".into());
        if command[0] == "check" {
            args.push(fixture_arg("vectors/viiper-count3.gobench.txt"));
        }
        let ended = run_binary(dir.path(), &args);
        report.push(format!(
            "{name}: {} MiB file, {} MiB RSS, exit {:?}",
            bytes.len() >> 20,
            ended.rss_kib >> 10,
            ended.code
        ));
        // What these files hold fits in a few MiB; their size must not show.
        assert!(
            !ended.failed() && ended.rss_kib < 64 << 10,
            "{name}: exit {:?}, {} MiB RSS: {}",
            ended.code,
            ended.rss_kib >> 10,
            ended.stderr
        );
        assert!(
            ended.code == Some(0) || ended.stderr.contains("input"),
            "{name}: {}",
            ended.stderr
        );
    }
    eprintln!("large inputs:\n{}", report.join("\n"));
}
