//! The layers point one way: every `crate::` or `super::` path in a module (grouped imports
//! too) names a module of its own layer or one below it (../shared/DESIGN.md), every module
//! has a layer, and no files use each other in a circle, within a layer either.

use std::path::Path;

/// Rank of each top-level module: a module may use modules of its rank or lower.
const RANKS: &[(&str, u8)] = &[
    // Data and utilities that import no other layer.
    ("model", 0),
    ("error", 0),
    ("interrupt", 0),
    ("atomic_file", 0),
    // Sources, the host they measure, and what users write to configure them (spec).
    ("ingest", 1),
    ("probe", 1),
    ("runner", 1),
    ("host", 1),
    // The outside world (processes, console, clock, interrupt) as runners and sinks reach it.
    ("env", 1),
    ("spec", 1),
    // The history store reads and writes runs.
    ("store", 1),
    ("analyze", 2),
    ("report", 3),
    // Each subcommand's pipeline, from plain options to sinks.
    ("commands", 4),
    // The command line: parses and checks flags into the commands' options (clap lives only
    // here); main.rs calls it, then the command.
    ("cli", 5),
];

fn rank(module: &str) -> Option<u8> {
    RANKS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// A source file's module path: `analyze/stats.rs` is `[analyze, stats]`, a `mod.rs` its
/// directory's.
fn module_of(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// Every path a line of code names through `crate::` or `super::`, grouped imports
/// (`crate::{model::Run, error::{Error, Result}}`) expanded, as segments from the crate root.
fn named_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (start, root) in [("crate::", Vec::new()), ("super::", parent(module))] {
        for (at, _) in code.match_indices(start) {
            // `super::` inside `crate::super`-like text is not a path of its own.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            expand(&code[at + start.len()..], root.clone(), &mut out);
        }
    }
    out
}

/// The module a `super::` in `module` names (a file's own module is its last segment).
fn parent(module: &[String]) -> Vec<String> {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// Reads one path (or a `{…}` group of paths) from the start of `rest` after `prefix`.
fn expand(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => {
                        expand(group[item..i].trim_start(), path.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        expand(group[item..i].trim_start(), path.clone(), out);
                        item = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let segment: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if segment.is_empty() || segment == "self" {
            break;
        }
        rest = &rest[segment.len()..];
        path.push(segment);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// The source files' module paths and the code of each before its tests.
fn sources() -> Vec<(String, Vec<String>, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap().to_path_buf();
            let text = std::fs::read_to_string(&file).unwrap();
            let code: String = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            (
                format!("src/{}", relative.display()),
                module_of(&relative),
                code,
            )
        })
        .collect()
}

/// The node a path stands for in the module graph: a top-level module and, for a directory
/// module, the file or directory below it that the path goes into.
fn node(path: &[String], modules: &std::collections::BTreeSet<Vec<String>>) -> Vec<String> {
    // The deepest module of the path that is a file: files in one directory are nodes of
    // their own (the path's last segments may be items in it).
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|m| modules.contains(m))
        .unwrap_or_else(|| path.iter().take(1).cloned().collect())
}

#[test]
fn every_module_has_a_layer() {
    let unranked: Vec<String> = sources()
        .into_iter()
        .filter(|(_, module, _)| !module.is_empty() && module[0] != "main" && module[0] != "lib")
        .filter(|(_, module, _)| rank(&module[0]).is_none())
        .map(|(file, _, _)| file)
        .collect();
    assert!(
        unranked.is_empty(),
        "modules with no layer in RANKS: {unranked:?}"
    );
}

#[test]
fn no_module_uses_a_higher_layer() {
    let mut upward = Vec::new();
    for (file, module, code) in sources() {
        let Some(own) = module.first().and_then(|m| rank(m)) else {
            continue; // main.rs, lib.rs: the top
        };
        for path in named_paths(&code, &module) {
            let Some(theirs) = path.first().and_then(|m| rank(m)) else {
                continue;
            };
            if theirs > own {
                upward.push(format!("{file}: {} uses {}", module[0], path.join("::")));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges pointing up:\n{}",
        upward.join("\n")
    );
}

/// No circle among modules, within a layer too: each file (or directory) below a top-level
/// module is a node, and a path into it from another node is an edge.
#[test]
fn no_modules_use_each_other_in_a_circle() {
    use std::collections::BTreeSet;
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(_, m, _)| m.clone()).collect();
    let mut edges = Graph::new();
    for (_, module, code) in &sources {
        if module.first().is_none_or(|m| rank(m).is_none()) {
            continue;
        }
        let from = node(module, &modules);
        for path in named_paths(code, module) {
            let to = node(&path, &modules);
            // A directory module's own file declares and re-exports its children.
            let facade = to.starts_with(&from);
            if to != from && !to.is_empty() && !facade && rank(&to[0]).is_some() {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    let circles = circles(&edges);
    assert!(
        circles.is_empty(),
        "modules on a circle of uses: {circles:?}"
    );
}

type Graph = std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>;

/// The nodes of `edges` that reach themselves.
fn circles(edges: &Graph) -> std::collections::BTreeSet<String> {
    let mut circles = std::collections::BTreeSet::new();
    for start in edges.keys() {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack: Vec<Vec<String>> = edges[start].iter().cloned().collect();
        while let Some(next) = stack.pop() {
            if next == *start {
                circles.insert(start.join("::"));
                break;
            }
            if seen.insert(next.clone()) {
                stack.extend(edges.get(&next).into_iter().flatten().cloned());
            }
        }
    }
    circles
}

/// The checks themselves: grouped imports and `super::` paths are read, and a circle through
/// three modules is found (the old test skipped `use crate::{…}` and allowed any edge within
/// a layer, so it passed with `commands` using `cli` and two circles).
#[test]
fn the_checks_read_grouped_imports_and_find_circles() {
    let module = |m: &str| m.split("::").map(str::to_string).collect::<Vec<_>>();
    let code = "use crate::{model::{Run, Note}, error::Result};\nuse super::view::Ratio;";
    let paths: Vec<String> = named_paths(code, &module("analyze::stats"))
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "model::Run",
            "model::Note",
            "error::Result",
            "analyze::view::Ratio"
        ]
    );
    let mut edges = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        edges.entry(module(from)).or_default().insert(module(to));
    }
    assert_eq!(
        circles(&edges).into_iter().collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    // Files of one directory are nodes of their own (frame/convert.rs and frame/x86.rs once
    // used each other unseen, when the directory was the node).
    let modules = ["probe::frame", "probe::frame::convert", "probe::frame::x86"]
        .map(module)
        .into();
    assert_eq!(
        node(&module("probe::frame::x86::avx2_rows"), &modules),
        module("probe::frame::x86")
    );
    assert_eq!(
        node(&module("probe::frame::PixelFormat"), &modules),
        module("probe::frame")
    );
}

#[test]
fn library_types_carry_no_clap_derive() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&src, &mut files);
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
        crate::common::rust_files(&src.join(layer), &mut files);
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
