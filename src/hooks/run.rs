//! How one handler ran and what its run meant: the record every runner returns and every
//! event's fold reads. Failure is data here, never an `Err`.

use std::time::Duration;

use serde_json::Value;

use crate::hooks::config::HandlerOrigin;

/// How one handler process (or in-process handler) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// Exited normally with this code.
    Exited(i32),
    /// Killed by this signal (treated as exit 1, non-blocking).
    Signaled(i32),
    /// Exceeded its timeout; the process group was killed.
    TimedOut,
    /// Could not be started; the error text.
    SpawnFailed(String),
    /// Backgrounded (`async`), nothing processed now.
    Backgrounded,
    /// An in-process handler panicked or returned an error.
    Crashed(String),
    /// An http or mcp_tool hook got no usable answer (refused URL, connection error, non-2xx
    /// status, a body that is not hook JSON, a tool error); the error text.
    RequestFailed(String),
}

/// What one handler's run meant, after exit code and stdout were interpreted (spec §4.1).
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeKind {
    /// It ran and had no objection.
    Success,
    /// Exit 2 / `decision: block` / `onFailure: block`; the blocking reason text.
    Blocking(String),
    /// A failure that does not block; user-facing text.
    NonBlocking(String),
    /// Timed out or cancelled.
    Cancelled,
}

/// Per-handler record, reported in configuration order (never completion order).
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerRun {
    /// Where the handler was configured.
    pub origin: HandlerOrigin,
    /// The command as configured (exec form: command and args joined by spaces;
    /// `in-process:<id>` for an in-process hook).
    pub command: String,
    /// How it ended.
    pub status: RunStatus,
    /// What its run meant.
    pub outcome: OutcomeKind,
    /// How long it ran.
    pub duration: Duration,
    /// Captured stdout (lossy for display; capped).
    pub stdout: String,
    /// Captured stderr (lossy for display; capped).
    pub stderr: String,
    /// Bytes it wrote to stdout, capped or not.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr, capped or not.
    pub stderr_bytes: u64,
    /// Whether stdout was cut at the cap.
    pub stdout_capped: bool,
    /// Whether stderr was cut at the cap.
    pub stderr_capped: bool,
    /// The parsed JSON output, if stdout was hook JSON.
    pub json: Option<Value>,
    /// The decision it gave, in one word (`block`, `allow`, `deny`, `ask`, `defer`): the run
    /// log's `decision`, set when the run is settled — before shadow mode withholds it.
    pub decision: Option<&'static str>,
    /// It ran in a pre-started interpreter ([`crate::hooks::warm`]).
    pub warm: bool,
    /// The handler's `matcher` as configured (`None`: none, or not a settings handler).
    pub matcher: Option<String>,
    /// Whether the handler ran in shadow mode ([`crate::hooks::shadow`]).
    pub shadow: bool,
    /// In shadow mode, what its answer would have done and was not applied
    /// (`would have denied: <reason>`); `None` when it changed nothing.
    pub withheld: Option<String>,
}

impl HandlerRun {
    /// A run that produced no output (a background start, an in-process handler).
    pub(crate) fn without_output(
        origin: HandlerOrigin,
        command: String,
        status: RunStatus,
        outcome: OutcomeKind,
        duration: Duration,
    ) -> HandlerRun {
        HandlerRun {
            origin,
            command,
            status,
            outcome,
            duration,
            stdout: String::new(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_capped: false,
            stderr_capped: false,
            json: None,
            decision: None,
            warm: false,
            matcher: None,
            shadow: false,
            withheld: None,
        }
    }
}
