//! The report formats as sinks: any format written when the report is done, and Xenomai's
//! text written live.

use super::{Destination, LiveEvent, Sink, buffered};
use crate::analyze::Report;
use crate::error::Result;
use crate::model::TimerInfo;
use crate::report::{OutputFormat, Reader, Reporter, xenomai};
use std::io::{self, Write};

/// A report format (table, markdown, JSON, CSV, Xenomai, BENCH) written when the report is done.
pub struct Rendered {
    reporter: Box<dyn Reporter>,
    xenomai: bool,
    /// Distribution sparklines under a table read on a terminal (not piped, no NO_COLOR).
    pictures: bool,
    dest: Destination,
    change_interval: bool,
}

impl Rendered {
    pub fn new(format: &OutputFormat, dest: Destination) -> Rendered {
        let pictures = format.can.draw
            && matches!(&dest, Destination::Stream(stream) if stream.pictures_welcome());
        Rendered {
            reporter: (format.reporter)(),
            xenomai: format.can.follow_a_timer,
            pictures,
            dest,
            change_interval: format.can.change_interval,
        }
    }

    /// The same, without distribution sparklines (hyperfine's `--style basic`).
    pub fn without_pictures(self) -> Rendered {
        Rendered {
            pictures: false,
            ..self
        }
    }

    /// A file written by `reporter` (one of hyperfine's exports), as it is.
    pub fn of(reporter: Box<dyn Reporter>, dest: Destination) -> Rendered {
        Rendered {
            reporter,
            xenomai: false,
            pictures: false,
            dest,
            change_interval: true,
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
                for line in crate::report::terminal::sparklines(report) {
                    writeln!(out, "{line}")?;
                }
            }
            Ok(())
        })
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }

    fn shows_change_interval(&self) -> bool {
        self.change_interval
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

    fn close(self: Box<Self>) -> Result<Option<String>> {
        self.dest.close()
    }

    fn name(&self) -> String {
        self.dest.name()
    }
}
