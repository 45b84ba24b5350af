//! Ctrl-C and SIGTERM: remember that they came, and pass them on to a child we are running, so
//! the command can stop, print its summary and write its results. A child that does not stop
//! within [`GRACE`] (it ignores SIGINT, or hangs on the way out), or when the interrupt comes
//! again, is killed with its whole process group.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// How long an interrupted child has to exit before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);

static REQUESTED: AtomicBool = AtomicBool::new(false);
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        // Failing to install only means Ctrl-C kills us outright, as it would anyway.
        let _ = ctrlc::set_handler(|| {
            let again = REQUESTED.swap(true, Ordering::SeqCst);
            let group = CHILD_GROUP.load(Ordering::SeqCst);
            if group > 0 {
                if again {
                    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
                } else {
                    stop(group);
                }
            }
        });
    });
}

/// SIGINT to `group` now, SIGKILL after [`GRACE`] if it is still the child being waited for.
fn stop(group: i32) {
    let _ = killpg(Pid::from_raw(group), Signal::SIGINT);
    std::thread::spawn(move || {
        std::thread::sleep(GRACE);
        if CHILD_GROUP.load(Ordering::SeqCst) == group {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
    });
}

/// Makes a write past the file-size limit (`ulimit -f`) an error latkit reports, instead of
/// SIGXFSZ killing it silently with a temporary file left behind. A handler that does
/// nothing rather than ignoring the signal, so that the programs latkit runs (and times)
/// get the default again at exec.
pub fn report_oversized_writes() {
    extern "C" fn nothing(_: libc::c_int) {}
    let action = nix::sys::signal::SigAction::new(
        nix::sys::signal::SigHandler::Handler(nothing),
        nix::sys::signal::SaFlags::SA_RESTART,
        nix::sys::signal::SigSet::empty(),
    );
    // SAFETY: the handler does nothing, so it is async-signal-safe.
    let _ = unsafe { nix::sys::signal::sigaction(Signal::SIGXFSZ, &action) };
}

/// Stops the current work as Ctrl-C would, e.g. when nobody reads the output any more.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The process group that receives the interrupt (0 for none). A child started after the
/// interrupt came (it raced the handler) is stopped at once.
pub fn set_child_group(pgid: u32) {
    CHILD_GROUP.store(pgid as i32, Ordering::SeqCst);
    if pgid > 0 && requested() {
        stop(pgid as i32);
    }
}

/// Runs `command` to its end in a process group of its own, which an interrupt stops (and
/// kills after [`GRACE`]), with everything it started.
pub fn status_of(command: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    use std::os::unix::process::CommandExt;
    install();
    let mut child = command.process_group(0).spawn()?;
    set_child_group(child.id());
    let status = child.wait();
    set_child_group(0);
    status
}
