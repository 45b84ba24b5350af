//! Sinks beside the report: `.hgrm` and gnuplot files, the verdict, JUnit XML and single
//! plots.

use super::{Destination, Sink, buffered};
use crate::analyze::Report;
use crate::error::Result;
use crate::model::{Level, Note};
use crate::report::{gate, hgrm, xenomai};
use std::io::{self, Write};

/// The latency distribution of the benchmark Xenomai's format shows, as HdrHistogram
/// percentile text (`--hgrm`).
pub struct Hgrm(pub Destination);

/// The every-sample bucket histogram of that benchmark in Xenomai's gnuplot format (`-g`).
pub struct Gnuplot(pub Destination);

impl Sink for Hgrm {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        match hgrm::distribution(report) {
            Some(h) => buffered(&mut self.0, |_, out| hgrm::write(&h, out)),
            None => Ok(()),
        }
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.0.close()
    }

    fn name(&self) -> String {
        self.0.name()
    }
}

impl Sink for Gnuplot {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let text = report
            .runs
            .iter()
            .filter_map(xenomai::shown)
            .find_map(|b| b.histograms.iter().find(|h| h.of == "samples"))
            .map(xenomai::gnuplot)
            .unwrap_or_default();
        self.0.write_all(text.as_bytes())?;
        self.0.flush()
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.0.close()
    }

    fn name(&self) -> String {
        self.0.name()
    }
}

/// The verdict of targets and budget as a table or markdown, with the input lines that could
/// not be read.
pub struct Verdict {
    pub dest: Destination,
    pub markdown: bool,
}

impl Sink for Verdict {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let Some(verdict) = &report.verdict else {
            return Ok(());
        };
        let (skipped, warnings): (Vec<&Note>, Vec<&Note>) = report
            .notes_once()
            .into_iter()
            .filter(|n| n.level == Level::Warning)
            .partition(|n| n.line.is_some());
        let width = self.dest.reader().width;
        let mut text = gate::render(verdict, &skipped, self.markdown, width);
        // What the verdict rests on (a program that failed its own check, a preset set
        // aside) is said under it.
        for note in warnings {
            let bullet = if self.markdown { "- " } else { "" };
            text.push_str(&format!("{bullet}warning: {note}\n"));
        }
        self.dest.write_all(text.as_bytes())?;
        self.dest.flush()
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}

/// The verdict as JUnit XML (`--junit`).
pub struct Junit(pub Destination);

impl Sink for Junit {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        match &report.verdict {
            Some(verdict) => self.0.write_all(gate::junit(verdict).as_bytes()),
            None => Ok(()),
        }
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.0.close()
    }

    fn name(&self) -> String {
        self.0.name()
    }
}

/// One plot as an SVG file (`--plot`): the first plot of its kind, or of the first kind the
/// report has; a report with nothing of that kind to draw is an error.
pub struct PlotFile {
    pub dest: Destination,
    pub kind: Option<crate::report::plot::PlotKind>,
}

impl Sink for PlotFile {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let plot = match self.kind {
            Some(kind) => crate::report::plot::of_kind(report, kind, 1)
                .into_iter()
                .next(),
            None => crate::report::plot::PlotKind::ALL.iter().find_map(|kind| {
                crate::report::plot::of_kind(report, *kind, 1)
                    .into_iter()
                    .next()
            }),
        };
        match plot {
            Some(plot) => self.dest.write_all(plot?.svg.as_bytes()),
            None => Err(io::Error::other(match self.kind {
                Some(kind) => format!("this result has nothing to draw as a {} plot", kind.name()),
                None => "this result has nothing to plot".to_string(),
            })),
        }
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}
