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

/// util-linux's `setsid`, if installed.
fn setsid_program() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<&'static Path>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        ["/usr/bin/setsid", "/bin/setsid"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.is_file())
    })
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

/// Kills a whole process group: SIGTERM, `grace`, SIGKILL. Returns at once if the group is
/// already gone. For a process that outlived its run (a background hook at shutdown); [`run`]
/// does this itself on a timeout or a cancel.
pub async fn kill_group(pgid: u32, grace: Duration) {
    terminate_group(pgid, grace, std::future::pending()).await;
}

/// [`kill_group`] for a group whose leader the caller is reaping: SIGTERM, then SIGKILL as soon
/// as `ended` completes (the leader is gone; members that ignored SIGTERM are not waited for)
/// or `grace` passes, whichever is first.
pub async fn kill_group_until(pgid: u32, grace: Duration, ended: impl Future<Output = ()>) {
    terminate_group(pgid, grace, ended).await;
}

/// The one TERM → grace → KILL routine, as Claude Code 2.1.328 ends a hook (fixture
/// `tests/fixtures/cc-2.1.328/hook_kill`): SIGTERM to the group and to every descendant of its
/// leader, including ones that left the group or the session (`setsid`); then wait until all
/// of them are gone or `grace` passes — `ended` (the caller reaping the leader) is driven
/// meanwhile but does not cut the wait short while others still run, so their TERM traps get
/// their time; then SIGKILL to whatever is left, unconditionally (members may have ignored
/// SIGTERM). Nothing is waited for when no process got the SIGTERM.
async fn terminate_group(pgid: u32, grace: Duration, ended: impl Future<Output = ()>) {
    let Ok(leader) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // Why before the TERM: once a process exits its children are re-parented, and the tree
    // that names them as descendants is gone.
    // Members of the group get the group's signal; the others (a child that called `setsid` or
    // `setpgid`) one of their own. Nobody gets two.
    let tree: Vec<tree::Member> = tree::descendants(leader)
        .into_iter()
        .filter(|m| m.pgrp != leader)
        .collect();
    let mut signalled = signal_group(pgid, libc::SIGTERM);
    for member in &tree {
        signalled |= member.signal(libc::SIGTERM);
    }
    if !signalled {
        return;
    }
    let deadline = tokio::time::Instant::now() + grace;
    tokio::pin!(ended);
    let mut reaped = false;
    loop {
        // Zombies count as gone: a leader nobody reaps yet (see `kill_group`) must not hold
        // the wait open.
        if !tree::group_alive(leader) && tree.iter().all(|m| !m.alive()) {
            break;
        }
        tokio::select! {
            () = &mut ended, if !reaped => reaped = true,
            () = tokio::time::sleep(tree::POLL) => {}
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    // Processes started during the grace under a survivor are found now.
    let mut last: Vec<tree::Member> = tree::descendants(leader);
    for member in &tree {
        if member.alive() {
            last.extend(tree::descendants(member.pid));
        }
    }
    last.retain(|m| m.pgrp != leader);
    signal_group(pgid, libc::SIGKILL);
    for member in tree.iter().chain(&last) {
        member.signal(libc::SIGKILL);
    }
}

/// The process tree under a leader, read from `/proc`. A process is known by its pid and its
/// start time, so a pid reused after the process exited is never signalled.
mod tree {
    use std::collections::HashMap;
    use std::time::Duration;

    /// How often a terminated tree is checked for survivors.
    pub const POLL: Duration = Duration::from_millis(20);

    /// One process: its pid and start time (`/proc/<pid>/stat` field 22).
    #[derive(Debug, Clone, Copy)]
    pub struct Member {
        pub pid: libc::pid_t,
        /// Its process group when it was found.
        pub pgrp: libc::pid_t,
        start: u64,
    }

    struct Stat {
        state: char,
        ppid: libc::pid_t,
        pgrp: libc::pid_t,
        start: u64,
    }

    fn stat(pid: libc::pid_t) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may hold spaces and parentheses: the fields start after the last ')'.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgrp: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    fn all() -> Vec<(libc::pid_t, Stat)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter_map(|pid| Some((pid, stat(pid)?)))
            .collect()
    }

    /// Every living descendant of `root` (not `root` itself), wherever its group or session.
    pub fn descendants(root: libc::pid_t) -> Vec<Member> {
        let procs = all();
        let mut children: HashMap<libc::pid_t, Vec<(libc::pid_t, libc::pid_t, u64)>> =
            HashMap::new();
        for (pid, st) in &procs {
            if st.state != 'Z' {
                children
                    .entry(st.ppid)
                    .or_default()
                    .push((*pid, st.pgrp, st.start));
            }
        }
        let mut out = Vec::new();
        let mut todo = vec![root];
        while let Some(parent) = todo.pop() {
            for &(pid, pgrp, start) in children.get(&parent).map(Vec::as_slice).unwrap_or(&[]) {
                if pid > 1 && !out.iter().any(|m: &Member| m.pid == pid) {
                    out.push(Member { pid, pgrp, start });
                    todo.push(pid);
                }
            }
        }
        out
    }

    /// Whether a process of group `pgid` is still running (zombies do not count).
    pub fn group_alive(pgid: libc::pid_t) -> bool {
        all()
            .iter()
            .any(|(_, st)| st.pgrp == pgid && st.state != 'Z')
    }

    impl Member {
        /// Whether this very process still runs (same pid and start time, not a zombie).
        pub fn alive(&self) -> bool {
            stat(self.pid).is_some_and(|st| st.start == self.start && st.state != 'Z')
        }

        /// Sends `signal` if this very process still runs; whether it was sent.
        pub fn signal(&self, signal: i32) -> bool {
            // SAFETY: kill has no memory-safety preconditions; pid > 1 (see `descendants`).
            self.alive() && unsafe { libc::kill(self.pid, signal) == 0 }
        }
    }
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
    let Job {
        program,
        stdin,
        output,
        limits,
    } = job;
    let Spawned {
        mut child,
        stdin: child_stdin,
        stdout: child_stdout,
        stderr: child_stderr,
    } = match spawn(&program, stdin, output) {
        Ok(spawned) => spawned,
        Err(ending) => return Run::not_started(ending, started.elapsed()),
    };
    let pid = child.id();
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
                    terminate_group(pgid, limits.kill_grace, exited).await;
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

/// A spawned child with the pipes the run reads and writes.
struct Spawned {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<OutputPipe>,
    stderr: Option<OutputPipe>,
}

/// The read end of an output pipe: the child's own stdout or stderr, or a merged pipe.
enum OutputPipe {
    Stdout(ChildStdout),
    Stderr(ChildStderr),
    Merged(Receiver),
}

impl AsyncRead for OutputPipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            OutputPipe::Stdout(pipe) => Pin::new(pipe).poll_read(cx, buf),
            OutputPipe::Stderr(pipe) => Pin::new(pipe).poll_read(cx, buf),
            OutputPipe::Merged(pipe) => Pin::new(pipe).poll_read(cx, buf),
        }
    }
}

fn spawn(program: &Program<'_>, stdin: Stdin<'_>, output: Output<'_>) -> Result<Spawned, Ending> {
    let mut command = program.command();
    command.kill_on_drop(true).stdin(match stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) => Stdio::piped(),
    });
    let mut merged = None;
    match output {
        Output::Separate { .. } => {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Output::Merged { .. } | Output::MergedTee { .. } => {
            let (reader, writer) =
                merged_pipe().map_err(|e| Ending::OutputPipeFailed(e.to_string()))?;
            command.stdout(writer.0).stderr(writer.1);
            merged = Some(reader);
        }
    }
    let spawned = command.spawn();
    // Why: the command holds our copies of a merged pipe's write end; until they are closed
    // the pipe never reports EOF.
    drop(command);
    let mut child = spawned.map_err(|e| Ending::SpawnFailed(e.to_string(), e.raw_os_error()))?;
    let stdin = child.stdin.take();
    let (stdout, stderr) = match merged {
        Some(reader) => (Some(OutputPipe::Merged(reader)), None),
        None => (
            child.stdout.take().map(OutputPipe::Stdout),
            child.stderr.take().map(OutputPipe::Stderr),
        ),
    };
    Ok(Spawned {
        child,
        stdin,
        stdout,
        stderr,
    })
}

/// One pipe whose write end is given to the child twice (as stdout and as stderr).
fn merged_pipe() -> io::Result<(Receiver, (OwnedFd, OwnedFd))> {
    let (reader, writer) = std::io::pipe()?;
    let writer2 = writer.try_clone()?;
    let reader = Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok((reader, (OwnedFd::from(writer), OwnedFd::from(writer2))))
}

enum Stop {
    Exited(io::Result<ExitStatus>),
    Deadline,
    Cancelled,
}

fn ending_of(exit: io::Result<ExitStatus>) -> Ending {
    match exit {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(signal)) => Ending::Signaled(signal),
            // Neither a code nor a signal cannot happen for a reaped child on POSIX.
            (None, None) => Ending::Exited(1),
        },
        Err(err) => Ending::WaitFailed(err.to_string()),
    }
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

async fn write_stdin(stdin: Option<ChildStdin>, bytes: &[u8]) -> Option<StdinError> {
    let mut pipe = stdin?;
    let result = match pipe.write_all(bytes).await {
        Ok(()) => pipe.shutdown().await,
        Err(err) => Err(err),
    };
    drop(pipe);
    match result {
        Ok(()) => None,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Some(StdinError::Closed),
        Err(err) => Some(StdinError::Failed(err.to_string())),
    }
}

/// A [`StdoutWatch`] with the slot its deadline moves go through.
struct Watching<'w> {
    watch: &'w mut (dyn StdoutWatch + Send),
    moved: &'w DeadlineMove,
}

/// The latest deadline a watch asked for, and the wake-up for the run loop.
#[derive(Default)]
struct DeadlineMove {
    next: Mutex<Option<Duration>>,
    notify: Notify,
}

impl DeadlineMove {
    fn set(&self, timeout: Duration) {
        if let Ok(mut next) = self.next.lock() {
            *next = Some(timeout);
        }
        // Why notify_one: it stores a permit when the loop is not waiting yet, so no move is
        // lost.
        self.notify.notify_one();
    }

    fn take(&self) -> Option<Duration> {
        self.next.lock().ok().and_then(|mut next| next.take())
    }
}

/// A bounded capture of one output stream.
struct Capture<'a> {
    buf: Vec<u8>,
    cap: usize,
    total: u64,
    dropped_newlines: u64,
    tee: Option<&'a Tee>,
    teed: u64,
    tee_error: Option<String>,
}

impl<'a> Capture<'a> {
    fn new(cap: usize) -> Capture<'a> {
        Capture {
            buf: Vec::new(),
            cap,
            total: 0,
            dropped_newlines: 0,
            tee: None,
            teed: 0,
            tee_error: None,
        }
    }

    fn into_captured(self) -> Captured {
        Captured {
            bytes: self.buf,
            total: self.total,
            dropped_newlines: self.dropped_newlines,
            teed: self.teed,
            tee_error: self.tee_error,
        }
    }

    /// Copies `bytes` to the tee while it has room and has not failed.
    fn tee(&mut self, bytes: &[u8]) {
        let Some(tee) = self.tee else {
            return;
        };
        if self.tee_error.is_some() {
            return;
        }
        let room = usize::try_from(tee.limit.saturating_sub(self.teed)).unwrap_or(usize::MAX);
        let part = &bytes[..bytes.len().min(room)];
        if part.is_empty() {
            return;
        }
        match (&tee.file).write_all(part) {
            Ok(()) => self.teed += part.len() as u64,
            Err(err) => self.tee_error = Some(err.to_string()),
        }
    }

    /// Reads to EOF; keeps the first `cap` bytes, counts the rest. A read error ends the
    /// stream (what was read so far is kept).
    async fn drain(&mut self, stream: Option<OutputPipe>, mut watching: Option<&mut Watching<'_>>) {
        let Some(mut stream) = stream else {
            return;
        };
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) => return,
                Ok(n) => {
                    self.tee(&chunk[..n]);
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
                    let dropped = &chunk[take..n];
                    if !dropped.is_empty() {
                        self.dropped_newlines +=
                            dropped.iter().filter(|&&b| b == b'\n').count() as u64;
                    }
                    if let Some(watching) = watching.as_deref_mut()
                        && self.total == self.buf.len() as u64
                        && let Some(timeout) = watching.watch.chunk(&self.buf, &chunk[..n])
                    {
                        watching.moved.set(timeout);
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }
}
