//! Hook events and one input type per event rein fires.
//!
//! Every input serializes exactly as Claude Code 2.1.328 writes it to a hook's stdin: the base
//! fields first (`session_id`, `transcript_path`, `cwd`, then `prompt_id`, `permission_mode`,
//! `effort` where the event carries them), then `hook_event_name`, then the event's own fields,
//! in that order (spec §2.2–2.4). [`HookInput::to_stdin_bytes`] produces compact JSON plus one
//! `\n`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The 33 events of Claude Code 2.1.328, in its canonical order (spec §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    PostToolBatch,
    Notification,
    UserPromptSubmit,
    UserPromptExpansion,
    SessionStart,
    SessionEnd,
    Stop,
    StopFailure,
    SubagentStart,
    SubagentStop,
    PreCompact,
    PostCompact,
    PreModelSwitch,
    PostModelSwitch,
    PermissionRequest,
    PermissionDenied,
    Setup,
    TeammateIdle,
    TaskCreated,
    TaskCompleted,
    Elicitation,
    ElicitationResult,
    ConfigChange,
    WorktreeCreate,
    WorktreeRemove,
    InstructionsLoaded,
    CwdChanged,
    FileChanged,
    DirectoryAdded,
    MessageDisplay,
}

impl HookEvent {
    /// All events in canonical order.
    pub const ALL: [HookEvent; 33] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PostToolBatch,
        HookEvent::Notification,
        HookEvent::UserPromptSubmit,
        HookEvent::UserPromptExpansion,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Stop,
        HookEvent::StopFailure,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::PreModelSwitch,
        HookEvent::PostModelSwitch,
        HookEvent::PermissionRequest,
        HookEvent::PermissionDenied,
        HookEvent::Setup,
        HookEvent::TeammateIdle,
        HookEvent::TaskCreated,
        HookEvent::TaskCompleted,
        HookEvent::Elicitation,
        HookEvent::ElicitationResult,
        HookEvent::ConfigChange,
        HookEvent::WorktreeCreate,
        HookEvent::WorktreeRemove,
        HookEvent::InstructionsLoaded,
        HookEvent::CwdChanged,
        HookEvent::FileChanged,
        HookEvent::DirectoryAdded,
        HookEvent::MessageDisplay,
    ];

    /// The name as it appears in settings files and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PostToolBatch => "PostToolBatch",
            HookEvent::Notification => "Notification",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::UserPromptExpansion => "UserPromptExpansion",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Stop => "Stop",
            HookEvent::StopFailure => "StopFailure",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::PreModelSwitch => "PreModelSwitch",
            HookEvent::PostModelSwitch => "PostModelSwitch",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PermissionDenied => "PermissionDenied",
            HookEvent::Setup => "Setup",
            HookEvent::TeammateIdle => "TeammateIdle",
            HookEvent::TaskCreated => "TaskCreated",
            HookEvent::TaskCompleted => "TaskCompleted",
            HookEvent::Elicitation => "Elicitation",
            HookEvent::ElicitationResult => "ElicitationResult",
            HookEvent::ConfigChange => "ConfigChange",
            HookEvent::WorktreeCreate => "WorktreeCreate",
            HookEvent::WorktreeRemove => "WorktreeRemove",
            HookEvent::InstructionsLoaded => "InstructionsLoaded",
            HookEvent::CwdChanged => "CwdChanged",
            HookEvent::FileChanged => "FileChanged",
            HookEvent::DirectoryAdded => "DirectoryAdded",
            HookEvent::MessageDisplay => "MessageDisplay",
        }
    }

    /// Parses a settings-file event key; `None` for an unknown name (case-sensitive).
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.iter().copied().find(|e| e.as_str() == name)
    }

    /// Whether rein ever fires this event (spec scope P0). Hooks on other events load, are
    /// listed as "never fires in rein", and never run.
    pub fn fired_by_rein(self) -> bool {
        match self {
            HookEvent::SessionStart
            | HookEvent::UserPromptSubmit
            | HookEvent::PreToolUse
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PostToolBatch
            | HookEvent::Stop
            | HookEvent::StopFailure
            | HookEvent::SessionEnd
            | HookEvent::Notification => true,
            HookEvent::UserPromptExpansion
            | HookEvent::SubagentStart
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::PreModelSwitch
            | HookEvent::PostModelSwitch
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult
            | HookEvent::ConfigChange
            | HookEvent::WorktreeCreate
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded
            | HookEvent::MessageDisplay => false,
        }
    }

    /// The five tool events on which an `if` condition is evaluated (spec §3.4).
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
                | HookEvent::PermissionDenied
        )
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `effort` base field (`{"level": "medium"}`); only set when the provider has an effort setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effort {
    pub level: String,
}

/// Fields every input starts with. Optional ones are omitted (not `null`) when absent; which
/// event carries which is spec §2.4, and the constructors of each event set them accordingly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaseInput {
    pub session_id: String,
    pub transcript_path: String,
    pub cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
}

/// PreToolUse: before permission checks and before execution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreToolUseInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: String,
}

/// PermissionRequest: a permission prompt would be shown. No `tool_use_id` (spec §9.1 #13).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionRequestInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Vec<Value>>,
}

/// PermissionDenied: rein fires it for every call a hook or a rule refused, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionDeniedInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: String,
    pub reason: String,
}

/// PostToolUse: the tool returned successfully.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostToolUseInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_response: Value,
    pub tool_use_id: String,
    pub duration_ms: u64,
}

/// PostToolUseFailure: the tool returned an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostToolUseFailureInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: String,
    pub error: String,
    pub is_interrupt: bool,
    pub duration_ms: u64,
}

/// One call of a PostToolBatch; `tool_response` is the model-facing content (a string).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchToolCall {
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
}

/// PostToolBatch: once after every call of one assistant message resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostToolBatchInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub tool_calls: Vec<BatchToolCall>,
}

/// UserPromptSubmit: a prompt is about to be processed. No `effort`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserPromptSubmitInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub prompt: String,
}

/// SessionStart. `source` is `startup|resume|clear|compact|fork`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStartInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// SessionEnd. `reason` is `clear|resume|logout|prompt_input_exit|other`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionEndInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub reason: String,
}

/// Stop: the main agent is about to end its turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StopInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub stop_hook_active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    pub background_tasks: Vec<Value>,
    pub session_crons: Vec<Value>,
}

/// StopFailure: the turn ended by a model/API error. `error` is one of spec §2.3's kinds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StopFailureInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_details: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

/// Notification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotificationInput {
    #[serde(flatten)]
    pub base: BaseInput,
    pub hook_event_name: HookEvent,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub notification_type: String,
}

/// The input of one event firing. The dispatcher only needs [`HookInput::event`],
/// [`HookInput::match_value`], the tool name/input for `if`, and the bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum HookInput {
    PreToolUse(PreToolUseInput),
    PermissionRequest(PermissionRequestInput),
    PermissionDenied(PermissionDeniedInput),
    PostToolUse(PostToolUseInput),
    PostToolUseFailure(PostToolUseFailureInput),
    PostToolBatch(PostToolBatchInput),
    UserPromptSubmit(UserPromptSubmitInput),
    SessionStart(SessionStartInput),
    SessionEnd(SessionEndInput),
    Stop(StopInput),
    StopFailure(StopFailureInput),
    Notification(NotificationInput),
}

impl HookInput {
    pub fn event(&self) -> HookEvent {
        match self {
            HookInput::PreToolUse(_) => HookEvent::PreToolUse,
            HookInput::PermissionRequest(_) => HookEvent::PermissionRequest,
            HookInput::PermissionDenied(_) => HookEvent::PermissionDenied,
            HookInput::PostToolUse(_) => HookEvent::PostToolUse,
            HookInput::PostToolUseFailure(_) => HookEvent::PostToolUseFailure,
            HookInput::PostToolBatch(_) => HookEvent::PostToolBatch,
            HookInput::UserPromptSubmit(_) => HookEvent::UserPromptSubmit,
            HookInput::SessionStart(_) => HookEvent::SessionStart,
            HookInput::SessionEnd(_) => HookEvent::SessionEnd,
            HookInput::Stop(_) => HookEvent::Stop,
            HookInput::StopFailure(_) => HookEvent::StopFailure,
            HookInput::Notification(_) => HookEvent::Notification,
        }
    }

    pub fn base(&self) -> &BaseInput {
        match self {
            HookInput::PreToolUse(i) => &i.base,
            HookInput::PermissionRequest(i) => &i.base,
            HookInput::PermissionDenied(i) => &i.base,
            HookInput::PostToolUse(i) => &i.base,
            HookInput::PostToolUseFailure(i) => &i.base,
            HookInput::PostToolBatch(i) => &i.base,
            HookInput::UserPromptSubmit(i) => &i.base,
            HookInput::SessionStart(i) => &i.base,
            HookInput::SessionEnd(i) => &i.base,
            HookInput::Stop(i) => &i.base,
            HookInput::StopFailure(i) => &i.base,
            HookInput::Notification(i) => &i.base,
        }
    }

    /// What `matcher` is tested against (spec §2.3 column M); `None` = no match target, the
    /// matcher is ignored and the hook always runs.
    pub fn match_value(&self) -> Option<&str> {
        match self {
            HookInput::PreToolUse(i) => Some(&i.tool_name),
            HookInput::PermissionRequest(i) => Some(&i.tool_name),
            HookInput::PermissionDenied(i) => Some(&i.tool_name),
            HookInput::PostToolUse(i) => Some(&i.tool_name),
            HookInput::PostToolUseFailure(i) => Some(&i.tool_name),
            HookInput::SessionStart(i) => Some(&i.source),
            HookInput::SessionEnd(i) => Some(&i.reason),
            HookInput::StopFailure(i) => Some(&i.error),
            HookInput::Notification(i) => Some(&i.notification_type),
            HookInput::PostToolBatch(_) | HookInput::UserPromptSubmit(_) | HookInput::Stop(_) => {
                None
            }
        }
    }

    /// Tool name and input for tool events (used by `if` conditions).
    pub fn tool(&self) -> Option<(&str, &Value)> {
        match self {
            HookInput::PreToolUse(i) => Some((&i.tool_name, &i.tool_input)),
            HookInput::PermissionRequest(i) => Some((&i.tool_name, &i.tool_input)),
            HookInput::PermissionDenied(i) => Some((&i.tool_name, &i.tool_input)),
            HookInput::PostToolUse(i) => Some((&i.tool_name, &i.tool_input)),
            HookInput::PostToolUseFailure(i) => Some((&i.tool_name, &i.tool_input)),
            HookInput::PostToolBatch(_)
            | HookInput::UserPromptSubmit(_)
            | HookInput::SessionStart(_)
            | HookInput::SessionEnd(_)
            | HookInput::Stop(_)
            | HookInput::StopFailure(_)
            | HookInput::Notification(_) => None,
        }
    }

    /// `hookName` used in model- and user-facing texts: `"<Event>"` or `"<Event>:<query>"`
    /// (e.g. `PreToolUse:Bash`, `SessionStart:startup`), spec §4.3.
    pub fn hook_name(&self) -> String {
        match self.match_value() {
            Some(v) => format!("{}:{}", self.event(), v),
            None => self.event().to_string(),
        }
    }

    /// Compact JSON in Claude Code's key order plus one trailing `\n`.
    pub fn to_stdin_bytes(&self) -> Vec<u8> {
        let result = match self {
            HookInput::PreToolUse(i) => serde_json::to_vec(i),
            HookInput::PermissionRequest(i) => serde_json::to_vec(i),
            HookInput::PermissionDenied(i) => serde_json::to_vec(i),
            HookInput::PostToolUse(i) => serde_json::to_vec(i),
            HookInput::PostToolUseFailure(i) => serde_json::to_vec(i),
            HookInput::PostToolBatch(i) => serde_json::to_vec(i),
            HookInput::UserPromptSubmit(i) => serde_json::to_vec(i),
            HookInput::SessionStart(i) => serde_json::to_vec(i),
            HookInput::SessionEnd(i) => serde_json::to_vec(i),
            HookInput::Stop(i) => serde_json::to_vec(i),
            HookInput::StopFailure(i) => serde_json::to_vec(i),
            HookInput::Notification(i) => serde_json::to_vec(i),
        };
        // Why no error path: every field is a String, bool, integer or an already-valid
        // `serde_json::Value`; serializing such a struct to a Vec cannot fail.
        let mut bytes = result.unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}
