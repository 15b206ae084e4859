//! Starting a child in a process group of its own (through `setsid` where asked), its pipes, and
//! the guard that kills the group if the run is dropped.

use super::*;

/// util-linux's `setsid`, if installed.
pub(super) fn setsid_program() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<&'static Path>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        ["/usr/bin/setsid", "/bin/setsid"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.is_file())
    })
}

/// A spawned child with the pipes the run reads and writes.
pub(super) struct Spawned {
    pub(super) child: Proc,
    pub(super) stdin: Option<StdinPipe>,
    pub(super) stdout: Option<OutputPipe>,
    pub(super) stderr: Option<OutputPipe>,
}

/// The direct child: spawned by rein, or forked for rein by a warm interpreter.
pub(super) enum Proc {
    Child(Child),
    Forked(super::forked::ForkedChild),
}

impl Proc {
    /// The process group to signal (a spawned child leads its own).
    pub(super) fn id(&self) -> Option<u32> {
        match self {
            Proc::Child(child) => child.id(),
            Proc::Forked(forked) => forked.id(),
        }
    }

    /// The process whose descendants belong to the run.
    pub(super) fn tree_root(&self) -> Option<u32> {
        match self {
            Proc::Child(child) => child.id(),
            Proc::Forked(forked) => forked.tree_root(),
        }
    }

    /// Cancel-safe, like [`Child::wait`].
    pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Proc::Child(child) => child.wait().await,
            Proc::Forked(forked) => forked.wait().await,
        }
    }
}

/// The write end of the child's stdin.
pub(super) enum StdinPipe {
    Child(ChildStdin),
    Pipe(tokio::net::unix::pipe::Sender),
}

impl tokio::io::AsyncWrite for StdinPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            StdinPipe::Child(pipe) => Pin::new(pipe).poll_write(cx, buf),
            StdinPipe::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            StdinPipe::Child(pipe) => Pin::new(pipe).poll_flush(cx),
            StdinPipe::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            StdinPipe::Child(pipe) => Pin::new(pipe).poll_shutdown(cx),
            StdinPipe::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
        }
    }
}

/// The read end of an output pipe: the child's own stdout or stderr, or a pipe rein made (a
/// merged one, or a forked child's).
pub(super) enum OutputPipe {
    Stdout(ChildStdout),
    Stderr(ChildStderr),
    Pipe(Receiver),
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
            OutputPipe::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
        }
    }
}

pub(super) fn spawn(
    program: &Program<'_>,
    stdin: Stdin<'_>,
    output: Output<'_>,
) -> Result<Spawned, Ending> {
    let stdin = match stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) => Stdio::piped(),
    };
    spawn_with_stdin(program, stdin, output)
}

/// [`spawn`] with the child's stdin given as it is to be set up (a pipe, `/dev/null`, or a
/// descriptor of the caller's).
pub(super) fn spawn_with_stdin(
    program: &Program<'_>,
    stdin: Stdio,
    output: Output<'_>,
) -> Result<Spawned, Ending> {
    let mut command = program.command();
    command.kill_on_drop(true).stdin(stdin);
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
    let stdin = child.stdin.take().map(StdinPipe::Child);
    let (stdout, stderr) = match merged {
        Some(reader) => (Some(OutputPipe::Pipe(reader)), None),
        None => (
            child.stdout.take().map(OutputPipe::Stdout),
            child.stderr.take().map(OutputPipe::Stderr),
        ),
    };
    Ok(Spawned {
        child: Proc::Child(child),
        stdin,
        stdout,
        stderr,
    })
}

/// One pipe whose write end is given to the child twice (as stdout and as stderr).
pub(super) fn merged_pipe() -> io::Result<(Receiver, (OwnedFd, OwnedFd))> {
    let (reader, writer) = std::io::pipe()?;
    let writer2 = writer.try_clone()?;
    let reader = Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok((reader, (OwnedFd::from(writer), OwnedFd::from(writer2))))
}

pub(super) enum Stop {
    Exited(io::Result<ExitStatus>),
    Deadline,
    Cancelled,
}

pub(super) fn ending_of(exit: io::Result<ExitStatus>) -> Ending {
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
pub(super) struct GroupGuard {
    pub(super) pgid: Option<u32>,
}

impl GroupGuard {
    pub(super) fn disarm(&mut self) {
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

pub(super) async fn write_stdin(stdin: Option<StdinPipe>, bytes: &[u8]) -> Option<StdinError> {
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
