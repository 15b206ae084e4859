//! What a running session reports as it goes: the single stream the transcript, the terminal
//! renderer and `stream-json` output are fed from.
//!
//! A leaf: the session, the tool pipeline and the hook layer report here, and nothing here
//! imports them back. It names only the conversation's data ([`crate::model`]) and its own
//! account of a hook firing ([`HookReport`]), which the hook layer fills in.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::model::{Message, ModelResponse};

/// One thing that just happened.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// The session started (after SessionStart hooks).
    SessionStarted {
        /// The session's id.
        session_id: &'a str,
        /// The model's name.
        model: &'a str,
    },
    /// The user's prompt, about to be sent.
    Prompt {
        /// The prompt's id (hooks get it as `prompt_id`).
        prompt_id: &'a str,
        /// The prompt.
        text: &'a str,
    },
    /// A piece of the model's reply text, as it streams in (the whole reply follows as
    /// [`Progress::Assistant`]).
    TextDelta {
        /// The new text.
        text: &'a str,
    },
    /// A request to the model is about to be sent (each turn of the loop).
    RequestStarted,
    /// One event of the model's reply as it streams, in the Messages API's streaming shape
    /// (see [`crate::model::Request::on_event`]); the whole reply follows as
    /// [`Progress::Assistant`]. Sent only to a session that asked for them
    /// (`Engine::builder().stream_events(true)`, `--include-partial-messages`).
    StreamEvent {
        /// The event (`message_start`, `content_block_delta`, …).
        event: &'a Value,
    },
    /// A model response.
    Assistant {
        /// The response.
        response: &'a ModelResponse,
        /// What MessageDisplay hooks asked to show instead of its text (`displayContent`); the
        /// conversation and the transcript keep the response as it is.
        display: Option<&'a str>,
    },
    /// A tool call is about to go through the pipeline.
    ToolStart {
        /// The call's id.
        tool_use_id: &'a str,
        /// The tool's name.
        name: &'a str,
        /// The arguments, as the model gave them.
        input: &'a Value,
    },
    /// A tool call resolved; `content` is what the model sees.
    ToolResult {
        /// The call's id.
        tool_use_id: &'a str,
        /// The tool's name.
        name: &'a str,
        /// The result as the model sees it.
        content: &'a str,
        /// Whether the model is told the call failed or was refused.
        is_error: bool,
        /// How the call ended.
        status: CallStatus,
        /// The structured `tool_response`, when the tool ran and succeeded.
        response: Option<&'a Value>,
    },
    /// An event fired and its handlers ran (only reported when at least one handler ran).
    ///
    /// Shared, so an observer that keeps it (the transcript holds some firings until the line
    /// they follow) takes a reference count instead of copying every run's output.
    Hook(&'a Arc<HookReport>),
    /// A user-role message rein adds on its own (Stop feedback, a reminder-only message).
    Feedback {
        /// The message.
        message: &'a Message,
    },
    /// A user-facing notice (`systemMessage`, non-blocking hook errors, caps).
    Notice {
        /// The notice.
        text: &'a str,
    },
}

/// Receives [`Progress`] as it happens. Implementations must not block for long.
pub trait Observer: Send + Sync {
    /// Called with each thing that happens, in order.
    fn observe(&self, progress: Progress<'_>);
}

/// Fans one progress stream out to several observers, in order.
#[derive(Default)]
pub struct Observers {
    list: Vec<Box<dyn Observer>>,
}

impl Observers {
    pub fn new() -> Observers {
        Observers::default()
    }

    pub fn push(&mut self, observer: Box<dyn Observer>) {
        self.list.push(observer);
    }
}

impl Observer for Observers {
    fn observe(&self, progress: Progress<'_>) {
        for o in &self.list {
            o.observe(progress);
        }
    }
}

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Observers({})", self.list.len())
    }
}

/// How one call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// Unknown tool or invalid input: no hook fired.
    Invalid,
    /// A hook, a rule or a person refused it; it never executed.
    Refused,
    /// PreToolUse answered `defer`: not run, and the turn ends.
    Deferred,
    /// Executed and succeeded.
    Succeeded,
    /// Executed and failed.
    Failed,
    /// Still running (or waiting on its hooks) when rein was interrupted by SIGINT/SIGTERM;
    /// its process group was killed and no later hook fired for it.
    Interrupted,
}

/// One event firing whose handlers ran, as observers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct HookReport {
    /// The event's name (`PreToolUse`).
    pub event: &'static str,
    /// Whether the event is about a tool call (its hook name then carries the tool).
    pub tool_event: bool,
    /// `"<Event>"` or `"<Event>:<match value>"` (`PreToolUse:Bash`).
    pub hook_name: String,
    /// The tool call the event is about, on the tool events.
    pub tool_use_id: Option<String>,
    /// Model-facing context entries, rendered as the model gets them, in order.
    pub context: Vec<String>,
    /// User-facing notices.
    pub user_messages: Vec<String>,
    /// A hook answered `continue: false`.
    pub stop_loop: bool,
    /// The first `stopReason` given with `continue: false`.
    pub stop_reason: Option<String>,
    /// Every handler that ran, in configuration order.
    pub runs: Vec<HookRunReport>,
}

/// One handler's run within a [`HookReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct HookRunReport {
    /// The command as configured (`in-process:<id>` for an in-process hook).
    pub command: String,
    /// Where the handler is configured (`file:line:col`; `in-process` for a registered hook).
    pub origin: String,
    /// What the run meant.
    pub outcome: HookRunOutcome,
    /// How the process ended.
    pub end: HookRunEnd,
    /// How long it ran.
    pub duration: Duration,
    /// Captured stdout (capped).
    pub stdout: String,
    /// Captured stderr (capped).
    pub stderr: String,
    /// Bytes it wrote to stdout, capped or not.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr, capped or not.
    pub stderr_bytes: u64,
    /// Its stdout parsed, when it was hook JSON.
    pub json: Option<Value>,
    /// The handler's `matcher` as configured.
    pub matcher: Option<String>,
    /// It ran in a pre-started interpreter.
    pub warm: bool,
    /// The decision it gave in one word (`block`, `allow`, `deny`, `ask`, `defer`); for a
    /// shadowed run, the one that was withheld.
    pub decision: Option<&'static str>,
    /// Whether it ran in shadow mode (its answer recorded, never applied).
    pub shadow: bool,
    /// In shadow mode, what it would have done (`would have denied: <reason>`).
    pub withheld: Option<String>,
}

/// What a handler's run meant.
#[derive(Debug, Clone, PartialEq)]
pub enum HookRunOutcome {
    /// No objection.
    Success,
    /// It blocks; the reason.
    Blocking(String),
    /// A failure that does not block; its user-facing text.
    NonBlocking(String),
    /// Timed out or cancelled.
    Cancelled,
}

/// How a handler's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookRunEnd {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled,
    /// Anything else: timed out, not started, backgrounded, an in-process or request failure.
    Other,
}

impl HookRunOutcome {
    /// Whether the run blocks.
    pub fn is_blocking(&self) -> bool {
        matches!(self, HookRunOutcome::Blocking(_))
    }
}
