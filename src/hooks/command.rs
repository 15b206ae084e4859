//! Command hooks: how a configured `command` handler is started, and its run as the hook engine
//! sees it ([`RawRun`]) — bytes in, a [`RunStatus`] and bytes out.
//!
//! It knows nothing about events or hook JSON (that is [`crate::hooks::output`]), and the process
//! itself — its own process group, stdin written while stdout/stderr are drained, output caps,
//! SIGTERM → grace → SIGKILL of the whole tree, lingering descendants, reaping — is
//! [`crate::process`]. What this layer adds (spec §5.4, §5.5):
//!
//! * shell form is `/bin/sh -c "<command>"` (never bash, never a login shell); exec form spawns
//!   the program with its argv directly;
//! * the hooks' limits: [`STDOUT_CAP`], [`STDERR_CAP`], [`KILL_GRACE`], [`LINGER_GRACE`], and a
//!   descendant still holding the pipes after the linger is killed with the group;
//! * the wording of failures ([`STDIN_EPIPE_TEXT`], `cannot start …`), and a cancel reported as
//!   `TimedOut` with `cancelled: true`;
//! * a hook that prints Claude Code's runtime async marker (`{"async":true}`) first can be moved
//!   to the background while it runs ([`run_detecting_async`] → [`BackgroundRun`]).
//!
//! [`run`] never panics and never returns an error: every failure is a [`RunStatus`]. A run
//! whose future is dropped midway kills its process group; a run that finished leaves alone
//! any daemon the hook started with its pipes released.

#![deny(missing_docs)]

use std::ffi::OsStr;
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::hooks::run::RunStatus;
use crate::hooks::warm::{self, Interpreter};
use crate::process::{self, AfterLinger, Ending, Job, Limits, Output, Program, StdinError};

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
/// Why 1.5 s: Claude Code 2.1.328's grace, measured (fixture `tests/fixtures/cc-2.1.328/
/// hook_kill`: a hook and its `setsid` child trapping TERM kept running 1.48–1.53 s after it),
/// long enough for a `trap … TERM` cleanup.
pub const KILL_GRACE: Duration = Duration::from_millis(1500);

/// Time between SIGTERM and SIGKILL for a background (`async`) hook still running when the
/// session ends.
///
/// Why 1.3 s: Claude Code 2.1.328's, measured: hooks trapping TERM at its session end kept
/// running 1.14 s, 1.36 s and 1.39 s after it over three recordings (it kills them as it exits,
/// so the figure varies; fixture `tests/fixtures/cc-2.1.328/async_end` holds the last).
pub const SESSION_END_GRACE: Duration = Duration::from_millis(1300);

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
    Exec {
        /// The executable: a path, or a name looked up in `PATH`.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
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
    /// Shell or exec form.
    pub form: CommandForm,
    /// Working directory; a missing directory is a spawn failure (the caller picks fallbacks).
    pub cwd: PathBuf,
    /// Variables set on top of rein's own environment (later entries win).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment (applied before `env`).
    pub env_remove: Vec<String>,
    /// Longest the run may take; then its process group is terminated (`TimedOut`).
    pub timeout: Duration,
    /// Bytes of stdout kept; usually [`STDOUT_CAP`].
    pub stdout_cap: usize,
    /// Bytes of stderr kept; usually [`STDERR_CAP`].
    pub stderr_cap: usize,
    /// Time between SIGTERM and SIGKILL when the run is ended: [`KILL_GRACE`], or
    /// [`SESSION_END_GRACE`] for a background hook, which only a session's end stops.
    pub kill_grace: Duration,
    /// Run in a pre-started interpreter when one is waiting ([`crate::hooks::warm`]): set by
    /// the dispatcher for an eligible shell-form hook when warm hooks are on.
    pub warm: Option<Interpreter>,
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
            kill_grace: KILL_GRACE,
            warm: None,
        }
    }

    /// Whether the exec form's `program` names an executable file, looked up as `execvp`
    /// would: relative to the working directory when it has a `/`, else in the `PATH` the
    /// process will have.
    fn exec_program_starts(&self, program: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let executable = |path: &std::path::Path| {
            std::fs::metadata(path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if program.contains('/') {
            return executable(&self.cwd.join(program));
        }
        let path = self.variable("PATH").unwrap_or_default();
        path.split(':').any(|dir| {
            let dir = if dir.is_empty() {
                self.cwd.as_path()
            } else {
                std::path::Path::new(dir)
            };
            executable(&dir.join(program))
        })
    }

    /// The call as a warm run sees it, when this spec may run warm.
    pub(crate) fn warm_launch(&self) -> Option<warm::Launch> {
        let interpreter = self.warm?;
        let CommandForm::Shell(command) = &self.form else {
            return None;
        };
        Some(warm::Launch {
            interpreter,
            command: command.clone(),
            cwd: self.cwd.clone(),
            env: self.full_env(),
        })
    }

    /// The whole environment the process gets: rein's, less `env_remove`, plus `env`.
    pub fn full_env(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
            .filter(|(k, _)| !self.env_remove.iter().any(|r| k.as_os_str() == r.as_str()))
            .collect();
        for (k, v) in &self.env {
            env.retain(|(existing, _)| existing.as_os_str() != k.as_str());
            env.push((k.into(), v.into()));
        }
        env
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

    /// The program to start: `/bin/sh -c <command>` or the exec form's argv.
    fn program(&self) -> Program<'_> {
        let mut program = match &self.form {
            // Both forms lead a session of their own, as in Claude Code (fixtures
            // `tests/fixtures/cc-2.1.328/env_cwd`: `shell_is_session_leader`; `exec_form`: the
            // hook's pid is its own group and session id), so one group kill ends what they
            // started.
            CommandForm::Shell(text) => {
                let mut shell = Program::new("/bin/sh", &self.cwd)
                    .arg("-c")
                    .arg(text.as_str());
                shell.new_session = true;
                shell
            }
            CommandForm::Exec { program, args } => {
                let mut exec = Program::new(program.as_str(), &self.cwd);
                exec.args.extend(args.iter().map(OsStr::new));
                // Why only when it can start: through setsid(1) a program that cannot be
                // started would be setsid's exit 126/127 instead of a spawn failure. A program
                // removed between this look and the start is that exit code.
                exec.new_session = self.exec_program_starts(program);
                exec
            }
        };
        program.env = &self.env;
        program.env_remove = &self.env_remove;
        program
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
    /// Bytes the process wrote to stdout in total (kept or not).
    pub stdout_bytes: u64,
    /// Bytes the process wrote to stderr in total (kept or not).
    pub stderr_bytes: u64,
    /// stdout went beyond `stdout_cap`; the rest was discarded.
    pub stdout_capped: bool,
    /// stderr went beyond `stderr_cap`; the rest was discarded.
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
    /// It ran in a pre-started interpreter ([`crate::hooks::warm`]).
    pub warm: bool,
}

/// Kills a whole process group: SIGTERM, [`SESSION_END_GRACE`], SIGKILL. For background (`async`)
/// hooks and shutdown; [`run`] does this itself on a timeout.
pub async fn kill_group(pgid: u32) {
    process::kill_group(pgid, SESSION_END_GRACE).await;
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
    /// The run of a handler that is not a process (http, mcp_tool, in-process): it answered
    /// `stdout` after `duration`, judged as a command's exit 0 with that stdout would be.
    pub fn answered(stdout: Vec<u8>, duration: Duration) -> RawRun {
        RawRun {
            status: RunStatus::Exited(0),
            stdout_bytes: stdout.len() as u64,
            stdout,
            stderr: Vec::new(),
            stderr_bytes: 0,
            stdout_capped: false,
            stderr_capped: false,
            duration,
            stdin_error: None,
            pid: None,
            cancelled: false,
            lingering_killed: false,
            warm: false,
        }
    }

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
        warm: false,
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
    let job = Job {
        program: spec.program(),
        stdin: process::Stdin::Bytes(stdin),
        output: Output::Separate {
            stdout_cap: spec.stdout_cap,
            stderr_cap: spec.stderr_cap,
        },
        limits: Limits {
            timeout: spec.timeout,
            kill_grace: spec.kill_grace,
            linger: LINGER_GRACE,
            after_linger: AfterLinger::KillGroup,
        },
    };
    let mut probe = probe.map(|marker| AsyncProbe {
        marker: Some(marker),
        started: Instant::now(),
        pid: None,
    });
    let watch = probe
        .as_mut()
        .map(|p| p as &mut (dyn process::StdoutWatch + Send));
    let launch = spec.warm_launch();
    let claimed = match &launch {
        Some(launch) => warm::claim(launch, stdin, spec.timeout).await,
        None => Ok(None),
    };
    // The next call's interpreter starts while this one runs (a python server already waiting
    // makes this nothing): calls back to back then find it started, or partly so.
    if let Some(launch) = &launch {
        warm::prestart(launch.clone());
    }
    match claimed {
        Ok(Some(warm::Claimed::Forked(forked, prefilled))) => {
            let run = process::run_forked(
                forked,
                process::Stdin::Bytes(&stdin[prefilled..]),
                job.output,
                job.limits,
                cancel,
                watch,
            )
            .await;
            let mut raw = raw_run(spec, run);
            raw.warm = true;
            raw
        }
        Ok(None) => raw_run(spec, process::run(job, cancel, watch).await),
        Err(why) => {
            let mut raw = raw_run(
                spec,
                process::Run {
                    ending: Ending::WaitFailed(why),
                    stdout: Default::default(),
                    stderr: Default::default(),
                    duration: Duration::ZERO,
                    stdin_error: None,
                    pid: None,
                    lingering: false,
                },
            );
            raw.warm = true;
            raw
        }
    }
}

/// The process runner's result as the hook engine sees it.
fn raw_run(spec: &CommandSpec, run: process::Run) -> RawRun {
    let status = match &run.ending {
        Ending::Exited(code) => RunStatus::Exited(*code),
        Ending::Signaled(signal) => RunStatus::Signaled(*signal),
        Ending::TimedOut | Ending::Cancelled => RunStatus::TimedOut,
        Ending::SpawnFailed(err, errno) => {
            RunStatus::SpawnFailed(spawn_error_text(spec, err, *errno))
        }
        Ending::OutputPipeFailed(err) => RunStatus::SpawnFailed(spawn_error_text(spec, err, None)),
        Ending::WaitFailed(err) => {
            RunStatus::SpawnFailed(format!("waiting for the hook process failed: {err}"))
        }
    };
    RawRun {
        status,
        stdout_bytes: run.stdout.total,
        stderr_bytes: run.stderr.total,
        stdout_capped: run.stdout.capped(),
        stderr_capped: run.stderr.capped(),
        stdout: run.stdout.bytes,
        stderr: run.stderr.bytes,
        duration: run.duration,
        stdin_error: run.stdin_error.map(|err| match err {
            StdinError::Closed => STDIN_EPIPE_TEXT.to_string(),
            StdinError::Failed(err) => format!("writing the hook input to stdin failed: {err}"),
        }),
        pid: run.pid,
        cancelled: run.ending == Ending::Cancelled,
        lingering_killed: run.lingering,
        warm: false,
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
    started: Instant,
    pid: Option<u32>,
}

impl AsyncProbe {
    /// Largest stdout prefix re-parsed while looking for the marker.
    const MAX_PROBE: usize = 64 * 1024;
}

impl process::StdoutWatch for AsyncProbe {
    fn spawned(&mut self, pid: Option<u32>) {
        self.pid = pid;
    }

    /// After each stdout chunk containing `}`: the accumulated stdout, trimmed, must be exactly
    /// one JSON object with `"async": true` (Claude Code's rule). Its `asyncTimeout` becomes
    /// the deadline of the background part, from the moment the marker was seen.
    fn chunk(&mut self, stdout: &[u8], chunk: &[u8]) -> Option<Duration> {
        if self.marker.is_none() || stdout.len() > Self::MAX_PROBE || !chunk.contains(&b'}') {
            return None;
        }
        let text = std::str::from_utf8(stdout).ok()?.trim();
        if !text.starts_with('{')
            || !text.ends_with('}')
            || crate::hooks::output::nesting_depth(text.as_bytes())
                > crate::hooks::output::MAX_JSON_DEPTH
        {
            return None;
        }
        let marker = serde_json::from_str::<Value>(text).ok()?;
        if marker.get("async") != Some(&Value::Bool(true)) {
            // The first complete object is not the marker: this run stays synchronous.
            self.marker = None;
            return None;
        }
        let timeout = marker
            .get("asyncTimeout")
            .and_then(Value::as_f64)
            .filter(|ms| *ms > 0.0)
            // A hook controls this number: out-of-range values are ignored, never a panic.
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        if let Some(tx) = self.marker.take() {
            tracing::debug!(pid = ?self.pid, "hook switched itself to async");
            let _ = tx.send(Detected {
                marker,
                prefix_len: stdout.len(),
                after: self.started.elapsed(),
                pid: self.pid,
            });
        }
        timeout
    }
}

fn spawn_error_text(spec: &CommandSpec, err: &str, errno: Option<i32>) -> String {
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
    let why = match errno {
        Some(libc::E2BIG) => {
            "; its arguments and environment together are over the system's limit (ARG_MAX)"
        }
        Some(libc::EAGAIN) => "; the system or user process limit was reached (fork failed)",
        Some(libc::ENOMEM) => "; the system is out of memory (fork failed)",
        Some(_) | None => "",
    };
    format!("cannot start {program}: {err}{why}")
}
