//! A JSON object document split as it streams into the parts a reader wants: the values of
//! the few fields it keeps (a context), and one by one the elements of the array field that
//! holds its rows. A row may itself hold long arrays (hyperfine's ten million times, a run's
//! benchmarks): those of the fields a reader streams come in pieces of consecutive elements,
//! each piece a JSON array of its own, before the row, which holds `[]` in their place. Each
//! part is handed over as its own bytes with the line it starts on, to be parsed as a slice
//! (far faster than a parser taking its input a byte at a time), so memory holds a row or a
//! piece at a time. Fields the reader does not keep are skipped as they pass, and whitespace
//! between a part's top-level tokens is dropped (newlines are kept inside parts so that a
//! parser's line within a part is its line in the file; inside a part's nested containers
//! whitespace is copied with the rest, which the parser skips faster than the split could). The split checks the structure around the parts; the parser
//! checks the parts themselves.

mod batches;
mod pieces;

use super::json_stream::MAX_STRING;
use crate::error::{Error, Result};
pub use batches::{join_piece, split_rows};
use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

/// The most a document may hold, so that an endless stream ends.
const MAX_DOCUMENT: u64 = 4 << 30;
/// The most one part may hold: a row or a kept field is far smaller.
const MAX_PART: usize = 64 << 20;
/// The deepest nesting followed (serde_json's own limit).
const MAX_DEPTH: usize = 128;
/// A streamed array's piece is handed over at the first element boundary past this size.
const PIECE: usize = 64 << 10;

/// What a reader takes from a document.
#[derive(Clone, Copy)]
pub struct Layout<'k> {
    /// The array field whose elements are the rows.
    pub rows: &'k str,
    /// The fields whose values are kept.
    pub keep: &'k [&'k str],
    /// The fields of an object row whose arrays come in pieces.
    pub streamed: &'k [&'k str],
    /// What the document is, in errors.
    pub expected: &'k str,
}

/// What the split hands over.
enum Part<'a> {
    /// The value of a kept field, and its key.
    Field(&'a str, &'a [u8]),
    /// A row, or a piece of one of its streamed arrays.
    Rows(Kind, &'a [u8]),
}

/// What a part handed to a row parser is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One element of the array field.
    Row,
    /// Consecutive elements of the array of `layout.streamed[i]` in a row, as a JSON array
    /// (for the row that follows).
    Piece(usize),
}

/// Where the split is, between the document's fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// The document's opening brace.
    Document,
    /// A key, or the closing brace (right after the opening one).
    FirstKey,
    Key,
    Colon,
    /// A field's value.
    Value,
    /// A comma or the closing brace.
    Next,
    /// Nothing but whitespace after the document.
    End,
}

/// What is done with the value being read at depth 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Skip,
    Keep,
    /// The array field: its elements are the parts.
    Rows,
}

/// Within the array field, between elements.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Between {
    /// Right after `[`: an element or `]`.
    Open,
    /// After a comma: an element.
    Element,
    /// Inside an element.
    In,
}

struct Split<'k> {
    layout: Layout<'k>,
    line: u64,
    taken: u64,
    /// The brackets open outside strings: one (the document's) inside the document object.
    open: Vec<u8>,
    in_string: bool,
    escaped: bool,
    string_start: u64,
    string_length: u64,
    /// Inside a number or a literal at the depth where values are split.
    in_scalar: bool,
    expect: Expect,
    role: Role,
    between: Between,
    key: Vec<u8>,
    /// The part being gathered, and the line it started on.
    part: Vec<u8>,
    part_line: u64,
    /// In an object row: whether a key comes next, and the last key read.
    row_expects_key: bool,
    row_key: Vec<u8>,
    /// Inside the array of a streamed field of a row (its index in `layout.streamed`).
    streaming: Option<usize>,
    /// Whether the piece being gathered follows a comma where the last was handed over.
    piece_after_comma: bool,
    /// The piece being gathered (`[` and elements), and the line it started on.
    piece: Vec<u8>,
    piece_line: u64,
}

impl<'k> Split<'k> {
    fn new(layout: Layout<'k>) -> Split<'k> {
        Split {
            layout,
            line: 1,
            taken: 0,
            open: Vec::new(),
            in_string: false,
            escaped: false,
            string_start: 1,
            string_length: 0,
            in_scalar: false,
            expect: Expect::Document,
            role: Role::Skip,
            between: Between::Open,
            key: Vec::new(),
            part: Vec::new(),
            part_line: 1,
            row_expects_key: false,
            row_key: Vec::new(),
            streaming: None,
            piece_after_comma: false,
            piece: Vec::new(),
            piece_line: 1,
        }
    }

    fn depth(&self) -> usize {
        self.open.len()
    }

    /// Whether the split is at the fields of an object row.
    fn in_object_row(&self) -> bool {
        self.depth() == 3 && self.role == Role::Rows && self.open[2] == b'{'
    }

    /// Whether the bytes now read belong to a part being gathered (a piece's bytes do not,
    /// but for its newlines).
    fn gathering(&self) -> bool {
        match self.role {
            Role::Keep => self.expect == Expect::Value && self.depth() >= 1,
            Role::Rows => self.between == Between::In,
            Role::Skip => false,
        }
    }

    /// Follows a chunk of the document, handing over each part as it completes.
    fn feed(&mut self, chunk: &[u8], take: Take) -> Step {
        self.taken += chunk.len() as u64;
        if self.taken > MAX_DOCUMENT {
            return Err(self.syntax(format_args!("larger than {} GiB", MAX_DOCUMENT >> 30)));
        }
        let mut i = 0;
        while i < chunk.len() {
            if self.in_string {
                i = self.string(chunk, i, take)?;
                continue;
            }
            if self.in_plain_run() {
                i = self.plain_run(chunk, i, take)?;
                if i == chunk.len() {
                    break;
                }
            }
            let byte = chunk[i];
            match byte {
                b' ' | b'\t' | b'\r' => {
                    self.end_scalar(take)?;
                    i += 1;
                    while i < chunk.len() && matches!(chunk[i], b' ' | b'\t' | b'\r') {
                        i += 1;
                    }
                    continue;
                }
                b'\n' => {
                    self.end_scalar(take)?;
                    // Both keep it: each part's lines are the file's.
                    if self.in_piece() {
                        self.push_piece(b"\n")?;
                    }
                    if self.gathering() {
                        self.push(b"\n")?;
                    }
                    self.line += 1;
                }
                b'"' => self.open_string()?,
                b'{' | b'[' => self.open(byte)?,
                b'}' | b']' => self.close(byte, take)?,
                b',' => self.comma(take)?,
                b':' => self.colon()?,
                _ => {
                    // A number or a literal: the run of bytes that can be in one (at least
                    // this byte, which the part's parser judges).
                    let run = chunk[i + 1..]
                        .iter()
                        .position(|b| !is_scalar_byte(*b))
                        .map_or(chunk.len(), |n| i + 1 + n);
                    self.scalar(&chunk[i..run])?;
                    i = run;
                    continue;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// Appends to the part being gathered.
    fn push(&mut self, bytes: &[u8]) -> Step {
        if self.part.len() + bytes.len() > MAX_PART {
            return Err(self.syntax(format_args!("a value longer than {} MiB", MAX_PART >> 20)));
        }
        self.part.extend_from_slice(bytes);
        Ok(())
    }

    /// Appends what is read to the piece or the part it belongs to, if any.
    fn keep(&mut self, bytes: &[u8]) -> Step {
        if self.in_piece() {
            self.push_piece(bytes)
        } else if self.gathering() {
            self.push(bytes)
        } else {
            Ok(())
        }
    }

    fn syntax(&self, what: impl std::fmt::Display) -> Failure {
        Failure::Syntax(self.line, what.to_string())
    }

    /// Inside a string from `i`: up to and including its closing quote, or the chunk's end.
    fn string(
        &mut self,
        chunk: &[u8],
        i: usize,
        take: Take,
    ) -> std::result::Result<usize, Failure> {
        let mut at = i;
        while at < chunk.len() {
            if self.escaped {
                self.escaped = false;
                at += 1;
                continue;
            }
            let Some(n) = memchr::memchr3(b'"', b'\\', b'\n', &chunk[at..]) else {
                at = chunk.len();
                break;
            };
            at += n + 1;
            match chunk[at - 1] {
                b'\\' => self.escaped = true,
                // Not allowed in a JSON string: the part's parser says so, at this line.
                b'\n' => self.line += 1,
                _ => {
                    self.in_string = false;
                    break;
                }
            }
        }
        let run = &chunk[i..at];
        self.string_length += run.len() as u64;
        if self.string_length > MAX_STRING {
            self.line = self.string_start;
            return Err(self.syntax(format_args!(
                "a string longer than {} MiB; a JSON reader keeps strings up to that",
                MAX_STRING >> 20
            )));
        }
        let naming = self.depth() == 1 && matches!(self.expect, Expect::Key | Expect::FirstKey);
        let row_key = self.row_expects_key && self.in_object_row();
        if naming {
            self.key.extend_from_slice(run);
        } else {
            if row_key {
                self.row_key.extend_from_slice(run);
            }
            self.keep(run)?;
        }
        if !self.in_string {
            if naming {
                self.key.pop(); // the closing quote
                self.expect = Expect::Colon;
            } else if row_key {
                self.row_key.pop();
            } else if self.depth() == 1 && self.expect == Expect::Value {
                self.end_value(take)?;
            }
        }
        Ok(at)
    }

    fn open_string(&mut self) -> Step {
        self.value_starts(b'"')?;
        if self.row_expects_key && self.in_object_row() {
            self.row_key.clear();
        }
        self.keep(b"\"")?;
        self.in_string = true;
        self.escaped = false;
        self.string_start = self.line;
        self.string_length = 0;
        Ok(())
    }

    /// A value (or a key) starting with `first` is here: checks that one may be, and starts
    /// a part where one does.
    fn value_starts(&mut self, first: u8) -> Step {
        match (self.depth(), self.expect) {
            (0, Expect::Document) if first == b'{' => Ok(()),
            (0, Expect::Document) => Err(self.syntax("not a JSON object")),
            (0, _) => Err(self.syntax("more after the document's end")),
            (1, Expect::Key | Expect::FirstKey) if first == b'"' => {
                self.key.clear();
                Ok(())
            }
            (1, Expect::Value) => {
                let key = String::from_utf8_lossy(&self.key);
                self.role = if key == self.layout.rows {
                    Role::Rows
                } else if self.layout.keep.contains(&&*key) {
                    Role::Keep
                } else {
                    Role::Skip
                };
                if self.role == Role::Rows && first != b'[' {
                    return Err(self.syntax(format_args!("`{}` is not an array", self.layout.rows)));
                }
                self.part.clear();
                self.part_line = self.line;
                Ok(())
            }
            (1, Expect::Key | Expect::FirstKey) => Err(self.syntax("expected a key")),
            (1, Expect::Colon) => Err(self.syntax("expected `:` after a key")),
            (1, _) => Err(self.syntax("expected `,` or `}` between fields")),
            (2, _) if self.role == Role::Rows => match self.between {
                Between::Open | Between::Element => {
                    self.between = Between::In;
                    self.part.clear();
                    self.part_line = self.line;
                    Ok(())
                }
                Between::In => Err(self.syntax(format_args!(
                    "expected `,` or `]` between the elements of `{}`",
                    self.layout.rows
                ))),
            },
            (3, _) if first == b'[' && !self.row_expects_key && self.in_object_row() => {
                self.array_starts();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn open(&mut self, byte: u8) -> Step {
        self.value_starts(byte)?;
        if self.depth() == 0 {
            self.expect = Expect::FirstKey;
        } else if self.depth() == 1 && self.role == Role::Rows {
            self.between = Between::Open;
        } else if self.depth() == 3 && self.streaming.is_some() {
            // The row holds an empty array where its pieces were.
            self.push(b"[]")?;
        } else {
            if self.depth() == 2 && self.role == Role::Rows {
                self.row_expects_key = byte == b'{';
            }
            self.keep(&[byte])?;
        }
        if self.depth() == MAX_DEPTH {
            return Err(self.syntax(format_args!("nested deeper than {MAX_DEPTH}")));
        }
        self.open.push(byte);
        Ok(())
    }

    fn close(&mut self, byte: u8, take: Take) -> Step {
        self.end_scalar(take)?;
        let opener = if byte == b'}' { b'{' } else { b'[' };
        if self.open.last() != Some(&opener) {
            return Err(self.syntax(format_args!("unexpected `{}`", byte as char)));
        }
        match self.depth() {
            1 if !matches!(self.expect, Expect::FirstKey | Expect::Next) => {
                return Err(self.syntax("expected a field before `}`"));
            }
            1 => self.expect = Expect::End,
            2 if self.role == Role::Rows => {
                if self.between == Between::Element {
                    return Err(self.syntax(format_args!(
                        "expected an element of `{}` after `,`",
                        self.layout.rows
                    )));
                }
                self.hand_over(take)?;
            }
            4 if self.streaming.is_some() => self.array_ends(take)?,
            _ => self.keep(&[byte])?,
        }
        self.open.pop();
        if self.depth() == 1 && self.expect == Expect::Value {
            self.end_value(take)?;
        }
        Ok(())
    }

    fn comma(&mut self, take: Take) -> Step {
        self.end_scalar(take)?;
        match self.depth() {
            1 if self.expect == Expect::Next => self.expect = Expect::Key,
            0 | 1 => return Err(self.syntax("unexpected `,`")),
            2 if self.role == Role::Rows => {
                if self.between != Between::In {
                    return Err(self.syntax(format_args!(
                        "expected an element of `{}` before `,`",
                        self.layout.rows
                    )));
                }
                self.hand_over(take)?;
                self.between = Between::Element;
            }
            _ => {
                if self.in_object_row() {
                    self.row_expects_key = true;
                }
                self.keep(b",")?;
            }
        }
        Ok(())
    }

    fn colon(&mut self) -> Step {
        match self.depth() {
            1 if self.expect == Expect::Colon => self.expect = Expect::Value,
            0 | 1 => return Err(self.syntax("unexpected `:`")),
            _ => {
                if self.in_object_row() {
                    self.row_expects_key = false;
                }
                self.keep(b":")?;
            }
        }
        Ok(())
    }

    /// A number or a literal, or a piece of one.
    fn scalar(&mut self, bytes: &[u8]) -> Step {
        let splits = (self.depth() == 1 && self.expect == Expect::Value)
            || (self.depth() == 2 && self.role == Role::Rows);
        if !self.in_scalar {
            if splits {
                self.value_starts(bytes[0])?;
                self.in_scalar = true;
            } else if self.depth() <= 1 {
                self.value_starts(bytes[0])?;
                return Err(self.syntax("expected a key"));
            }
        }
        self.keep(bytes)
    }

    /// Ends a number or literal at the depth where values are split.
    fn end_scalar(&mut self, take: Take) -> Step {
        if !self.in_scalar {
            return Ok(());
        }
        self.in_scalar = false;
        if self.depth() == 1 {
            self.end_value(take)?;
        }
        Ok(())
    }

    /// A field's value is complete: a kept one is handed over.
    fn end_value(&mut self, take: Take) -> Step {
        if self.role == Role::Keep {
            let key = String::from_utf8_lossy(&self.key);
            take(self.part_line, Part::Field(&key, &self.part)).map_err(Failure::Reader)?;
        }
        self.expect = Expect::Next;
        self.role = Role::Skip;
        Ok(())
    }

    /// Hands over the element gathered, if any.
    fn hand_over(&mut self, take: Take) -> Step {
        if self.between == Between::In {
            take(self.part_line, Part::Rows(Kind::Row, &self.part)).map_err(Failure::Reader)?;
        }
        Ok(())
    }

    fn finish(&self) -> Step {
        match (self.expect, self.in_string) {
            (Expect::End, false) => Ok(()),
            (Expect::Document, false) => Err(self.syntax("empty: no JSON object")),
            _ => Err(self.syntax("the document ends too early")),
        }
    }
}

/// Bytes that may continue a number or a literal.
fn is_scalar_byte(byte: u8) -> bool {
    matches!(byte, b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'.' | b'+' | b'-')
}

type Take<'t> = &'t mut dyn FnMut(u64, Part) -> Result<()>;
type Step = std::result::Result<(), Failure>;

/// Why the split stopped.
enum Failure {
    /// The structure around the parts: on which line, and what is wrong.
    Syntax(u64, String),
    /// What the reader said about a part.
    Reader(Error),
}

/// Streams the JSON object document `path` from `reader`: hands `take` the parts `layout`
/// asks for, each with the line it starts on.
fn split_document(
    path: &str,
    reader: &mut dyn BufRead,
    layout: Layout,
    mut take: impl FnMut(u64, Part) -> Result<()>,
) -> Result<()> {
    let mut split = Split::new(layout);
    let failed = |f: Failure| match f {
        Failure::Syntax(line, what) => Error::Input(format!(
            "{path}:{line}: expected {}: {what}",
            layout.expected
        )),
        Failure::Reader(e) => e,
    };
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, e)),
        };
        if chunk.is_empty() {
            return split.finish().map_err(failed);
        }
        let n = chunk.len();
        split.feed(chunk, &mut take).map_err(failed)?;
        reader.consume(n);
    }
}

/// A part starting on `line` of `path` that serde_json refused, as `path:line: expected …`.
pub fn part_refused(path: &str, line: u64, expected: &str, e: &serde_json::Error) -> Error {
    let text = e.to_string();
    // serde_json's own position is within the part, whose indentation was dropped.
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(what, _)| what);
    let at = line + (e.line() as u64).saturating_sub(1);
    Error::Input(format!("{path}:{at}: expected {expected}: {what}"))
}

#[cfg(test)]
mod tests;
