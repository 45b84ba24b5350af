use super::Env;
use super::interleave::{AaRun, Rounds, refuse_comparison};
use super::{
    Gate, ReportOptions, Style, deliver_rounds, enrich_options, load_suite, output_sinks,
    warn_on_stderr,
};
use crate::analyze::auto_gate::{Against, AutoGate, Round};
use crate::analyze::sequential::{Decision, Design};
use crate::analyze::{Report, build_report};
use crate::env::Console;
use crate::error::{Error, Result};
use crate::model::Note;
use crate::report::sink::LiveEvent;
use crate::runner::exec::{CommandIo, Ending, Exec, Timing};
use crate::runner::plan::{Helpers, Planned, plan};
use crate::runner::{turn_order, turns_in_pairs};

/// Commands to time, hyperfine's way.
pub struct ExecOptions {
    /// Command lines, as a shell would split them.
    pub commands: Vec<String>,
    /// Names for the commands at the same positions.
    pub names: Vec<String>,
    /// Each parameter's values, `{NAME}` replaced in commands, names and helpers.
    pub parameters: Vec<(String, Vec<String>)>,
    /// The untimed commands run around the timed ones.
    pub helpers: Helpers<Vec<String>>,
    pub timing: Timing,
    /// Where the timed commands' output goes and their input comes from.
    pub io: CommandIo,
    /// Rows of the table fastest first (`--sort mean-time`), not in the commands' order.
    pub fastest_first: bool,
    /// `--runs auto`: rounds until the gates are decided, within the timing's run bounds.
    pub auto: bool,
    pub gate: Gate,
    pub report: ReportOptions,
}

/// The sequential design of `--runs auto`, refused where it cannot decide; `None` without it.
fn sequential_design(args: &ExecOptions) -> Result<Option<Design>> {
    let (gate, timing) = (&args.gate, &args.timing);
    if let Some(max) = timing.max_runs
        && max < timing.min_runs
        && timing.runs.is_none()
    {
        return Err(Error::Input(format!(
            "--max-runs {max} is below --min-runs {}",
            timing.min_runs
        )));
    }
    if !args.auto {
        return match gate.fail_on.first() {
            Some(rule) => Err(Error::Input(format!(
                "--fail-on {} on exec gates --runs auto, which runs the commands in rounds \
                 until the gate is decided; to gate fixed runs, store them and use `latkit \
                 compare --fail-on`",
                rule.text
            ))),
            None => Ok(None),
        };
    }
    if gate.fail_on.is_empty() {
        return Err(Error::Input(
            "--runs auto runs until a --fail-on gate is decided: give one, e.g. \
             --fail-on time:+5%"
                .into(),
        ));
    }
    if gate.fail_within_noise {
        return Err(super::interleave::fail_within_noise_refused());
    }
    Ok(Some(Design {
        alpha: gate.alpha,
        min_rounds: timing.min_runs as usize,
        max_rounds: timing.max_runs.unwrap_or(u64::MAX) as usize,
    }))
}

pub fn run(args: ExecOptions, env: &Env) -> Result<()> {
    let suite = load_suite(&args.report)?;
    let mut opts = enrich_options(&args.report, &suite)?;
    let mut sinks = output_sinks(&args.report.output, env)?;
    let design = sequential_design(&args)?;
    let commands = plan(args.commands, &args.names, &args.parameters, &args.helpers)?;
    // Several commands are run to be compared: how many times slower than the fastest.
    opts.relative |= commands.len() > 1;
    if design.is_some() && commands.len() < 2 {
        return Err(Error::Input(
            "--runs auto compares the commands after the first against it: give two or more".into(),
        ));
    }
    let reference = commands[0].name.clone();
    let gated: Vec<String> = commands[1..].iter().map(|c| c.name.clone()).collect();
    let exec = timer(
        commands,
        args.timing,
        args.io,
        args.report.output.quiet || args.report.output.style != Style::Default,
        env,
    )?;
    let options = args.gate.options(env)?;
    let mut auto = design.map(|design| {
        (
            AutoGate::new(design, options.rules.clone(), Against::Reference(reference)),
            design,
        )
    });
    let mut rounds: Vec<Round> = Vec::new();
    let timed = match &mut auto {
        Some((gate, design)) => {
            exec.run_rounds(design.max_rounds as u64, turn_order, &mut |run| {
                rounds.push((vec![run.clone()], vec![run]));
                Ok(gate.look(&rounds)? != Decision::Continue)
            })?
        }
        None => written_as_they_go(&exec, &mut sinks, &opts, env)?,
    };
    let Some(input) = timed.input else {
        return Err(nothing_timed(timed.ending, &env.console));
    };
    let mut report = build_report(input.runs, input.notes, &opts)?;
    if args.fastest_first {
        fastest_first(&mut report);
    }
    if let Some((gate, design)) = &auto {
        let gated: Vec<&str> = gated.iter().map(String::as_str).collect();
        report.notes.extend(super::interleave::auto_floor_notes(
            &options, design, &gated,
        ));
        report.notes.push(Note::info(gate.note(design)));
        report.verdict = Some(gate.verdict("", &rounds));
        sinks.push_verdict_if(true);
    }
    warn_on_stderr(&report, &args.report.output, &env.console);
    match timed.ending {
        Ending::Done => deliver_rounds(report, sinks, rounds.len()),
        // What finished is reported, written and stored; the exit code says how it ended.
        Ending::Interrupted => {
            sinks.finish(&mut report)?;
            Err(Error::Interrupted)
        }
        Ending::Failed(failure) => {
            sinks.finish(&mut report)?;
            Err(failure)
        }
    }
}

/// Times every command, writing what finished as the commands go (as hyperfine exports), so
/// that a crash later on loses little of it.
fn written_as_they_go(
    exec: &Exec,
    sinks: &mut crate::report::sink::FanOut,
    opts: &crate::analyze::EnrichOptions,
    env: &Env,
) -> Result<crate::runner::exec::Timed> {
    let mut pacer = Pacer::new(env.clock.clone());
    exec.run(&mut |so_far| {
        let Some(started) = pacer.due() else {
            return Ok(());
        };
        let so_far = so_far();
        let report = build_report(so_far.runs, so_far.notes, opts)?;
        let written = sinks.live(&LiveEvent::Partial(&report));
        pacer.wrote(started);
        written.map_err(|(name, e)| Error::writing(&name, e))
    })
}

/// When the results so far are written again. Each writing costs time in what is written,
/// so writing after every command would make a scan of N commands cost O(N²) (1,000
/// commands took 21 s); writing only once the time since the last one is [`PACE`] times what
/// that one cost keeps the writing under 1/PACE of the run, and O(N) in all.
struct Pacer {
    clock: std::sync::Arc<dyn crate::env::Clock>,
    next: std::time::SystemTime,
}

const PACE: u32 = 20;

impl Pacer {
    fn new(clock: std::sync::Arc<dyn crate::env::Clock>) -> Pacer {
        Pacer {
            next: clock.now(),
            clock,
        }
    }

    /// The time now, when the results so far are due to be written again.
    fn due(&self) -> Option<std::time::SystemTime> {
        let now = self.clock.now();
        (now >= self.next).then_some(now)
    }

    /// A writing that began at `started` ended now.
    fn wrote(&mut self, started: std::time::SystemTime) {
        let now = self.clock.now();
        self.next = now + now.duration_since(started).unwrap_or_default() * PACE;
    }
}

/// `--sort mean-time`: every table's rows in order of their command's mean wall time, as
/// hyperfine sorts; a row without one keeps its place after them.
fn fastest_first(report: &mut Report) {
    let means: std::collections::HashMap<&str, f64> = report
        .runs
        .iter()
        .flat_map(|run| &run.benchmarks)
        .filter_map(|b| {
            let times = &b.metric(crate::model::vocab::WALL_TIME)?.values;
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            (!times.is_empty()).then_some((b.name.full_name.as_str(), mean))
        })
        .collect();
    let mut tables = std::mem::take(&mut report.tables);
    for table in &mut tables {
        let mean = |row: &crate::report::Row| means.get(row.benchmark.as_str()).copied();
        table.rows.sort_by(|a, b| match (mean(a), mean(b)) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (a, b) => b.is_some().cmp(&a.is_some()),
        });
    }
    report.tables = tables;
}

/// Why no command finished a timed run: its failure, or an interrupt (said here, since
/// nothing is reported).
fn nothing_timed(ending: Ending, console: &Console) -> Error {
    match ending {
        Ending::Failed(failure) => failure,
        _ => {
            console.say(
                "latkit: interrupted before any command finished a timed run: nothing was \
                 measured, so nothing is reported or written",
            );
            Error::Interrupted
        }
    }
}

/// Times `commands` in `env`, their streams where `io` says; progress on a terminal.
fn timer(
    commands: Vec<Planned>,
    timing: Timing,
    io: CommandIo,
    quiet: bool,
    env: &Env,
) -> Result<Exec> {
    let counting = match timing.measure.instructions {
        true => {
            let version = env.launch.harness().valgrind()?;
            crate::runner::counts::settings(&version, crate::runner::counts::WHOLE_COMMAND)
        }
        false => Vec::new(),
    };
    Ok(Exec {
        commands,
        timing,
        spawner: env.launch.timer(io)?,
        progress: env.console.progress(quiet).cloned(),
        clock: env.clock.clone(),
        interrupt: env.interrupt.clone(),
        host: env.host.clone(),
        counting,
    })
}

/// How the second arm of a command is named in an A/A run.
fn second_arm(name: &str) -> String {
    format!("{name} (A/A)")
}

/// `latkit calibrate -- exec …`: every command against itself, each once an arm a round in
/// turn; the runs a side are those `--runs` (else `--min-runs`) gives a command alone.
pub fn against_itself(args: ExecOptions, rounds: u32, env: &Env) -> Result<AaRun> {
    refuse_comparison(args.auto.then_some("--runs auto"))?;
    refuse_comparison(args.gate.fail_on.first().map(|_| "--fail-on"))?;
    refuse_comparison(args.gate.calibration.as_ref().map(|_| "--calibration"))?;
    let sinks = output_sinks(&args.report.output, env)?;
    let quiet = args.report.output.quiet;
    let runs = args.timing.runs.unwrap_or(args.timing.min_runs);
    let mut commands = Vec::new();
    for planned in plan(args.commands, &args.names, &args.parameters, &args.helpers)? {
        commands.push(Planned {
            name: second_arm(&planned.name),
            ..planned.clone()
        });
        commands.insert(commands.len() - 1, planned);
    }
    let exec = timer(commands, args.timing, args.io, quiet, env)?;
    let mut done = Rounds::default();
    let timed = exec.run_rounds(u64::from(rounds), turns_in_pairs, &mut |run| {
        let (first, mut second) = (run.clone(), run);
        let is_second = |name: &str| name.ends_with(" (A/A)");
        second.benchmarks.retain(|b| is_second(&b.name.full_name));
        for bench in &mut second.benchmarks {
            let first_name = bench.name.full_name.trim_end_matches(" (A/A)").to_string();
            bench.name.full_name.clone_from(&first_name);
            bench.name.name = first_name;
        }
        let mut first = first;
        first.benchmarks.retain(|b| !is_second(&b.name.full_name));
        done.rounds.push((vec![first], vec![second]));
        Ok(false)
    })?;
    match timed.ending {
        Ending::Failed(failure) => return Err(failure),
        Ending::Interrupted => done.interrupted = true,
        Ending::Done => {}
    }
    done.notes = timed.input.map(|input| input.notes).unwrap_or_default();
    Ok(AaRun {
        done,
        runs,
        sinks,
        quiet,
    })
}

#[cfg(test)]
mod tests {
    use super::{PACE, Pacer};
    use crate::env::{Clock, CpuReading};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, SystemTime};

    /// A clock that moves only when told.
    struct Hand(Mutex<Duration>);

    impl Clock for Hand {
        fn now(&self) -> SystemTime {
            SystemTime::UNIX_EPOCH + *self.0.lock().unwrap()
        }
        fn cpu(&self) -> Option<CpuReading> {
            None
        }
    }

    #[test]
    fn the_results_so_far_are_written_again_only_after_pace_times_what_writing_them_cost() {
        let hand = Arc::new(Hand(Mutex::new(Duration::from_secs(1))));
        let step = |by: Duration| *hand.0.lock().unwrap() += by;
        let mut pacer = Pacer::new(hand.clone());
        // The first is due at once; writing it takes 10 ms.
        let started = pacer.due().expect("the first is due");
        step(Duration::from_millis(10));
        pacer.wrote(started);
        // Commands of 1 ms each: not due again until 20 × 10 ms have passed.
        let mut skipped = 0;
        while pacer.due().is_none() {
            skipped += 1;
            step(Duration::from_millis(1));
        }
        assert_eq!(skipped, 10 * PACE);
    }
}
