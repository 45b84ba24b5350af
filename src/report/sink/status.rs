//! A live status line on a terminal while a timer test runs, as cyclictest keeps one: seconds
//! measured and left, this second's worst wake-up and the worst so far, cleared before the
//! result.

use super::{LiveEvent, Sink};
use crate::analyze::Report;
use crate::env::Stream;
use crate::error::Result;
use crate::model::{Dimension, Unit};
use indicatif::{ProgressBar, ProgressStyle};
use std::io;
use std::time::Duration;

/// The status line, drawn on a stream a person watches (the caller decides which).
pub struct TimerStatus {
    on: Stream,
    bar: Option<ProgressBar>,
}

impl TimerStatus {
    pub fn on(stream: &Stream) -> TimerStatus {
        TimerStatus {
            on: stream.clone(),
            bar: None,
        }
    }
}

/// `85.2 µs` for a latency in nanoseconds.
fn latency(ns: i64) -> String {
    Unit::new(Dimension::Time).format_scaled(ns as f64)
}

impl Sink for TimerStatus {
    fn live(&mut self, event: &LiveEvent) -> io::Result<()> {
        match event {
            LiveEvent::TimerStarted(info) => {
                // A bar towards the end when the test has one; a count until Ctrl-C otherwise.
                let (length, template) = match info.requested_s {
                    0 => (None, "{spinner} timer {elapsed} (until Ctrl-C) · {msg}"),
                    s => (
                        Some(s),
                        "timer {elapsed}/{len}s [{bar:20}] ETA {eta} · {msg}",
                    ),
                };
                let bar = self.on.progress_bar(length);
                if let Ok(style) = ProgressStyle::with_template(template) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_message("warming up");
                bar.enable_steady_tick(Duration::from_millis(250));
                self.bar = Some(bar);
            }
            LiveEvent::TimerSecond(second) => {
                if let Some(bar) = &self.bar {
                    bar.set_position(second.index + 1);
                    bar.set_message(format!(
                        "max {} this second · worst so far {}",
                        latency(second.max_ns),
                        latency(second.so_far.max_ns)
                    ));
                }
            }
            LiveEvent::Partial(_) => {}
        }
        Ok(())
    }

    fn finish(&mut self, _report: &Report) -> io::Result<()> {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        Ok(())
    }

    fn close(self: Box<Self>) -> Result<Option<String>> {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        Ok(None)
    }

    fn name(&self) -> String {
        "stderr".into()
    }
}
