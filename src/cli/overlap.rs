//! No output replaces an input: before anything runs, every path an output option names is
//! compared with every other path of the same command line by what the file is (device and
//! inode, links followed), not by how it is spelled. `parse in.txt --plot in.txt` would
//! otherwise replace the results with the plot, and `check --targets t.toml r.txt --out
//! t.toml` the targets with the report.

use crate::error::{Error, Result};
use clap::{ArgMatches, Command};
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;

/// The options that write a file (a store too: `--db` writes), by their ids in the command-line
/// definitions (`export_markdown` for `--export-markdown`): the one list of outputs.
pub const OUTPUTS: [&str; 15] = [
    "out",
    "save",
    "json",
    "export_json",
    "export_markdown",
    "export_csv",
    "export_asciidoc",
    "export_orgmode",
    "output",
    "junit",
    "plot",
    "raw",
    "gnuplot",
    "hgrm",
    "db",
];

/// Options whose values are commands latkit runs: each word of them (split as a shell
/// would) that names a file is read, or written, by the command, so no output may name it.
const COMMANDS: [&str; 11] = [
    "commands",
    "command",
    "reference",
    "build",
    "extra",
    "argv",
    "prepare",
    "conclude",
    "setup",
    "cleanup",
    "harness",
];

/// One value of the command line: the option (or positional) that gave it, its id in the
/// definitions, and the value.
struct Given<'a> {
    option: String,
    id: String,
    value: std::borrow::Cow<'a, OsStr>,
}

/// Refuses (exit 2) a command line where an output option names the same file as an input,
/// a spec or another output.
pub fn refuse_overlaps(command: &Command, matches: &ArgMatches) -> Result<()> {
    refuse_overlaps_with(command, matches, &[])
}

/// As [`refuse_overlaps`], with outputs given outside `matches` (`latkit calibrate --save`
/// beside the command line it runs): `(option, value)`.
pub fn refuse_overlaps_with(
    command: &Command,
    matches: &ArgMatches,
    outputs: &[(&str, &OsStr)],
) -> Result<()> {
    let mut given: Vec<Given> = outputs
        .iter()
        .map(|&(option, value)| Given {
            option: option.to_string(),
            id: option.trim_start_matches('-').replace('-', "_"),
            value: value.into(),
        })
        .collect();
    collect(command, matches, &mut given);
    let keys: Vec<Option<Key>> = given
        .iter()
        .map(|g| key(&g.value, is_output(&g.id)))
        .collect();
    for (i, output) in given.iter().enumerate() {
        let Some(written) = keys[i].as_ref().filter(|_| is_output(&output.id)) else {
            continue;
        };
        let same = given
            .iter()
            .enumerate()
            // A global option (`--db`) shows in its command's and its subcommand's matches.
            .filter(|(_, other)| (&other.option, &other.value) != (&output.option, &output.value))
            .find(|&(j, _)| j != i && keys[j].as_ref() == Some(written));
        if let Some((_, other)) = same {
            return Err(Error::Input(format!(
                "{} {} names the same file as {} {}: latkit never writes over a file the \
                 command reads or writes otherwise; name another file",
                output.option,
                output.value.to_string_lossy(),
                other.option,
                other.value.to_string_lossy()
            )));
        }
    }
    Ok(())
}

fn is_output(id: &str) -> bool {
    OUTPUTS.contains(&id)
}

/// Every value on the command line, with the subcommands' own, each named by its option
/// (`--out`) or, for a positional, as `input`.
fn collect<'a>(command: &Command, matches: &'a ArgMatches, given: &mut Vec<Given<'a>>) {
    for arg in command.get_arguments() {
        let Ok(Some(values)) = matches.try_get_raw(arg.get_id().as_str()) else {
            continue;
        };
        let id = arg.get_id().as_str();
        // A secret is no path, and no message may repeat it.
        if id == "token" {
            continue;
        }
        let option = arg
            .get_long()
            .map_or_else(|| "input".to_string(), |long| format!("--{long}"));
        for value in values {
            if COMMANDS.contains(&id) {
                // `cat in.txt` reads in.txt, `./prog` runs prog: its words are files too.
                let words = value.to_str().and_then(shlex::split).unwrap_or_default();
                given.extend(words.into_iter().map(|word| Given {
                    option: format!("a word of the command ({option})"),
                    id: id.to_string(),
                    value: std::ffi::OsString::from(word).into(),
                }));
            }
            given.push(Given {
                option: option.clone(),
                id: id.to_string(),
                value: value.into(),
            });
        }
    }
    if let Some((name, sub)) = matches.subcommand()
        && let Some(sub_command) = command.find_subcommand(name)
    {
        collect(sub_command, sub, given);
    }
}

/// What a value names, to compare it with the others.
#[derive(PartialEq, Eq)]
enum Key {
    /// An existing regular file: its device and inode.
    File(u64, u64),
    /// A file an output will create: its folder, links resolved, and its name.
    New(std::path::PathBuf),
}

/// What a value names: an existing regular file, or for an output a file still to be made. A
/// store URL, `-`, a device such as `/dev/null` or a word that names no file is none; an
/// input `label=path` is its path.
fn key(value: &OsStr, output: bool) -> Option<Key> {
    let path = std::path::Path::new(value.to_str().map_or(value, |v| {
        OsStr::new(v.strip_prefix("sqlite://").unwrap_or(v))
    }));
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file().then(|| Key::File(meta.dev(), meta.ino())),
        Err(_) if output && value != "-" => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => std::path::Path::new("."),
            };
            let folder = std::fs::canonicalize(folder).ok()?;
            Some(Key::New(folder.join(path.file_name()?)))
        }
        // An input written `label=path` (benchstat's column label) reads `path`.
        Err(_) => {
            let (_, path) = crate::commands::labelled_file(value.to_str()?);
            let meta = std::fs::metadata(path).ok()?;
            meta.is_file().then(|| Key::File(meta.dev(), meta.ino()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction};

    /// The path-valued options that only read.
    const READS: [&str; 11] = [
        "binary",
        "calibration",
        "check",
        "dir",
        "ignore_file",
        "spec",
        "suite",
        "targets",
        "tracefs",
        "token_file",
        "files",
    ];

    /// Every argument of every latkit command, with the command's path (`latkit exec`).
    fn every_argument() -> Vec<(String, clap::Arg)> {
        use clap::CommandFactory;
        fn walk(command: &Command, at: &str, all: &mut Vec<(String, clap::Arg)>) {
            all.extend(
                command
                    .get_arguments()
                    .map(|arg| (at.to_string(), arg.clone())),
            );
            for sub in command.get_subcommands() {
                walk(sub, &format!("{at} {}", sub.get_name()), all);
            }
        }
        let mut all = Vec::new();
        walk(&crate::cli::Cli::command(), "latkit", &mut all);
        all
    }

    /// Every option of every command whose value is a path is an output or a read: a new one
    /// in neither list fails here, before it can write over an input unchecked.
    #[test]
    fn every_path_valued_option_is_declared_an_input_or_an_output() {
        let (mut undeclared, mut seen) = (Vec::new(), 0);
        for (at, arg) in every_argument() {
            let id = arg.get_id().as_str();
            let path =
                arg.get_value_parser().type_id() == std::any::TypeId::of::<std::path::PathBuf>();
            if path || OUTPUTS.contains(&id) {
                seen += 1;
            }
            if path && !OUTPUTS.contains(&id) && !READS.contains(&id) {
                undeclared.push(format!("{at} {id}"));
            }
        }
        assert!(
            undeclared.is_empty(),
            "neither input nor output: {undeclared:?}"
        );
        assert!(seen > 80, "only {seen} path-valued options found");
    }

    /// Every option whose value is a command latkit runs (its value named CMD, COMMAND or
    /// ARGS) has its words checked: a new one missing from the list fails here.
    #[test]
    fn every_command_valued_option_has_its_words_checked() {
        let (mut unchecked, mut seen) = (Vec::new(), 0);
        for (at, arg) in every_argument() {
            let names = arg.get_value_names().unwrap_or_default();
            if names
                .iter()
                .any(|n| ["CMD", "COMMAND", "ARGS"].contains(&n.as_str()))
            {
                seen += 1;
                if !COMMANDS.contains(&arg.get_id().as_str()) {
                    unchecked.push(format!("{at} {}", arg.get_id()));
                }
            }
        }
        assert!(unchecked.is_empty(), "words not checked: {unchecked:?}");
        assert!(seen >= 8, "only {seen} command-valued options found");
    }

    fn command() -> Command {
        Command::new("latkit").subcommand(
            Command::new("parse")
                .arg(Arg::new("files").action(ArgAction::Append))
                .arg(Arg::new("out").long("out"))
                .arg(Arg::new("plot").long("plot").action(ArgAction::Append))
                .arg(Arg::new("check").long("check")),
        )
    }

    fn check(dir: &std::path::Path, args: &[&str]) -> Result<()> {
        let args = args.iter().map(|a| a.replace("DIR", dir.to_str().unwrap()));
        let argv = ["latkit", "parse"]
            .into_iter()
            .map(String::from)
            .chain(args);
        let matches = command().get_matches_from(argv);
        refuse_overlaps(&command(), &matches)
    }

    #[test]
    fn an_output_naming_an_input_by_any_spelling_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.txt"), "x").unwrap();
        std::fs::write(dir.path().join("t.toml"), "x").unwrap();
        std::os::unix::fs::symlink("in.txt", dir.path().join("link")).unwrap();
        for args in [
            &["DIR/in.txt", "--plot", "DIR/in.txt"][..],
            &["DIR/in.txt", "--out", "DIR/./link"],
            &["DIR/in.txt", "--check", "DIR/t.toml", "--out", "DIR/t.toml"],
        ] {
            let refused = check(dir.path(), args).unwrap_err().to_string();
            assert!(refused.contains("names the same file as"), "{refused}");
        }
        let refused = check(dir.path(), &["DIR/in.txt", "--plot", "DIR/link"]).unwrap_err();
        assert!(refused.to_string().starts_with("--plot"), "{refused}");
        // Two outputs to one file still to be made: one would replace the other.
        let refused = check(
            dir.path(),
            &["--out", "DIR/r.json", "--plot", "DIR/../x/../*/r.json"],
        );
        assert!(
            refused.is_ok(),
            "a path through a missing folder names nothing"
        );
        let refused = check(
            dir.path(),
            &["--out", "DIR/r.json", "--plot", "DIR/./r.json"],
        );
        let refused = refused.unwrap_err().to_string();
        assert!(
            refused.contains("names the same file as --plot"),
            "{refused}"
        );
        for args in [
            &["DIR/in.txt", "--out", "DIR/new.txt"][..],
            &["DIR/in.txt", "--out", "/dev/null", "--plot", "/dev/null"],
            &["DIR/in.txt", "--out", "-"],
        ] {
            check(dir.path(), args).unwrap();
        }
    }
}
