//! `gbench --measure instructions`: each benchmark's function counted by callgrind, which counts
//! only while the function runs. google/benchmark 1.8 and later run exactly N iterations with
//! `--benchmark_min_time=Nx`: a run of 2 and one of 12 iterations, their difference over 10,
//! give one iteration without the function's setup. Older ones (Debian 12's 1.7.1) have no
//! such flag, and `--benchmark_min_time=0` runs a single iteration: its count holds the
//! setup before the loop too, and the report says so.

use super::counts::{Count, Scope, enough, per_iteration, settings};
use super::launch::Reach;
use super::output::spinner;
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::model::{
    Assume, BenchName, Note, RunBuilder, Source, SourceKind, new_run, timestamp, vocab,
};
use std::io::Read;

/// The two runs' iterations where the binary takes `Nx`: their difference is what is counted.
const FEWER: u64 = 2;
const MORE: u64 = 12;

/// The benchmarks a binary would run: their names, and whether it takes `Nx` iterations.
pub struct Listed {
    pub names: Vec<String>,
    pub exact_iterations: bool,
}

/// Lists what `program` runs with `filter`, asking with `--benchmark_min_time=1x` first: a
/// library that refuses it (before 1.8) is asked again without.
pub fn list(reach: Reach, program: &str, filter: Option<&str>) -> Result<Listed> {
    let ask = |exact: bool| -> Result<Option<Vec<String>>> {
        let mut args = vec!["--benchmark_list_tests=true".to_string()];
        args.extend(filter.map(|f| format!("--benchmark_filter={f}")));
        if exact {
            args.push("--benchmark_min_time=1x".into());
        }
        let (listed, succeeded) = printed_by(reach, program, &args)?;
        Ok(succeeded.then(|| {
            listed
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        }))
    };
    if let Some(names) = ask(true)? {
        // A binary with its own main() takes `1x` from 1.7.1 with a warning and runs timed
        // iterations: whether it runs exactly one is seen, not assumed.
        let exact_iterations = match names.first() {
            Some(first) => iterations_at_one(reach, program, first)? == Some(1),
            None => true,
        };
        return Ok(Listed {
            names,
            exact_iterations,
        });
    }
    match ask(false)? {
        Some(names) => Ok(Listed {
            names,
            exact_iterations: false,
        }),
        None => Err(Error::Peer(format!(
            "{program} --benchmark_list_tests=true failed: is it a google/benchmark binary?"
        ))),
    }
}

/// The arguments that run benchmark `name` alone, once, for `min_time`, its result in JSON.
fn one_run(name: &str, min_time: &str) -> Vec<String> {
    vec![
        format!("--benchmark_filter=^{}$", regex::escape(name)),
        format!("--benchmark_min_time={min_time}"),
        "--benchmark_repetitions=1".to_string(),
        "--benchmark_format=json".to_string(),
    ]
}

/// The iterations `program` runs of benchmark `name` when asked for one (`1x`), natively;
/// `None` when it printed no result.
fn iterations_at_one(reach: Reach, program: &str, name: &str) -> Result<Option<u64>> {
    let (printed, _) = printed_by(reach, program, &one_run(name, "1x"))?;
    let lines: Vec<String> = printed.lines().map(str::to_string).collect();
    Ok(iterations_in(&lines).first().copied())
}

/// What `program` with `args` printed on its standard output, and whether it succeeded.
fn printed_by(reach: Reach, program: &str, args: &[String]) -> Result<(String, bool)> {
    let mut child = reach
        .harness
        .spawn(program, args, None)
        .map_err(|e| Error::Environment(format!("could not start {program}: {e}")))?;
    let mut printed = String::new();
    if let Some(mut stdout) = child.take_stdout() {
        let _ = stdout.read_to_string(&mut printed);
    }
    let status = child.wait().map_err(|e| Error::io(program, e))?;
    Ok((printed, status.success()))
}

/// The `"iterations": N` of each result in google/benchmark's JSON.
fn iterations_in(printed: &[String]) -> Vec<u64> {
    printed
        .iter()
        .filter_map(|l| l.trim().strip_prefix("\"iterations\":"))
        .filter_map(|n| n.trim().trim_end_matches(',').parse().ok())
        .collect()
}

/// That the counted run `line` printed one result, of `iterations`: a binary that ignores
/// the iteration count asked (its own main() on 1.7.1 runs timed iterations) is never
/// trusted (exit 6).
fn ran_as_asked(printed: &[String], iterations: u64, line: &str, name: &str) -> Result<()> {
    match iterations_in(printed)[..] {
        [ran] if ran == iterations => Ok(()),
        ref ran => Err(Error::Peer(format!(
            "{name}: `{line}` was asked for {iterations} iteration(s) and ran {}: its count \
             is of other work than asked, so none is taken",
            match ran {
                [] => "none that it printed".to_string(),
                _ => ran
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        ))),
    }
}

/// The callgrind glob for the function of benchmark `name`: its first path element, a
/// template's arguments left to the wildcard (`BM_Queue<int>` is demangled
/// `void BM_Queue<int>(benchmark::State&)`), any return type too.
pub fn function_of(name: &str) -> String {
    let top = name.split('/').next().unwrap_or(name);
    match top.split_once('<') {
        Some((base, _)) => format!("*{base}<*(*"),
        None => format!("*{top}(*"),
    }
}

/// Counts each listed benchmark of `program` as many times as `asked`, or until the counts
/// are [`enough`]: per iteration where the library runs exact iterations, else one iteration
/// with its setup. A benchmark whose function is not named as it is (`->Name()`, a lambda
/// given to `RegisterBenchmark`) is counted over the whole process where iterations are
/// exact (the difference of two counts holds only iterations either way), and is left
/// uncounted otherwise; each is named in a note, and the others are counted as ever.
pub fn count_all(
    reach: Reach,
    program: &str,
    listed: &Listed,
    asked: Option<u32>,
    progress: Option<&crate::env::Stream>,
) -> Result<(Vec<Vec<f64>>, Vec<Note>)> {
    let bar = spinner(progress, program, "counting instructions…");
    let (mut counts, mut notes) = (Vec::new(), Vec::new());
    for (i, name) in listed.names.iter().enumerate() {
        let function = function_of(name);
        let mut scope = Scope::Function(vec![function.clone()]);
        let mut values = Vec::new();
        while !enough(&values, asked) {
            bar.set_message(format!(
                "counting {name} ({}/{})",
                i + 1,
                listed.names.len()
            ));
            let count = |scope: &Scope, iterations| {
                counted_once(reach, program, listed, name, scope, iterations)
            };
            let value = match listed.exact_iterations {
                true => {
                    let mut pair = (count(&scope, FEWER)?, count(&scope, MORE)?);
                    if pair.0 == 0 && values.is_empty() {
                        notes.push(Note::info(format!(
                            "{name}: no function `{function}` ran (a benchmark named with \
                             ->Name() or registered as a lambda), so it is counted over the \
                             whole process; the difference of its {MORE}x and {FEWER}x counts \
                             holds only its iterations either way"
                        )));
                        scope = Scope::Process;
                        pair = (count(&scope, FEWER)?, count(&scope, MORE)?);
                    }
                    let inside = match &scope {
                        Scope::Process => "over the whole process".to_string(),
                        Scope::Function(_) => format!("inside `{function}`"),
                    };
                    per_iteration(pair, MORE - FEWER, &inside, name)?
                }
                false => match count(&scope, 1)? {
                    0 => {
                        notes.push(Note::warning(format!(
                            "{name}: not counted: no function `{function}` ran (a benchmark \
                             named with ->Name() or registered as a lambda), and this \
                             google/benchmark (before 1.8) runs no exact iterations, so a count \
                             of the whole process would hold its start-up"
                        )));
                        break;
                    }
                    count => count as f64,
                },
            };
            if reach.interrupt.requested() {
                return Err(Error::Interrupted);
            }
            values.push(value);
        }
        counts.push(values);
    }
    bar.finish_and_clear();
    Ok((counts, notes))
}

/// One counted run of benchmark `name` for `iterations`, checked to have run as asked.
fn counted_once(
    reach: Reach,
    program: &str,
    listed: &Listed,
    name: &str,
    scope: &Scope,
    iterations: u64,
) -> Result<u64> {
    let min_time = match listed.exact_iterations {
        true => format!("{iterations}x"),
        false => "0".to_string(),
    };
    let args = one_run(name, &min_time);
    let count = Count {
        program,
        args: &args,
        dir: None,
        env: &[],
        scope,
        printed: true,
    };
    let counted = reach.harness.counted(&count, name)?;
    ran_as_asked(&counted.printed, iterations, &count.line(), name)?;
    Ok(counted.instructions)
}

/// How the counts were taken, as the environment records it.
fn how(exact_iterations: bool) -> String {
    match exact_iterations {
        true => format!(
            "callgrind on each benchmark's function, one iteration as ({MORE}x − {FEWER}x) / {}",
            MORE - FEWER
        ),
        false => "callgrind on each benchmark's function, one iteration \
                  (--benchmark_min_time=0) with its setup"
            .into(),
    }
}

/// The counts as `instructions/op` of the listed benchmarks: beside the timed run's figures
/// (`timed`), or as a run of their own.
pub fn with_counts(
    timed: Option<Input>,
    listed: &Listed,
    counts: Vec<Vec<f64>>,
    reach: Reach,
    version: &str,
) -> Input {
    let mut input = timed.unwrap_or_else(|| {
        let source = Source {
            kind: SourceKind::Command,
            format: "gbench".into(),
            path: None,
            command: Vec::new(),
        };
        let mut run = new_run(
            source,
            reach.environment_since(None),
            Vec::new(),
            RunBuilder::default(),
        );
        run.started = Some(timestamp(reach.clock.now()));
        Input {
            runs: vec![run],
            notes: Vec::new(),
            malformed: 0,
        }
    });
    let run = &mut input.runs[0];
    let mut builder = RunBuilder::from_benchmarks(std::mem::take(&mut run.benchmarks));
    let metric = counted_metric(listed.exact_iterations);
    for (name, values) in listed.names.iter().zip(counts) {
        let bench = builder.benchmark(name, None, BenchName::parse_path);
        for value in values {
            builder.record(bench, metric, metric, value);
        }
    }
    builder.set_assume(metric, Assume::Counted);
    run.benchmarks = builder.finish();
    run.environment
        .toolchains
        .extend(settings(version, &how(listed.exact_iterations)));
    if !listed.exact_iterations {
        input.notes.push(Note::warning(
            "this google/benchmark (before 1.8) cannot run a given number of iterations: each \
             count is of one iteration (--benchmark_min_time=0) with the benchmark's setup \
             before its loop, so it is instructions/iteration+setup, not a cost per \
             operation: a ratio or change of it is of the setup too; 1.8 and later count the \
             loop alone, as instructions/op",
        ));
    }
    input
}

/// The counted metric's name: per operation where the loop is counted alone.
fn counted_metric(exact_iterations: bool) -> &'static str {
    match exact_iterations {
        true => vocab::INSTRUCTIONS_PER_OP,
        false => vocab::INSTRUCTIONS_WITH_SETUP,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_run_must_have_run_the_iterations_asked() {
        // google/benchmark 1.7.1's JSON, the lines of one result.
        let printed: Vec<String> = [
            "  \"benchmarks\": [",
            "      \"run_type\": \"iteration\",",
            "      \"iterations\": 1048576,",
            "      \"real_time\": 6.4e+02,",
        ]
        .map(str::to_string)
        .to_vec();
        assert_eq!(iterations_in(&printed), [1_048_576]);
        let ignored = ran_as_asked(&printed, 2, "./bm", "BM_A").unwrap_err();
        assert_eq!(ignored.exit_code(), 6);
        assert!(
            ignored
                .to_string()
                .contains("asked for 2 iteration(s) and ran 1048576"),
            "{ignored}"
        );
        assert!(ran_as_asked(&printed, 1_048_576, "./bm", "BM_A").is_ok());
        assert!(ran_as_asked(&[], 1, "./bm", "BM_A").is_err());
    }

    #[test]
    fn a_benchmark_is_counted_in_its_function() {
        assert_eq!(function_of("BM_Spin/1000"), "*BM_Spin(*");
        assert_eq!(function_of("BM_Queue<int>/8"), "*BM_Queue<*(*");
        assert_eq!(function_of("BM_Plain"), "*BM_Plain(*");
    }
}
