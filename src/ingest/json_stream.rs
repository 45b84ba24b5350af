//! JSON documents read as they stream, so that memory follows what a document holds, not its
//! size: whitespace and the fields a reader ignores are skipped as they pass, and no string
//! may be longer than [`MAX_STRING`] (names, commands and context values are short; a longer
//! one is refused before it is held).

use crate::error::{Error, Result};
use std::io::{self, BufRead, BufReader, Read};

/// The longest JSON string read, as [`super::MAX_LINE`] is the longest text line.
pub const MAX_STRING: u64 = 1 << 20;
/// The most a document may hold, so that an endless stream ends.
const MAX_DOCUMENT: u64 = 4 << 30;
/// How much of the input is taken from the reader at a time.
const CHUNK: usize = 64 << 10;

/// Where the document stands, as the bytes pass to the parser.
#[derive(Default, Debug, PartialEq)]
struct Position {
    line: u64,
    in_string: bool,
    escaped: bool,
    string_length: u64,
}

impl Position {
    /// Follows one byte; `Err` when a string grows too long.
    fn step(&mut self, byte: u8) -> std::result::Result<(), Refused> {
        if byte == b'\n' {
            self.line += 1;
        }
        if self.in_string {
            self.string_length += 1;
            if self.string_length > MAX_STRING {
                return Err(Refused::LongString);
            }
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            self.in_string = true;
            self.string_length = 0;
        }
        Ok(())
    }

    /// Follows `bytes`, as [`Position::step`] each would: runs of bytes that change nothing
    /// but a string's length (anything but a quote, a backslash or a newline) are passed over
    /// a vector at a time.
    fn follow(&mut self, mut bytes: &[u8]) -> std::result::Result<(), Refused> {
        loop {
            let run = match (self.in_string, self.escaped) {
                (true, false) => memchr::memchr3(b'"', b'\\', b'\n', bytes),
                (false, _) => memchr::memchr2(b'"', b'\n', bytes),
                (true, true) => Some(0),
            }
            .unwrap_or(bytes.len());
            if self.in_string {
                self.string_length += run as u64;
                if self.string_length > MAX_STRING {
                    return Err(Refused::LongString);
                }
            }
            let Some((&byte, rest)) = bytes[run..].split_first() else {
                return Ok(());
            };
            self.step(byte)?;
            bytes = rest;
        }
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
struct Tracked<'a> {
    inner: &'a mut dyn BufRead,
    /// Bytes read from `inner`, of which those before `next` went to the parser.
    chunk: Vec<u8>,
    next: usize,
    taken: u64,
    position: Position,
    refused: Option<Refused>,
}

impl<'a> Tracked<'a> {
    fn new(inner: &'a mut dyn BufRead) -> Tracked<'a> {
        let position = Position {
            line: 1,
            ..Position::default()
        };
        Tracked {
            inner,
            chunk: Vec::with_capacity(CHUNK),
            next: 0,
            taken: 0,
            position,
            refused: None,
        }
    }

    /// The error for a failed parse of the document `path`, which was to be `expected`.
    fn error(&self, path: &str, expected: &str, e: serde_json::Error) -> Error {
        match self.refused {
            Some(Refused::LongString) => Error::Input(format!(
                "{path}:{}: {}; a JSON reader keeps strings up to that",
                self.position.line,
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
            self.position.follow(&buf[..n])
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
    // serde_json takes a reader's bytes one at a time; from a `BufReader` each is a load from
    // its buffer, and the tracking follows whole buffers (a refusal still names the line of
    // the byte that caused it; other errors carry serde_json's own line).
    let mut buffered = BufReader::with_capacity(CHUNK, &mut tracked);
    let mut de = serde_json::Deserializer::from_reader(&mut buffered);
    let parsed = T::deserialize(&mut de).and_then(|value| de.end().map(|()| value));
    drop(de);
    drop(buffered);
    parsed.map_err(|e| tracked.error(path, expected, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Following bytes a run at a time ends where stepping them one by one does, however
        /// the input is cut into pieces.
        #[test]
        fn following_runs_is_stepping_bytes(
            bytes in proptest::collection::vec(proptest::sample::select(b"\"\\\nab ".to_vec()), 0..300),
            cut in 0usize..300,
        ) {
            let mut stepped = Position::default();
            bytes.iter().try_for_each(|&b| stepped.step(b)).unwrap();
            let mut followed = Position::default();
            let (head, tail) = bytes.split_at(cut.min(bytes.len()));
            followed.follow(head).and_then(|()| followed.follow(tail)).unwrap();
            proptest::prop_assert_eq!(followed, stepped);
        }
    }

    #[test]
    fn strings_are_bounded_and_errors_name_their_line() {
        let text = "{\"a\": [\n 1,\n {\"b\": \"}{\\\"[\"}\n]}";
        let value: serde_json::Value = read_document("f.json", &mut text.as_bytes(), "a").unwrap();
        assert_eq!(value["a"][1]["b"], "}{\"[");

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
