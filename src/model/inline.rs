//! Lists of numbers written on one line even inside pretty-printed JSON: a run can hold
//! millions of repetitions, and one number per line would multiply the output and its writing
//! time. Writing the numbers is most of the time a large report takes, so a report can have
//! its runs' lists written on every core first ([`with_lists_written`]); the document then
//! takes them as written.

use super::Run;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::value::RawValue;
use std::cell::RefCell;

/// Lists shorter than this are written where they stand.
const WORTH_A_THREAD: usize = 4096;

thread_local! {
    /// Lists already written, by the address and length of their numbers.
    static WRITTEN: RefCell<FxHashMap<(usize, usize), Box<RawValue>>> = RefCell::default();
}

/// `serialize_with` for a list of counts: on one line.
pub(super) fn inline_array<T: Serialize, S: serde::Serializer>(
    items: &[T],
    s: S,
) -> Result<S::Ok, S::Error> {
    serde_json::value::to_raw_value(items)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// `serialize_with` for a list of values: on one line, as written beforehand when it was.
pub(super) fn inline_values<S: serde::Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
    let key = (values.as_ptr() as usize, values.len());
    let written = WRITTEN.with(|w| w.borrow_mut().remove(&key));
    match written {
        Some(raw) => raw.serialize(s),
        None => write_values(values)
            .map_err(serde::ser::Error::custom)?
            .serialize(s),
    }
}

fn write_values(values: &[f64]) -> serde_json::Result<Box<RawValue>> {
    serde_json::value::to_raw_value(values)
}

/// Runs `write` (which serializes `runs` on this thread) with the runs' long lists of numbers
/// written beforehand, on every core.
pub fn with_lists_written<R>(runs: &[Run], write: impl FnOnce() -> R) -> R {
    let lists: Vec<(usize, usize, &[f64])> = runs
        .iter()
        .flat_map(|r| &r.benchmarks)
        .flat_map(|b| &b.metrics)
        .map(|m| m.values.as_slice())
        .filter(|v| v.len() >= WORTH_A_THREAD)
        .map(|v| (v.as_ptr() as usize, v.len(), v))
        .collect();
    if lists.len() < 2 {
        return write();
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = lists.len().div_ceil(cores);
    let written: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = lists
            .chunks(per_thread)
            .map(|lists| {
                scope.spawn(move || {
                    lists
                        .iter()
                        .filter_map(|&(at, len, v)| Some(((at, len), write_values(v).ok()?)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_default())
            .collect()
    });
    WRITTEN.with(|w| w.borrow_mut().extend(written));
    let result = write();
    // Whatever `write` did not take (it failed part-way) is not kept for a later document.
    WRITTEN.with(|w| w.borrow_mut().clear());
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, Environment, RunBuilder, Source, SourceKind, new_run};

    #[test]
    fn lists_written_beforehand_are_written_as_they_would_have_been() {
        let mut builder = RunBuilder::default();
        for b in 0..5 {
            let bench = builder.benchmark(&format!("B{b}"), None, BenchName::plain);
            // Long lists (written on threads) and a short one (written in place).
            let n = if b == 4 { 10 } else { WORTH_A_THREAD + b };
            for i in 0..n {
                builder.record(bench, "ns/op", "ns/op", 1.0 / 3.0 + (i * b) as f64);
                builder.record(bench, "B/op", "B/op", (i % 7) as f64);
            }
        }
        let source = Source {
            kind: SourceKind::File,
            format: "go".into(),
            path: None,
            command: Vec::new(),
        };
        let runs = vec![new_run(source, Environment::default(), Vec::new(), builder)];
        let plain = serde_json::to_string_pretty(&runs).unwrap();
        let (waiting, threaded) = with_lists_written(&runs, || {
            let waiting = WRITTEN.with(|w| w.borrow().len());
            (waiting, serde_json::to_string_pretty(&runs).unwrap())
        });
        assert_eq!(waiting, 8, "both lists of the four long benchmarks");
        assert_eq!(plain, threaded);
        assert!(plain.contains("\"values\": [0.3333333333333333,1.3333333333333333,"));
        WRITTEN.with(|w| assert!(w.borrow().is_empty(), "nothing is kept after"));
    }
}
