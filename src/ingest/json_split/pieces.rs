//! The arrays of a row's streamed fields, handed over in pieces: each a JSON array of
//! consecutive elements, cut at a comma once it is long enough.

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

    /// Within a streamed array, from `from`: the bytes up to the next string, bracket, brace
    /// or colon (numbers, literals, commas and whitespace: nearly all of a long array) are
    /// copied whole into the piece, and the piece is handed over at a comma once it is long
    /// enough. Its elements are the parser's to check. Returns where the run ends.
    pub(super) fn elements(
        &mut self,
        chunk: &[u8],
        from: usize,
        take: Take,
    ) -> std::result::Result<usize, Failure> {
        let rest = &chunk[from..];
        let end = match (
            memchr::memchr3(b'"', b'[', b'{', rest),
            memchr::memchr3(b']', b'}', b':', rest),
        ) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(rest.len()),
        };
        // Outside strings and containers: every comma here is between two elements.
        let mut run = &rest[..end];
        while self.piece.len() + run.len() >= PIECE {
            let short = PIECE.saturating_sub(self.piece.len());
            let Some(comma) = memchr::memchr(b',', &run[short..]).map(|n| short + n) else {
                break;
            };
            self.take_into_piece(&run[..comma])?;
            self.hand_over_piece(take)?;
            self.piece_after_comma = true;
            run = &run[comma + 1..];
        }
        self.take_into_piece(run)?;
        Ok(from + end)
    }

    /// Appends bytes of a streamed array to its piece; the row keeps the lines they span.
    pub(super) fn take_into_piece(&mut self, bytes: &[u8]) -> Step {
        let newlines = memchr::memchr_iter(b'\n', bytes).count();
        self.line += newlines as u64;
        if self.part.len() + newlines > MAX_PART {
            return Err(self.syntax(format_args!("a value longer than {} MiB", MAX_PART >> 20)));
        }
        self.part.resize(self.part.len() + newlines, b'\n');
        self.push_piece(bytes)
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
            take(self.piece_line, Part::Piece(field, &self.piece)).map_err(Failure::Reader)?;
        }
        self.piece.clear();
        self.piece.push(b'[');
        self.piece_line = self.line;
        Ok(())
    }
}
