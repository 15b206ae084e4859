//! `CommandRunner`: runs one command-hook process — bytes in, exit status and bytes out.
//!
//! It knows nothing about events or hook JSON (that is [`crate::hooks::output`]). What it owns
//! (spec §5.4):
//!
//! * shell form is `/bin/sh -c "<command>"` (never bash, never a login shell); exec form spawns
//!   the program with its argv directly;
//! * the child leads its own process group (`process_group(0)`), so a timeout or a cancel kills
//!   the whole tree (`killpg`), not only the `sh`;
//! * stdin is written *while* stdout and stderr are drained (a payload larger than the pipe
//!   buffer to a hook that never reads cannot deadlock), then closed; `EPIPE` is tolerated and
//!   recorded;
//! * both streams are read to EOF even past their cap: bytes beyond the cap are counted and
//!   discarded, so the child never blocks on a full pipe and memory stays bounded by the cap;
//! * a run never waits on pipes forever: once the direct child is gone, a grandchild that still
//!   holds the pipes gets [`LINGER_GRACE`], then the group is killed.
//!
//! * a hook that prints Claude Code's runtime async marker (`{"async":true}`) first can be moved
//!   to the background while it runs ([`run_detecting_async`] → [`BackgroundRun`]).
//!
//! [`run`] never panics and never returns an error: every failure is a [`RunStatus`]. A run
//! whose future is dropped midway kills its process group; a run that finished leaves alone
//! any daemon the hook started with its pipes released.

use std::future::Future;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use crate::hooks::run::RunStatus;

/// Most stdout bytes kept per run: 10 MiB.
///
/// Why this size: hook stdout is either a short text or one JSON document; the largest
/// legitimate documents carry an `updatedToolOutput`/`updatedInput` for a big file, which a
/// 10 MiB buffer still holds whole. Anything beyond is counted and discarded, and the run is
/// marked `stdout_capped` (a capped stdout is never used as a decision, see `output.rs`).
pub const STDOUT_CAP: usize = 10 * 1024 * 1024;

/// Most stderr bytes kept per run: 1 MiB. stderr only becomes a reason text or a notice, so
/// more than this is never useful; the rest is counted and discarded (`stderr_capped`).
pub const STDERR_CAP: usize = 1024 * 1024;

/// Time between SIGTERM and SIGKILL to the process group on a timeout or a cancel.
///
/// Why 500 ms: long enough for a well-behaved script to run a `trap … TERM` cleanup, short
/// enough that a hung hook does not visibly extend a timeout it already exceeded.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// How long stdout/stderr may stay open after the direct child has exited (or was killed)
/// before the group is killed and the drains are abandoned.
///
/// Why: a hook that starts `daemon &` and exits leaves the daemon holding the pipes; Claude
/// Code would wait for them to close (up to the timeout). rein gives whatever is still
/// buffered this long to arrive, then kills the group so the run ends deterministically.
pub const LINGER_GRACE: Duration = Duration::from_millis(500);

/// What `EPIPE` on stdin is recorded as (Claude Code's wording).
pub const STDIN_EPIPE_TEXT: &str =
    "Hook command closed stdin before hook input was fully written (EPIPE)";

/// How the command is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandForm {
    /// `/bin/sh -c "<command>"`.
    Shell(String),
    /// `program` spawned directly with `args`; no shell, no expansion.
    Exec { program: String, args: Vec<String> },
}

impl CommandForm {
    /// The command as shown in texts (`[<cmd>]: …`): the shell string, or program and args
    /// joined by single spaces (spec §4.5).
    pub fn display_text(&self) -> String {
        match self {
            CommandForm::Shell(command) => command.clone(),
            CommandForm::Exec { program, args } => {
                let mut text = program.clone();
                for arg in args {
                    text.push(' ');
                    text.push_str(arg);
                }
                text
            }
        }
    }
}

/// Everything needed to run one process.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    pub form: CommandForm,
    /// Working directory; a missing directory is a spawn failure (the caller picks fallbacks).
    pub cwd: PathBuf,
    /// Variables set on top of rein's own environment (later entries win).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment (applied before `env`).
    pub env_remove: Vec<String>,
    pub timeout: Duration,
    /// Bytes of stdout kept; usually [`STDOUT_CAP`].
    pub stdout_cap: usize,
    /// Bytes of stderr kept; usually [`STDERR_CAP`].
    pub stderr_cap: usize,
}

impl CommandSpec {
    /// A spec with the default caps and no environment changes.
    pub fn new(form: CommandForm, cwd: PathBuf, timeout: Duration) -> CommandSpec {
        CommandSpec {
            form,
            cwd,
            env: Vec::new(),
            env_remove: Vec::new(),
            timeout,
            stdout_cap: STDOUT_CAP,
            stderr_cap: STDERR_CAP,
        }
    }

    /// The value `name` will have in the process's environment (`None`: unset).
    pub fn variable(&self, name: &str) -> Option<String> {
        if let Some((_, value)) = self.env.iter().rev().find(|(k, _)| k == name) {
            return Some(value.clone());
        }
        if self.env_remove.iter().any(|k| k == name) {
            return None;
        }
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
}

/// The raw result of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRun {
    /// `Exited`, `Signaled`, `TimedOut` or `SpawnFailed` (never `Backgrounded`/`Crashed`).
    /// A cancelled run reports `TimedOut` with `cancelled: true`.
    pub status: RunStatus,
    /// At most `stdout_cap` bytes.
    pub stdout: Vec<u8>,
    /// At most `stderr_cap` bytes.
    pub stderr: Vec<u8>,
    /// Bytes the process wrote in total (kept or not).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub stdout_capped: bool,
    pub stderr_capped: bool,
    /// From just before spawning until the run was over.
    pub duration: Duration,
    /// Why stdin could not be written fully (e.g. [`STDIN_EPIPE_TEXT`]); the run goes on.
    pub stdin_error: Option<String>,
    /// pid (= process group id) of the direct child, when it was spawned.
    pub pid: Option<u32>,
    /// The run was ended by the caller's cancel future, not by its timeout.
    pub cancelled: bool,
    /// The direct child had ended but something in its group still held stdout/stderr after
    /// [`LINGER_GRACE`]; the group was killed.
    pub lingering_killed: bool,
}

/// Sends `signal` to every process of the group `pgid`. Returns false if no process got it
/// (e.g. the group is already gone).
pub fn signal_group(pgid: u32, signal: i32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    // Why the guard: killpg(0) / negative ids would signal our own group or every process.
    if pgid <= 1 {
        return false;
    }
    // SAFETY: killpg has no memory-safety preconditions; it only sends a signal.
    unsafe { libc::killpg(pgid, signal) == 0 }
}

/// Kills a whole process group: SIGTERM, [`KILL_GRACE`], SIGKILL. For background (`async`)
/// hooks and shutdown; [`run`] does this itself on a timeout.
pub async fn kill_group(pgid: u32) {
    if signal_group(pgid, libc::SIGTERM) {
        tokio::time::sleep(KILL_GRACE).await;
        signal_group(pgid, libc::SIGKILL);
    }
}

/// Runs the command with `stdin` as its input until it exits or its timeout expires.
#[cfg(test)]
pub async fn run(spec: &CommandSpec, stdin: &[u8]) -> RawRun {
    run_until(spec, stdin, std::future::pending::<()>()).await
}

/// Like [`run`], but the run is also ended (group killed, `cancelled: true`) as soon as
/// `cancel` completes — used for a turn the user aborted and for background hooks at shutdown.
pub async fn run_until(
    spec: &CommandSpec,
    stdin: &[u8],
    cancel: impl Future<Output = ()>,
) -> RawRun {
    run_inner(spec, stdin, cancel, None).await
}

/// How [`run_detecting_async`] came back.
#[derive(Debug)]
pub enum RunEnd {
    /// The process ended (or timed out, or could not start) without switching to async.
    Finished(RawRun),
    /// stdout began with the `{"async": true}` marker while the process was still running
    /// (spec §5.5): it goes on in the background.
    Backgrounded {
        /// The foreground result to interpret now: status [`RunStatus::Backgrounded`], stdout =
        /// the marker bytes, duration = time until the marker was seen.
        raw: RawRun,
        /// The still-running process.
        background: BackgroundRun,
    },
}

/// A hook process that switched itself to async. Its deadline is `asyncTimeout` from the
/// marker when given, else the spec's timeout from the start. **Dropping it kills the group.**
#[derive(Debug)]
pub struct BackgroundRun {
    /// The parsed marker object.
    #[cfg_attr(not(test), expect(dead_code, reason = "only the tests read it yet"))]
    pub marker: Value,
    /// pid (= process group id) of the hook.
    pub pid: Option<u32>,
    prefix_len: usize,
    task: tokio::task::JoinHandle<RawRun>,
    cancel: Option<oneshot::Sender<()>>,
}

impl BackgroundRun {
    /// Waits for the process to end. The returned stdout holds only what the hook wrote
    /// *after* the marker (the part to deliver later); the byte counts are for the whole run.
    pub async fn wait(mut self) -> RawRun {
        let task = &mut self.task;
        let mut raw = join_task(task).await;
        let prefix = self.prefix_len.min(raw.stdout.len());
        raw.stdout.drain(..prefix);
        raw
    }

    /// Ends the process now (SIGTERM, grace, SIGKILL to its group) and returns its run, with
    /// `cancelled: true` if it was still running.
    #[cfg_attr(not(test), expect(dead_code, reason = "only the tests call it yet"))]
    pub async fn cancel(mut self) -> RawRun {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
        self.wait().await
    }
}

async fn join_task(task: &mut tokio::task::JoinHandle<RawRun>) -> RawRun {
    match task.await {
        Ok(raw) => raw,
        // Only a panic inside the runner could get here; report it as data, not a crash.
        Err(err) => RawRun {
            status: RunStatus::Crashed(format!("hook runner task failed: {err}")),
            ..empty_run(Duration::ZERO, None)
        },
    }
}

impl RawRun {
    /// A run that was never started because of `reason` (status `SpawnFailed`).
    pub fn not_started(reason: String) -> RawRun {
        let mut raw = empty_run(Duration::ZERO, None);
        raw.status = RunStatus::SpawnFailed(reason);
        raw
    }
}

fn empty_run(duration: Duration, pid: Option<u32>) -> RawRun {
    RawRun {
        status: RunStatus::Exited(0),
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_capped: false,
        stderr_capped: false,
        duration,
        stdin_error: None,
        pid,
        cancelled: false,
        lingering_killed: false,
    }
}

/// Like [`run`], but watches stdout for Claude Code's runtime async switch: as soon as the
/// accumulated stdout is exactly one `{"async": true, "asyncTimeout"?: ms}` object, this returns
/// [`RunEnd::Backgrounded`] while the process keeps running (spec §5.5). Dropping this future
/// before it returns kills the process group.
pub async fn run_detecting_async(spec: CommandSpec, stdin: Vec<u8>) -> RunEnd {
    let (marker_tx, marker_rx) = oneshot::channel::<Detected>();
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    // Why a task: the process must outlive this call once it is backgrounded. Why the cancel
    // channel: it resolves when sent *or dropped*, so dropping this future or the
    // `BackgroundRun` ends the run and kills the group.
    let mut task = tokio::spawn(async move {
        let cancel = async move {
            let _ = cancel_rx.await;
        };
        run_inner(&spec, &stdin, cancel, Some(marker_tx)).await
    });
    match marker_rx.await {
        Ok(detected) => {
            let pid = detected.pid;
            let mut raw = empty_run(detected.after, pid);
            raw.status = RunStatus::Backgrounded;
            raw.stdout = serde_json::to_vec(&detected.marker).unwrap_or_default();
            raw.stdout_bytes = detected.prefix_len as u64;
            RunEnd::Backgrounded {
                raw,
                background: BackgroundRun {
                    marker: detected.marker,
                    pid,
                    prefix_len: detected.prefix_len,
                    task,
                    cancel: Some(cancel_tx),
                },
            }
        }
        // The sender is dropped when stdout ends without a marker: the run is finishing.
        Err(_) => {
            let raw = join_task(&mut task).await;
            drop(cancel_tx);
            RunEnd::Finished(raw)
        }
    }
}

async fn run_inner(
    spec: &CommandSpec,
    stdin: &[u8],
    cancel: impl Future<Output = ()>,
    probe: Option<oneshot::Sender<Detected>>,
) -> RawRun {
    let started = Instant::now();
    let mut command = build_command(spec);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            return RawRun {
                status: RunStatus::SpawnFailed(spawn_error_text(spec, &err)),
                stdout: Vec::new(),
                stderr: Vec::new(),
                stdout_bytes: 0,
                stderr_bytes: 0,
                stdout_capped: false,
                stderr_capped: false,
                duration: started.elapsed(),
                stdin_error: None,
                pid: None,
                cancelled: false,
                lingering_killed: false,
            };
        }
    };
    let pid = child.id();
    let mut guard = GroupGuard { pgid: pid };

    let mut out = Capture::new(spec.stdout_cap);
    let mut err = Capture::new(spec.stderr_cap);
    let child_stdin = child.stdin.take();
    let child_stdout = child.stdout.take();
    let child_stderr = child.stderr.take();

    let (timeout_tx, mut timeout_rx) = oneshot::channel::<Duration>();
    let mut probe = probe.map(|marker| AsyncProbe {
        marker: Some(marker),
        timeout: Some(timeout_tx),
        started,
        pid,
    });
    let mut timeout_seen = probe.is_none();

    let mut stdin_error: Option<String> = None;
    let mut cancelled = false;
    let mut lingering_killed = false;
    let status;
    {
        let io = async {
            let (stdin_result, (), ()) = tokio::join!(
                write_stdin(child_stdin, stdin),
                out.drain(child_stdout, probe.as_mut()),
                err.drain(child_stderr, None),
            );
            stdin_result
        };
        tokio::pin!(io);
        tokio::pin!(cancel);
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);

        let mut io_done = false;
        let ended = loop {
            tokio::select! {
                result = &mut io, if !io_done => {
                    io_done = true;
                    stdin_error = result;
                }
                exit = child.wait() => break Ended::Exited(exit),
                timeout = &mut timeout_rx, if !timeout_seen => {
                    timeout_seen = true;
                    // `asyncTimeout` of a runtime async marker: the background part gets its
                    // own deadline from the moment the marker was seen.
                    // A deadline too far to represent keeps the configured one.
                    if let Ok(Some(new_deadline)) =
                        timeout.map(|t| tokio::time::Instant::now().checked_add(t))
                    {
                        deadline.as_mut().reset(new_deadline);
                    }
                }
                () = &mut deadline => break Ended::Deadline,
                () = &mut cancel => break Ended::Cancelled,
            }
        };

        status = match ended {
            Ended::Exited(exit) => exit_status(exit),
            Ended::Deadline | Ended::Cancelled => {
                cancelled = matches!(ended, Ended::Cancelled);
                terminate(&mut child, pid, &mut io, &mut io_done, &mut stdin_error).await;
                RunStatus::TimedOut
            }
        };

        if !io_done {
            // The direct child is gone; whatever is still holding the pipes gets a short
            // grace, then its group is killed and the drains get one more grace to see EOF.
            match tokio::time::timeout(LINGER_GRACE, &mut io).await {
                Ok(result) => stdin_error = result,
                Err(_) => {
                    lingering_killed = true;
                    if let Some(pgid) = pid {
                        signal_group(pgid, libc::SIGKILL);
                    }
                    if let Ok(result) = tokio::time::timeout(LINGER_GRACE, &mut io).await {
                        stdin_error = result;
                    }
                }
            }
        }
    }
    // The run is over: a process the hook left running with its pipes released (a daemon
    // started on purpose) is not ours to kill. Only an abandoned run kills the group.
    guard.disarm();

    RawRun {
        status,
        stdout_bytes: out.total,
        stderr_bytes: err.total,
        stdout_capped: out.capped(),
        stderr_capped: err.capped(),
        stdout: out.buf,
        stderr: err.buf,
        duration: started.elapsed(),
        stdin_error,
        pid,
        cancelled,
        lingering_killed,
    }
}

/// The async marker seen on a still-running hook's stdout.
#[derive(Debug)]
struct Detected {
    marker: Value,
    /// Bytes of stdout that made up the marker (with surrounding whitespace).
    prefix_len: usize,
    after: Duration,
    pid: Option<u32>,
}

/// Watches stdout for `{"async": true, "asyncTimeout"?: ms}` (spec §5.5).
struct AsyncProbe {
    marker: Option<oneshot::Sender<Detected>>,
    timeout: Option<oneshot::Sender<Duration>>,
    started: Instant,
    pid: Option<u32>,
}

impl AsyncProbe {
    /// Largest stdout prefix re-parsed while looking for the marker.
    const MAX_PROBE: usize = 64 * 1024;

    /// Called after each stdout chunk containing `}`: the accumulated stdout, trimmed, must be
    /// exactly one JSON object with `"async": true` (Claude Code's rule).
    fn check(&mut self, stdout: &[u8]) {
        if self.marker.is_none() || stdout.len() > Self::MAX_PROBE {
            return;
        }
        let Ok(text) = std::str::from_utf8(stdout) else {
            return;
        };
        let text = text.trim();
        if !text.starts_with('{')
            || !text.ends_with('}')
            || crate::hooks::output::nesting_depth(text.as_bytes())
                > crate::hooks::output::MAX_JSON_DEPTH
        {
            return;
        }
        let Ok(marker) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if marker.get("async") != Some(&Value::Bool(true)) {
            // The first complete object is not the marker: this run stays synchronous.
            self.marker = None;
            return;
        }
        let timeout = marker
            .get("asyncTimeout")
            .and_then(Value::as_f64)
            .filter(|ms| *ms > 0.0)
            // A hook controls this number: out-of-range values are ignored, never a panic.
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        if let (Some(timeout), Some(tx)) = (timeout, self.timeout.take()) {
            let _ = tx.send(timeout);
        }
        if let Some(tx) = self.marker.take() {
            tracing::debug!(pid = ?self.pid, "hook switched itself to async");
            let _ = tx.send(Detected {
                marker,
                prefix_len: stdout.len(),
                after: self.started.elapsed(),
                pid: self.pid,
            });
        }
    }
}

enum Ended {
    Exited(io::Result<ExitStatus>),
    Deadline,
    Cancelled,
}

/// SIGTERM to the group, wait up to [`KILL_GRACE`] for the child (still draining), then
/// SIGKILL to the group unconditionally (grandchildren may have ignored SIGTERM) and reap.
async fn terminate<F>(
    child: &mut Child,
    pid: Option<u32>,
    io: &mut std::pin::Pin<&mut F>,
    io_done: &mut bool,
    stdin_error: &mut Option<String>,
) where
    F: Future<Output = Option<String>>,
{
    let Some(pgid) = pid else {
        return;
    };
    signal_group(pgid, libc::SIGTERM);
    let grace = tokio::time::sleep(KILL_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            result = io.as_mut(), if !*io_done => {
                *io_done = true;
                *stdin_error = result;
            }
            _ = child.wait() => break,
            () = &mut grace => break,
        }
    }
    signal_group(pgid, libc::SIGKILL);
    // Why ignore the result: the child was SIGKILLed; if reaping fails there is nothing left
    // to report beyond `TimedOut`.
    let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
}

/// Kills the group if the run future is dropped midway (kill_on_drop only kills the child).
struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            // Harmless when the group is already gone (ESRCH).
            signal_group(pgid, libc::SIGKILL);
        }
    }
}

fn build_command(spec: &CommandSpec) -> Command {
    let mut command = match &spec.form {
        CommandForm::Shell(text) => {
            let mut command = Command::new("/bin/sh");
            command.arg("-c").arg(text);
            command
        }
        CommandForm::Exec { program, args } => {
            let mut command = Command::new(program);
            command.args(args);
            command
        }
    };
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    command
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    command
}

fn spawn_error_text(spec: &CommandSpec, err: &io::Error) -> String {
    let program = match &spec.form {
        CommandForm::Shell(_) => "/bin/sh",
        CommandForm::Exec { program, .. } => program.as_str(),
    };
    if !spec.cwd.is_dir() {
        return format!(
            "cannot start {program}: working directory {} does not exist ({err})",
            spec.cwd.display()
        );
    }
    // Why name these: they are the system's state, not the hook's content, and the plain
    // errno text does not say what to do about them.
    let why = match err.raw_os_error() {
        Some(libc::E2BIG) => {
            "; its arguments and environment together are over the system's limit (ARG_MAX)"
        }
        Some(libc::EAGAIN) => "; the system or user process limit was reached (fork failed)",
        Some(libc::ENOMEM) => "; the system is out of memory (fork failed)",
        Some(_) | None => "",
    };
    format!("cannot start {program}: {err}{why}")
}

fn exit_status(exit: io::Result<ExitStatus>) -> RunStatus {
    match exit {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => RunStatus::Exited(code),
            (None, Some(signal)) => RunStatus::Signaled(signal),
            // Neither a code nor a signal cannot happen for a reaped child on POSIX.
            (None, None) => RunStatus::Exited(1),
        },
        Err(err) => RunStatus::SpawnFailed(format!("waiting for the hook process failed: {err}")),
    }
}

async fn write_stdin(stdin: Option<ChildStdin>, bytes: &[u8]) -> Option<String> {
    let mut pipe = stdin?;
    let result = match pipe.write_all(bytes).await {
        Ok(()) => pipe.shutdown().await,
        Err(err) => Err(err),
    };
    drop(pipe);
    match result {
        Ok(()) => None,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Some(STDIN_EPIPE_TEXT.to_string()),
        Err(err) => Some(format!("writing the hook input to stdin failed: {err}")),
    }
}

/// A bounded capture of one output stream.
struct Capture {
    buf: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            buf: Vec::new(),
            cap,
            total: 0,
        }
    }

    fn capped(&self) -> bool {
        self.total > self.buf.len() as u64
    }

    /// Reads to EOF; keeps the first `cap` bytes, counts the rest. A read error ends the
    /// stream (what was read so far is kept).
    async fn drain<R: AsyncRead + Unpin>(
        &mut self,
        stream: Option<R>,
        mut probe: Option<&mut AsyncProbe>,
    ) {
        let Some(mut stream) = stream else {
            return;
        };
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) => return,
                Ok(n) => {
                    self.total += n as u64;
                    let room = self.cap.saturating_sub(self.buf.len());
                    let take = n.min(room);
                    if self.buf.len() + take > self.buf.capacity() {
                        // Amortised growth, but never past the cap: memory stays bounded by it.
                        let target = (self.buf.capacity() * 2)
                            .max(self.buf.len() + take)
                            .min(self.cap);
                        self.buf.reserve_exact(target - self.buf.len());
                    }
                    self.buf.extend_from_slice(&chunk[..take]);
                    if let Some(probe) = probe.as_deref_mut()
                        && chunk[..n].contains(&b'}')
                        && self.total == self.buf.len() as u64
                    {
                        probe.check(&self.buf);
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }
}
