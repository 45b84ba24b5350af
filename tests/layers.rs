//! The layers point one way: every `crate::` path in a module names a module of its own layer
//! or one below it (../shared/DESIGN.md). Adding an upward edge fails here, naming file and line.

use std::path::Path;

/// Rank of each top-level module: a module may use modules of its rank or lower.
const RANKS: &[(&str, u8)] = &[
    // Data and utilities that import no other layer.
    ("model", 0),
    ("error", 0),
    ("interrupt", 0),
    ("atomic_file", 0),
    ("toml_file", 0),
    // Sources, the host they measure, and the files that configure analysis.
    ("ingest", 1),
    ("probe", 1),
    ("runner", 1),
    ("host", 1),
    ("spec", 1),
    ("targets", 1),
    ("page_spec", 1),
    // The history store reads and writes runs.
    ("store", 1),
    ("analyze", 2),
    ("report", 3),
    // Argument definitions: data the commands consume (clap lives only here).
    ("cli", 4),
    // Each subcommand's pipeline, from parsed arguments to sinks; main.rs calls it.
    ("commands", 5),
];

fn rank(module: &str) -> Option<u8> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let Some(own) = rank(&top) else {
            continue; // main.rs, lib.rs: the top
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices("crate::") {
                let used: String = line[at + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let Some(theirs) = rank(&used) else { continue };
                if theirs > own {
                    upward.push(format!(
                        "src/{}:{}: {top} uses {used}",
                        relative.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges pointing up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn library_types_carry_no_clap_derive() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if relative.starts_with("cli") || relative == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("clap::"), "src/{relative} uses clap");
    }
}

#[test]
fn analysis_and_sinks_never_decide_by_the_source_name() {
    // What a run holds is in the model (metric kinds, distributions, peer metrics); the name
    // of the format it came from may be printed, never matched on.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for layer in ["analyze", "report"] {
        rust_files(&src.join(layer), &mut files);
    }
    let mut decisions = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let compact: String = line.split_whitespace().collect();
            if [
                "source.format==",
                "source.format.as_str()",
                "source.format!=",
            ]
            .iter()
            .any(|p| compact.contains(p))
            {
                decisions.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(decisions.is_empty(), "{}", decisions.join("\n"));
}
