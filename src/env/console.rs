//! Standard output and error: where their bytes go and who reads them (a person at a
//! terminal of some width, or a file or a pipe), decided once when the command starts.

use indicatif::{ProgressBar, ProgressDrawTarget, TermLike};
use std::io::{self, IsTerminal, Read, Write};
use std::sync::{Arc, Mutex};

/// Who reads a rendered report: what a text format may fold, wrap or leave out for them.
#[derive(Clone, Debug, Default)]
pub struct Reader {
    /// Columns a line may take (`COLUMNS`, or the terminal's); `None` is no limit.
    pub width: Option<usize>,
    /// A person at the terminal where stderr's warnings were already shown.
    pub at_terminal: bool,
    /// The warnings this console's stderr showed that person.
    pub said: Said,
}

/// Warnings a console said on a terminal, so that a report shown on that same terminal does
/// not print them a second time. Shared by the console's streams.
#[derive(Clone, Debug, Default)]
pub struct Said(Arc<Mutex<Vec<String>>>);

impl Said {
    fn remember(&self, text: &str) {
        let mut said = self.0.lock().unwrap_or_else(|p| p.into_inner());
        said.push(text.to_string());
    }

    /// Whether the warning `text` was said.
    pub fn holds(&self, text: &str) -> bool {
        let said = self.0.lock().unwrap_or_else(|p| p.into_inner());
        said.iter().any(|s| s == text)
    }
}

impl Reader {
    /// Whoever reads `stream`: a terminal's width, or `COLUMNS` when it is set (a pipe to a
    /// pager, a test); a file or a pipe without `COLUMNS` has no limit.
    pub fn of(stream: &impl std::os::fd::AsFd, at_terminal: bool, said: &Said) -> Reader {
        let columns = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0);
        let terminal_width = || {
            at_terminal
                .then(|| terminal_size::terminal_size_of(stream))
                .flatten()
                .map(|(w, _)| usize::from(w.0))
        };
        Reader {
            width: columns.or_else(terminal_width),
            at_terminal,
            said: said.clone(),
        }
    }
}

/// One standard stream.
#[derive(Clone)]
pub struct Stream {
    name: &'static str,
    reader: Reader,
    /// Colour and pictures are welcome (`NO_COLOR` is unset or empty).
    colour: bool,
    bytes: Arc<Mutex<dyn Write + Send>>,
    /// Where progress on it is drawn.
    draw: Draw,
}

/// How progress is drawn on a stream.
#[derive(Clone, Copy)]
enum Draw {
    /// On this process's stderr, by the terminal's own rules (indicatif's).
    Stderr,
    /// Written into the stream's bytes, each frame a line: a transcript a test reads.
    Transcript,
}

impl Stream {
    /// `stdout` or `stderr`, for messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Who reads it.
    pub fn reader(&self) -> Reader {
        self.reader.clone()
    }

    /// A person reads it on a terminal.
    pub fn at_terminal(&self) -> bool {
        self.reader.at_terminal
    }

    /// A person reads it on a terminal that may show colour and pictures.
    pub fn pictures_welcome(&self) -> bool {
        self.reader.at_terminal && self.colour
    }

    /// A stream whose bytes are kept in memory, read as `reader` would read them.
    #[cfg(test)]
    pub fn captured(name: &'static str, reader: Reader) -> (Stream, Arc<Mutex<Vec<u8>>>) {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let stream = Stream {
            name,
            reader,
            colour: false,
            bytes: bytes.clone(),
            draw: Draw::Transcript,
        };
        (stream, bytes)
    }

    /// A progress bar (of `length` steps, or a spinner) drawn on this stream.
    pub fn progress_bar(&self, length: Option<u64>) -> ProgressBar {
        let target = match self.draw {
            // Drawn by latkit's own terminal, so that every line passes the neutraliser.
            Draw::Stderr if io::stderr().is_terminal() => {
                ProgressDrawTarget::term_like_with_hz(Box::new(Terminal), 20)
            }
            Draw::Stderr => ProgressDrawTarget::hidden(),
            Draw::Transcript => ProgressDrawTarget::term_like(Box::new(Transcript(self.clone()))),
        };
        ProgressBar::with_draw_target(length, target)
    }

    fn with<T>(&self, write: impl FnOnce(&mut dyn Write) -> T) -> T {
        // A writer that panicked mid-line leaves bytes that are still worth keeping.
        let mut bytes = self
            .bytes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        write(&mut *bytes)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|out| out.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(|out| out.flush())
    }
}

/// Progress frames written into a stream as lines: what a person would have seen drawn.
struct Transcript(Stream);

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transcript({})", self.0.name)
    }
}

impl TermLike for Transcript {
    fn width(&self) -> u16 {
        self.0
            .reader
            .width
            .map_or(80, |w| w.min(u16::MAX as usize) as u16)
    }

    // Frames are kept, not redrawn over: the cursor does not move.
    fn move_cursor_up(&self, _n: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _n: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _n: usize) -> io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _n: usize) -> io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0
            .with(|out| writeln!(out, "{}", crate::error::visible(s)))
    }

    // A frame's last line, which a terminal leaves the cursor on: a line of the transcript
    // (clearing writes nothing).
    fn write_str(&self, s: &str) -> io::Result<()> {
        match s.is_empty() {
            true => Ok(()),
            false => self.write_line(s),
        }
    }

    fn clear_line(&self) -> io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> io::Result<()> {
        self.0.with(|out| out.flush())
    }
}

/// This process's stderr as a terminal that progress is drawn on: indicatif moves the cursor
/// and clears lines with latkit's own sequences, and every line it writes (a benchmark's name,
/// a command) passes [`crate::error::visible`], so nothing in it acts on the terminal.
#[derive(Debug)]
struct Terminal;

impl Terminal {
    fn put(&self, text: &str) -> io::Result<()> {
        let mut err = io::stderr().lock();
        err.write_all(text.as_bytes())
    }

    /// Moves the cursor `n` places in `direction` (CSI A, B, C or D); none for 0.
    fn cursor(&self, n: usize, direction: char) -> io::Result<()> {
        match n {
            0 => Ok(()),
            n => self.put(&format!("\x1b[{n}{direction}")),
        }
    }
}

impl TermLike for Terminal {
    fn width(&self) -> u16 {
        terminal_size::terminal_size_of(io::stderr()).map_or(80, |(w, _)| w.0)
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'A')
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'B')
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'C')
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.cursor(n, 'D')
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.put(&format!("{}\n", crate::error::visible(s)))
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.put(&crate::error::visible(s))
    }

    fn clear_line(&self) -> io::Result<()> {
        self.put("\r\x1b[2K")
    }

    fn flush(&self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// Standard input: where its bytes come from, and whether a person types them.
#[derive(Clone)]
pub struct Stdin {
    /// A terminal: reading it would wait for typing.
    pub at_terminal: bool,
    bytes: Arc<Mutex<dyn Read + Send>>,
}

impl Stdin {
    /// Bytes given beforehand, as a file or pipe would give them.
    #[cfg(test)]
    pub fn given(bytes: Vec<u8>) -> Stdin {
        Stdin {
            at_terminal: false,
            bytes: Arc::new(Mutex::new(io::Cursor::new(bytes))),
        }
    }

    /// Reads it with `read` (one reader at a time).
    pub fn read<T>(&self, read: impl FnOnce(&mut dyn Read) -> T) -> T {
        let mut bytes = self
            .bytes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read(&mut *bytes)
    }
}

/// The console a command talks to.
#[derive(Clone)]
pub struct Console {
    pub stdin: Stdin,
    pub stdout: Stream,
    pub stderr: Stream,
}

impl Console {
    /// This process's standard streams.
    pub fn system() -> Console {
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let stdout = io::stdout();
        let stderr = io::stderr();
        let said = Said::default();
        Console {
            stdin: Stdin {
                at_terminal: io::stdin().is_terminal(),
                bytes: Arc::new(Mutex::new(io::stdin())),
            },
            stdout: Stream {
                name: "stdout",
                reader: Reader::of(&stdout, stdout.is_terminal(), &said),
                colour,
                bytes: Arc::new(Mutex::new(stdout)),
                // Nothing draws progress on stdout, where the report goes.
                draw: Draw::Transcript,
            },
            stderr: Stream {
                name: "stderr",
                reader: Reader::of(&stderr, stderr.is_terminal(), &said),
                colour,
                bytes: Arc::new(Mutex::new(stderr)),
                draw: Draw::Stderr,
            },
        }
    }

    /// Says a line on stderr, as [`crate::error::say`] does.
    pub fn say(&self, line: &str) {
        self.stderr.with(|out| crate::error::say_to(out, line));
    }

    /// Says `latkit: warning: TEXT` on stderr, and remembers it when a person reads stderr
    /// (so that a report shown on that same terminal does not print it a second time).
    pub fn say_warning(&self, text: &str) {
        self.say(&format!("latkit: warning: {text}"));
        if self.stderr.at_terminal() {
            self.stderr.reader.said.remember(text);
        }
    }

    /// Where progress is drawn: stderr, when a person watches it and did not ask for quiet.
    pub fn progress(&self, quiet: bool) -> Option<&Stream> {
        (!quiet && self.stderr.at_terminal()).then_some(&self.stderr)
    }
}
