//! `type: "mcp_tool"` hooks (spec §5.8): a configured MCP server's tool is called with the
//! hook's `input`, whose string values may quote the event (`"${tool_input.file_path}"`), and
//! the tool's text result is read like a command hook's stdout.
//!
//! The hook engine does not know MCP: the session gives the dispatcher an [`McpCaller`] (the
//! MCP module's session implements it). Without one — `rein hooks test`, an engine without
//! servers — every mcp_tool hook answers "not connected".
//!
//! Judgement: a text result goes through the same procedure as exit 0 with that stdout (hook
//! JSON is validated and applied; plain text is success text); a result flagged `isError` is a
//! non-blocking error `MCP tool returned an error: <text>`; a server that is not connected or
//! drops the call is a non-blocking error naming it; a timeout cancels the hook. With
//! `onFailure: "block"` every one of these blocks, and so does an answer that is not hook JSON
//! (`{}` and an empty answer are fine).

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::future::BoxFuture;
use crate::hooks::answer::{bare, interpret};
use crate::hooks::command::RawRun;
use crate::hooks::config::{HandlerOrigin, McpToolHandler, OnFailure};
use crate::hooks::events::Answer;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

/// Why a call to an MCP tool gave no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCallFailure {
    /// The server is unknown, not connected, or dropped the call; the text says which.
    Unavailable(String),
    /// The tool answered with `isError: true`; its text.
    ToolError(String),
    /// No answer within the hook's timeout.
    TimedOut,
}

/// What the dispatcher needs from the session's MCP servers.
pub trait McpCaller: Send + Sync {
    /// Whether a server of this name is configured (connected or not).
    fn knows(&self, server: &str) -> bool;
    /// Calls `tool` of `server`; the text of its content on success.
    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<String, McpCallFailure>>;
}

/// How the handler is named in texts: `<server>/<tool>`.
pub fn display(handler: &McpToolHandler) -> String {
    format!("{}/{}", handler.server, handler.tool)
}

/// `input` with every `${dotted.path}` in its strings replaced by that value of the hook input
/// (an object or array as JSON text, a missing or null value as the empty string), recursively
/// through arrays and objects; other values unchanged.
pub fn template(input: &Value, hook_input: &Value) -> Value {
    match input {
        Value::String(s) => Value::String(interpolate(s, hook_input)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| template(v, hook_input)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), template(v, hook_input)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn interpolate(text: &str, hook_input: &Value) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let len = after
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_alphabetic()
                    || *c == '_'
                    || (*i > 0 && (c.is_ascii_digit() || *c == '.'))
            })
            .count();
        if len == 0 || !after[len..].starts_with('}') {
            out.push_str(&rest[..start + 2]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        let path = &after[..len];
        let mut v = Some(hook_input);
        for key in path.split('.') {
            v = v.and_then(|x| x.get(key));
        }
        match v {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &after[len + 1..];
    }
    out.push_str(rest);
    out
}

/// What one mcp_tool hook run needs.
pub(crate) struct McpToolRun<'a> {
    pub event: HookEvent,
    pub origin: HandlerOrigin,
    pub handler: &'a McpToolHandler,
    pub on_failure: OnFailure,
    pub timeout: Duration,
}

/// Runs one mcp_tool hook. Never fails: every fault is the hook's answer.
pub(crate) async fn run(
    caller: Option<&dyn McpCaller>,
    req: McpToolRun<'_>,
    stdin: &[u8],
) -> Answer {
    let started = Instant::now();
    let hook_input: Value = serde_json::from_slice(stdin).unwrap_or(Value::Null);
    let arguments = match req.handler.input.as_ref().map(|i| template(i, &hook_input)) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let result = match caller {
        None => Err(McpCallFailure::Unavailable(format!(
            "MCP server '{}' not connected",
            req.handler.server
        ))),
        Some(c) => {
            c.call(
                &req.handler.server,
                &req.handler.tool,
                arguments,
                req.timeout,
            )
            .await
        }
    };
    let duration = started.elapsed();
    let text = display(req.handler);
    let blocks = req.on_failure == OnFailure::Block && req.event.spec().on_failure;
    let failed = |message: String| {
        let outcome = if blocks {
            OutcomeKind::Blocking(format!(
                "[{text}]: failed; blocking because onFailure is \"block\"\n{message}"
            ))
        } else {
            OutcomeKind::NonBlocking(message.clone())
        };
        let mut run = HandlerRun::without_output(
            req.origin.clone(),
            text.clone(),
            RunStatus::RequestFailed(message.clone()),
            outcome,
            duration,
        );
        run.stderr_bytes = message.len() as u64;
        run.stderr = message;
        bare(run)
    };
    match result {
        Err(McpCallFailure::Unavailable(why)) => failed(why),
        Err(McpCallFailure::ToolError(why)) => failed(format!("MCP tool returned an error: {why}")),
        Err(McpCallFailure::TimedOut) => {
            let outcome = if blocks {
                OutcomeKind::Blocking(format!(
                    "[{text}]: timed out; blocking because onFailure is \"block\""
                ))
            } else {
                OutcomeKind::Cancelled
            };
            bare(HandlerRun::without_output(
                req.origin.clone(),
                text.clone(),
                RunStatus::TimedOut,
                outcome,
                duration,
            ))
        }
        Ok(body) => {
            let trimmed = body.trim();
            if blocks && !trimmed.is_empty() && !trimmed.starts_with('{') {
                return failed(format!(
                    "the tool's answer is not hook JSON: {}",
                    trimmed.chars().take(200).collect::<String>()
                ));
            }
            let raw = RawRun::answered(body.into_bytes(), duration);
            interpret(req.event, req.origin.clone(), &text, &raw, req.on_failure)
        }
    }
}
