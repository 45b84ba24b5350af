//! tracefs as latkit sets it for one kernel-mode test: timerlat in an instance of its own (and
//! a frozen one with -f), the global settings it changes, and everything put back as it was
//! found, on every way out.

use super::claim::{Claim, Left, LeftInstance};
use crate::host::tracefs::Tracefs;
use crate::ingest::timerlat_trace::Context;

/// The instance latkit reads its samples from, consuming them as they come. An instance of
/// its own, as rtla's, leaves the top level's tracer and buffer to the user.
const READING: &str = "latkit";
/// With -f, a second instance nobody reads: the kernel stops it at the -b sample too, so its
/// buffer keeps the whole trace up to the spike.
const FROZEN: &str = "latkit-frozen";

/// The global timerlat settings latkit changes (every instance shares them).
const KNOBS: [&str; 4] = [
    "osnoise/cpus",
    "osnoise/timerlat_period_us",
    "osnoise/stop_tracing_us",
    "osnoise/stop_tracing_total_us",
];

/// A global setting as found and as latkit wrote it.
struct Knob {
    file: &'static str,
    found: String,
    wrote: Option<String>,
}

/// A tracefs instance latkit runs timerlat in, and what it held before.
struct Instance {
    fs: Tracefs,
    /// latkit made it (and removes it); otherwise its tracer and `tracing_on` go back.
    made: bool,
    found_tracer: String,
    found_on: String,
}

/// tracefs as latkit set it for one test; dropping it (or [`Session::restore`]) writes back
/// what was found. With `-f` and a stop threshold hit, the frozen instance is left for
/// reading.
pub struct Session {
    top: Tracefs,
    knobs: Vec<Knob>,
    reading: Option<Instance>,
    frozen: Option<Instance>,
    /// The kernel's stop threshold (file, µs), armed once both instances trace (-f).
    stop: Option<(&'static str, u64)>,
    restored: bool,
    /// This process measures with this tracefs; released once all is put back.
    claim: Option<Claim>,
    /// What a latkit killed mid-test had left, put back before this test began.
    pub recovered: Option<String>,
    /// The first change another tool made while the test ran, as [`Session::watch`] saw it.
    seen: std::sync::Mutex<Option<String>>,
}

impl Session {
    /// Claims tracefs and refuses when anything else traces with timerlat or osnoise (their
    /// settings are global); otherwise saves the settings (beside the claim too), then starts
    /// timerlat on `cpus` every `period_us` in latkit's instance. With `stop` (-f), the kernel
    /// stops the trace at that many µs in `context` once both instances trace. A failure
    /// part-way restores.
    pub fn start(
        top: Tracefs,
        cpus: &[usize],
        period_us: u64,
        stop: Option<(Context, u64)>,
    ) -> std::result::Result<Session, String> {
        let (claim, left) = Claim::take(top.root())?;
        let recovered = free(&top, left)?;
        let knobs = KNOBS
            .iter()
            .map(|&file| {
                top.read(file).map(|found| Knob {
                    file,
                    found,
                    wrote: None,
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut left = Left {
            found: knobs
                .iter()
                .map(|k| (k.file.to_string(), k.found.clone()))
                .collect(),
            ..Left::default()
        };
        claim.record(&left)?;
        let mut session = Session {
            top,
            knobs,
            reading: None,
            frozen: None,
            stop: stop.map(|(context, us)| match context {
                Context::Irq => ("osnoise/stop_tracing_us", us),
                _ => ("osnoise/stop_tracing_total_us", us),
            }),
            restored: false,
            claim: Some(claim),
            recovered,
            seen: std::sync::Mutex::new(None),
        };
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        for (file, value) in [
            ("osnoise/cpus", list.join(",")),
            ("osnoise/timerlat_period_us", period_us.to_string()),
            ("osnoise/stop_tracing_us", "0".to_string()),
            ("osnoise/stop_tracing_total_us", "0".to_string()),
        ] {
            session.set(file, value)?;
        }
        session.reading = Some(session.open(READING)?);
        if stop.is_some() {
            session.frozen = Some(session.open(FROZEN)?);
        }
        left.instances = session.instances_held();
        if let Some(claim) = &session.claim {
            claim.record(&left)?;
        }
        for instance in [&session.reading, &session.frozen].into_iter().flatten() {
            start_tracing(&instance.fs)?;
        }
        session.arm()?;
        Ok(session)
    }

    /// Arms the kernel's stop threshold (-f) once both instances trace: it stops every
    /// instance at once (an instance started later would stop at its own first sample
    /// above the threshold, one latkit never reads).
    fn arm(&mut self) -> std::result::Result<(), String> {
        match self.stop {
            Some((file, us)) => self.set(file, us.to_string()),
            None => Ok(()),
        }
    }

    /// Whether the instance latkit reads stopped tracing: a stop threshold was hit (the
    /// kernel stops every timerlat instance at once), or someone wrote `tracing_on`.
    pub fn reading_stopped(&self) -> bool {
        self.reading
            .as_ref()
            .is_some_and(|i| i.fs.read("tracing_on").is_ok_and(|on| on == "0"))
    }

    /// The instances this test traces in, as a record for the latkit after a SIGKILL.
    fn instances_held(&self) -> Vec<LeftInstance> {
        [(READING, &self.reading), (FROZEN, &self.frozen)]
            .into_iter()
            .filter_map(|(name, instance)| {
                instance.as_ref().map(|i| LeftInstance {
                    name: name.to_string(),
                    made: i.made,
                    tracer: i.found_tracer.clone(),
                    on: i.found_on.clone(),
                })
            })
            .collect()
    }

    /// Writes a global setting, remembering what it then holds in the kernel's own spelling
    /// (`0,1` reads back as `0-1`).
    fn set(&mut self, file: &'static str, value: String) -> std::result::Result<(), String> {
        let knob = self.knobs.iter_mut().find(|k| k.file == file);
        let knob = knob.ok_or_else(|| format!("{file} is not a setting latkit restores"))?;
        // Recorded first: a write that failed may still have changed the file.
        knob.wrote = Some(value.clone());
        self.top.write(file, &value)?;
        knob.wrote = Some(self.top.read(file)?);
        Ok(())
    }

    /// The instance `name`, made if needed; one latkit left behind is taken over unless it is
    /// tracing (then another latkit runs, and [`Tracefs::osnoise_users`] refused already).
    fn open(&self, name: &str) -> std::result::Result<Instance, String> {
        let (fs, made) = self.top.instance(name)?;
        let found = |file| match made {
            true => Ok(String::new()),
            false => fs.read(file),
        };
        let (found_tracer, found_on) = (found("current_tracer")?, found("tracing_on")?);
        Ok(Instance {
            fs,
            made,
            found_tracer,
            found_on,
        })
    }

    /// Where latkit reads the samples from.
    pub fn pipe(&self) -> std::path::PathBuf {
        let reading = self.reading.as_ref().map_or(&self.top, |i| &i.fs);
        reading.path("trace_pipe")
    }

    /// Where the frozen instance is (-f), to read its trace after the test.
    pub fn frozen_root(&self) -> Option<std::path::PathBuf> {
        self.frozen.as_ref().map(|i| i.fs.root().to_path_buf())
    }

    /// Looks for another tool's changes now (once a second while the test runs): a tool that
    /// starts and ends inside the test leaves nothing to see at its end.
    pub fn watch(&self) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.is_none() {
            *seen = self.changed_now();
        }
    }

    /// What another tool changed while latkit measured: the first change [`Session::watch`]
    /// saw, else one there now. `None` when nothing did.
    pub fn disturbed(&self) -> Option<String> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        seen.or_else(|| self.changed_now())
    }

    /// A global setting that no longer holds what latkit wrote, or another instance or the
    /// top level tracing with timerlat or osnoise.
    fn changed_now(&self) -> Option<String> {
        let mut changes: Vec<String> = self
            .knobs
            .iter()
            .filter_map(|knob| {
                let wrote = knob.wrote.clone()?;
                let now = self.top.read(knob.file).ok()?;
                (now != wrote).then(|| format!("{} is {now}, latkit set {wrote}", knob.file))
            })
            .collect();
        let ours = [READING, FROZEN].map(|name| format!("instance {name}"));
        changes.extend(
            self.top
                .osnoise_users()
                .into_iter()
                .filter(|user| !ours.contains(user))
                .map(|user| format!("{user} started tracing")),
        );
        (!changes.is_empty()).then(|| {
            format!(
                "timerlat's settings were changed while latkit measured ({}; rtla or another \
                 tool?): these figures are not those of the test asked for",
                changes.join("; ")
            )
        })
    }

    /// Puts tracefs back: latkit's instances stop tracing and go (or get back what they
    /// held), and each global setting that still holds what latkit wrote gets back what was
    /// found (one another tool changed since is left to it). With `keep_frozen`, the frozen
    /// instance stays, stopped, with its trace. What could not be done, one line each.
    pub fn restore(&mut self, keep_frozen: bool) -> Vec<String> {
        self.restored = true;
        let mut problems = Vec::new();
        if let Some(frozen) = self.frozen.take() {
            match keep_frozen {
                // The kernel stops it at its whole-µs threshold; -b may be finer.
                true => problems.extend(frozen.fs.write("tracing_on", "0").err()),
                false => problems.extend(put_back(frozen)),
            }
        }
        if let Some(reading) = self.reading.take() {
            problems.extend(put_back(reading));
        }
        for knob in &self.knobs {
            let Some(wrote) = knob.wrote.clone() else {
                continue;
            };
            if self.top.read(knob.file).is_ok_and(|now| now == wrote)
                && let Err(e) = self.top.write(knob.file, &knob.found)
            {
                problems.push(e);
            }
        }
        // What could not be put back stays recorded, for the next latkit to finish.
        if let (true, Some(claim)) = (problems.is_empty(), self.claim.take()) {
            claim.release();
        }
        problems
    }
}

/// Refuses when anything else traces with timerlat or osnoise (their settings are global).
/// latkit's own instances tracing with no latkit holding them were left by one that was
/// killed: with what it found (`left`), they are stopped and its settings put back (said in
/// the returned line); without, the refusal names the commands that clean them.
fn free(top: &Tracefs, left: Option<Left>) -> std::result::Result<Option<String>, String> {
    let ours = |user: &String| {
        [READING, FROZEN]
            .iter()
            .any(|n| *user == format!("instance {n}"))
    };
    let (stale, others): (Vec<String>, Vec<String>) =
        top.osnoise_users().into_iter().partition(ours);
    if !others.is_empty() {
        return Err(format!(
            "timerlat or osnoise is already tracing in {} of {} (rtla or another latkit?); \
             their settings are global, so latkit will not run beside it",
            others.join(", "),
            top.root().display()
        ));
    }
    let Some(left) = left else {
        return match stale.is_empty() {
            true => Ok(None),
            false => Err(cleaning_commands(top, &stale)),
        };
    };
    let mut put = Vec::new();
    for instance in &left.instances {
        let name = instance.name.as_str();
        if [READING, FROZEN].contains(&name) && top.path(&format!("instances/{name}")).is_dir() {
            let (fs, _) = top.instance(name)?;
            let stopped = put_back(Instance {
                fs,
                made: instance.made,
                found_tracer: instance.tracer.clone(),
                found_on: instance.on.clone(),
            });
            stopped.into_iter().next().map_or(Ok(()), Err)?;
            put.push(format!("stopped instances/{name}"));
        }
    }
    for (file, found) in &left.found {
        if KNOBS.contains(&file.as_str()) && top.read(file).is_ok_and(|now| now != *found) {
            top.write(file, found)?;
            put.push(format!("{file} {found}"));
        }
    }
    Ok(Some(format!(
        "a latkit killed during its test (pid {}) had left timerlat as it set it; put back \
         what it found first ({})",
        left.pid,
        match put.is_empty() {
            true => "nothing had changed".to_string(),
            false => put.join(", "),
        }
    )))
}

/// The refusal for latkit's instances left tracing by a run that kept no record: which, and
/// the commands that stop and remove them.
fn cleaning_commands(top: &Tracefs, stale: &[String]) -> String {
    let commands: Vec<String> = [READING, FROZEN]
        .iter()
        .filter(|name| stale.contains(&format!("instance {name}")))
        .map(|name| {
            let dir = top.path(&format!("instances/{name}")).display().to_string();
            format!("echo 0 > {dir}/tracing_on; echo nop > {dir}/current_tracer; rmdir {dir}")
        })
        .collect();
    format!(
        "{} of {} is tracing, left by a latkit that was killed without a record of what it \
         found; check osnoise/ for its settings, then clean it: {}",
        stale.join(", "),
        top.root().display(),
        commands.join("; ")
    )
}

/// Starts timerlat in an instance, its buffer emptied.
fn start_tracing(fs: &Tracefs) -> std::result::Result<(), String> {
    fs.write("tracing_on", "0")?;
    // Setting the tracer it already has keeps the old buffer: empty it.
    fs.write("trace", "")?;
    fs.write("current_tracer", "timerlat")?;
    fs.write("tracing_on", "1")
}

/// Stops timerlat in an instance, then removes it or gives it back what it held.
fn put_back(instance: Instance) -> Vec<String> {
    let fs = &instance.fs;
    let mut problems: Vec<String> = [
        fs.write("tracing_on", "0"),
        fs.write("current_tracer", "nop"),
    ]
    .into_iter()
    .filter_map(std::result::Result::err)
    .collect();
    if instance.made {
        problems.extend(fs.remove().err());
    } else {
        for (file, found) in [
            ("current_tracer", &instance.found_tracer),
            ("tracing_on", &instance.found_on),
        ] {
            problems.extend(fs.write(file, found).err());
        }
    }
    problems
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.restored {
            for problem in self.restore(false) {
                crate::error::say(&format!("latkit: could not restore tracefs: {problem}"));
            }
        }
    }
}
