//! Real processes for `exec`: each run spawned and waited for with `wait4`, its output
//! where `--output` says, its stderr kept for the reason of a failure.

use super::{Sample, Spawner};
use crate::error::{Error, Result};
use crate::interrupt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// Where a timed command's standard output goes: hyperfine's `--output`.
#[derive(Clone, Debug, PartialEq)]
pub enum CommandOutput {
    /// Discarded by the kernel (`/dev/null`), the default.
    Null,
    /// Read through a pipe and discarded, for programs that behave differently on /dev/null.
    Pipe,
    /// latkit's own stdout and stderr (`--show-output`).
    Inherit,
    /// This file, emptied before each run: it holds the last run's output, as hyperfine's.
    File(PathBuf),
}

impl CommandOutput {
    /// `null`, `pipe`, `inherit` or a file's path, as hyperfine reads `--output`.
    pub fn parse(text: &str) -> CommandOutput {
        match text {
            "null" => CommandOutput::Null,
            "pipe" => CommandOutput::Pipe,
            "inherit" => CommandOutput::Inherit,
            path => CommandOutput::File(PathBuf::from(path)),
        }
    }
}

/// Where a timed command's standard streams go and come from.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandIo {
    pub output: CommandOutput,
    /// A file read from its start at every run (hyperfine's `--input`); `None`: /dev/null.
    pub input: Option<PathBuf>,
}

/// Real processes, each timed in its own process group.
pub struct Processes {
    output: CommandOutput,
    /// `--input FILE`, rewound for every run.
    input: Option<File>,
    /// `--output FILE`, emptied for every run.
    file: Option<File>,
    /// Whether that file is a regular one, with a length to empty (a device has none): read
    /// once, not before every run.
    file_is_regular: bool,
    /// Each run's stderr, unless inherited: emptied before every run, read when one fails.
    stderr: Option<File>,
}

/// How much of a failed run's stderr is read back, and how many of its last lines are shown.
const STDERR_TAIL_BYTES: u64 = 8192;
const STDERR_TAIL_LINES: usize = 5;

impl Processes {
    pub fn new(io: CommandIo) -> Result<Processes> {
        let CommandIo { output, input } = io;
        let input = input.as_deref().map(read_at_every_run).transpose()?;
        let (file, file_is_regular) = match &output {
            CommandOutput::File(path) => {
                let (file, regular) = written_at_every_run(path)?;
                (Some(file), regular)
            }
            _ => (None, false),
        };
        let stderr = match output {
            CommandOutput::Inherit => None,
            _ => Some(tempfile::tempfile().map_err(|e| {
                Error::Environment(format!("cannot create a temporary file for stderr: {e}"))
            })?),
        };
        Ok(Processes {
            output,
            input,
            file,
            file_is_regular,
            stderr,
        })
    }

    /// The child's stdin, stdout and stderr for one run.
    fn streams(&self) -> std::io::Result<[Stdio; 3]> {
        // A device (`--output /dev/null`) has no length to empty.
        let emptied = |file: &File, regular: bool| -> std::io::Result<Stdio> {
            if regular {
                file.set_len(0)?;
                (&*file).seek(SeekFrom::Start(0))?;
            }
            Ok(file.try_clone()?.into())
        };
        let stdout = match (&self.output, &self.file) {
            (CommandOutput::Inherit, _) => Stdio::inherit(),
            (CommandOutput::Pipe, _) => Stdio::piped(),
            (_, Some(file)) => emptied(file, self.file_is_regular)?,
            _ => Stdio::null(),
        };
        let stderr = match &self.stderr {
            Some(capture) => emptied(capture, true)?,
            None => Stdio::inherit(),
        };
        let stdin = match &self.input {
            Some(file) => {
                (&*file).seek(SeekFrom::Start(0))?;
                file.try_clone()?.into()
            }
            None => Stdio::null(),
        };
        Ok([stdin, stdout, stderr])
    }
}

impl Spawner for Processes {
    fn time(&self, argv: &[String]) -> std::io::Result<Sample> {
        run_once(argv, self.streams()?)
    }

    fn last_stderr(&self) -> Vec<String> {
        let Some(mut capture) = self.stderr.as_ref() else {
            return Vec::new();
        };
        let mut tail = Vec::new();
        let end = capture.seek(SeekFrom::End(0)).unwrap_or(0);
        let read = capture
            .seek(SeekFrom::Start(end.saturating_sub(STDERR_TAIL_BYTES)))
            .and_then(|_| capture.read_to_end(&mut tail));
        if read.is_err() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&tail);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    fn helper(&self, what: &str, command: &str) -> Result<()> {
        helper(what, command)
    }

    fn count(&self, argv: &[String]) -> std::io::Result<crate::runner::counts::Counted> {
        use crate::runner::counts::{Count, Scope, run};
        run(&Count {
            program: &argv[0],
            args: &argv[1..],
            dir: None,
            env: &[],
            scope: &Scope::Process,
            printed: false,
        })
    }
}

/// `--input FILE`, opened once and rewound for every run: a regular file or a device. A
/// FIFO would make the open wait for a writer forever and could not be rewound; a directory
/// opens, and every run would fail reading it, blamed on the command.
fn read_at_every_run(path: &Path) -> Result<File> {
    let refused = |why: String| Error::Input(format!("--input {}: {why}", path.display()));
    let kind = std::fs::metadata(path).map_err(|e| refused(format!("cannot read it: {e}")))?;
    let file_type = kind.file_type();
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() || file_type.is_fifo() || file_type.is_socket() {
        let what = match file_type.is_dir() {
            true => "a directory",
            false => "a FIFO or socket, which cannot be read again from its start",
        };
        return Err(refused(format!(
            "is {what}: it is read from its start at every run, so it must be a file"
        )));
    }
    File::open(path).map_err(|e| refused(format!("cannot read it: {e}")))
}

/// `--output FILE`, created now and emptied for every run, and whether it is a regular file
/// (a device has no length to empty). A byte is written and taken back, so that a file that
/// cannot be written (`/dev/full`, a full disk) is an output not written (exit 4) now, not
/// every run's failure blamed on the command.
fn written_at_every_run(path: &Path) -> Result<(File, bool)> {
    let named = |e| format!("--output {}: cannot {e}", path.display());
    let mut file =
        File::create(path).map_err(|e| Error::Input(named(format!("create it: {e}"))))?;
    let regular = (file.metadata()).map_err(|e| Error::Output(named(format!("read it: {e}"))))?;
    let regular = regular.is_file();
    if !std::io::IsTerminal::is_terminal(&file) {
        let probe = file.write_all(b"\n").and_then(|_| file.flush());
        let taken_back = match regular {
            true => file.set_len(0),
            false => Ok(()),
        };
        probe
            .and(taken_back)
            .map_err(|e| Error::Output(named(format!("write it: {e}"))))?;
    }
    Ok((file, regular))
}

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

/// Runs `argv` once with the given stdin, stdout and stderr, and measures it. A piped stdout is
/// read to its end on a thread while the command runs, and discarded.
fn run_once(argv: &[String], [stdin, stdout, stderr]: [Stdio; 3]) -> std::io::Result<Sample> {
    let start = Instant::now();
    // Its own process group: an interrupt reaches it through latkit, which can then tell a
    // run cut short from a finished one, and kill everything it started if it will not stop.
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    if let Some(mut out) = child.stdout.take() {
        // Not joined: a grandchild left running may hold the pipe open, and the run ends
        // with the command, as it is timed.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    }
    let pid = child.id() as libc::pid_t;
    interrupt::set_child_group(child.id());
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our unreaped child; status and usage outlive the call.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            interrupt::set_child_group(0);
            return Err(err);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    interrupt::set_child_group(0);
    drop(child); // already reaped: dropping a Child neither waits nor kills
    Ok(Sample {
        wall,
        user: seconds(usage.ru_utime),
        system: seconds(usage.ru_stime),
        // Linux reports kilobytes.
        max_rss: usage.ru_maxrss as f64 * 1024.0,
        status: ExitStatus::from_raw(status),
        instructions: None,
        string: None,
    })
}

/// This process's peak RSS (VmHWM) in bytes. Linux carries the spawner's peak into a child
/// at exec, so no child's max RSS reads below it.
pub(super) fn own_peak_rss() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// `sh -c CMD` for the untimed helpers (--prepare, --setup, --cleanup), in latkit's own process
/// group, so that Ctrl-C on a terminal reaches them directly. One that fails because it was
/// interrupted is no failure of its own: the caller sees the interrupt and stops.
fn helper(what: &str, command: &str) -> Result<()> {
    let status = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| Error::Environment(format!("could not run sh for {what}: {e}")))?;
    if !status.success() && !interrupt::requested() {
        let shown = crate::model::redact::line(command);
        return Err(Error::Peer(format!("{what} `{shown}` failed ({status})")));
    }
    Ok(())
}
