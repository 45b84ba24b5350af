//! Every output is a sink: a destination opened before any work starts, live hooks a probe
//! feeds while it measures (no-ops by default), and the finished report. Several sinks run
//! at once through one [`FanOut`], e.g. Xenomai text live on the terminal, JSON to a file and
//! an `.hgrm`, each written as soon as its part exists and made permanent on close.

use super::{OutputFormat, Reader, Reporter, XENOMAI, gate, hgrm, xenomai};
use crate::analyze::Report;
use crate::atomic_file::OutputFile;
use crate::error::{Error, Result};
use crate::model::{Level, Note, TimerInfo, TimerOverall};
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
    /// Makes the output permanent (a file is renamed into place).
    fn close(self: Box<Self>) -> Result<()>;
    /// What the sink writes to, for messages.
    fn name(&self) -> String;
}

/// Where a sink writes: standard output or error, or a file written whole or not at all.
pub enum Destination {
    Stdout,
    Stderr,
    File(OutputFile),
}

impl Destination {
    /// A file, or standard output for `None` and `-`; a file is created now, so a bad path
    /// fails before any measuring.
    pub fn open(path: Option<&Path>) -> Result<Destination> {
        match path {
            None => Ok(Destination::Stdout),
            Some(p) if p.as_os_str() == "-" => Ok(Destination::Stdout),
            Some(p) => OutputFile::create(p).map(Destination::File),
        }
    }

    /// Who reads it: a person at a terminal (of some width), or a file or pipe.
    pub fn reader(&self) -> Reader {
        use std::io::IsTerminal;
        match self {
            Destination::Stdout => Reader::of(&io::stdout(), io::stdout().is_terminal()),
            Destination::Stderr => Reader::of(&io::stderr(), io::stderr().is_terminal()),
            Destination::File(_) => Reader::default(),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Destination::Stdout => "stdout".into(),
            Destination::Stderr => "stderr".into(),
            Destination::File(f) => f.name(),
        }
    }

    /// Writes a document that is no report (the doctor's checks, the store's list, a page,
    /// a man page) whole and puts it in place; a reader that stopped early (`| head`) is no
    /// error.
    pub fn write_whole(mut self, bytes: &[u8]) -> Result<()> {
        match self.write_all(bytes).and_then(|_| self.flush()) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::io(&self.name(), e)),
            _ => self.close(),
        }
    }

    /// Puts a file in place (standard output needs nothing).
    pub fn close(self) -> Result<()> {
        match self {
            Destination::File(f) => f.commit(),
            _ => Ok(()),
        }
    }
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Destination::Stdout => io::stdout().write(buf),
            Destination::Stderr => io::stderr().write(buf),
            Destination::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Destination::Stdout => io::stdout().flush(),
            Destination::Stderr => io::stderr().flush(),
            Destination::File(f) => f.flush(),
        }
    }
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

/// A report format (table, markdown, JSON, CSV, Xenomai, BENCH) written when the report is done.
pub struct Rendered {
    reporter: Box<dyn Reporter>,
    xenomai: bool,
    /// Distribution sparklines under a table read on a terminal (not piped, no NO_COLOR).
    pictures: bool,
    dest: Destination,
}

impl Rendered {
    pub fn new(format: &OutputFormat, dest: Destination) -> Rendered {
        use std::io::IsTerminal;
        let pictures = format.name == "table"
            && matches!(dest, Destination::Stdout)
            && io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Rendered {
            reporter: (format.reporter)(),
            xenomai: format.name == XENOMAI,
            pictures,
            dest,
        }
    }
}

impl Sink for Rendered {
    fn live(&mut self, event: &LiveEvent) -> io::Result<()> {
        let LiveEvent::Partial(report) = event else {
            return Ok(());
        };
        // Only a file can be replaced later; a stream or a FIFO takes one report.
        let Destination::File(file) = &self.dest else {
            return Ok(());
        };
        if self.xenomai {
            return Ok(());
        }
        let mut text = Vec::new();
        self.reporter.render(report, Reader::default(), &mut text)?;
        file.publish(&text)
    }

    fn finish(&mut self, report: &Report) -> io::Result<()> {
        if self.xenomai && report.runs.iter().all(|r| r.timer.is_none()) {
            return Err(io::Error::other(
                "--format xenomai prints timer results (latkit timer, Xenomai latency, cyclictest), and the input holds none",
            ));
        }
        let (reporter, pictures) = (&self.reporter, self.pictures);
        buffered(&mut self.dest, |reader, out| {
            reporter.render(report, reader, out)?;
            if pictures {
                for line in super::terminal::sparklines(report) {
                    writeln!(out, "{line}")?;
                }
            }
            Ok(())
        })
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}

/// Xenomai's text, live: the header when the test starts, an RTD line each second (with an
/// RTT/RTH header every `lines_per_header`), and the histograms and summary at the end.
pub struct XenomaiLive {
    pub dest: Destination,
    pub quiet: bool,
    pub lines_per_header: u64,
    /// Print the HSD lines of bucket counts (`-h`).
    pub buckets: bool,
    info: TimerInfo,
}

impl XenomaiLive {
    pub fn new(dest: Destination, quiet: bool, lines_per_header: u64, buckets: bool) -> Self {
        XenomaiLive {
            dest,
            quiet,
            lines_per_header,
            buckets,
            info: TimerInfo::default(),
        }
    }

    fn emit(&mut self, text: &str) -> io::Result<()> {
        self.dest.write_all(text.as_bytes())?;
        self.dest.flush()
    }
}

impl Sink for XenomaiLive {
    fn live(&mut self, event: &LiveEvent) -> io::Result<()> {
        match event {
            LiveEvent::TimerStarted(info) => {
                self.info = (*info).clone();
                self.emit(&xenomai::header(info.period_ns, &info.mode))?;
                self.emit(xenomai::WARMING_UP)
            }
            LiveEvent::TimerSecond(s) if !self.quiet => {
                if self.lines_per_header > 0 && s.index.is_multiple_of(self.lines_per_header) {
                    let header = xenomai::rtt_rth(s.index as i64 + 1, &self.info);
                    self.emit(&header)?;
                }
                self.emit(&xenomai::rtd(s.min_ns, s.avg_ns, s.max_ns, &s.so_far))
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let reporter = xenomai::Xenomai {
            live_part_done: true,
            buckets: self.buckets,
        };
        buffered(&mut self.dest, |reader, out| {
            reporter.render(report, reader, out)
        })
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}

/// The latency distribution of the benchmark Xenomai's format shows, as HdrHistogram
/// percentile text (`--hgrm`).
pub struct Hgrm(pub Destination);

/// The every-sample bucket histogram of that benchmark in Xenomai's gnuplot format (`-g`).
pub struct Gnuplot(pub Destination);

impl Sink for Hgrm {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        match hgrm::distribution(report) {
            Some(h) => buffered(&mut self.0, |_, out| hgrm::write(h, out)),
            None => Ok(()),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
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

    fn close(self: Box<Self>) -> Result<()> {
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
        let skipped: Vec<&Note> = report
            .notes
            .iter()
            .filter(|n| n.level == Level::Warning && n.line.is_some())
            .collect();
        let text = gate::render(verdict, &skipped, self.markdown, self.dest.reader().width);
        self.dest.write_all(text.as_bytes())?;
        self.dest.flush()
    }

    fn close(self: Box<Self>) -> Result<()> {
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

    fn close(self: Box<Self>) -> Result<()> {
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
    pub kind: Option<super::plot::PlotKind>,
}

impl Sink for PlotFile {
    fn finish(&mut self, report: &Report) -> io::Result<()> {
        let plot = match self.kind {
            Some(kind) => super::plot::of_kind(report, kind).into_iter().next(),
            None => super::plot::all(report).into_iter().next(),
        };
        match plot {
            Some(plot) => self.dest.write_all(plot?.svg.as_bytes()),
            None => Err(io::Error::other(match self.kind {
                Some(kind) => format!("this result has nothing to draw as a {} plot", kind.name()),
                None => "this result has nothing to plot".to_string(),
            })),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}

/// Several sinks as one: each hook goes to every sink, in order.
#[derive(Default)]
pub struct FanOut {
    sinks: Vec<Box<dyn Sink>>,
}

impl FanOut {
    pub fn push(&mut self, sink: impl Sink + 'static) {
        self.sinks.push(Box::new(sink));
    }

    /// A [`PlotFile`] for each `(path, kind)`, each file opened now.
    pub fn push_plots(&mut self, plots: &[(&Path, Option<super::plot::PlotKind>)]) -> Result<()> {
        for (path, kind) in plots {
            self.push(PlotFile {
                dest: Destination::open(Some(path))?,
                kind: *kind,
            });
        }
        Ok(())
    }

    /// The verdict on stderr, when targets gate the result (`--check`).
    pub fn push_verdict_if(&mut self, check: bool) {
        if check {
            self.push(Verdict {
                dest: Destination::Stderr,
                markdown: false,
            });
        }
    }

    /// Runs `hook` on every sink; the first failure is returned with the sink's name.
    fn each(&mut self, mut hook: impl FnMut(&mut dyn Sink) -> io::Result<()>) -> Result<()> {
        for sink in &mut self.sinks {
            if let Err(e) = hook(sink.as_mut()) {
                return Err(Error::io(&sink.name(), e));
            }
        }
        Ok(())
    }

    /// A live event to every sink; its error keeps the sink's name and the error's kind, so
    /// that a reader that went away (`| head`) can end a test quietly.
    pub fn live(&mut self, event: &LiveEvent) -> std::result::Result<(), (String, io::Error)> {
        for sink in &mut self.sinks {
            sink.live(event).map_err(|e| (sink.name(), e))?;
        }
        Ok(())
    }

    /// Hands the finished report to every sink and makes every output permanent. A reader
    /// that stopped early (`| head`) is not an error.
    pub fn finish(mut self, report: &Report) -> Result<()> {
        self.each(|s| match s.finish(report) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        })?;
        for sink in self.sinks {
            sink.close()?;
        }
        Ok(())
    }
}
