//! Every example in the `sh` blocks of the README and of `docs/` pastes and runs, from the
//! repository's root, on the files the repository has: each block as one bash script, with
//! the release binary as `latkit` and a scratch history store.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// Lines that run too long for a test (a minute, or until Ctrl-C) or set the machine up.
const NOT_RUN: &[&str] = &["cargo ", ".ci/setup", " -T 0 ", " -T 60 "];

/// The README's `sh` blocks, each with the line it starts on.
fn sh_blocks(readme: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some((i + 1, String::new())),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The block as a script: continuation lines joined, lines too long for a test left out,
/// and a gate's verdict (exit 1 from `--fail-on`, `--check` or `history --regressions`, 3
/// from `--runs auto`)
/// accepted as a result; a tool that failed (5, 6) is not.
fn script(block: &str) -> String {
    let joined = block.replace("\\\n", " ");
    let mut out = String::from("set -euo pipefail\n");
    for line in joined.lines() {
        let command = line.split(" # ").next().unwrap_or(line).trim_end();
        if command.trim_start().starts_with('#') || NOT_RUN.iter().any(|s| line.contains(s)) {
            continue;
        }
        if ["--fail-on", "--check", "--regressions"]
            .iter()
            .any(|verdict| command.contains(verdict))
        {
            out.push_str(&format!("{command} || [ $? -eq 1 -o $? -eq 3 ]\n"));
        } else {
            out.push_str(command);
            out.push('\n');
        }
    }
    out
}

/// Runs every `sh` block of `document` (relative to the repository's root).
fn examples_of(document: &str) {
    let _cores = crate::common::busy();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let latkit = assert_cmd::cargo::cargo_bin("latkit");
    let bin = latkit.parent().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let text = std::fs::read_to_string(root.join(document)).unwrap();
    let blocks = sh_blocks(&text);
    let scratch_dir = format!("{}/", scratch.path().display());
    assert!(!blocks.is_empty(), "{document} has no sh block");
    for (line, block) in blocks {
        let started = std::time::Instant::now();
        let run = || {
            std::process::Command::new(crate::common::peer("bash", "apt-get install bash"))
                // The files an example makes in /tmp (and what `mktemp` makes) go to this
                // document's scratch directory: none is left behind, and two documents that
                // build the same /tmp/replay_bench side by side do not write over each other.
                .args(["-c", &script(&block).replace("/tmp/", &scratch_dir)])
                .current_dir(root)
                .env("PATH", &path)
                .env("XDG_DATA_HOME", scratch.path())
                .env("TMPDIR", scratch.path())
                .env("LATKIT_DB", scratch.path().join("readme.db"))
                .env("NO_COLOR", "1")
                .env_remove("COLUMNS")
                .output()
                .unwrap()
        };
        let out = once_for_every_document(&block, run);
        assert!(
            out.status.success(),
            "{document}:{line}: the block failed ({}):\n{block}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // Where the suite's time goes (seen with --nocapture).
        eprintln!(
            "{document}:{line}: {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
}

/// The outcome of `block`, run once for all documents that show it when it keeps nothing of
/// its document (no store, no scratch file): the README's `--interleave` measurement is the go
/// guide's too, a minute each on two cores. A second document waits for the first's run.
fn once_for_every_document(
    block: &str,
    run: impl FnOnce() -> std::process::Output,
) -> std::process::Output {
    type Outcomes = HashMap<String, Arc<OnceLock<std::process::Output>>>;
    static SHARED: LazyLock<Mutex<Outcomes>> = LazyLock::new(Default::default);
    let own_state = [
        "/tmp/", "mktemp", "store", "history", "site", "--db", "--save", "@",
    ];
    if own_state.iter().any(|s| block.contains(s)) {
        return run();
    }
    let outcome = Arc::clone(
        SHARED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(block.to_string())
            .or_default(),
    );
    outcome.get_or_init(run).clone()
}

/// A test per document, so that the documents' examples run side by side, each with a
/// history store of its own; and the list of them, which must name every document with
/// examples.
macro_rules! examples {
    ($($test:ident: $document:literal,)*) => {
        $(
            #[test]
            #[cfg_attr(
                not(feature = "interop"),
                ignore = "runs the examples, with go, g++, hyperfine and cyclictest; `--features interop` runs it"
            )]
            fn $test() {
                examples_of($document);
            }
        )*
        const TESTED: &[&str] = &[$($document),*];
    };
}

examples! {
    examples_in_readme: "README.md",
    examples_in_calibrate_guide: "docs/calibrate.md",
    examples_in_check_guide: "docs/check.md",
    examples_in_compare_guide: "docs/compare.md",
    examples_in_counts_guide: "docs/counts.md",
    examples_in_exec_guide: "docs/exec.md",
    examples_in_gbench_guide: "docs/gbench.md",
    examples_in_go_guide: "docs/go.md",
    examples_in_net_guide: "docs/net.md",
    examples_in_page_guide: "docs/page.md",
    examples_in_parse_guide: "docs/parse.md",
    examples_in_sequential_guide: "docs/sequential.md",
    examples_in_site_guide: "docs/site.md",
    examples_in_store_guide: "docs/store.md",
    examples_in_timer_guide: "docs/timer.md",
}

#[test]
fn every_document_with_examples_has_a_test_of_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    documents.push("README.md".into());
    for document in documents {
        let text = std::fs::read_to_string(root.join(&document)).unwrap();
        let examples = !sh_blocks(&text).is_empty();
        assert_eq!(
            examples,
            TESTED.contains(&document.as_str()),
            "{document}: a document with sh blocks is listed in `examples!`, and only such"
        );
    }
}

/// The README's history example shows what happened: `history --regressions` over the stored
/// fixture lists exactly the slowdowns injected into it, each at its run and of its size.
#[test]
fn the_readme_history_lists_exactly_its_injected_slowdowns() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let scratch = tempfile::tempdir().unwrap();
    let db = scratch.path().join("h.db");
    let mut runs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    runs.sort();
    let out = crate::common::latkit()
        .args(["store", "add", "-q", "--db"])
        .arg(&db)
        .args(&runs)
        .output()
        .unwrap();
    crate::common::assert_succeeded(&out);
    let out = crate::common::latkit()
        .args(["history", "--regressions", "--format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "regressions exit 1");
    let csv = String::from_utf8(out.stdout).unwrap();
    let injected = std::fs::read_to_string(root.join("injected.tsv")).unwrap();
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.starts_with("Regressions,"))
        .collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let percent_of = regex::Regex::new(r"\+([0-9.]+)%").unwrap();
    for line in injected.lines() {
        let [_, bench, percent] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        let row = rows.iter().find(|r| r.contains(bench)).expect(bench);
        let found: f64 = percent_of.captures(row).unwrap()[1].parse().unwrap();
        let size: f64 = percent.parse().unwrap();
        assert!(
            (found - size).abs() < 3.0,
            "{bench}: {found} % for {size} %: {row}"
        );
    }
}
