//! No function is longer than 80 lines, from its `fn` line to its closing brace, and no source
//! file longer than 600 lines, tests included: a longer one does several jobs, and each
//! deserves a name.

use std::path::Path;

const LONGEST: usize = 80;
const LONGEST_FILE: usize = 600;

/// The code with string and character literals and comments blanked (newlines kept), so
/// that braces inside them do not count.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let end = match rest {
            ['/', '/', ..] => rest.iter().position(|&c| c == '\n').unwrap_or(rest.len()),
            ['/', '*', ..] => rest.windows(2).position(|w| w == ['*', '/']).unwrap_or(0) + 2,
            ['r', '#' | '"', ..] if i == 0 || !chars[i - 1].is_alphanumeric() => {
                let hashes = rest[1..].iter().take_while(|&&c| c == '#').count();
                if rest.get(1 + hashes) != Some(&'"') {
                    1
                } else {
                    let close: Vec<char> = std::iter::once('"')
                        .chain("#".repeat(hashes).chars())
                        .collect();
                    let body = 2 + hashes;
                    body + rest[body..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())
                        .unwrap_or(0)
                        + close.len()
                }
            }
            ['"', ..] => {
                let mut j = 1;
                while j < rest.len() && rest[j] != '"' {
                    j += if rest[j] == '\\' { 2 } else { 1 };
                }
                j + 1
            }
            ['\'', '\\', ..] => rest[2..]
                .iter()
                .position(|&c| c == '\'')
                .map_or(1, |p| p + 3),
            ['\'', _, '\'', ..] => 3,
            _ => {
                out.push(rest[0]);
                i += 1;
                continue;
            }
        };
        let end = end.min(rest.len());
        out.extend(rest[..end].iter().map(|&c| blank(c)));
        i += end;
    }
    out
}

/// `(first line, name, lines)` of every function in the file, its tests' too.
fn functions(source: &str) -> Vec<(usize, String, usize)> {
    let code = code_only(source);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for start in 0..lines.len() {
        let words: Vec<&str> = lines[start].split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = ["pub", "const", "unsafe", "async", "extern", "#[test]"];
        if !words[..at]
            .iter()
            .all(|w| qualifiers.contains(w) || w.starts_with("pub("))
        {
            continue;
        }
        let name: String = words
            .get(at + 1)
            .map_or("", |w| w)
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i32, false);
        for (offset, line) in lines[start..].iter().enumerate() {
            for c in line.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth == 0 || !opened && line.trim_end().ends_with(';') {
                found.push((start + 1, name.clone(), offset + 1));
                break;
            }
        }
    }
    found
}

#[test]
fn no_function_is_over_80_lines_and_no_file_over_600() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&root, &mut files);
    let mut long = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        let lines = source.lines().count();
        if lines > LONGEST_FILE {
            long.push(format!(
                "{}: {lines} lines (at most {LONGEST_FILE})",
                file.display()
            ));
        }
        for (line, name, length) in functions(&source) {
            if length > LONGEST {
                long.push(format!("{}:{line} {name}: {length} lines", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST} lines or files over {LONGEST_FILE}:\n{}",
        long.join("\n")
    );
}

/// The counter itself: braces in strings, characters and comments do not count, and a
/// long function is seen.
#[test]
fn the_counter_sees_what_it_should() {
    let body = "    let x = 1;\n".repeat(LONGEST);
    let source = format!(
        "fn short() {{ let s = \"}}}}\"; let c = '}}'; // }}\n}}\nfn long() {{\n{body}}}\n"
    );
    let found = functions(&source);
    assert_eq!(found[0], (1, "short".to_string(), 2));
    assert_eq!(found[1], (3, "long".to_string(), LONGEST + 2));
}
