//! How the server stays quiet and awake: it waits for connections without pausing, and a
//! flood of failures is a line a second with a count, not a line each.

use std::time::{Duration, Instant};

/// Until `listener` has a connection to accept, or at most 100 ms (the stop flag and the
/// interrupt are looked at between waits).
pub(super) fn wait_readable(listener: &std::net::TcpListener) {
    use std::os::fd::AsRawFd;
    let mut ready = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call; an error or timeout is a retry.
    unsafe { libc::poll(&mut ready, 1, 100) };
}

pub(super) fn is_exhaustion(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Lets one report a second through and counts the ones it holds back.
#[derive(Default)]
pub(super) struct Throttle {
    last_admitted: Option<Instant>,
    held: u64,
}

impl Throttle {
    pub(super) fn admit(&mut self) -> Option<u64> {
        if self
            .last_admitted
            .is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        {
            self.held += 1;
            return None;
        }
        self.last_admitted = Some(Instant::now());
        Some(std::mem::take(&mut self.held))
    }

    /// The reports held back since the last one let through, now said.
    pub(super) fn take_held(&mut self) -> u64 {
        std::mem::take(&mut self.held)
    }
}
