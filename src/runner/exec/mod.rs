//! Times whole commands as hyperfine does: each run spawned directly (or through a shell whose
//! own start-up is measured and subtracted), its wall time around spawn and `wait4`, and the
//! user and system CPU time and maximum RSS the kernel accounts to it.

use super::counts::Measure;
use super::plan::{Helpers, Planned};
use crate::env::{Clock, Host, Interrupt, Stream};
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::model::Note;
use crate::model::summary::{OUTLIER_SCORE, modified_z_scores};
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

mod processes;
mod record;
mod shell;
#[cfg(test)]
mod tests;

pub use processes::{CommandIo, CommandOutput, Processes};
use record::{Record, interrupted_note, rss_floor_note};

/// Commands to time, how, through what, and where progress is drawn (if anywhere); the
/// clock stamps the run, and the interrupt stops it.
pub struct Exec {
    pub commands: Vec<Planned>,
    pub timing: Timing,
    pub spawner: Box<dyn Spawner>,
    pub progress: Option<Stream>,
    pub clock: Arc<dyn Clock>,
    pub interrupt: Arc<dyn Interrupt>,
    /// The machine the run records.
    pub host: Arc<dyn Host>,
    /// How instructions are counted (valgrind's version and settings), recorded in the run's
    /// environment when they are.
    pub counting: Vec<crate::model::ConfigEntry>,
}

/// How each command is run and how many times (hyperfine's options).
#[derive(Clone, Debug)]
pub struct Timing {
    /// Exactly this many timed runs (instead of min/max runs and min time).
    pub runs: Option<u64>,
    pub min_runs: u64,
    pub max_runs: Option<u64>,
    pub min_time: f64,
    pub warmup: u64,
    pub ignore_failure: bool,
    /// Run commands through this shell and subtract its start-up time.
    pub shell: Option<String>,
    /// Time, counted instructions (valgrind), or both.
    pub measure: Measure,
}

/// What one run cost: seconds of wall, user and system time, bytes of peak memory, and the
/// instructions counted (`--measure instructions`, a counted run of its own).
#[derive(Clone)]
pub struct Sample {
    pub wall: f64,
    pub user: f64,
    pub system: f64,
    pub max_rss: f64,
    pub status: ExitStatus,
    pub instructions: Option<f64>,
    /// Of the instructions, those of rep-movsb/stosb copies and fills.
    pub string: Option<f64>,
}

/// The seam between `exec` and the processes it times: [`Processes`] spawns and measures
/// real ones; tests drive the run-count, failure and warning logic with a scripted double.
pub trait Spawner {
    /// Runs `argv` once, its output where `--output` says, and measures it.
    fn time(&self, argv: &[String]) -> std::io::Result<Sample>;
    /// The last lines the latest timed run wrote to stderr, to say why it failed.
    fn last_stderr(&self) -> Vec<String>;
    /// Runs an untimed helper command (`--setup`, `--prepare`, `--conclude`, `--cleanup`)
    /// through `sh -c`.
    fn helper(&self, what: &str, command: &str) -> Result<()>;
    /// Runs `argv` once under valgrind and counts the instructions it and its children
    /// execute; `NotFound` when valgrind is not there.
    fn count(&self, argv: &[String]) -> std::io::Result<crate::runner::counts::Counted>;
}

/// Empty-shell runs measured to know what to subtract with `--shell`.
const SHELL_PROBES: usize = 50;

/// Why `what` could not be counted: no valgrind is the machine's, anything else the peer's.
fn not_counted(what: &str, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::Environment(super::counts::MISSING.into()),
        _ => Error::Peer(format!("could not count `{what}` under valgrind: {e}")),
    }
}

fn mean_and_stddev(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// `--shell`'s program and its own arguments, as hyperfine takes them (`bash --norc`).
fn shell_words(shell: &str) -> Result<Vec<String>> {
    match shlex::split(shell) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(Error::Input(format!(
            "--shell `{shell}` is not a command (unbalanced quotes, or empty)"
        ))),
    }
}

impl Exec {
    /// What is spawned for `display`: its words, or the shell running it.
    fn argv(&self, display: &str) -> Result<Vec<String>> {
        match &self.timing.shell {
            Some(shell) => {
                let mut argv = shell_words(shell)?;
                argv.extend(["-c".into(), display.to_string()]);
                Ok(argv)
            }
            None => match shlex::split(display) {
                // Without a shell, its syntax would reach the program as words: a different
                // command from the one typed would be timed.
                Some(_) if let Some(syntax) = super::shell_syntax::first(display) => {
                    let display = crate::model::redact::line(display);
                    Err(Error::Input(format!(
                        "`{display}` uses shell syntax (`{syntax}`), which only a shell \
                         understands: time it through one with --shell sh (hyperfine's \
                         default), or quote what is meant literally"
                    )))
                }
                Some(words) if !words.is_empty() => Ok(words),
                _ => Err(Error::Input(format!(
                    "`{}` is not a command (unbalanced quotes, or empty)",
                    crate::model::redact::line(display)
                ))),
            },
        }
    }

    /// Times every command in turn. `finished` hears the result so far each time a command
    /// other than the last is done, so that it can be written before the next one starts.
    /// A failure or an interrupt part-way keeps what finished before it; an error before any
    /// run (a command that cannot be split) is returned as such.
    /// Times every command in turn; after each but the last, `finished` is given a way to
    /// build what there is so far (built only if it is asked for: each costs time in the
    /// results so far).
    pub fn run(
        &self,
        finished: &mut dyn FnMut(&mut dyn FnMut() -> Input) -> Result<()>,
    ) -> Result<Timed> {
        let (argvs, mut record) = self.start()?;
        for (index, (planned, argv)) in self.commands.iter().zip(&argvs).enumerate() {
            let (samples, stopped) = match self.time_command(planned, argv) {
                Ok(timed) => timed,
                Err(failure) => return Ok(record.ending(self, Ending::Failed(failure))),
            };
            if !samples.is_empty() {
                self.warn(&planned.name, &samples, &mut record.notes);
                // Read once, beside the runs it explains (latkit's own peak grows later).
                if self.timing.measure.time {
                    record.notes.extend(rss_floor_note(&planned.name, &samples));
                }
                record.timed.push((index, samples));
            }
            if let Some(cut_short) = stopped {
                record
                    .notes
                    .push(interrupted_note(&self.commands[index..], cut_short));
                return Ok(record.ending(self, Ending::Interrupted));
            }
            if index + 1 < self.commands.len() {
                finished(&mut || record.input(self))?;
            }
        }
        Ok(record.ending(self, Ending::Done))
    }

    /// Every command's words, and the record the timed runs go to (after the shell's cost is
    /// measured).
    fn start(&self) -> Result<(Vec<Vec<String>>, Record)> {
        self.interrupt.install();
        let argvs = self
            .commands
            .iter()
            .map(|planned| self.argv(&planned.command))
            .collect::<Result<Vec<_>>>()?;
        let started = self.clock.now();
        let mut notes = Vec::new();
        let shell_cost = self.shell_cost(&mut notes)?;
        let shell_count = self.shell_count(&mut notes)?;
        let record = Record {
            started,
            cpu: self.clock.cpu(),
            host: self.host.capture(),
            id: None,
            shell_cost,
            shell_count,
            timed: Vec::new(),
            notes,
        };
        Ok((argvs, record))
    }

    /// Times the commands in rounds, each once per round in `order` (`turn_order`: A B, then
    /// B A), so that drift and going first hit them alike, for at most `rounds` rounds:
    /// `decided` hears each finished round's run (one sample a command) and says whether to
    /// stop. The commands' --setup (each different one once) and warm-ups come before the
    /// first round, their --cleanup after the last.
    pub fn run_rounds(
        &self,
        rounds: u64,
        order: fn(u64, usize) -> Vec<usize>,
        decided: &mut dyn FnMut(crate::model::Run) -> Result<bool>,
    ) -> Result<Timed> {
        let (argvs, mut record) = self.start()?;
        let named = || self.commands.iter().zip(&argvs);
        for setup in self.distinct(|h| &h.setup) {
            self.spawner.helper("--setup", setup)?;
        }
        for (planned, argv) in named() {
            self.warm_up(planned, argv)?;
        }
        let progress = self.bar("rounds (until decided)");
        progress.set_length(rounds);
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); self.commands.len()];
        let ending = 'rounds: loop {
            let mut round = Vec::new();
            let named: Vec<_> = named().collect();
            for index in order(samples[0].len() as u64, named.len()) {
                let (planned, argv) = named[index];
                let name = &planned.name;
                if !self.prepared(planned)? {
                    break 'rounds Ending::Interrupted;
                }
                let sample = match self.measure_once(name, argv) {
                    Ok(sample) => self.concluded(planned).map(|()| sample),
                    failed => failed,
                };
                let sample = match sample {
                    Ok(_) if self.interrupt.requested() => break 'rounds Ending::Interrupted,
                    Ok(sample) if sample.status.success() || self.timing.ignore_failure => sample,
                    Ok(sample) => break 'rounds Ending::Failed(self.failed(name, sample.status)),
                    Err(failure) => break 'rounds Ending::Failed(failure),
                };
                round.push((index, vec![sample.clone()]));
                samples[index].push(sample);
            }
            round.sort_by_key(|(index, _)| *index);
            let mut this = Record {
                timed: round,
                notes: Vec::new(),
                ..record.clone()
            };
            progress.inc(1);
            if decided(this.input(self).runs.remove(0))? || samples[0].len() as u64 >= rounds {
                break Ending::Done;
            }
        };
        progress.finish_and_clear();
        for cleanup in self.distinct(|h| &h.cleanup) {
            self.spawner.helper("--cleanup", cleanup)?;
        }
        if matches!(ending, Ending::Interrupted) {
            record.notes.push(Note::warning(
                "interrupted: the round in progress was cut short; the rounds before it are \
                 reported"
                    .to_string(),
            ));
        }
        for (index, samples) in samples.into_iter().enumerate() {
            if !samples.is_empty() {
                self.warn(&self.commands[index].name, &samples, &mut record.notes);
                record.timed.push((index, samples));
            }
        }
        Ok(record.ending(self, ending))
    }

    /// Runs one command's helpers, warm-up and timed runs. The samples that finished come
    /// back with, when an interrupt stopped them, whether it cut a timed run short.
    fn time_command(
        &self,
        planned: &Planned,
        argv: &[String],
    ) -> Result<(Vec<Sample>, Option<bool>)> {
        let name = &planned.name;
        if let Some(setup) = &planned.helpers.setup {
            self.spawner.helper("--setup", setup)?;
        }
        let mut samples: Vec<Sample> = Vec::new();
        let mut cut_short = false;
        self.warm_up(planned, argv)?;
        let mut target = self
            .timing
            .runs
            .unwrap_or(match self.timing.measure.counts_only() {
                true => u64::from(crate::runner::counts::COUNTED_RUNS),
                false => self.timing.min_runs,
            });
        let progress = self.bar(name);
        while (samples.len() as u64) < target && self.prepared(planned)? {
            let sample = self.measure_once(name, argv)?;
            self.concluded(planned)?;
            if self.interrupt.requested() {
                // Stopped part-way by the interrupt (or racing it): not a measurement.
                cut_short = true;
                break;
            }
            if !sample.status.success() && !self.timing.ignore_failure {
                return Err(self.failed(name, sample.status));
            }
            if samples.is_empty() && self.timing.runs.is_none() && self.timing.measure.time {
                // As hyperfine: enough runs to fill --min-time, within the bounds.
                let fit = (self.timing.min_time / sample.wall.max(1e-9)).ceil() as u64;
                target = fit
                    .max(self.timing.min_runs)
                    .min(self.timing.max_runs.unwrap_or(u64::MAX))
                    .max(1);
                progress.set_length(target);
            }
            samples.push(sample);
            if self.timing.runs.is_none() && self.timing.measure.counts_only() {
                // Counted until the counts show whether they agree.
                let counts: Vec<f64> = samples.iter().filter_map(|s| s.instructions).collect();
                let more = !crate::runner::counts::enough(&counts, None);
                target = samples.len() as u64 + u64::from(more);
                progress.set_length(target);
            }
            progress.set_position(samples.len() as u64);
        }
        progress.finish_and_clear();
        if let Some(cleanup) = &planned.helpers.cleanup {
            // After an interrupt too: it undoes what --setup did.
            self.spawner.helper("--cleanup", cleanup)?;
        }
        Ok((samples, self.interrupt.requested().then_some(cut_short)))
    }

    /// Spawns `argv` once and measures it.
    fn spawn(&self, name: &str, argv: &[String]) -> Result<Sample> {
        self.spawner.time(argv).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => format!("`{}`: no such command", argv[0]),
                _ => format!("could not run `{name}`: {e}"),
            };
            Error::starting(&e, why)
        })
    }

    /// One run as `--measure` asks: timed, counted under valgrind (a run of its own), or
    /// both; the status is the last run's.
    fn measure_once(&self, name: &str, argv: &[String]) -> Result<Sample> {
        let timed = match self.timing.measure.time {
            true => Some(self.spawn(name, argv)?),
            false => None,
        };
        match (timed, self.timing.measure.instructions) {
            (Some(timed), false) => Ok(timed),
            (timed, _) => self.count_once(name, argv, timed),
        }
    }

    /// A counted run of `argv`, its count joined to the `timed` run's figures when there is
    /// one; a timed run that failed is not counted.
    fn count_once(&self, name: &str, argv: &[String], timed: Option<Sample>) -> Result<Sample> {
        if timed.as_ref().is_some_and(|t| !t.status.success()) {
            return Ok(timed.expect("a timed run"));
        }
        let counted = self.spawner.count(argv).map_err(|e| not_counted(name, e))?;
        let failed = !counted.status.success() && !self.timing.ignore_failure;
        if failed && !self.interrupt.requested() {
            return Err(Error::Peer(format!(
                "`{name}` failed under valgrind ({}); the last of what valgrind and it said:\n{}",
                counted.status,
                crate::error::visible_lines(&counted.said)
            )));
        }
        let instructions = Some(counted.instructions as f64);
        let string = Some(counted.string as f64);
        Ok(match timed {
            Some(timed) => Sample {
                instructions,
                string,
                ..timed
            },
            None => Sample {
                wall: 0.0,
                user: 0.0,
                system: 0.0,
                max_rss: 0.0,
                status: counted.status,
                instructions,
                string,
            },
        })
    }

    /// Runs the command's --prepare before a run; false when an interrupt came meanwhile.
    fn prepared(&self, planned: &Planned) -> Result<bool> {
        if let Some(prepare) = &planned.helpers.prepare {
            self.spawner.helper("--prepare", prepare)?;
        }
        Ok(!self.interrupt.requested())
    }

    /// Runs the command's --conclude after a run.
    fn concluded(&self, planned: &Planned) -> Result<()> {
        match &planned.helpers.conclude {
            Some(conclude) => self.spawner.helper("--conclude", conclude),
            None => Ok(()),
        }
    }

    /// One helper of every command, each different one once, in the commands' order.
    fn distinct(&self, which: fn(&Helpers<Option<String>>) -> &Option<String>) -> Vec<&String> {
        let mut seen: Vec<&String> = Vec::new();
        for helper in self
            .commands
            .iter()
            .filter_map(|c| which(&c.helpers).as_ref())
        {
            if !seen.contains(&helper) {
                seen.push(helper);
            }
        }
        seen
    }

    /// The untimed --warmup runs (none when nothing is timed: counts warm up nothing).
    fn warm_up(&self, planned: &Planned, argv: &[String]) -> Result<()> {
        let runs = if self.timing.measure.time {
            self.timing.warmup
        } else {
            0
        };
        for _ in 0..runs {
            if !self.prepared(planned)? {
                break;
            }
            self.spawn(&planned.name, argv)?;
            self.concluded(planned)?;
        }
        Ok(())
    }

    /// Why a timed run failed: its exit status and the last lines it wrote to stderr.
    fn failed(&self, name: &str, status: ExitStatus) -> Error {
        let tail = self.spawner.last_stderr();
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!(
                "; the last of its stderr:\n{}",
                crate::error::visible_lines(&tail)
            )
        };
        Error::Peer(format!(
            "`{name}` failed ({status}); --ignore-failure times it anyway, --show-output \
             shows its output{said}"
        ))
    }

    fn bar(&self, name: &str) -> ProgressBar {
        let Some(stream) = &self.progress else {
            return ProgressBar::hidden();
        };
        let bar = stream.progress_bar(Some(self.timing.runs.unwrap_or(self.timing.min_runs)));
        if let Ok(style) =
            ProgressStyle::with_template("{msg} {wide_bar} {pos}/{len} runs, ETA {eta}")
        {
            bar.set_style(style);
        }
        bar.set_message(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// hyperfine's warnings: failed runs, outliers, a slow first run.
    fn warn(&self, name: &str, samples: &[Sample], notes: &mut Vec<Note>) {
        let failed = samples.iter().filter(|s| !s.status.success()).count();
        if failed > 0 {
            notes.push(Note::warning(format!(
                "`{name}`: {failed} of {} runs exited non-zero (--ignore-failure)",
                samples.len()
            )));
        }
        let counted: f64 = samples.iter().filter_map(|s| s.instructions).sum();
        let string: f64 = samples.iter().filter_map(|s| s.string).sum();
        if counted > 0.0 && string / counted > super::counts::STRING_DOMINATES {
            notes.push(Note::warning(super::counts::string_note(
                name,
                string / counted,
            )));
        }
        let walls: Vec<f64> = samples.iter().map(|s| s.wall).collect();
        let scores = modified_z_scores(&walls);
        if scores.first().is_some_and(|z| *z > OUTLIER_SCORE) {
            notes.push(Note::warning(format!(
                "`{name}`: the first run was much slower than the rest (cold caches?): \
                 --warmup or --prepare can take it out"
            )));
        } else if scores.iter().any(|z| z.abs() > OUTLIER_SCORE) {
            notes.push(Note::warning(format!(
                "`{name}`: statistical outliers (modified Z-score > {OUTLIER_SCORE}): other \
                 programs or I/O may have interfered; try --warmup, --prepare or a quieter \
                 machine"
            )));
        }
    }
}

/// How timing ended.
pub enum Ending {
    Done,
    /// Ctrl-C or SIGTERM: the run in progress was discarded.
    Interrupted,
    /// A command, or one of its helpers, failed.
    Failed(Error),
}

/// What was timed, when it ended: `input` is `None` when no command finished a run.
pub struct Timed {
    pub input: Option<Input>,
    pub ending: Ending,
}
