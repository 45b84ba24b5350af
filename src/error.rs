//! Errors carry the exit code the design fixes: 1 failed, 2 bad usage or input, 130 interrupted.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// Bad arguments or an unreadable or unusable input: exit 2.
    Input(String),
    /// A tool latkit ran failed, or a gate failed: exit 1.
    Failed(String),
    /// Ctrl-C or SIGTERM, after the summary was printed and results written: exit 130.
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

/// Writes a line to stderr. Unlike `eprintln!` it does not panic when stderr is closed (a
/// reader such as `| head` went away): a diagnostic nobody can read is simply dropped.
pub fn say(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(line.as_bytes())
        .and_then(|_| err.write_all(b"\n"));
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Failed(_) => 1,
            Error::Interrupted => 130,
        }
    }

    /// Wraps an I/O error with the file or stream it concerns.
    pub fn io(what: &str, err: std::io::Error) -> Self {
        Error::Input(format!("{what}: {err}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(msg) | Error::Failed(msg) => f.write_str(msg),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}
