//! `bisect … -- go|gbench|exec … --measure instructions`: a checkout's run counted as `go`,
//! `gbench` and `exec` count theirs, so that a commit's figure is the same whatever the
//! machine did while it was measured.

use super::counts::{self, Count, Scope};
use super::go_counts::{self, Built};
use super::harness::{Harness, Prepared};
use super::launch::Reach;
use super::{gbench_counts, harness::wall_time};
use crate::ingest::Input;
use crate::model::{Assume, vocab};

impl Prepared {
    /// One counted run of the checkout's harness: each benchmark's instructions per
    /// iteration (go, gbench), or the command's instructions (exec).
    pub(super) fn count(&self) -> Result<Input, String> {
        let reach = Reach::system();
        let version = reach.harness.valgrind().map_err(|e| e.to_string())?;
        match &self.harness {
            Harness::Go { package, flags } => {
                // The benchmarks the binary runs, and their package, from a timed run.
                let listing = self.timed()?;
                let benches = go_counts::counting(&listing);
                let binary = self.go_binary.clone().ok_or("no Go test binary")?;
                let built = [Built {
                    package: benches.first().and_then(|b| b.package.clone()),
                    binary,
                    dir: Some(self.root.join(package)),
                    flags: super::go_flags::split(flags, true).binary,
                }];
                let counts = go_counts::count_all(reach, &built, &benches, Some(1), None)
                    .map_err(|e| e.to_string())?;
                Ok(go_counts::with_counts(listing, counts, false, &version))
            }
            Harness::Gbench { binary, .. } => {
                let program = self.root.join(binary).display().to_string();
                let listed = gbench_counts::list(reach, &program, Some(&self.bench))
                    .map_err(|e| e.to_string())?;
                let (counts, notes) =
                    gbench_counts::count_all(reach, &program, &listed, Some(1), None)
                        .map_err(|e| e.to_string())?;
                let mut input = gbench_counts::with_counts(None, &listed, counts, reach, &version);
                input.notes.extend(notes);
                Ok(input)
            }
            Harness::Exec { command } => {
                let count = Count {
                    program: &command[0],
                    args: &command[1..],
                    dir: Some(&self.root),
                    env: &[],
                    scope: &Scope::Process,
                    printed: false,
                };
                let instructions = reach
                    .harness
                    .counted(&count, &command.join(" "))
                    .map_err(|e| e.to_string())?
                    .instructions;
                Ok(counted_command(command, instructions as f64, &version))
            }
        }
    }
}

/// What `exec` counted of `command`: a run of one benchmark named after it, its instructions.
pub fn counted_command(command: &[String], instructions: f64, version: &str) -> Input {
    let mut input = wall_time(command, 0.0);
    let run = &mut input.runs[0];
    let bench = &mut run.benchmarks[0];
    bench.metrics.clear();
    let unit = crate::model::Unit::parse(vocab::INSTRUCTIONS);
    let mut metric = crate::model::Metric::new(vocab::INSTRUCTIONS, &unit, vocab::INSTRUCTIONS);
    metric.assume = Assume::Counted;
    metric.values.push(instructions);
    bench.metrics.push(metric);
    run.environment
        .toolchains
        .extend(counts::settings(version, counts::WHOLE_COMMAND));
    input
}
