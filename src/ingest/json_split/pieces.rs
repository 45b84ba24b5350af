//! Plain runs of bytes (no string, bracket or brace), taken whole; and the arrays of a row's
//! streamed fields, handed over in pieces: each a JSON array of consecutive elements, cut at a
//! comma once it is long enough.

use super::*;

impl Split<'_> {
    /// Whether the bytes now read belong to a streamed array's piece.
    pub(super) fn in_piece(&self) -> bool {
        self.streaming.is_some() && self.depth() >= 4
    }

    /// The streamed field being read, for errors.
    fn streamed_name(&self) -> &str {
        self.streaming.map_or("", |i| self.layout.streamed[i])
    }

    /// An array starts as a field's value in an object row: streamed if the field is.
    pub(super) fn array_starts(&mut self) {
        let key = String::from_utf8_lossy(&self.row_key);
        self.streaming = self.layout.streamed.iter().position(|s| *s == key);
        if self.streaming.is_some() {
            self.piece_after_comma = false;
            self.piece.clear();
            self.piece.push(b'[');
            self.piece_line = self.line;
        }
    }

    /// The streamed array closes: its last piece is handed over.
    pub(super) fn array_ends(&mut self, take: Take) -> Step {
        // A trailing comma where a piece was handed over leaves the parser nothing to refuse.
        let empty = self.piece[1..].iter().all(u8::is_ascii_whitespace);
        if self.piece_after_comma && empty {
            return Err(self.syntax(format_args!(
                "expected an element of `{}` after `,`",
                self.streamed_name()
            )));
        }
        self.hand_over_piece(take)?;
        self.streaming = None;
        Ok(())
    }

    /// Whether the bytes now read, up to the next string, bracket or brace, are plain (the
    /// split follows nothing in them but their lines): inside a skipped or kept field's
    /// container, a row's nested container, or a streamed array.
    pub(super) fn in_plain_run(&self) -> bool {
        match self.role {
            Role::Skip | Role::Keep => self.depth() >= 2,
            Role::Rows => self.depth() >= 4,
        }
    }

    /// A plain run from `from` (numbers, literals, commas, colons, whitespace, the strings
    /// that end in this chunk and the brackets that stay within the plain context: nearly all
    /// of a long array or a skipped report), skipped or copied whole into the piece or part it
    /// belongs to, with its lines; between a streamed array's elements the piece is handed
    /// over at a comma once it is long enough. What is copied is the parser's to check.
    /// Returns where the run ends.
    pub(super) fn plain_run(
        &mut self,
        chunk: &[u8],
        from: usize,
        take: Take,
    ) -> std::result::Result<usize, Failure> {
        // The first byte not yet taken, and where the bytes outside strings resume.
        let (mut start, mut at) = (from, from);
        let end = loop {
            let stop = next_string_or_bracket(&chunk[at..]).map_or(chunk.len(), |n| at + n);
            // Outside strings and containers every comma is between two elements.
            let cuts = self.in_piece() && self.depth() == 4;
            while cuts && self.piece.len() + (stop - start) >= PIECE {
                let short = (start + PIECE.saturating_sub(self.piece.len())).max(at);
                let Some(comma) = memchr::memchr(b',', &chunk[short..stop]).map(|n| short + n)
                else {
                    break;
                };
                self.take_plain(&chunk[start..comma])?;
                self.hand_over_piece(take)?;
                self.piece_after_comma = true;
                start = comma + 1;
            }
            let Some(&byte) = chunk.get(stop) else {
                break stop;
            };
            match byte {
                // A string that goes on into the next chunk, or too long, is the general path's.
                b'"' => match string_length(&chunk[stop + 1..]) {
                    Some(n) if n as u64 <= MAX_STRING => at = stop + n + 2,
                    _ => break stop,
                },
                b'[' | b'{' if self.depth() < MAX_DEPTH => self.open.push(byte),
                // `]` and `}` are their openers plus two.
                b']' | b'}' if self.open.last() == Some(&(byte - 2)) => {
                    self.open.pop();
                    if !self.in_plain_run() {
                        self.open.push(byte - 2);
                        break stop;
                    }
                }
                _ => break stop,
            }
            if byte != b'"' {
                at = stop + 1;
            }
        };
        self.take_plain(&chunk[start..end])?;
        Ok(end)
    }

    /// Follows plain bytes' lines and keeps them where they belong; the part keeps the lines
    /// of a piece's bytes too.
    fn take_plain(&mut self, bytes: &[u8]) -> Step {
        let newlines = memchr::memchr_iter(b'\n', bytes).count();
        self.line += newlines as u64;
        if self.in_piece() {
            if self.part.len() + newlines > MAX_PART {
                return Err(self.syntax(format_args!("a value longer than {} MiB", MAX_PART >> 20)));
            }
            self.part.resize(self.part.len() + newlines, b'\n');
        }
        self.keep(bytes)
    }

    /// Appends to the piece being gathered.
    pub(super) fn push_piece(&mut self, bytes: &[u8]) -> Step {
        if self.piece.len() + bytes.len() > MAX_PART {
            return Err(self.syntax(format_args!("a value longer than {} MiB", MAX_PART >> 20)));
        }
        self.piece.extend_from_slice(bytes);
        Ok(())
    }

    /// Hands over the piece gathered, if it holds an element, and starts the next.
    pub(super) fn hand_over_piece(&mut self, take: Take) -> Step {
        if self.piece.len() > 1 {
            self.piece.push(b']');
            let field = self.streaming.expect("a piece is of a streamed field");
            take(self.piece_line, Part::Rows(Kind::Piece(field), &self.piece))
                .map_err(Failure::Reader)?;
        }
        self.piece.clear();
        self.piece.push(b'[');
        self.piece_line = self.line;
        Ok(())
    }
}

/// Where the first `"`, `[`, `]`, `{` or `}` in `bytes` is: a block at a time is tested for
/// any, in a form the compiler turns into vector compares.
fn next_string_or_bracket(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 32;
    // `[` and `{`, `]` and `}` differ only in bit 5.
    let stops = |b: u8| b == b'"' || b | 0x20 == b'{' || b | 0x20 == b'}';
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut at = 0;
    for block in &mut blocks {
        if block.iter().fold(false, |any, &b| any | stops(b)) {
            break;
        }
        at += BLOCK;
    }
    bytes[at..].iter().position(|&b| stops(b)).map(|n| at + n)
}

/// The length of the string whose content `bytes` starts with, if its closing quote is in
/// them.
fn string_length(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let n = memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        if bytes[at + n] == b'"' {
            return Some(at + n);
        }
        at += n + 2; // the backslash and the byte it escapes
    }
}
