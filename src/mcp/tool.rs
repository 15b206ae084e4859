//! An MCP server's tool as one of the session's tools: `mcp__<server>__<tool>`, the server's
//! schema and description, its result shaped as Claude Code shapes it (fixtures in
//! `tests/fixtures/mcp/`):
//!
//! * `tool_response` (what PostToolUse sees) is the result's `content` array as the server sent
//!   it, or — when the result carries `structuredContent` — that value as JSON text;
//! * the model gets the text of the content blocks (a non-text block as `[<type>]`), or that
//!   JSON text;
//! * `isError: true` and JSON-RPC errors (`MCP error <code>: <message>`) are failures:
//!   PostToolUseFailure fires with that text as `error`;
//! * the model-facing text is capped at `MAX_MCP_OUTPUT_TOKENS` (default 25 000; a token is
//!   counted as 4 characters), with a note saying so.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::hooks::events::McpServerRef;
use crate::mcp::client::{CallError, Server, ToolDef};
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// `MAX_MCP_OUTPUT_TOKENS` default.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;
/// Characters counted per token when estimating an output's size.
const CHARS_PER_TOKEN: usize = 4;

/// `mcp__<server>__<tool>`, with every character outside `[A-Za-z0-9_-]` turned into `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// One tool of one server.
pub struct McpTool {
    full_name: String,
    def: ToolDef,
    server: Arc<Server>,
    max_output_tokens: usize,
}

impl McpTool {
    pub fn new(server: Arc<Server>, def: ToolDef, max_output_tokens: usize) -> McpTool {
        McpTool {
            full_name: tool_name(&server.config.name, &def.name),
            def,
            server,
            max_output_tokens,
        }
    }
}

/// The text of a result's content blocks: text blocks as they are, others as `[<type>]`.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                Some(other) => format!("[{other}]"),
                None => b.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// `tool_response` and the model-facing text of a successful result.
pub fn shape_result(result: &Value) -> (Value, String) {
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let text = structured.to_string();
        return (Value::String(text.clone()), text);
    }
    let content = result
        .get("content")
        .cloned()
        .unwrap_or_else(|| Value::Array(Vec::new()));
    let text = content_text(&content);
    (content, text)
}

/// `text` cut to about `max_tokens` tokens, with a note when it was cut.
pub fn cap_output(text: String, max_tokens: usize) -> String {
    let max_chars = max_tokens.saturating_mul(CHARS_PER_TOKEN);
    let chars = text.chars().count();
    if chars <= max_chars {
        return text;
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!(
        "{kept}\n\n[Output truncated: this MCP tool returned about {} tokens, more than the limit of {max_tokens} (MAX_MCP_OUTPUT_TOKENS). Ask the tool for less, e.g. with a narrower query or paging.]",
        chars / CHARS_PER_TOKEN
    )
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.full_name
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn input_schema(&self) -> Value {
        self.def.input_schema.clone()
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        match input {
            Value::Object(_) => Ok(input),
            Value::Null => Ok(Value::Object(Map::new())),
            other => Err(format!(
                "{} takes a JSON object as input, not {}",
                self.full_name,
                match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    Value::Null | Value::Object(_) => "this",
                }
            )),
        }
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args = match input {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            match self.server.call(&self.def.name, args).await {
                Ok(result) => {
                    if result.get("isError").and_then(Value::as_bool) == Some(true) {
                        let text = content_text(result.get("content").unwrap_or(&Value::Null));
                        return ToolOutcome::Failure {
                            error: cap_output(text, self.max_output_tokens),
                            is_interrupt: false,
                        };
                    }
                    let (response, text) = shape_result(&result);
                    ToolOutcome::Success {
                        response,
                        content: cap_output(text, self.max_output_tokens),
                    }
                }
                Err(
                    e @ (CallError::Rpc(_) | CallError::Timeout(_) | CallError::Disconnected(_)),
                ) => ToolOutcome::Failure {
                    error: e.to_string(),
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        Some(cap_output(content_text(response), self.max_output_tokens))
    }

    fn mcp_server(&self) -> Option<McpServerRef> {
        Some(McpServerRef {
            name: self.server.config.name.clone(),
            source: self.server.config.scope.as_str().to_string(),
        })
    }

    fn available(&self) -> bool {
        self.server.is_connected()
    }
}
