use super::ReportArgs;
use clap::Args;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// A command to time (repeatable, to compare several); split into words like a shell
    /// would, then run directly (no shell) unless --shell.
    #[arg(short = 'c', long = "command", value_name = "CMD")]
    pub commands: Vec<String>,
    /// A name for the command at the same position (repeatable, as hyperfine's `-n`);
    /// `{NAME}` parameters are replaced in it too.
    #[arg(short = 'n', long = "command-name", value_name = "NAME")]
    pub command_names: Vec<String>,
    /// Exactly N timed runs per command (instead of --min-runs/--max-runs/--min-time).
    #[arg(short = 'r', long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub runs: Option<u64>,
    /// At least N timed runs per command.
    #[arg(short = 'm', long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub min_runs: u64,
    /// At most N timed runs per command [default: no limit].
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
    /// The command to time and its arguments (alternative to -c).
    #[arg(last = true, value_name = "CMD")]
    pub argv: Vec<String>,
    #[command(flatten)]
    pub report: ReportArgs,
}

fn seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=super::MAX_SECONDS as f64).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0 to one year"))
}
