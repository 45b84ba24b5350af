//! Benchmark names: `Benchmark_Xbox360_Delay/1_Go-Client-Write_(PLAIN)-8` split into parts.

use super::ConfigEntry;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchName {
    /// The name exactly as the harness printed it.
    pub full_name: String,
    /// Without the GOMAXPROCS suffix: the identity used to group repetitions.
    pub name: String,
    /// Sub-benchmark path, top level first, variant suffix removed.
    pub path: Vec<String>,
    /// Parameters: `procs` from the `-N` suffix, and `key=value` path elements.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub params: Vec<ConfigEntry>,
    /// A variant suffix such as `_(PLAIN)` / `_(ENC)` that newer suites append to every name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub variant: Option<String>,
}

impl BenchName {
    /// Splits a Go-style benchmark name.
    pub fn parse_go(full_name: &str) -> Self {
        let (name, procs) = split_procs(full_name);
        let (stem, variant) = split_variant(name);
        let path: Vec<String> = stem.split('/').map(str::to_string).collect();
        let mut params = path_params(&path, '=');
        if let Some(procs) = procs {
            params.push(ConfigEntry {
                key: "procs".to_string(),
                value: procs.to_string(),
            });
        }
        BenchName {
            full_name: full_name.to_string(),
            name: name.to_string(),
            path,
            params,
            variant: variant.map(str::to_string),
        }
    }

    /// Splits a slash-separated name (google/benchmark, criterion):
    /// `BM_Read/window:64/real_time/threads:2` is the family `BM_Read` with arguments;
    /// `key:value` elements (named arguments, `threads`, `min_time`, `repeats`) become
    /// parameters.
    pub fn parse_path(full_name: &str) -> Self {
        let path: Vec<String> = full_name.split('/').map(str::to_string).collect();
        let params = path_params(&path, ':');
        BenchName {
            full_name: full_name.to_string(),
            name: full_name.to_string(),
            path,
            params,
            variant: None,
        }
    }

    /// A name for a benchmark that has no structure (probes, foreign harnesses).
    pub fn plain(name: &str) -> Self {
        BenchName {
            full_name: name.to_string(),
            name: name.to_string(),
            path: vec![name.to_string()],
            params: Vec::new(),
            variant: None,
        }
    }

    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.as_str())
    }

    /// The top-level benchmark when this is a sub-benchmark.
    pub fn parent(&self) -> Option<&str> {
        (self.path.len() > 1).then(|| self.path[0].as_str())
    }

    /// The path below the top level (or the whole name for a top-level benchmark), without the
    /// `Benchmark` prefix Go requires, the variant and the GOMAXPROCS suffix.
    pub fn short_name(&self) -> Cow<'_, str> {
        match self.parent() {
            Some(_) => Cow::Owned(self.path[1..].join("/")),
            None => {
                let top = &self.path[0];
                Cow::Borrowed(
                    top.strip_prefix("Benchmark")
                        .filter(|rest| !rest.is_empty())
                        .unwrap_or(top),
                )
            }
        }
    }

    /// The path's levels joined by `/` (a top-level benchmark's is its own, not copied).
    pub fn joined_path(&self) -> Cow<'_, str> {
        match self.path.as_slice() {
            [top] => Cow::Borrowed(top),
            levels => Cow::Owned(levels.join("/")),
        }
    }
}

/// The name each of `names` is known by across runs, tools and the history store: Go's name
/// without its `-GOMAXPROCS` suffix (GOMAXPROCS is a parameter, and the environment check
/// says when two runs differ in it), unless the same benchmark is here at several GOMAXPROCS
/// (`-cpu 1,2`), where the suffix tells them apart.
pub fn identities<'a>(names: &[&'a BenchName]) -> Vec<&'a str> {
    let mut first_procs: rustc_hash::FxHashMap<&str, Option<&str>> = Default::default();
    let mut several: rustc_hash::FxHashSet<&str> = Default::default();
    for name in names {
        let procs = name.param("procs");
        let first = *first_procs.entry(&name.name).or_insert(procs);
        if first != procs {
            several.insert(&name.name);
        }
    }
    names
        .iter()
        .map(|n| match several.contains(n.name.as_str()) {
            true => n.full_name.as_str(),
            false => n.name.as_str(),
        })
        .collect()
}

/// The `key<separator>value` elements below the top of a benchmark path.
fn path_params(path: &[String], separator: char) -> Vec<ConfigEntry> {
    path.iter()
        .skip(1)
        .filter_map(|element| element.split_once(separator))
        .map(|(key, value)| ConfigEntry {
            key: key.to_string(),
            value: value.to_string(),
        })
        .collect()
}

/// `Foo-8` → (`Foo`, Some(8)); Go appends `-GOMAXPROCS` unless it is 1.
fn split_procs(full: &str) -> (&str, Option<u32>) {
    if let Some(dash) = full.rfind('-') {
        let digits = &full[dash + 1..];
        if dash > 0
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(procs) = digits.parse()
        {
            return (&full[..dash], Some(procs));
        }
    }
    (full, None)
}

/// `Write_(PLAIN)` → (`Write`, Some(`PLAIN`)).
fn split_variant(name: &str) -> (&str, Option<&str>) {
    if let Some(body) = name.strip_suffix(')')
        && let Some(open) = body.rfind("_(")
    {
        let variant = &body[open + 2..];
        if !variant.is_empty() && !variant.contains(['(', ')', '/']) {
            return (&name[..open], Some(variant));
        }
    }
    (name, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sub_benchmark_with_procs() {
        let n = BenchName::parse_go("Benchmark_Xbox360_Delay/1_Go-Client-Write-8");
        assert_eq!(n.name, "Benchmark_Xbox360_Delay/1_Go-Client-Write");
        assert_eq!(n.path, ["Benchmark_Xbox360_Delay", "1_Go-Client-Write"]);
        assert_eq!(n.param("procs"), Some("8"));
        assert_eq!(n.parent(), Some("Benchmark_Xbox360_Delay"));
        assert_eq!(n.short_name(), "1_Go-Client-Write");
        assert_eq!(n.variant, None);
    }

    #[test]
    fn splits_gbench_arguments() {
        let n = BenchName::parse_path("BM_Read/window:64/8/real_time/threads:2");
        assert_eq!(
            n.path,
            ["BM_Read", "window:64", "8", "real_time", "threads:2"]
        );
        assert_eq!(n.param("window"), Some("64"));
        assert_eq!(n.param("threads"), Some("2"));
        assert_eq!(n.parent(), Some("BM_Read"));
        assert_eq!(n.name, n.full_name);
    }

    #[test]
    fn splits_variant_and_params() {
        let n = BenchName::parse_go("BenchmarkDelay/size=64/3_E2E-InputDelay_(ENC)-16");
        assert_eq!(n.variant.as_deref(), Some("ENC"));
        assert_eq!(n.path, ["BenchmarkDelay", "size=64", "3_E2E-InputDelay"]);
        assert_eq!(n.param("size"), Some("64"));
        assert_eq!(n.param("procs"), Some("16"));
        assert_eq!(n.short_name(), "size=64/3_E2E-InputDelay");
    }

    #[test]
    fn top_level_without_procs() {
        let n = BenchName::parse_go("BenchmarkEncode");
        assert_eq!(n.name, "BenchmarkEncode");
        assert_eq!(n.params, []);
        assert_eq!(n.short_name(), "Encode");
        assert_eq!(BenchName::parse_go("Benchmark").short_name(), "Benchmark");
    }
}

/// A benchmark name as a `BENCH name:` line carries it. That format has no quoting, and its
/// name ends at the first `:` and may hold no white space, so those, `%` and every control
/// character are written `%XX` (a newline in a name would otherwise forge a second line).
pub fn bench_line_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            ':' | '%' => out.push_str(&format!("%{:02X}", c as u32)),
            c if c.is_whitespace() || c.is_control() => {
                let mut bytes = [0u8; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// A name read from a `BENCH` line: the escapes [`bench_line_name`] writes decoded; any other
/// `%` is the name's own (`copy_50%`, `50%ab`).
pub fn from_bench_line_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // Up to four escaped bytes make one character (UTF-8).
        let decoded = (1..=4).find_map(|n| {
            let bytes: Vec<u8> = (0..n)
                .map(|k| {
                    let hex = rest.get(3 * k..3 * k + 3)?.strip_prefix('%')?;
                    u8::from_str_radix(hex, 16).ok()
                })
                .collect::<Option<_>>()?;
            let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
            let escaped = matches!(c, ':' | '%') || c.is_whitespace() || c.is_control();
            escaped.then_some((c, 3 * n))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('%');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod bench_line_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_name_reads_back_from_a_bench_line(name in "\\PC*|[\\x00-\\x20:%\u{85}\u{2028}a-z]*") {
            let written = bench_line_name(&name);
            prop_assert!(!written.contains(|c: char| c == ':' || c.is_whitespace() || c.is_control()));
            prop_assert_eq!(from_bench_line_name(&written), name);
        }
    }

    #[test]
    fn a_names_own_percent_sign_stays() {
        assert_eq!(from_bench_line_name("copy_50%"), "copy_50%");
        assert_eq!(from_bench_line_name("50%ab"), "50%ab");
        assert_eq!(bench_line_name("a b\nBENCH x:"), "a%20b%0ABENCH%20x%3A");
    }
}
