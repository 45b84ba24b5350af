//! What `--shell` adds to every run, measured to be taken out: its start-up time and its own
//! instructions.

use super::{Exec, SHELL_PROBES, mean_and_stddev, not_counted, shell_words};
use crate::error::{Error, Result};
use crate::model::Note;

impl Exec {
    /// The shell's own start-up time, to subtract from every run (`--shell`).
    pub(super) fn shell_cost(&self, notes: &mut Vec<Note>) -> Result<f64> {
        let Some(shell) = &self.timing.shell else {
            return Ok(0.0);
        };
        let mut argv = shell_words(shell)?;
        argv.extend(["-c".into(), String::new()]);
        let mut walls = Vec::with_capacity(SHELL_PROBES);
        for _ in 0..SHELL_PROBES {
            let s = self.spawner.time(&argv).map_err(|e| {
                let why = format!("--shell `{shell}` cannot start `{}`: {e}", argv[0]);
                Error::starting(&e, why)
            })?;
            // What fails to run nothing is no shell: every command through it would fail,
            // and the failure would be blamed on the command.
            if !s.status.success() {
                return Err(Error::Input(format!(
                    "--shell `{shell}`: `{} -c ''` (nothing to run) ended with {}: it is not a \
                     shell that runs a command given as -c CMD",
                    argv[0], s.status
                )));
            }
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

    /// The shell's own instructions, to subtract from every count (`--shell` with
    /// `--measure instructions`): what `SHELL -c /usr/bin/true` counts beyond that program alone, each the
    /// median of three counts. Running one program is what the shell is asked to do, so
    /// this holds whether it execs the program away (bash: its start-up until the exec) or
    /// forks and waits for it (dash: 95 k instructions more); `SHELL -c ''` would count a
    /// whole start-up and exit either way (bash: 1.3 M).
    pub(super) fn shell_count(&self, notes: &mut Vec<Note>) -> Result<f64> {
        let Some(shell) = self
            .timing
            .shell
            .as_ref()
            .filter(|_| self.timing.measure.instructions)
        else {
            return Ok(0.0);
        };
        // A path, not `true`, which shells run as a builtin.
        let program = ["/usr/bin/true", "/bin/true"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .ok_or_else(|| Error::Environment("--shell with counts needs /usr/bin/true".into()))?;
        let mut through = shell_words(shell)?;
        through.extend(["-c".into(), program.into()]);
        let median = |argv: &[String]| -> Result<f64> {
            let mut counts = Vec::with_capacity(3);
            for _ in 0..3 {
                let counted =
                    (self.spawner.count(argv)).map_err(|e| not_counted(&argv.join(" "), e))?;
                counts.push(counted.instructions as f64);
            }
            counts.sort_by(f64::total_cmp);
            Ok(counts[1])
        };
        let (with_shell, alone) = (median(&through)?, median(&[program.to_string()])?);
        let own = (with_shell - alone).max(0.0);
        notes.push(Note::info(format!(
            "--shell {shell}: its own instructions, {own} (`{shell} -c {program}` counts \
             {with_shell}, {program} alone {alone}; medians of 3), are subtracted from every count"
        )));
        Ok(own)
    }
}
