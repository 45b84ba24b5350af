//! Times whole commands as hyperfine does: each run spawned directly (or through a shell whose
//! own start-up is measured and subtracted), its wall time around spawn and `wait4`, and the
//! user and system CPU time and maximum RSS the kernel accounts to it.

use super::plan::Planned;
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::interrupt;
use crate::model::summary::{OUTLIER_SCORE, modified_z_scores};
use crate::model::vocab;
use crate::model::{BenchName, Note, RunBuilder, Source, new_run, timestamp};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Commands to time, how, through what, and whether progress is drawn on stderr.
pub struct Exec {
    pub commands: Vec<Planned>,
    pub timing: Timing,
    pub spawner: Box<dyn Spawner>,
    pub progress: bool,
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
    pub prepare: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub ignore_failure: bool,
    /// Run commands through this shell and subtract its start-up time.
    pub shell: Option<String>,
}

/// What one run cost: seconds of wall, user and system time, bytes of peak memory.
#[derive(Clone)]
pub struct Sample {
    pub wall: f64,
    pub user: f64,
    pub system: f64,
    pub max_rss: f64,
    pub status: ExitStatus,
}

/// The seam between `exec` and the processes it times: [`Processes`] spawns and measures
/// real ones; tests drive the run-count, failure and warning logic with a scripted double.
pub trait Spawner {
    /// Runs `argv` once, its output where `--output` says, and measures it.
    fn time(&self, argv: &[String]) -> std::io::Result<Sample>;
    /// The last lines the latest timed run wrote to stderr, to say why it failed.
    fn last_stderr(&self) -> Vec<String>;
    /// Runs an untimed helper command (`--setup`, `--prepare`, `--cleanup`) through `sh -c`.
    fn helper(&self, what: &str, command: &str) -> Result<()>;
}

/// Where a timed command's standard output goes: hyperfine's `--output`.
#[derive(Clone, Debug, PartialEq)]
pub enum CommandOutput {
    /// Discarded by the kernel (`/dev/null`), the default.
    Null,
    /// Read through a pipe and discarded, for programs that behave differently on /dev/null.
    Pipe,
    /// latkit's own stdout and stderr (`--show-output`).
    Inherit,
    /// This file, emptied before each run: it holds the last run's output, as hyperfine's.
    File(PathBuf),
}

impl CommandOutput {
    /// `null`, `pipe`, `inherit` or a file's path, as hyperfine reads `--output`.
    pub fn parse(text: &str) -> CommandOutput {
        match text {
            "null" => CommandOutput::Null,
            "pipe" => CommandOutput::Pipe,
            "inherit" => CommandOutput::Inherit,
            path => CommandOutput::File(PathBuf::from(path)),
        }
    }
}

/// Real processes, each timed in its own process group.
pub struct Processes {
    output: CommandOutput,
    /// `--output FILE`, emptied for every run.
    file: Option<File>,
    /// Each run's stderr, unless inherited: emptied before every run, read when one fails.
    stderr: Option<File>,
}

/// How much of a failed run's stderr is read back, and how many of its last lines are shown.
const STDERR_TAIL_BYTES: u64 = 8192;
const STDERR_TAIL_LINES: usize = 5;

impl Processes {
    pub fn new(output: CommandOutput) -> Result<Processes> {
        let file = match &output {
            CommandOutput::File(path) => Some(File::create(path).map_err(|e| {
                Error::Input(format!(
                    "--output {}: cannot create it: {e}",
                    path.display()
                ))
            })?),
            _ => None,
        };
        let stderr = match output {
            CommandOutput::Inherit => None,
            _ => Some(tempfile::tempfile().map_err(|e| {
                Error::Environment(format!("cannot create a temporary file for stderr: {e}"))
            })?),
        };
        Ok(Processes {
            output,
            file,
            stderr,
        })
    }

    /// The child's stdout and stderr for one run.
    fn streams(&self) -> std::io::Result<(Stdio, Stdio)> {
        let emptied = |file: &File| -> std::io::Result<Stdio> {
            file.set_len(0)?;
            (&*file).seek(SeekFrom::Start(0))?;
            Ok(file.try_clone()?.into())
        };
        let stdout = match (&self.output, &self.file) {
            (CommandOutput::Inherit, _) => Stdio::inherit(),
            (CommandOutput::Pipe, _) => Stdio::piped(),
            (_, Some(file)) => emptied(file)?,
            _ => Stdio::null(),
        };
        let stderr = match &self.stderr {
            Some(capture) => emptied(capture)?,
            None => Stdio::inherit(),
        };
        Ok((stdout, stderr))
    }
}

impl Spawner for Processes {
    fn time(&self, argv: &[String]) -> std::io::Result<Sample> {
        let (stdout, stderr) = self.streams()?;
        run_once(argv, stdout, stderr)
    }

    fn last_stderr(&self) -> Vec<String> {
        let Some(mut capture) = self.stderr.as_ref() else {
            return Vec::new();
        };
        let mut tail = Vec::new();
        let end = capture.seek(SeekFrom::End(0)).unwrap_or(0);
        let read = capture
            .seek(SeekFrom::Start(end.saturating_sub(STDERR_TAIL_BYTES)))
            .and_then(|_| capture.read_to_end(&mut tail));
        if read.is_err() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&tail);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    fn helper(&self, what: &str, command: &str) -> Result<()> {
        helper(what, command)
    }
}

/// Empty-shell runs measured to know what to subtract with `--shell`.
const SHELL_PROBES: usize = 50;

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

/// Runs `argv` once with the given stdout and stderr, and measures it. A piped stdout is
/// read to its end on a thread while the command runs, and discarded.
fn run_once(argv: &[String], stdout: Stdio, stderr: Stdio) -> std::io::Result<Sample> {
    let start = Instant::now();
    // Its own process group: an interrupt reaches it through latkit, which can then tell a
    // run cut short from a finished one, and kill everything it started if it will not stop.
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    if let Some(mut out) = child.stdout.take() {
        // Not joined: a grandchild left running may hold the pipe open, and the run ends
        // with the command, as it is timed.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    }
    let pid = child.id() as libc::pid_t;
    interrupt::set_child_group(child.id());
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our unreaped child; status and usage outlive the call.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            interrupt::set_child_group(0);
            return Err(err);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    interrupt::set_child_group(0);
    drop(child); // already reaped: dropping a Child neither waits nor kills
    Ok(Sample {
        wall,
        user: seconds(usage.ru_utime),
        system: seconds(usage.ru_stime),
        // Linux reports kilobytes.
        max_rss: usage.ru_maxrss as f64 * 1024.0,
        status: ExitStatus::from_raw(status),
    })
}

/// This process's peak RSS (VmHWM) in bytes. Linux carries the spawner's peak into a child
/// at exec, so no child's max RSS reads below it.
fn own_peak_rss() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// `sh -c CMD` for the untimed helpers (--prepare, --setup, --cleanup), in latkit's own process
/// group, so that Ctrl-C on a terminal reaches them directly. One that fails because it was
/// interrupted is no failure of its own: the caller sees the interrupt and stops.
fn helper(what: &str, command: &str) -> Result<()> {
    let status = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| Error::Environment(format!("could not run sh for {what}: {e}")))?;
    if !status.success() && !interrupt::requested() {
        return Err(Error::Peer(format!("{what} `{command}` failed ({status})")));
    }
    Ok(())
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
                    Err(Error::Input(format!(
                        "`{display}` uses shell syntax (`{syntax}`), which only a shell \
                         understands: time it through one with --shell sh (hyperfine's \
                         default), or quote what is meant literally"
                    )))
                }
                Some(words) if !words.is_empty() => Ok(words),
                _ => Err(Error::Input(format!(
                    "`{display}` is not a command (unbalanced quotes, or empty)"
                ))),
            },
        }
    }

    /// The shell's own start-up time, to subtract from every run (`--shell`).
    fn shell_cost(&self, notes: &mut Vec<Note>) -> Result<f64> {
        let Some(shell) = &self.timing.shell else {
            return Ok(0.0);
        };
        let mut argv = shell_words(shell)?;
        argv.extend(["-c".into(), String::new()]);
        let mut walls = Vec::with_capacity(SHELL_PROBES);
        for _ in 0..SHELL_PROBES {
            let s = self.spawner.time(&argv).map_err(|e| {
                let why = format!("--shell `{shell}` cannot start `{}`: {e}", argv[0]);
                match e.kind() {
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                        Error::Input(why)
                    }
                    _ => Error::Environment(why),
                }
            })?;
            walls.push(s.wall);
        }
        let (mean, stddev) = mean_and_stddev(&walls);
        notes.push(Note::info(format!(
            "--shell {shell}: its start-up, {:.3} ms ± {:.3} ms over {SHELL_PROBES} empty runs, \
             is subtracted from every wall time",
            mean * 1e3,
            stddev * 1e3
        )));
        Ok(mean)
    }

    /// Times every command in turn. `finished` hears the result so far each time a command
    /// other than the last is done, so that it can be written before the next one starts.
    /// A failure or an interrupt part-way keeps what finished before it; an error before any
    /// run (a command that cannot be split) is returned as such.
    pub fn run(&self, finished: &mut dyn FnMut(&Input) -> Result<()>) -> Result<Timed> {
        let (argvs, mut record) = self.start()?;
        for (index, (planned, argv)) in self.commands.iter().zip(&argvs).enumerate() {
            let (samples, stopped) = match self.time_command(planned, argv) {
                Ok(timed) => timed,
                Err(failure) => return Ok(record.ending(self, Ending::Failed(failure))),
            };
            if !samples.is_empty() {
                self.warn(&planned.name, &samples, &mut record.notes);
                // Read once, beside the runs it explains (latkit's own peak grows later).
                record.notes.extend(rss_floor_note(&planned.name, &samples));
                record.timed.push((index, samples));
            }
            if let Some(cut_short) = stopped {
                record
                    .notes
                    .push(interrupted_note(&self.commands[index..], cut_short));
                return Ok(record.ending(self, Ending::Interrupted));
            }
            if index + 1 < self.commands.len() {
                finished(&record.input(self))?;
            }
        }
        Ok(record.ending(self, Ending::Done))
    }

    /// Every command's words, and the record the timed runs go to (after the shell's cost is
    /// measured).
    fn start(&self) -> Result<(Vec<Vec<String>>, Record)> {
        interrupt::install();
        let argvs = self
            .commands
            .iter()
            .map(|planned| self.argv(&planned.command))
            .collect::<Result<Vec<_>>>()?;
        let started = SystemTime::now();
        let mut notes = Vec::new();
        let shell_cost = self.shell_cost(&mut notes)?;
        let record = Record {
            started,
            clock: crate::host::busy::CpuClock::now(),
            host: crate::host::capture(),
            id: None,
            shell_cost,
            timed: Vec::new(),
            notes,
        };
        Ok((argvs, record))
    }

    /// Times the commands in rounds, each once per round in `order` (`turn_order`: A B, then
    /// B A), so that drift and going first hit them alike, for at most `rounds` rounds: `decided` hears each finished round's
    /// run (one sample a command) and says whether to stop. Every command's --setup and
    /// warm-up come before the first round, its --cleanup after the last.
    pub fn run_rounds(
        &self,
        rounds: u64,
        order: fn(u64, usize) -> Vec<usize>,
        decided: &mut dyn FnMut(crate::model::Run) -> Result<bool>,
    ) -> Result<Timed> {
        let (argvs, mut record) = self.start()?;
        let named = || self.commands.iter().map(|c| c.name.as_str()).zip(&argvs);
        if let Some(setup) = &self.timing.setup {
            self.spawner.helper("--setup", setup)?;
        }
        for (name, argv) in named() {
            self.warm_up(name, argv)?;
        }
        let progress = self.bar("rounds (until decided)");
        progress.set_length(rounds);
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); self.commands.len()];
        let ending = 'rounds: loop {
            let mut round = Vec::new();
            let named: Vec<_> = named().collect();
            for index in order(samples[0].len() as u64, named.len()) {
                let (name, argv) = named[index];
                if !self.prepared()? {
                    break 'rounds Ending::Interrupted;
                }
                let sample = match self.spawn(name, argv) {
                    Ok(_) if interrupt::requested() => break 'rounds Ending::Interrupted,
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
        if let Some(cleanup) = &self.timing.cleanup {
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
        if let Some(setup) = &self.timing.setup {
            self.spawner.helper("--setup", setup)?;
        }
        let mut samples: Vec<Sample> = Vec::new();
        let mut cut_short = false;
        self.warm_up(name, argv)?;
        let mut target = self.timing.runs.unwrap_or(self.timing.min_runs);
        let progress = self.bar(name);
        while (samples.len() as u64) < target && self.prepared()? {
            let sample = self.spawn(name, argv)?;
            if interrupt::requested() {
                // Stopped part-way by the interrupt (or racing it): not a measurement.
                cut_short = true;
                break;
            }
            if !sample.status.success() && !self.timing.ignore_failure {
                return Err(self.failed(name, sample.status));
            }
            if samples.is_empty() && self.timing.runs.is_none() {
                // As hyperfine: enough runs to fill --min-time, within the bounds.
                let fit = (self.timing.min_time / sample.wall.max(1e-9)).ceil() as u64;
                target = fit
                    .max(self.timing.min_runs)
                    .min(self.timing.max_runs.unwrap_or(u64::MAX))
                    .max(1);
                progress.set_length(target);
            }
            samples.push(sample);
            progress.set_position(samples.len() as u64);
        }
        progress.finish_and_clear();
        if let Some(cleanup) = &self.timing.cleanup {
            // After an interrupt too: it undoes what --setup did.
            self.spawner.helper("--cleanup", cleanup)?;
        }
        Ok((samples, interrupt::requested().then_some(cut_short)))
    }

    /// Spawns `argv` once and measures it.
    fn spawn(&self, name: &str, argv: &[String]) -> Result<Sample> {
        self.spawner.time(argv).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Input(format!("`{}`: no such command", argv[0])),
            _ => Error::Environment(format!("could not run `{name}`: {e}")),
        })
    }

    /// Runs --prepare before a run; false when an interrupt came meanwhile.
    fn prepared(&self) -> Result<bool> {
        if let Some(prepare) = &self.timing.prepare {
            self.spawner.helper("--prepare", prepare)?;
        }
        Ok(!interrupt::requested())
    }

    /// The untimed --warmup runs.
    fn warm_up(&self, name: &str, argv: &[String]) -> Result<()> {
        for _ in 0..self.timing.warmup {
            if !self.prepared()? {
                break;
            }
            self.spawn(name, argv)?;
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
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(
            Some(self.timing.runs.unwrap_or(self.timing.min_runs)),
            ProgressDrawTarget::stderr(),
        );
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

/// The commands timed so far, from which the run is built (again, as each one finishes).
#[derive(Clone)]
struct Record {
    started: SystemTime,
    /// CPU time when timing started, to tell what other processes did meanwhile.
    clock: Option<crate::host::busy::CpuClock>,
    host: crate::model::Environment,
    /// The run's id, the same in every result written along the way.
    id: Option<String>,
    shell_cost: f64,
    /// The index of each timed command in the plan, with its samples.
    timed: Vec<(usize, Vec<Sample>)>,
    notes: Vec<Note>,
}

impl Record {
    fn input(&mut self, exec: &Exec) -> Input {
        let mut builder = RunBuilder::default();
        for (index, samples) in &self.timed {
            let planned = &exec.commands[*index];
            let bench =
                builder.benchmark_in(&planned.name, None, &planned.params, BenchName::plain);
            builder.name_params(bench, &planned.params);
            for s in samples {
                let wall = (s.wall - self.shell_cost).max(0.0);
                builder.record(bench, vocab::WALL_TIME, "s", wall);
                builder.record(bench, vocab::USER_TIME, "s", s.user);
                builder.record(bench, vocab::SYSTEM_TIME, "s", s.system);
                builder.record(bench, vocab::MAX_RSS, "B", s.max_rss);
            }
        }
        let source = Source {
            kind: crate::model::SourceKind::Command,
            format: "exec".into(),
            path: None,
            command: exec.commands.iter().map(|c| c.command.clone()).collect(),
        };
        let mut host = self.host.clone();
        host.checks
            .extend(self.clock.and_then(|clock| clock.others_busy()));
        let mut run = new_run(source, host, Vec::new(), builder);
        run.id = self.id.get_or_insert_with(|| run.id.clone()).clone();
        run.started = Some(timestamp(self.started));
        run.ended = Some(timestamp(SystemTime::now()));
        Input {
            runs: vec![run],
            notes: self.notes.clone(),
            malformed: 0,
        }
    }

    fn ending(mut self, exec: &Exec, ending: Ending) -> Timed {
        if let Ending::Failed(failure) = &ending
            && let Some((last, _)) = self.timed.last()
        {
            self.notes.push(Note::warning(format!(
                "{failure}: the results hold the commands timed before it, up to `{}`",
                exec.commands[*last].name
            )));
        }
        Timed {
            input: (!self.timed.is_empty()).then(|| self.input(exec)),
            ending,
        }
    }
}

/// Says what an interrupt left out: the run it cut short and the commands never started.
fn interrupted_note(from: &[Planned], cut_short: bool) -> Note {
    let current = &from[0].name;
    let mut text = if cut_short {
        format!("interrupted: the run of `{current}` in progress was discarded")
    } else {
        format!("interrupted while timing `{current}`")
    };
    if from.len() > 1 {
        text += &format!("; {} command(s) after it were not timed", from.len() - 1);
    }
    Note::warning(text)
}

/// When every run's max RSS is at latkit's own peak, which Linux carries into every child.
fn rss_floor_note(name: &str, samples: &[Sample]) -> Option<Note> {
    let peak = samples.iter().map(|s| s.max_rss).fold(0.0, f64::max);
    let floor = own_peak_rss().filter(|floor| peak <= floor * 1.1)?;
    Some(Note::info(format!(
        "`{name}`: its peak memory ({:.1} MiB) is within latkit's own ({:.1} MiB), which \
         Linux counts in every child from exec: an upper bound on the command's use, not a \
         measure of it",
        peak / 1048576.0,
        floor / 1048576.0
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Plays back wall times and exit codes (the last one repeats) instead of running
    /// anything, and records the helpers it is asked to run.
    struct Scripted {
        runs: RefCell<Vec<(f64, i32)>>,
        helpers: Rc<RefCell<Vec<String>>>,
    }

    impl Spawner for Scripted {
        fn time(&self, _argv: &[String]) -> std::io::Result<Sample> {
            let mut runs = self.runs.borrow_mut();
            let (wall, code) = if runs.len() > 1 {
                runs.remove(0)
            } else {
                runs[0]
            };
            Ok(Sample {
                wall,
                user: wall / 2.0,
                system: 0.0,
                max_rss: 1e6,
                status: ExitStatus::from_raw(code << 8),
            })
        }

        fn last_stderr(&self) -> Vec<String> {
            vec!["ls: cannot access '/nonexistent': No such file or directory".into()]
        }

        fn helper(&self, what: &str, _command: &str) -> Result<()> {
            self.helpers.borrow_mut().push(what.to_string());
            Ok(())
        }
    }

    fn timing() -> Timing {
        Timing {
            runs: None,
            min_runs: 2,
            max_runs: None,
            min_time: 3.0,
            warmup: 0,
            prepare: None,
            setup: None,
            cleanup: None,
            ignore_failure: false,
            shell: None,
        }
    }

    /// Times one command through a script; returns what ended it, how many runs were
    /// recorded, the notes, and the helpers run.
    fn timed(runs: Vec<(f64, i32)>, timing: Timing) -> (Ending, usize, Vec<String>, Vec<String>) {
        let helpers = Rc::new(RefCell::new(Vec::new()));
        let spawner = Scripted {
            runs: RefCell::new(runs),
            helpers: helpers.clone(),
        };
        let exec = Exec {
            commands: vec![Planned {
                command: "true".into(),
                name: "true".into(),
                params: Vec::new(),
            }],
            timing,
            spawner: Box::new(spawner),
            progress: false,
        };
        let done = exec.run(&mut |_| Ok(())).unwrap();
        let (count, notes) = done.input.map_or((0, Vec::new()), |input| {
            let bench = &input.runs[0].benchmarks[0];
            let time = bench.metric(vocab::WALL_TIME).unwrap();
            (
                time.values.len(),
                input.notes.iter().map(|n| n.message.clone()).collect(),
            )
        });
        let helpers = helpers.borrow().clone();
        (done.ending, count, notes, helpers)
    }

    /// Two commands timed in rounds through a script, stopped by `decide` (which hears each
    /// round's wall times); what ended it, each command's wall times, and the helpers run.
    fn in_rounds(
        runs: Vec<(f64, i32)>,
        decide: impl Fn(&[f64]) -> bool,
    ) -> (Ending, Vec<Vec<f64>>, Vec<String>) {
        let helpers = Rc::new(RefCell::new(Vec::new()));
        let command = |name: &str| Planned {
            command: "true".into(),
            name: name.into(),
            params: Vec::new(),
        };
        let exec = Exec {
            commands: vec![command("a"), command("b")],
            timing: Timing {
                setup: Some("s".into()),
                cleanup: Some("c".into()),
                ..timing()
            },
            spawner: Box::new(Scripted {
                runs: RefCell::new(runs),
                helpers: helpers.clone(),
            }),
            progress: false,
        };
        // In seconds, as scripted (the model keeps nanoseconds).
        let walls = |run: &crate::model::Run| -> Vec<Vec<f64>> {
            let seconds = |b: &crate::model::Benchmark| {
                let time = b.metric(vocab::WALL_TIME).unwrap();
                time.values.iter().map(|ns| ns / 1e9).collect()
            };
            run.benchmarks.iter().map(seconds).collect()
        };
        let done = exec
            .run_rounds(10, crate::runner::turn_order, &mut |run| {
                let round: Vec<f64> = walls(&run).concat();
                Ok(decide(&round))
            })
            .unwrap();
        let all = done.input.map_or(Vec::new(), |input| walls(&input.runs[0]));
        let helpers = helpers.borrow().clone();
        (done.ending, all, helpers)
    }

    #[test]
    fn rounds_take_turns_and_stop_when_decided() {
        // a takes 0.1 s and b 0.2 s only if they run A B, B A, A B, ...
        let script = [(0.1, 0), (0.2, 0), (0.2, 0), (0.1, 0)].repeat(5);
        let (ending, walls, helpers) = in_rounds(script.clone(), |_| false);
        assert!(matches!(ending, Ending::Done));
        assert_eq!(
            walls,
            [vec![0.1; 10], vec![0.2; 10]],
            "A B, B A, to the most rounds"
        );
        assert_eq!(helpers, ["--setup", "--cleanup"]);
        // Decided at the third round: each round's run holds one sample of each, in turn.
        let seen = RefCell::new(0);
        let (_, walls, _) = in_rounds(script, |round| {
            assert_eq!(round, [0.1, 0.2]);
            *seen.borrow_mut() += 1;
            *seen.borrow() == 3
        });
        assert_eq!(walls, [vec![0.1; 3], vec![0.2; 3]]);
    }

    #[test]
    fn a_failing_round_keeps_the_rounds_before_it() {
        // The second round runs b, then a, which fails.
        let script = vec![(0.1, 0), (0.2, 0), (0.2, 0), (0.1, 1)];
        let (ending, walls, helpers) = in_rounds(script, |_| false);
        assert!(matches!(ending, Ending::Failed(_)));
        assert_eq!(walls, [vec![0.1], vec![0.2, 0.2]]);
        assert_eq!(helpers, ["--setup", "--cleanup"]);
    }

    #[test]
    fn min_time_sets_the_run_count_from_the_first_run_within_the_bounds() {
        // ⌈3 s / 0.25 s⌉ = 12 runs, as hyperfine plans them.
        assert_eq!(timed(vec![(0.25, 0)], timing()).1, 12);
        let capped = Timing {
            max_runs: Some(5),
            ..timing()
        };
        assert_eq!(timed(vec![(0.25, 0)], capped).1, 5);
        let slow = Timing {
            min_runs: 4,
            ..timing()
        };
        assert_eq!(timed(vec![(10.0, 0)], slow).1, 4);
        let exact = Timing {
            runs: Some(3),
            ..timing()
        };
        assert_eq!(timed(vec![(0.001, 0)], exact).1, 3);
    }

    #[test]
    fn a_failing_run_stops_the_command_unless_failures_are_ignored() {
        let script = || vec![(0.1, 0), (0.1, 1), (0.1, 0)];
        let four = Timing {
            runs: Some(4),
            ..timing()
        };
        let (ending, count, _, _) = timed(script(), four.clone());
        let Ending::Failed(failure) = ending else {
            panic!("a failed run did not stop the command")
        };
        let said = failure.to_string();
        assert!(said.contains("--ignore-failure"), "{said}");
        assert!(
            said.ends_with("the last of its stderr:\nls: cannot access '/nonexistent': No such file or directory"),
            "{said}"
        );
        assert_eq!(count, 0, "nothing of a failed command is kept");
        let ignoring = Timing {
            ignore_failure: true,
            ..four
        };
        let (ending, count, notes, _) = timed(script(), ignoring);
        assert!(matches!(ending, Ending::Done));
        assert_eq!(count, 4);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("1 of 4 runs exited non-zero")),
            "{notes:?}"
        );
    }

    #[test]
    fn helpers_run_around_the_runs_as_hyperfine_runs_them() {
        let with_helpers = Timing {
            runs: Some(3),
            warmup: 2,
            setup: Some("s".into()),
            prepare: Some("p".into()),
            cleanup: Some("c".into()),
            ..timing()
        };
        let (_, count, _, helpers) = timed(vec![(0.01, 0)], with_helpers);
        assert_eq!(count, 3, "warm-up runs are not recorded");
        let mut expected = vec!["--setup"];
        expected.extend(["--prepare"; 5]);
        expected.push("--cleanup");
        assert_eq!(helpers, expected);
    }
}
