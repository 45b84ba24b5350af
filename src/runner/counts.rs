//! Counted instructions: valgrind runs a program and counts every instruction it executes —
//! cachegrind over the whole process and its children (`exec`), or callgrind over one function
//! and what it calls (a benchmark's function, toggled on at its entry and off at its exit).
//! Counts do not move with other work on the machine: the same binary and input count the same.

use crate::model::ConfigEntry;
use std::io;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// What a run measures: time (and what a harness reports beside it), counted instructions,
/// or both (`--measure time,instructions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measure {
    pub time: bool,
    pub instructions: bool,
}

impl Measure {
    /// Time alone, the default.
    pub const TIME: Measure = Measure {
        time: true,
        instructions: false,
    };

    /// `time`, `instructions`, or both separated by a comma.
    pub fn parse(text: &str) -> Result<Measure, String> {
        let mut measure = Measure {
            time: false,
            instructions: false,
        };
        for word in text.split(',').map(str::trim) {
            match word {
                "time" => measure.time = true,
                "instructions" => measure.instructions = true,
                _ => {
                    return Err(format!(
                        "`{word}`: give `time`, `instructions` or `time,instructions`"
                    ));
                }
            }
        }
        Ok(measure)
    }

    /// Counted instructions, and nothing timed.
    pub fn counts_only(&self) -> bool {
        self.instructions && !self.time
    }
}

/// Counted runs of each benchmark or command (rounds of bisect's ends and --interleave) when
/// none are asked for: enough to show that counts agree run to run, which one cannot.
pub const COUNTED_RUNS: u32 = 3;

/// Counted runs when the first [`COUNTED_RUNS`] spread beyond the floor: counts that vary are
/// tested as samples, and at six a side the gate's permutation test can tell a change at
/// alpha 0.01 (its least one-sided p is 1/924; at three a side it is 1/20).
pub const SPREAD_RUNS: u32 = 6;

/// Whether `values` are counts enough: as many as `asked` when runs were asked for; else
/// [`COUNTED_RUNS`] that agree, or [`SPREAD_RUNS`] that do not.
pub fn enough(values: &[f64], asked: Option<u32>) -> bool {
    let n = values.len() as u32;
    match asked {
        Some(asked) => n >= asked,
        None => n >= COUNTED_RUNS && (crate::model::counts::agree(values) || n >= SPREAD_RUNS),
    }
}

/// What is counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole process and every child it starts.
    Process,
    /// Calls of the functions these callgrind globs name (`*.BenchmarkParse`, `BM_Sort(*`)
    /// and everything they call; each entry and exit flips counting, so no two may nest.
    Function(Vec<String>),
}

/// A program to count: what runs, where, with which environment, and what of it counts.
#[derive(Clone, Copy, Debug)]
pub struct Count<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub dir: Option<&'a Path>,
    pub env: &'a [(&'static str, &'static str)],
    pub scope: &'a Scope,
    /// Keep the last of what the program prints ([`Counted::printed`]); else it is discarded.
    pub printed: bool,
}

impl Count<'_> {
    /// The program and its arguments as one line: `./bm --benchmark_filter=^BM_A$`.
    pub fn line(&self) -> String {
        std::iter::once(self.program)
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a counted run gave: the instructions, how the program ended, and the last lines
/// valgrind and the program said (why it failed, when it did).
#[derive(Clone, Debug)]
pub struct Counted {
    pub instructions: u64,
    /// Of those, the ones in glibc's string functions that copy or fill with `rep movsb` /
    /// `rep stosb` (its `_erms` variants), which valgrind counts once per byte.
    pub string: u64,
    pub status: ExitStatus,
    pub said: Vec<String>,
    /// The last lines the program printed, when [`Count::printed`] asked for them.
    pub printed: Vec<String>,
}

/// valgrind's options for `scope`, its counts and log written into `dir`.
pub fn valgrind_args(scope: &Scope, dir: &Path) -> Vec<String> {
    let at = |name: &str| dir.join(name).display().to_string();
    let mut args = match scope {
        Scope::Process => vec![
            "--tool=cachegrind".to_string(),
            "--cache-sim=no".into(),
            "--branch-sim=no".into(),
            "--trace-children=yes".into(),
            format!("--cachegrind-out-file={}", at("count.%p")),
        ],
        Scope::Function(globs) => {
            let mut args = vec![
                "--tool=callgrind".to_string(),
                "--collect-atstart=no".into(),
            ];
            args.extend(globs.iter().map(|glob| format!("--toggle-collect={glob}")));
            args.push(format!("--callgrind-out-file={}", at("count.%p")));
            args
        }
    };
    args.push(format!("--log-file={}", at("valgrind.%p")));
    args
}

/// The instructions one valgrind output file counted: its `summary:` line (cachegrind's
/// events are instructions alone; callgrind's first event is instructions, `totals:` the
/// same); `None` without one.
pub fn instructions_in(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with("totals:") || l.starts_with("summary:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The instructions a cachegrind output file counts in `rep movsb` / `rep stosb`: in
/// glibc's copies and fills that use them for some sizes (`__memset_avx2_unaligned_erms` and
/// kin: "enhanced rep movsb/stosb"), the one source line that holds most of its function's
/// count. valgrind counts a rep-prefixed instruction once per repetition, so it stands out
/// from a vector loop, whose count spreads over the loop's lines. Line 0 (no line
/// information) tells nothing and is not taken.
pub fn string_instructions_in(text: &str) -> u64 {
    let mut sum: u64 = 0;
    let mut function: Option<(u64, u64)> = None; // (total, the largest line's)
    let mut close = |f: Option<(u64, u64)>| {
        if let Some((total, top)) = f
            && top.saturating_mul(2) > total
        {
            sum = sum.saturating_add(top);
        }
    };
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("fn=") {
            close(function.take());
            function = name.contains("_erms").then_some((0, 0));
        } else if let Some((total, top)) = function.as_mut()
            && let Some((at, count)) = line.split_once(' ')
            && let (Ok(at), Some(Ok(count))) = (
                at.parse::<u64>(),
                count.split_whitespace().next().map(str::parse::<u64>),
            )
        {
            *total = total.saturating_add(count);
            if at != 0 {
                *top = (*top).max(count);
            }
        }
    }
    close(function);
    sum
}

/// The share of a count above which its string instructions are said to dominate it.
pub const STRING_DOMINATES: f64 = 0.5;

/// What to say of a command whose counts are mostly string instructions (`share` of them).
pub fn string_note(name: &str, share: f64) -> String {
    format!(
        "`{name}`: {:.1} % of its count is rep movsb / rep stosb (glibc's memcpy and memset \
         for some sizes): valgrind counts a rep-prefixed instruction once per repetition, a \
         byte at a time, where the CPU moves whole lines, so the count grows with the bytes \
         copied far faster than the time does; compare such commands by time too",
        share * 100.0
    )
}

/// Runs `count` under valgrind: the instructions counted over every output file (a process
/// and its children each write one). `NotFound` when valgrind is not installed.
pub fn run(count: &Count) -> io::Result<Counted> {
    let scratch = tempfile::Builder::new().prefix("latkit-count-").tempdir()?;
    let stderr = std::fs::File::create(scratch.path().join(STDERR))?;
    let stdout = match count.printed {
        true => Stdio::from(std::fs::File::create(scratch.path().join(STDOUT))?),
        false => Stdio::null(),
    };
    let mut command = Command::new("valgrind");
    command
        .args(valgrind_args(count.scope, scratch.path()))
        .arg("--")
        .arg(count.program)
        .args(count.args)
        .envs(FIXED_ENV)
        .envs(count.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    if let Some(dir) = count.dir {
        command.current_dir(dir);
    }
    fixed_layout(&mut command);
    let status = crate::interrupt::status_of(&mut command)?;
    let (mut instructions, mut string) = (0, 0);
    let (mut said, mut printed) = (Vec::new(), Vec::new());
    let mut entries: Vec<_> = std::fs::read_dir(scratch.path())?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("count.") {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let overflow = || {
                io::Error::other(format!(
                    "the counts of {name} and the files before it add up to more than 2^64 instructions"
                ))
            };
            instructions = (instructions_in(&text).unwrap_or(0))
                .checked_add(instructions)
                .ok_or_else(overflow)?;
            string = string_instructions_in(&text)
                .checked_add(string)
                .ok_or_else(overflow)?;
        } else if name == STDOUT {
            printed = tail(&entry.path(), PRINTED);
        } else {
            // valgrind's own log lines start with ==PID==; the program's stderr as it is.
            said.extend(telling(tail(&entry.path(), LOOKED_AT)));
        }
    }
    Ok(Counted {
        instructions,
        string,
        status,
        said,
        printed,
    })
}

/// Where a counted run's program writes, in its scratch directory beside valgrind's files.
const STDOUT: &str = "stdout";
const STDERR: &str = "stderr";

/// The last `lines` lines of the file at `path`, read from its last 64 KiB at most: what a
/// program printed can be any size, and only its end tells how it ended.
fn tail(path: &Path, lines: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    const MOST: u64 = 64 * 1024;
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let length = file.metadata().map_or(0, |m| m.len());
        let _ = file.seek(SeekFrom::Start(length.saturating_sub(MOST)));
        let _ = file.take(MOST).read_to_end(&mut bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

/// What every counted process runs with, so that what can be fixed does not vary: Python's
/// string hashes (and so its dicts' and sets' layout) seeded alike.
pub const FIXED_ENV: [(&str, &str); 1] = [("PYTHONHASHSEED", "0")];

/// How every count is taken beside its tool's own settings, as the environment records it.
pub const FIXED: &str = "address randomisation off (setarch -R), PYTHONHASHSEED=0";

/// Address randomisation off in the counted process and its children, as `setarch -R` does:
/// what a program does with its addresses (a hash of pointers) then repeats.
fn fixed_layout(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: personality(2) is async-signal-safe and touches no memory of this process.
    unsafe {
        command.pre_exec(|| {
            let current = libc::personality(0xffff_ffff);
            if current != -1 {
                libc::personality(
                    (current as libc::c_ulong) | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                );
            }
            Ok(())
        });
    }
}

/// How many of the last lines of valgrind's log and the program's stderr are kept.
const TAIL: usize = 5;
/// How many of the last lines of each are read to find why a run ended.
const LOOKED_AT: usize = 200;

/// What of a log's last `lines` tells why a run ended: from the last line where valgrind says
/// so (a signal that ended the process, its own assertion) on, [`TAIL`] × 2 lines at most;
/// else the last [`TAIL`]. valgrind's log ends with advice (the main thread's stack size, how
/// to report a bug) that says nothing of the failure.
fn telling(lines: Vec<String>) -> Vec<String> {
    const WHY: [&str; 4] = [
        "Process terminating",
        "the 'impossible' happened",
        "Assertion",
        "valgrind: ",
    ];
    let from = lines
        .iter()
        .rposition(|l| WHY.iter().any(|why| l.contains(why)))
        .unwrap_or(lines.len().saturating_sub(TAIL));
    lines.into_iter().skip(from).take(TAIL * 2).collect()
}
/// How many of the last lines the program printed are kept, when they are asked for.
const PRINTED: usize = 200;

/// What a run's environment records of how its counts were taken, so that counts taken
/// differently (another valgrind, other iterations, other settings) are not compared as
/// like: `valgrind` and `counted`.
pub fn settings(version: &str, how: &str) -> Vec<ConfigEntry> {
    vec![
        ConfigEntry {
            key: "valgrind".into(),
            value: version.to_string(),
        },
        ConfigEntry {
            key: "counted".into(),
            value: format!("{how}; {FIXED}"),
        },
    ]
}

/// How `exec` counts: every instruction of the command and its children.
pub const WHOLE_COMMAND: &str = "cachegrind, the command and its children, every instruction";

/// The instructions of one iteration: what a run of `more` iterations counted beyond one of
/// `fewer`, over the difference, so that whatever a run does once (starting the benchmark, its
/// first call, a stack growing) cancels. `inside` says where counting was on (``inside
/// `BM_Sort(*` ``, `in the test binary`).
pub fn per_iteration(
    (fewer, more): (u64, u64),
    iterations: u64,
    inside: &str,
    what: &str,
) -> crate::error::Result<f64> {
    if more == fewer {
        // More iterations counted exactly as much: counting was not on around the loop (a
        // body that is not where the globs look), and a difference would be no figure at all.
        return Err(crate::error::Error::Peer(format!(
            "{what}: {iterations} more iterations counted no more instructions ({more}) \
             {inside}: the benchmark's loop is not in what was counted"
        )));
    }
    if more < fewer {
        // What the benchmark does once (its set-up, a first call) varied between the two
        // runs by more than the iterations between them cost: no per-iteration figure.
        return Err(crate::error::Error::Peer(format!(
            "{what}: {iterations} more iterations counted fewer instructions ({more} against \
             {fewer}) {inside}: what the benchmark does once varies run to run by more than \
             {iterations} iterations cost (a random set-up), so no count per iteration can \
             be taken of it; time it instead"
        )));
    }
    Ok((more as f64 - fewer as f64) / iterations as f64)
}

/// `count`, unless it is zero: callgrind never entered a function `function` names, so no
/// benchmark function of that name ran (exit 2).
pub fn entered(count: u64, function: &str, what: &str) -> crate::error::Result<u64> {
    match count {
        0 => Err(crate::error::Error::Input(format!(
            "{what}: callgrind never entered a function matching `{function}`: no benchmark \
             function of that name ran, so nothing was counted"
        ))),
        count => Ok(count),
    }
}

/// What to say when valgrind is not installed.
pub const MISSING: &str = "counting instructions needs valgrind, which is not installed: \
                           `apt-get install valgrind` (Debian's package valgrind)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_count_a_process_with_its_children_or_one_function() {
        let dir = Path::new("/tmp/x");
        assert_eq!(
            valgrind_args(&Scope::Process, dir).join(" "),
            "--tool=cachegrind --cache-sim=no --branch-sim=no --trace-children=yes \
             --cachegrind-out-file=/tmp/x/count.%p --log-file=/tmp/x/valgrind.%p"
        );
        assert_eq!(
            valgrind_args(&Scope::Function(vec!["*.BenchmarkWork".into()]), dir).join(" "),
            "--tool=callgrind --collect-atstart=no --toggle-collect=*.BenchmarkWork \
             --callgrind-out-file=/tmp/x/count.%p --log-file=/tmp/x/valgrind.%p"
        );
    }

    #[test]
    fn a_count_per_iteration_is_the_difference_of_two_runs() {
        // Go's BenchmarkWork here: 2 iterations counted 360,046, 12 counted 1,560,166.
        let inside = "inside `*.BenchmarkWork`";
        let per = per_iteration((360_046, 1_560_166), 10, inside, "w").unwrap();
        assert_eq!(per, 120_012.0);
        let never = entered(0, "*.BenchmarkNope", "BenchmarkNope").unwrap_err();
        assert!(never.to_string().contains("`*.BenchmarkNope`"), "{never}");
        let outside = per_iteration((500, 500), 10, inside, "A").unwrap_err();
        assert!(
            outside
                .to_string()
                .contains("no more instructions (500) inside"),
            "{outside}"
        );
        // Fewer for more: a one-time cost that varies, not a loop outside the count.
        let varied = per_iteration((41_300, 6_863), 10, inside, "R").unwrap_err();
        assert!(varied.to_string().contains("varies run to run"), "{varied}");
    }

    #[test]
    fn a_failed_count_says_why_rather_than_valgrinds_advice() {
        // valgrind 3.19's log of a program killed by SIGSEGV under cachegrind.
        let log: Vec<String> = "==9== Cachegrind, a cache and branch-prediction profiler\n\
            ==9== Process terminating with default action of signal 11 (SIGSEGV)\n\
            ==9==  Access not within mapped region at address 0x0\n\
            ==9==    at 0x109139: main (crash.c:3)\n\
            ==9==  If you believe this happened as a result of a stack\n\
            ==9==  overflow in your program's main thread (unlikely but\n\
            ==9==  possible), you can try to increase the size of the\n\
            ==9==  main thread stack using the --main-stacksize= flag.\n\
            ==9==  The main thread stack size used in this run was 8388608.\n\
            ==9== I refs:        105,243"
            .lines()
            .map(str::to_string)
            .collect();
        let kept = telling(log.clone());
        assert!(kept[0].contains("signal 11 (SIGSEGV)"), "{kept:?}");
        assert!(kept[2].contains("main (crash.c:3)"), "{kept:?}");
        // Nothing valgrind names: the last lines, as the program's own stderr ends.
        let plain: Vec<String> = (1..=9).map(|i| format!("line {i}")).collect();
        assert_eq!(telling(plain)[0], "line 5");
    }

    #[test]
    fn what_to_measure_is_read_as_typed() {
        assert_eq!(Measure::parse("time"), Ok(Measure::TIME));
        let both = Measure::parse("time,instructions").unwrap();
        assert!(both.time && both.instructions && !both.counts_only());
        assert!(Measure::parse("instructions").unwrap().counts_only());
        assert!(Measure::parse("cycles").unwrap_err().contains("`cycles`"));
    }

    #[test]
    fn a_count_is_read_from_the_summary_of_either_tool() {
        // valgrind 3.19's callgrind and cachegrind files, as written here.
        let callgrind = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n\
                         events: Ir\nsummary: 1560166\n\nfn=(1) x\n5 12\ntotals: 1560166\n";
        assert_eq!(instructions_in(callgrind), Some(1_560_166));
        let cachegrind = "desc: I1 cache:\ncmd: gzip -c\nevents: Ir\nfl=???\n\
                          summary: 15522316\n";
        assert_eq!(instructions_in(cachegrind), Some(15_522_316));
        // A 4 MB memset and 50 copies of 4 MB under cachegrind 3.19: the memset's rep stosb
        // is one line counted per byte; the copy is a vector loop over several lines.
        let copies = "events: Ir\nfl=x.c\nfn=main\n4 12\nfl=memset.S\n\
                      fn=__memset_avx2_unaligned_erms\n336 4194305\n338 2\n\
                      fn=__memcpy_avx_unaligned_erms\n769 3270400\n768 3270400\n\
                      765 3270400\nfn=other\n3 5\nsummary: 14005524\n";
        assert_eq!(string_instructions_in(copies), 4_194_305);
        // Without line information nothing stands out.
        assert_eq!(string_instructions_in("fn=__memset_erms\n0 4194305\n"), 0);
        assert_eq!(instructions_in("events: Ir\n"), None);
    }
}
