//! Fault suite: tries hard to break rein through the built binary (hostile hooks, broken
//! settings, garbage model replies, signals) and checks what must hold afterwards — the session
//! goes on, the transcript is complete JSON, no process is left behind, memory stays bounded,
//! and the user is told what went wrong. The matching table is `docs/reliability.md`.
//!
//! Each submodule is one family of faults. The harness here gives every test a fresh project
//! and home directory (a [`Sandbox`]), runs `rein` while sampling its peak RSS, and inspects
//! `/proc` for processes left in a hook's process group.

mod background;
mod environment;
mod files;
mod hooks;
mod models;
mod session;
mod settings;
mod shutdown;
mod transcript;

use std::io::Read;
use std::ops::Deref;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, sh_script};
pub use crate::harness::{bash, say};

/// A [`Sandbox`] with `<project>/.claude/`, `<project>/hooks/` and `<home>/.claude/`.
pub struct Env(Sandbox);

impl Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.0
    }
}

pub fn env() -> Env {
    Env(Sandbox::new(
        "proj",
        &["proj/.claude", "proj/hooks", "home/.claude"],
    ))
}

/// What one `rein` run did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// Peak resident set size of rein in KiB: the `VmHWM` of its own address space, sampled
    /// every few milliseconds until it exits (0 if it exited before the first sample).
    pub max_rss_kib: i64,
}

impl Env {
    /// An executable `/bin/sh` script that first records its process group id in
    /// `<project>/pgids.txt`, then runs `body` (unlike [`Sandbox::script`], which it shadows).
    pub fn script(&self, name: &str, body: &str) -> String {
        let body = format!("{}\n{body}", record_pgid(self));
        self.raw_script(name, sh_script(&body).as_bytes())
    }

    /// The `rein` command with a sealed environment (no real keys, no managed settings).
    pub fn cmd(&self) -> Command {
        self.rein()
    }

    /// `rein -p go --mock-script <turns>` plus `extra`.
    pub fn run_mock(&self, turns: Value, extra: &[&str]) -> Run {
        run(self.mock_cmd(turns, extra))
    }

    /// The command [`Env::run_mock`] runs, for a run with its own cap ([`run_capped`]).
    pub fn mock_cmd(&self, turns: Value, extra: &[&str]) -> Command {
        let script = self.mock(turns);
        let mut c = self.cmd();
        c.args(["-p", "go", "--mock-script"])
            .arg(&script)
            // The calls under test must reach execution: approve them up front so the
            // permission step (headless: deny) does not mask the hook's outcome.
            .args(["--allowedTools", "Bash,Write"])
            .args(extra);
        c
    }

    /// The one transcript, every line parsed (a torn or invalid line fails the test).
    pub fn transcript(&self) -> Vec<Value> {
        let files = self.transcript_files();
        assert_eq!(files.len(), 1, "transcripts: {files:?}");
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "transcript does not end with a newline (torn last line)"
        );
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:.200}: {e}")))
            .collect()
    }

    /// Total size of the transcript file in bytes.
    pub fn transcript_bytes(&self) -> u64 {
        self.transcript_files()
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .sum()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(rel)).unwrap_or_default()
    }

    /// Process group ids recorded by [`Env::script`] hooks (and anything else appending to
    /// `pgids.txt`).
    pub fn pgids(&self) -> Vec<i32> {
        self.read("pgids.txt")
            .split_whitespace()
            .filter_map(|s| s.parse().ok())
            .collect()
    }

    /// Asserts that none of the recorded process groups has a live (non-zombie) process.
    pub fn assert_no_leftovers(&self) {
        let pgids = self.pgids();
        assert!(!pgids.is_empty(), "no hook recorded its process group");
        for pgid in pgids {
            assert_group_gone(pgid);
        }
    }
}

/// A shell line that appends the process group id of the running shell to `pgids.txt`.
/// Why `/proc/$$/stat`: `sh -c <script>` forks the script, so `$$` is not the group leader.
pub fn record_pgid(e: &Env) -> String {
    format!(
        "cut -d' ' -f5 /proc/$$/stat >> '{}'",
        e.project.join("pgids.txt").display()
    )
}

/// Longest any one `rein` run may take before the harness kills it: a hang then fails the test
/// instead of hanging the suite.
pub const HARD_CAP: Duration = Duration::from_secs(180);

/// Runs `c` to completion, capturing both streams on threads and sampling the child's peak RSS
/// (see [`run_capped`]).
pub fn run(c: Command) -> Run {
    run_capped(c, HARD_CAP)
}

/// [`run`], but rein is SIGKILLed after `cap` (the run then has `code: None`).
pub fn run_capped(c: Command, cap: Duration) -> Run {
    run_full(c, cap, |_| ())
}

/// [`run`], with `meanwhile(pid)` running on its own thread while rein runs (to signal it,
/// say). The thread is joined before returning.
pub fn run_with(c: Command, meanwhile: impl FnOnce(u32) + Send + 'static) -> Run {
    run_full(c, HARD_CAP, meanwhile)
}

fn run_full(mut c: Command, cap: Duration, meanwhile: impl FnOnce(u32) + Send + 'static) -> Run {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = c.spawn().unwrap();
    let side = {
        let pid = child.id();
        std::thread::spawn(move || meanwhile(pid))
    };
    let (exited, exit_seen) = std::sync::mpsc::channel::<()>();
    let victim = child.id() as libc::pid_t;
    // Why sample `VmHWM` rather than take `ru_maxrss` from `wait4`: a spawned child inherits
    // the peak RSS of the process that spawned it (the kernel carries the old address space's
    // high-water mark across exec), so a test binary that once held 300 MB — the proptests in
    // `fuzz` do — would make every later rein look that big. `VmHWM` belongs to rein's own
    // address space, which exec made new.
    let watchdog = std::thread::spawn(move || {
        let deadline = Instant::now() + cap;
        let mut peak = 0;
        loop {
            if let Some(kib) = vm_hwm_kib(victim) {
                peak = peak.max(kib);
            }
            match exit_seen.recv_timeout(Duration::from_millis(5)) {
                Ok(()) => return peak,
                Err(_) if Instant::now() < deadline => {}
                Err(_) => {
                    // SAFETY: `victim` is our child and is not reaped before this thread is
                    // joined (the main thread waits with WNOWAIT first), so the pid cannot have
                    // been reused.
                    unsafe {
                        libc::kill(victim, libc::SIGKILL);
                    }
                    let _ = exit_seen.recv();
                    return peak;
                }
            }
        }
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let pid = child.id() as libc::pid_t;
    // Wait for the exit without reaping, stop the watchdog, then reap with `wait4`.
    // SAFETY: zeroed siginfo is a valid out-parameter; waitid on our own child's pid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let waited = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(waited, 0, "waitid failed");
    let _ = exited.send(());
    let max_rss_kib = watchdog.join().unwrap();
    let mut status = 0;
    // SAFETY: wait4 on our own child's pid; a null rusage is allowed.
    let got = unsafe { libc::wait4(pid, &mut status, 0, std::ptr::null_mut()) };
    assert_eq!(got, pid, "wait4 failed");
    let elapsed = started.elapsed();
    // The child is reaped; std must not wait for it again.
    std::mem::forget(child);
    side.join().unwrap();
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned();
    let code = if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        None
    };
    Run {
        code,
        stdout,
        stderr,
        elapsed,
        max_rss_kib,
    }
}

/// `VmHWM` of a live process in KiB (`None` once it has exited).
fn vm_hwm_kib(pid: libc::pid_t) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Live (non-zombie) processes of group `pgid`. pid 1 in a container may not reap orphans,
/// so a zombie counts as dead.
pub fn live_members(pgid: i32) -> Vec<(i32, char)> {
    // SAFETY: kill with signal 0 only checks for existence.
    if unsafe { libc::kill(-pgid, 0) } != 0 {
        return Vec::new();
    }
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return live;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the `(comm)`, which may contain spaces: state ppid pgrp …
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields.first().and_then(|s| s.chars().next()).unwrap_or('?');
        let group = fields.get(2).and_then(|s| s.parse::<i32>().ok());
        if group == Some(pgid) && state != 'Z' && state != 'X' {
            live.push((pid, state));
        }
    }
    live
}

/// Fails if group `pgid` still has a live process a little after rein exited (a SIGKILLed
/// process may take a moment to become a zombie). Kills the leftovers so the suite stays clean.
pub fn assert_group_gone(pgid: i32) {
    let waited = Instant::now();
    let mut live = live_members(pgid);
    while !live.is_empty() && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        live = live_members(pgid);
    }
    if !live.is_empty() {
        // SAFETY: SIGKILL to a group our own test created (recorded by our hook script).
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        panic!("process group {pgid} outlived rein: {live:?}");
    }
}

/// A command handler with a timeout in seconds.
pub fn handler(command: &str, timeout_s: u64) -> Value {
    json!({"type": "command", "command": command, "timeout": timeout_s})
}

/// `[{matcher, hooks: [handler]}]`.
pub fn on(matcher: &str, command: &str, timeout_s: u64) -> Value {
    json!([{"matcher": matcher, "hooks": [handler(command, timeout_s)]}])
}

/// `tool_result` blocks of the transcript, in order.
pub fn tool_results(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "user")
        .filter_map(|l| l["message"]["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

/// The `tool_use` ids of the transcript's assistant lines, in order.
pub fn transcript_call_ids(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "assistant")
        .filter_map(|l| l["message"]["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect()
}

/// Generous slack on top of a configured timeout for a loaded 2-core CI machine.
pub const GRACE: Duration = Duration::from_secs(5);

/// Asserts the run took less than `limit` (a bound far below what the unprotected case takes).
pub fn assert_within(run: &Run, limit: Duration) {
    assert!(
        run.elapsed < limit,
        "took {:?}, limit {limit:?}\nstderr: {:.2000}",
        run.elapsed,
        run.stderr
    );
}

/// The stdin/stdout-free marker every fault test's tool call writes, so "the tool ran" is a
/// file on disk.
pub const TOOL_RAN: &str = "tool-ran.flag";

/// A Bash call that creates [`TOOL_RAN`], then a final text.
pub fn tool_then_done() -> Value {
    json!([bash(&format!("echo ran > {TOOL_RAN}")), say("done")])
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}
