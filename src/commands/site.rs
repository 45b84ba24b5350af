//! `latkit site`: the history store as a static dashboard in a directory. The site is built
//! beside its destination and moved into place whole, and a directory latkit did not write is
//! never replaced.

use super::Env;
use super::store::LazyStore;
use super::survey::{self, Selection};
use crate::analyze::downsample::downsample;
use crate::analyze::regressions::{Finding, SeriesChanges};
use crate::error::{Error, Result};
use crate::model::Environment;
use crate::report::site::{Machine, SeriesPage, Site, page_path};
use crate::store::{Point, Store};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Marks a directory as a site latkit wrote, which a later build may replace.
const MARKER: &str = ".latkit-site";
/// The newest runs each page draws one by one, and about how many points it draws in all.
const RECENT_DRAWN: usize = 20;
const DRAWN: usize = 60;

pub struct SiteOptions {
    pub selection: Selection,
    pub alpha: f64,
    pub out: PathBuf,
    pub title: String,
    pub db: Option<String>,
    pub quiet: bool,
}

pub fn run(args: SiteOptions, env: &Env) -> Result<()> {
    let location = crate::store::default_location(args.db.as_deref(), &env.vars)?;
    check_destination(&args.out, &location)?;
    let mut lazy = LazyStore::new(Some(&location), &env.vars);
    let store = lazy.existing()?;
    let (findings, mut pages, notes) = survey::regressions(
        store,
        &args.selection,
        args.alpha,
        |bench, points, changes, _| series_page(bench, points, changes, true),
    )?;
    let (mut others, other_findings) = other_figures(store, &args.selection, args.alpha, &pages)?;
    pages.append(&mut others);
    let machines = machines(store, &pages)?;
    let regressions = findings.iter().filter(|f| f.worse()).count();
    let site = Site {
        title: args.title,
        built: format!(
            "latkit {}, {}",
            env!("CARGO_PKG_VERSION"),
            crate::model::timestamp(env.report_time()?)
        ),
        pages,
        findings,
        other_findings,
        notes,
        machines,
    };
    let bytes = write(&site, &args.out)?;
    if !args.quiet {
        env.console.say(&format!(
            "wrote {} ({} pages, {:.1} MB): {regressions} regression(s), {} improvement(s)",
            args.out.join("index.html").display(),
            site.pages.len() + 1,
            bytes as f64 / 1e6,
            site.findings.len() - regressions
        ));
    }
    Ok(())
}

/// A benchmark's page of one figure: its series downsampled around its change points;
/// `listed` for the figure the site was asked for (the index lists those pages).
fn series_page(bench: &str, points: &[Point], changes: &SeriesChanges, listed: bool) -> SeriesPage {
    let change_points: Vec<usize> = changes.change_points.iter().map(|f| f.at).collect();
    let figure = &points[0].figure;
    SeriesPage {
        bench: bench.to_string(),
        what: figure.label(),
        source_unit: figure.source_unit.clone(),
        runs: points.len(),
        drawn: downsample(points, &change_points, RECENT_DRAWN, DRAWN),
        change_points,
        listed,
    }
}

/// Every other stored figure of the benchmarks (B/op and allocs/op beside ns/op, each
/// statistic of a distribution), a page each, so that a benchmark's page offers them all.
/// Each figure's series are judged as a family of their own at `alpha`; their changes are
/// shown on their pages, and the index lists the changes of the figure asked for alone.
fn other_figures(
    store: &mut Store,
    selection: &Selection,
    alpha: f64,
    shown: &[SeriesPage],
) -> Result<(Vec<SeriesPage>, Vec<Finding>)> {
    let (mut pages, mut findings) = (Vec::new(), Vec::new());
    for (metric, statistic) in store.figures()? {
        let label = crate::store::figure_label(&metric, &statistic);
        // As `--metric` takes it: `METRIC` or `METRIC:STATISTIC`.
        let text = match statistic.as_str() {
            "" => metric,
            statistic => format!("{metric}:{statistic}"),
        };
        // Every page shown is of this figure already: its survey would draw them again.
        if selection.metric.as_deref() == Some(text.as_str())
            || shown.iter().all(|p| p.what == label)
        {
            continue;
        }
        let selection = Selection {
            metric: Some(text),
            ..selection.clone()
        };
        let (found, judged, _) =
            match survey::regressions(store, &selection, alpha, |bench, points, changes, _| {
                series_page(bench, points, changes, false)
            }) {
                Ok(surveyed) => surveyed,
                // No benchmark of the selection has this figure.
                Err(Error::Input(_)) => continue,
                Err(e) => return Err(e),
            };
        let new: Vec<SeriesPage> = (judged.into_iter())
            .filter(|p| !shown.iter().any(|s| s.bench == p.bench && s.what == p.what))
            .collect();
        findings.extend(
            (found.into_iter())
                .filter(|f| new.iter().any(|p| p.bench == f.bench && p.what == f.what)),
        );
        pages.extend(new);
    }
    Ok((pages, findings))
}

/// Refuses a destination that is a file, a directory latkit did not write (unless empty), or
/// one that holds the store.
fn check_destination(out: &Path, store: &str) -> Result<()> {
    let refuse = |why: &str| Err(Error::Input(format!("--out {}: {why}", out.display())));
    if !crate::store::is_postgres(store)
        && let (Ok(store), Ok(out)) = (
            std::fs::canonicalize(store),
            std::fs::canonicalize(out).or_else(|_| std::path::absolute(out)),
        )
        && store.starts_with(&out)
    {
        return refuse("holds the history store the site is built from");
    }
    if std::fs::symlink_metadata(out).is_ok() && !out.exists() {
        return refuse("a link to nothing; link it to a directory, or name one");
    }
    // Replacing the site would delete the directory latkit runs in, or one above it.
    if let (Ok(here), Ok(out)) = (
        std::env::current_dir().and_then(std::fs::canonicalize),
        std::fs::canonicalize(out),
    ) && here.starts_with(&out)
    {
        return refuse("holds the working directory; name a directory beside or below it");
    }
    if out.exists() {
        if !out.is_dir() {
            return refuse("not a directory; the site is a directory of pages");
        }
        let empty = std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty && !out.join(MARKER).exists() {
            return refuse(
                "a directory latkit did not write (no .latkit-site in it); the site replaces \
                 its destination whole, so name a new or empty directory",
            );
        }
    }
    Ok(())
}

/// The machine of every run a page draws last in a point, by run id.
fn machines(store: &mut Store, pages: &[SeriesPage]) -> Result<HashMap<i64, Machine>> {
    let mut machines = HashMap::new();
    let mut digests: HashMap<String, String> = HashMap::new();
    for id in pages.iter().flat_map(|p| p.drawn.iter().map(|d| d.last.id)) {
        if machines.contains_key(&id) {
            continue;
        }
        if let Some(environment) = store.environment(id)? {
            let facts = facts(&environment);
            let digest = digests
                .entry(facts.clone())
                .or_insert_with(|| hex::encode(&Sha256::digest(facts.as_bytes())[..4]))
                .clone();
            machines.insert(id, Machine { digest, facts });
        }
    }
    Ok(machines)
}

/// What tells one machine from another: host, system, processor, clock and toolchains.
fn facts(e: &Environment) -> String {
    let mut parts: Vec<String> = [
        &e.hostname,
        &e.os,
        &e.kernel,
        &e.arch,
        &e.cpu_model,
        &e.clocksource,
        &e.virtualization,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    if let Some(cores) = e.cores {
        parts.push(format!("{cores} cores"));
    }
    parts.extend(
        e.toolchains
            .iter()
            .map(|t| format!("{} {}", t.key, t.value)),
    );
    match parts.is_empty() {
        true => "not recorded".into(),
        false => parts.join(" · "),
    }
}

/// Where a site being built, or an old one being removed, waits beside `--out`: the prefix,
/// its owner (`PID.START`) and a random part, so that one a killed build left is removed by the
/// next and one a running build uses is not.
const BUILDING: &str = ".latkit-site-";

/// Writes the site beside `out` and exchanges it with the old one in one step (a reader sees
/// the old site or the new, never half of either; a kill leaves the old one whole); returns its
/// size in bytes. A link at `out` is written through: its target is replaced, the link kept.
fn write(site: &Site, out: &Path) -> Result<u64> {
    let failed = |what: &Path, e: std::io::Error| {
        Error::Output(format!("cannot write the site at {}: {e}", what.display()))
    };
    let out = match std::fs::symlink_metadata(out) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(out).map_err(|e| failed(out, e))?
        }
        _ => out.to_path_buf(),
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| failed(&parent, e))?;
    crate::runner::worktree::remove_stale_owned(&parent, BUILDING);
    let building = tempfile::Builder::new()
        .prefix(&format!("{BUILDING}{}-", crate::runner::worktree::owner()))
        .tempdir_in(&parent)
        .map_err(|e| failed(&parent, e))?;
    let root = building.path();
    std::fs::create_dir(root.join("b")).map_err(|e| failed(root, e))?;
    let mut bytes = 0u64;
    let mut put = |name: &str, text: String| -> Result<()> {
        bytes += text.len() as u64;
        std::fs::write(root.join(name), text).map_err(|e| failed(&root.join(name), e))
    };
    put("index.html", site.index())?;
    for (i, page) in site.pages.iter().enumerate() {
        put(&page_path(i, &page.bench), site.page(i))?;
    }
    put(
        MARKER,
        "A site `latkit site` wrote; the next build replaces this directory.\n".into(),
    )?;
    // A temporary directory is its owner's alone; a site is for whoever the umask lets read.
    use std::os::unix::fs::PermissionsExt;
    let mode = 0o777 & !umask();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(mode))
        .map_err(|e| failed(root, e))?;
    // Where nothing is (or an empty directory), the site moves in. Asking first whether a site
    // is there left a race: of builds that all found none, only the first could move in.
    match std::fs::rename(root, &out) {
        Ok(()) => {
            let _ = building.keep();
            return Ok(bytes);
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST)) => {}
        Err(e) => return Err(failed(&out, e)),
    }
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    match renameat2(AT_FDCWD, root, AT_FDCWD, &out, RenameFlags::RENAME_EXCHANGE) {
        // The old site now waits where the new one was built, and goes with it.
        Ok(()) => drop(building),
        // A file system without the exchange: the old site aside, then the new one in.
        Err(_) => {
            let aside = tempfile::Builder::new()
                .prefix(&format!("{BUILDING}{}-", crate::runner::worktree::owner()))
                .tempdir_in(&parent)
                .map_err(|e| failed(&parent, e))?;
            let old = aside.path().join("old");
            std::fs::rename(&out, &old).map_err(|e| failed(&out, e))?;
            std::fs::rename(root, &out).map_err(|e| failed(&out, e))?;
            let _ = building.keep();
            drop(aside);
        }
    }
    Ok(bytes)
}

/// This process's umask (`/proc/self/status`), 022 when it cannot be read.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}
