//! The runs' benchmarks, most of a large document, written on every core ahead of the rest of
//! it and taken in order: the document is written first without them (a few KB), and each run's
//! empty `"benchmarks": []` is filled in as the text is written out. Memory holds a few
//! benchmarks' text at a time, not the whole document.

use crate::model::{Benchmark, Run};
use serde::Serialize;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, sync_channel};

/// Where a run's benchmarks go in the document written without them: the field at the runs'
/// indentation (document, `runs` array, run object). JSON strings hold no raw newline, so only
/// the field itself can start a line this way, and the runs come before anything else that
/// could.
const EMPTY_BENCHMARKS: &[u8] = b"\n      \"benchmarks\": [";
const BENCHMARK_INDENT: &[u8] = b"        ";
const CLOSING_INDENT: &[u8] = b"\n      ";

/// Numbers in a document below which its benchmarks are written on this thread alone: starting
/// threads would cost more than they save.
const WORTH_THREADS: usize = 64 << 10;

/// Writes `shell` (the document, whose runs are `runs` without their benchmarks) to `out` with
/// each run's benchmarks in place.
pub(super) fn write_filled(shell: &[u8], runs: &[Run], out: &mut dyn Write) -> io::Result<()> {
    let benchmarks: Vec<&Benchmark> = runs.iter().flat_map(|r| &r.benchmarks).collect();
    let numbers: usize = benchmarks
        .iter()
        .flat_map(|b| &b.metrics)
        .map(|m| m.values.len())
        .sum();
    let writers = if numbers < WORTH_THREADS {
        0
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    };
    std::thread::scope(|scope| {
        let written: Vec<Receiver<io::Result<Vec<u8>>>> = (0..writers)
            .map(|writer| {
                // One written benchmark waiting per writer: a few in memory at a time.
                let (send, receive) = sync_channel(1);
                let benchmarks = &benchmarks;
                scope.spawn(move || {
                    for benchmark in benchmarks.iter().skip(writer).step_by(writers) {
                        // The document stopped taking them (it failed): nothing more to do.
                        if send.send(write_benchmark(benchmark)).is_err() {
                            break;
                        }
                    }
                });
                receive
            })
            .collect();
        let mut next = benchmarks.iter().enumerate().map(|(at, benchmark)| {
            match written.get(at % writers.max(1)) {
                // A writer that stopped early panicked, which the scope passes on.
                Some(writer) => writer.recv().unwrap_or_else(|_| write_benchmark(benchmark)),
                None => write_benchmark(benchmark),
            }
        });
        let mut rest = shell;
        for run in runs {
            let at = memchr::memmem::find(rest, EMPTY_BENCHMARKS).ok_or_else(|| {
                io::Error::other("the JSON document has no place for a run's benchmarks")
            })? + EMPTY_BENCHMARKS.len();
            out.write_all(&rest[..at])?;
            rest = &rest[at..];
            for (i, text) in next.by_ref().take(run.benchmarks.len()).enumerate() {
                out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
                out.write_all(BENCHMARK_INDENT)?;
                out.write_all(&text?)?;
            }
            if !run.benchmarks.is_empty() {
                out.write_all(CLOSING_INDENT)?;
            }
        }
        out.write_all(rest)
    })
}

/// One benchmark as the pretty-printed document holds it, at its indentation there.
fn write_benchmark(benchmark: &Benchmark) -> io::Result<Vec<u8>> {
    // Room for the numbers' text, which is most of it: growing a long buffer copies it.
    let numbers: usize = benchmark
        .metrics
        .iter()
        .map(|m| m.values.len())
        .sum::<usize>()
        + benchmark.iterations.len();
    let mut text = Indented(Vec::with_capacity(numbers * 12 + 4096));
    benchmark.serialize(&mut serde_json::Serializer::pretty(&mut text))?;
    Ok(text.0)
}

/// A writer that indents every line after the first by [`BENCHMARK_INDENT`].
struct Indented(Vec<u8>);

impl Write for Indented {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut rest = bytes;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.0.extend_from_slice(&rest[..=at]);
            self.0.extend_from_slice(BENCHMARK_INDENT);
            rest = &rest[at + 1..];
        }
        self.0.extend_from_slice(rest);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchName, Environment, RunBuilder, Source, new_run};

    /// A run of `benchmarks` benchmarks of `length + b` repetitions each, under names that hold
    /// what the document's own text looks like.
    fn run_of(benchmarks: usize, length: usize) -> Run {
        let mut builder = RunBuilder::default();
        for b in 0..benchmarks {
            let name = format!("B{b}\n      \"benchmarks\": [");
            let bench = builder.benchmark(&name, None, BenchName::plain);
            for i in 0..length + b {
                builder.record(bench, "ns/op", "ns/op", 1.0 / 3.0 + (i * b) as f64);
                builder.record(bench, "B/op", "B/op", (i % 7) as f64);
            }
        }
        let source = Source::unnamed_file("go");
        new_run(source, Environment::default(), Vec::new(), builder)
    }

    /// A document of runs, as the report's, and a string after them that looks like a place.
    #[derive(Serialize)]
    struct Document<'a> {
        runs: &'a [Run],
        after: &'a str,
    }

    const AFTER: &str = "\n      \"benchmarks\": []";

    /// The document of `runs` written without their benchmarks.
    fn shell_of(runs: &[Run]) -> Vec<u8> {
        let shells: Vec<Run> = runs.iter().map(Run::without_benchmarks).collect();
        serde_json::to_vec_pretty(&Document {
            runs: &shells,
            after: AFTER,
        })
        .unwrap()
    }

    /// `runs` as the JSON report holds them, and as serde_json writes them whole.
    fn filled_and_whole(runs: &[Run]) -> (String, String) {
        let mut filled = Vec::new();
        write_filled(&shell_of(runs), runs, &mut filled).unwrap();
        let whole = serde_json::to_string_pretty(&Document { runs, after: AFTER }).unwrap();
        (String::from_utf8(filled).unwrap(), whole)
    }

    #[test]
    fn benchmarks_written_apart_are_where_serde_json_writes_them() {
        // A run of none, a small one (written on this thread), and one long enough for threads.
        let runs = [
            run_of(0, 0),
            run_of(3, 5),
            run_of(1, 0),
            run_of(9, WORTH_THREADS / 8),
        ];
        let (filled, whole) = filled_and_whole(&runs);
        assert_eq!(filled, whole);
        assert!(
            filled.contains("\"benchmarks\": []\n"),
            "an empty run stays empty"
        );
        // Without the long run, the same written on this thread alone.
        let (small, whole) = filled_and_whole(&runs[..3]);
        assert_eq!(small, whole);
    }

    /// A writer that fails after `room` bytes, as a full disk or a closed pipe does.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.room < bytes.len() {
                return Err(io::Error::other("no room"));
            }
            self.room -= bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_writer_stops_the_benchmark_writers() {
        // Many more benchmarks than can wait: the writers are blocked when the document fails.
        let runs = [run_of(64, WORTH_THREADS / 32)];
        let shell = shell_of(&runs);
        let (sent, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let failed = write_filled(&shell, &runs, &mut Full { room: 100_000 });
            let _ = sent.send(failed.map_err(|e| e.to_string()));
        });
        let waited = ended.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(waited, Ok(Err("no room".to_string())));
    }
}
