//! The names timer results give their metrics and benchmarks: written by every timer source
//! (the probe, the Xenomai and cyclictest readers) and looked up by the sinks that draw or
//! print timer results, so both sides spell them once.

/// The wake-up latency distribution.
pub const LATENCY: &str = "latency";
/// Per-interval series (one value per reporting interval, Xenomai's RTD columns).
pub const INTERVAL_MIN: &str = "interval_min";
pub const INTERVAL_AVG: &str = "interval_avg";
pub const INTERVAL_MAX: &str = "interval_max";
pub const OVERRUNS: &str = "overruns";
pub const MODE_SWITCHES: &str = "mode_switches";
/// The benchmark that combines every measuring thread.
pub const ALL_THREADS: &str = "all";

/// google/benchmark's two times per iteration: wall clock and CPU.
pub const REAL_TIME: &str = "real_time";
pub const CPU_TIME: &str = "cpu_time";

/// A whole command's timing (latkit exec, hyperfine): wall time, and what it used beside it.
pub const WALL_TIME: &str = "time";
pub const USER_TIME: &str = "user";
pub const SYSTEM_TIME: &str = "system";
pub const MAX_RSS: &str = "max_rss";
/// Instructions counted by valgrind: a whole command's (`exec`), and a benchmark's per
/// iteration (`go`, `gbench`).
pub const INSTRUCTIONS: &str = "instructions";
pub const INSTRUCTIONS_PER_OP: &str = "instructions/op";
/// google/benchmark before 1.8 runs no given number of iterations: a count is of one
/// iteration and the benchmark's setup before its loop, and is named so, never `/op`.
pub const INSTRUCTIONS_WITH_SETUP: &str = "instructions/iteration+setup";
/// Every counted metric's name.
pub const COUNTED: [&str; 3] = [INSTRUCTIONS, INSTRUCTIONS_PER_OP, INSTRUCTIONS_WITH_SETUP];

/// What tables show beside a command's wall time, as hyperfine prints it.
pub const COMMAND_RESOURCES: [&str; 3] = [USER_TIME, SYSTEM_TIME, MAX_RSS];

/// CPU times the kernel splits between user and system by clock-tick samples: one run's split
/// is coarse (a short command's system time is mostly 0 or a whole tick), so tables show their
/// mean over the runs, as hyperfine does, not a median that reads 0.
pub fn counted_in_ticks(metric: &str) -> bool {
    metric == USER_TIME || metric == SYSTEM_TIME
}

/// A network run's setting naming the server it measured against (`ADDR:PORT`); comparisons
/// look at its host only, as the port changes from run to run.
pub const SERVER_SETTING: &str = "server";

/// A command run's setting saying how its commands were started: `none` (spawned directly) or
/// the shell they ran through, its start-up subtracted.
pub const SHELL_SETTING: &str = "shell";

/// The [`SHELL_SETTING`] of results that do not say how their commands were started
/// (hyperfine's JSON: through its default shell, or directly with `-N`).
pub const SHELL_UNRECORDED: &str = "unrecorded";
