//! `go --measure instructions`: each benchmark's own loop counted per iteration. The package's
//! test binary is built once (`go test -c`); each benchmark runs alone under callgrind, which
//! counts only while the benchmark's function runs, at 2 and at 12 iterations; the difference
//! over 10 is one iteration, so that process start-up, flag parsing, Go's first call (b.N = 1)
//! and one-time costs such as a stack growing all cancel. Go runs with GOMAXPROCS=1, GOGC=off
//! and GODEBUG=asyncpreemptoff=1: no other goroutine, collection or preemption adds work.

use super::counts::{Count, Scope, enough, per_iteration, settings};
use super::launch::Reach;
use super::output::spinner;
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::model::{Assume, Metric, Unit, vocab};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The two runs' iterations: their difference is what is counted.
const FEWER: u64 = 2;
const MORE: u64 = 12;
/// Go's settings for counting: one thread, no collector, no asynchronous preemption, and
/// math/rand's top-level functions seeded alike (Go's map seeds and crypto/rand cannot be).
pub const GO_ENV: [(&str, &str); 3] = [
    ("GOMAXPROCS", "1"),
    ("GOGC", "off"),
    ("GODEBUG", "asyncpreemptoff=1,randautoseed=0"),
];

/// How Go's counts are taken, as the run's environment records it.
fn how() -> String {
    format!(
        "callgrind on each benchmark's function, one iteration as ({MORE} − {FEWER} \
         iterations) / {}; GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1,randautoseed=0",
        MORE - FEWER
    )
}

/// A benchmark to count: its package (import path), its name's path (`BenchmarkParse`,
/// `size=64`), and the name the run shows.
pub struct Counting {
    pub package: Option<String>,
    pub path: Vec<String>,
    pub shown: String,
}

/// The benchmarks of `input` (a run of the same suite, timed or not) to count.
pub fn counting(input: &Input) -> Vec<Counting> {
    input
        .runs
        .iter()
        .flat_map(|r| &r.benchmarks)
        .map(|b| Counting {
            package: b.package.clone(),
            path: b.name.path.clone(),
            shown: b.name.name.clone(),
        })
        .collect()
}

/// callgrind globs of the function that holds a benchmark's loop: `*.BenchmarkParse` for a
/// benchmark, and for a sub-benchmark the closures its path nests to (`*.BenchmarkParse.func?`
/// at one level, `*.BenchmarkParse.func?.?` at two, each number of one or two digits), since Go
/// runs a sub-benchmark in a goroutine of its own, where the parent's function is not on the
/// stack. Exactly that depth: an enclosing or an inner closure would flip counting again.
fn body_globs(path: &[String]) -> Vec<String> {
    let top = path.first().map_or("", String::as_str);
    let mut globs = vec![format!("*.{top}")];
    for level in 1..path.len() {
        let closure = if level == 1 { ".func" } else { "." };
        globs = globs
            .iter()
            .flat_map(|g| [format!("{g}{closure}?"), format!("{g}{closure}??")])
            .collect();
    }
    globs
}

/// The `-test.bench` pattern that selects `path` alone: each level anchored and escaped.
pub fn only(path: &[String]) -> String {
    path.iter()
        .map(|level| format!("^{}$", regex::escape(level)))
        .collect::<Vec<_>>()
        .join("/")
}

/// A package's test binary, and the directory its tests run in (Go runs them in the
/// package's own, where `testdata` is).
pub struct Built {
    pub package: Option<String>,
    pub binary: PathBuf,
    pub dir: Option<PathBuf>,
}

/// Counts each benchmark of `benches` as many times as `asked`, or until the counts are
/// [`enough`], each by the test binary of its package: the counts per iteration, in order.
pub fn count_all(
    reach: Reach,
    binaries: &[Built],
    benches: &[Counting],
    asked: Option<u32>,
    progress: Option<&crate::env::Stream>,
) -> Result<Vec<Vec<f64>>> {
    let bar = spinner(progress, "valgrind", "counting instructions…");
    let mut counts = Vec::with_capacity(benches.len());
    for (i, bench) in benches.iter().enumerate() {
        let Some(built) = binaries.iter().find(|b| b.package == bench.package) else {
            return Err(Error::Peer(format!(
                "{}: no test binary was built for its package",
                bench.shown
            )));
        };
        let globs = body_globs(&bench.path);
        let function = globs.join("`, `");
        let scope = Scope::Function(globs);
        let mut values = Vec::new();
        while !enough(&values, asked) {
            bar.set_message(format!(
                "counting {} ({}/{})",
                bench.shown,
                i + 1,
                benches.len()
            ));
            let run = |n: u64| {
                let args: Vec<String> = [
                    "-test.run",
                    "^$",
                    "-test.bench",
                    &only(&bench.path),
                    "-test.benchtime",
                    &format!("{n}x"),
                    "-test.count",
                    "1",
                ]
                .map(str::to_string)
                .to_vec();
                let count = Count {
                    program: &built.binary.display().to_string(),
                    args: &args,
                    dir: built.dir.as_deref(),
                    env: &GO_ENV,
                    scope: &scope,
                };
                reach.harness.counted(&count, &bench.shown)
            };
            let (fewer, more) = (run(FEWER)?, run(MORE)?);
            if reach.interrupt.requested() {
                return Err(Error::Interrupted);
            }
            values.push(per_iteration(
                (fewer, more),
                MORE - FEWER,
                &function,
                &bench.shown,
            )?);
        }
        counts.push(values);
    }
    bar.finish_and_clear();
    Ok(counts)
}

/// Builds the test binary of each package of `benches` into `scratch` (`go test -c`, in
/// `dir`), and finds the directory its tests run in.
pub fn build(
    reach: Reach,
    benches: &[Counting],
    dir: Option<&Path>,
    scratch: &Path,
) -> Result<Vec<Built>> {
    let mut built: Vec<Built> = Vec::new();
    for bench in benches {
        if built.iter().any(|b| b.package == bench.package) {
            continue;
        }
        let package = bench.package.clone().unwrap_or_else(|| ".".into());
        let binary = scratch.join(format!("{}.test", built.len()));
        let mut args: Vec<String> = ["test", "-c", "-o"].map(str::to_string).to_vec();
        args.extend([binary.display().to_string(), package.clone()]);
        let mut child = reach
            .harness
            .spawn("go", &args, dir)
            .map_err(|e| Error::Environment(format!("could not start `go test -c`: {e}")))?;
        let mut said = String::new();
        if let Some(mut stderr) = child.take_stderr() {
            let _ = stderr.read_to_string(&mut said);
        }
        let status = child
            .wait()
            .map_err(|e| Error::Environment(format!("`go test -c`: {e}")))?;
        if !status.success() {
            let said: Vec<String> = said.lines().map(str::to_string).collect();
            return Err(Error::Peer(format!(
                "go {} failed ({status}): {}",
                args.join(" "),
                crate::error::visible_lines(&said)
            )));
        }
        let listed = reach
            .harness
            .output("go", &["list", "-f", "{{.Dir}}", &package])
            .map(PathBuf::from);
        built.push(Built {
            package: bench.package.clone(),
            binary,
            dir: listed.or_else(|| dir.map(Path::to_path_buf)),
        });
    }
    Ok(built)
}

/// `input` with each benchmark's counts per iteration as `instructions/op` beside what it
/// has (`keep_times`), or instead of it; the environment records how they were counted.
pub fn with_counts(
    mut input: Input,
    counts: Vec<Vec<f64>>,
    keep_times: bool,
    version: &str,
) -> Input {
    let unit = Unit::parse(vocab::INSTRUCTIONS_PER_OP);
    let benches = input.runs.iter_mut().flat_map(|r| r.benchmarks.iter_mut());
    for (bench, values) in benches.zip(counts) {
        if !keep_times {
            bench.metrics.clear();
            bench.iterations.clear();
            // Counted with GOMAXPROCS=1: no `-N` in the name.
            bench.name.full_name = bench.name.name.clone();
            bench.name.params.retain(|p| p.key != "procs");
        }
        let mut metric = Metric::new(
            vocab::INSTRUCTIONS_PER_OP,
            &unit,
            vocab::INSTRUCTIONS_PER_OP,
        );
        metric.assume = Assume::Counted;
        metric.values = values;
        bench.metrics.push(metric);
    }
    for run in &mut input.runs {
        run.environment.toolchains.extend(settings(version, &how()));
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_benchmark_is_counted_in_the_closures_at_its_depth() {
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(body_globs(&path(&["BenchmarkA"])), ["*.BenchmarkA"]);
        assert_eq!(
            body_globs(&path(&["BenchmarkA", "size=64"])),
            ["*.BenchmarkA.func?", "*.BenchmarkA.func??"]
        );
        assert_eq!(
            body_globs(&path(&["BenchmarkA", "x", "y"])),
            [
                "*.BenchmarkA.func?.?",
                "*.BenchmarkA.func?.??",
                "*.BenchmarkA.func??.?",
                "*.BenchmarkA.func??.??"
            ]
        );
    }
}
