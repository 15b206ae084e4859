//! The OpenAI-compatible Chat Completions provider (non-streaming, with tool calling): request
//! building from rein's Messages-API shaped history and response mapping back.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::http::{self, AttemptError, HttpSettings};
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelResponse, Role, StopReason, ToolSpec,
};
use crate::tools::BoxFuture;

/// A model served over `POST {base}/chat/completions`.
#[derive(Debug)]
pub struct OpenAiModel {
    http: HttpSettings,
    model: String,
    system: Option<String>,
    next_id: AtomicU64,
}

impl OpenAiModel {
    /// No response-length limit is sent: OpenAI-compatible servers disagree on its name
    /// (`max_tokens` vs `max_completion_tokens`, which newer OpenAI models require), and
    /// omitting it works everywhere.
    pub fn new(http: HttpSettings, model: String, system: Option<String>) -> OpenAiModel {
        OpenAiModel {
            http,
            model,
            system,
            next_id: AtomicU64::new(1),
        }
    }

    async fn attempt(&self, url: &str, body: &Value) -> Result<ModelResponse, AttemptError> {
        let mut request = self.http.client.post(url).json(body);
        if let Some(key) = &self.http.api_key {
            request = request.bearer_auth(key);
        }
        let response = http::send(&self.http, url, request).await?;
        let bytes = http::read_body(&self.http, url, response).await?;
        let value = http::json_body(url, &bytes)?;
        parse_response(&value, &self.model, &self.next_id)
            .map_err(|what| http::malformed_body(url, what, &bytes))
    }
}

impl Model for OpenAiModel {
    fn name(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let url = format!("{}/chat/completions", self.http.base_url);
            let body = request_body(&self.model, self.system.as_deref(), messages, tools);
            http::with_retries(&self.http, || self.attempt(&url, &body)).await
        })
    }
}

/// The Chat Completions request for a history. Tool results become `tool` messages placed
/// before any text of the same user message, as the API requires them right after the
/// assistant's `tool_calls`.
pub fn request_body(
    model: &str,
    system: Option<&str>,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Value {
    let mut out = Vec::new();
    if let Some(system) = system {
        out.push(json!({"role": "system", "content": system}));
    }
    for message in messages {
        match message.role {
            Role::User => {
                let mut texts = Vec::new();
                for block in &message.content {
                    match block {
                        ContentBlock::Text { text } => texts.push(text.as_str()),
                        ContentBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error: _,
                        } => out.push(json!({
                            "role": "tool",
                            "tool_call_id": tool_use_id,
                            "content": content,
                        })),
                        ContentBlock::ToolUse { .. } => {}
                    }
                }
                if !texts.is_empty() {
                    out.push(json!({"role": "user", "content": texts.join("\n\n")}));
                }
            }
            Role::Assistant => {
                let mut texts = Vec::new();
                let mut calls = Vec::new();
                for block in &message.content {
                    match block {
                        ContentBlock::Text { text } => texts.push(text.as_str()),
                        ContentBlock::ToolUse { id, name, input } => {
                            // Malformed arguments round-trip as the raw string the model sent.
                            let arguments = match input {
                                Value::String(raw) => raw.clone(),
                                other => other.to_string(),
                            };
                            calls.push(json!({
                                "id": id,
                                "type": "function",
                                "function": {"name": name, "arguments": arguments},
                            }));
                        }
                        ContentBlock::ToolResult { .. } => {}
                    }
                }
                let mut entry = Map::new();
                entry.insert("role".into(), json!("assistant"));
                // Why: the API takes `null` content only beside `tool_calls`; an empty reply
                // (kept in the history when a Stop hook continues the turn) is sent as `""`.
                let content = if !texts.is_empty() {
                    json!(texts.join("\n\n"))
                } else if calls.is_empty() {
                    json!("")
                } else {
                    Value::Null
                };
                entry.insert("content".into(), content);
                if !calls.is_empty() {
                    entry.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(entry));
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(out));
    if !tools.is_empty() {
        let specs: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(specs));
    }
    Value::Object(body)
}

/// Maps a Chat Completions response. `Err` names what is missing.
fn parse_response(
    value: &Value,
    configured_model: &str,
    next_id: &AtomicU64,
) -> Result<ModelResponse, &'static str> {
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or("no choices[0]")?;
    let message = choice.get("message").ok_or("no choices[0].message")?;
    let mut content = Vec::new();
    if let Some(text) = message.get("content").and_then(Value::as_str)
        && !text.is_empty()
    {
        content.push(ContentBlock::Text {
            text: text.to_string(),
        });
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for call in calls {
        let function = call.get("function").ok_or("tool call without function")?;
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .ok_or("tool call without function.name")?;
        let input = match function.get("arguments") {
            Some(Value::String(raw)) if raw.trim().is_empty() => Value::Object(Map::new()),
            Some(Value::String(raw)) => {
                serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
            }
            // Some compatible servers send the arguments as an object already.
            Some(Value::Object(map)) => Value::Object(map.clone()),
            Some(Value::Null) | None => Value::Object(Map::new()),
            Some(other) => Value::String(other.to_string()),
        };
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => format!("toolu_rein_{}", next_id.fetch_add(1, Ordering::Relaxed)),
        };
        content.push(ContentBlock::ToolUse {
            id,
            name: name.to_string(),
            input,
        });
    }
    let has_calls = !calls.is_empty();
    // Why: some compatible servers report "stop" even when they return tool calls; the calls are
    // what the turn loop must act on.
    let stop_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some(_) => StopReason::Other,
    };
    Ok(ModelResponse {
        id: value.get("id").and_then(Value::as_str).map(str::to_string),
        model: value
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(configured_model)
            .to_string(),
        content,
        stop_reason,
    })
}
