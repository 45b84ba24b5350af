//! Stage-share attribution: how much of each composite benchmark is the measured part.

use crate::error::{Error, Result};
use crate::model::{BenchName, Benchmark};
use crate::spec::suite::AttributionSpec;
use globset::{Candidate, Glob, GlobMatcher, GlobSetBuilder};
use rustc_hash::FxHashMap;

/// A benchmark-name glob.
#[derive(Clone, Debug)]
pub struct Pattern {
    pub glob: String,
    compiled: Glob,
    matcher: GlobMatcher,
}

/// The forms of a benchmark's name a pattern is tried on, as [`Pattern::matches`] says.
struct NameForms<'a> {
    path: Candidate<'a>,
    short: Candidate<'a>,
    full: &'a str,
}

impl NameForms<'_> {
    /// `name`'s forms, made once for all the patterns `tried` on them (a table has 100,000
    /// rows, and each pattern made its own before).
    fn with<T>(name: &BenchName, tried: impl FnOnce(&NameForms) -> T) -> T {
        let (path, short) = (name.joined_path(), name.short_name());
        tried(&NameForms {
            path: Candidate::new(path.as_ref() as &str),
            short: Candidate::new(short.as_ref() as &str),
            full: &name.full_name,
        })
    }
}

impl Pattern {
    pub fn new(glob: &str) -> Result<Pattern> {
        let compiled = Glob::new(glob)
            .map_err(|e| Error::Input(format!("bad benchmark pattern `{glob}`: {e}")))?;
        Ok(Pattern {
            glob: glob.to_string(),
            matcher: compiled.compile_matcher(),
            compiled,
        })
    }

    /// Matches the name without GOMAXPROCS suffix and variant, or just its part below the
    /// top-level benchmark, so both `*E2E*` and `3_E2E-InputDelay` work; or the full name
    /// written out as the harness printed it (`BenchmarkEncode/small-8`, pasted from `go
    /// test`), as [`Pattern::matching_each`] takes it.
    pub fn matches(&self, name: &BenchName) -> bool {
        NameForms::with(name, |forms| self.matches_forms(forms))
    }

    /// As a role names a benchmark: a glob without `/` is tried on the benchmark's own name
    /// (its last path element, as lat_bench.go's `BaseName`), never on its parent's, so
    /// `*E2E*InputDelay*` is not `BenchmarkE2E/2_InputDelay-Without-Client`; a glob with `/`
    /// on the whole name as [`Pattern::matches`] does.
    pub fn names_own(&self, name: &BenchName) -> bool {
        if self.glob.contains('/') || self.glob == name.full_name {
            return self.matches(name);
        }
        let own = name.path.last().map_or(name.name.as_str(), String::as_str);
        self.matcher.is_match(own)
            || (name.path.len() == 1 && self.matcher.is_match(name.short_name().as_ref()))
    }

    /// The full names of the benchmarks of `members` this pattern names as a role does.
    pub fn naming<'a>(&self, members: &[&'a Benchmark]) -> Vec<&'a str> {
        members
            .iter()
            .filter(|b| self.names_own(&b.name))
            .map(|b| b.name.full_name.as_str())
            .collect()
    }

    fn matches_forms(&self, forms: &NameForms) -> bool {
        self.matcher.is_match_candidate(&forms.path)
            || self.matcher.is_match_candidate(&forms.short)
            || self.glob == forms.full
    }

    /// For each of `patterns`, in order, the benchmarks it matches as [`Pattern::matches`]
    /// does or whose full name it writes out. Every name is tried against all the patterns at
    /// once: a targets file that names thousands of benchmarks one by one costs one pass over
    /// the benchmarks, not one per pattern.
    pub fn matching_each<'a>(
        patterns: &[&Pattern],
        benchmarks: impl Iterator<Item = &'a Benchmark>,
    ) -> Result<Vec<Vec<&'a Benchmark>>> {
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            set.add(pattern.compiled.clone());
        }
        let set = set
            .build()
            .map_err(|e| Error::Input(format!("benchmark patterns: {e}")))?;
        let mut by_full_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, pattern) in patterns.iter().enumerate() {
            by_full_name.entry(&pattern.glob).or_default().push(i);
        }
        let mut found = vec![Vec::new(); patterns.len()];
        let (mut hits, mut more) = (Vec::new(), Vec::new());
        for bench in benchmarks {
            NameForms::with(&bench.name, |forms| {
                set.matches_candidate_into(&forms.path, &mut hits);
                set.matches_candidate_into(&forms.short, &mut more);
                hits.append(&mut more);
                hits.extend(by_full_name.get(forms.full).into_iter().flatten());
            });
            hits.sort_unstable();
            hits.dedup();
            for &i in &hits {
                found[i].push(bench);
            }
        }
        Ok(found)
    }
}

/// A benchmark's role in a pipeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    Part,
    Rest,
    /// Contains the part this many times, plus the rest.
    Composite(f64),
}

#[derive(Clone, Debug)]
pub struct Attribution {
    pub name: String,
    pub part_label: String,
    pub rest_label: String,
    part: Pattern,
    rest: Pattern,
    pub baseline: Option<(Pattern, String)>,
    composites: Vec<(Pattern, f64)>,
}

/// One row's split: (part %, rest %).
pub type Shares = (f64, f64);

impl Attribution {
    pub fn compile(spec: &AttributionSpec) -> Result<Attribution> {
        let baseline = match &spec.baseline {
            Some(role) => Some((Pattern::new(&role.bench)?, role.label.clone())),
            None => None,
        };
        Ok(Attribution {
            name: spec.name.clone(),
            part_label: spec.part.label.clone(),
            rest_label: spec.rest.label.clone(),
            part: Pattern::new(&spec.part.bench)?,
            rest: Pattern::new(&spec.rest.bench)?,
            baseline,
            composites: spec
                .composite
                .iter()
                .map(|c| Ok((Pattern::new(&c.bench)?, c.parts)))
                .collect::<Result<_>>()?,
        })
    }

    /// The role whose pattern names the benchmark's own name; the part and rest roles take
    /// precedence (a client write "without client" is the part).
    pub fn role_of(&self, name: &BenchName) -> Option<Role> {
        if self.part.names_own(name) {
            Some(Role::Part)
        } else if self.rest.names_own(name) {
            Some(Role::Rest)
        } else {
            self.composites
                .iter()
                .find(|(p, _)| p.names_own(name))
                .map(|(_, n)| Role::Composite(*n))
        }
    }

    /// The roles whose one value every row is divided by, the part and the baseline, each
    /// played by one benchmark of `members`: two are an error naming both, never the first.
    /// (Rests and composites are shares of their own rows; several may play them.)
    pub fn check_unique(&self, members: &[&Benchmark], within: &str) -> Result<()> {
        let mut roles = vec![(&self.part, self.part_label.as_str())];
        roles.extend(self.baseline.iter().map(|(p, label)| (p, label.as_str())));
        for (pattern, label) in roles {
            let playing = pattern.naming(members);
            if playing.len() > 1 {
                return Err(Error::Input(format!(
                    "{}: role {label} (`{}`) is played by {} benchmarks{within} ({}): give a \
                     suite file whose [attribution] names one",
                    self.name,
                    pattern.glob,
                    playing.len(),
                    playing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Whether a preset fits: the part and at least one other role are present.
    pub fn fits(&self, benchmarks: &[Benchmark]) -> bool {
        // Nearly every run has no part, which one pattern tells faster than all of them.
        if !benchmarks.iter().any(|b| self.part.names_own(&b.name)) {
            return false;
        }
        let roles = benchmarks.iter().map(|b| self.role_of(&b.name));
        let (mut part, mut other) = (false, false);
        for role in roles.flatten() {
            part |= role == Role::Part;
            other |= role != Role::Part;
        }
        part && other
    }

    /// The role patterns that match none of `names`, for the "missing roles" note.
    pub fn missing_roles(&self, names: &[&BenchName]) -> Vec<String> {
        let mut patterns = vec![
            (&self.part, self.part_label.as_str()),
            (&self.rest, self.rest_label.as_str()),
        ];
        patterns.extend(self.composites.iter().map(|(p, _)| (p, "composite")));
        patterns
            .into_iter()
            .filter(|(p, _)| !names.iter().any(|n| p.names_own(n)))
            .map(|(p, label)| format!("{label} (`{}`)", p.glob))
            .collect()
    }

    /// Splits every row given its role and value. `part` is the value of the part row.
    /// A composite row's part share is `parts × part / value`; the rest is the remainder.
    pub fn shares(role: Option<Role>, value: Option<f64>, part: Option<f64>) -> Option<Shares> {
        match role? {
            Role::Part => Some((100.0, 0.0)),
            Role::Rest => Some((0.0, 100.0)),
            Role::Composite(times) => {
                let (value, part) = (value?, part?);
                if value <= 0.0 {
                    return None;
                }
                let share = times * part / value * 100.0;
                Some((share, 100.0 - share))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::suite::input_latency_preset;

    fn name(s: &str) -> BenchName {
        BenchName::parse_go(s)
    }

    #[test]
    fn all_patterns_at_once_match_as_each_alone_would() {
        let names = [
            "BenchmarkA-8",
            "BenchmarkA/size=64-8",
            "BenchmarkB/1_E2E-InputDelay-8",
            "BenchmarkAB-4",
            "BM_Replay/window:8",
        ];
        let benchmarks: Vec<Benchmark> = names
            .iter()
            .map(|n| {
                let mut builder = crate::model::RunBuilder::default();
                builder.benchmark(n, None, BenchName::parse_go);
                builder.finish().remove(0)
            })
            .collect();
        let globs = [
            "A",
            "BenchmarkA-8",
            "A*",
            "*E2E*",
            "1_E2E-InputDelay",
            "BM_Replay/*",
            "nothing",
            "A",
        ];
        let patterns: Vec<Pattern> = globs.iter().map(|g| Pattern::new(g).unwrap()).collect();
        let each: Vec<&Pattern> = patterns.iter().collect();
        let together = Pattern::matching_each(&each, benchmarks.iter()).unwrap();
        for (pattern, found) in patterns.iter().zip(&together) {
            let alone: Vec<&str> = benchmarks
                .iter()
                .filter(|b| pattern.matches(&b.name) || pattern.glob == b.name.full_name)
                .map(|b| b.name.full_name.as_str())
                .collect();
            let found: Vec<&str> = found.iter().map(|b| b.name.full_name.as_str()).collect();
            assert_eq!(found, alone, "{}", pattern.glob);
        }
        let counts: Vec<usize> = together.iter().map(Vec::len).collect();
        assert_eq!(counts, [1, 1, 2, 1, 1, 1, 0, 1]);
    }

    fn run_of(names: &[&str]) -> Vec<Benchmark> {
        let mut builder = crate::model::RunBuilder::default();
        for n in names {
            builder.benchmark(n, None, BenchName::parse_go);
        }
        builder.finish()
    }

    #[test]
    fn a_preset_fits_with_its_part_and_another_role_as_role_of_gives_them() {
        let a = Attribution::compile(&input_latency_preset()).unwrap();
        let fits = |names: &[&str]| {
            let run = run_of(names);
            let by_roles = run.iter().any(|b| a.role_of(&b.name) == Some(Role::Part))
                && run
                    .iter()
                    .any(|b| a.role_of(&b.name).is_some_and(|r| r != Role::Part));
            let fits = a.fits(&run);
            assert_eq!(fits, by_roles, "{names:?}");
            fits
        };
        assert!(fits(&["B/1_Go-Client-Write-8", "B/3_E2E-InputDelay-8"]));
        assert!(fits(&[
            "B/2_InputDelay-Without-Client-8",
            "B/1_Go-Client-Write-8"
        ]));
        // One name the part and the rest both match is the part alone.
        assert!(!fits(&["B/1_Client-Write-Without-Client-8"]));
        assert!(!fits(&["B/1_Go-Client-Write-8", "BenchmarkOther-8"]));
        assert!(!fits(&["B/2_InputDelay-Without-Client-8"]));
        assert!(!fits(&[]));
    }

    #[test]
    fn preset_roles() {
        let a = Attribution::compile(&input_latency_preset()).unwrap();
        assert_eq!(a.role_of(&name("B/1_Go-Client-Write-8")), Some(Role::Part));
        assert_eq!(
            a.role_of(&name("B/2_InputDelay-Without-Client-8")),
            Some(Role::Rest)
        );
        assert_eq!(
            a.role_of(&name("B/3_E2E-InputDelay-8")),
            Some(Role::Composite(1.0))
        );
        assert_eq!(
            a.role_of(&name("B/4_E2E-PressAndRelease_(ENC)-8")),
            Some(Role::Composite(2.0))
        );
        assert_eq!(a.role_of(&name("BenchmarkOther")), None);
    }

    #[test]
    fn shares_follow_the_reference_arithmetic() {
        let (p, r) =
            Attribution::shares(Some(Role::Composite(2.0)), Some(184870.0), Some(10668.0)).unwrap();
        assert!((p - 11.541083).abs() < 1e-5);
        assert!((p + r - 100.0).abs() < 1e-12);
        assert_eq!(
            Attribution::shares(Some(Role::Part), None, None),
            Some((100.0, 0.0))
        );
        assert_eq!(
            Attribution::shares(Some(Role::Composite(1.0)), Some(5.0), None),
            None
        );
        assert_eq!(Attribution::shares(None, Some(5.0), Some(1.0)), None);
    }

    #[test]
    fn missing_roles_are_named() {
        let a = Attribution::compile(&input_latency_preset()).unwrap();
        let n = name("B/1_Go-Client-Write");
        let missing = a.missing_roles(&[&n]);
        assert_eq!(missing.len(), 3);
        assert!(missing[0].contains("*Without-Client*"));
    }

    #[test]
    fn bad_glob_is_an_input_error() {
        let err = Pattern::new("a[").unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }
}
