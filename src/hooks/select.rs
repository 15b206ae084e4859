//! Selection: which configured and in-process handlers run for one firing (event, matcher with
//! the tool's former names, `if` on tool events), deduplicated (spec §3, §5.2).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::hooks::command::CommandForm;
use crate::hooks::config::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, HttpHandler, McpToolHandler,
    PromptHandler,
};
use crate::hooks::events::Event;
use crate::hooks::matcher::{self, Matcher};
use crate::hooks::registry::InProcessHook;
use crate::hooks::spec::HookEvent;
use crate::origin::{Location, SourceKind};

/// A handler chosen to run for one firing.
#[derive(Debug, Clone)]
pub enum SelectedHandler<'a> {
    /// A `type: "command"` handler from the settings.
    Command {
        handler: &'a ConfiguredHandler,
        command: &'a CommandHandler,
    },
    /// A `type: "http"` handler from the settings.
    Http {
        handler: &'a ConfiguredHandler,
        http: &'a HttpHandler,
    },
    /// A `type: "mcp_tool"` handler from the settings.
    McpTool {
        handler: &'a ConfiguredHandler,
        mcp: &'a McpToolHandler,
    },
    /// A closure from the [`Registry`].
    InProcess(Box<InProcessHook>),
    /// A `type: "prompt"` or `type: "agent"` handler (`agent: true`): a model judges.
    Model {
        handler: &'a ConfiguredHandler,
        prompt: &'a PromptHandler,
        agent: bool,
    },
}

impl<'a> SelectedHandler<'a> {
    /// `handler` as the dispatcher runs it; `None` for a type rein does not run.
    pub fn configured(handler: &'a ConfiguredHandler) -> Option<SelectedHandler<'a>> {
        match &handler.kind {
            HandlerKind::Command(command) => Some(SelectedHandler::Command { handler, command }),
            HandlerKind::Http(http) => Some(SelectedHandler::Http { handler, http }),
            HandlerKind::McpTool(mcp) => Some(SelectedHandler::McpTool { handler, mcp }),
            HandlerKind::Prompt(_) | HandlerKind::Agent(_) => None,
        }
    }

    /// The configured handler behind it; `None` for an in-process one.
    pub fn handler(&self) -> Option<&'a ConfiguredHandler> {
        selected_key(self).map(|(h, _)| h)
    }

    /// Its identity for dedup (spec §5.2); `None` for an in-process one.
    pub fn dedup_key(&self) -> Option<String> {
        selected_key(self).map(|(_, k)| k)
    }

    /// The command as shown in texts: shell string, or exec form joined by spaces; for
    /// in-process handlers `in-process:<id>`.
    pub fn command_text(&self) -> String {
        match self {
            SelectedHandler::Command { command, .. } => command_display(command),
            SelectedHandler::Http { http, .. } => http.url.clone(),
            SelectedHandler::McpTool { mcp, .. } => crate::hooks::mcp_tool::display(mcp),
            SelectedHandler::InProcess(hook) => match &hook.label {
                Some(label) => label.clone(),
                None => format!("in-process:{}", hook.id),
            },
            SelectedHandler::Model { prompt, .. } => prompt.prompt.clone(),
        }
    }

    /// Where the handler was configured. In-process handlers report the file
    /// `<in-process>`, line = registration id, source [`SourceKind::Flag`] (programmatic,
    /// like `--settings`).
    pub fn origin(&self) -> HandlerOrigin {
        match self {
            SelectedHandler::Command { handler, .. }
            | SelectedHandler::Http { handler, .. }
            | SelectedHandler::McpTool { handler, .. }
            | SelectedHandler::Model { handler, .. } => handler.origin.clone(),
            SelectedHandler::InProcess(hook) => HandlerOrigin {
                source: SourceKind::Flag,
                event_key: hook.event.as_str().to_string(),
                group: 0,
                index: usize::try_from(hook.id).unwrap_or(usize::MAX),
                location: Location {
                    file: Arc::from("<in-process>"),
                    line: u32::try_from(hook.id).unwrap_or(u32::MAX),
                    col: 0,
                },
                plugin: None,
            },
        }
    }
}

pub(crate) fn command_display(command: &CommandHandler) -> String {
    match &command.args {
        None => command.command.clone(),
        Some(args) => CommandForm::Exec {
            program: command.command.clone(),
            args: args.clone(),
        }
        .display_text(),
    }
}

/// The names a tool is known by: itself, then its former/current names (spec §3.3).
pub fn tool_names(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    names.extend_from_slice(matcher::tool_aliases(tool));
    names
}

/// [`tool_names`] without the allocation: this runs once per configured handler per event.
pub(crate) fn each_tool_name(tool: &str) -> impl Iterator<Item = &str> {
    std::iter::once(tool).chain(matcher::tool_aliases(tool).iter().copied())
}

/// What selection needs to know about one firing: the event-agnostic view of an input.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The event.
    pub event: HookEvent,
    /// What `matcher` is tested against; `None`: every matcher accepts.
    pub match_value: Option<&'a str>,
    /// Tool name and input, on tool events (for `if`).
    pub tool: Option<(&'a str, &'a Value)>,
    /// The input's `cwd`.
    pub cwd: &'a str,
    /// The input's effort level (`effort.level`), when it carries one: the hook then gets it
    /// as `CLAUDE_EFFORT` too.
    pub effort: Option<&'a str>,
    /// The tool call, on the events that carry `tool_use_id`.
    pub tool_use_id: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// The target of an input of `E`.
    pub fn of<E: Event>(input: &'a E::Input) -> Target<'a> {
        Target {
            event: E::EVENT,
            match_value: E::match_value(input),
            tool: E::tool(input),
            cwd: &E::base(input).cwd,
            effort: E::base(input).effort.as_ref().map(|e| e.level.as_str()),
            tool_use_id: E::tool_use_id(input),
        }
    }

    /// `"<Event>"` or `"<Event>:<match value>"`.
    pub fn hook_name(&self) -> String {
        match self.match_value {
            Some(v) => format!("{}:{v}", self.event),
            None => self.event.to_string(),
        }
    }
}

pub(crate) fn matcher_accepts(matcher: &Matcher, target: &Target<'_>) -> bool {
    let Some(value) = target.match_value else {
        return true;
    };
    if target.event.is_tool_event() {
        each_tool_name(value).any(|name| matcher.matches(name))
    } else {
        matcher.matches(value)
    }
}

/// The identity key of a command handler (spec §5.2): type, shell, command, `JSON(args)`, `if`,
/// NUL-joined. Ordinary settings files share one origin, so the source is not part of it.
pub fn dedup_key(handler: &ConfiguredHandler, command: &CommandHandler) -> String {
    let args = match &command.args {
        Some(args) => serde_json::to_string(args).unwrap_or_default(),
        None => "null".to_string(),
    };
    [
        "command",
        command.shell.as_deref().unwrap_or("bash"),
        &command.command,
        &args,
        handler.if_text.as_deref().unwrap_or(""),
    ]
    .join("\0")
}

/// The identity key of an http handler (spec §5.2): type, URL, `if`, NUL-joined.
pub fn http_dedup_key(handler: &ConfiguredHandler, http: &HttpHandler) -> String {
    ["http", &http.url, handler.if_text.as_deref().unwrap_or("")].join("\0")
}

/// The handler and identity key of a selected configured handler; `None` for in-process ones.
fn selected_key<'a>(sel: &SelectedHandler<'a>) -> Option<(&'a ConfiguredHandler, String)> {
    match sel {
        SelectedHandler::Command { handler, command } => {
            Some((handler, dedup_key(handler, command)))
        }
        SelectedHandler::Http { handler, http } => Some((handler, http_dedup_key(handler, http))),
        SelectedHandler::McpTool { handler, mcp } => {
            let input = mcp
                .input
                .as_ref()
                .map_or_else(|| "{}".to_string(), |v| v.to_string());
            let key = [
                "mcp_tool",
                &mcp.server,
                &mcp.tool,
                &input,
                handler.if_text.as_deref().unwrap_or(""),
            ]
            .join("\0");
            Some((handler, key))
        }
        SelectedHandler::Model {
            handler,
            prompt,
            agent,
        } => {
            let key = [
                if *agent { "agent" } else { "prompt" },
                &prompt.prompt,
                prompt.model.as_deref().unwrap_or(""),
                handler.if_text.as_deref().unwrap_or(""),
            ]
            .join("\0");
            Some((handler, key))
        }
        SelectedHandler::InProcess(_) => None,
    }
}

/// Collapses identical command handlers to one (spec §5.2).
///
/// Which copy survives: the **last** copy from a `policy` or `flag` (`--settings`) source if
/// there is one, otherwise the **last** copy in configuration order. The survivor keeps its
/// own fields (timeout, async, …) and runs at its **own position** in configuration order, so
/// the result is a subsequence of the input. In-process handlers are never deduplicated.
pub fn dedup(selected: Vec<SelectedHandler<'_>>) -> Vec<SelectedHandler<'_>> {
    let mut survivor: HashMap<String, (usize, bool)> = HashMap::new();
    for (i, sel) in selected.iter().enumerate() {
        if let Some((handler, key)) = selected_key(sel) {
            let preferred = matches!(handler.origin.source, SourceKind::Policy | SourceKind::Flag);
            match survivor.get(&key) {
                Some((_, true)) if !preferred => {}
                Some(_) | None => {
                    survivor.insert(key, (i, preferred));
                }
            }
        }
    }
    selected
        .into_iter()
        .enumerate()
        .filter(|(i, sel)| match selected_key(sel) {
            Some((_, key)) => survivor.get(&key).is_some_and(|(kept, _)| kept == i),
            None => true,
        })
        .map(|(_, sel)| sel)
        .collect()
}
