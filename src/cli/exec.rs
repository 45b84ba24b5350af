use super::ReportArgs;
use crate::commands::ReportOptions;
use crate::commands::Runs;
use crate::commands::Style;
use crate::commands::interleave::{AUTO_MAX_ROUNDS, AUTO_MIN_ROUNDS};
use crate::error::Error;
use crate::report::hyperfine::{Export, Layout, Sort, TimeUnit};
use crate::runner::exec::{CommandIo, CommandOutput};
use crate::runner::plan::Helpers;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Commands to time, one per argument, as hyperfine takes them: `latkit exec 'sleep 0.1'
    /// 'sleep 0.2'` compares two. Each is split into words like a shell would, then run
    /// directly (no shell) unless --shell.
    #[arg(value_name = "COMMAND")]
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
    #[arg(long, visible_alias = "min-benchmarking-time", value_name = "S",
          default_value_t = 3.0, value_parser = seconds)]
    pub min_time: f64,
    /// Untimed runs before the timed ones (warm caches).
    #[arg(short = 'w', long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub warmup: u64,
    /// Run CMD (through `sh -c`) before every run, warm-ups included; untimed. Once for all
    /// commands, or once per command (the n-th before the n-th command's runs), as hyperfine.
    #[arg(short = 'p', long, value_name = "CMD")]
    pub prepare: Vec<String>,
    /// Run CMD (through `sh -c`) after every run, warm-ups included; untimed. Once for all
    /// commands, or once per command, as --prepare.
    #[arg(short = 'C', long, value_name = "CMD")]
    pub conclude: Vec<String>,
    /// Run CMD (through `sh -c`) once before each command's runs.
    #[arg(short = 's', long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Run CMD (through `sh -c`) once after each command's runs (hyperfine's `-c`: here too,
    /// `-c` is never a command to time).
    #[arg(short = 'c', long, value_name = "CMD")]
    pub cleanup: Option<String>,
    /// Run every command once per value, `{NAME}` replaced: `-L size 64,1024,65536`.
    /// Repeatable: every combination of the lists' values is run.
    #[arg(short = 'L', long = "parameter-list", num_args = 2,
          value_names = ["NAME", "VALUES"], conflicts_with = "parameter_scan")]
    pub parameter_list: Vec<String>,
    /// Run every command once per value from MIN to MAX (integers, or steps of -D),
    /// `{NAME}` replaced.
    #[arg(short = 'P', long = "parameter-scan", num_args = 3, allow_hyphen_values = true,
          value_names = ["NAME", "MIN", "MAX"])]
    pub parameter_scan: Vec<String>,
    /// With --parameter-scan: go from MIN to MAX in steps of DELTA (`-P t 0.3 0.7 -D 0.2`
    /// runs 0.3, 0.5 and 0.7), as hyperfine.
    #[arg(
        short = 'D',
        long = "parameter-step-size",
        value_name = "DELTA",
        requires = "parameter_scan"
    )]
    pub parameter_step: Option<String>,
    /// A command to time first, against which the others' Relative column (and the "% of"
    /// column) is taken, instead of the fastest (hyperfine's --reference).
    #[arg(long, value_name = "CMD")]
    pub reference: Option<String>,
    /// The name the --reference command is shown by.
    #[arg(long, value_name = "NAME", requires = "reference")]
    pub reference_name: Option<String>,
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
    /// What the commands read on standard input: `null` (the default) or a FILE, read from
    /// its start at every run (hyperfine's --input).
    #[arg(long, value_name = "WHERE")]
    pub input: Option<String>,
    /// Also write hyperfine's JSON to FILE (`results[]` with `command`, `mean`, `stddev`,
    /// `median`, `user`, `system`, `min`, `max`, `times`, `exit_codes`, `parameters`), which
    /// hyperfine's scripts read; latkit's own JSON is --json.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write hyperfine's AsciiDoc table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_asciidoc: Option<PathBuf>,
    /// Also write hyperfine's org-mode table to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_orgmode: Option<PathBuf>,
    /// The unit of the exported markup tables (hyperfine's; JSON and CSV keep seconds):
    /// microsecond, millisecond or second [default: the first command's mean's].
    #[arg(short = 'u', long, value_enum, value_name = "UNIT")]
    pub time_unit: Option<TimeUnitArg>,
    /// The order of the rows of the terminal table and exported markup tables: `auto` and
    /// `command` as the commands were given, `mean-time` fastest first.
    #[arg(long, value_enum, value_name = "METHOD", default_value = "auto")]
    pub sort: SortArg,
    /// hyperfine's output styles: `none` prints nothing (files are still written), `basic`
    /// and `nocolor` draw no colours or progress, `auto`, `full` and `color` as latkit's
    /// default (colours and progress on a terminal, unless NO_COLOR).
    #[arg(long, value_enum, value_name = "TYPE", default_value = "auto")]
    pub style: StyleArg,
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

/// `-u`: hyperfine's names.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum TimeUnitArg {
    Microsecond,
    Millisecond,
    Second,
}

/// `--sort`: hyperfine's names.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SortArg {
    Auto,
    Command,
    MeanTime,
}

/// `--style`: hyperfine's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StyleArg {
    Auto,
    Basic,
    Full,
    Nocolor,
    Color,
    None,
}

fn seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=super::MAX_SECONDS as f64).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0 to one year"))
}

impl ExecArgs {
    pub(super) fn into_options(mut self) -> Result<crate::commands::ExecOptions, Error> {
        let parameters = self.parameters()?;
        let (commands, names) = self.commands_and_names()?;
        let hyperfine = self.hyperfine_exports();
        let silent = self.style == StyleArg::None;
        let mut report: ReportOptions = self.report.into();
        report.output.hyperfine = hyperfine;
        report.output.quiet |= silent;
        report.output.style = match self.style {
            StyleArg::None => Style::Silent,
            StyleArg::Basic | StyleArg::Nocolor => Style::Plain,
            StyleArg::Auto | StyleArg::Full | StyleArg::Color => Style::Default,
        };
        // The Relative column divides by the reference, shown by the first name.
        report.relative_to = self.reference.is_some().then(|| names[0].clone());
        Ok(crate::commands::ExecOptions {
            commands,
            names,
            parameters,
            helpers: Helpers {
                setup: self.setup.into_iter().collect(),
                prepare: self.prepare,
                conclude: self.conclude,
                cleanup: self.cleanup.into_iter().collect(),
            },
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
                ignore_failure: self.ignore_failure,
                shell: self.shell.filter(|_| !self.no_shell),
                measure: self.measure,
            },
            io: CommandIo {
                output: match (self.show_output, self.output) {
                    (true, _) => CommandOutput::Inherit,
                    (false, output) => output.unwrap_or(CommandOutput::Null),
                },
                input: self.input.filter(|i| i != "null").map(PathBuf::from),
            },
            fastest_first: matches!(self.sort, SortArg::MeanTime),
            gate: self.gate.into(),
            report,
        })
    }

    /// The commands in the order they run (--reference first, the one after `--` last) and
    /// the names given them (the reference's first, when it has one).
    fn commands_and_names(&mut self) -> Result<(Vec<String>, Vec<String>), Error> {
        let mut commands: Vec<String> = self.reference.iter().cloned().collect();
        commands.append(&mut self.commands);
        if !self.argv.is_empty() {
            commands.push(
                shlex::try_join(self.argv.iter().map(String::as_str)).map_err(|e| {
                    Error::Input(format!("the command after -- cannot be quoted: {e}"))
                })?,
            );
        }
        let mut names = Vec::new();
        if let Some(reference) = &self.reference {
            let shown = crate::model::redact::line(reference);
            names.push(self.reference_name.clone().unwrap_or(shown));
        }
        names.append(&mut self.command_names);
        Ok((commands, names))
    }

    /// hyperfine's exports asked for, in its layouts with `-u` and `--sort` applied: on
    /// `exec`, `--export-markdown` and `--export-csv` write hyperfine's files too.
    fn hyperfine_exports(&mut self) -> Vec<(Export, PathBuf)> {
        let unit = self.time_unit.map(|unit| match unit {
            TimeUnitArg::Microsecond => TimeUnit::Microsecond,
            TimeUnitArg::Millisecond => TimeUnit::Millisecond,
            TimeUnitArg::Second => TimeUnit::Second,
        });
        let sort = match self.sort {
            SortArg::MeanTime => Sort::MeanTime,
            SortArg::Auto | SortArg::Command => Sort::Command,
        };
        let output = &mut self.report.output;
        [
            (Layout::Json, self.export_json.take()),
            (Layout::Csv, output.export_csv.take()),
            (Layout::Markdown, output.export_markdown.take()),
            (Layout::Asciidoc, self.export_asciidoc.take()),
            (Layout::Orgmode, self.export_orgmode.take()),
        ]
        .into_iter()
        .filter_map(|(layout, path)| Some((Export { layout, unit, sort }, path?)))
        .collect()
    }

    /// The values each parameter takes: `-L NAME a,b,c` (repeatable) or `-P NAME MIN MAX
    /// [-D DELTA]`.
    fn parameters(&self) -> Result<Vec<(String, Vec<String>)>, Error> {
        if let [name, min, max] = &self.parameter_scan[..] {
            let values = crate::runner::plan::scan(min, max, self.parameter_step.as_deref())
                .map_err(|why| {
                    Error::Input(format!("--parameter-scan {name} {min} {max}: {why}"))
                })?;
            return Ok(vec![(name.clone(), values)]);
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
