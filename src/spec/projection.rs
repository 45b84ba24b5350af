//! benchstat's projections (`-table`, `-row`, `-col`), with the keys and sort orders of
//! golang.org/x/perf's benchproc: which table, row and column a result goes to.
//!
//! A projection is keys separated by commas or spaces, each optionally with an order:
//! `/size@num`, `.name@alpha`, `/poly@(Koopman IEEE)` (a fixed order, which also drops the
//! results whose value is not listed). Keys are those of [`super::filter`] without `.unit`,
//! plus `.config`, all file configuration keys. Where keys overlap, the more specific one
//! wins: `-col /poly` takes `/poly=…` out of `.fullname`, `-table goos` takes `goos` out of
//! `.config`, and `--ignore` keys leave both.

use super::filter::{Parser, Subject, extract, split_procs};
use crate::model::{Benchmark, ConfigEntry};
use std::cmp::Ordering;

/// One parsed projection (`-row /size@num,.name`).
#[derive(Clone, Debug)]
pub struct Projection {
    fields: Vec<Field>,
}

#[derive(Clone, Debug)]
struct Field {
    key: String,
    order: Order,
}

/// How a field's values are sorted.
#[derive(Clone, Debug, PartialEq)]
enum Order {
    /// As first seen in the inputs (benchstat's default).
    First,
    Alpha,
    /// Numbers, with metric and IEC prefixes (`4k`, `1Mi`, `32kB`); others after them.
    Num,
    /// As listed; a value not listed drops the result.
    Fixed(Vec<String>),
}

impl Projection {
    /// Parses `text`; the error says where and what was expected.
    pub fn parse(text: &str) -> Result<Projection, String> {
        let mut parser = Parser {
            text,
            at: 0,
            depth: 0,
        };
        let mut fields = Vec::new();
        loop {
            parser.blanks();
            while parser.eat(",") {}
            if parser.rest().is_empty() {
                break;
            }
            let key = parser.word()?;
            if key == ".unit" {
                return Err(parser.error(".unit is only allowed in filters"));
            }
            let order = if parser.rest().starts_with('@') {
                parser.at += 1;
                order(&mut parser)?
            } else {
                Order::First
            };
            if key == ".config" && matches!(order, Order::Fixed(_)) {
                return Err(parser.error("fixed order not allowed for .config"));
            }
            fields.push(Field { key, order });
        }
        if fields.is_empty() {
            return Err(parser.error("expected a key"));
        }
        Ok(Projection { fields })
    }

    fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.key.as_str())
    }
}

fn order(parser: &mut Parser) -> Result<Order, String> {
    if parser.eat("(") {
        let mut values = Vec::new();
        while !parser.eat(")") {
            if parser.rest().is_empty() {
                return Err(parser.error("expected `)` after the fixed order"));
            }
            values.push(parser.word()?);
        }
        return Ok(Order::Fixed(values));
    }
    match parser.word()?.as_str() {
        "first" => Ok(Order::First),
        "alpha" => Ok(Order::Alpha),
        "num" => Ok(Order::Num),
        other => Err(parser.error(&format!(
            "unknown order `{other}` (alpha, num, first or (v1 v2 …))"
        ))),
    }
}

/// The three projections and the ignored keys, read together: each key a projection names
/// is taken out of the `.fullname` and `.config` of the others.
#[derive(Clone, Debug, Default)]
pub struct Projections {
    pub table: Option<Projection>,
    pub row: Option<Projection>,
    pub col: Option<Projection>,
    /// Keys used for nothing (`-ignore`): out of `.fullname` and `.config`, and never a
    /// reason to say that pooled results differ.
    pub ignore: Vec<String>,
}

/// A result's place: its table's, row's and column's values (each a tuple, one value per
/// field), and what the projections left out of it, by key.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub table: Vec<String>,
    pub row: Vec<String>,
    pub col: Vec<String>,
    pub residue: Vec<(String, String)>,
}

/// What the results of one input share: its label and file configuration.
pub struct Origin<'a> {
    pub file: &'a str,
    pub config: &'a [ConfigEntry],
}

const DEFAULT_ROW: &str = ".fullname";
const DEFAULT_COL: &str = ".file";

impl Projections {
    /// Whether any projection was asked for (without one, inputs are columns as given).
    pub fn any(&self) -> bool {
        self.table.is_some() || self.row.is_some() || self.col.is_some()
    }

    /// The keys of one projection, defaults included (`.fullname` rows, `.file` columns).
    pub fn keys_of(&self, which: Which) -> Vec<&str> {
        let (projection, default) = match which {
            Which::Table => (&self.table, None),
            Which::Row => (&self.row, Some(DEFAULT_ROW)),
            Which::Col => (&self.col, Some(DEFAULT_COL)),
        };
        match projection {
            Some(p) => p.keys().collect(),
            None => default.into_iter().collect(),
        }
    }

    /// Every key projected or ignored, which `.fullname` and `.config` leave out.
    fn specific(&self) -> Vec<&str> {
        let mut keys = self.keys_of(Which::Row);
        keys.extend(self.keys_of(Which::Col));
        keys.extend(self.keys_of(Which::Table));
        keys.extend(self.ignore.iter().map(String::as_str));
        keys
    }

    /// Where `bench` goes; `None` when a fixed order leaves its value out.
    pub fn place(&self, bench: &Benchmark, origin: &Origin) -> Option<Place> {
        let specific = self.specific();
        let value = |key: &str| self.value(key, bench, origin, &specific);
        let tuple = |projection: &Option<Projection>, default: Option<&str>| {
            let Some(projection) = projection else {
                return Some(default.map(value).into_iter().collect::<Vec<_>>());
            };
            (projection.fields.iter())
                .map(|field| {
                    let v = value(&field.key);
                    match &field.order {
                        Order::Fixed(listed) if !listed.contains(&v) => None,
                        _ => Some(v),
                    }
                })
                .collect::<Option<Vec<_>>>()
        };
        let mut residue = Vec::new();
        if !specific.contains(&".fullname") {
            residue.push((".fullname".to_string(), value(".fullname")));
        }
        if !specific.contains(&".file") {
            residue.push((".file".to_string(), origin.file.to_string()));
        }
        if !specific.contains(&".config") {
            for entry in file_config(bench, origin) {
                if !specific.contains(&entry.key.as_str()) {
                    residue.push((entry.key.clone(), entry.value.clone()));
                }
            }
        }
        Some(Place {
            table: tuple(&self.table, None)?,
            row: tuple(&self.row, Some(DEFAULT_ROW))?,
            col: tuple(&self.col, Some(DEFAULT_COL))?,
            residue,
        })
    }

    fn value(&self, key: &str, bench: &Benchmark, origin: &Origin, specific: &[&str]) -> String {
        match key {
            ".fullname" => full_name_without(&bench.name.full_name, specific),
            // Its keys named, as they are not in the projection's own (`goos: linux, pkg: x`).
            ".config" => (file_config(bench, origin).iter())
                .filter(|c| !specific.contains(&c.key.as_str()))
                .map(|c| format!("{}: {}", c.key, c.value))
                .collect::<Vec<_>>()
                .join(", "),
            _ => extract(
                key,
                &Subject {
                    bench,
                    unit: "",
                    file: origin.file,
                    config: origin.config,
                },
            )
            .unwrap_or_default(),
        }
    }

    /// The table projection's heading for a table's values.
    pub fn table_heading(&self, values: &[String]) -> String {
        match &self.table {
            Some(projection) => keyed_label(projection, values),
            None => String::new(),
        }
    }

    /// Sorts `values` (tuples of one projection, first seen first) as its fields order them.
    pub fn sort(&self, which: Which, values: &mut [Vec<String>]) {
        let projection = match which {
            Which::Table => &self.table,
            Which::Row => &self.row,
            Which::Col => &self.col,
        };
        let Some(projection) = projection else {
            return;
        };
        // Each field's values by where they are first seen.
        let mut firsts: Vec<rustc_hash::FxHashMap<String, usize>> =
            vec![Default::default(); projection.fields.len()];
        for (at, tuple) in values.iter().enumerate() {
            for (field, value) in firsts.iter_mut().zip(tuple) {
                field.entry(value.clone()).or_insert(at);
            }
        }
        let first_seen = |field: usize, v: &str| firsts[field].get(v).copied();
        values.sort_by(|a, b| {
            (projection.fields.iter().enumerate())
                .map(|(i, field)| match &field.order {
                    Order::First => first_seen(i, &a[i]).cmp(&first_seen(i, &b[i])),
                    Order::Alpha => a[i].cmp(&b[i]),
                    Order::Num => numeric(&a[i], &b[i]),
                    Order::Fixed(listed) => {
                        let at = |v: &str| listed.iter().position(|l| l == v);
                        at(&a[i]).cmp(&at(&b[i]))
                    }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
}

/// Which projection [`Projections::sort`] orders by.
#[derive(Clone, Copy, Debug)]
pub enum Which {
    Table,
    Row,
    Col,
}

/// A tuple as benchstat labels it: its non-empty values, space-separated.
pub fn label(values: &[String]) -> String {
    let shown: Vec<&str> = (values.iter())
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .collect();
    shown.join(" ")
}

/// A tuple with its keys (`note: hw on, goos: linux`), as benchstat heads a table.
fn keyed_label(projection: &Projection, values: &[String]) -> String {
    let shown: Vec<String> = (projection.keys().zip(values))
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| match k {
            ".config" => v.clone(),
            _ => format!("{k}: {v}"),
        })
        .collect();
    shown.join(", ")
}

/// The file configuration a result ran under: its input's, then its own lines (a Go file's
/// configuration lines between benchmarks), the later value of a key winning.
fn file_config(bench: &Benchmark, origin: &Origin) -> Vec<ConfigEntry> {
    let mut entries: Vec<ConfigEntry> = Vec::new();
    for entry in origin.config.iter().chain(&bench.config) {
        match entries.iter_mut().find(|e| e.key == entry.key) {
            Some(found) => found.value = entry.value.clone(),
            None => entries.push(entry.clone()),
        }
    }
    entries
}

/// benchstat's `.fullname` (the name without `Benchmark`) with the sub-name keys projected
/// elsewhere taken out: `/KEY=…` parts, the `-N` suffix for `/gomaxprocs`, and the base name
/// (shown as `*`) for `.name`.
fn full_name_without(full: &str, specific: &[&str]) -> String {
    let bare = full.strip_prefix("Benchmark").unwrap_or(full);
    let (stem, procs) = split_procs(bare);
    let mut parts = stem.split('/');
    let base = parts.next().unwrap_or_default();
    let mut out = match specific.contains(&".name") {
        true => "*".to_string(),
        false => base.to_string(),
    };
    for part in parts {
        let key = part.split_once('=').map(|(k, _)| k);
        if !key.is_some_and(|k| specific.contains(&format!("/{k}").as_str())) {
            out.push('/');
            out.push_str(part);
        }
    }
    if let Some(n) = procs.filter(|_| !specific.contains(&"/gomaxprocs")) {
        out.push('-');
        out.push_str(n);
    }
    out
}

/// benchproc's `num` order: numbers with an optional metric (`k`, `M`, … ) or IEC (`Ki`, `Mi`,
/// …) prefix and an optional `B`, by value; anything else after them, alphabetically.
fn numeric(a: &str, b: &str) -> Ordering {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn number(text: &str) -> Option<f64> {
    let text = text.strip_suffix(['B', 'b']).unwrap_or(text);
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &text[digits.len()..];
    let value: f64 = digits.parse().ok()?;
    let (prefix, binary) = match suffix.strip_suffix('i') {
        Some(p) => (p, true),
        None => (suffix, false),
    };
    let power = match prefix {
        "" => 0,
        "k" | "K" => 1,
        // `M` is 1000², `G` 1000³, …
        p => 2 + "MGTPEZY".find(p).filter(|_| p.len() == 1)? as i32,
    };
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    Some(value * base.powi(power))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, RunBuilder};

    fn bench(name: &str) -> Benchmark {
        let mut builder = RunBuilder::default();
        let at = builder.benchmark_in(name, Some("hash/crc32"), &[], BenchName::parse_go);
        builder.record(at, "ns/op", "ns/op", 1.0);
        builder.finish().remove(0)
    }

    fn projections(table: &str, row: &str, col: &str, ignore: &[&str]) -> Projections {
        let parse = |t: &str| (!t.is_empty()).then(|| Projection::parse(t).unwrap());
        Projections {
            table: parse(table),
            row: parse(row),
            col: parse(col),
            ignore: ignore.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn config() -> Vec<ConfigEntry> {
        [("goos", "darwin"), ("note", "hw on")]
            .map(|(key, value)| ConfigEntry {
                key: key.into(),
                value: value.into(),
            })
            .to_vec()
    }

    fn place(p: &Projections, name: &str) -> Option<Place> {
        let config = config();
        let origin = Origin {
            file: "crc-new.txt",
            config: &config,
        };
        p.place(&bench(name), &origin)
    }

    /// benchstat's documented examples: `-col /format` leaves `Encode-48` as the row, `-row
    /// .name` pools the formats (and says they vary in .fullname), `-col /poly -row /size`
    /// lays out crcSizeVsPoly.
    #[test]
    fn keys_projected_elsewhere_leave_fullname_and_config() {
        let name = "BenchmarkEncode/format=json-48";
        let p = place(&projections("", "", "/format", &[]), name).unwrap();
        assert_eq!(
            (p.row, p.col),
            (vec!["Encode-48".into()], vec!["json".into()])
        );
        assert!(p.residue.contains(&(".file".into(), "crc-new.txt".into())));
        let p = place(&projections("", ".name", "", &[]), name).unwrap();
        assert_eq!(p.row, vec!["Encode".to_string()]);
        assert!(
            p.residue
                .contains(&(".fullname".into(), "*/format=json-48".into()))
        );
        let crc = "BenchmarkCRC32/poly=Koopman/size=4kB/align=0-8";
        let p = place(&projections("", "/size", "/poly", &[]), crc).unwrap();
        assert_eq!((p.row, p.col), (vec!["4kB".into()], vec!["Koopman".into()]));
        assert!(
            p.residue
                .contains(&(".fullname".into(), "CRC32/align=0-8".into()))
        );
        let p = projections(".config", "", "", &["goos"]);
        let table = place(&p, crc).unwrap().table;
        assert_eq!(table, vec!["note: hw on".to_string()]);
        assert_eq!(p.table_heading(&table), "note: hw on");
        let p = place(&projections("note", "/gomaxprocs", ".name", &[]), crc).unwrap();
        assert_eq!(
            (p.table, p.row, p.col),
            (vec!["hw on".into()], vec!["8".into()], vec!["CRC32".into()])
        );
        assert!(
            p.residue
                .contains(&(".fullname".into(), "*/poly=Koopman/size=4kB/align=0".into()))
        );
        assert!(p.residue.contains(&("goos".into(), "darwin".into())));
    }

    #[test]
    fn a_fixed_order_filters_and_orders() {
        let p = projections("", ".name", "/format@(gob json)", &[]);
        assert!(place(&p, "BenchmarkEncode/format=xml-48").is_none());
        let mut cols = vec![vec!["json".to_string()], vec!["gob".to_string()]];
        p.sort(Which::Col, &mut cols);
        assert_eq!(
            cols,
            vec![vec!["gob".to_string()], vec!["json".to_string()]]
        );
    }

    #[test]
    fn orders_sort_as_benchproc_does() {
        let p = projections("", "/size@num", "", &[]);
        let mut rows: Vec<Vec<String>> = [
            "2M", "32kB", "15", "1Gi", "1kB", "x", "4Ki", "512", "999k", "1G",
        ]
        .map(|v| vec![v.to_string()])
        .to_vec();
        p.sort(Which::Row, &mut rows);
        let sorted: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        // benchstat's order for `-row /size@num` on these sizes (benchstat v0.0.0-2023…).
        assert_eq!(
            sorted,
            [
                "15", "512", "1kB", "4Ki", "32kB", "999k", "2M", "1G", "1Gi", "x"
            ]
        );
        let p = projections("", "/size@alpha,.name", "", &[]);
        let mut rows = vec![
            vec!["b".to_string(), "y".to_string()],
            vec!["a".to_string(), "z".to_string()],
            vec!["a".to_string(), "x".to_string()],
        ];
        p.sort(Which::Row, &mut rows);
        assert_eq!(rows[0], ["a", "z"], "first seen within a tie");
        assert_eq!(rows[2], ["b", "y"]);
    }

    #[test]
    fn bad_projections_say_where() {
        for (text, said) in [
            (".unit", ".unit is only allowed in filters"),
            ("/size@sideways", "unknown order `sideways`"),
            (".config@(a b)", "fixed order not allowed for .config"),
            ("/size@(a b", "expected `)`"),
            ("", "expected a key"),
            (" , ", "expected a key"),
        ] {
            let error = Projection::parse(text).unwrap_err();
            assert!(error.contains(said), "{text}: {error}");
        }
        let p = Projection::parse("/size@num .name,/poly@(IEEE \"Koop man\")").unwrap();
        assert_eq!(p.keys().collect::<Vec<_>>(), ["/size", ".name", "/poly"]);
        assert_eq!(
            p.fields[2].order,
            Order::Fixed(vec!["IEEE".into(), "Koop man".into()])
        );
    }
}
