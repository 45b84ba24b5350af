//! A scripted world for tests: a command runs in-process, the commands it times are played
//! back from a script, time passes only as they say, Ctrl-C comes when the test says, the
//! machine is one of its own, and standard input, output and error are kept in memory.

use super::Env;
use crate::env::{Clock, Console, CpuReading, Host, Interrupt, Reader, Stdin, Stream};
use crate::error::{Error, Result};
use crate::ingest::Input;
use crate::runner::checkout_counts::counted_command;
use crate::runner::counts::{Count, Counted};
use crate::runner::exec::{CommandIo, Sample, Spawner};
use crate::runner::executor::{Executor, Process};
use crate::runner::harness::{Checkout, Checkouts, Harness, Repository, wall_time};
use crate::runner::launch::Launch;
use crate::runner::worktree::{Commit, Tree};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What one timed run of a command did: its wall time in seconds and its exit code (127, as
/// a shell says, is a command that is not there).
pub type Played = (f64, i32);

/// How the script plays a command line: `play(command, n)` for its `n`th run (from 0).
pub type Script = dyn Fn(&str, usize) -> Played + Send + Sync;

/// What a harness (`go test`, a google/benchmark binary) printed on its standard output, and
/// its exit code.
pub type Printed = (String, i32);

/// How the script plays a harness: `play(line, n)` for the `n`th run of the line (from 0),
/// the line being the program and its arguments, and ` in DIR` when it runs in DIR.
pub type HarnessScript = dyn Fn(&str, usize) -> Printed + Send + Sync;

/// The world's state, shared by its parts.
struct State {
    script: Box<Script>,
    /// Every run spawned so far (timed, warm-up and shell probes), its words joined.
    spawned: Vec<String>,
    /// The helpers run (`--setup`, `--prepare`, `--cleanup`), in order.
    helpers: Vec<String>,
    /// Seconds since the world began.
    seconds: f64,
    /// CPUs other processes keep busy meanwhile.
    others_busy: f64,
    /// Ctrl-C comes during this spawn (counted from 1).
    interrupt_at: Option<usize>,
    /// Commits in the repository `bisect` searches, oldest first.
    history: Vec<Commit>,
    harness: Option<Box<HarnessScript>>,
}

/// A world for one command: its [`Env`], and what the command did in it.
pub struct World {
    pub env: Env,
    state: Arc<Mutex<State>>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl World {
    /// Commands played by `script`; output read by a file or a pipe 80 columns wide.
    pub fn new(script: impl Fn(&str, usize) -> Played + Send + Sync + 'static) -> World {
        World::built(Box::new(script), false)
    }

    /// As [`World::new`], with a person watching stderr on an 80-column terminal: progress is
    /// drawn there, each frame kept as a line.
    pub fn watched(script: impl Fn(&str, usize) -> Played + Send + Sync + 'static) -> World {
        World::built(Box::new(script), true)
    }

    fn built(script: Box<Script>, watched: bool) -> World {
        let state = Arc::new(Mutex::new(State {
            script,
            spawned: Vec::new(),
            helpers: Vec::new(),
            seconds: 0.0,
            others_busy: 0.0,
            interrupt_at: None,
            history: Vec::new(),
            harness: None,
        }));
        // Both streams share what stderr said, as a real console's do.
        let reader = Reader {
            width: Some(80),
            at_terminal: false,
            said: Default::default(),
        };
        let (stdout, out_bytes) = Stream::captured("stdout", reader.clone());
        let terminal = Reader {
            at_terminal: watched,
            ..reader
        };
        let (stderr, err_bytes) = Stream::captured("stderr", terminal);
        let env = Env {
            console: Console {
                stdin: Stdin::given(Vec::new()),
                stdout,
                stderr,
            },
            clock: Arc::new(Virtual(state.clone())),
            interrupt: Arc::new(Virtual(state.clone())),
            launch: Arc::new(Virtual(state.clone())),
            host: Arc::new(Virtual(state.clone())),
            vars: crate::env::Vars::default(),
        };
        World {
            env,
            state,
            stdout: out_bytes,
            stderr: err_bytes,
        }
    }

    /// Standard input gives `bytes`, as a pipe would.
    pub fn stdin(mut self, bytes: &str) -> World {
        self.env.console.stdin = Stdin::given(bytes.as_bytes().to_vec());
        self
    }

    /// Ctrl-C comes while the `spawn`th process (counted from 1) runs.
    pub fn interrupt_at(self, spawn: usize) -> World {
        self.state().interrupt_at = Some(spawn);
        self
    }

    /// A repository of `commits` commits for `bisect`: `c00`, `c01`, … (subjects `change 0`,
    /// …), where building (`--build B`) plays `B @c07` and measuring (`exec C`) plays `C @c07`.
    pub fn history(self, commits: usize) -> World {
        self.state().history = (0..commits)
            .map(|i| Commit {
                hash: format!("c{i:02}"),
                subject: format!("change {i}"),
                date: "2027-01-15T08:00:00+00:00".into(),
            })
            .collect();
        self
    }

    /// Harnesses print what `script` says. A checkout of another revision (`--interleave
    /// REV`) puts the working tree's `DIR` at `DIR@REV`.
    pub fn harnesses(
        self,
        script: impl Fn(&str, usize) -> Printed + Send + Sync + 'static,
    ) -> World {
        self.state().harness = Some(Box::new(script));
        self
    }

    /// Other processes keep `cpus` CPUs busy while the command runs.
    pub fn others_busy(self, cpus: f64) -> World {
        self.state().others_busy = cpus;
        self
    }

    /// What the command wrote to standard output.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    /// What the command said on standard error.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Every process spawned, in order.
    pub fn spawned(&self) -> Vec<String> {
        self.state().spawned.clone()
    }

    /// Every helper run, in order.
    pub fn helpers(&self) -> Vec<String> {
        self.state().helpers.clone()
    }

    /// Seconds that passed in the world.
    pub fn seconds(&self) -> f64 {
        self.state().seconds
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

/// The world's clock, interrupt and processes, all reading one state.
struct Virtual(Arc<Mutex<State>>);

impl Virtual {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }

    /// The script's wall time and exit code for the next run of `line`; time passes by it
    /// unless the command is not there (127).
    fn play(&self, line: String) -> Played {
        let (wall, code) = self.look_up(line);
        if code != 127 {
            self.state().seconds += wall;
        }
        (wall, code)
    }

    /// The script's figure and exit code for the next run of `line`, recorded as spawned
    /// unless it is not there (127); no time passes.
    fn look_up(&self, line: String) -> Played {
        let mut state = self.state();
        let nth = state.spawned.iter().filter(|s| **s == line).count();
        let (figure, code) = (state.script)(&line, nth);
        if code != 127 {
            state.spawned.push(line);
        }
        (figure, code)
    }
}

impl Clock for Virtual {
    fn now(&self) -> SystemTime {
        // 2027-01-15T08:00:00Z, and on as the world's time passes.
        SystemTime::UNIX_EPOCH + Duration::from_secs_f64(1_800_000_000.0 + self.state().seconds)
    }

    fn cpu(&self) -> Option<CpuReading> {
        let state = self.state();
        Some(CpuReading {
            machine: state.others_busy * state.seconds,
            own: 0.0,
            at: state.seconds,
        })
    }
}

impl Host for Virtual {
    /// A machine of its own, named `scripted`, with no checks of its own (the busy check
    /// comes from the clock).
    fn capture(&self) -> crate::model::Environment {
        crate::model::Environment {
            hostname: self.name(),
            ..Default::default()
        }
    }

    fn name(&self) -> Option<String> {
        Some("scripted".into())
    }
}

impl Interrupt for Virtual {
    fn install(&self) {}

    fn requested(&self) -> bool {
        let state = self.state();
        state
            .interrupt_at
            .is_some_and(|at| state.spawned.len() >= at)
    }
}

impl Launch for Virtual {
    fn timer(&self, _io: CommandIo) -> Result<Box<dyn Spawner>> {
        Ok(Box::new(Virtual(self.0.clone())))
    }

    fn harness(&self) -> &dyn Executor {
        self
    }

    fn checkouts(&self, repository: Repository) -> Box<dyn Checkouts> {
        Box::new(Scripted {
            world: Virtual(self.0.clone()),
            repository,
        })
    }

    fn checkout(&self, _within: &Path, rev: &str) -> Result<Box<dyn Tree>> {
        Ok(Box::new(Revision {
            rev: rev.to_string(),
            commit: format!("{rev}0000000000000000"),
        }))
    }
}

/// A checkout of `rev`, whose `DIR` is `DIR@REV`.
struct Revision {
    rev: String,
    commit: String,
}

impl Tree for Revision {
    fn commit(&self) -> &str {
        &self.commit
    }

    fn counterpart(&self, path: &Path) -> Result<PathBuf> {
        Ok(PathBuf::from(format!("{}@{}", path.display(), self.rev)))
    }
}

/// A harness that ran: what it printed, and how it ended.
struct Ran {
    stdout: Option<String>,
    code: i32,
}

impl Process for Ran {
    fn take_stdout(&mut self) -> Option<Box<dyn std::io::Read + Send>> {
        let text = self.stdout.take()?;
        Some(Box::new(std::io::Cursor::new(text.into_bytes())))
    }

    fn take_stderr(&mut self) -> Option<Box<dyn std::io::Read + Send>> {
        Some(Box::new(std::io::empty()))
    }

    fn group(&self) -> u32 {
        0
    }

    fn wait(&mut self) -> std::io::Result<ExitStatus> {
        Ok(ExitStatus::from_raw(self.code << 8))
    }
}

/// The world's history as `bisect` sees it, and one of its commits checked out.
struct Scripted {
    world: Virtual,
    repository: Repository,
}

impl Checkouts for Scripted {
    fn between(&self, good: &str, bad: &str) -> Result<Vec<Commit>> {
        let history = self.world.state().history.clone();
        let at = |rev: &str| {
            history
                .iter()
                .position(|c| c.hash == rev)
                .ok_or_else(|| Error::Input(format!("`{rev}` is not a commit")))
        };
        let (good, bad) = (at(good)?, at(bad)?);
        if good >= bad {
            return Err(Error::Input(
                "the good end must be an ancestor of the bad".into(),
            ));
        }
        Ok(history[good..=bad].to_vec())
    }

    fn prepare(&self, commit: &Commit) -> Result<std::result::Result<Box<dyn Checkout>, String>> {
        let Harness::Exec { command } = &self.repository.harness else {
            return Err(Error::Input(
                "the scripted world measures `exec` harnesses".into(),
            ));
        };
        if let Some(build) = &self.repository.build {
            let (_, code) = self.world.play(format!("{build} @{}", commit.hash));
            if code != 0 {
                return Ok(Err(format!(
                    "--build `{build}` failed (exit status: {code})"
                )));
            }
        }
        Ok(Ok(Box::new(CheckedOut {
            world: Virtual(self.world.0.clone()),
            command: command.clone(),
            commit: commit.hash.clone(),
            counted: self.repository.measure.counts_only(),
        })))
    }
}

/// A commit of the world's history, its `exec` command ready to play, timed or counted.
struct CheckedOut {
    world: Virtual,
    command: Vec<String>,
    commit: String,
    counted: bool,
}

impl Checkout for CheckedOut {
    /// The command played with the commit after it (`C @c07`); counted, `valgrind C @c07`,
    /// whose figure is the count.
    fn measure(&self) -> std::result::Result<Input, String> {
        let line = format!("{} @{}", self.command.join(" "), self.commit);
        match self.counted {
            true => match self.world.look_up(format!("valgrind {line}")) {
                (count, 0) => Ok(counted_command(&self.command, count, "valgrind-3.19.0")),
                (_, code) => Err(format!("valgrind {line} failed (exit status: {code})")),
            },
            false => match self.world.play(line.clone()) {
                (wall, 0) => Ok(wall_time(&self.command, wall)),
                (_, code) => Err(format!("{line} failed (exit status: {code})")),
            },
        }
    }
}

impl Spawner for Virtual {
    fn time(&self, argv: &[String]) -> std::io::Result<Sample> {
        let (wall, code) = self.play(argv.join(" "));
        if code == 127 {
            return Err(std::io::ErrorKind::NotFound.into());
        }
        Ok(Sample {
            wall,
            user: wall * 0.9,
            system: wall * 0.05,
            max_rss: 4e6,
            status: ExitStatus::from_raw(code << 8),
            instructions: None,
            string: None,
        })
    }

    fn last_stderr(&self) -> Vec<String> {
        vec!["the scripted run's stderr".to_string()]
    }

    fn helper(&self, what: &str, command: &str) -> Result<()> {
        self.state().helpers.push(format!("{what} {command}"));
        Ok(())
    }

    /// `valgrind CMD` played: its figure is the count (whole instructions), 127 is a valgrind
    /// that is not there.
    fn count(&self, argv: &[String]) -> std::io::Result<Counted> {
        let (played, code) = self.look_up(format!("valgrind {}", argv.join(" ")));
        if code == 127 {
            return Err(std::io::ErrorKind::NotFound.into());
        }
        // A command named for copies (`copy N`) counts nine tenths of it in rep movsb.
        let copies = argv.first().is_some_and(|p| p == "copy");
        Ok(Counted {
            instructions: played as u64,
            string: if copies { (played * 0.9) as u64 } else { 0 },
            status: ExitStatus::from_raw(code << 8),
            said: vec!["==1== the scripted valgrind's log".to_string()],
            printed: Vec::new(),
        })
    }
}

impl Executor for Virtual {
    /// Plays the harness script; `NotFound` without one.
    fn spawn(
        &self,
        program: &str,
        args: &[String],
        dir: Option<&Path>,
    ) -> std::io::Result<Box<dyn Process>> {
        let mut line = [program.to_string()]
            .into_iter()
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(dir) = dir {
            line += &format!(" in {}", dir.display());
        }
        let mut state = self.state();
        let nth = state.spawned.iter().filter(|s| **s == line).count();
        let Some(script) = &state.harness else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{program}: the world has no harness script"),
            ));
        };
        let (stdout, code) = script(&line, nth);
        state.spawned.push(line);
        Ok(Box::new(Ran {
            stdout: Some(stdout),
            code,
        }))
    }

    /// `valgrind --version` answers `valgrind-3.19.0` unless the command script plays it as
    /// not there (127); other tools are not asked.
    fn output(&self, program: &str, args: &[&str]) -> Option<String> {
        let asked = program == "valgrind" && args == ["--version"];
        let state = self.state();
        (asked && (state.script)("valgrind --version", 0).1 != 127)
            .then(|| "valgrind-3.19.0".to_string())
    }

    /// Plays `valgrind LINE` (with ` in DIR`) from the harness script: it prints the count,
    /// or exits 127 when valgrind is not there.
    fn count(&self, count: &Count) -> std::io::Result<Counted> {
        let mut line = format!("valgrind {}", count.line());
        if let Some(dir) = count.dir {
            line += &format!(" in {}", dir.display());
        }
        let mut state = self.state();
        let nth = state.spawned.iter().filter(|s| **s == line).count();
        let Some(script) = &state.harness else {
            return Err(std::io::ErrorKind::NotFound.into());
        };
        let (printed, code) = script(&line, nth);
        if code == 127 {
            return Err(std::io::ErrorKind::NotFound.into());
        }
        state.spawned.push(line);
        // The script's first line is the count; the rest is what the program printed.
        let mut lines = printed.lines();
        Ok(Counted {
            instructions: lines.next().unwrap_or("").trim().parse().unwrap_or(0),
            string: 0,
            status: ExitStatus::from_raw(code << 8),
            said: printed.lines().map(str::to_string).collect(),
            printed: lines.map(str::to_string).collect(),
        })
    }
}
