//! The format registry: a new format is one file and one registry line, and detection, the
//! "unrecognised input" message and `--input-format` read the registry.

mod dummy_format;

use latkit::ingest::format::{BUILTIN, InputFormat, by_name};
use latkit::ingest::read_path_with;
use std::io::Write;

#[test]
fn a_new_format_is_one_file_and_one_registry_line() {
    let registry: Vec<&'static dyn InputFormat> = BUILTIN
        .iter()
        .copied()
        .chain([&dummy_format::Dummy as &dyn InputFormat])
        .collect();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(file, "DUMMY stage 1500\nDUMMY other 20").unwrap();
    let path = file.path().to_str().unwrap();
    let input = read_path_with(&registry, path, None).unwrap();
    let run = &input.runs[0];
    assert_eq!(run.source.format, "dummy");
    assert_eq!(run.benchmarks.len(), 2);
    assert_eq!(run.benchmarks[0].metrics[0].values, [1500.0]);
    // Without the registry line it is unrecognised, and the message lists what is read.
    let Err(err) = read_path_with(BUILTIN, path, None) else {
        panic!("read without its format");
    };
    let err = err.to_string();
    assert!(err.contains("not a format latkit reads"), "{err}");
    assert!(!err.contains("dummy"), "{err}");
    // Named explicitly, as --input-format does.
    assert!(by_name(&registry, "dummy").is_some());
}

#[test]
fn every_registered_format_is_an_input_format_choice_and_listed_when_unrecognised() {
    let help = crate::common::stdout_of(crate::common::latkit().args(["parse", "--help"]));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "nothing latkit reads\n").unwrap();
    let out = crate::common::latkit()
        .arg("parse")
        .arg(&junk)
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&out.stderr);
    for format in BUILTIN {
        assert!(
            help.contains(format.name()),
            "--help lacks {}",
            format.name()
        );
        assert!(
            help.contains(format.describe().split('`').next().unwrap()),
            "--help lacks {}",
            format.describe()
        );
        assert!(message.contains(format.name()), "{message}");
    }
}
