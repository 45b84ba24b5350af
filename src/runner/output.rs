//! What runners keep of a harness's output besides its results: the last lines, to explain a
//! failure, and a spinner on the terminal while it runs.

use crate::env::Stream;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::executor::Process;
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::interrupt;

/// Lines of a harness's output kept to explain a failure.
const TAIL_LINES: usize = 25;

/// How a harness run ended.
pub struct Outcome {
    /// What was parsed; `None` when the harness printed no result at all.
    pub input: Option<Input>,
    pub status: ExitStatus,
    /// The last lines it printed (stdout and stderr), for failure messages.
    pub tail: Vec<String>,
    pub interrupted: bool,
}

/// The last [`TAIL_LINES`] lines of a harness's output, from any thread.
#[derive(Clone, Default)]
pub struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    pub fn push(&self, line: String) {
        if let Ok(mut tail) = self.0.lock() {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }

    /// Keeps the lines of `stream` (a harness's stderr) on a thread of its own.
    pub fn follow(&self, stream: Box<dyn Read + Send>) -> JoinHandle<()> {
        let tail = self.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(|l| l.ok()) {
                tail.push(line);
            }
        })
    }

    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A spinner reading `{what} {elapsed} · {message}` on the stream progress is drawn on, if
/// any.
pub fn spinner(on: Option<&Stream>, what: &str, message: &str) -> ProgressBar {
    let Some(stream) = on else {
        return ProgressBar::hidden();
    };
    let bar = stream.progress_bar(None);
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{{spinner}} {what} {{elapsed}} · {{msg}}"))
    {
        bar.set_style(style);
    }
    bar.set_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Waits for a harness whose output has been read, then for its stderr follower, and clears
/// its spinner.
pub fn wait_for(
    child: &mut dyn Process,
    what: &str,
    stderr: Option<JoinHandle<()>>,
    progress: &ProgressBar,
) -> Result<ExitStatus> {
    let status = child
        .wait()
        .map_err(|e| Error::Environment(format!("waiting for {what}: {e}")));
    interrupt::set_child_group(0);
    if let Some(handle) = stderr {
        let _ = handle.join();
    }
    progress.finish_and_clear();
    status
}
