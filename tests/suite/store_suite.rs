//! The history store, on embedded SQLite and on a real PostgreSQL server the suite starts
//! itself (`initdb` + `pg_ctl` on a loopback port): every scenario runs on both backends.

use crate::common::{json_of, latkit, stdout_of, vector};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::Duration;

/// Where one scenario keeps its store.
enum Db {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Db {
    fn location(&self) -> String {
        match self {
            Db::Sqlite(path) => path.display().to_string(),
            Db::Postgres(url) => url.clone(),
        }
    }

    /// One integer from SQL run straight on the store, beside latkit.
    fn count(&self, sql: &str) -> i64 {
        match self {
            Db::Sqlite(path) => rusqlite::Connection::open(path)
                .unwrap()
                .query_row(sql, [], |row| row.get(0))
                .unwrap(),
            Db::Postgres(url) => postgres::Client::connect(url, postgres::NoTls)
                .unwrap()
                .query_one(sql, &[])
                .unwrap()
                .get(0),
        }
    }

    fn execute(&self, sql: &str) {
        match self {
            Db::Sqlite(path) => {
                rusqlite::Connection::open(path)
                    .unwrap()
                    .execute_batch(sql)
                    .unwrap();
            }
            Db::Postgres(url) => postgres::Client::connect(url, postgres::NoTls)
                .unwrap()
                .batch_execute(sql)
                .unwrap(),
        }
    }

    /// `latkit ARGS --db THIS`, run in `dir`.
    fn latkit(&self, dir: &Path, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = latkit();
        cmd.current_dir(dir)
            .args(args)
            .args(["--db", &self.location()]);
        cmd
    }

    fn ok(&self, dir: &Path, args: &[&str]) -> String {
        stdout_of(&mut self.latkit(dir, args))
    }

    fn json(&self, dir: &Path, args: &[&str]) -> Value {
        json_of(&mut self.latkit(dir, args))
    }

    /// Runs that must fail with exit 2 return their stderr.
    fn refused(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.latkit(dir, args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!stderr.contains("panicked"), "{stderr}");
        stderr
    }

    /// The stored runs' ids, oldest first.
    fn ids_oldest_first(&self, dir: &Path) -> Vec<i64> {
        let listed = self.listed(dir, &[]);
        listed
            .iter()
            .rev()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    }

    fn listed(&self, dir: &Path, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["store", "list", "--format", "json"];
        args.extend(extra);
        self.json(dir, &args).as_array().unwrap().clone()
    }
}

/// Schema versions this latkit applies.
const MIGRATIONS: i64 = 3;

/// A scenario: a fresh empty store and a scratch directory.
type Scenario = fn(&Db, &Path);

const SCENARIOS: &[(&str, Scenario)] = &[
    (
        "every result kind round-trips exactly",
        round_trip_every_kind,
    ),
    ("schema is created once and versioned", migrations),
    ("concurrent writers all land", concurrent_writers),
    ("a killed writer leaves whole runs", killed_writer),
    ("@refs name the runs they say", refs),
    ("list, show and rm", list_show_rm),
    ("history marks the change point", history_change_point),
    ("history --since @merge-base", history_since_merge_base),
    ("history --regressions and site", regressions_and_site),
    ("compare --against-history", against_history),
    ("one benchmark name everywhere", one_name_everywhere),
    (
        "a BENCH line's figures have histories",
        bench_line_histories,
    ),
];

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs go and git; `--features interop` runs it"
)]
fn sqlite_store() {
    for (name, scenario) in SCENARIOS {
        let dir = tempfile::tempdir().unwrap();
        eprintln!("sqlite: {name}");
        scenario(&Db::Sqlite(dir.path().join("history.db")), dir.path());
    }
}

#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs PostgreSQL, go and git; `--features interop` runs it"
)]
fn postgres_store() {
    let server = PgServer::start();
    for (i, (name, scenario)) in SCENARIOS.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        eprintln!("postgres: {name}");
        scenario(&server.database(&format!("scenario{i}")), dir.path());
    }
}

/// PostgreSQL errors say what went wrong and never show a password; a keyword connection
/// string is PostgreSQL, not a SQLite file to create.
/// An error that says `cause` and nothing of the password `hunter…`.
fn names_cause_hides_password(message: &str, cause: &str) {
    assert!(message.contains(cause), "{message}");
    assert!(!message.contains("hunter"), "{message}");
}

#[test]
fn postgres_errors_name_the_cause_and_hide_the_password() {
    let server = PgServer::start();
    let dir = tempfile::tempdir().unwrap();
    let refused = |location: &str| -> String {
        let db = Db::Postgres(location.to_string());
        db.refused(dir.path(), &["store", "list"])
    };
    let port = server.port;
    let missing = refused(&format!(
        "postgres://latkit@127.0.0.1:{port}/nope?password=hunter2&connect_timeout=5"
    ));
    names_cause_hides_password(&missing, "database \"nope\" does not exist");
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // No server there is the environment (exit 5), not a wrong location.
    let out = Db::Postgres(format!("postgres://latkit:hunter2@127.0.0.1:{closed}/x"))
        .latkit(dir.path(), &["store", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    names_cause_hides_password(&String::from_utf8_lossy(&out.stderr), "Connection refused");
    let keyword_missing = refused(&format!(
        "host=127.0.0.1 port={port} user=latkit dbname=nope password='hunter 2'"
    ));
    names_cause_hides_password(&keyword_missing, "does not exist");
    // A keyword string reaches the server: runs go there, and no file is made for it.
    let Db::Postgres(_) = server.database("keywords") else {
        unreachable!()
    };
    let keywords = Db::Postgres(format!(
        "host=127.0.0.1 port={port} user=latkit dbname=keywords"
    ));
    keywords.ok(
        dir.path(),
        &[
            "store",
            "add",
            &vector("viiper-count3.gobench.txt").display().to_string(),
        ],
    );
    assert_eq!(keywords.listed(dir.path(), &[]).len(), 1);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no SQLite file was made"
    );
}

/// A throwaway PostgreSQL cluster on a free loopback port, stopped when dropped.
pub(crate) struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub(crate) port: u16,
}

/// The directory holding `initdb` and `pg_ctl`: on PATH, else Debian's versioned directory.
fn postgres_bin() -> PathBuf {
    if let Ok(out) = Process::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        && out.status.success()
    {
        let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        let real = std::fs::canonicalize(&path).unwrap_or(path);
        return real.parent().unwrap().to_path_buf();
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (.ci/setup installs the postgresql package)")
        .map(|e| e.unwrap().path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().expect("initdb in /usr/lib/postgresql/*/bin")
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// A command as the cluster's owner: initdb refuses root, so root hands it to nobody.
fn as_owner(program: &Path) -> Process {
    if is_root() {
        let mut cmd = Process::new("setpriv");
        cmd.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(program);
        cmd
    } else {
        Process::new(program)
    }
}

fn must(cmd: &mut Process, what: &str) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl PgServer {
    pub(crate) fn start() -> PgServer {
        let bin = postgres_bin();
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
        }
        let data = dir.path().join("data");
        must(
            as_owner(&bin.join("initdb")).arg("-D").arg(&data).args([
                "--auth=trust",
                "-U",
                "latkit",
                "-E",
                "UTF8",
                "--no-sync",
            ]),
            "initdb",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        must(
            as_owner(&bin.join("pg_ctl"))
                .arg("-D")
                .arg(&data)
                .arg("-o")
                .arg(format!(
                    "-h 127.0.0.1 -p {port} -k {} -F",
                    dir.path().display()
                ))
                .arg("-l")
                .arg(dir.path().join("server.log"))
                .args(["-w", "start"]),
            "pg_ctl start",
        );
        PgServer { dir, bin, port }
    }

    /// A new empty database on this server.
    fn database(&self, name: &str) -> Db {
        Db::Postgres(self.database_url(name))
    }

    /// A new empty database on this server, by URL.
    pub(crate) fn database_url(&self, name: &str) -> String {
        let admin = format!("postgres://latkit@127.0.0.1:{}/postgres", self.port);
        postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        format!("postgres://latkit@127.0.0.1:{}/{name}", self.port)
    }

    /// The server's main process (the one `kill` stops or ends with its backends).
    pub(crate) fn pid(&self) -> Option<u32> {
        let pid_file = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid"));
        pid_file.ok()?.lines().next()?.parse().ok()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // A test may have stopped it (SIGSTOP): it must run to hear the shutdown.
        if let Some(pid) = self.pid().map(|pid| pid.to_string()) {
            let _ = Process::new("pkill").args(["-CONT", "-P", &pid]).status();
            let _ = Process::new("kill").args(["-CONT", &pid]).status();
        }
        let _ = as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// Go benchmark output: `count` repetitions of each `(name, ns/op)` with ±1 % jitter.
fn go_file(path: &Path, seed: u64, count: usize, benches: &[(&str, f64)]) {
    let mut state = seed;
    let mut jitter = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 0.02 - 0.01
    };
    let mut text =
        String::from("goos: linux\ngoarch: amd64\npkg: example.com/st\ncpu: Test CPU @ 2.00GHz\n");
    for _ in 0..count {
        for (name, ns) in benches {
            text.push_str(&format!(
                "Benchmark{name}-8\t1000000\t{:.1} ns/op\n",
                ns * (1.0 + jitter())
            ));
        }
    }
    std::fs::write(path, text).unwrap();
}

fn runs_of(document: &Value) -> Value {
    document["runs"].clone()
}

/// The runs without their ids: each reading of a file is a new run with a new id.
fn read_runs_of(document: &Value) -> Value {
    let mut runs = runs_of(document);
    for run in runs.as_array_mut().unwrap() {
        run.as_object_mut().unwrap().remove("id");
    }
    runs
}

fn round_trip_every_kind(db: &Db, dir: &Path) {
    let inputs = [
        vector("viiper-count3.gobench.txt"),
        vector("gbench-1.7.1.json"),
        vector("xenomai-latency-h.txt"),
        vector("cyclictest-h200.txt"),
        vector("cyclictest-h200.json"),
        vector("rootstream-bench.txt"),
    ];
    for input in &inputs {
        let file = input.to_str().unwrap();
        let stored = db.ok(dir, &["store", "add", file]);
        assert!(stored.starts_with("stored #"), "{stored}");
        let exported = db.json(dir, &["store", "export", "@latest"]);
        let parsed = crate::common::parse_json(input);
        assert!(
            read_runs_of(&exported) == read_runs_of(&parsed),
            "{file}: the stored run differs from the file read again"
        );
        // The stored run reports as the file does, in every format.
        for format in ["table", "csv", "bench"] {
            assert_eq!(
                db.ok(dir, &["store", "show", "@latest", "--format", format]),
                crate::common::parse_as(input, format),
                "{file} as {format}"
            );
        }
    }
    // A measured run, stored by the probe itself, equals its own --json.
    let json = dir.join("timer.json");
    db.ok(
        dir,
        &[
            "timer",
            "-T",
            "1",
            "-q",
            "--format",
            "json",
            "--json",
            json.to_str().unwrap(),
            "--store",
            "--tag",
            "measured",
        ],
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let exported = db.json(dir, &["store", "export", "@tag:measured"]);
    assert_eq!(runs_of(&exported), runs_of(&written));
    // Export writes latkit JSON that reads back to the same run.
    let again = dir.join("again.json");
    db.ok(
        dir,
        &[
            "store",
            "export",
            "@tag:measured",
            "--out",
            again.to_str().unwrap(),
        ],
    );
    assert_eq!(
        runs_of(&crate::common::parse_json(&again)),
        runs_of(&written)
    );
    assert_eq!(db.listed(dir, &[]).len(), inputs.len() + 1);
}

fn migrations(db: &Db, dir: &Path) {
    if let Db::Sqlite(path) = db {
        // An empty file is an empty store, not a corrupt one.
        std::fs::write(path, b"").unwrap();
    }
    assert!(db.listed(dir, &[]).is_empty());
    db.listed(dir, &[]);
    // Every migration applied once, in order, however often the store is opened.
    let schema = "SELECT COUNT(*) FROM latkit_schema";
    assert_eq!(db.count(schema), MIGRATIONS);
    assert_eq!(
        db.count("SELECT MAX(version) FROM latkit_schema"),
        MIGRATIONS
    );
    // A store written by a newer latkit is refused, not misread.
    db.execute("INSERT INTO latkit_schema (version) VALUES (99)");
    let err = db.refused(dir, &["store", "list"]);
    assert!(err.contains("version 99 is newer"), "{err}");
    let err = db.refused(
        dir,
        &[
            "store",
            "add",
            vector("rootstream-bench.txt").to_str().unwrap(),
        ],
    );
    assert!(err.contains("upgrade latkit"), "{err}");
}

fn concurrent_writers(db: &Db, dir: &Path) {
    let file = dir.join("go.txt");
    go_file(&file, 7, 3, &[("Encode", 100.0), ("Decode", 50.0)]);
    // Eight writers on a store that does not exist yet: they race to create it, too.
    let writers: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
                .current_dir(dir)
                .args(["store", "add"])
                .args([&file, &file, &file])
                .args(["--db", &db.location()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for writer in writers {
        let out = writer.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runs = db.listed(dir, &[]);
    assert_eq!(runs.len(), 24);
    let mut ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 24, "ids are distinct");
    assert_eq!(db.count("SELECT COUNT(*) FROM figures"), 24 * 2);
    assert_eq!(db.count("SELECT COUNT(*) FROM latkit_schema"), MIGRATIONS);
}

fn killed_writer(db: &Db, dir: &Path) {
    // Kills at moments of the real clock: the interop tier's.
    if !cfg!(feature = "interop") {
        return;
    }
    crate::common::interop_only("killed_writer");
    // Big enough that storing takes a while (~0.25 s): 20,000 benchmarks of 3 repetitions.
    const BENCHES: i64 = 20_000;
    let names: Vec<String> = (0..BENCHES).map(|i| format!("Stage{i}")).collect();
    let benches: Vec<(&str, f64)> = names.iter().map(|n| (n.as_str(), 100.0)).collect();
    let file = dir.join("big.txt");
    go_file(&file, 3, 3, &benches);
    // The store exists before the kills, so that they land in storing, not in creating it.
    db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    for delay_ms in [10, 40, 80, 120, 170, 230, 300] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
            .current_dir(dir)
            .args(["store", "add"])
            .arg(&file)
            .args(["--db", &db.location()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
    }
    // Whatever was killed left nothing half-written: every run has all its figures.
    db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    let runs = db.listed(dir, &[]);
    assert!(!runs.is_empty());
    for run in &runs {
        assert_eq!(run["benchmarks"], BENCHES);
    }
    assert_eq!(
        db.count("SELECT COUNT(*) FROM figures"),
        BENCHES * runs.len() as i64
    );
    let orphans = "SELECT COUNT(*) FROM figures WHERE run_id NOT IN (SELECT id FROM runs)";
    assert_eq!(db.count(orphans), 0);
    let exported = db.json(dir, &["store", "export", "@latest"]);
    assert_eq!(
        exported["runs"][0]["benchmarks"].as_array().unwrap().len() as i64,
        BENCHES
    );
}

/// A new git repository `repo` in `dir`, on branch main.
fn new_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    must(
        Process::new("git")
            .current_dir(&repo)
            .args(["init", "-q", "-b", "main"]),
        "git init",
    );
    repo
}

/// Commits a change in the git repository `repo`, returning the commit.
fn commit(repo: &Path, message: &str) -> String {
    std::fs::write(repo.join("code.txt"), message).unwrap();
    for args in [
        &["add", "code.txt"][..],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            message,
        ],
    ] {
        must(Process::new("git").current_dir(repo).args(args), "git");
    }
    let out = Process::new("git")
        .current_dir(repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The source file of the stored run `reference` names.
fn source_of(db: &Db, dir: &Path, reference: &str) -> String {
    let exported = db.json(dir, &["store", "export", reference]);
    let path = exported["runs"][0]["source"]["path"].as_str().unwrap();
    Path::new(path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn refs(db: &Db, dir: &Path) {
    let repo = new_repo(dir);
    for (i, name) in ["a.txt", "b.txt", "c.txt", "d.txt"].iter().enumerate() {
        go_file(&dir.join(name), i as u64, 2, &[("Op", 100.0)]);
    }
    let add = |file: &str, extra: &[&str]| {
        let path = dir.join(file);
        let mut args = vec!["store", "add", path.to_str().unwrap()];
        args.extend(extra);
        db.ok(&repo, &args);
    };
    let first = commit(&repo, "one");
    add("a.txt", &[]);
    let second = commit(&repo, "two");
    add("b.txt", &["--tag", "v1"]);
    must(
        Process::new("git")
            .current_dir(&repo)
            .args(["checkout", "-qb", "feature"]),
        "git checkout",
    );
    commit(&repo, "three");
    std::fs::write(repo.join("code.txt"), "uncommitted").unwrap();
    add("c.txt", &[]);
    // Outside any repository: no commit at all.
    add("d.txt", &[]);
    let d_dir = dir.join("elsewhere");
    std::fs::create_dir(&d_dir).unwrap();
    db.ok(
        &d_dir,
        &["store", "add", dir.join("d.txt").to_str().unwrap()],
    );

    let runs = db.listed(dir, &[]);
    let ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(runs[0]["commit"], Value::Null);
    assert_eq!(runs[2]["branch"], "feature");
    assert_eq!(runs[2]["dirty"], true);
    assert_eq!(runs[3]["commit"], second.as_str());
    assert_eq!(runs[3]["dirty"], false);
    assert_eq!(runs[3]["tag"], "v1");

    for (reference, file) in [
        ("@latest", "d.txt"),
        ("@-3", "b.txt"),
        ("@-4", "a.txt"),
        (&format!("@{}", ids[4]), "a.txt"),
        (&format!("@{}", &first[..8]), "a.txt"),
        (&format!("@{}", second.to_uppercase()), "b.txt"),
        ("@tag:v1", "b.txt"),
        ("@branch:main", "b.txt"),
        ("@branch:feature", "d.txt"),
    ] {
        assert_eq!(source_of(db, dir, reference), file, "{reference}");
    }
    // Stored runs are inputs like files: compare a stored run with a file.
    let table = db.ok(
        dir,
        &[
            "compare",
            "@tag:v1",
            dir.join("c.txt").to_str().unwrap(),
            "--format",
            "csv",
        ],
    );
    assert!(table.contains(&format!("@tag:v1 (#{}", ids[3])), "{table}");

    for (reference, expected) in [
        ("@-5", "5 before the latest"),
        ("@-18446744073709551615", "before the latest"),
        ("@99999999", "no stored run"),
        ("@tag:v2", "tagged v2"),
        ("@branch:gone", "on branch gone"),
        ("@deadbeef", "at a commit starting deadbeef"),
        ("@nonsense!", "expected @latest, @-N"),
    ] {
        let err = db.refused(dir, &["store", "export", reference]);
        assert!(err.contains(expected), "{reference}: {err}");
        let err = db.refused(dir, &["compare", reference, "@latest"]);
        assert!(err.contains(expected), "{reference}: {err}");
    }
    let err = db.refused(dir, &["store", "show", "a.txt"]);
    assert!(err.contains("stored runs start with @"), "{err}");
}

fn list_show_rm(db: &Db, dir: &Path) {
    let file = dir.join("go.txt");
    go_file(&file, 1, 4, &[("Encode", 100.0), ("Decode", 50.0)]);
    let path = file.to_str().unwrap();
    for tag in ["x", "y", "x", "y", "x"] {
        db.ok(dir, &["store", "add", path, "--tag", tag]);
    }
    assert_eq!(db.listed(dir, &[]).len(), 5);
    assert_eq!(db.listed(dir, &["--last", "2"]).len(), 2);
    assert_eq!(db.listed(dir, &["--tag", "x"]).len(), 3);
    assert!(db.listed(dir, &["--branch", "nowhere"]).is_empty());
    let table = db.ok(dir, &["store", "list", "--last", "1"]);
    assert!(
        table.contains("Benchmarks") && table.contains("go"),
        "{table}"
    );
    assert!(
        db.latkit(dir, &["store", "list", "--last", "0"])
            .output()
            .unwrap()
            .status
            .code()
            == Some(2)
    );

    let newest: Vec<i64> = db.listed(dir, &[])[..2]
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let removed = db.ok(dir, &["store", "rm", "@latest", "@-1"]);
    assert_eq!(
        removed,
        format!("removed #{}\nremoved #{}\n", newest[0], newest[1])
    );
    let left = db.listed(dir, &[]);
    assert_eq!(left.len(), 3);
    assert_eq!(db.count("SELECT COUNT(*) FROM figures"), 3 * 2);
    // One bad reference removes nothing.
    db.refused(dir, &["store", "rm", "@latest", "@tag:none"]);
    assert_eq!(db.listed(dir, &[]).len(), 3);
}

fn history_change_point(db: &Db, dir: &Path) {
    // Eight runs of six repetitions; Encode gets 20 % slower from the fifth.
    for i in 0..8u64 {
        let file = dir.join(format!("run{i}.txt"));
        let encode = if i < 4 { 100.0 } else { 120.0 };
        go_file(&file, i, 6, &[("Encode", encode), ("Decode", 50.0)]);
        db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    }
    let ids = db.ids_oldest_first(dir);
    let report = db.json(dir, &["history", "--format", "json"]);
    let tables = report["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2);
    let change_points = |table: &Value| -> Vec<String> {
        table["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| {
                let cells = row["cells"].as_array().unwrap();
                cells.last().unwrap()["text"]
                    .as_str()
                    .is_some_and(|t| !t.is_empty())
            })
            .map(|row| row["cells"][0]["text"].as_str().unwrap().to_string())
            .collect()
    };
    let by_title = |name: &str| {
        tables
            .iter()
            .find(|t| t["title"].as_str().unwrap().contains(name))
            .unwrap()
    };
    assert_eq!(
        change_points(by_title("Encode")),
        vec![format!("#{}", ids[4])]
    );
    assert!(change_points(by_title("Decode")).is_empty());
    assert_eq!(by_title("Encode")["rows"].as_array().unwrap().len(), 8);

    let last3 = db.json(
        dir,
        &[
            "history", "*Decode*", "--last", "3", "--metric", "ns/op", "--format", "json",
        ],
    );
    assert_eq!(last3["tables"].as_array().unwrap().len(), 1);
    assert_eq!(last3["tables"][0]["rows"].as_array().unwrap().len(), 3);
    let csv = db.ok(dir, &["history", "*Encode*", "--format", "csv"]);
    let rows = csv.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(rows, 1 + 8, "{csv}");

    db.refused(dir, &["history", "Nothing*"]);
    db.refused(dir, &["history", "--metric", "B/op"]);

    // A distribution's statistics have histories too.
    for _ in 0..2 {
        db.ok(
            dir,
            &[
                "store",
                "add",
                vector("xenomai-latency-h.txt").to_str().unwrap(),
            ],
        );
    }
    let p99 = db.json(dir, &["history", "--metric", "p99", "--format", "json"]);
    let rows = p99["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["cells"][4], rows[1]["cells"][4]);
}

/// Thirty commits, each stored under its commit; Encode 40 % slower from the twenty-first:
/// `history --regressions` names the commits between its last fast run and its first slow
/// one and fails as a gate; the site's page of Encode shows that commit and the machine.
fn regressions_and_site(db: &Db, dir: &Path) {
    let repo = new_repo(dir);
    let mut commits = Vec::new();
    for i in 0..30u64 {
        commits.push(commit(&repo, &format!("change {i}")));
        let file = dir.join(format!("run{i}.txt"));
        let encode = if i < 20 { 100.0 } else { 140.0 };
        go_file(&file, i, 5, &[("Encode", encode), ("Decode", 50.0)]);
        db.ok(&repo, &["store", "add", "-q", file.to_str().unwrap()]);
    }
    // As `bisect --store` files a run of an old commit after the newest: measured at its
    // commit, it is placed there, not read as the newest run getting 29 % faster.
    let checkout = |to: &str| {
        must(
            Process::new("git")
                .current_dir(&repo)
                .args(["checkout", "-q", to]),
            "git",
        )
    };
    checkout(&commits[5]);
    let late = dir.join("late.txt");
    go_file(&late, 99, 5, &[("Encode", 100.0), ("Decode", 50.0)]);
    db.ok(&repo, &["store", "add", "-q", late.to_str().unwrap()]);
    checkout("main");
    let out = db
        .latkit(&repo, &["history", "--regressions", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["tables"].as_array().unwrap().len(),
        1,
        "no improvement: {report}"
    );
    let rows = report["tables"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report}");
    assert!(
        report
            .to_string()
            .contains("1 run stored out of commit order"),
        "{report}"
    );
    let text = |i: usize| rows[0]["cells"][i]["text"].as_str().unwrap().to_string();
    assert_eq!(text(0), "BenchmarkEncode");
    // Run in the repository, the range says how many commits it holds: here the one.
    assert_eq!(
        text(4),
        format!("{}..{} (1 commit)", &commits[19][..10], &commits[20][..10])
    );
    let percent = rows[0]["cells"][2]["percent"].as_f64().unwrap();
    assert!((percent - 40.0).abs() < 1.5, "{percent}");

    let site = dir.join("site");
    db.ok(&repo, &["site", "-q", "--out", site.to_str().unwrap()]);
    let page = std::fs::read_to_string(site.join("b/0001-BenchmarkEncode.html")).unwrap();
    assert!(page.contains(&commits[20][..10]), "{page}");
    assert!(
        page.contains("<dd>linux · amd64 · Test CPU @ 2.00GHz</dd>"),
        "{page}"
    );
}

/// A pull request's trend against where it branched: `history --since @merge-base` starts at
/// the run stored at the merge base and shows each later run's change from it, while runs the
/// default branch stored since then stay out of a `--branch` trend.
fn history_since_merge_base(db: &Db, dir: &Path) {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| must(Process::new("git").current_dir(&repo).args(args), "git");
    git(&["init", "-q", "-b", "main"]);
    let mut stored = 0;
    let mut store = |encode: f64| {
        let file = dir.join(format!("run{stored}.txt"));
        go_file(&file, stored, 6, &[("Encode", encode), ("Decode", 50.0)]);
        db.ok(&repo, &["store", "add", file.to_str().unwrap()]);
        stored += 1;
    };
    commit(&repo, "m1");
    store(100.0);
    let base = commit(&repo, "m2");
    store(100.0);
    git(&["checkout", "-qb", "feature"]);
    commit(&repo, "f1");
    store(101.0);
    commit(&repo, "f2");
    store(120.0);
    git(&["checkout", "-q", "main"]);
    commit(&repo, "m3");
    store(80.0);
    git(&["checkout", "-q", "feature"]);
    let ids = db.ids_oldest_first(dir);

    let history = |extra: &[&str]| {
        let mut args = vec![
            "history",
            "*Encode*",
            "--since",
            "@merge-base",
            "--format",
            "json",
        ];
        args.extend(extra);
        db.json(&repo, &args)
    };
    let report = history(&["--branch", "feature"]);
    let table = &report["tables"][0];
    let column = |key: &str| {
        table["columns"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["key"] == key)
            .unwrap_or_else(|| panic!("no {key} column: {table}"))
    };
    let rows = table["rows"].as_array().unwrap();
    let texts: Vec<&str> = rows
        .iter()
        .map(|r| r["cells"][0]["text"].as_str().unwrap())
        .collect();
    let (b, f1, f2) = (ids[1], ids[2], ids[3]);
    assert_eq!(
        texts,
        [format!("#{b} (base)"), format!("#{f1}"), format!("#{f2}")],
        "{table}"
    );
    assert_eq!(rows[0]["cells"][column("commit")]["text"], &base[..10]);
    let from_base = column("change_from_base");
    assert_eq!(rows[0]["cells"][from_base]["type"], "empty", "{table}");
    let change = |row: &Value| row["cells"][from_base].clone();
    assert_eq!(change(&rows[1])["verdict"], "noise", "{table}");
    let regression = change(&rows[2]);
    assert_eq!(regression["verdict"], "significant", "{table}");
    let percent = regression["percent"].as_f64().unwrap();
    assert!((17.0..23.0).contains(&percent), "{percent}");
    let notes = report["notes"].to_string();
    assert!(notes.contains(&format!("starts at run #{b}")), "{notes}");

    // Without --branch the default branch's later run is in the trend too.
    let all = history(&[]);
    assert_eq!(all["tables"][0]["rows"].as_array().unwrap().len(), 4);
    let text = db.ok(&repo, &["history", "*Encode*", "--since", "@merge-base"]);
    assert!(
        text.contains("(base)") && text.contains("vs base"),
        "{text}"
    );

    let err = db.refused(&repo, &["history", "--since", "@merge-base:nosuch"]);
    assert!(err.contains("nosuch"), "{err}");
    let err = db.refused(&repo, &["history", "--since", "run0.txt"]);
    assert!(err.contains("stored runs start with @"), "{err}");
}

fn against_history(db: &Db, dir: &Path) {
    for i in 0..5u64 {
        let file = dir.join(format!("base{i}.txt"));
        go_file(&file, i, 2, &[("Encode", 100.0)]);
        db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    }
    // A run from another machine is stored too, and must not join the base.
    let other = dir.join("other.txt");
    go_file(&other, 9, 2, &[("Encode", 50.0)]);
    let text = std::fs::read_to_string(&other)
        .unwrap()
        .replace("Test CPU", "Other CPU");
    std::fs::write(&other, text).unwrap();
    db.ok(dir, &["store", "add", other.to_str().unwrap()]);

    let new = dir.join("new.txt");
    go_file(&new, 42, 6, &[("Encode", 120.0)]);
    let new = new.to_str().unwrap();
    let out = db
        .latkit(
            dir,
            &[
                "compare",
                "--against-history",
                "5",
                new,
                "--fail-on",
                "ns/op:+5%",
                "--format",
                "csv",
            ],
        )
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{csv}");
    assert!(csv.contains("history (5 runs:"), "{csv}");
    assert!(csv.contains("+2"), "about +20 %: {csv}");

    let out = db
        .latkit(dir, &["compare", "--against-history", "8", new])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("only 5 matching stored runs"), "{stderr}");

    let unrelated = dir.join("unrelated.txt");
    go_file(&unrelated, 1, 6, &[("Other", 10.0)]);
    let err = db.refused(
        dir,
        &[
            "compare",
            "--against-history",
            "3",
            unrelated.to_str().unwrap(),
        ],
    );
    assert!(err.contains("holds no run of these benchmarks"), "{err}");
}

#[test]
fn unreachable_stores_exit_5_unwritable_ones_2_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let out = latkit()
        .args(["store", "list", "--db"])
        .arg("postgres://latkit:hunter2@127.0.0.1:1/none")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("127.0.0.1:1"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");

    let blocked = dir.path().join("not-a-dir");
    std::fs::write(&blocked, "a file").unwrap();
    let out = latkit()
        .args(["store", "list", "--db"])
        .arg(blocked.join("history.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("not-a-dir"));

    // LATKIT_DB names the store when --db does not; XDG_DATA_HOME is the fallback.
    let via_env = dir.path().join("env.db");
    latkit()
        .args(["store", "add"])
        .arg(vector("rootstream-bench.txt"))
        .env("LATKIT_DB", &via_env)
        .assert()
        .success();
    assert!(via_env.exists());
    latkit()
        .args(["store", "add"])
        .arg(vector("rootstream-bench.txt"))
        .env_remove("LATKIT_DB")
        .env("XDG_DATA_HOME", dir.path())
        .assert()
        .success();
    assert!(dir.path().join("latkit/history.db").exists());
}

#[test]
fn parse_store_keeps_the_run_and_reports_as_usual() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::Sqlite(dir.path().join("h.db"));
    let input = vector("viiper-count3.gobench.txt");
    let shown = db.ok(
        dir.path(),
        &[
            "parse",
            input.to_str().unwrap(),
            "--store",
            "--tag",
            "ci",
            "--format",
            "csv",
        ],
    );
    assert_eq!(shown, crate::common::parse_as(&input, "csv"));
    assert_eq!(
        source_of(&db, dir.path(), "@tag:ci"),
        "viiper-count3.gobench.txt"
    );
}

#[test]
fn reading_a_store_that_does_not_exist_names_it_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub/typo.db");
    let db_arg = db.to_str().unwrap();
    for args in [
        &["history", "--db", db_arg][..],
        &["store", "list", "--db", db_arg][..],
        &["store", "show", "@latest", "--db", db_arg][..],
        &["store", "export", "@latest", "--db", db_arg][..],
        &["store", "rm", "@latest", "--db", db_arg][..],
        &["compare", "@-1", "@latest", "--db", db_arg][..],
    ] {
        latkit()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("no history store there yet"));
        assert!(
            !db.exists() && !db.parent().unwrap().exists(),
            "{args:?} created it"
        );
    }
    // Storing creates it; then reading works.
    latkit()
        .arg("parse")
        .arg(vector("viiper-count3.gobench.txt"))
        .args(["--store", "-q", "--db", db_arg])
        .assert()
        .success();
    latkit()
        .args(["store", "list", "--db", db_arg])
        .assert()
        .success();
}

/// History names a Go benchmark as `parse` and `compare` do, without the `-GOMAXPROCS`
/// suffix (a glob copied from their tables matched nothing), keeping it only where one run
/// holds the benchmark at several; a store written before is renamed when opened.
fn one_name_everywhere(db: &Db, dir: &Path) {
    let file = dir.join("go.txt");
    go_file(&file, 1, 3, &[("Encode", 100.0)]);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("BenchmarkMix\t1000\t10 ns/op\nBenchmarkMix-2\t1000\t6 ns/op\n");
    std::fs::write(&file, text).unwrap();
    db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    let compared = db.ok(
        dir,
        &["compare", file.to_str().unwrap(), file.to_str().unwrap()],
    );
    assert!(compared.contains("│ BenchmarkEncode "), "{compared}");
    let titles = |glob: &str| -> Vec<String> {
        let report = db.json(dir, &["history", glob, "--format", "json"]);
        report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap().to_string())
            .collect()
    };
    let encode = titles("BenchmarkEncode");
    assert_eq!(encode.len(), 1, "{encode:?}");
    assert!(!encode[0].contains("-8"), "{encode:?}");
    let mix = titles("BenchmarkMix*");
    assert_eq!(mix.len(), 2, "{mix:?}");
    assert!(mix.iter().any(|t| t.contains("BenchmarkMix-2")), "{mix:?}");

    // The store as the previous schema left it: names as Go printed them.
    db.execute(
        "UPDATE figures SET bench = bench || '-8' WHERE bench = 'BenchmarkEncode';
         UPDATE benches SET bench = bench || '-8' WHERE bench = 'BenchmarkEncode';
         DELETE FROM latkit_schema WHERE version = 3;",
    );
    assert_eq!(titles("BenchmarkEncode").len(), 1);
    assert_eq!(
        db.count("SELECT COUNT(*) FROM figures WHERE bench LIKE '%-8'"),
        0
    );
    assert_eq!(
        db.count("SELECT COUNT(*) FROM benches WHERE bench LIKE '%-8'"),
        0
    );
    assert_eq!(
        db.count("SELECT MAX(version) FROM latkit_schema"),
        MIGRATIONS
    );
    assert_eq!(titles("BenchmarkMix*").len(), 2);
}

/// A full or closed standard output is an output error (exit 4, naming stdout) or, for a
/// reader that went away, nothing: never a panic, for the store's own lines too.
#[test]
fn store_lines_to_a_full_stdout_exit_4_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::Sqlite(dir.path().join("h.db"));
    let input = vector("viiper-count3.gobench.txt");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec!["store", "add", input.to_str().unwrap()],
        vec!["store", "list"],
        vec!["history"],
        vec!["store", "rm", "@latest"],
    ] {
        let out = Process::new(assert_cmd::cargo::cargo_bin("latkit"))
            .current_dir(dir.path())
            .args(&args)
            .args(["--db", &db.location()])
            .stdout(full())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {stderr}");
        assert!(
            stderr.contains("stdout") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
    // The run was stored and removed although neither line could be printed.
    assert!(db.listed(dir.path(), &[]).is_empty());
}

/// RootStream's headline figure, `avg`, and its `min` and `max`: each a history, found by the
/// names `check` takes (`mean` is `avg`); the average doubles at the sixth run.
fn bench_line_histories(db: &Db, dir: &Path) {
    for i in 0..8u64 {
        let file = dir.join(format!("bench{i}.txt"));
        let avg = if i < 5 { 38 } else { 76 } + i % 2;
        let line = format!(
            "BENCH encode_raw: min={}us avg={avg}us max=715us\n",
            36 + i % 2
        );
        std::fs::write(&file, line.repeat(6)).unwrap();
        db.ok(dir, &["store", "add", file.to_str().unwrap()]);
    }
    for name in ["avg", "mean", "min", "max"] {
        let report = db.json(
            dir,
            &[
                "history",
                "encode_raw",
                "--metric",
                name,
                "--format",
                "json",
            ],
        );
        let rows = report["tables"][0]["rows"].as_array().unwrap().len();
        assert_eq!(rows, 8, "{name}: {report}");
    }
    // The doubled average is a regression, named as the figure it is (it said "no stored
    // run has avg").
    let out = db
        .latkit(dir, &["history", "--regressions", "--metric", "avg"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("encode_raw"), "{text}");
    let err = db.refused(dir, &["history", "--metric", "p99"]);
    assert!(err.contains("no stored run has p99"), "{err}");
}
