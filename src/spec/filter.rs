//! benchstat's filter expressions (`-filter`), with the syntax and keys golang.org/x/perf's
//! benchproc/syntax documents: which benchmark results, and which of their units, a
//! comparison keeps.
//!
//! Keys: `.name` (the name without `Benchmark`, sub-benchmark parts and `-N`), `.fullname`
//! (the name without `Benchmark`), `/KEY` (a `KEY=value` part of the name; `/gomaxprocs` the
//! `-N` suffix too), `.unit` (`ns/op`, or benchstat's tidied `sec/op`), `.file` (the input),
//! and any other word a file configuration key (`pkg`, `goos`, `cpu`, ...). Terms: `key:value`,
//! `key:"quoted"`, `key:/regexp/`, `key:(a OR b)`, `*`; combined by juxtaposition or `AND`,
//! `OR`, `-` (not) and parentheses.

use crate::model::{Benchmark, ConfigEntry};
use regex::Regex;

/// A parsed filter.
#[derive(Clone, Debug)]
pub struct Filter(Expr);

#[derive(Clone, Debug)]
enum Expr {
    All,
    Match { key: String, values: Vec<Value> },
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

#[derive(Clone, Debug)]
enum Value {
    Exact(String),
    Pattern(Regex),
}

/// One measurement a filter is asked about: its benchmark, unit, input and the input's
/// configuration (`pkg`, `goos`, ...).
pub struct Subject<'a> {
    pub bench: &'a Benchmark,
    pub unit: &'a str,
    pub file: &'a str,
    pub config: &'a [ConfigEntry],
}

impl Filter {
    /// Parses `text`; the error says where and what was expected.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut parser = Parser {
            text,
            at: 0,
            depth: 0,
        };
        let expr = parser.or()?;
        parser.blanks();
        match parser.rest().chars().next() {
            None => Ok(Filter(expr)),
            Some(c) => Err(parser.error(&format!("unexpected `{c}`"))),
        }
    }

    /// Whether the measurement is kept.
    pub fn keeps(&self, subject: &Subject) -> bool {
        self.0.holds(subject)
    }
}

impl Expr {
    fn holds(&self, subject: &Subject) -> bool {
        match self {
            Expr::All => true,
            Expr::Not(inner) => !inner.holds(subject),
            Expr::And(all) => all.iter().all(|e| e.holds(subject)),
            Expr::Or(any) => any.iter().any(|e| e.holds(subject)),
            Expr::Match { key, values } => {
                let found = extract(key, subject).unwrap_or_default();
                // A unit matches by its name or benchstat's tidied one.
                let tidy = (key == ".unit").then(|| tidied(&found)).flatten();
                let names: Vec<&str> = std::iter::once(found.as_str()).chain(tidy).collect();
                values.iter().any(|v| {
                    names.iter().any(|name| match v {
                        Value::Exact(text) => name == text,
                        Value::Pattern(re) => re.is_match(name),
                    })
                })
            }
        }
    }
}

/// The value of `key` for the subject; `None` where it has none (matched as "").
pub(super) fn extract(key: &str, subject: &Subject) -> Option<String> {
    let full = &subject.bench.name.full_name;
    let bare = full.strip_prefix("Benchmark").unwrap_or(full);
    let (stem, procs) = split_procs(bare);
    match key {
        ".name" => Some(stem.split('/').next().unwrap_or(stem).to_string()),
        ".fullname" => Some(bare.to_string()),
        ".unit" => Some(subject.unit.to_string()),
        ".file" => Some(subject.file.to_string()),
        "/gomaxprocs" if procs.is_some() => procs.map(str::to_string),
        _ if key.starts_with('/') => {
            let prefix = format!("{}=", &key[1..]);
            stem.split('/')
                .skip(1)
                .find_map(|part| part.strip_prefix(prefix.as_str()))
                .map(str::to_string)
        }
        "pkg" if subject.bench.package.is_some() => subject.bench.package.clone(),
        _ => subject
            .config
            .iter()
            .chain(&subject.bench.config)
            .rev()
            .find(|c| c.key == key)
            .map(|c| c.value.clone()),
    }
}

/// A name and its `-N` GOMAXPROCS suffix, as benchstat splits them.
pub(super) fn split_procs(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('-') {
        Some((stem, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (stem, Some(n))
        }
        _ => (name, None),
    }
}

/// A unit's tidied name as benchstat shows it (`ns/op` is `sec/op`), so that either matches.
fn tidied(unit: &str) -> Option<&'static str> {
    match unit {
        "ns/op" => Some("sec/op"),
        "MB/s" => Some("B/s"),
        _ => None,
    }
}

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
    /// Parentheses and negations open at this point.
    pub(super) depth: usize,
}

/// How deeply parentheses and negations may nest: deeper would overflow the stack of the
/// parser and of every walk over the expression (15,000 did), and no filter comes near.
const MOST_NESTED: usize = 200;
/// How much of a filter an error echoes.
const SHOWN: usize = 80;

impl Parser<'_> {
    pub(super) fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    pub(super) fn blanks(&mut self) {
        let trimmed = self.rest().trim_start();
        self.at = self.text.len() - trimmed.len();
    }

    pub(super) fn error(&self, what: &str) -> String {
        // A filter of thousands of characters is not echoed whole.
        let shown: String = match self.text.chars().count() > SHOWN {
            true => self.text.chars().take(SHOWN).chain(['…']).collect(),
            false => self.text.to_string(),
        };
        format!("`{shown}`: {what} at column {}", self.at + 1)
    }

    /// Takes `token` (after blanks) if it comes next.
    pub(super) fn eat(&mut self, token: &str) -> bool {
        self.blanks();
        let Some(after) = self.rest().strip_prefix(token) else {
            return false;
        };
        // `OR` and `AND` are words of their own, not the start of `ORDER`.
        let part_of_a_word = token.chars().all(|c| c.is_ascii_alphabetic())
            && (after.chars().next())
                .is_some_and(|c| !c.is_whitespace() && !matches!(c, '(' | ')'));
        if !part_of_a_word {
            self.at += token.len();
            return true;
        }
        false
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut any = vec![self.and()?];
        while self.eat("OR") {
            any.push(self.and()?);
        }
        Ok(if any.len() == 1 {
            any.remove(0)
        } else {
            Expr::Or(any)
        })
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut all = vec![self.term()?];
        loop {
            self.blanks();
            let next = self.rest();
            if next.is_empty() || next.starts_with(')') || self.peek_word("OR") {
                break;
            }
            self.eat("AND");
            all.push(self.term()?);
        }
        Ok(if all.len() == 1 {
            all.remove(0)
        } else {
            Expr::And(all)
        })
    }

    /// `parse` one level deeper; an error beyond [`MOST_NESTED`].
    fn nested(&mut self, parse: fn(&mut Self) -> Result<Expr, String>) -> Result<Expr, String> {
        if self.depth == MOST_NESTED {
            return Err(self.error(&format!("nested more than {MOST_NESTED} deep")));
        }
        self.depth += 1;
        let inner = parse(self);
        self.depth -= 1;
        inner
    }

    fn peek_word(&mut self, word: &str) -> bool {
        let at = self.at;
        let found = self.eat(word);
        self.at = at;
        found
    }

    fn term(&mut self) -> Result<Expr, String> {
        if self.eat("(") {
            let inner = self.nested(Self::or)?;
            return match self.eat(")") {
                true => Ok(inner),
                false => Err(self.error("expected `)`")),
            };
        }
        if self.eat("-") {
            return Ok(Expr::Not(Box::new(self.nested(Self::term)?)));
        }
        if self.eat("*") {
            return Ok(Expr::All);
        }
        let key = self.word()?;
        if !self.eat(":") {
            return Err(self.error(&format!("expected `:` after key `{key}`")));
        }
        let values = if self.eat("(") {
            let mut values = vec![self.value()?];
            while self.eat("OR") {
                values.push(self.value()?);
            }
            if !self.eat(")") {
                return Err(self.error("expected `)` after the values"));
            }
            values
        } else {
            vec![self.value()?]
        };
        Ok(Expr::Match { key, values })
    }

    /// A bare word (`[^-*"():@,][^ ():@,]*`) or a double-quoted string.
    pub(super) fn word(&mut self) -> Result<String, String> {
        self.blanks();
        let rest = self.rest();
        if rest.starts_with('"') {
            return self.quoted();
        }
        let first = rest.chars().next();
        if first.is_none_or(|c| "-*\"():@,".contains(c) || c.is_whitespace()) {
            return Err(self.error("expected a key or value"));
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || "():@,".contains(c))
            .unwrap_or(rest.len());
        let word = rest[..end].to_string();
        self.at += end;
        Ok(word)
    }

    fn quoted(&mut self) -> Result<String, String> {
        let mut out = String::new();
        let mut chars = self.rest().char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, other)) => out.push(other),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(self.error("unterminated string"))
    }

    /// A value: a word, a quoted string or `/regexp/`.
    fn value(&mut self) -> Result<Value, String> {
        self.blanks();
        let Some(body) = self.rest().strip_prefix('/') else {
            return self.word().map(Value::Exact);
        };
        let mut escaped = false;
        let end = body.char_indices().find(|&(_, c)| {
            let closes = c == '/' && !escaped;
            escaped = c == '\\' && !escaped;
            closes
        });
        let Some((end, _)) = end else {
            return Err(self.error("unterminated /regexp/"));
        };
        let pattern = body[..end].replace("\\/", "/");
        let re = Regex::new(&pattern).map_err(|e| self.error(&format!("bad regexp: {e}")))?;
        self.at += end + 2;
        Ok(Value::Pattern(re))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, RunBuilder};

    fn keeps(filter: &str, name: &str, unit: &str) -> bool {
        let mut builder = RunBuilder::default();
        let at = builder.benchmark_in(name, Some("hash/crc32"), &[], BenchName::parse_go);
        builder.record(at, unit, unit, 1.0);
        let benches = builder.finish();
        let config = [ConfigEntry {
            key: "goos".into(),
            value: "linux".into(),
        }];
        let subject = Subject {
            bench: &benches[0],
            unit,
            file: "new.txt",
            config: &config,
        };
        Filter::parse(filter).unwrap().keeps(&subject)
    }

    /// The keys and forms of benchproc/syntax's documentation, on benchstat's crc testdata
    /// names.
    #[test]
    fn terms_keys_and_combinations_match_as_benchstat_documents() {
        let name = "BenchmarkCRC32/poly=Koopman/size=4KB/align=0-8";
        for (filter, kept) in [
            ("*", true),
            (".name:CRC32", true),
            (".name:CRC", false),
            (".fullname:CRC32/poly=Koopman/size=4KB/align=0-8", true),
            ("/size:4KB", true),
            ("/size:(512 OR 4KB)", true),
            ("/size:/^[0-9]+$/", false),
            ("/align:0 /poly:Koopman", true),
            ("/align:0 AND -/poly:Koopman", false),
            ("/align:1 OR /poly:Koopman", true),
            ("-(/align:1 OR /poly:IEEE)", true),
            ("/gomaxprocs:8", true),
            ("/missing:\"\"", true),
            ("pkg:hash/crc32 goos:linux", true),
            (".file:new.txt", true),
            (".unit:ns/op", true),
            (".unit:B/op", false),
            (".unit:sec/op", true),
            ("/poly:(IEEE OR Koopman)", true),
            ("/poly:ORDER", false),
            ("\".name\":\"CRC32\"", true),
        ] {
            assert_eq!(keeps(filter, name, "ns/op"), kept, "{filter}");
        }
    }

    proptest::proptest! {
        /// Any text is a filter or an error saying where, never a panic (`日` once sliced
        /// mid-character).
        #[test]
        fn any_text_parses_or_is_refused(text in "[ -~日é]{0,24}") {
            let _ = Filter::parse(&text);
            let _ = crate::spec::projection::Projection::parse(&text);
        }
    }

    #[test]
    fn bad_filters_say_where() {
        for (filter, said) in [
            ("/size", "expected `:` after key `/size` at column 6"),
            ("(/size:1", "expected `)`"),
            ("/size:/[/", "bad regexp"),
            ("/size:/abc", "unterminated /regexp/"),
            (".name:\"x", "unterminated string"),
            (".name:x )", "unexpected `)`"),
            (".name:x 日", "expected `:` after key `日`"),
            // 15,000 parentheses or minus signs once overflowed the stack (SIGABRT).
            (
                &"(".repeat(15_000),
                "nested more than 200 deep at column 202",
            ),
            (
                &format!("{}.name:x", "-".repeat(30_000)),
                "nested more than 200 deep",
            ),
        ] {
            let error = Filter::parse(filter).unwrap_err();
            assert!(error.contains(said), "{filter}: {error}");
        }
    }
}
