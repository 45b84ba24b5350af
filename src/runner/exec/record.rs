//! The commands timed so far, built into a run again as each finishes, and the notes an
//! ending leaves.

use super::processes::own_peak_rss;
use super::{Ending, Exec, Sample, Timed};
use crate::ingest::Input;
use crate::model::vocab;
use crate::model::{BenchName, Note, RunBuilder, Source, new_run, timestamp};
use crate::runner::plan::Planned;
use std::time::SystemTime;

/// The commands timed so far, from which the run is built (again, as each one finishes).
#[derive(Clone)]
pub(super) struct Record {
    pub(super) started: SystemTime,
    /// CPU time when timing started, to tell what other processes did meanwhile.
    pub(super) cpu: Option<crate::env::CpuReading>,
    pub(super) host: crate::model::Environment,
    /// The run's id, the same in every result written along the way.
    pub(super) id: Option<String>,
    pub(super) shell_cost: f64,
    /// The shell's own instructions (`--shell` with counts), taken from every count.
    pub(super) shell_count: f64,
    /// The index of each timed command in the plan, with its samples.
    pub(super) timed: Vec<(usize, Vec<Sample>)>,
    pub(super) notes: Vec<Note>,
}

impl Record {
    pub(super) fn input(&mut self, exec: &Exec) -> Input {
        let mut builder = RunBuilder::default();
        for (index, samples) in &self.timed {
            let planned = &exec.commands[*index];
            let params = recorded_params(planned);
            let bench = builder.benchmark_in(&planned.name, None, &params, BenchName::plain);
            builder.name_params(bench, &params);
            for s in samples {
                if exec.timing.measure.time {
                    let wall = (s.wall - self.shell_cost).max(0.0);
                    builder.record(bench, vocab::WALL_TIME, "s", wall);
                    builder.record(bench, vocab::USER_TIME, "s", s.user);
                    builder.record(bench, vocab::SYSTEM_TIME, "s", s.system);
                    builder.record(bench, vocab::MAX_RSS, "B", s.max_rss);
                }
                builder.record_exit(bench, s.status.code());
                if let Some(count) = s.instructions {
                    let count = (count - self.shell_count).max(0.0);
                    builder.record(bench, vocab::INSTRUCTIONS, vocab::INSTRUCTIONS, count);
                }
            }
            builder.set_assume(vocab::INSTRUCTIONS, crate::model::Assume::Counted);
        }
        let source = Source {
            kind: crate::model::SourceKind::Command,
            format: "exec".into(),
            path: None,
            command: exec.commands.iter().map(|c| c.command.clone()).collect(),
        };
        let mut host = self.host.clone();
        host.toolchains.extend(exec.counting.iter().cloned());
        host.checks.extend(
            // Counts do not see other processes: a counted run carries no busy check.
            (self.cpu.filter(|_| !exec.timing.measure.counts_only()))
                .and_then(|started| started.others_busy(&exec.clock.cpu()?)),
        );
        let shell = crate::model::ConfigEntry {
            key: vocab::SHELL_SETTING.into(),
            value: exec.timing.shell.clone().unwrap_or_else(|| "none".into()),
        };
        let mut run = new_run(source, host, vec![shell], builder);
        run.id = self.id.get_or_insert_with(|| run.id.clone()).clone();
        run.started = Some(timestamp(self.started));
        run.ended = Some(timestamp(exec.clock.now()));
        Input {
            runs: vec![run],
            notes: self.notes.clone(),
            malformed: 0,
        }
    }

    pub(super) fn ending(mut self, exec: &Exec, ending: Ending) -> Timed {
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
pub(super) fn interrupted_note(from: &[Planned], cut_short: bool) -> Note {
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
pub(super) fn rss_floor_note(name: &str, samples: &[Sample]) -> Option<Note> {
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

/// A command's parameters as they may be recorded: a value the redaction of the command's
/// name took out of it is a secret (`-L pw X 'mysql -p{pw}'`); any other loses what free
/// text would.
fn recorded_params(planned: &super::Planned) -> Vec<crate::model::ConfigEntry> {
    use crate::model::redact;
    let named_by_command = planned.name == redact::line(&planned.command);
    planned
        .params
        .iter()
        .map(|p| crate::model::ConfigEntry {
            key: p.key.clone(),
            value: match named_by_command
                && planned.command.contains(&p.value)
                && !planned.name.contains(&p.value)
            {
                true => crate::model::secrets::REDACTED.to_string(),
                false => redact::in_text(&p.value),
            },
        })
        .collect()
}
