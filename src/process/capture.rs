//! Reading a child's output: bounded captures (cap, tee, the stdout watch that may move the
//! deadline), drained while stdin is written.

use super::*;

/// A [`StdoutWatch`] with the slot its deadline moves go through.
pub(super) struct Watching<'w> {
    pub(super) watch: &'w mut (dyn StdoutWatch + Send),
    pub(super) moved: &'w DeadlineMove,
}

/// The latest deadline a watch asked for, and the wake-up for the run loop.
#[derive(Default)]
pub(super) struct DeadlineMove {
    pub(super) next: Mutex<Option<Duration>>,
    pub(super) notify: Notify,
}

impl DeadlineMove {
    pub(super) fn set(&self, timeout: Duration) {
        if let Ok(mut next) = self.next.lock() {
            *next = Some(timeout);
        }
        // Why notify_one: it stores a permit when the loop is not waiting yet, so no move is
        // lost.
        self.notify.notify_one();
    }

    pub(super) fn take(&self) -> Option<Duration> {
        self.next.lock().ok().and_then(|mut next| next.take())
    }
}

/// A bounded capture of one output stream.
pub(super) struct Capture<'a> {
    pub(super) buf: Vec<u8>,
    pub(super) cap: usize,
    pub(super) total: u64,
    pub(super) dropped_newlines: u64,
    pub(super) tee: Option<&'a Tee>,
    pub(super) teed: u64,
    pub(super) tee_error: Option<String>,
}

impl<'a> Capture<'a> {
    pub(super) fn new(cap: usize) -> Capture<'a> {
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

    pub(super) fn into_captured(self) -> Captured {
        Captured {
            bytes: self.buf,
            total: self.total,
            dropped_newlines: self.dropped_newlines,
            teed: self.teed,
            tee_error: self.tee_error,
        }
    }

    /// Copies `bytes` to the tee while it has room and has not failed.
    pub(super) fn tee(&mut self, bytes: &[u8]) {
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
    pub(super) async fn drain(
        &mut self,
        stream: Option<OutputPipe>,
        mut watching: Option<&mut Watching<'_>>,
    ) {
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
