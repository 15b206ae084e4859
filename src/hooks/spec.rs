//! The one table of static facts about every hook event.
//!
//! [`HookEvent::spec`] is the only exhaustive `match` on [`HookEvent`] in rein: whether rein
//! fires the event, whether it is a tool event, what its `matcher` is tested against, its
//! default timeout, whether `onFailure` applies, which `hookSpecificOutput` fields it reads, and
//! which handler types it accepts. Everything else asks the table. What an event *does* (its
//! stdin, its output, how answers fold into an outcome) lives in its own module under
//! [`crate::hooks::events`].
//!
//! Adding an event: one variant in [`HookEvent`] (and [`HookEvent::ALL`]), one row here, and —
//! if rein fires it — one file under `hooks/events/`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::hooks::events::{self, FiredEvent, Fires};

/// The 33 hook events of Claude Code 2.1.328, in its canonical order (spec §2.1), with their
/// settings names. rein fires the ones it has a module for ([`HookEvent::fired_by_rein`]); hooks
/// configured for the others are listed and validated but never run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    /// A tool call is about to run, before the permission step: a hook may allow, deny, ask or
    /// rewrite it.
    PreToolUse,
    /// A tool call succeeded.
    PostToolUse,
    /// A tool call failed.
    PostToolUseFailure,
    /// Every tool call of one model reply has resolved, before the next model request.
    PostToolBatch,
    /// A notification is shown to the user.
    Notification,
    /// A prompt is about to be processed: a hook may block it or add context.
    UserPromptSubmit,
    /// A slash command or MCP prompt expands into a prompt (not fired by rein).
    UserPromptExpansion,
    /// A session starts (or resumes, or restarts after `/clear` or compaction).
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// The model is about to end its turn: a hook may make it go on.
    Stop,
    /// A turn ended because the model request failed.
    StopFailure,
    /// A subagent starts (not fired by rein).
    SubagentStart,
    /// A subagent is about to finish (not fired by rein).
    SubagentStop,
    /// The conversation is about to be compacted (not fired by rein).
    PreCompact,
    /// The conversation was compacted (not fired by rein).
    PostCompact,
    /// `/model NAME` is about to switch the model: a hook may deny it.
    PreModelSwitch,
    /// `/model NAME` switched the model.
    PostModelSwitch,
    /// The user would be asked to approve a tool call: a hook may answer instead.
    PermissionRequest,
    /// A tool call was denied by the automatic permission classifier.
    PermissionDenied,
    /// A repository is set up or maintained (`--init`, `--maintenance`; not fired by rein).
    Setup,
    /// An agent-team teammate is about to go idle (not fired by rein).
    TeammateIdle,
    /// A task is being created (not fired by rein).
    TaskCreated,
    /// A task is being marked completed (not fired by rein).
    TaskCompleted,
    /// An MCP server asks the user for input (not fired by rein).
    Elicitation,
    /// The user answered an MCP elicitation (not fired by rein).
    ElicitationResult,
    /// A settings or skills file changed during the session (not fired by rein).
    ConfigChange,
    /// A worktree is needed (not fired by rein).
    WorktreeCreate,
    /// A hook-created worktree is removed (not fired by rein).
    WorktreeRemove,
    /// A `CLAUDE.md` or rules file was loaded (not fired by rein).
    InstructionsLoaded,
    /// The working directory changed (not fired by rein).
    CwdChanged,
    /// A watched file changed (not fired by rein).
    FileChanged,
    /// A directory was added to the session (not fired by rein).
    DirectoryAdded,
    /// Completed lines of a streaming model reply are about to be shown (not fired by rein).
    MessageDisplay,
}

/// Which exact-list rule a `matcher` follows on an event, and whether it has a target at all
/// (spec §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatcherClass {
    /// The extended set `U6`: `[A-Za-z0-9_|, -]`, split on `|` or `,`.
    Extended,
    /// FileChanged, StopFailure: `[A-Za-z0-9_|]`, split on `|`.
    Strict,
    /// Events with no match target: the matcher is ignored.
    NoTarget,
}

/// The default timeout of a handler that sets none (spec §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultTimeout {
    /// This long per handler.
    Fixed(Duration),
    /// The SessionEnd phase budget: every handler shares the one budget of the phase
    /// ([`crate::hooks::timeout::session_end_budget`]).
    SessionEndBudget,
}

/// The type a field of a hook's JSON output must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `true` / `false`.
    Bool,
    /// Any string.
    String,
    /// Any number.
    Number,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// A JSON object.
    Object,
    /// An array of strings.
    StringArray,
    /// Any JSON value.
    Any,
    /// PermissionRequest's `{behavior:"allow", …} | {behavior:"deny", …}`.
    PermissionRequestDecision,
    /// A terminal escape: OSC 0/1/2/9/99/777 or BEL (spec §4.3).
    TerminalSequence,
}

impl FieldType {
    /// The type as the "Expected schema" text writes it.
    pub fn describe(self) -> String {
        match self {
            FieldType::Bool => "boolean".to_string(),
            FieldType::String | FieldType::TerminalSequence => "string".to_string(),
            FieldType::Number => "number".to_string(),
            FieldType::Enum(options) => options
                .iter()
                .map(|o| format!("\"{o}\""))
                .collect::<Vec<_>>()
                .join(" | "),
            FieldType::Object => "object".to_string(),
            FieldType::StringArray => "string[]".to_string(),
            FieldType::Any => "any".to_string(),
            FieldType::PermissionRequestDecision => {
                "{ \"behavior\": \"allow\", \"updatedInput\"?: \
                 object, \"updatedPermissions\"?: object[] } | { \"behavior\": \"deny\", \
                 \"message\"?: string, \"interrupt\"?: boolean }"
                    .to_string()
            }
        }
    }
}

/// One field of an output object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The JSON key.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Whether the object is invalid without it.
    pub required: bool,
}

const fn opt(name: &'static str, ty: FieldType) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

/// The `CLAUDE_ENV_FILE` an event's command hooks get (`<session-env>/<event>-hook-<n>.sh`,
/// `n` the handler's place among the firing's command hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvFile {
    /// None.
    None,
    /// One whose `export` lines the Bash tool sources before each command (SessionStart).
    Sourced,
    /// One that nothing reads afterwards: Claude Code 2.1.328 gives CwdChanged hooks the
    /// variable, and a Bash command after the change does not see what they wrote there
    /// (fixture `tests/fixtures/cc-2.1.328/cwd_env_file`).
    Unread,
}

/// The static facts about one event.
#[derive(Debug, Clone, Copy)]
pub struct EventSpec {
    /// The name in settings files and in `hook_event_name`.
    pub name: &'static str,
    /// The event's module, when rein fires it (`None`: hooks on it load, are listed as "never
    /// fires in rein", and never run).
    pub fires: Option<&'static dyn FiredEvent>,
    /// One of the five tool events: the matcher is tested against the tool name and its former
    /// names, and `if` conditions are evaluated (spec §3.4).
    pub tool_event: bool,
    /// How the `matcher` is read; [`MatcherClass::NoTarget`]: ignored.
    pub matcher: MatcherClass,
    /// The input field the matcher is tested against (spec §2.3 column M), for texts.
    pub match_field: Option<&'static str>,
    /// Default timeout of a handler.
    pub timeout: DefaultTimeout,
    /// Whether `onFailure: "block"` applies (ignored on Stop, SubagentStop, TaskCompleted,
    /// TeammateIdle; spec §1.6). Also where exit 2 with a "missing script" stderr is downgraded
    /// (spec §4.1 step 7b): exactly where `onFailure` does not apply.
    pub on_failure: bool,
    /// The `hookSpecificOutput` fields the event reads (spec §4.4), besides `hookEventName`.
    pub output: &'static [Field],
    /// Whether `prompt` and `agent` handlers may run here (they need a conversation).
    pub model_hooks: bool,
    /// Whether `agent` handlers may run here (not on PermissionRequest).
    pub agent_hooks: bool,
    /// Whether its hooks decide a call's permission (PreToolUse, PermissionRequest): only a
    /// blocking answer refuses (exit 1 lets the tool run), and a malformed entry under it voids
    /// its whole settings file, as in Claude Code.
    pub decides_permission: bool,
    /// Whether its command hooks get a `CLAUDE_ENV_FILE`, and what becomes of its lines.
    pub env_file: EnvFile,
    /// Whether the stdin carries `prompt_id` (spec §2.4).
    pub prompt_id: bool,
    /// Whether the stdin carries `permission_mode` (spec §2.4).
    pub permission_mode: bool,
    /// Whether the stdin carries `effort` (when an effort level is sent to the model) and the
    /// hook gets `CLAUDE_EFFORT`: the events of the tool loop (golden samples).
    pub effort: bool,
}

const DEFAULT: Duration = Duration::from_secs(600);
const USER_PROMPT: Duration = Duration::from_secs(30);

const CONTEXT: Field = opt("additionalContext", FieldType::String);
const NONE: &[Field] = &[];
const CONTEXT_ONLY: &[Field] = &[CONTEXT];
const PRE_TOOL_USE: &[Field] = &[
    opt(
        "permissionDecision",
        FieldType::Enum(&["allow", "deny", "ask", "defer"]),
    ),
    opt("permissionDecisionReason", FieldType::String),
    opt("updatedInput", FieldType::Object),
    CONTEXT,
    opt("permissionDisplay", FieldType::Any),
];
const PERMISSION_REQUEST: &[Field] = &[Field {
    name: "decision",
    ty: FieldType::PermissionRequestDecision,
    required: true,
}];
const POST_TOOL_USE: &[Field] = &[
    CONTEXT,
    opt("updatedToolOutput", FieldType::Any),
    opt("updatedMCPToolOutput", FieldType::Any),
    opt("classifierContext", FieldType::String),
];
const USER_PROMPT_SUBMIT: &[Field] = &[
    CONTEXT,
    opt("sessionTitle", FieldType::String),
    opt("suppressOriginalPrompt", FieldType::Bool),
];
const USER_PROMPT_EXPANSION: &[Field] = &[CONTEXT, opt("suppressOriginalPrompt", FieldType::Bool)];
const SESSION_START: &[Field] = &[
    CONTEXT,
    opt("initialUserMessage", FieldType::String),
    opt("sessionTitle", FieldType::String),
    opt("watchPaths", FieldType::StringArray),
    opt("reloadSkills", FieldType::Bool),
];
const PRE_MODEL_SWITCH: &[Field] = &[
    opt(
        "permissionDecision",
        FieldType::Enum(&["allow", "deny", "ask"]),
    ),
    opt("permissionDecisionReason", FieldType::String),
];
const PERMISSION_DENIED: &[Field] = &[opt("retry", FieldType::Bool)];
const ELICITATION: &[Field] = &[
    opt("action", FieldType::Enum(&["accept", "decline", "cancel"])),
    opt("content", FieldType::Object),
];
const WATCH_PATHS: &[Field] = &[opt("watchPaths", FieldType::StringArray)];
const WORKTREE_CREATE: &[Field] = &[opt("worktreePath", FieldType::String)];
const MESSAGE_DISPLAY: &[Field] = &[opt("displayContent", FieldType::String)];

/// The row most events share; rows below override what differs.
const ROW: EventSpec = EventSpec {
    name: "",
    fires: None,
    tool_event: false,
    matcher: MatcherClass::Extended,
    match_field: None,
    timeout: DefaultTimeout::Fixed(DEFAULT),
    on_failure: true,
    output: NONE,
    model_hooks: true,
    agent_hooks: true,
    decides_permission: false,
    env_file: EnvFile::None,
    prompt_id: true,
    permission_mode: true,
    effort: true,
};

const fn tool(
    name: &'static str,
    output: &'static [Field],
    fires: &'static dyn FiredEvent,
) -> EventSpec {
    EventSpec {
        name,
        fires: Some(fires),
        tool_event: true,
        match_field: Some("tool_name"),
        output,
        ..ROW
    }
}

const fn unfired(name: &'static str, matcher: MatcherClass, output: &'static [Field]) -> EventSpec {
    EventSpec {
        name,
        matcher,
        output,
        ..ROW
    }
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

    /// The facts about this event: the table.
    #[doc(hidden)]
    pub const fn spec(self) -> EventSpec {
        use MatcherClass::{Extended, NoTarget, Strict};
        match self {
            HookEvent::PreToolUse => EventSpec {
                decides_permission: true,
                ..tool("PreToolUse", PRE_TOOL_USE, Fires::<events::PreToolUse>::REF)
            },
            HookEvent::PostToolUse => tool(
                "PostToolUse",
                POST_TOOL_USE,
                Fires::<events::PostToolUse>::REF,
            ),
            HookEvent::PostToolUseFailure => tool(
                "PostToolUseFailure",
                CONTEXT_ONLY,
                Fires::<events::PostToolUseFailure>::REF,
            ),
            HookEvent::PermissionRequest => EventSpec {
                decides_permission: true,
                agent_hooks: false,
                ..tool(
                    "PermissionRequest",
                    PERMISSION_REQUEST,
                    Fires::<events::PermissionRequest>::REF,
                )
            },
            HookEvent::PermissionDenied => tool(
                "PermissionDenied",
                PERMISSION_DENIED,
                Fires::<events::PermissionDenied>::REF,
            ),
            HookEvent::PostToolBatch => EventSpec {
                fires: Some(Fires::<events::PostToolBatch>::REF),
                ..unfired("PostToolBatch", NoTarget, CONTEXT_ONLY)
            },
            HookEvent::Notification => EventSpec {
                fires: Some(Fires::<events::Notification>::REF),
                match_field: Some("notification_type"),
                permission_mode: false,
                effort: false,
                ..unfired("Notification", Extended, CONTEXT_ONLY)
            },
            HookEvent::UserPromptSubmit => EventSpec {
                fires: Some(Fires::<events::UserPromptSubmit>::REF),
                timeout: DefaultTimeout::Fixed(USER_PROMPT),
                effort: false,
                ..unfired("UserPromptSubmit", NoTarget, USER_PROMPT_SUBMIT)
            },
            HookEvent::UserPromptExpansion => {
                unfired("UserPromptExpansion", Extended, USER_PROMPT_EXPANSION)
            }
            HookEvent::SessionStart => EventSpec {
                fires: Some(Fires::<events::SessionStart>::REF),
                match_field: Some("source"),
                model_hooks: false,
                env_file: EnvFile::Sourced,
                prompt_id: false,
                permission_mode: false,
                effort: false,
                ..unfired("SessionStart", Extended, SESSION_START)
            },
            HookEvent::SessionEnd => EventSpec {
                fires: Some(Fires::<events::SessionEnd>::REF),
                match_field: Some("reason"),
                timeout: DefaultTimeout::SessionEndBudget,
                permission_mode: false,
                effort: false,
                ..unfired("SessionEnd", Extended, NONE)
            },
            HookEvent::Stop => EventSpec {
                fires: Some(Fires::<events::Stop>::REF),
                on_failure: false,
                ..unfired("Stop", NoTarget, CONTEXT_ONLY)
            },
            HookEvent::StopFailure => EventSpec {
                fires: Some(Fires::<events::StopFailure>::REF),
                match_field: Some("error"),
                ..unfired("StopFailure", Strict, NONE)
            },
            HookEvent::SubagentStart => EventSpec {
                fires: Some(Fires::<events::SubagentStart>::REF),
                match_field: Some("agent_type"),
                permission_mode: false,
                effort: false,
                model_hooks: false,
                ..unfired("SubagentStart", Extended, CONTEXT_ONLY)
            },
            HookEvent::SubagentStop => EventSpec {
                fires: Some(Fires::<events::SubagentStop>::REF),
                match_field: Some("agent_type"),
                on_failure: false,
                ..unfired("SubagentStop", Extended, CONTEXT_ONLY)
            },
            HookEvent::PreCompact => EventSpec {
                fires: Some(Fires::<events::PreCompact>::REF),
                match_field: Some("trigger"),
                permission_mode: false,
                ..unfired("PreCompact", Extended, NONE)
            },
            HookEvent::PostCompact => EventSpec {
                fires: Some(Fires::<events::PostCompact>::REF),
                match_field: Some("trigger"),
                permission_mode: false,
                ..unfired("PostCompact", Extended, NONE)
            },
            HookEvent::PreModelSwitch => EventSpec {
                fires: Some(Fires::<events::PreModelSwitch>::REF),
                match_field: Some("to_model"),
                permission_mode: false,
                effort: false,
                ..unfired("PreModelSwitch", Extended, PRE_MODEL_SWITCH)
            },
            HookEvent::PostModelSwitch => EventSpec {
                fires: Some(Fires::<events::PostModelSwitch>::REF),
                match_field: Some("to_model"),
                permission_mode: false,
                effort: false,
                ..unfired("PostModelSwitch", Extended, CONTEXT_ONLY)
            },
            HookEvent::Setup => EventSpec {
                model_hooks: false,
                ..unfired("Setup", Extended, CONTEXT_ONLY)
            },
            HookEvent::TeammateIdle => EventSpec {
                on_failure: false,
                ..unfired("TeammateIdle", NoTarget, NONE)
            },
            HookEvent::TaskCreated => unfired("TaskCreated", NoTarget, NONE),
            HookEvent::TaskCompleted => EventSpec {
                on_failure: false,
                ..unfired("TaskCompleted", NoTarget, NONE)
            },
            HookEvent::Elicitation => unfired("Elicitation", Extended, ELICITATION),
            HookEvent::ElicitationResult => unfired("ElicitationResult", Extended, ELICITATION),
            HookEvent::ConfigChange => unfired("ConfigChange", Extended, NONE),
            HookEvent::WorktreeCreate => unfired("WorktreeCreate", NoTarget, WORKTREE_CREATE),
            HookEvent::WorktreeRemove => unfired("WorktreeRemove", NoTarget, NONE),
            HookEvent::InstructionsLoaded => EventSpec {
                fires: Some(Fires::<events::InstructionsLoaded>::REF),
                match_field: Some("load_reason"),
                prompt_id: false,
                permission_mode: false,
                // Recorded: no `effort`, no CLAUDE_EFFORT (fixture `instructions_loaded`).
                effort: false,
                ..unfired("InstructionsLoaded", Extended, NONE)
            },
            HookEvent::CwdChanged => EventSpec {
                fires: Some(Fires::<events::CwdChanged>::REF),
                permission_mode: false,
                effort: false,
                env_file: EnvFile::Unread,
                ..unfired("CwdChanged", NoTarget, WATCH_PATHS)
            },
            HookEvent::FileChanged => unfired("FileChanged", Strict, WATCH_PATHS),
            HookEvent::DirectoryAdded => unfired("DirectoryAdded", Extended, NONE),
            HookEvent::MessageDisplay => EventSpec {
                fires: Some(Fires::<events::MessageDisplay>::REF),
                permission_mode: false,
                effort: false,
                ..unfired("MessageDisplay", NoTarget, MESSAGE_DISPLAY)
            },
        }
    }

    /// The name as it appears in settings files and in `hook_event_name`.
    pub const fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// Parses a settings-file event key; `None` for an unknown name (case-sensitive).
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.iter().copied().find(|e| e.as_str() == name)
    }

    /// Whether rein ever fires this event.
    pub const fn fired_by_rein(self) -> bool {
        self.spec().fires.is_some()
    }

    /// Whether this is one of the five tool events (`if` is evaluated only there).
    pub const fn is_tool_event(self) -> bool {
        self.spec().tool_event
    }
}

impl MatcherClass {
    /// The rule for `event`; unknown events (`None`) use the extended rule.
    pub fn of(event: Option<HookEvent>) -> MatcherClass {
        event.map_or(MatcherClass::Extended, |e| e.spec().matcher)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_follow_the_enum() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::parse(event.as_str()), Some(event));
            assert_eq!(format!("{event:?}"), event.as_str());
        }
    }

    #[test]
    fn the_table_agrees_with_itself() {
        for event in HookEvent::ALL {
            let spec = event.spec();
            // A tool event has a target: the tool name.
            if spec.tool_event {
                assert_eq!(spec.match_field, Some("tool_name"), "{event}");
            }
            // A fired event with a target says which field it is.
            if spec.fires.is_some() && spec.matcher != MatcherClass::NoTarget {
                assert!(spec.match_field.is_some(), "{event}");
            }
            // Only fired events with no target may lack a match field among fired ones.
            if spec.matcher == MatcherClass::NoTarget {
                assert_eq!(spec.match_field, None, "{event}");
            }
        }
        for event in HookEvent::ALL {
            if let Some(fires) = event.spec().fires {
                assert_eq!(fires.event(), event);
            }
        }
        let fired: Vec<&str> = HookEvent::ALL
            .iter()
            .filter(|e| e.fired_by_rein())
            .map(|e| e.as_str())
            .collect();
        assert_eq!(fired.len(), 21, "{fired:?}");
    }
}
