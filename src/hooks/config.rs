//! Configured hook handlers as the dispatcher runs them: the handler types (command, http,
//! prompt, agent, mcp_tool), their matcher and `if` compiled once at load, and where each came
//! from. The settings loader fills these; the hook engine never reads settings files.

use crate::hooks::matcher::{IfCondition, Matcher};
use crate::hooks::spec::HookEvent;
use crate::origin::{Location, SourceKind};

/// Where one handler was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerOrigin {
    /// The settings tier of the file.
    pub source: SourceKind,
    /// The event key as written in the file (may be an unknown name).
    pub event_key: String,
    /// Index of the matcher group within the event's array.
    pub group: usize,
    /// Index of the handler within the group's `hooks` array.
    pub index: usize,
    /// Where the handler object starts.
    pub location: Location,
    /// The plugin whose `hooks/hooks.json` (or manifest) configured it; `None` for settings.
    pub plugin: Option<std::sync::Arc<PluginRef>>,
}

/// A loaded plugin as its hooks see it (spec §1.1 row 6): its id, the folder it runs from and
/// its persistent data folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    /// `name@marketplace`, or `name@inline` for `--plugin-dir` (as Claude Code 2.1.328 names it
    /// to the model: "This hook comes from the guard@inline plugin.").
    pub id: String,
    /// `CLAUDE_PLUGIN_ROOT`: the plugin's folder (absolute).
    pub root: std::path::PathBuf,
    /// `CLAUDE_PLUGIN_DATA`: `<config dir>/plugins/data/<name>-<marketplace>`, made on load.
    pub data: std::path::PathBuf,
}

impl std::fmt::Display for HandlerOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.plugin {
            Some(plugin) => write!(
                f,
                "{} (plugin {}, {}[{}].hooks[{}])",
                self.location, plugin.id, self.event_key, self.group, self.index
            ),
            None => write!(
                f,
                "{} ({} settings, {}[{}].hooks[{}])",
                self.location,
                self.source.as_str(),
                self.event_key,
                self.group,
                self.index
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    #[default]
    Continue,
    Block,
}

/// A `type: "command"` handler (spec §1.6).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandHandler {
    pub command: String,
    /// Exec form when present: spawn `command` with these argv, no shell.
    pub args: Option<Vec<String>>,
    /// `"bash"` or `"powershell"`; on POSIX both still mean `/bin/sh -c`.
    pub shell: Option<String>,
    pub is_async: bool,
    pub async_rewake: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpHandler {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub allowed_env_vars: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptHandler {
    pub prompt: String,
    pub model: Option<String>,
    /// `continueOnBlock`: a "not ok" verdict does not end the turn.
    pub continue_on_block: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct McpToolHandler {
    pub server: String,
    pub tool: String,
    pub input: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HandlerKind {
    Command(CommandHandler),
    Http(HttpHandler),
    Prompt(PromptHandler),
    Agent(PromptHandler),
    McpTool(McpToolHandler),
}

impl HandlerKind {
    pub fn type_name(&self) -> &'static str {
        match self {
            HandlerKind::Command(_) => "command",
            HandlerKind::Http(_) => "http",
            HandlerKind::Prompt(_) => "prompt",
            HandlerKind::Agent(_) => "agent",
            HandlerKind::McpTool(_) => "mcp_tool",
        }
    }
}

/// Why a loaded handler will never run in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inactive {
    /// The event key is not one of the 33 events.
    UnknownEvent,
    /// A known event that rein never fires.
    EventNotFired,
    /// `if` on an event where it cannot be evaluated (spec §3.4).
    IfOnNonToolEvent,
    /// The matcher is an invalid regular expression: it never matches.
    InvalidMatcher(String),
    /// The `if` rule cannot be parsed.
    InvalidIf(String),
    /// `disableAllHooks` (or `allowManagedHooksOnly`) switched it off; names the file that did.
    Disabled(String),
    /// A malformed PreToolUse/PermissionRequest entry in the same file voided the whole file
    /// (spec §1.7).
    FileVoided(String),
    /// A handler type rein does not run yet (http, mcp_tool), or a prompt/agent hook on an
    /// event where Claude Code rejects it.
    UnsupportedType,
}

impl Inactive {
    /// A short reason for `rein hooks list`, e.g. `never fires in rein`.
    pub fn describe(&self) -> String {
        match self {
            Inactive::UnknownEvent => "unknown event".to_string(),
            Inactive::EventNotFired => "never fires in rein".to_string(),
            Inactive::IfOnNonToolEvent => "`if` on a non-tool event: never runs".to_string(),
            Inactive::InvalidMatcher(msg) => format!("invalid matcher: {msg}"),
            Inactive::InvalidIf(msg) => format!("invalid `if`: {msg}"),
            Inactive::Disabled(file) => format!("switched off by {file}"),
            Inactive::FileVoided(reason) => format!("file not applied: {reason}"),
            Inactive::UnsupportedType => "handler type not run by rein yet".to_string(),
        }
    }
}

/// One handler as loaded: its event, compiled matcher and `if`, its fields and origin.
#[derive(Debug, Clone)]
pub struct ConfiguredHandler {
    /// `None` when the event key is unknown.
    pub event: Option<HookEvent>,
    /// The raw `matcher` string, if any.
    pub matcher_text: Option<String>,
    /// Compiled once at load.
    pub matcher: Matcher,
    pub if_text: Option<String>,
    pub if_condition: Option<IfCondition>,
    pub kind: HandlerKind,
    /// Seconds; `None` = the event's default (spec §5.3).
    pub timeout: Option<f64>,
    pub status_message: Option<String>,
    pub on_failure: OnFailure,
    pub once: bool,
    /// Shadow mode (rein's `"shadow": true`, a file's `hooksShadow`, `--hooks-shadow`): the
    /// handler runs and its answer is recorded, but a refusal, rewrite or context it gives is
    /// not applied.
    pub shadow: bool,
    /// May run in a pre-started interpreter (rein's `"warm"`, default true; `warmHooks: false`
    /// in any settings file turns it off for all).
    pub warm: bool,
    pub origin: HandlerOrigin,
    /// `None` if it can run; otherwise why it never will.
    pub inactive: Option<Inactive>,
}
