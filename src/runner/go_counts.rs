//! `go --measure instructions`: each benchmark's own loop counted per iteration. The package's
//! test binary is built once (`go test -c`); each benchmark runs alone under cachegrind,
//! which counts every instruction of the process, at 2 iterations and at 2 + Δ; the
//! difference over Δ is one iteration, so that process start-up, flag parsing, Go's first
//! call (b.N = 1) and the collections `testing` asks for all cancel. Δ is found by counting:
//! enough iterations that the two runs differ by [`WORK`] instructions, against which what a
//! run does once varies by little. The whole process is counted, not the benchmark's function
//! alone: callgrind follows calls by the stack pointer, and Go's switches to the scheduler's
//! stack and its stack copies read to it as returns, which turned its counting off part-way
//! through a benchmark. Go runs with GOMAXPROCS=1, GOGC=off (GOMEMLIMIT=1GiB) and
//! GODEBUG=asyncpreemptoff=1: no other goroutine, collection or preemption adds work.

use super::counts::{Count, Scope, enough, per_iteration, settings};
use super::launch::Reach;
use super::output::spinner;
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::model::{Assume, Metric, Unit, vocab};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The iterations of the run a count differs from (beside Go's first call, b.N = 1, which
/// both runs make).
const FEWER: u64 = 2;
/// What a count's two runs differ by, at least: what a run does once (start-up, the
/// collections `testing` asks for before each benchmark, the page allocator's searches)
/// varies run to run by up to about 10^5 instructions, half the 0.1 % floor of this.
const WORK: u64 = 200_000_000;
/// The most iterations a count's runs may differ by: an iteration that costs less than a
/// fifth of an instruction is nothing a count can tell.
const MOST: u64 = 1_000_000_000;
/// Go's settings for counting: one thread, no collector below 1 GiB (which bounds the memory
/// of a long run), no asynchronous preemption, and math/rand's top-level functions seeded
/// alike (Go's map seeds and crypto/rand cannot be).
pub const GO_ENV: [(&str, &str); 4] = [
    ("GOMAXPROCS", "1"),
    ("GOGC", "off"),
    ("GOMEMLIMIT", "1GiB"),
    ("GODEBUG", "asyncpreemptoff=1,randautoseed=0"),
];

/// How Go's counts are taken, as the run's environment records it.
fn how() -> String {
    format!(
        "cachegrind on the test binary, one iteration as (the count at {FEWER} + Δ \
         iterations − at {FEWER}) / Δ, Δ such that they differ by {WORK} or more; \
         GOMAXPROCS=1 GOGC=off GOMEMLIMIT=1GiB GODEBUG=asyncpreemptoff=1,randautoseed=0"
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
    /// The binary's own flags of the timed run (`-test.short`, a package's `-size 64`).
    pub flags: Vec<String>,
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
        let (at, of) = (i + 1, benches.len());
        bar.set_message(format!("counting {} ({at}/{of})", bench.shown));
        let run = |n: u64| counted(reach, built, bench, n);
        let (apart, first) = iterations_apart(&run, reach, &bench.shown)?;
        let mut values = vec![first];
        while !enough(&values, asked) {
            let pair = (run(FEWER)?, run(FEWER + apart)?);
            if reach.interrupt.requested() {
                return Err(Error::Interrupted);
            }
            values.push(per_iteration(pair, apart, IN_BINARY, &bench.shown)?);
        }
        counts.push(values);
    }
    bar.finish_and_clear();
    Ok(counts)
}

/// Where Go's counts are taken, as messages say.
const IN_BINARY: &str = "in the test binary";

/// The iterations a count's two runs differ by, and the count per iteration at it: from one
/// more iteration up, a hundredfold while the difference is lost in what a run does once,
/// then as many as the difference so far says reach [`WORK`].
fn iterations_apart(
    run: &dyn Fn(u64) -> Result<u64>,
    reach: Reach,
    what: &str,
) -> Result<(u64, f64)> {
    let fewer = run(FEWER)?;
    let mut apart = 1;
    loop {
        let more = run(FEWER + apart)?;
        if reach.interrupt.requested() {
            return Err(Error::Interrupted);
        }
        let grew = more.saturating_sub(fewer);
        if grew >= WORK {
            return Ok((apart, per_iteration((fewer, more), apart, IN_BINARY, what)?));
        }
        if apart >= MOST {
            return Err(Error::Peer(format!(
                "{what}: {apart} more iterations counted {grew} more instructions {IN_BINARY}: \
                 too little to count per iteration"
            )));
        }
        apart = next_apart(apart, grew);
    }
}

/// The next difference in iterations to try, after `apart` iterations counted `grew` more.
fn next_apart(apart: u64, grew: u64) -> u64 {
    let next = match grew < WORK / 100 {
        true => apart.saturating_mul(100),
        // A quarter more than the estimate, so that one more try is usually enough.
        false => (apart as f64 * WORK as f64 * 1.25 / grew as f64).ceil() as u64,
    };
    next.clamp(apart + 1, MOST)
}

/// One counted run of `bench` at `n` iterations: the instructions of the whole test binary,
/// once it printed the benchmark's result at `n` iterations (else no benchmark of that name
/// ran, exit 2).
fn counted(reach: Reach, built: &Built, bench: &Counting, n: u64) -> Result<u64> {
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
    let args = [args, built.flags.clone()].concat();
    let count = Count {
        program: &built.binary.display().to_string(),
        args: &args,
        dir: built.dir.as_deref(),
        env: &GO_ENV,
        scope: &Scope::Process,
        printed: true,
    };
    let counted = reach.harness.counted(&count, &bench.shown)?;
    let name = bench.path.join("/");
    if !ran(&counted.printed, &name, n) {
        return Err(Error::Input(format!(
            "{}: `{}` printed no result for `{name}` at {n} iterations, so no benchmark of \
             that name ran; the last of what it printed:\n{}",
            bench.shown,
            count.line(),
            crate::error::visible_lines(&counted.printed)
        )));
    }
    Ok(counted.instructions)
}

/// Whether Go printed `name`'s result line at `n` iterations (`BenchmarkMap \t 12\t …`).
fn ran(printed: &[String], name: &str, n: u64) -> bool {
    let n = n.to_string();
    printed.iter().any(|line| {
        let mut fields = line.split_whitespace();
        fields.next() == Some(name) && fields.next() == Some(n.as_str())
    })
}

/// Builds the test binary of each package of `benches` into `scratch` (`go test -c`, in
/// `dir`, with the build flags of `extra`, what followed the package on the timed run's
/// line), and finds the directory its tests run in.
pub fn build(
    reach: Reach,
    benches: &[Counting],
    (dir, extra): (Option<&Path>, &[String]),
    scratch: &Path,
) -> Result<Vec<Built>> {
    let flags = super::go_flags::split(extra, true);
    let mut built: Vec<Built> = Vec::new();
    for bench in benches {
        if built.iter().any(|b| b.package == bench.package) {
            continue;
        }
        let package = bench.package.clone().unwrap_or_else(|| ".".into());
        let binary = scratch.join(format!("{}.test", built.len()));
        let mut args: Vec<String> = ["test", "-c"].map(str::to_string).to_vec();
        args.extend(flags.build.iter().cloned());
        args.extend(["-o".into(), binary.display().to_string(), package.clone()]);
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
            flags: flags.binary.clone(),
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
    fn the_iterations_apart_grow_until_the_runs_differ_by_the_work() {
        // Lost in what a run does once: a hundredfold.
        assert_eq!(next_apart(1, 30_000), 100);
        // 100 iterations counted 10^7 more: 2,500 to reach 2 × 10^8 with a quarter to spare.
        assert_eq!(next_apart(100, 10_000_000), 2_500);
        // Never fewer than one more, never more than the most.
        assert_eq!(next_apart(7, WORK - 1), 9);
        assert_eq!(next_apart(MOST / 10, 0), MOST);
    }

    #[test]
    fn a_benchmark_ran_when_go_printed_its_result_at_the_iterations_asked() {
        let printed = [
            "goos: linux".to_string(),
            "BenchmarkMap/size=64 \t    1002\t    306374 ns/op".to_string(),
            "PASS".to_string(),
        ];
        assert!(ran(&printed, "BenchmarkMap/size=64", 1002));
        assert!(!ran(&printed, "BenchmarkMap/size=64", 2));
        assert!(!ran(&printed, "BenchmarkMap", 1002));
    }
}
