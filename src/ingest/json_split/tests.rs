//! The JSON splitter against serde_json on generated documents: the parts, their names, the
//! structure around them, and rows parsed on workers arriving in order.

use super::*;
use serde_json::{Value, json};

/// Values with the line each starts on.
type Lined = Vec<(u64, Value)>;

/// The document the tests split: rows in `rows`, `context` kept, each row's `inner` streamed.
const LAYOUT: Layout = Layout {
    rows: "rows",
    keep: &["context"],
    streamed: &["inner"],
    expected: "rows",
};

/// The parts of `text` as the split hands them over, read `chunk` bytes at a time: the kept
/// fields, and the rows with the pieces of their `inner` put back (and how many pieces each
/// had).
fn parts(text: &str, chunk: usize) -> Result<(Lined, Lined, Vec<usize>)> {
    let mut reader = io::BufReader::with_capacity(chunk, text.as_bytes());
    let (mut fields, mut elements, mut pieces) = (Vec::new(), Vec::new(), Vec::new());
    let mut inner: Vec<Value> = Vec::new();
    let mut count = 0;
    split_document("t.json", &mut reader, LAYOUT, |line, part| {
        match part {
            Part::Field(_, bytes) => fields.push((line, serde_json::from_slice(bytes).unwrap())),
            Part::Rows(Kind::Piece(0), bytes) => {
                // The elements are the parser's to check.
                let piece: Vec<Value> = serde_json::from_slice(bytes)
                    .map_err(|e| part_refused("t.json", line, "rows", &e))?;
                inner.extend(piece);
                count += 1;
            }
            Part::Rows(Kind::Piece(_), _) => unreachable!("one streamed field"),
            Part::Rows(Kind::Row, bytes) => {
                let mut row: Value = serde_json::from_slice(bytes).unwrap();
                if count > 0 {
                    assert_eq!(
                        row["inner"],
                        json!([]),
                        "{}",
                        String::from_utf8_lossy(bytes)
                    );
                    row["inner"] = Value::Array(std::mem::take(&mut inner));
                }
                elements.push((line, row));
                pieces.push(std::mem::take(&mut count));
            }
        }
        Ok(())
    })?;
    Ok((fields, elements, pieces))
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
        // Some rows hold a streamed array, some long enough to come in several pieces.
        if let Some(Value::Array(rows)) = doc.get_mut("rows") {
            for row in rows.iter_mut().filter_map(Value::as_object_mut) {
                let inner: Vec<Value> = match random.below(4) {
                    0 => (0..random.below(6)).map(|_| random.value(2)).collect(),
                    1 => (0..12_000).map(|i| json!(i as f64 / 3.0)).collect(),
                    _ => continue,
                };
                row.insert("inner".into(), Value::Array(inner));
            }
        }
        let doc = Value::Object(doc);
        let text = match case % 2 {
            0 => serde_json::to_string(&doc).unwrap(),
            _ => serde_json::to_string_pretty(&doc).unwrap(),
        };
        for chunk in [1, 3, 64, 8192] {
            let (fields, elements, _) = parts(&text, chunk).unwrap();
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
    let (fields, elements, _) = parts(text, 5).unwrap();
    assert_eq!(fields, vec![(10, json!({"c": 2}))]);
    assert_eq!(
        elements,
        vec![(4, json!({"a": 1, "b": "x"})), (7, json!(7))]
    );
}

#[test]
fn a_streamed_array_comes_in_pieces_and_its_row_keeps_its_lines() {
    // Pretty-printed as hyperfine writes, one element a line: a row's error after its
    // streamed array still names the file's line.
    let times: Vec<String> = (0..20_000).map(|i| format!("{}.25", i)).collect();
    let text = format!(
        "{{\"rows\": [\n  {{\"a\": \"inner\",\n   \"inner\": [\n    {}\n   ],\n   \"b\": [\"inner\", [1, 2]],\n   \"x\": tru\n  }}\n]}}",
        times.join(",\n    ")
    );
    let mut rows = Vec::new();
    let mut pieces: Vec<(u64, Vec<f64>)> = Vec::new();
    split_document("t.json", &mut text.as_bytes(), LAYOUT, |line, part| {
        match part {
            Part::Rows(Kind::Piece(0), bytes) => {
                pieces.push((line, serde_json::from_slice(bytes).unwrap()))
            }
            Part::Rows(Kind::Row, bytes) => rows.push((line, bytes.to_vec())),
            _ => unreachable!(),
        }
        Ok(())
    })
    .unwrap();
    assert!(pieces.len() > 2, "{} pieces", pieces.len());
    let all: Vec<f64> = pieces.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    assert_eq!(
        all,
        (0..20_000).map(|i| i as f64 + 0.25).collect::<Vec<_>>()
    );
    // Each piece starts on its first element's line or the line before it.
    let first_of_second = pieces[0].1.len() as u64 + 3;
    assert!((first_of_second - 1..=first_of_second).contains(&pieces[1].0));
    let (line, row) = &rows[0];
    assert_eq!(*line, 2);
    let e = serde_json::from_slice::<Value>(row).unwrap_err();
    let err = part_refused("t.json", *line, "rows", &e).to_string();
    // Where serde_json puts the error in the whole document.
    let whole = serde_json::from_str::<Value>(&text).unwrap_err();
    assert_eq!(whole.line(), 20_000 + 7);
    assert_eq!(
        err,
        format!("t.json:{}: expected rows: expected ident", whole.line())
    );
    // Only the row's own `inner` is streamed: the string and the nested array stay.
    let fixed = String::from_utf8_lossy(row).replace("tru", "true");
    let row: Value = serde_json::from_str(&fixed).unwrap();
    assert_eq!(row["a"], "inner");
    assert_eq!(row["inner"], json!([]));
    assert_eq!(row["b"], json!(["inner", [1, 2]]));
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
        // A streamed array's elements are checked by the parser of its pieces.
        ("{\"rows\": [{\"inner\": [1,]}]}", 1, "trailing comma"),
        ("{\"rows\": [{\"inner\": [,1]}]}", 1, "expected value"),
        (
            "{\"rows\": [{\"inner\":\n[1\n2]}]}",
            3,
            "expected `,` or `]`",
        ),
        ("{\"rows\": [{\"inner\": [1}]}", 1, "unexpected `}`"),
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
    // A trailing comma where a piece was handed over leaves no piece for the parser to refuse.
    let ones = "1,".repeat(PIECE / 2);
    let err = parts(&format!("{{\"rows\": [{{\"inner\": [{ones}]}}]}}"), 4096)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("expected an element of `inner` after `,`"),
        "{err}"
    );
    let (_, rows, pieces) =
        parts(&format!("{{\"rows\": [{{\"inner\": [{ones}1]}}]}}"), 4096).unwrap();
    assert_eq!(
        (rows[0].1["inner"].as_array().unwrap().len(), pieces),
        (PIECE / 2 + 1, vec![2])
    );
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
    let parse = |line: u64, _: Kind, bytes: &[u8]| -> Result<(u64, Value)> {
        Ok((line, serde_json::from_slice(bytes).unwrap()))
    };
    split_rows(
        "t.json",
        &mut text.as_bytes(),
        LAYOUT,
        |_, _, v| {
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
        LAYOUT,
        |_, _, _| Ok(()),
        |line, _, _| match line {
            12_000 | 17_000 => Err(Error::Input(format!("row {line}"))),
            _ => Ok(()),
        },
        |()| {},
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "row 12000");
}
