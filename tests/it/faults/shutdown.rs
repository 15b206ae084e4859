//! No stuck thread keeps rein alive: after a signal, rein exits within seconds even when a tool
//! is blocked in a syscall that nothing in rein can interrupt.
//!
//! The stuck syscall here is an `open(2)` of a file on which the test holds a write lease
//! (`F_SETLEASE`): the kernel makes the opener wait until the lease holder lets go, or until
//! `/proc/sys/fs/lease-break-time` (45 s by default) has passed. The Grep tool opens files on a
//! blocking-pool thread, so that thread is stuck there; the session answers the signal, runs
//! SessionEnd, and the runtime is shut down with a deadline instead of waiting for the thread.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{env, on, run_with, say};

/// A write lease on a file, held until drop.
struct Lease {
    file: std::fs::File,
}

impl Lease {
    fn take(path: &Path) -> Lease {
        // Why ignore SIGIO: the kernel tells the lease holder (this test process) about a
        // lease break with SIGIO, whose default action would end the test binary.
        // SAFETY: setting a signal disposition to SIG_IGN has no memory-safety preconditions.
        unsafe {
            libc::signal(libc::SIGIO, libc::SIG_IGN);
        }
        let file = std::fs::File::open(path).unwrap();
        // SAFETY: fcntl on a file descriptor we own.
        let set = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) };
        assert_eq!(set, 0, "F_SETLEASE: {}", std::io::Error::last_os_error());
        Lease { file }
    }
}

/// Whether someone is waiting to open the leased file (the lease is being broken: `F_GETLEASE`
/// then reports the type it must be downgraded to, no longer `F_WRLCK`).
fn lease_is_breaking(fd: i32) -> bool {
    // SAFETY: fcntl on a file descriptor the caller keeps open.
    unsafe { libc::fcntl(fd, libc::F_GETLEASE) != libc::F_WRLCK }
}

#[test]
fn sigterm_while_a_tool_is_stuck_in_a_blocking_open_ends_rein_within_3_s_and_runs_session_end() {
    let e = env();
    let end = e.script(
        "end.sh",
        &format!("cat > '{}'", e.path("end.json").display()),
    );
    e.hooks(json!({"SessionEnd": on("", &end, 5)}));
    e.write("leased.txt", "needle\n");
    let lease = Lease::take(&e.path("leased.txt"));
    let fd = lease.file.as_raw_fd();

    let script = e.mock(json!([
        {"tool_use": [{"name": "Grep", "input": {
            "pattern": "needle",
            "path": e.path("leased.txt").display().to_string(),
        }}]},
        say("never"),
    ]));
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", "Grep", "--mock-script"])
        .arg(&script);
    let sent: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let sent_by_thread = Arc::clone(&sent);
    let run = run_with(c, move |pid| {
        let waiting = Instant::now();
        while !lease_is_breaking(fd) {
            assert!(
                waiting.elapsed() < Duration::from_secs(30),
                "rein never tried to open the leased file"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        *sent_by_thread.lock().unwrap() = Some(Instant::now());
        // SAFETY: kill(2) on the pid of the rein child this test spawned.
        unsafe {
            libc::kill(pid as i32, libc::SIGTERM);
        }
    });
    let took = sent.lock().unwrap().expect("SIGTERM was sent").elapsed();
    // The open was still blocked when rein exited: the lease was never let go.
    let still_stuck = lease_is_breaking(fd);
    drop(lease);

    eprintln!("exit {took:?} after SIGTERM (tool blocked in open(2) throughout: {still_stuck})");
    assert_eq!(run.code, Some(143), "stderr: {}", run.stderr);
    assert!(
        took < Duration::from_secs(3),
        "rein took {took:?} to exit after SIGTERM; stderr: {}",
        run.stderr
    );
    assert!(
        still_stuck,
        "the tool's open(2) was not blocked until the end"
    );
    let ended: Value = serde_json::from_str(&e.read("end.json")).expect("SessionEnd ran");
    assert_eq!(ended["reason"], "other");
    let lines = e.transcript();
    let result = super::tool_results(&lines)
        .pop()
        .expect("the interrupted Grep call has a result");
    assert_eq!(
        result["content"],
        "[Request interrupted by user for tool use]"
    );
}
