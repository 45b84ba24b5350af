use super::ReportArgs;
use crate::commands::Runs;
use crate::commands::interleave::{AUTO_MAX_ROUNDS, AUTO_MIN_ROUNDS};
use crate::error::Error;
use crate::runner::exec::CommandOutput;
use clap::Args;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Commands to time, one per argument, as hyperfine takes them: `latkit exec 'sleep 0.1'
    /// 'sleep 0.2'` compares two. Each is split into words like a shell would, then run
    /// directly (no shell) unless --shell.
    #[arg(value_name = "COMMAND", conflicts_with = "commands")]
    pub positional: Vec<String>,
    /// A command to time (repeatable), as a positional COMMAND is.
    #[arg(short = 'c', long = "command", value_name = "CMD")]
    pub commands: Vec<String>,
    /// A name for the command at the same position (repeatable, as hyperfine's `-n`);
    /// `{NAME}` parameters are replaced in it too.
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub command_names: Vec<String>,
    /// Exactly N timed runs per command (instead of --min-runs/--max-runs/--min-time); or
    /// `auto` with two or more commands: run them in rounds, each once per round in turn
    /// (backwards every other round),
    /// until every --fail-on gate on the later commands against the first is decided (a
    /// change beyond its threshold, or one shown within it) by a sequential test that keeps
    /// false alarms within --alpha; still undecided after --max-runs rounds exits 3.
    #[arg(short = 'r', long, value_name = "N|auto", value_parser = super::runs_or_auto)]
    pub runs: Option<crate::commands::Runs>,
    /// At least N timed runs per command [default: 10; 3 rounds with --runs auto].
    #[arg(short = 'm', long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub min_runs: Option<u64>,
    /// At most N timed runs per command [default: no limit; 30 rounds with --runs auto].
    #[arg(short = 'M', long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_runs: Option<u64>,
    /// Keep running each command until this many seconds have passed (within the run counts).
    #[arg(long, value_name = "S", default_value_t = 3.0, value_parser = seconds)]
    pub min_time: f64,
    /// Untimed runs before the timed ones (warm caches).
    #[arg(short = 'w', long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub warmup: u64,
    /// Run CMD (through `sh -c`) before every run, warm-up included; untimed.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Option<String>,
    /// Run CMD (through `sh -c`) once before each command's runs.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Run CMD (through `sh -c`) once after each command's runs.
    #[arg(short = 'C', long, value_name = "CMD")]
    pub cleanup: Option<String>,
    /// Run every command once per value, `{NAME}` replaced: `-L size 64,1024,65536`.
    /// Repeatable: every combination of the lists' values is run.
    #[arg(short = 'L', long = "parameter-list", num_args = 2,
          value_names = ["NAME", "VALUES"], conflicts_with = "parameter_scan")]
    pub parameter_list: Vec<String>,
    /// Run every command once per integer from MIN to MAX, `{NAME}` replaced.
    #[arg(short = 'P', long = "parameter-scan", num_args = 3,
          value_names = ["NAME", "MIN", "MAX"])]
    pub parameter_scan: Vec<String>,
    /// Do not fail on a non-zero exit; the runs count, with a warning.
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,
    /// Run commands through this shell (`sh -c CMD`) and subtract its measured start-up
    /// time, as hyperfine does; default: no shell, nothing to subtract.
    #[arg(short = 'S', long, value_name = "SHELL")]
    pub shell: Option<String>,
    /// Spawn commands directly, with no shell: the default, accepted for hyperfine's `-N`.
    #[arg(short = 'N', long = "no-shell", conflicts_with = "shell")]
    pub no_shell: bool,
    /// Where the commands' standard output goes: `null` (the default), `pipe` (read and
    /// discarded, for programs that behave differently on /dev/null), `inherit`, or a FILE
    /// (emptied before each run, so it holds the last run's), as hyperfine's `--output`. Their stderr is kept
    /// aside, and its last lines shown if a run fails.
    #[arg(long, value_name = "WHERE", conflicts_with = "show_output",
          value_parser = |s: &str| Ok::<_, String>(CommandOutput::parse(s)))]
    pub output: Option<CommandOutput>,
    /// Let the commands write to the terminal (stdout and stderr): `--output inherit`.
    #[arg(long)]
    pub show_output: bool,
    /// What each run measures: `time` (wall, user and system time, peak memory),
    /// `instructions` (counted by valgrind over the command and its children: the same
    /// whatever else the machine does; 2 runs unless -r says), or `time,instructions`.
    #[arg(long, value_name = "WHAT", default_value = "time",
          value_parser = crate::runner::counts::Measure::parse)]
    pub measure: crate::runner::counts::Measure,
    /// After `--`: one command to time and its arguments, word by word, with no quoting.
    #[arg(last = true, value_name = "ARGS")]
    pub argv: Vec<String>,
    #[command(flatten)]
    pub gate: super::compare::GateArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

fn seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=super::MAX_SECONDS as f64).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0 to one year"))
}

impl ExecArgs {
    pub(super) fn into_options(self) -> Result<crate::commands::ExecOptions, Error> {
        let parameters = self.parameters()?;
        let mut commands = self.commands;
        commands.extend(self.positional);
        if !self.argv.is_empty() {
            commands.push(
                shlex::try_join(self.argv.iter().map(String::as_str)).map_err(|e| {
                    Error::Input(format!("the command after -- cannot be quoted: {e}"))
                })?,
            );
        }
        Ok(crate::commands::ExecOptions {
            commands,
            names: self.command_names,
            parameters,
            auto: self.runs == Some(Runs::Auto),
            timing: crate::runner::exec::Timing {
                runs: match self.runs {
                    Some(Runs::Count(n)) => Some(n.into()),
                    _ => None,
                },
                min_runs: self.min_runs.unwrap_or(match self.runs {
                    Some(Runs::Auto) => AUTO_MIN_ROUNDS,
                    _ => 10,
                }),
                max_runs: self.max_runs.or(match self.runs {
                    Some(Runs::Auto) => Some(AUTO_MAX_ROUNDS),
                    _ => None,
                }),
                min_time: self.min_time,
                warmup: self.warmup,
                prepare: self.prepare,
                setup: self.setup,
                cleanup: self.cleanup,
                ignore_failure: self.ignore_failure,
                shell: self.shell.filter(|_| !self.no_shell),
                measure: self.measure,
            },
            output: match (self.show_output, self.output) {
                (true, _) => CommandOutput::Inherit,
                (false, output) => output.unwrap_or(CommandOutput::Null),
            },
            gate: self.gate.into(),
            report: self.report.into(),
        })
    }

    /// The values each parameter takes: `-L NAME a,b,c` (repeatable) or `-P NAME MIN MAX`.
    fn parameters(&self) -> Result<Vec<(String, Vec<String>)>, Error> {
        if let [name, min, max] = &self.parameter_scan[..] {
            let bound = |text: &str| {
                text.parse::<i64>().map_err(|_| {
                    Error::Input(format!("--parameter-scan: `{text}` is not an integer"))
                })
            };
            let (min, max) = (bound(min)?, bound(max)?);
            if max < min || max - min > 100_000 {
                return Err(Error::Input(format!(
                    "--parameter-scan {name} {min} {max}: expected MIN <= MAX, at most 100000 apart"
                )));
            }
            return Ok(vec![(
                name.clone(),
                (min..=max).map(|v| v.to_string()).collect(),
            )]);
        }
        let mut lists: Vec<(String, Vec<String>)> = Vec::new();
        // clap takes the values two by two (`num_args = 2`).
        for pair in self.parameter_list.chunks_exact(2) {
            let (name, values) = (&pair[0], &pair[1]);
            if lists.iter().any(|(n, _)| n == name) {
                return Err(Error::Input(format!(
                    "--parameter-list {name} given twice: give each parameter once"
                )));
            }
            lists.push((
                name.clone(),
                values.split(',').map(str::to_string).collect(),
            ));
        }
        Ok(lists)
    }
}
