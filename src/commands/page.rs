use super::Env;
use super::{Reading, read_inputs, say_warnings};
use crate::analyze::page::build_page;
use crate::analyze::{EnrichOptions, build_report};
use crate::error::{Error, Result};
use crate::ingest::merge;
use crate::report::sink::Destination;
use crate::spec::page::PageSpec;
use std::path::PathBuf;

/// What a performance page is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFormat {
    /// GitHub markdown, for a wiki page or a docs folder.
    Markdown,
    /// One self-contained HTML file, with the results' plots.
    Html,
}

/// A page: its spec, the results it shows, and where it goes.
pub struct PageOptions {
    pub spec: PathBuf,
    /// Results files, pooled as one run; none (or `-`) is standard input.
    pub files: Vec<String>,
    pub reading: Reading,
    pub format: PageFormat,
    /// The page's file; `None` is standard output.
    pub out: Option<PathBuf>,
}

pub fn run(args: PageOptions, env: &Env) -> Result<()> {
    let console = &env.console;
    let spec = PageSpec::load(&args.spec)?;
    let destination = Destination::open(args.out.as_deref(), &console.stdout)?;
    let (runs, mut notes) = read_inputs(&args.files, &args.reading, false, console)?;
    let count = runs.len();
    let (run, merge_notes) =
        merge(runs).ok_or_else(|| Error::Input("no results to put on the page".into()))?;
    notes.extend(merge_notes);
    let page = build_page(&spec, &run, count)?;
    say_warnings(&notes, console);
    let mut text = Vec::new();
    match args.format {
        PageFormat::Markdown => crate::report::page::markdown(&page, &mut text),
        PageFormat::Html => {
            let mut report = build_report(vec![run], Vec::new(), &EnrichOptions::default())?;
            report.generated = Some(env.report_time()?);
            crate::report::html::page(&page, &report, &mut text)
        }
    }
    .map_err(|e| Error::io("page", e))?;
    destination.write_whole(&text, console)
}
