//! A benchmark harness run in a checkout of some commit, for `latkit bisect`: built once per
//! checkout, then run once per round. Go suites are compiled to a test binary (`go test -c`)
//! so that each round runs the benchmarks without rebuilding; google/benchmark binaries and
//! plain commands run as given, after `--build`.

use super::counts::Measure;
use super::worktree::{Commit, Tree, Worktree, commits_between};
use crate::error::Result as Outcome;
use crate::ingest::format::{BUILTIN, by_name};
use crate::ingest::{Input, read_path};
use crate::model::{BenchName, Environment, RunBuilder, Source, SourceKind, new_run};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A commit checked out and made ready to measure.
pub trait Checkout {
    /// One run of the harness there: what it reported, or why it failed.
    fn measure(&self) -> Result<Input, String>;
}

/// Where `latkit bisect` gets the commits of a range and their checkouts.
pub trait Checkouts {
    /// The commits from `good` to `bad`, both included, oldest first.
    fn between(&self, good: &str, bad: &str) -> Outcome<Vec<Commit>>;
    /// `commit` checked out and built; the inner `Err` says why it does not build (the
    /// search skips it), the outer one that it could not be checked out at all.
    fn prepare(&self, commit: &Commit) -> Outcome<Result<Box<dyn Checkout>, String>>;
}

/// A repository's harness, as `latkit bisect` measures it at each commit.
pub struct Repository {
    /// A directory in the repository (the harness's paths are relative to it).
    pub dir: PathBuf,
    pub harness: Harness,
    /// `--build`, run in each checkout before the harness.
    pub build: Option<String>,
    /// The benchmarks run (a regular expression).
    pub bench: String,
    /// Time, counted instructions, or both (`--measure` among the harness's words).
    pub measure: Measure,
}

/// A git worktree of the commit, and its harness made ready there.
struct WorktreeCheckout {
    prepared: Prepared,
    /// Removed when the checkout is dropped.
    _tree: Worktree,
}

impl Checkout for WorktreeCheckout {
    fn measure(&self) -> Result<Input, String> {
        self.prepared.measure()
    }
}

impl Checkouts for Repository {
    fn between(&self, good: &str, bad: &str) -> Outcome<Vec<Commit>> {
        commits_between(&self.dir, good, bad)
    }

    fn prepare(&self, commit: &Commit) -> Outcome<Result<Box<dyn Checkout>, String>> {
        let tree = Worktree::add(&self.dir, &commit.hash)?;
        let dir = tree.counterpart(&self.dir)?;
        Ok(prepare(&dir, self, self.build.as_deref()).map(|prepared| {
            Box::new(WorktreeCheckout {
                prepared,
                _tree: tree,
            }) as Box<dyn Checkout>
        }))
    }
}

/// What is measured at each commit.
#[derive(Clone, Debug)]
pub enum Harness {
    /// `go [PKG] [FLAGS]`: a Go package's benchmarks; FLAGS as `go test` takes them
    /// (`-benchtime 1000x`, `-cpu 1`).
    Go { package: String, flags: Vec<String> },
    /// `gbench BINARY [ARGS]`: a google/benchmark binary of the checkout (built by `--build`).
    Gbench { binary: String, args: Vec<String> },
    /// `exec CMD [ARGS]`: a command timed from start to exit (`wall`, seconds).
    Exec { command: Vec<String> },
}

/// The metric `exec` measures.
pub const WALL: &str = "wall";

impl Harness {
    /// From the words after `--`: `go …`, `gbench …` or `exec …`, and what to measure
    /// (`--measure time|instructions|time,instructions` among them, for go and gbench;
    /// before the command, for exec).
    pub fn parse(words: &[String]) -> Result<(Harness, Measure), String> {
        let usage = "after -- give the harness: `go [PKG] [FLAGS]`, `gbench BINARY [ARGS]` or \
                     `exec CMD [ARGS]`";
        let (kind, rest) = words.split_first().ok_or(usage)?;
        let (rest, measure) = match kind.as_str() {
            // The command's own words are its own: --measure only before it.
            "exec" => take_measure(rest, true)?,
            _ => take_measure(rest, false)?,
        };
        let harness = match kind.as_str() {
            "go" => {
                let (package, flags) = match rest.split_first() {
                    Some((pkg, flags)) if !pkg.starts_with('-') => (pkg.clone(), flags.to_vec()),
                    _ => (".".to_string(), rest.to_vec()),
                };
                Harness::Go { package, flags }
            }
            "gbench" => match rest.split_first() {
                Some((binary, args)) => Harness::Gbench {
                    binary: binary.clone(),
                    args: args.to_vec(),
                },
                None => return Err(format!("gbench needs the benchmark binary; {usage}")),
            },
            "exec" if !rest.is_empty() => Harness::Exec { command: rest },
            "exec" => return Err(format!("exec needs a command; {usage}")),
            other => return Err(format!("`{other}` is no harness; {usage}")),
        };
        Ok((harness, measure))
    }

    /// The metric the search follows unless `--metric` names another: counted instructions
    /// when they alone are measured.
    pub fn default_metric(&self, measure: Measure) -> &'static str {
        match (self, measure.counts_only()) {
            (Harness::Exec { .. }, true) => crate::model::vocab::INSTRUCTIONS,
            (_, true) => crate::model::vocab::INSTRUCTIONS_PER_OP,
            (Harness::Go { .. }, false) => "ns/op",
            (Harness::Gbench { .. }, false) => crate::model::vocab::REAL_TIME,
            (Harness::Exec { .. }, false) => WALL,
        }
    }
}

/// `words` without `--measure WHAT` (or `--measure=WHAT`), and what it says (time when it is
/// not there); `leading`: only before the first word that is not an option of latkit's.
fn take_measure(words: &[String], leading: bool) -> Result<(Vec<String>, Measure), String> {
    let mut kept = Vec::new();
    let mut measure = None;
    let mut iter = words.iter().peekable();
    while let Some(word) = iter.next() {
        let value = match word.strip_prefix("--measure") {
            Some("") if measure.is_none() && (!leading || kept.is_empty()) => Some(
                iter.next()
                    .ok_or("--measure needs `time`, `instructions` or both")?
                    .as_str(),
            ),
            Some(rest) if rest.starts_with('=') && (!leading || kept.is_empty()) => {
                Some(&word[10..])
            }
            _ => None,
        };
        match value {
            Some(text) => measure = Some(Measure::parse(text)?),
            None => kept.push(word.clone()),
        }
    }
    Ok((kept, measure.unwrap_or(Measure::TIME)))
}

/// A checkout made ready to measure: where it is and what runs there.
pub(super) struct Prepared {
    pub(super) root: PathBuf,
    pub(super) harness: Harness,
    /// The compiled Go test binary (in `scratch`).
    pub(super) go_binary: Option<PathBuf>,
    pub(super) bench: String,
    pub(super) measure: Measure,
    pub(super) scratch: tempfile::TempDir,
}

/// Runs `command` in `dir` to its end (an interrupt stops it), its standard output to `out`;
/// a failure says what ran and the end of what it said.
pub(super) fn run_to(
    mut command: Command,
    dir: &Path,
    out: &Path,
    what: &str,
) -> Result<(), String> {
    let stdout = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let err_path = out.with_extension("stderr");
    let stderr = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    let status = crate::interrupt::status_of(&mut command).map_err(|e| format!("{what}: {e}"))?;
    if status.success() || crate::interrupt::requested() {
        return Ok(());
    }
    let said = std::fs::read_to_string(&err_path).unwrap_or_default()
        + &std::fs::read_to_string(out).unwrap_or_default();
    let tail: Vec<&str> = said.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!("{what} failed ({status}): {}", tail.join(" | ")))
}

fn shell(command: &str) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(command);
    shell
}

/// A checkout's scratch directory: the prefix, then its owner (`PID.START`) and a random part.
const SCRATCH_PREFIX: &str = "latkit-bisect-";

/// Builds the checkout at `root` (`build`, then the Go test binary): `Err` with the reason
/// when it does not build, which the search skips.
fn prepare(root: &Path, repository: &Repository, build: Option<&str>) -> Result<Prepared, String> {
    let harness = &repository.harness;
    super::worktree::remove_stale_owned(&std::env::temp_dir(), SCRATCH_PREFIX);
    let scratch = tempfile::Builder::new()
        .prefix(&format!("{SCRATCH_PREFIX}{}-", super::worktree::owner()))
        .tempdir()
        .map_err(|e| e.to_string())?;
    let log = scratch.path().join("build.out");
    if let Some(build) = build {
        run_to(shell(build), root, &log, &format!("--build `{build}`"))?;
    }
    let go_binary = match harness {
        Harness::Go { package, flags } => {
            let binary = scratch.path().join("bench.test");
            let mut go = Command::new("go");
            go.args(["test", "-c"])
                .args(super::go_flags::split(flags, false).build)
                .arg("-o")
                .arg(&binary)
                .arg(package);
            run_to(go, root, &log, &format!("go test -c {package}"))?;
            Some(binary)
        }
        _ => None,
    };
    Ok(Prepared {
        root: root.to_path_buf(),
        harness: harness.clone(),
        go_binary,
        bench: repository.bench.clone(),
        measure: repository.measure,
        scratch,
    })
}

impl Prepared {
    /// One run of the harness: the results it printed, or the time it took (`exec`); its
    /// counted instructions instead when they alone are measured (`checkout_counts`).
    fn measure(&self) -> Result<Input, String> {
        if self.measure.counts_only() {
            return self.count();
        }
        self.timed()
    }

    /// One run of the harness, timed: the results it printed, or the time it took (`exec`).
    pub(super) fn timed(&self) -> Result<Input, String> {
        let out = self.scratch.path().join("run.out");
        let format = match &self.harness {
            Harness::Go { package, flags } => {
                let binary = self.go_binary.as_ref().ok_or("no Go test binary")?;
                let mut run = Command::new(binary);
                run.args(["-test.run", "^$", "-test.bench", &self.bench])
                    .args(["-test.count", "1"]);
                // `go test`'s flags for the binary become its own (`-benchtime` →
                // `-test.benchtime`); build flags built it.
                run.args(super::go_flags::split(flags, false).binary);
                // Go runs a package's tests in its directory.
                run_to(run, &self.root.join(package), &out, "the Go benchmarks")?;
                "go"
            }
            Harness::Gbench { binary, args } => {
                let mut run = Command::new(self.root.join(binary));
                run.arg(format!("--benchmark_filter={}", self.bench))
                    .arg("--benchmark_format=json")
                    .args(args);
                run_to(run, &self.root, &out, binary)?;
                "gbench-json"
            }
            Harness::Exec { command } => return self.time(command, &out),
        };
        let format = by_name(BUILTIN, format).ok_or("an input format latkit lacks")?;
        read_path(&out.display().to_string(), Some(format)).map_err(|e| e.to_string())
    }

    /// `exec`: the command's wall time, as a run of one benchmark named after it.
    fn time(&self, command: &[String], out: &Path) -> Result<Input, String> {
        let mut run = Command::new(&command[0]);
        run.args(&command[1..]);
        let started = std::time::Instant::now();
        run_to(run, &self.root, out, &command.join(" "))?;
        Ok(wall_time(command, started.elapsed().as_secs_f64()))
    }
}

/// What `exec` measured of `command`: a run of one benchmark named after it, its wall time.
pub fn wall_time(command: &[String], seconds: f64) -> Input {
    let mut builder = RunBuilder::default();
    let bench = builder.benchmark(&command.join(" "), None, BenchName::plain);
    builder.record(bench, WALL, "s", seconds);
    let source = Source {
        kind: SourceKind::Command,
        format: "exec".into(),
        path: None,
        command: command.to_vec(),
    };
    Input {
        runs: vec![new_run(source, Environment::default(), Vec::new(), builder)],
        notes: Vec::new(),
        malformed: 0,
    }
}
