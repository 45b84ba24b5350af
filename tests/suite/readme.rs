//! Every example in the `sh` blocks of the README and of `docs/` pastes and runs, from the
//! repository's root, on the files the repository has: each block as one bash script, with
//! the release binary as `latkit` and a scratch history store.

use std::path::Path;

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
/// and a gate's verdict (exit 1 from `--fail-on` or `--check`, 3 from `--runs auto`)
/// accepted as a result; a tool that failed (5, 6) is not.
fn script(block: &str) -> String {
    let joined = block.replace("\\\n", " ");
    let mut out = String::from("set -euo pipefail\n");
    for line in joined.lines() {
        let command = line.split(" # ").next().unwrap_or(line).trim_end();
        if command.trim_start().starts_with('#') || NOT_RUN.iter().any(|s| line.contains(s)) {
            continue;
        }
        if command.contains("--fail-on") || command.contains("--check") {
            out.push_str(&format!("{command} || [ $? -eq 1 -o $? -eq 3 ]\n"));
        } else {
            out.push_str(command);
            out.push('\n');
        }
    }
    out
}

/// The README, then every guide in `docs/` by name.
fn documents(root: &Path) -> Vec<std::path::PathBuf> {
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "runs every example, with go, g++, hyperfine and cyclictest"
)]
fn every_readme_example_pastes_and_runs() {
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
    let mut count = 0;
    for document in documents(root) {
        let text = std::fs::read_to_string(&document).unwrap();
        let name = document.strip_prefix(root).unwrap().display().to_string();
        for (line, block) in sh_blocks(&text) {
            count += 1;
            let started = std::time::Instant::now();
            let out =
                std::process::Command::new(crate::common::peer("bash", "apt-get install bash"))
                    .args(["-c", &script(&block)])
                    .current_dir(root)
                    .env("PATH", &path)
                    .env("XDG_DATA_HOME", scratch.path())
                    .env("LATKIT_DB", scratch.path().join("readme.db"))
                    .env("NO_COLOR", "1")
                    .env_remove("COLUMNS")
                    .output()
                    .unwrap();
            assert!(
                out.status.success(),
                "{name}:{line}: the block failed ({}):\n{block}\n--- stderr ---\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            // Where the suite's time goes (seen with --nocapture).
            eprintln!("{name}:{line}: {:.1} s", started.elapsed().as_secs_f64());
        }
    }
    assert!(count >= 10, "{count} sh blocks");
}
