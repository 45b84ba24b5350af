//! The scheduling policy of the calling thread: what the timer's measuring threads ask for
//! and what the doctor tries, on a thread of its own, to see whether it is allowed.

/// SCHED_FIFO at `priority` (1–99) for the calling thread, or SCHED_OTHER when `None`.
pub fn set_policy(priority: Option<i32>) -> Result<(), String> {
    let (policy, prio) = match priority {
        Some(p) => (libc::SCHED_FIFO, p),
        None => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 means the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// Whether a thread may run at SCHED_FIFO `priority`: tried on a short-lived thread of its
/// own, so that the caller's scheduling is untouched.
pub fn policy_allowed(priority: i32) -> Result<(), String> {
    std::thread::spawn(move || set_policy(Some(priority)))
        .join()
        .unwrap_or_else(|_| Err("the trial thread panicked".into()))
}
