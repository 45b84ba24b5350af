//! A JSON object document split as it streams into the parts a reader wants: the value of
//! the one field it keeps (a context), and one by one the elements of the array field that
//! holds its rows. Each part is handed over as its own bytes with the line it starts on, to be parsed
//! as a slice (far faster than a parser taking its input a byte at a time), so memory holds
//! one row at a time. Fields the reader does not keep, and whitespace outside strings, are
//! skipped as they pass (newlines are kept inside parts so that a parser's line within a part
//! is its line in the file). The split checks the structure around the parts; the parser
//! checks the parts themselves.

use super::json_stream::MAX_STRING;
use crate::error::{Error, Result};
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

/// What the split hands over.
enum Part<'a> {
    /// The value of the kept field.
    Field(&'a [u8]),
    /// One element of the array field.
    Element(&'a [u8]),
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
    array: &'k str,
    keep: &'k str,
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
}

impl<'k> Split<'k> {
    fn new(array: &'k str, keep: &'k str) -> Split<'k> {
        Split {
            array,
            keep,
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
        }
    }

    fn depth(&self) -> usize {
        self.open.len()
    }

    /// Whether the bytes now read belong to a part being gathered.
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
        if naming {
            self.key.extend_from_slice(run);
        } else if self.gathering() {
            self.push(run)?;
        }
        if !self.in_string {
            if naming {
                self.key.pop(); // the closing quote
                self.expect = Expect::Colon;
            } else if self.depth() == 1 && self.expect == Expect::Value {
                self.end_value(take)?;
            }
        }
        Ok(at)
    }

    fn open_string(&mut self) -> Step {
        self.value_starts(b'"')?;
        if self.gathering() {
            self.push(b"\"")?;
        }
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
                self.role = if key == self.array {
                    Role::Rows
                } else if key == self.keep {
                    Role::Keep
                } else {
                    Role::Skip
                };
                if self.role == Role::Rows && first != b'[' {
                    return Err(self.syntax(format_args!("`{}` is not an array", self.array)));
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
                    self.array
                ))),
            },
            _ => Ok(()),
        }
    }

    fn open(&mut self, byte: u8) -> Step {
        self.value_starts(byte)?;
        if self.depth() == 0 {
            self.expect = Expect::FirstKey;
        } else if self.depth() == 1 && self.role == Role::Rows {
            self.between = Between::Open;
        } else if self.gathering() {
            self.push(&[byte])?;
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
                        self.array
                    )));
                }
                self.hand_over(take)?;
            }
            _ if self.gathering() => self.push(&[byte])?,
            _ => {}
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
                        self.array
                    )));
                }
                self.hand_over(take)?;
                self.between = Between::Element;
            }
            _ if self.gathering() => self.push(b",")?,
            _ => {}
        }
        Ok(())
    }

    fn colon(&mut self) -> Step {
        match self.depth() {
            1 if self.expect == Expect::Colon => self.expect = Expect::Value,
            0 | 1 => return Err(self.syntax("unexpected `:`")),
            _ if self.gathering() => self.push(b":")?,
            _ => {}
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
        if self.gathering() {
            self.push(bytes)?;
        }
        Ok(())
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
            take(self.part_line, Part::Field(&self.part)).map_err(Failure::Reader)?;
        }
        self.expect = Expect::Next;
        self.role = Role::Skip;
        Ok(())
    }

    /// Hands over the element gathered, if any.
    fn hand_over(&mut self, take: Take) -> Step {
        if self.between == Between::In {
            take(self.part_line, Part::Element(&self.part)).map_err(Failure::Reader)?;
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

/// Streams the JSON object document `path` from `reader`: hands `take` the value of the field
/// `keep` and each element of the array field `array`, each with the line it starts on.
/// `expected` names the document in errors.
fn split_document(
    path: &str,
    reader: &mut dyn BufRead,
    array: &str,
    keep: &str,
    expected: &str,
    mut take: impl FnMut(u64, Part) -> Result<()>,
) -> Result<()> {
    let mut split = Split::new(array, keep);
    let failed = |f: Failure| match f {
        Failure::Syntax(line, what) => {
            Error::Input(format!("{path}:{line}: expected {expected}: {what}"))
        }
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

/// How many bytes of elements go to a worker at a time.
const BATCH: usize = 256 << 10;

/// Elements gathered for a worker: their bytes end to end, and where each starts in them (and
/// on which line of the file).
struct Batch {
    seq: u64,
    bytes: Vec<u8>,
    starts: Vec<(usize, u64)>,
}

impl Batch {
    fn new(seq: u64) -> Batch {
        Batch {
            seq,
            bytes: Vec::with_capacity(BATCH + (4 << 10)),
            starts: Vec::new(),
        }
    }

    /// Each element parsed, in order, up to the first that cannot be.
    fn parse<T>(&self, parse: &(impl Fn(u64, &[u8]) -> Result<T> + Sync)) -> Result<Vec<T>> {
        let ends = self.starts.iter().skip(1).map(|&(at, _)| at);
        self.starts
            .iter()
            .zip(ends.chain([self.bytes.len()]))
            .map(|(&(start, line), end)| parse(line, &self.bytes[start..end]))
            .collect()
    }
}

/// A worker: parses the batches it takes until there are none.
fn parse_batches<T>(
    work: &Mutex<mpsc::Receiver<Batch>>,
    parsed: &mpsc::SyncSender<(u64, Result<Vec<T>>)>,
    parse: &(impl Fn(u64, &[u8]) -> Result<T> + Sync),
) {
    // The lock is held only while taking a batch.
    while let Ok(batch) = work
        .lock()
        .map_err(drop)
        .and_then(|w| w.recv().map_err(drop))
    {
        if parsed.send((batch.seq, batch.parse(parse))).is_err() {
            break;
        }
    }
}

/// Hands the parsed elements to `record` in document order, until the first error (which
/// it returns, after raising `stop`).
fn in_order<T>(
    done: mpsc::Receiver<(u64, Result<Vec<T>>)>,
    stop: &AtomicBool,
    record: &mut impl FnMut(T),
) -> Result<()> {
    let (mut next, mut waiting, mut failed) = (0, BTreeMap::new(), None);
    for (seq, items) in done {
        waiting.insert(seq, items);
        while let Some(items) = waiting.remove(&next) {
            next += 1;
            match items {
                Ok(items) if failed.is_none() => items.into_iter().for_each(&mut *record),
                Ok(_) => {}
                // Later batches are still taken (so the split is never left waiting to
                // hand one over) and dropped.
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failed.get_or_insert(e);
                }
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

/// As [`split_document`], with the elements parsed by `parse` on worker threads (the split
/// runs on this one, `field` too) and handed to `record` in document order. Memory holds the
/// few batches in flight; the first error in document order ends the read.
#[allow(clippy::too_many_arguments)] // the document's description, then its three handlers
pub fn split_rows<T: Send>(
    path: &str,
    reader: &mut dyn BufRead,
    array: &str,
    keep: &str,
    expected: &str,
    mut field: impl FnMut(u64, &[u8]) -> Result<()>,
    parse: impl Fn(u64, &[u8]) -> Result<T> + Sync,
    mut record: impl FnMut(T) + Send,
) -> Result<()> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let stop = AtomicBool::new(false);
    let (batches, work) = mpsc::sync_channel::<Batch>(workers * 2);
    let work = Mutex::new(work);
    let (parsed, done) = mpsc::sync_channel::<(u64, Result<Vec<T>>)>(workers * 2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (work, parsed, parse) = (&work, parsed.clone(), &parse);
            scope.spawn(move || parse_batches(work, &parsed, parse));
        }
        drop(parsed);
        let stop = &stop;
        let collector = scope.spawn(move || in_order(done, stop, &mut record));
        let mut batch = Batch::new(0);
        let split = split_document(path, reader, array, keep, expected, |line, part| {
            match part {
                Part::Field(value) => field(line, value)?,
                Part::Element(bytes) => {
                    batch.starts.push((batch.bytes.len(), line));
                    batch.bytes.extend_from_slice(bytes);
                }
            }
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            if batch.bytes.len() >= BATCH {
                let next = Batch::new(batch.seq + 1);
                // The workers outlive the split, so a send cannot fail.
                let _ = batches.send(std::mem::replace(&mut batch, next));
            }
            Ok(())
        });
        if split.is_ok() && !batch.starts.is_empty() {
            let _ = batches.send(batch);
        }
        drop(batches);
        let collected = collector.join().unwrap_or_else(|_| {
            Err(Error::Environment(format!(
                "{path}: a reader thread failed"
            )))
        });
        // A row's error comes before the split's own, which stopped at or after it.
        collected.and(split)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Values with the line each starts on.
    type Lined = Vec<(u64, Value)>;

    /// The parts of `text` as the split hands them over, read `chunk` bytes at a time.
    fn parts(text: &str, chunk: usize) -> Result<(Lined, Lined)> {
        let mut reader = io::BufReader::with_capacity(chunk, text.as_bytes());
        let (mut fields, mut elements) = (Vec::new(), Vec::new());
        split_document(
            "t.json",
            &mut reader,
            "rows",
            "context",
            "rows",
            |line, part| {
                let (into, bytes) = match part {
                    Part::Field(bytes) => (&mut fields, bytes),
                    Part::Element(bytes) => (&mut elements, bytes),
                };
                into.push((line, serde_json::from_slice(bytes).unwrap()));
                Ok(())
            },
        )?;
        Ok((fields, elements))
    }

    /// A small xorshift generator: the same documents every run.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn value(&mut self, depth: u32) -> Value {
            let strings = [
                "",
                "a",
                "}{][,:",
                "quote \" and \\ back",
                "line\nbreak",
                "ünï",
            ];
            match self.below(if depth > 2 { 4 } else { 6 }) {
                0 => Value::Null,
                1 => json!(self.below(2) == 0),
                2 => json!(self.below(1_000_000) as f64 / 7.0 - 1000.0),
                3 => json!(strings[self.below(strings.len() as u64) as usize]),
                4 => (0..self.below(4)).map(|_| self.value(depth + 1)).collect(),
                _ => (0..self.below(4))
                    .map(|i| (format!("k{i}"), self.value(depth + 1)))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            }
        }
    }

    #[test]
    fn the_parts_are_those_serde_json_reads_from_the_whole_document() {
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        for case in 0..400 {
            let mut doc = serde_json::Map::new();
            for key in ["before", "context", "rows", "after"] {
                if random.below(4) > 0 {
                    let value = match key {
                        "rows" => (0..random.below(5)).map(|_| random.value(1)).collect(),
                        _ => random.value(0),
                    };
                    doc.insert(key.to_string(), value);
                }
            }
            let doc = Value::Object(doc);
            let text = match case % 2 {
                0 => serde_json::to_string(&doc).unwrap(),
                _ => serde_json::to_string_pretty(&doc).unwrap(),
            };
            for chunk in [1, 3, 64, 8192] {
                let (fields, elements) = parts(&text, chunk).unwrap();
                let fields: Vec<Value> = fields.into_iter().map(|(_, v)| v).collect();
                let elements: Vec<Value> = elements.into_iter().map(|(_, v)| v).collect();
                let context: Vec<Value> = doc.get("context").into_iter().cloned().collect();
                assert_eq!(fields, context, "{text}");
                let rows = doc.get("rows").and_then(Value::as_array).cloned();
                assert_eq!(elements, rows.unwrap_or_default(), "{text}");
            }
        }
    }

    #[test]
    fn each_part_is_named_by_its_first_line() {
        let text = "{\n  \"skipped\": {\"rows\": [1]},\n  \"rows\": [\n    {\"a\": 1,\n     \"b\": \"x\"},\n\n    7\n  ],\n  \"context\":\n    {\"c\": 2}\n}\n";
        let (fields, elements) = parts(text, 5).unwrap();
        assert_eq!(fields, vec![(10, json!({"c": 2}))]);
        assert_eq!(
            elements,
            vec![(4, json!({"a": 1, "b": "x"})), (7, json!(7))]
        );
    }

    #[test]
    fn structure_around_the_parts_is_checked() {
        for (text, line, what) in [
            ("", 1, "empty"),
            ("[1]", 1, "not a JSON object"),
            (
                "{\"rows\": [1] \"x\": 2}",
                1,
                "expected `,` or `}` between fields",
            ),
            (
                "{\"rows\": [1,]}",
                1,
                "expected an element of `rows` after `,`",
            ),
            (
                "{\"rows\": [,1]}",
                1,
                "expected an element of `rows` before `,`",
            ),
            (
                "{\"rows\": [1 2]}",
                1,
                "expected `,` or `]` between the elements",
            ),
            ("{\"rows\": 5}", 1, "`rows` is not an array"),
            ("{\"rows\": [1]}\n{", 2, "more after the document's end"),
            ("{\"x\": [1}", 1, "unexpected `}`"),
            (
                "{\"rows\": [\n{\"a\": 1}\n",
                3,
                "the document ends too early",
            ),
            ("{\"x\" 1}", 1, "expected `:` after a key"),
            ("{x: 1}", 1, "expected a key"),
            ("{\"rows\": [{\"a\": \"unterminated}]}", 1, "ends too early"),
        ] {
            let err = parts(text, 4).unwrap_err().to_string();
            let prefix = format!("t.json:{line}: expected rows: ");
            assert!(
                err.starts_with(&prefix) && err.contains(what),
                "{text:?}: {err}"
            );
        }
        let deep = format!("{{\"x\": {}", "[".repeat(200));
        let err = parts(&deep, 64).unwrap_err().to_string();
        assert!(err.contains("nested deeper than 128"), "{err}");
        let long = format!(
            "{{\"context\": \"{}\"}}",
            "x".repeat(MAX_STRING as usize + 1)
        );
        let err = parts(&long, 8192).unwrap_err().to_string();
        assert!(err.contains("a string longer than 1 MiB"), "{err}");
    }

    #[test]
    fn rows_parsed_on_workers_arrive_in_order_and_the_first_error_wins() {
        let rows: Vec<String> = (0..20_000).map(|i| format!("{{\"i\": {i}}}")).collect();
        let text = format!("{{\"rows\": [{}], \"context\": 1}}", rows.join(",\n"));
        let (mut seen, mut context) = (Vec::new(), None);
        let parse = |line: u64, bytes: &[u8]| -> Result<(u64, Value)> {
            Ok((line, serde_json::from_slice(bytes).unwrap()))
        };
        split_rows(
            "t.json",
            &mut text.as_bytes(),
            "rows",
            "context",
            "rows",
            |_, v| {
                context = Some(v.to_vec());
                Ok(())
            },
            parse,
            |row| seen.push(row),
        )
        .unwrap();
        assert_eq!(context.as_deref(), Some(&b"1"[..]));
        assert_eq!(seen.len(), 20_000);
        for (i, (line, value)) in seen.iter().enumerate() {
            assert_eq!((*line, value["i"].as_u64()), (i as u64 + 1, Some(i as u64)));
        }
        let err = split_rows(
            "t.json",
            &mut text.as_bytes(),
            "rows",
            "context",
            "rows",
            |_, _| Ok(()),
            |line, _| match line {
                12_000 | 17_000 => Err(Error::Input(format!("row {line}"))),
                _ => Ok(()),
            },
            |()| {},
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "row 12000");
    }
}
