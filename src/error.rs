//! Errors carry the exit code the design fixes: 1 a verdict failed, 2 bad usage or input,
//! 3 undecided, 4 an output not written, 5 the environment refused, 6 a peer failed,
//! 130 interrupted. A CI script can tell "slower" (1) from "could not measure" (5, 6).

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// Bad arguments or an unreadable or unusable input: exit 2.
    Input(String),
    /// The verdict is a failure: a gate, target or threshold missed, or no commit to blame:
    /// exit 1.
    Failed(String),
    /// `--runs auto` ran its most rounds without deciding the gate: exit 3, never a pass.
    Undecided(String),
    /// An output could not be written (a full disk, no permission, a folder that is gone):
    /// exit 4. The inputs were fine; the same command can succeed once the output can be.
    Output(String),
    /// latkit cannot measure here: a tool it needs is missing (go, git, sh), or this user or
    /// kernel does not allow it (no tracefs, a port that cannot be bound), or another tool
    /// changed the machine under the test: exit 5.
    Environment(String),
    /// A program latkit ran or talked to failed: the measured command, `go test`, a
    /// benchmark binary, a build, a setup step, a net server: exit 6.
    Peer(String),
    /// Ctrl-C or SIGTERM, after the summary was printed and results written: exit 130.
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

/// `text` with every control character shown as a symbol instead of acting: a benchmark name
/// read from a file can hold an escape sequence that would recolour or clear a terminal, set
/// its title, or make an SVG invalid. C0 controls and DEL become their Control Pictures
/// (`␛` for ESC, `␊` for a newline), C1 controls and bidirectional overrides U+FFFD.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    shown(text, |_| false)
}

/// As [`visible`], keeping line breaks and tabs: for a document (an SVG) whose own layout
/// uses them, where only the other controls are invalid.
pub fn visible_keeping_lines(text: &str) -> String {
    shown(text, |c| matches!(c, '\n' | '\r' | '\t')).into_owned()
}

/// Bidirectional overrides and isolates: they reorder what follows them on the line, so a
/// name can show as another (`U+202E` reverses).
fn reorders(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn shown(text: &str, keep: fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| (c.is_control() || reorders(c)) && !keep(c);
    if !text.chars().any(acts) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| match c as u32 {
            _ if !acts(c) => c,
            code @ 0..=0x1f => char::from_u32(0x2400 + code).unwrap_or('\u{fffd}'),
            0x7f => '\u{2421}',
            _ => '\u{fffd}',
        })
        .collect::<String>()
        .into()
}

/// Lines from outside (a child's output) as one text of lines, each line's controls shown:
/// the line breaks are latkit's, what acted inside a line does not.
pub fn visible_lines(lines: &[String]) -> String {
    lines
        .iter()
        .map(|line| visible(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes a message to stderr. Unlike `eprintln!` it does not panic when stderr is closed (a
/// reader such as `| head` went away): a diagnostic nobody can read is simply dropped.
/// latkit's own line breaks and tabs lay it out; every other control character is shown,
/// never acted on (text from input is made visible where it enters a message).
pub fn say(line: &str) {
    say_to(&mut std::io::stderr().lock(), line);
}

/// [`say`] to another stream (a console's stderr).
pub fn say_to(out: &mut dyn std::io::Write, line: &str) {
    let _ = out
        .write_all(shown(line, |c| matches!(c, '\n' | '\t')).as_bytes())
        .and_then(|_| out.write_all(b"\n"));
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Failed(_) => 1,
            Error::Undecided(_) => 3,
            Error::Output(_) => 4,
            Error::Environment(_) => 5,
            Error::Peer(_) => 6,
            Error::Interrupted => 130,
        }
    }

    /// Wraps an I/O error with the file or stream it concerns.
    pub fn io(what: &str, err: std::io::Error) -> Self {
        Error::Input(format!("{what}: {err}"))
    }

    /// `why` a program the user named did not start: one that is not there or may not be
    /// executed is the user's to fix (exit 2); any other refusal is the system's (exit 5).
    pub fn starting(err: &std::io::Error, why: String) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                Error::Input(why)
            }
            _ => Error::Environment(why),
        }
    }

    /// Wraps an error writing the output `what`: the system's refusal (a full disk, no
    /// permission) is an output error; latkit's own (`io::Error::other`: say, the input holds
    /// nothing the format shows) is the input's.
    pub fn writing(what: &str, err: std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::Other => Error::io(what, err),
            _ => Error::Output(format!("{what}: {err}")),
        }
    }
}

/// The largest hand-written file read (targets, suite, page spec): parsing TOML costs many
/// times a file's size, and no hand-written spec comes near this.
pub const MAX_TEXT_FILE: u64 = 1 << 20;

/// Reads a small hand-written text file (a targets, suite or page spec file, a repository's
/// `.latkitignore`) whole; anything but a regular file (a FIFO would wait forever, a device
/// never end), a file over [`MAX_TEXT_FILE`] or invalid UTF-8 is an error naming the file
/// (and the line).
pub fn read_text(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(&name, e))?;
    if !meta.is_file() {
        return Err(Error::Input(format!(
            "{name}: not a regular file (a device, a FIFO or a directory); name a text file"
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_TEXT_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::io(&name, e))?;
    if bytes.len() as u64 > MAX_TEXT_FILE {
        return Err(Error::Input(format!(
            "{name}: larger than {} MiB, too large for a hand-written file (a spec, a token, a \
             list): is it the right file?",
            MAX_TEXT_FILE >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..valid]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        Error::Input(format!("{name}:{line}: not valid UTF-8 text"))
    })
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(msg)
            | Error::Failed(msg)
            | Error::Undecided(msg)
            | Error::Output(msg)
            | Error::Environment(msg)
            | Error::Peer(msg) => f.write_str(msg),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}
