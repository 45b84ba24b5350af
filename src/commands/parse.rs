use super::{load_suite, report};
use crate::cli::ParseArgs;
use crate::error::{Error, Result};
use crate::ingest::{merge, read_path};

pub fn run(args: ParseArgs) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let files = if args.files.is_empty() {
        vec!["-".to_string()]
    } else {
        args.files.clone()
    };
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    for file in &files {
        let input = read_path(file, args.input_format)?;
        if args.strict && input.malformed > 0 {
            let first = input.notes.iter().find(|n| n.line.is_some());
            return Err(Error::Input(format!(
                "{} (--strict)",
                first.map_or_else(
                    || format!("{file}: malformed result line"),
                    |n| n.to_string()
                )
            )));
        }
        runs.extend(input.runs);
        notes.extend(input.notes);
    }
    if args.merge {
        runs = merge(runs).into_iter().collect();
    }
    report(runs, notes, &args.report, &suite)
}
