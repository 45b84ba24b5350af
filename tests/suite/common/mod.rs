//! Helpers shared by the integration tests.

use assert_cmd::Command;
use std::path::PathBuf;

pub fn latkit() -> Command {
    let mut cmd = Command::cargo_bin("latkit").expect("the latkit binary is built for tests");
    // Tables are whole unless a test asks for a width.
    cmd.env("NO_COLOR", "1").env_remove("COLUMNS");
    cmd
}

pub fn fixture(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    assert!(path.exists(), "missing fixture {}", path.display());
    path
}

/// A reference output (copied from the project's shared vectors).
pub fn vector(name: &str) -> PathBuf {
    fixture(&format!("vectors/{name}"))
}

pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("latkit runs");
    assert!(
        out.status.success(),
        "latkit failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

pub fn json_of(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_str(&stdout_of(cmd)).expect("valid JSON")
}

/// The metric `name` of a benchmark in latkit's JSON.
pub fn metric<'a>(bench: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    bench["metrics"]
        .as_array()
        .expect("metrics array")
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

/// The first value of the metric `name`.
pub fn first_value(bench: &serde_json::Value, name: &str) -> f64 {
    metric(bench, name)["values"][0].as_f64().expect("a number")
}

/// The counted values of `metric` of the benchmark whose name holds `name`, in latkit's
/// JSON; they must be marked counted.
pub fn counts_of(doc: &serde_json::Value, name: &str, metric_name: &str) -> Vec<f64> {
    let bench = (doc["runs"][0]["benchmarks"]
        .as_array()
        .expect("benchmarks")
        .iter())
    .find(|b| b["name"].as_str().is_some_and(|n| n.contains(name)))
    .unwrap_or_else(|| panic!("no {name} in {doc}"));
    let metric = metric(bench, metric_name);
    assert_eq!(metric["assume"], "counted", "{metric}");
    (metric["values"].as_array().expect("values").iter())
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// The counted metric of a google/benchmark run: per operation from 1.8 on; before, one
/// iteration with the benchmark's setup, as the run's environment records.
pub fn gbench_metric(doc: &serde_json::Value) -> &'static str {
    let toolchains = doc["runs"][0]["environment"]["toolchains"].to_string();
    match toolchains.contains("with its setup") {
        true => "instructions/iteration+setup",
        false => "instructions/op",
    }
}

/// Sends SIGINT to a running latkit and checks that it exits 130 (after writing its results).
pub fn interrupt_expecting_130(child: std::process::Child) -> String {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("the child is running");
    let out = child
        .wait_with_output()
        .expect("the child can be waited for");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    stderr
}

/// `latkit parse FILE --format FORMAT`, which must succeed.
pub fn parse_as(file: &std::path::Path, format: &str) -> String {
    stdout_of(latkit().arg("parse").arg(file).args(["--format", format]))
}

/// `latkit parse FILE --format json`, as JSON.
pub fn parse_json(file: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&parse_as(file, "json")).expect("valid JSON")
}

/// `latkit parse` of `text` saved as `name` must exit 2 with `expected` on stderr.
pub fn parse_refuses(name: &str, text: &str, expected: &str) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let file = dir.path().join(name);
    std::fs::write(&file, text).expect("the input is written");
    latkit()
        .arg("parse")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(expected));
}

/// The benchmark `name` of the first run in latkit's JSON.
pub fn bench<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["runs"][0]["benchmarks"]
        .as_array()
        .expect("benchmarks array")
        .iter()
        .find(|b| b["full_name"] == name)
        .unwrap_or_else(|| panic!("no benchmark {name} in {doc}"))
}

/// A peer tool the test runs for real: its path, or a failure that says in one line what is
/// missing and how to install it.
pub fn peer(command: &str, install: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(command))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!("`{command}` is not installed; `bash .ci/setup` installs it ({install})")
    })
}

/// benchstat: the one `.ci/setup` pins, where `go install` puts it, else the one on PATH.
pub fn benchstat() -> PathBuf {
    let install = "bash .ci/setup installs the version it pins with `go install`";
    let gopath = std::process::Command::new(peer("go", "apt-get install golang-go"))
        .args(["env", "GOPATH"])
        .output()
        .expect("go env GOPATH");
    let pinned =
        PathBuf::from(String::from_utf8(gopath.stdout).unwrap().trim()).join("bin/benchstat");
    if pinned.exists() {
        return pinned;
    }
    peer("benchstat", install)
}

/// What the real benchstat prints as CSV for `args`, run in `dir`.
pub fn benchstat_csv(dir: &std::path::Path, args: &[&std::ffi::OsStr]) -> String {
    let out = std::process::Command::new(benchstat())
        .current_dir(dir)
        .args(["-format", "csv"])
        .args(args)
        .output()
        .expect("benchstat runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The google/benchmark fixture suite (`tests/fixtures/gbench/replay_bench.cc`), compiled once
/// per test process against the installed libbenchmark-dev.
pub fn replay_bench() -> &'static std::path::Path {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        let binary = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay_bench");
        build_gbench(&fixture("gbench/replay_bench.cc"), &binary);
        binary
    })
}

/// Builds the google/benchmark program `source` into `binary` against the installed
/// libbenchmark-dev.
pub fn build_gbench(source: &std::path::Path, binary: &std::path::Path) {
    let status = std::process::Command::new(peer("g++", "apt-get install g++"))
        .args(["-O2", "-std=c++17", "-o"])
        .arg(binary)
        .arg(source)
        .args(["-lbenchmark", "-lpthread"])
        .status()
        .expect("g++ runs");
    assert!(
        status.success(),
        "{} builds against libbenchmark (apt-get install libbenchmark-dev)",
        source.display()
    );
}

/// pytest with pytest-benchmark: `.ci/setup` prepares the venv (`LATKIT_PYTEST_VENV`, by
/// default ~/.cache/latkit/pytest-venv); made here when it is missing.
pub fn pytest() -> std::path::PathBuf {
    let venv = std::env::var_os("LATKIT_PYTEST_VENV")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|home| std::path::PathBuf::from(home).join(".cache/latkit/pytest-venv"))
        })
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pytest-venv")
        });
    let pytest = venv.join("bin/pytest");
    if !pytest.exists() {
        let made = std::process::Command::new(peer("python3", "apt-get install python3"))
            .args(["-m", "venv"])
            .arg(&venv)
            .status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "python3 -m venv (apt-get install python3-venv)"
        );
        let installed = std::process::Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "pytest==9.2.0", "pytest-benchmark==5.3.1"])
            .status()
            .unwrap();
        assert!(installed.success(), "pip install pytest-benchmark");
    }
    pytest
}

/// Fails with the command's stderr unless it succeeded.
pub fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A latkit started in a process group of its own, as a shell starts a foreground job, so
/// that the test can send a terminal's Ctrl-C (SIGINT to the whole group) without receiving it.
/// The group is killed if the test fails before the job ends.
pub struct Job(Option<std::process::Child>);

impl Job {
    pub fn start(args: &[&str], dir: &std::path::Path) -> Job {
        Job::start_under(&[], args, dir)
    }

    /// As [`Job::start`], latkit run by `wrapper` (`taskset -c 1`).
    pub fn start_under(wrapper: &[&str], args: &[&str], dir: &std::path::Path) -> Job {
        use std::os::unix::process::CommandExt;
        let latkit = assert_cmd::cargo::cargo_bin("latkit");
        let mut command = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut command = std::process::Command::new(program);
                command.args(rest).arg(latkit);
                command
            }
            None => std::process::Command::new(latkit),
        };
        let child = command
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        Job(Some(child))
    }

    pub fn group(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(self.0.as_ref().map_or(0, |c| c.id() as i32))
    }

    pub fn ctrl_c(&self) {
        nix::sys::signal::killpg(self.group(), nix::sys::signal::Signal::SIGINT).unwrap();
    }

    /// Waits (bounded: a hang is a failure, not a stuck suite) for the job to exit.
    pub fn finish(&mut self, what: &str) -> std::process::Output {
        let child = self.0.take().unwrap();
        let group = nix::unistd::Pid::from_raw(child.id() as i32);
        let (done, waited) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(child.wait_with_output().unwrap()));
        waited
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                panic!("{what}: latkit did not exit within a minute")
            })
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

/// A helper that waits on the real clock says so: it serves the interop tier only, and a
/// hermetic test that reaches it fails here rather than sleeping.
pub fn interop_only(helper: &str) {
    if !cfg!(feature = "interop") {
        panic!("{helper} waits on the real clock: only interop-tier tests may use it");
    }
}

/// Waits (bounded) until `ready` holds, polling.
pub fn wait_until(what: &str, ready: impl Fn() -> bool) {
    interop_only("wait_until");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Every `.rs` file under `dir`, for the tests that read latkit's own source.
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs git in `repo` as a test's fixed author; it must succeed.
pub fn git(repo: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new(peer("git", "apt-get install git"))
        .current_dir(repo)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The worktrees git knows of in `repo`, the working tree included.
pub fn worktrees(repo: &std::path::Path) -> Vec<String> {
    let list = std::process::Command::new(peer("git", "apt-get install git"))
        .current_dir(repo)
        .args(["worktree", "list", "--porcelain"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(str::to_string))
        .collect()
}

/// latkit run as uid 65534 through `setpriv`, from an open temporary folder: the binary and
/// any file it reads are copied there first, since a checkout under `/root` (mode 0700) is
/// out of that user's reach.
pub struct Nobody {
    pub dir: tempfile::TempDir,
    pub binary: PathBuf,
}

impl Nobody {
    pub fn new() -> Nobody {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = |path: &std::path::Path, mode| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        open(dir.path(), 0o755);
        let binary = dir.path().join("latkit");
        // Copied by `cp`, not by this process: a file this process holds open for writing is
        // inherited by every child another test thread forks meanwhile, and exec of it fails
        // with "Text file busy" until those children exec in turn.
        let copied = std::process::Command::new("cp")
            .arg(assert_cmd::cargo::cargo_bin("latkit"))
            .arg(&binary)
            .status()
            .unwrap();
        assert!(copied.success());
        open(&binary, 0o755);
        Nobody { dir, binary }
    }

    /// A copy of `file` in the open folder, readable by anyone.
    pub fn share(&self, file: &std::path::Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let copy = self.dir.path().join(file.file_name().unwrap());
        std::fs::copy(file, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
        copy
    }

    /// `setpriv` running the copied latkit as uid and gid 65534, in the open folder.
    pub fn latkit(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(peer("setpriv", "apt-get install util-linux"));
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&self.binary)
            .current_dir(self.dir.path());
        cmd
    }
}

/// xorshift64*: a small, seeded generator, so every run of a simulation sees the same data.
pub struct Rng(pub u64);

impl Rng {
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal value (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// A run read from a Go file, made of `builder`'s benchmarks: for engines fed generated data.
pub fn go_file_run(builder: latkit::model::RunBuilder) -> latkit::model::Run {
    let source = latkit::model::Source {
        kind: latkit::model::SourceKind::File,
        format: "go".into(),
        path: None,
        command: Vec::new(),
    };
    latkit::model::new_run(
        source,
        latkit::model::Environment::default(),
        Vec::new(),
        builder,
    )
}

/// The machine's two cores, shared by the tests of one binary. A test whose assertion needs a
/// real effect measured (a 2x slowdown found, a culprit commit named) holds them alone
/// ([`measuring`]); a test that keeps a core busy for long (a simulation, a fuzz run, a build,
/// a browser, a guest kernel, the docs' examples) shares them with its kind ([`busy`]) but
/// never runs beside a measurement. Short tests take neither.
static CORES: std::sync::RwLock<()> = std::sync::RwLock::new(());

pub fn measuring() -> std::sync::RwLockWriteGuard<'static, ()> {
    CORES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn busy() -> std::sync::RwLockReadGuard<'static, ()> {
    CORES
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Load that comes and goes, as on a shared CI runner: every 0.5-2 s its busy loops (`sh`
/// processes spinning) are killed and 0-4 new ones started, in a sequence fixed by `seed`,
/// until it is dropped. It holds the cores while it runs: shared ([`BurstyLoad::start`], for a
/// test whose figures load cannot move) or alone ([`BurstyLoad::alone`], for a measurement
/// under load; the test then measures without taking them again). Started before its test
/// held them, it ran beside another test's measurement, and that test failed.
pub struct BurstyLoad {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Released after the loops stop (fields drop after [`Drop::drop`]).
    _cores: HeldCores,
}

/// How a [`BurstyLoad`] holds the cores.
enum HeldCores {
    Shared {
        _guard: std::sync::RwLockReadGuard<'static, ()>,
    },
    Alone {
        _guard: std::sync::RwLockWriteGuard<'static, ()>,
    },
}

impl BurstyLoad {
    /// The load beside the other busy tests, never beside a measurement.
    pub fn start(seed: u64) -> BurstyLoad {
        BurstyLoad::spin(seed, HeldCores::Shared { _guard: busy() })
    }

    /// The load with the cores to itself and the test that holds it.
    pub fn alone(seed: u64) -> BurstyLoad {
        BurstyLoad::spin(
            seed,
            HeldCores::Alone {
                _guard: measuring(),
            },
        )
    }

    fn spin(seed: u64, cores: HeldCores) -> BurstyLoad {
        interop_only("BurstyLoad");
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut state = seed;
            let mut next = move |bound: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % bound
            };
            let mut loops: Vec<std::process::Child> = Vec::new();
            while !stopping.load(Ordering::Relaxed) {
                for mut child in loops.drain(..) {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                for _ in 0..next(5) {
                    if let Ok(child) = std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                    {
                        loops.push(child);
                    }
                }
                let until = std::time::Instant::now()
                    + std::time::Duration::from_millis(500 + 500 * next(4));
                while std::time::Instant::now() < until && !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
            for mut child in loops {
                let _ = child.kill();
                let _ = child.wait();
            }
        });
        BurstyLoad {
            stop,
            thread: Some(thread),
            _cores: cores,
        }
    }
}

impl Drop for BurstyLoad {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
