//! No test outside the interop tier sleeps: a hermetic test runs on a scripted clock, or waits
//! for what it needs (a process's exit, a pipe's open), never for time to pass. A function
//! that sleeps is an interop-tier test (`feature = "interop"` in its attributes) or a helper
//! that says it serves that tier alone (`interop_only`).

use std::path::Path;

#[test]
fn only_the_interop_tier_sleeps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    crate::common::rust_files(&root, &mut files);
    let mut sleepers = Vec::new();
    let sleep = ["thread::sleep", "("].concat();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            if !line.contains(&sleep) {
                continue;
            }
            let Some(start) = (0..=at).rev().find(|&i| is_fn(lines[i])) else {
                sleepers.push(format!("{}:{}", file.display(), at + 1));
                continue;
            };
            let attributes = lines[..start]
                .iter()
                .rev()
                .take_while(|l| !matches!(l.trim(), "" | "}"))
                .any(|l| l.contains("feature = \"interop\""));
            let says_so = lines[start..=at]
                .iter()
                .any(|l| l.contains("interop_only("));
            if !attributes && !says_so {
                sleepers.push(format!(
                    "{}:{} in {}",
                    file.display(),
                    at + 1,
                    lines[start].trim()
                ));
            }
        }
    }
    assert!(
        sleepers.is_empty(),
        "sleeps outside the interop tier:\n{}",
        sleepers.join("\n")
    );
}

fn is_fn(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.iter().position(|w| *w == "fn").is_some_and(|at| {
        words[..at]
            .iter()
            .all(|w| *w == "pub" || w.starts_with("pub("))
    })
}
