//! Reading the files Read, Write and Edit work on at a cost bounded by the request, never by
//! the file: an `open` that cannot block, reads that stop at a cap, a line window that keeps only
//! the lines asked for, and a deadline for all of it off the async runtime's threads.
//!
//! - [`open_regular`] opens with `O_NONBLOCK` and keeps the file only if `fstat` says it is a
//!   regular file, so a FIFO swapped in after the tools' `stat` still never blocks the open.
//! - [`read_capped`] reads at most a cap (a file that says it is empty but never ends, as
//!   `/proc` files do, costs the cap).
//! - [`read_window`] streams lines, keeps only the window, and counts the rest of the lines
//!   without keeping them (skipping the holes of a sparse file, which hold no newline).
//! - [`off_runtime`] runs a blocking read on tokio's blocking pool under a deadline: a stuck read
//!   costs a thread, never the session, and never delays rein's exit on a signal (the runtime is
//!   shut down with a deadline of its own, `cli::main`).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Duration;

use super::device_guard::SpecialKind;

/// Longest a tool's read of one file may take before the call fails. Reading and counting the
/// lines of a multi-gigabyte file takes seconds; a read that takes this long is stuck (a network
/// file system that does not answer, a file that blocks like a pipe).
pub const READ_DEADLINE: Duration = Duration::from_secs(60);

/// Bytes read per system call.
const CHUNK: usize = 64 * 1024;

/// Why a file could not be opened as a regular file.
#[derive(Debug)]
pub enum OpenError {
    /// No such file.
    NotFound,
    /// A directory.
    Directory,
    /// A FIFO, socket or device.
    Special,
    /// Any other failure of `open` or `fstat`.
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> OpenError {
        match e.kind() {
            io::ErrorKind::NotFound => OpenError::NotFound,
            io::ErrorKind::IsADirectory => OpenError::Directory,
            _ => OpenError::Io(e),
        }
    }
}

/// Opens `path` for reading without blocking and returns it with its `fstat` metadata if it is
/// a regular file.
///
/// Why `O_NONBLOCK`: a FIFO's `open` for reading waits for a writer, and a terminal's may make it
/// the controlling terminal (`O_NOCTTY` prevents that). The flag is cleared once the file is
/// known to be regular, where it changes nothing anyway.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), OpenError> {
    // Why look before opening: opening a FIFO for reading, even non-blocking, is a reader
    // appearing to whoever waits on its other end, and a device's open can act. The check
    // after the open stays for a path that changes in between.
    let before = std::fs::metadata(path)?;
    if before.is_dir() {
        return Err(OpenError::Directory);
    }
    if SpecialKind::of(&before).is_some() {
        return Err(OpenError::Special);
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(OpenError::Directory);
    }
    if SpecialKind::of(&meta).is_some() {
        return Err(OpenError::Special);
    }
    clear_nonblocking(&file);
    Ok((file, meta))
}

fn clear_nonblocking(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns; F_GETFL/F_SETFL only read and
    // set its status flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// A read that went past what it may return.
#[derive(Debug)]
pub enum CappedError {
    /// The file holds more than the cap; `read` bytes were read before giving up.
    TooLarge {
        read: u64,
    },
    Io(io::Error),
}

/// The whole file, if it holds at most `cap` bytes.
pub fn read_capped(file: &File, cap: u64) -> Result<Vec<u8>, CappedError> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match read_at(file, &mut buf, out.len() as u64) {
            Ok(n) => n,
            Err(e) => return Err(CappedError::Io(e)),
        };
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() as u64 > cap {
            return Err(CappedError::TooLarge {
                read: out.len() as u64,
            });
        }
    }
}

fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    loop {
        match file.read_at(buf, at) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The lines asked for: `count` lines from the 0-based line `first`.
#[derive(Debug, Clone, Copy)]
pub struct WindowRequest {
    pub first: u64,
    pub count: u64,
    /// Most bytes the selected lines may hold (their newlines between them included).
    pub max_selected_bytes: u64,
    /// Most bytes read from a file whose size is not known up front (it says 0, as `/proc`
    /// files do) before giving up.
    pub max_unsized_bytes: u64,
}

/// A window of lines: the selected lines joined by `\n`, and the file's line count (the number
/// of `\n` plus one, so `"a\nb\n"` has three lines, as the Read tool counts).
#[derive(Debug)]
pub struct Window {
    pub content: Vec<u8>,
    pub lines: u64,
    pub total_lines: u64,
}

/// Why a window could not be returned.
#[derive(Debug)]
pub enum WindowError {
    /// The selected lines hold more than `max_selected_bytes`.
    SelectionTooLarge,
    /// A file of unknown size went on past `max_unsized_bytes`.
    UnsizedTooLarge {
        read: u64,
    },
    Io(io::Error),
}

/// Streams `file` (described by `meta`) and returns the requested window.
///
/// Memory is the window plus one buffer, whatever the file's size. The lines after the window
/// are counted, not kept, up to the size the file had when it was opened (a log that grows
/// meanwhile does not keep the call going); holes of a sparse file are skipped, since they hold
/// no newline.
pub fn read_window(
    file: &File,
    meta: &Metadata,
    request: WindowRequest,
) -> Result<Window, WindowError> {
    let end = (meta.len() > 0).then_some(meta.len());
    let sparse = end.is_some_and(|len| meta.blocks().saturating_mul(512) < len);
    let mut scan = Scan {
        file,
        end,
        sparse,
        pos: 0,
        data_end: 0,
    };
    let window_end = request.first.saturating_add(request.count);
    let mut line: u64 = 0;
    let mut content = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let selecting = line >= request.first && line < window_end;
        let n = scan.next(&mut buf, !selecting).map_err(WindowError::Io)?;
        if n == 0 {
            break;
        }
        if end.is_none() && scan.pos > request.max_unsized_bytes {
            return Err(WindowError::UnsizedTooLarge { read: scan.pos });
        }
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            if line >= window_end {
                line += count_newlines(rest);
                break;
            }
            let newline = rest.iter().position(|&b| b == b'\n');
            if line < request.first {
                let Some(i) = newline else { break };
                line += 1;
                rest = &rest[i + 1..];
                continue;
            }
            let piece = &rest[..newline.unwrap_or(rest.len())];
            content.extend_from_slice(piece);
            if content.len() as u64 > request.max_selected_bytes {
                return Err(WindowError::SelectionTooLarge);
            }
            let Some(i) = newline else { break };
            rest = &rest[i + 1..];
            line += 1;
            if line < window_end {
                content.push(b'\n');
            }
        }
    }
    let total_lines = line + 1;
    let lines = window_end.min(total_lines) - request.first.min(total_lines);
    Ok(Window {
        content,
        lines,
        total_lines,
    })
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Sequential positioned reads over a file, optionally skipping holes.
struct Scan<'a> {
    file: &'a File,
    /// Where to stop (the size at open); `None` to read until EOF.
    end: Option<u64>,
    sparse: bool,
    pos: u64,
    /// End of the data region `pos` is known to be in (sparse files only).
    data_end: u64,
}

impl Scan<'_> {
    /// Reads the next chunk into `buf`; 0 at the end. With `skip_holes`, a hole at `pos` is
    /// jumped over first (its bytes are zeros: no newline, nothing to select).
    fn next(&mut self, buf: &mut [u8], skip_holes: bool) -> io::Result<usize> {
        if skip_holes && self.sparse && self.pos >= self.data_end {
            match seek(self.file, self.pos, libc::SEEK_DATA) {
                Some(data) => {
                    self.pos = data;
                    self.data_end = seek(self.file, data, libc::SEEK_HOLE).unwrap_or(u64::MAX);
                }
                // Only a hole is left; or the file system cannot tell, then read everything.
                None if last_os_error_is(libc::ENXIO) => return Ok(0),
                None => self.sparse = false,
            }
        }
        let want = match self.end {
            Some(end) if self.pos >= end => return Ok(0),
            Some(end) => buf.len().min((end - self.pos) as usize),
            None => buf.len(),
        };
        let n = read_at(self.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

fn seek(file: &File, from: u64, whence: libc::c_int) -> Option<u64> {
    let from = libc::off_t::try_from(from).ok()?;
    // SAFETY: lseek on a descriptor `file` owns. Reads use pread, so moving the offset does not
    // disturb them.
    let at = unsafe { libc::lseek(file.as_raw_fd(), from, whence) };
    u64::try_from(at).ok()
}

fn last_os_error_is(code: i32) -> bool {
    io::Error::last_os_error().raw_os_error() == Some(code)
}

/// A blocking job that did not finish in time, or that panicked.
#[derive(Debug)]
pub enum OffRuntimeError {
    /// Still running after the deadline; its thread is left to finish on its own.
    Stalled(Duration),
    /// It panicked (a bug).
    Panicked(String),
}

/// Runs `job` on tokio's blocking pool and waits at most `deadline` for it.
///
/// Why: a `read(2)` cannot be cancelled. Run on the runtime's own threads it would stall every
/// task there (signal handling included); here the waiting future can be dropped — by the
/// deadline, or by a signal ending the session — while the thread finishes or stays stuck on
/// its own.
pub async fn off_runtime<T, F>(deadline: Duration, job: F) -> Result<T, OffRuntimeError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match tokio::time::timeout(deadline, tokio::task::spawn_blocking(job)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(OffRuntimeError::Panicked(e.to_string())),
        Err(_) => Err(OffRuntimeError::Stalled(deadline)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &[u8], first: u64, count: u64) -> Window {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, text).unwrap();
        let (file, meta) = open_regular(&path).unwrap();
        let request = WindowRequest {
            first,
            count,
            max_selected_bytes: 1 << 20,
            max_unsized_bytes: 1 << 20,
        };
        read_window(&file, &meta, request).unwrap()
    }

    /// The window agrees with splitting the whole text on `\n`, as the Read tool always did.
    #[test]
    fn windows_agree_with_splitting_the_whole_text() {
        let texts: &[&[u8]] = &[
            b"",
            b"a",
            b"a\n",
            b"a\nb",
            b"a\nb\n",
            b"\n\n",
            b"x\ny\nz\n\nw",
        ];
        for text in texts {
            let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            for first in 0..7u64 {
                for count in 0..7u64 {
                    let w = window(text, first, count);
                    let from = (first as usize).min(lines.len());
                    let to = (from + count as usize).min(lines.len());
                    let want = lines[from..to].join(&b'\n');
                    assert_eq!(w.content, want, "{text:?} {first} {count}");
                    assert_eq!(w.lines, (to - from) as u64, "{text:?} {first} {count}");
                    assert_eq!(w.total_lines, lines.len() as u64, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn a_window_over_a_huge_line_stops_at_the_selection_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 300_000]).unwrap();
        let (file, meta) = open_regular(&path).unwrap();
        let request = WindowRequest {
            first: 0,
            count: 5,
            max_selected_bytes: 100_000,
            max_unsized_bytes: 1 << 20,
        };
        assert!(matches!(
            read_window(&file, &meta, request),
            Err(WindowError::SelectionTooLarge)
        ));
    }

    #[test]
    fn sparse_tails_are_counted_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one\ntwo\nthree\n").unwrap();
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        drop(file);
        let (file, meta) = open_regular(&path).unwrap();
        let request = WindowRequest {
            first: 1,
            count: 1,
            max_selected_bytes: 1 << 20,
            max_unsized_bytes: 1 << 20,
        };
        let w = read_window(&file, &meta, request).unwrap();
        assert_eq!(w.content, b"two");
        assert_eq!(w.total_lines, 4);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p");
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(open_regular(&path), Err(OpenError::Special)));
    }

    #[tokio::test]
    async fn a_stuck_job_is_left_behind_at_its_deadline() {
        let started = std::time::Instant::now();
        let outcome = off_runtime(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_millis(500));
        })
        .await;
        assert!(matches!(outcome, Err(OffRuntimeError::Stalled(_))));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
