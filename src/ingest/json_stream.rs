//! JSON documents read as they stream, so that memory follows what a document holds, not its
//! size: whitespace and the fields a reader ignores are skipped as they pass, and no string
//! may be longer than [`MAX_STRING`] (names, commands and context values are short; a longer
//! one is refused before it is held). The lines where values start are kept for messages.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// The longest JSON string read, as [`super::MAX_LINE`] is the longest text line.
pub const MAX_STRING: u64 = 1 << 20;
/// The most a document may hold, so that an endless stream ends.
const MAX_DOCUMENT: u64 = 4 << 30;
/// How much of the input is taken from the reader at a time.
const CHUNK: usize = 64 << 10;
/// Depths at which the line where the latest value started is remembered.
const DEPTHS: usize = 4;

/// Where the document stands, as the bytes pass to the parser.
#[derive(Default)]
pub struct Position {
    line: Cell<u64>,
    depth: Cell<usize>,
    in_string: Cell<bool>,
    escaped: Cell<bool>,
    string_length: Cell<u64>,
    /// Inside a number or a literal (`true`, `null`).
    in_scalar: Cell<bool>,
    started: [Cell<u64>; DEPTHS],
}

impl Position {
    /// The line on which the latest value at `depth` started (0: the document itself, 1: a
    /// field of it or an element of it, 2: one inside that, ...).
    pub fn started_at(&self, depth: usize) -> u64 {
        self.started.get(depth).map_or(0, Cell::get)
    }

    fn value_starts(&self) {
        if let Some(started) = self.started.get(self.depth.get()) {
            started.set(self.line.get());
        }
    }

    /// Follows one byte; `Err` when a string grows too long.
    fn step(&self, byte: u8) -> std::result::Result<(), Refused> {
        if byte == b'\n' {
            self.line.set(self.line.get() + 1);
        }
        if self.in_string.get() {
            let length = self.string_length.get() + 1;
            if length > MAX_STRING {
                return Err(Refused::LongString);
            }
            self.string_length.set(length);
            match (self.escaped.get(), byte) {
                (true, _) => self.escaped.set(false),
                (false, b'\\') => self.escaped.set(true),
                (false, b'"') => self.in_string.set(false),
                _ => {}
            }
            return Ok(());
        }
        match byte {
            b'"' => {
                self.value_starts();
                self.in_string.set(true);
                self.string_length.set(0);
            }
            b'{' | b'[' => {
                self.value_starts();
                self.depth.set(self.depth.get() + 1);
            }
            b'}' | b']' => {
                self.in_scalar.set(false);
                self.depth.set(self.depth.get().saturating_sub(1));
            }
            b',' | b':' | b' ' | b'\t' | b'\r' | b'\n' => self.in_scalar.set(false),
            _ if !self.in_scalar.get() => {
                self.value_starts();
                self.in_scalar.set(true);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Why the stream stopped before the parser did.
#[derive(Debug, Clone, Copy)]
enum Refused {
    LongString,
    TooLarge,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::LongString => write!(f, "a string longer than {} MiB", MAX_STRING >> 20),
            Refused::TooLarge => write!(f, "larger than {} GiB", MAX_DOCUMENT >> 30),
        }
    }
}

/// A reader that follows the bytes the parser takes (it takes them one at a time).
pub struct Tracked<'a> {
    inner: &'a mut dyn BufRead,
    /// Bytes read from `inner`, of which those before `next` went to the parser.
    chunk: Vec<u8>,
    next: usize,
    taken: u64,
    position: Rc<Position>,
    refused: Option<Refused>,
}

impl<'a> Tracked<'a> {
    pub fn new(inner: &'a mut dyn BufRead) -> Tracked<'a> {
        let position = Position::default();
        position.line.set(1);
        for started in &position.started {
            started.set(1);
        }
        Tracked {
            inner,
            chunk: Vec::with_capacity(CHUNK),
            next: 0,
            taken: 0,
            position: Rc::new(position),
            refused: None,
        }
    }

    /// Where the document stands, to be read while it is parsed.
    pub fn position(&self) -> Rc<Position> {
        Rc::clone(&self.position)
    }

    /// The error for a failed parse of the document `path`, which was to be `expected`.
    pub fn error(&self, path: &str, expected: &str, e: serde_json::Error) -> Error {
        match self.refused {
            Some(Refused::LongString) => Error::Input(format!(
                "{path}:{}: {}; a JSON reader keeps strings up to that",
                self.position.line.get(),
                Refused::LongString
            )),
            Some(Refused::TooLarge) => Error::Input(format!("{path}: {}", Refused::TooLarge)),
            None if e.is_io() => Error::Input(format!("{path}: {e}")),
            None => Error::Input(format!("{path}:{}: expected {expected}: {e}", e.line())),
        }
    }
}

impl Read for Tracked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.next == self.chunk.len() {
            // A chunk of the input at a time: one call through `dyn BufRead` per chunk, not
            // per byte.
            self.chunk.clear();
            let available = self.inner.fill_buf()?;
            self.chunk
                .extend_from_slice(&available[..available.len().min(CHUNK)]);
            let n = self.chunk.len();
            self.inner.consume(n);
            self.next = 0;
        }
        let n = (self.chunk.len() - self.next).min(buf.len());
        buf[..n].copy_from_slice(&self.chunk[self.next..self.next + n]);
        self.next += n;
        self.taken += n as u64;
        let refused = if self.taken > MAX_DOCUMENT {
            Err(Refused::TooLarge)
        } else {
            buf[..n]
                .iter()
                .try_for_each(|&byte| self.position.step(byte))
        };
        refused.map_err(|why| {
            self.refused = Some(why);
            io::Error::other(why.to_string())
        })?;
        Ok(n)
    }
}

/// A whole JSON document of type `T`, streamed; an error names the file, the line and what
/// was `expected`.
pub fn read_document<T: for<'de> serde::Deserialize<'de>>(
    path: &str,
    reader: &mut dyn BufRead,
    expected: &str,
) -> Result<T> {
    let mut tracked = Tracked::new(reader);
    let mut de = serde_json::Deserializer::from_reader(&mut tracked);
    let parsed = T::deserialize(&mut de).and_then(|value| de.end().map(|()| value));
    parsed.map_err(|e| tracked.error(path, expected, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_bounded_and_lines_of_values_kept() {
        let text = "{\"a\": [\n 1,\n {\"b\": \"}{\\\"[\"}\n]}";
        let mut reader = text.as_bytes();
        let mut tracked = Tracked::new(&mut reader);
        let position = tracked.position();
        let value: serde_json::Value = serde_json::from_reader(&mut tracked).unwrap();
        assert_eq!(value["a"][1]["b"], "}{\"[");
        assert_eq!(position.started_at(2), 3, "the object in the array");
        assert_eq!(position.depth.get(), 0, "braces in strings do not count");

        let long = format!("[\n\"{}\"]", "x".repeat(MAX_STRING as usize + 1));
        let err = read_document::<serde_json::Value>("f.json", &mut long.as_bytes(), "an array")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("f.json:2: a string longer than 1 MiB"),
            "{err}"
        );
        let err = read_document::<Vec<u8>>("f.json", &mut "[1,\n2,\n\"x\"]".as_bytes(), "numbers")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("f.json:3: expected numbers"), "{err}");
    }
}
