//! Completions and the man page come from the clap definitions: every subcommand and flag is
//! in them, and the real shell and man accept them.

use crate::common::{latkit, stdout_of};
use std::process::Command;

#[test]
fn bash_loads_the_completions_and_completes_subcommands_and_flags() {
    let script = stdout_of(latkit().args(["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latkit.bash");
    std::fs::write(&file, &script).unwrap();
    // Ask bash's own completion machinery what `latkit com<TAB>` and `latkit compare --fa<TAB>`
    // offer.
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
                 _latkit latkit '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                file.display(),
                words.join(" "),
                words.len() - 1,
                line.len(),
                words[words.len() - 1],
                words[words.len() - 2],
            ))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let subcommands = complete("latkit com");
    assert!(subcommands.lines().any(|l| l == "compare"), "{subcommands}");
    assert!(
        subcommands.lines().any(|l| l == "completions"),
        "{subcommands}"
    );
    let flags = complete("latkit compare --fa");
    assert!(flags.lines().any(|l| l == "--fail-on"), "{flags}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(latkit().args(["completions", shell]));
        assert!(script.contains("against-history"), "{shell}");
    }
    latkit().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn the_man_page_documents_every_subcommand_and_renders_cleanly() {
    let page = stdout_of(latkit().arg("man"));
    for name in [
        "latkit-timer",
        "latkit-compare",
        "latkit-history",
        "latkit-store",
        "latkit-page",
    ] {
        assert!(page.contains(&format!(".TH {name} 1")), "{name}");
    }
    // Flags as --help shows them.
    for flag in [
        "against\\-history",
        "fail\\-on",
        "plot\\-kind",
        "interleave",
    ] {
        assert!(page.contains(flag), "{flag}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latkit.1");
    std::fs::write(&file, &page).unwrap();
    let out = Command::new(crate::common::peer("groff", "apt-get install groff-base"))
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"]) // -k: preconv, as man does for UTF-8
        .arg(&file)
        .output()
        .expect("groff runs (apt-get install groff-base)");
    assert!(out.status.success());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "groff warnings:\n{warnings}");
}
