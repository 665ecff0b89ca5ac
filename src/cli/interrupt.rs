//! Ctrl-C (SIGINT) and SIGTERM (what Slurm sends at a time limit or `scancel`) for the long
//! commands: the first signal only sets a flag that the work loops read at their next safe
//! point (between plans, IPOPT's intermediate callback, between DEM steps), so they stop,
//! remove their temporary files and write nothing half-done; a second signal quits at once.
//!
//! A command that calls [`install`] must check [`requested`] often: until then Ctrl-C does
//! not end it.

// A replay-only build (no planner) has no sweep, the user of some of these.
#![cfg_attr(not(feature = "planner"), allow(dead_code))]

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        // SAFETY: _exit is async-signal-safe; a second signal means "stop now".
        unsafe { libc::_exit(128 + signal) };
    }
}

/// Routes SIGINT and SIGTERM to the flag.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` only touches an atomic and calls `_exit`, both
        // async-signal-safe; the sigaction struct is zeroed, then filled before the call.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Whether a signal asked the command to stop.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// Passes the stop on to a child process (one started in a process group of its own, which
/// a terminal's Ctrl-C does not reach): SIGINT, the signal `loam` itself handles.
pub fn forward(child: &std::process::Child) {
    // SAFETY: kill(2) with the pid of a child not yet waited for, so not reused.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

/// The exit code for a command stopped by a signal: 128 + its number (130 for SIGINT), as a
/// shell reports it.
pub fn exit_code() -> Option<u8> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some((128 + signal) as u8),
    }
}

/// The error a command returns when it stopped on a signal.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: {0}")]
pub struct Interrupted(pub String);
