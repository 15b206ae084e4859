//! Processes rein did not spawn itself: children a warm interpreter forked for one call
//! ([`crate::hooks::warm`]). rein makes their three pipes and hands the child's ends over a
//! Unix socket (`SCM_RIGHTS`); the forking process says the child's pid and, later, its wait
//! status. The run is then driven exactly as a spawned child's ([`run_forked`]): same capture,
//! timeout, group kill and linger; only the wait differs. The child's process group need not
//! be its own: a warm python call runs in the session and group of a leader that has already
//! exited (as a script under `/bin/sh -c` runs in the shell's), so the group to kill and the
//! root of the tree to walk for descendants that left it are kept apart.

use super::*;

use std::os::fd::{AsRawFd, FromRawFd};
use tokio::net::unix::pipe::Sender;
use tokio::sync::oneshot;

/// A child forked for one call: its process group, its pid, the promise of its wait status,
/// and rein's ends of its pipes.
#[derive(Debug)]
pub struct Forked {
    pgid: u32,
    pid: u32,
    exit: oneshot::Receiver<i32>,
    ends: ForkedEnds,
}

/// rein's ends of a forked child's stdin, stdout and stderr.
#[derive(Debug)]
pub struct ForkedEnds {
    stdin: Sender,
    stdout: Receiver,
    stderr: Receiver,
}

impl ForkedEnds {
    /// Writes as much of `bytes` to the child's stdin as the pipe takes without waiting (all
    /// of a payload up to the pipe's capacity, 64 KiB on Linux), before the child exists: it
    /// then finds its input ready. Returns how many bytes were written.
    pub fn prefill(&self, bytes: &[u8]) -> usize {
        let mut written = 0;
        while written < bytes.len() {
            match self.stdin.try_write(&bytes[written..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => written += n,
            }
        }
        written
    }

    /// The child `pid` of the process group `pgid`, once both are known; `exit` yields its
    /// raw wait status.
    pub fn forked(self, pgid: u32, pid: u32, exit: oneshot::Receiver<i32>) -> Forked {
        Forked {
            pgid,
            pid,
            exit,
            ends: self,
        }
    }
}

/// Three pipes for a child: rein's ends, and the child's (its stdin's read end, its stdout's
/// and stderr's write ends, in that order) to hand over.
pub fn forked_pipes() -> io::Result<(ForkedEnds, [OwnedFd; 3])> {
    let (stdin_r, stdin_w) = std::io::pipe()?;
    let (stdout_r, stdout_w) = std::io::pipe()?;
    let (stderr_r, stderr_w) = std::io::pipe()?;
    let ends = ForkedEnds {
        stdin: Sender::from_owned_fd(OwnedFd::from(stdin_w))?,
        stdout: Receiver::from_owned_fd(OwnedFd::from(stdout_r))?,
        stderr: Receiver::from_owned_fd(OwnedFd::from(stderr_r))?,
    };
    Ok((
        ends,
        [
            OwnedFd::from(stdin_r),
            OwnedFd::from(stdout_w),
            OwnedFd::from(stderr_w),
        ],
    ))
}

/// A connected pair of `SOCK_SEQPACKET` Unix sockets (message boundaries kept), close-on-exec.
pub fn packet_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for socketpair to fill.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded, so both are open descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends one packet with `fds` attached (`SCM_RIGHTS`). Blocking; a full socket buffer waits.
pub fn send_packet(socket: &OwnedFd, bytes: &[u8], fds: &[OwnedFd]) -> io::Result<()> {
    let raw: Vec<libc::c_int> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let payload = std::mem::size_of_val(raw.as_slice());
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(payload as libc::c_uint) } as usize;
    // u64 storage keeps the control buffer aligned for `cmsghdr`.
    let mut control = vec![0u64; space.div_ceil(8).max(1)];
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !raw.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: msg_control points at `space` bytes, enough for one header with `payload`
        // bytes of data, so CMSG_FIRSTHDR is non-null and CMSG_DATA has room for `raw`.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(payload as libc::c_uint) as _;
            std::ptr::copy_nonoverlapping(
                raw.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                payload,
            );
        }
    }
    loop {
        // SAFETY: msg and everything it points at live until the call returns.
        let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if sent >= 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Receives one packet into `buf` (blocking); `Ok(0)` when the peer is gone.
pub fn recv_packet(socket: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is valid for writes of its length.
        let n = unsafe { libc::recv(socket.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// [`prespawn`] with `stdin` given (a socket, say) instead of a pipe.
pub fn prespawn_with_stdin(program: &Program<'_>, stdin: OwnedFd) -> Result<Prespawned, Ending> {
    spawn_with_stdin(
        program,
        Stdio::from(stdin),
        Output::Separate {
            stdout_cap: 0,
            stderr_cap: 0,
        },
    )
    .map(|spawned| Prespawned { spawned })
}

/// [`run`] for a [`Forked`] child: writes `stdin` and drives it as [`run`] drives a child it
/// spawned. `output` must be [`Output::Separate`].
pub async fn run_forked(
    forked: Forked,
    stdin: Stdin<'_>,
    output: Output<'_>,
    limits: Limits,
    cancel: impl Future<Output = ()>,
    watch: Option<&mut (dyn StdoutWatch + Send)>,
) -> Run {
    let Forked {
        pgid,
        pid,
        exit,
        ends,
    } = forked;
    let spawned = Spawned {
        child: Proc::Forked(ForkedChild {
            pgid,
            pid,
            exit,
            status: None,
            lost: false,
        }),
        stdin: Some(StdinPipe::Pipe(ends.stdin)),
        stdout: Some(OutputPipe::Pipe(ends.stdout)),
        stderr: Some(OutputPipe::Pipe(ends.stderr)),
    };
    drive(
        Instant::now(),
        spawned,
        stdin,
        output,
        limits,
        cancel,
        watch,
    )
    .await
}

/// The wait side of a forked child.
pub(super) struct ForkedChild {
    pgid: u32,
    pid: u32,
    exit: oneshot::Receiver<i32>,
    status: Option<i32>,
    /// The forking process ended without reporting (the receiver must not be polled again).
    lost: bool,
}

impl ForkedChild {
    /// Its process group (see the module's text).
    pub(super) fn id(&self) -> Option<u32> {
        Some(self.pgid)
    }

    /// Its own pid: the root of the tree its descendants are found under.
    pub(super) fn tree_root(&self) -> Option<u32> {
        Some(self.pid)
    }

    /// Its wait status, once the forking process has reported it. Cancel-safe.
    pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(ExitStatus::from_raw(status));
        }
        if !self.lost {
            match (&mut self.exit).await {
                Ok(status) => {
                    self.status = Some(status);
                    return Ok(ExitStatus::from_raw(status));
                }
                Err(_) => self.lost = true,
            }
        }
        Err(io::Error::other(
            "the warm interpreter that forked it ended before reporting its exit",
        ))
    }
}
