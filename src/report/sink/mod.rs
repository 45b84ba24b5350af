//! Every output is a sink: a destination opened before any work starts, live hooks a probe
//! feeds while it measures (no-ops by default), and the finished report. Several sinks run
//! at once through one [`FanOut`], e.g. Xenomai text live on the terminal, JSON to a file and
//! an `.hgrm`, each written as soon as its part exists and made permanent on close.

mod files;
mod rendered;
mod status;

pub use files::{Gnuplot, Hgrm, Junit, PlotFile, Verdict};
pub use rendered::{Rendered, XenomaiLive};
pub use status::TimerStatus;

use super::Reader;
use crate::analyze::Report;
use crate::atomic_file::OutputFile;
use crate::env::{Console, Stream};
use crate::error::{Error, Result};
use crate::model::{TimerInfo, TimerOverall};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// One second of a timer test, all threads combined, as live output hears it.
pub struct LiveSecond {
    /// 0-based.
    pub index: u64,
    pub min_ns: i64,
    pub avg_ns: i64,
    pub max_ns: i64,
    /// The overall figures up to and including this second.
    pub so_far: TimerOverall,
}

/// What happens while a command works, before its report is finished.
pub enum LiveEvent<'a> {
    /// A timer test started (after its setup, before warm-up).
    TimerStarted(&'a TimerInfo),
    /// One more second of a timer test was measured.
    TimerSecond(&'a LiveSecond),
    /// Part of the work is done and the rest may never be (one command of several timed):
    /// a file is written with what there is now, to be replaced by the finished report.
    Partial(&'a Report),
}

/// An output: live events as the work goes (most sinks ignore them), then the finished
/// report, then made permanent.
pub trait Sink {
    fn live(&mut self, _event: &LiveEvent) -> io::Result<()> {
        Ok(())
    }
    /// Everything is measured and analysed.
    fn finish(&mut self, report: &Report) -> io::Result<()>;
    /// Makes the output permanent (a file is renamed into place); says which file, if any.
    fn close(self: Box<Self>) -> Result<Option<String>>;
    /// What the sink writes to, for messages.
    fn name(&self) -> String;
    /// Whether it may show a comparison's change interval: yes unless it is known to leave
    /// the interval out, so that an output added later gets it.
    fn shows_change_interval(&self) -> bool {
        true
    }
}

/// Where a sink writes: a standard stream, or a file written whole or not at all.
pub enum Destination {
    Stream(Stream),
    File(OutputFile),
}

impl Destination {
    /// A file, or `stdout` for `None` and `-`; a file is created now, so a bad path fails
    /// before any measuring.
    pub fn open(path: Option<&Path>, stdout: &Stream) -> Result<Destination> {
        match path {
            Some(p) if p.as_os_str() != "-" => OutputFile::create(p).map(Destination::File),
            _ => Ok(Destination::Stream(stdout.clone())),
        }
    }

    /// Who reads it: a person at a terminal (of some width), or a file or pipe.
    pub fn reader(&self) -> Reader {
        match self {
            Destination::Stream(stream) => stream.reader(),
            Destination::File(_) => Reader::default(),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Destination::Stream(stream) => stream.name().into(),
            Destination::File(f) => f.name(),
        }
    }

    /// Writes a document that is no report (the doctor's checks, the store's list, a page,
    /// a man page) whole and puts it in place, naming a file on the console's stderr; a
    /// reader that stopped early (`| head`) is no error.
    pub fn write_whole(mut self, bytes: &[u8], console: &Console) -> Result<()> {
        match self.write_all(bytes).and_then(|_| self.flush()) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::writing(&self.name(), e)),
            _ => {
                announce(self.close()?, console);
                Ok(())
            }
        }
    }

    /// Puts a file in place and gives its name (standard output needs nothing).
    pub fn close(self) -> Result<Option<String>> {
        match self {
            Destination::File(f) => {
                let name = f.name();
                f.commit()?;
                Ok(Some(name))
            }
            _ => Ok(None),
        }
    }
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Destination::Stream(stream) => stream.write(buf),
            Destination::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Destination::Stream(stream) => stream.flush(),
            Destination::File(f) => f.flush(),
        }
    }
}

/// Writes a document that is no report whole to the console's standard output.
pub fn print_whole(console: &Console, bytes: &[u8]) -> Result<()> {
    Destination::Stream(console.stdout.clone()).write_whole(bytes, console)
}

/// Renders `report` with `render` for whoever reads `dest`, through a buffer, then flushes.
fn buffered(
    dest: &mut Destination,
    render: impl FnOnce(Reader, &mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let reader = dest.reader();
    let mut out = BufWriter::with_capacity(1 << 20, dest);
    render(reader, &mut out)?;
    out.flush()
}

/// "wrote report.html": each file a command puts in place is named once on stderr.
fn announce(written: Option<String>, console: &Console) {
    if let Some(name) = written {
        console.say(&format!("latkit: wrote {name}"));
    }
}

/// Several sinks as one: each hook goes to every sink, in order.
pub struct FanOut {
    sinks: Vec<Box<dyn Sink>>,
    /// Where standard output and error go.
    console: Console,
    /// Each file put in place is named on stderr (not with `--quiet`).
    announce: bool,
    /// When the reports say they were made.
    generated: std::time::SystemTime,
    /// The history store (`--store`): written after every other output.
    store: Option<super::store::Stored>,
}

impl FanOut {
    /// No sinks yet; `quiet` keeps the names of the files written off stderr; the reports say
    /// they were made at `generated`.
    pub fn new(quiet: bool, console: &Console, generated: std::time::SystemTime) -> FanOut {
        FanOut {
            sinks: Vec::new(),
            console: console.clone(),
            announce: !quiet,
            generated,
            store: None,
        }
    }

    /// The console the sinks write standard output and error to.
    pub fn console(&self) -> &Console {
        &self.console
    }

    pub fn push(&mut self, sink: impl Sink + 'static) {
        self.sinks.push(Box::new(sink));
    }

    /// The history store, which keeps the finished report after every other output has it.
    pub fn push_store(&mut self, store: super::store::Stored) {
        self.store = Some(store);
    }

    /// Whether any output may show a comparison's change interval, which is then selected.
    pub fn show_change_interval(&self) -> bool {
        self.sinks.iter().any(|s| s.shows_change_interval())
    }

    /// A [`PlotFile`] for each `(path, kind)`, each file opened now.
    pub fn push_plots(
        &mut self,
        plots: &[(&Path, Option<crate::report::plot::PlotKind>)],
    ) -> Result<()> {
        for (path, kind) in plots {
            self.push(PlotFile {
                dest: Destination::open(Some(path), &self.console.stdout)?,
                kind: *kind,
            });
        }
        Ok(())
    }

    /// The verdict on stderr, when targets gate the result (`--check`).
    pub fn push_verdict_if(&mut self, check: bool) {
        if check {
            self.push(Verdict {
                dest: Destination::Stream(self.console.stderr.clone()),
                markdown: false,
            });
        }
    }

    /// A live event to every sink; its error keeps the sink's name and the error's kind, so
    /// that a reader that went away (`| head`) can end a test quietly.
    pub fn live(&mut self, event: &LiveEvent) -> std::result::Result<(), (String, io::Error)> {
        for sink in &mut self.sinks {
            sink.live(event).map_err(|e| (sink.name(), e))?;
        }
        Ok(())
    }

    /// Hands the finished report to every sink and makes every output permanent, then stores
    /// it. An output that fails costs no other: each is still written, and the first failure
    /// is returned. A reader that stopped early (`| head`) is not an error.
    pub fn finish(mut self, report: &mut Report) -> Result<()> {
        report.generated = Some(self.generated);
        let mut first = None;
        for mut sink in self.sinks {
            let written = match sink.finish(report) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                    Err(Error::writing(&sink.name(), e))
                }
                _ => sink.close(),
            };
            match written {
                Ok(name) if self.announce => announce(name, &self.console),
                Ok(_) => {}
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        if let Some(mut store) = self.store.take()
            && let Err(e) = store.put(report)
        {
            first.get_or_insert(e);
        }
        first.map_or(Ok(()), Err)
    }
}
