//! The process runner: starts one program in its own process group, feeds it bytes, keeps a
//! bounded amount of what it writes, and ends it — the whole group — on a timeout or a cancel.
//!
//! It knows nothing about hooks, tools or events: bytes in, how the process ended, bytes out.
//! Command hooks ([`crate::hooks::command`]) and the Bash tool ([`crate::tools::bash`]) both run
//! their processes here. What it owns:
//!
//! * the program is spawned with its argv as given — no shell is added (a caller that wants one
//!   passes `/bin/sh -c …` itself, never a login shell) — and leads its own process group
//!   (`process_group(0)`), so a kill reaches the whole tree (`killpg`), not only the direct child;
//! * stdin is written *while* stdout and stderr are drained (a payload larger than the pipe
//!   buffer to a program that never reads cannot deadlock), then closed; `EPIPE` is recorded,
//!   not fatal;
//! * both streams are read to EOF even past their cap: bytes beyond the cap are counted and
//!   discarded, so the child never blocks on a full pipe and memory stays bounded by the cap;
//! * a timeout or a cancel is SIGTERM to the group, up to a caller-chosen grace for the child to
//!   exit (the drains go on meanwhile), then SIGKILL to the group unconditionally (descendants may
//!   ignore SIGTERM), then reaping;
//! * a run never waits on pipes forever: once the direct child is gone, whatever still holds the
//!   output pipes gets [`Limits::linger`], then is killed or left, as the caller chose;
//! * a run future dropped midway SIGKILLs its group (with [`AfterLinger::Leave`], only until the
//!   direct child has ended).
//!
//! Failure is data: [`run`] never panics and never returns an error; how the run ended is an
//! [`Ending`] in the returned [`Run`]. Nothing here calls `unwrap`/`expect` on anything the child
//! controls.

#![deny(missing_docs)]

use std::ffi::OsStr;
use std::future::Future;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};
use tokio::net::unix::pipe::Receiver;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::Notify;

mod capture;
mod forked;
mod group;
mod spawn;

use capture::*;
pub use forked::{
    Forked, forked_pipes, packet_pair, prespawn_with_stdin, recv_packet, run_forked, send_packet,
};
use group::*;
pub use group::{kill_group, kill_group_until, signal_group};
use spawn::*;

/// A program to start: its argv, working directory and environment changes.
///
/// Why borrowed: callers already own these strings (a hook's spec, the Bash tool's script);
/// copying a dozen of them per run would be the runner's only allocations besides the buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program<'a> {
    /// The executable: a path, or a name looked up in `PATH`.
    pub program: &'a OsStr,
    /// The arguments after the program name.
    pub args: Vec<&'a OsStr>,
    /// Working directory; a missing directory makes the spawn fail.
    pub cwd: &'a Path,
    /// Variables set on top of rein's own environment (later entries win).
    pub env: &'a [(String, String)],
    /// Variables removed from the inherited environment (applied before `env`).
    pub env_remove: &'a [String],
    /// Start it as the leader of a session of its own (`setsid`), as Claude Code starts a
    /// hook's shell; it then also leads its own process group. Falls back to a group of its
    /// own when `setsid(1)` is not installed.
    pub new_session: bool,
}

impl<'a> Program<'a> {
    /// `program` with no arguments and no environment changes, started in `cwd`.
    pub fn new(program: &'a (impl AsRef<OsStr> + ?Sized), cwd: &'a Path) -> Program<'a> {
        Program {
            program: program.as_ref(),
            args: Vec::new(),
            cwd,
            env: &[],
            env_remove: &[],
            new_session: false,
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: &'a (impl AsRef<OsStr> + ?Sized)) -> Program<'a> {
        self.args.push(arg.as_ref());
        self
    }

    /// The command, leading its own process group (and session, see
    /// [`Program::new_session`]); stdio is the caller's to set.
    fn command(&self) -> Command {
        // Why setsid(1) and not a pre-exec hook: the child must call setsid() between fork and
        // exec, which std offers only through `pre_exec` (unsafe, and it disables the
        // posix_spawn path); setsid(1) makes that one call and execs the program in place (same
        // pid). It is started outside any group of its own, so it is not a group leader and
        // setsid() succeeds without a fork.
        let setsid = if self.new_session {
            setsid_program()
        } else {
            None
        };
        let mut command = match setsid {
            Some(setsid) => {
                let mut command = Command::new(setsid);
                command.arg(self.program);
                command
            }
            None => {
                let mut command = Command::new(self.program);
                command.process_group(0);
                command
            }
        };
        command.args(&self.args);
        for name in self.env_remove {
            command.env_remove(name);
        }
        command
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.cwd);
        command
    }
}

/// What the program reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin<'a> {
    /// `/dev/null`: the program sees EOF at once.
    Null,
    /// These bytes through a pipe, which is then closed.
    Bytes(&'a [u8]),
}

/// A file that receives a copy of a [`Output::MergedTee`] stream, up to `limit` bytes: what
/// a program prints can be kept whole on disk while memory holds only the start.
///
/// Why blocking writes: they go to a local file the caller just created, in chunks of at most
/// 64 KiB, between reads of the pipe.
#[derive(Debug)]
pub struct Tee {
    /// The file, open for writing.
    pub file: std::fs::File,
    /// Bytes written at most; the rest is counted, not written.
    pub limit: u64,
}

/// Where stdout and stderr go and how much of them is kept.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// Each stream on its own pipe, keeping at most this many bytes of each.
    Separate {
        /// Bytes of stdout kept.
        stdout_cap: usize,
        /// Bytes of stderr kept.
        stderr_cap: usize,
    },
    /// Both streams on one pipe, so their bytes interleave exactly as written. Kept in
    /// [`Run::stdout`] (at most `cap` bytes); [`Run::stderr`] stays empty.
    Merged {
        /// Bytes kept of the combined stream.
        cap: usize,
    },
    /// [`Output::Merged`], and every byte up to the tee's limit also written to its file
    /// ([`Captured::teed`], [`Captured::tee_error`]).
    MergedTee {
        /// Bytes kept in memory of the combined stream.
        cap: usize,
        /// Where the copy goes.
        tee: &'a Tee,
    },
}

/// What happens to processes that still hold the output pipes [`Limits::linger`] after the
/// direct child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterLinger {
    /// SIGKILL the group, then give the drains one more `linger` to see EOF. The group stays
    /// armed for a kill until then: only a run that ended with its pipes released leaves
    /// descendants alone.
    KillGroup,
    /// Stop reading and leave them running: a descendant started in the background
    /// (`server &`) was meant to outlive the call. Once the direct child has ended, dropping the
    /// run no longer kills the group either.
    Leave,
}

/// When a run is stopped, and how hard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest the run may take before its group is terminated ([`Ending::TimedOut`]).
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL to the group on a timeout or a cancel.
    pub kill_grace: Duration,
    /// How long the output pipes may stay open after the direct child has ended (or was
    /// killed) before [`Limits::after_linger`] applies.
    pub linger: Duration,
    /// What to do with whatever still holds the pipes after `linger`.
    pub after_linger: AfterLinger,
}

/// One run: what to start, what it reads, what is kept of its output, and when it is stopped.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The program and its environment.
    pub program: Program<'a>,
    /// Its stdin.
    pub stdin: Stdin<'a>,
    /// Its stdout and stderr.
    pub output: Output<'a>,
    /// Its timeout and kill policy.
    pub limits: Limits,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The direct child exited with this code.
    Exited(i32),
    /// The direct child was killed by this signal (not by the runner).
    Signaled(i32),
    /// [`Limits::timeout`] passed; the group was terminated.
    TimedOut,
    /// The caller's cancel future completed first; the group was terminated.
    Cancelled,
    /// The program could not be started: the OS error's text and its errno, if it has one.
    SpawnFailed(String, Option<i32>),
    /// The shared pipe of [`Output::Merged`] could not be set up; nothing was started.
    OutputPipeFailed(String),
    /// Waiting for the child failed, so its exit status is unknown (the OS error's text).
    WaitFailed(String),
}

/// Why stdin could not be written fully. The run goes on either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinError {
    /// The program closed its stdin before reading everything (`EPIPE`).
    Closed,
    /// Any other write error (its text).
    Failed(String),
}

/// What was kept of one output stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes of the stream, at most the cap.
    pub bytes: Vec<u8>,
    /// Bytes the program wrote in total, kept or not.
    pub total: u64,
    /// Newlines among the discarded bytes (beyond the cap).
    pub dropped_newlines: u64,
    /// Bytes written to the [`Tee`], if there was one.
    pub teed: u64,
    /// Why writing to the [`Tee`] stopped before the stream or the limit ended (a full disk).
    pub tee_error: Option<String>,
}

impl Captured {
    /// Whether bytes beyond the cap were discarded.
    pub fn capped(&self) -> bool {
        self.total > self.bytes.len() as u64
    }
}

/// The result of one [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// How it ended.
    pub ending: Ending,
    /// stdout (with [`Output::Merged`]: both streams).
    pub stdout: Captured,
    /// stderr (empty with [`Output::Merged`]).
    pub stderr: Captured,
    /// From just before spawning until the run was over.
    pub duration: Duration,
    /// Why stdin could not be written fully, if it could not.
    pub stdin_error: Option<StdinError>,
    /// pid (= process group id) of the direct child, when it was spawned.
    pub pid: Option<u32>,
    /// Something still held the output pipes [`Limits::linger`] after the direct child ended;
    /// [`Limits::after_linger`] was applied to it.
    pub lingering: bool,
}

impl Run {
    fn not_started(ending: Ending, duration: Duration) -> Run {
        Run {
            ending,
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration,
            stdin_error: None,
            pid: None,
            lingering: false,
        }
    }
}

/// Looks at stdout while it arrives (command hooks use it for Claude Code's runtime `async`
/// marker).
pub trait StdoutWatch {
    /// Called once the child is spawned, with its pid (= process group id).
    fn spawned(&mut self, _pid: Option<u32>) {}

    /// Called after each stdout chunk, as long as nothing has been discarded yet, with all of
    /// stdout so far (`kept`, ending with `chunk`). Returning `Some(t)` moves the run's deadline
    /// to `t` from now.
    fn chunk(&mut self, kept: &[u8], chunk: &[u8]) -> Option<Duration>;
}

/// Runs `job` until the program exits, its timeout passes or `cancel` completes, and returns
/// how it ended with what it wrote. `watch` sees stdout as it arrives.
///
/// Dropping the returned future before it completes SIGKILLs the process group (see
/// [`AfterLinger::Leave`] for the one exception).
pub async fn run(
    job: Job<'_>,
    cancel: impl Future<Output = ()>,
    watch: Option<&mut (dyn StdoutWatch + Send)>,
) -> Run {
    let started = Instant::now();
    let spawned = match spawn(&job.program, job.stdin, job.output) {
        Ok(spawned) => spawned,
        Err(ending) => return Run::not_started(ending, started.elapsed()),
    };
    drive(
        started, spawned, job.stdin, job.output, job.limits, cancel, watch,
    )
    .await
}

/// A program started ahead of its use ([`prespawn_with_stdin`]): it leads its own group with
/// its stdout and stderr on pipes; dropping it SIGKILLs it.
#[derive(Debug)]
pub struct Prespawned {
    spawned: Spawned,
}

impl Prespawned {
    /// Its pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.spawned.child.id()
    }

    /// Reads exactly `n` bytes of its stderr (the run's capture then starts after them), or
    /// fails when the stream ends first or `limit` passes.
    pub async fn read_stderr(&mut self, n: usize, limit: Duration) -> io::Result<Vec<u8>> {
        let Some(pipe) = self.spawned.stderr.as_mut() else {
            return Err(io::Error::other("no stderr pipe"));
        };
        let mut buf = vec![0u8; n];
        match tokio::time::timeout(limit, pipe.read_exact(&mut buf)).await {
            Ok(Ok(_)) => Ok(buf),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")),
        }
    }
}

impl std::fmt::Debug for Spawned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawned")
            .field("pid", &self.child.id())
            .finish()
    }
}

/// The run of a spawned child: stdin written while the output is drained, the timeout, the
/// cancel, the group kill, the linger.
async fn drive(
    started: Instant,
    spawned: Spawned,
    stdin: Stdin<'_>,
    output: Output<'_>,
    limits: Limits,
    cancel: impl Future<Output = ()>,
    watch: Option<&mut (dyn StdoutWatch + Send)>,
) -> Run {
    let Spawned {
        mut child,
        stdin: child_stdin,
        stdout: child_stdout,
        stderr: child_stderr,
    } = spawned;
    let pid = child.id();
    let root = child.tree_root();
    let mut guard = GroupGuard { pgid: pid };
    let stdin_bytes = match stdin {
        Stdin::Null => &[][..],
        Stdin::Bytes(bytes) => bytes,
    };
    let (stdout_cap, stderr_cap) = match output {
        Output::Separate {
            stdout_cap,
            stderr_cap,
        } => (stdout_cap, stderr_cap),
        Output::Merged { cap } | Output::MergedTee { cap, .. } => (cap, 0),
    };
    let mut out = Capture::new(stdout_cap);
    if let Output::MergedTee { tee, .. } = output {
        out.tee = Some(tee);
    }
    let mut err = Capture::new(stderr_cap);

    // Why a slot and a notify: the watch runs inside the stdout drain, the deadline lives in
    // the loop below, which must wake when it moves; both live on this stack (no allocation).
    let moved = DeadlineMove::default();
    let watched = watch.is_some();
    let mut watching = watch.map(|watch| {
        watch.spawned(pid);
        Watching {
            watch,
            moved: &moved,
        }
    });

    let mut stdin_error: Option<StdinError> = None;
    let mut lingering = false;
    let ending;
    {
        let io = async {
            let (stdin_result, (), ()) = tokio::join!(
                write_stdin(child_stdin, stdin_bytes),
                out.drain(child_stdout, watching.as_mut()),
                err.drain(child_stderr, None),
            );
            stdin_result
        };
        tokio::pin!(io);
        tokio::pin!(cancel);
        let deadline = tokio::time::sleep(limits.timeout);
        tokio::pin!(deadline);

        let mut io_done = false;
        let stop = loop {
            tokio::select! {
                result = &mut io, if !io_done => {
                    io_done = true;
                    stdin_error = result;
                }
                exit = child.wait() => break Stop::Exited(exit),
                () = moved.notify.notified(), if watched => {
                    // A deadline too far to represent keeps the current one.
                    if let Some(at) = moved
                        .take()
                        .and_then(|timeout| tokio::time::Instant::now().checked_add(timeout))
                    {
                        deadline.as_mut().reset(at);
                    }
                }
                () = &mut deadline => break Stop::Deadline,
                () = &mut cancel => break Stop::Cancelled,
            }
        };

        ending = match stop {
            Stop::Exited(exit) => ending_of(exit),
            Stop::Deadline | Stop::Cancelled => {
                if let Some(pgid) = pid {
                    let exited = async {
                        loop {
                            tokio::select! {
                                result = &mut io, if !io_done => {
                                    io_done = true;
                                    stdin_error = result;
                                }
                                _ = child.wait() => break,
                            }
                        }
                    };
                    terminate_group(pgid, root.unwrap_or(pgid), limits.kill_grace, exited).await;
                    // Why ignore the result: the group was SIGKILLed; if reaping fails there is
                    // nothing left to report beyond the timeout or cancel.
                    let _ = tokio::time::timeout(limits.kill_grace, child.wait()).await;
                }
                if matches!(stop, Stop::Deadline) {
                    Ending::TimedOut
                } else {
                    Ending::Cancelled
                }
            }
        };
        if limits.after_linger == AfterLinger::Leave {
            guard.disarm();
        }

        if !io_done {
            // The direct child is gone; whatever still holds the pipes gets `linger` for what
            // is buffered to arrive.
            match tokio::time::timeout(limits.linger, &mut io).await {
                Ok(result) => stdin_error = result,
                Err(_) => {
                    lingering = true;
                    if limits.after_linger == AfterLinger::KillGroup {
                        if let Some(pgid) = pid {
                            signal_group(pgid, libc::SIGKILL);
                        }
                        if let Ok(result) = tokio::time::timeout(limits.linger, &mut io).await {
                            stdin_error = result;
                        }
                    }
                }
            }
        }
    }
    // The run is over: a process the child left running with its pipes released (a daemon
    // started on purpose) is not ours to kill. Only an abandoned run kills the group.
    guard.disarm();

    Run {
        ending,
        stdout: out.into_captured(),
        stderr: err.into_captured(),
        duration: started.elapsed(),
        stdin_error,
        pid,
        lingering,
    }
}

/// The pids of every living descendant of `pid` (read from `/proc`).
pub fn descendants(pid: u32) -> Vec<u32> {
    libc::pid_t::try_from(pid)
        .map(|root| {
            tree::descendants(root)
                .iter()
                .filter_map(|m| u32::try_from(m.pid).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A program started by [`spawn_detached`], running on its own.
#[derive(Debug)]
pub struct Detached {
    child: Child,
}

impl Detached {
    /// pid (= process group id) of the program, while it has not been reaped.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for the program to end and reaps it.
    pub async fn wait(mut self) -> Ending {
        ending_of(self.child.wait().await)
    }
}

/// Starts `program` in its own process group with stdin at `/dev/null` (or the given file
/// descriptor) and stdout/stderr written to the given files, and returns without waiting: no
/// capture, no timeout, and no kill when the [`Detached`] is dropped (it outlives the caller,
/// as a background command should).
///
/// Why a stdin descriptor: it is the one way to hand a child an inherited descriptor without
/// `pre_exec` — the Bash tool gives its background commands the read end of a pipe whose write
/// end only rein holds, so they learn of rein's death (EOF) even after a SIGKILL.
pub fn spawn_detached(
    program: &Program<'_>,
    stdin: Option<OwnedFd>,
    stdout: std::fs::File,
    stderr: std::fs::File,
) -> io::Result<Detached> {
    let mut command = program.command();
    command
        .stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(stdout)
        .stderr(stderr);
    Ok(Detached {
        child: command.spawn()?,
    })
}
