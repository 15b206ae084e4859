//! `Decision`: what one event firing decided, after every selected handler ran and their
//! outcomes were merged. The pipeline and the session only know this type, never hooks.
//!
//! All model-facing texts (spec §4.5) are already rendered here by the engine; callers only
//! place them.

use std::time::Duration;

use serde_json::Value;

use crate::hooks::event::HookEvent;
use crate::settings::schema::HandlerOrigin;

/// Permission decision of PreToolUse (merged with deny > defer > ask > allow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    Allow {
        reason: Option<String>,
    },
    Ask {
        reason: Option<String>,
    },
    Defer {
        reason: Option<String>,
    },
    /// `text` is the exact model-facing error tool_result, e.g.
    /// `PreToolUse:Bash hook error: [cmd]: stderr`.
    Deny {
        reason: String,
        text: String,
    },
}

/// PermissionRequest hooks' answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionRequestDecision {
    Allow {
        updated_input: Option<Value>,
        updated_permissions: Vec<Value>,
    },
    /// `message` is the model-facing text of the refusal.
    Deny { message: String, interrupt: bool },
}

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
}

/// What one handler's run meant, after exit code and stdout were interpreted (spec §4.1).
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeKind {
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
    pub origin: HandlerOrigin,
    /// The command as configured (exec form: command and args joined by spaces).
    pub command: String,
    pub status: RunStatus,
    pub outcome: OutcomeKind,
    pub duration: Duration,
    /// Captured stdout/stderr (lossy for display; capped).
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub stdout_capped: bool,
    pub stderr_capped: bool,
    /// The parsed JSON output, if stdout was hook JSON.
    pub json: Option<Value>,
}

/// The merged result of one event firing.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub event: HookEvent,
    /// PreToolUse only.
    pub permission: Option<PermissionDecision>,
    /// PreToolUse / PermissionRequest rewrite of the tool input (taken in configuration order:
    /// the last configured handler with a rewrite wins).
    pub updated_input: Option<Value>,
    /// PermissionRequest only.
    pub permission_request: Option<PermissionRequestDecision>,
    /// PostToolUse `updatedToolOutput`.
    pub updated_tool_output: Option<Value>,
    /// A blocking error for events where it means something: PostToolUse/Failure feedback,
    /// Stop "keep going", UserPromptSubmit refusal, PostToolBatch stop. Holds the reason
    /// (e.g. `[cmd]: stderr`), already joined when several hooks blocked.
    pub block: Option<String>,
    /// Model-facing context entries, already rendered per spec §4.5 (e.g.
    /// `PostToolUse:Bash hook additional context: CTX`, `SessionStart:startup hook success: …`,
    /// `PostToolUse:Bash hook blocking error from command: "cmd": reason`).
    pub context: Vec<String>,
    /// Stop only: the user-role feedback text (`Stop hook feedback:\n…`).
    pub stop_feedback: Option<String>,
    /// UserPromptSubmit only: the text shown instead of running the prompt.
    pub prompt_blocked_text: Option<String>,
    /// User-facing notices (`<hookName> says: …`, non-blocking errors, caps).
    pub user_messages: Vec<String>,
    /// `continue: false` from any hook: stop the loop after the current step.
    pub stop_loop: bool,
    pub stop_reason: Option<String>,
    /// UserPromptSubmit `suppressOriginalPrompt`.
    pub suppress_original_prompt: bool,
    /// PermissionDenied `retry: true`.
    pub retry: bool,
    /// Every handler that ran, in configuration order.
    pub runs: Vec<HandlerRun>,
}

impl Decision {
    /// The decision when no handler was selected.
    pub fn empty(event: HookEvent) -> Decision {
        Decision {
            event,
            permission: None,
            updated_input: None,
            permission_request: None,
            updated_tool_output: None,
            block: None,
            context: Vec::new(),
            stop_feedback: None,
            prompt_blocked_text: None,
            user_messages: Vec::new(),
            stop_loop: false,
            stop_reason: None,
            suppress_original_prompt: false,
            retry: false,
            runs: Vec::new(),
        }
    }
}
