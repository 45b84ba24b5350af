//! `history --regressions` and `latkit site` on a store filled by the real CLI: the changes
//! listed are the ones made, newest first, with a gate's exit code; the site fetches nothing,
//! escapes what the store holds, and never replaces a directory latkit did not write.

use crate::common::latkit;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Ten steady benchmarks and three that change: `Slow` +30 % from run 25, `Fast` −30 % from
/// run 15, `Late` +25 % in the newest two of 40 runs (5 repetitions each, ±1 % jitter).
fn filled_store(dir: &Path) -> PathBuf {
    let db = dir.join("history.db");
    let mut state = 7u64;
    let mut jitter = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        1.0 + ((state >> 11) as f64 / (1u64 << 53) as f64) * 0.02 - 0.01
    };
    for run in 0..40 {
        let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/site\n");
        for _ in 0..5 {
            let mut line = |name: &str, ns: f64| {
                text.push_str(&format!(
                    "Benchmark{name}-8\t1000\t{:.1} ns/op\n",
                    ns * jitter()
                ));
            };
            for k in 0..10 {
                line(&format!("Steady{k}"), 1000.0 + 100.0 * k as f64);
            }
            line("Slow", if run >= 25 { 1300.0 } else { 1000.0 });
            line("Fast", if run >= 15 { 700.0 } else { 1000.0 });
            line("Late", if run >= 38 { 1250.0 } else { 1000.0 });
        }
        let file = dir.join(format!("run{run:02}.txt"));
        std::fs::write(&file, text).unwrap();
        latkit()
            .current_dir(dir)
            .args(["store", "add", "-q", "--db"])
            .arg(&db)
            .arg(&file)
            .assert()
            .success();
    }
    db
}

/// `latkit store add` of `file` into `db`.
fn store_add(db: &Path, file: &Path) {
    latkit()
        .args(["store", "add", "-q", "--db"])
        .arg(db)
        .arg(file)
        .assert()
        .success();
}

fn history(dir: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    latkit()
        .current_dir(dir)
        .args(["history", "--regressions", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// A listed change: benchmark, first run after the change, how it was found.
type Listed = (String, String, String);

/// Each table's title and rows.
fn listed(out: &std::process::Output) -> Vec<(String, Vec<Listed>)> {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|table| {
            let rows = table["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    let text = |i: usize| row["cells"][i]["text"].as_str().unwrap().to_string();
                    (text(0), text(5), text(7))
                })
                .collect();
            (table["title"].as_str().unwrap().to_string(), rows)
        })
        .collect()
}

fn row(bench: &str, run: &str, found: &str) -> Listed {
    (bench.into(), run.into(), found.into())
}

#[test]
fn regressions_are_listed_newest_first_and_fail_as_a_gate_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = filled_store(d);
    let out = history(d, &db, &["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 regression(s)"));
    assert_eq!(
        listed(&out),
        [
            (
                "Regressions".to_string(),
                vec![
                    row("BenchmarkLate", "#39", "newest 2 runs"),
                    row("BenchmarkSlow", "#26", "change point"),
                ]
            ),
            (
                "Improvements".to_string(),
                vec![row("BenchmarkFast", "#16", "change point")]
            ),
        ]
    );
    // Left out by --ignore, or by the ignore file in the working directory: no regression.
    let quiet = history(
        d,
        &db,
        &["--format", "json", "--ignore", "*Late", "--ignore", "*Slow"],
    );
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(listed(&quiet)[0].1, []);
    std::fs::write(
        d.join(".latkitignore"),
        "# flaky, tracked in #12\n*Late\n\n*Slow\n",
    )
    .unwrap();
    let ignored = history(d, &db, &["--format", "json"]);
    assert_eq!(ignored.status.code(), Some(0));
    assert_eq!(listed(&ignored).len(), 2, "the improvement is still listed");
    // At 80 columns the table fits.
    let narrow = latkit()
        .current_dir(d)
        .env("COLUMNS", "80")
        .args([
            "history",
            "--regressions",
            "--ignore-file",
            "/dev/null",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(narrow.status.code(), Some(1));
    let text = String::from_utf8(narrow.stdout).unwrap();
    assert!(text.contains("BenchmarkLate"), "{text}");
    for line in text.lines() {
        let width = unicode_width::UnicodeWidthStr::width(line);
        assert!(width <= 80, "{width} columns: {line}");
    }
}

#[test]
fn bad_ignore_globs_and_options_exit_2_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = filled_store(d);
    let refused = |args: &[&str], expected: &str| {
        let out = history(d, &db, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    };
    std::fs::write(d.join("ignore.txt"), "*Late\nBenchmark[Slow\n").unwrap();
    refused(
        &["--ignore-file", "ignore.txt"],
        "ignore.txt:2: `Benchmark[Slow` is not a glob",
    );
    refused(
        &["--ignore-file", "missing.txt"],
        "cannot read the ignore file missing.txt",
    );
    refused(&["--ignore", "a{b"], "--ignore: `a{b` is not a glob");
    refused(&["--plot", "x.svg"], "--regressions lists changes");
    refused(
        &["--ignore", "Benchmark*"],
        "every benchmark that matches is ignored",
    );
    assert!(!d.join("x.svg").exists());
}

/// Every HTML file of the site at `root`, with its path.
fn pages(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = vec![(root.join("index.html"), String::new())];
    for entry in std::fs::read_dir(root.join("b")).unwrap() {
        out.push((entry.unwrap().path(), String::new()));
    }
    for (path, text) in &mut out {
        *text = std::fs::read_to_string(&*path).unwrap();
    }
    out
}

/// The page fetches nothing: its policy allows no source but inline styles (and on the index
/// its one inline script, by hash), and it names no address but the SVG namespace.
fn assert_self_contained(path: &Path, html: &str) {
    let policy = html
        .split("http-equiv=\"Content-Security-Policy\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{}: no policy", path.display()));
    assert!(
        policy.starts_with("default-src 'none'; style-src 'unsafe-inline'"),
        "{policy}"
    );
    let scripts: Vec<&str> = html
        .split("<script>")
        .skip(1)
        .map(|s| s.split("</script>").next().unwrap())
        .collect();
    for script in &scripts {
        use sha2::Digest;
        let hash = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            sha2::Sha256::digest(script.as_bytes()),
        );
        assert!(
            policy.contains(&format!("'sha256-{hash}'")),
            "{}: {policy}",
            path.display()
        );
    }
    assert!(scripts.is_empty() || path.ends_with("index.html"));
    let addresses = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !addresses.contains("http:") && !addresses.contains("https:"),
        "{}",
        path.display()
    );
    assert!(!html.contains(" src="), "{}", path.display());
    // Each drawing is well-formed XML.
    for svg in html.split("<svg").skip(1) {
        let svg = format!("<svg{}</svg>", svg.split("</svg>").next().unwrap());
        roxmltree::Document::parse(&svg.replace("&nbsp;", " ")).unwrap();
    }
}

#[test]
fn the_site_lists_what_changed_first_fetches_nothing_and_replaces_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = filled_store(d);
    let site = |out: &str, args: &[&str]| {
        latkit()
            .current_dir(d)
            .args(["site", "-q", "--out", out, "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(site("site", &["--title", "Site <test>"]).status.success());
    let all = pages(&d.join("site"));
    assert_eq!(all.len(), 14, "the index and a page per benchmark");
    for (path, html) in &all {
        assert_self_contained(path, html);
    }
    let index = &all[0].1;
    assert!(index.contains("<title>Site &lt;test&gt;</title>"));
    let at = |text: &str| index.find(text).unwrap_or_else(|| panic!("no {text}"));
    assert!(at("Regressions (2)") < at(">BenchmarkLate<"));
    assert!(at(">BenchmarkLate<") < at(">BenchmarkSlow<"));
    assert!(at(">BenchmarkSlow<") < at("Improvements (1)"));
    assert!(at("Improvements (1)") < at(">BenchmarkFast<"));
    assert!(at(">BenchmarkFast<") < at("All benchmarks"));
    let slow = all
        .iter()
        .find(|(path, _)| path.to_string_lossy().ends_with("BenchmarkSlow.html"))
        .map(|(_, html)| html)
        .unwrap();
    assert!(
        slow.contains("<tr id=\"change-25\">") && slow.contains("<polyline"),
        "{slow}"
    );
    assert!(
        index.contains("href=\"b/0002-BenchmarkSlow.html#change-25\""),
        "{index}"
    );

    // A rebuild replaces the site whole: pages of benchmarks now ignored are gone.
    assert!(site("site", &["--ignore", "*Steady*"]).status.success());
    assert_eq!(pages(&d.join("site")).len(), 4);

    // What latkit did not write is never replaced.
    std::fs::create_dir(d.join("notes")).unwrap();
    std::fs::write(d.join("notes/todo.txt"), "keep me").unwrap();
    std::fs::write(d.join("report.html"), "keep me too").unwrap();
    for (out, expected) in [
        ("notes", "a directory latkit did not write"),
        ("report.html", "not a directory"),
        (".", "holds the history store"),
    ] {
        let refused = site(out, &[]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{out}: {stderr}");
        assert!(stderr.contains(expected), "{out}: {stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("notes/todo.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("report.html")).unwrap(),
        "keep me too"
    );
    // A site's own directory that holds the store is refused too.
    std::fs::create_dir(d.join("withdb")).unwrap();
    std::fs::write(d.join("withdb/.latkit-site"), "").unwrap();
    std::fs::copy(&db, d.join("withdb/history.db")).unwrap();
    let inside = latkit()
        .current_dir(d)
        .args(["site", "--out", "withdb", "--db", "withdb/history.db"])
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(2));
    assert!(d.join("withdb/history.db").exists());
}

#[test]
fn names_from_the_store_are_escaped_and_never_name_a_file_outside_the_site() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("history.db");
    let name = "BM_<script>alert(1)</script>\\\"'&/../../x";
    for run in 0..3 {
        let entry = |v: f64| {
            serde_json::json!({"name": name, "run_type": "iteration", "iterations": 1000,
                               "real_time": v, "cpu_time": v, "time_unit": "ns"})
        };
        let doc = serde_json::json!({"context": {"num_cpus": 2},
            "benchmarks": [entry(100.0 + run as f64), entry(101.0 + run as f64)]});
        let file = d.join(format!("g{run}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        store_add(&db, &file);
    }
    latkit()
        .current_dir(d)
        .args(["site", "-q", "--out", "site", "--db"])
        .arg(&db)
        .assert()
        .success();
    let all = pages(&d.join("site"));
    for (path, html) in &all {
        assert_self_contained(path, html);
        assert!(!html.contains("<script>alert"), "{}", path.display());
        assert_eq!(
            path.parent().unwrap().file_name().unwrap() == "b",
            path != &all[0].0
        );
    }
    assert!(all[0].1.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

/// The commits of `repo`, oldest first.
fn commits(repo: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .current_dir(repo)
        .args(["rev-list", "--reverse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A generated project's history stored through the CLI under 150 git commits (30 benchmarks,
/// 15 slowdowns of 10, 25 and 50 % injected at known commits: bench/fill-history.sh): headless
/// Chromium opens the site from file:// with nothing on its console, the filter script runs
/// under the policy, the regressions listed first are exactly the injected ones, newest first,
/// each with the commit range it happened in, and a benchmark's page draws its trend.
#[test]
#[cfg_attr(
    not(feature = "interop"),
    ignore = "needs git, python3 and chromium; `--features interop` runs it"
)]
fn chromium_opens_the_site_of_a_generated_project_with_the_injected_regressions_first() {
    let _cores = crate::common::busy();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary = assert_cmd::cargo::cargo_bin("latkit");
    let filled = std::process::Command::new(root.join("bench/fill-history.sh"))
        .args([d.to_str().unwrap(), "150", "30"])
        .env("LATKIT", &binary)
        .env("LATKIT_DB", d.join("history.db"))
        .output()
        .unwrap();
    crate::common::assert_succeeded(&filled);
    let site = d.join("site");
    latkit()
        .current_dir(d.join("repo"))
        .env("LATKIT_DB", d.join("history.db"))
        .args(["site", "-q", "--title", "Generated project", "--out"])
        .arg(&site)
        .assert()
        .success();

    // What was injected: newest first, by name within a commit, each with its commit range.
    let commits = commits(&d.join("repo"));
    let mut injected: Vec<(usize, String)> =
        std::fs::read_to_string(d.join("results/injected.tsv"))
            .unwrap()
            .lines()
            .map(|line| {
                let mut fields = line.split('\t');
                let commit: usize = fields.next().unwrap().parse().unwrap();
                (commit, fields.next().unwrap().to_string())
            })
            .collect();
    injected.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    assert_eq!(injected.len(), 15);
    let expected: Vec<String> = injected
        .iter()
        .map(|(c, bench)| format!("{bench} {}..{}", &commits[c - 1][..10], &commits[*c][..10]))
        .collect();

    let (dom, console) = crate::html_plots::open(&site.join("index.html"));
    assert!(console.is_empty(), "{console:#?}");
    assert!(
        dom.contains("data-filter=\"ready\""),
        "the filter script ran"
    );
    let table = dom
        .split("<table id=\"regressions-table\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .expect("a table of regressions");
    let listed: Vec<String> = table
        .split("<tr data-name=")
        .skip(1)
        .map(|row| {
            let name = row.split("\">").nth(2).unwrap().split('<').next().unwrap();
            let range = row
                .split("<code>")
                .nth(1)
                .unwrap()
                .split('<')
                .next()
                .unwrap();
            format!("{name} {range}")
        })
        .collect();
    assert_eq!(listed, expected);
    // Both headings are there, regressions first (an absent one would compare as None).
    let heading = |text: &str| dom.find(text).unwrap_or_else(|| panic!("no {text}"));
    assert!(heading("Regressions (15)") < heading("Improvements (0)"));
    // Built in the project's repository, each range says it holds the one commit.
    assert_eq!(table.matches("(1 commit)").count(), 15);

    // The address filters the rows.
    let address = format!(
        "file://{}#filter=case_009",
        site.join("index.html").display()
    );
    let (filtered, console) = crate::html_plots::open_address(&address);
    assert!(console.is_empty(), "{console:#?}");
    let all = filtered.split("<table id=\"all-table\">").nth(1).unwrap();
    let shown: Vec<&str> = all
        .split("<tr data-name=\"")
        .skip(1)
        .filter(|row| !row.split('>').next().unwrap().contains("hidden"))
        .map(|row| row.split('"').next().unwrap())
        .collect();
    assert_eq!(shown, ["benchmarkpipeline_present/case_009"]);
    // An address that is no valid escape is taken as typed: the box still shows.
    let address = format!("file://{}#filter=%", site.join("index.html").display());
    let (broken, console) = crate::html_plots::open_address(&address);
    assert!(console.is_empty(), "{console:#?}");
    assert!(
        broken.contains("data-filter=\"ready\""),
        "the filter box shows"
    );

    // The newest regression's page draws its trend with the change marked.
    let link = table
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('#')
        .next()
        .unwrap();
    let page = site.join(link);
    let (dom, console) = crate::html_plots::open(&page);
    assert!(console.is_empty(), "{console:#?}");
    assert!(
        dom.contains("<polyline") && dom.contains("mark-worse"),
        "{dom}"
    );
    assert!(crate::html_plots::screenshot_variance(&page, d) > 100.0);
}

/// The site is exchanged with the old one in a step: concurrent builds all succeed and leave
/// no copies, a copy a killed build left is removed by the next, a link at `--out` is written
/// through (the deploy target fills, the link stays), the umask holds, and an `--out` that
/// holds the working directory or links to nothing is refused before anything is written.
#[test]
fn the_site_replaces_its_directory_in_one_step_and_only_where_it_may() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = filled_store(d);
    let site = |out: &Path, cwd: &Path| {
        latkit()
            .current_dir(cwd)
            .args(["site", "-q", "--db"])
            .arg(&db)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let copies = || {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".latkit-site-"))
            .count()
    };
    // A copy left by a build that was killed: its owner (pid 999999999) is gone.
    std::fs::create_dir(d.join(".latkit-site-999999999.1-left")).unwrap();
    let builds: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("latkit"))
                .args(["site", "-q", "--db"])
                .arg(&db)
                .arg("--out")
                .arg(d.join("site"))
                .spawn()
                .unwrap()
        })
        .collect();
    for build in builds {
        assert!(build.wait_with_output().unwrap().status.success());
    }
    assert_eq!(copies(), 0, "copies left beside the site");
    assert!(d.join("site/index.html").is_file());
    // A link to the deploy target.
    std::fs::create_dir(d.join("deploy")).unwrap();
    std::os::unix::fs::symlink("deploy", d.join("link")).unwrap();
    assert!(site(&d.join("link"), d).status.success());
    assert!(
        std::fs::symlink_metadata(d.join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        d.join("deploy/index.html").is_file(),
        "the target stayed empty"
    );
    // umask 077: nobody else reads it.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 077 && exec '{}' site -q --db '{}' --out '{}'",
            assert_cmd::cargo::cargo_bin("latkit").display(),
            db.display(),
            d.join("private").display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mode = std::fs::metadata(d.join("private"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    // Refused, nothing written or deleted.
    let inside = d.join("site/b");
    let refused = site(&d.join("site"), &inside);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(inside.is_dir() && d.join("site/index.html").is_file());
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
    let refused = site(&d.join("dangling"), d);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert_eq!(copies(), 0);
}

/// A repository's `.latkitignore` is read as a spec is: a link to /dev/zero, a FIFO or a
/// file over 1 MiB is refused (exit 2) at once, where it drove memory to gigabytes or hung.
#[test]
fn an_ignore_file_that_is_no_small_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = filled_store(d);
    let ignore = d.join(".latkitignore");
    let run = |args: &[&str]| {
        latkit()
            .current_dir(d)
            .args(args)
            .arg("--db")
            .arg(&db)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap()
    };
    for make in ["zero", "fifo", "big"] {
        let _ = std::fs::remove_file(&ignore);
        match make {
            "zero" => std::os::unix::fs::symlink("/dev/zero", &ignore).unwrap(),
            "fifo" => nix::unistd::mkfifo(&ignore, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            _ => std::fs::write(&ignore, "# x\n".repeat(300_000)).unwrap(),
        }
        for args in [
            &["history", "--regressions", "-q"][..],
            &["site", "--out", "s", "-q"],
        ] {
            let out = run(args);
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{make} {args:?}: {said}");
            assert!(said.contains(".latkitignore"), "{said}");
        }
    }
}

/// The same inputs with `SOURCE_DATE_EPOCH` set give the same bytes, run after run: a run read
/// from a file is named by its content, and reports say they were made at that time. A value
/// that is not seconds since 1970 is refused.
#[test]
fn the_same_inputs_at_the_same_source_date_give_byte_identical_reports_and_sites() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (run, ns) in [(0, 100.0), (1, 101.0), (2, 140.0)] {
        let file = dir.path().join(format!("r{run}.txt"));
        let lines: String = (0..5)
            .map(|i| format!("BenchmarkA-8\t1000\t{:.1} ns/op\n", ns + i as f64))
            .collect();
        std::fs::write(&file, lines).unwrap();
        store_add(&db, &file);
    }
    let made = |args: &[&str], out: &str| {
        latkit()
            .current_dir(dir.path())
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .args(args)
            .args(["--out", out])
            .assert()
            .success();
        out.to_string()
    };
    for format in ["json", "html", "markdown", "csv"] {
        let once = made(
            &["parse", "r0.txt", "--format", format],
            &format!("a.{format}"),
        );
        let again = made(
            &["parse", "r0.txt", "--format", format],
            &format!("b.{format}"),
        );
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(read(&once), read(&again), "{format}");
    }
    let json = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert!(
        json.contains("\"generated\": \"2023-11-14T22:13:20Z\""),
        "{json}"
    );
    let html = std::fs::read_to_string(dir.path().join("a.html")).unwrap();
    assert!(html.contains("Generated 2023-11-14T22:13:20Z"));
    let db = db.to_str().unwrap();
    made(&["site", "--db", db], "site1");
    made(&["site", "--db", db], "site2");
    let files = |root: &str| {
        let mut files = std::collections::BTreeMap::new();
        let mut dirs = vec![dir.path().join(root)];
        while let Some(at) = dirs.pop() {
            for entry in std::fs::read_dir(&at).unwrap() {
                let path = entry.unwrap().path();
                match path.is_dir() {
                    true => dirs.push(path),
                    false => {
                        let name = path.strip_prefix(dir.path().join(root)).unwrap();
                        files.insert(name.to_path_buf(), std::fs::read(&path).unwrap());
                    }
                }
            }
        }
        files
    };
    let (one, two) = (files("site1"), files("site2"));
    assert!(one.len() >= 2, "{} files", one.len());
    assert!(one == two, "the two sites differ");
    latkit()
        .current_dir(dir.path())
        .env("SOURCE_DATE_EPOCH", "yesterday")
        .args(["parse", "r0.txt"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "SOURCE_DATE_EPOCH `yesterday` is not whole seconds since 1970",
        ));
}

/// Every stored figure can be chosen on a benchmark's page: a Go benchmark's ns/op page links
/// its B/op and allocs/op pages, the B/op page draws B/op and shows the change made there
/// (16 → 24 B/op from the sixth run), and the index lists the ns/op pages and their changes
/// alone.
#[test]
fn each_stored_figure_has_its_page_and_every_page_offers_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    for run in 0..8 {
        let bytes = if run >= 5 { 24 } else { 16 };
        let mut text = String::from("goos: linux\npkg: example.com/site\n");
        for k in 0..5 {
            text.push_str(&format!(
                "BenchmarkA-8\t1000\t{} ns/op\t{bytes} B/op\t1 allocs/op\n",
                1000 + k
            ));
        }
        let file = dir.path().join(format!("run{run}.txt"));
        std::fs::write(&file, text).unwrap();
        store_add(&db, &file);
    }
    let site = dir.path().join("site");
    latkit()
        .args(["site", "-q", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&site)
        .assert()
        .success();
    let all = pages(&site);
    let page = |what: &str| {
        let (_, html) = (all.iter())
            .find(|(_, html)| html.contains(&format!("<strong>{what}</strong>")))
            .unwrap_or_else(|| panic!("no page of {what}"));
        html.clone()
    };
    let ns = page("ns/op");
    assert!(
        ns.contains(">B/op</a>") && ns.contains(">allocs/op</a>"),
        "{ns}"
    );
    let bytes = page("B/op");
    assert!(bytes.contains("<h2>Changes</h2>"), "{bytes}");
    assert!(
        bytes.contains("<td>24.00 B/op</td>") && bytes.contains("+50.00%"),
        "{bytes}"
    );
    assert!(!page("allocs/op").contains("<h2>Changes</h2>"));
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert_eq!(
        index.matches("<tr data-name=\"benchmarka\">").count(),
        1,
        "{index}"
    );
    assert!(index.contains("Regressions (0)"), "{index}");
}
