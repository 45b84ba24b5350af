//! The JSON splitter against serde_json on generated documents: the parts, their names, the
//! structure around them, and rows parsed on workers arriving in order.

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
        &["context"],
        "rows",
        |line, part| {
            let (into, bytes) = match part {
                Part::Field(_, bytes) => (&mut fields, bytes),
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
        &["context"],
        "rows",
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
        "rows",
        &["context"],
        "rows",
        |_, _, _| Ok(()),
        |line, _| match line {
            12_000 | 17_000 => Err(Error::Input(format!("row {line}"))),
            _ => Ok(()),
        },
        |()| {},
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "row 12000");
}
