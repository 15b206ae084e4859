//! The Anthropic Messages API provider (`POST {base}/v1/messages`, `stream: true`): request
//! building and the SSE stream decoder (`message_start` … `message_stop`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::assembler::{
    Assembler, ended_early, is_event_stream, next_event, sse_events, whole_reply,
};
use super::events::EventSink;
use super::http::{self, AttemptError, HttpSettings};
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Request, Role,
    StopReason, ToolSpec, Usage,
};
use crate::tools::BoxFuture;

/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Claude model over the Messages API.
#[derive(Debug)]
pub struct AnthropicModel {
    http: HttpSettings,
    model: String,
    system: Option<String>,
    max_tokens: u32,
    /// `output_config.effort`, sent with every request when set.
    effort: Option<String>,
    next_id: AtomicU64,
}

impl AnthropicModel {
    /// `max_tokens` is required by the API and sent with every request.
    pub fn new(
        http: HttpSettings,
        model: String,
        system: Option<String>,
        max_tokens: u32,
    ) -> AnthropicModel {
        AnthropicModel {
            http,
            model,
            system,
            max_tokens,
            effort: None,
            next_id: AtomicU64::new(1),
        }
    }

    /// Sends `output_config: {"effort": level}` with every request (Claude Code does so for the
    /// models that take an effort level; see [`super::effort_for`]).
    pub fn with_effort(mut self, effort: Option<String>) -> AnthropicModel {
        self.effort = effort;
        self
    }

    fn generated_id(&self) -> String {
        format!(
            "toolu_rein_{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        )
    }

    async fn attempt(
        &self,
        url: &str,
        body: &Value,
        on_text: Option<&(dyn Fn(&str) + Send + Sync)>,
        on_event: EventSink<'_>,
    ) -> Result<ModelResponse, AttemptError> {
        let mut request = self
            .http
            .client
            .post(url)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("accept", "text/event-stream")
            .json(body);
        if let Some(key) = &self.http.api_key {
            request = request.header("x-api-key", key);
        }
        let response = http::send(&self.http, url, request).await?;
        if !is_event_stream(&response) {
            let parse = |value: &Value| self.parse_message(value);
            return whole_reply(&self.http, url, response, parse, on_text, on_event).await;
        }
        self.read_stream(url, response, on_text, on_event).await
    }

    /// Decodes the SSE stream. A stream that ends before `message_stop` is a retryable error.
    async fn read_stream(
        &self,
        url: &str,
        response: reqwest::Response,
        on_text: Option<&(dyn Fn(&str) + Send + Sync)>,
        on_event: EventSink<'_>,
    ) -> Result<ModelResponse, AttemptError> {
        let mut events = sse_events(response);
        let mut state = StreamState::default();
        loop {
            let Some(event) = next_event(&mut events, &self.http, url, "message_stop").await?
            else {
                return Err(ended_early(url, "message_stop"));
            };
            let data: Value = match serde_json::from_str(&event.data) {
                Ok(data) => data,
                Err(_) if event.data.trim().is_empty() => continue,
                Err(err) => {
                    return Err(http::malformed_body(
                        url,
                        &format!("invalid JSON in '{}' event: {err}", event.event),
                        event.data.as_bytes(),
                    ));
                }
            };
            let kind = data
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(event.event.as_str())
                .to_string();
            // The reply's own events go on as they are (`--include-partial-messages`); `ping`
            // and `error` do not, as in Claude Code.
            if let Some(on_event) = on_event
                && matches!(
                    kind.as_str(),
                    "message_start"
                        | "content_block_start"
                        | "content_block_delta"
                        | "content_block_stop"
                        | "message_delta"
                        | "message_stop"
                )
            {
                on_event(&data);
            }
            match kind.as_str() {
                "message_start" => state.start(&data),
                "content_block_start" => state.block_start(&data),
                "content_block_delta" => {
                    if let Some(text) = state.block_delta(&data)
                        && let Some(on_text) = on_text
                    {
                        on_text(text);
                    }
                }
                "content_block_stop" => {}
                "message_delta" => state.message_delta(&data),
                "message_stop" => return Ok(state.finish(&self.model, || self.generated_id())),
                "error" => return Err(stream_error(url, &data)),
                // `ping` and event types added later are ignored, as the API asks.
                _ => {}
            }
        }
    }

    /// Maps a non-streamed Messages API response.
    fn parse_message(&self, value: &Value) -> Result<ModelResponse, &'static str> {
        let blocks = value
            .get("content")
            .and_then(Value::as_array)
            .ok_or("no content array")?;
        let mut content = Vec::new();
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => content.push(ContentBlock::Text {
                    text: block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }),
                Some("tool_use") => content.push(ContentBlock::ToolUse {
                    id: block_id(block).unwrap_or_else(|| self.generated_id()),
                    name: block
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or("tool_use block without name")?
                        .to_string(),
                    input: block.get("input").cloned().unwrap_or(json!({})),
                }),
                _ => {}
            }
        }
        Ok(ModelResponse {
            id: value.get("id").and_then(Value::as_str).map(str::to_string),
            model: value
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.model)
                .to_string(),
            content,
            stop_reason: stop_reason(value.get("stop_reason").and_then(Value::as_str)),
            usage: value.get("usage").and_then(parse_usage),
        })
    }
}

impl Model for AnthropicModel {
    fn name(&self) -> &str {
        &self.model
    }

    fn effort(&self) -> Option<&str> {
        self.effort.as_deref()
    }

    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.respond(Request::new(messages, tools))
    }

    fn respond<'a>(
        &'a self,
        request: Request<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let url = format!("{}/v1/messages", self.http.base_url);
            let mut body = request_body(
                &self.model,
                request.system.or(self.system.as_deref()),
                self.max_tokens,
                request.messages,
                request.tools,
            );
            if let (Some(level), Some(map)) = (&self.effort, body.as_object_mut()) {
                // Claude Code's position: right before `stream`.
                let stream = map.remove("stream");
                map.insert("output_config".into(), json!({"effort": level}));
                if let Some(stream) = stream {
                    map.insert("stream".into(), stream);
                }
            }
            http::with_retries(&self.http, || {
                self.attempt(&url, &body, request.on_text, request.on_event)
            })
            .await
        })
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Appends a message of `role` to `out`, or its blocks to the last message when that has the
/// same role.
// Why: a dropped empty message (an empty reply a Stop hook continued) leaves two turns of one
// role side by side; they are sent as one so the roles strictly alternate.
fn push_merged(out: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last["role"] == role
        && let Some(content) = last.get_mut("content").and_then(Value::as_array_mut)
    {
        content.extend(blocks);
        return;
    }
    out.push(json!({"role": role, "content": blocks}));
}

/// The Messages API request for a history. Empty text blocks and messages (which the API
/// rejects) are dropped, consecutive messages of one role are merged, a message's system notes
/// follow its other blocks as `<system-reminder>` texts (see [`ContentBlock::SystemNote`]), and
/// a tool input that is not an object (malformed arguments kept as a string) is sent as `{}`,
/// the only shape the API accepts.
pub fn request_body(
    model: &str,
    system: Option<&str>,
    max_tokens: u32,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Value {
    // The calls whose successful results carry `"is_error": false`.
    let marked_calls: std::collections::HashSet<&str> = messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, .. }
                if crate::model::success_marks_is_error(name) =>
            {
                Some(id.as_str())
            }
            _ => None,
        })
        .collect();
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let mut notes: Vec<&str> = Vec::new();
        let blocks: Vec<Value> = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } if text.is_empty() => None,
                ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
                ContentBlock::SystemNote { text } => {
                    notes.push(text);
                    None
                }
                ContentBlock::ToolUse { id, name, input } => {
                    let input = match input {
                        Value::Object(_) => input.clone(),
                        _ => json!({}),
                    };
                    Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": content,
                    });
                    if (*is_error || marked_calls.contains(tool_use_id.as_str()))
                        && let Some(map) = block.as_object_mut()
                    {
                        map.insert("is_error".into(), Value::Bool(*is_error));
                    }
                    Some(block)
                }
            })
            .collect();
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut blocks = blocks;
        blocks.extend(
            notes
                .into_iter()
                .filter(|t| !t.is_empty())
                .map(|t| json!({"type": "text", "text": crate::model::reminder_text(t)})),
        );
        push_merged(&mut out, role, blocks);
    }
    // Prompt caching, where Claude Code 2.1.328 puts its breakpoints: the system prompt and the
    // last block of the last message, so each request reads back what the one before wrote.
    if let Some(block) = out
        .last_mut()
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|c| c.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".into(), ephemeral());
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if let Some(system) = system {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    }
    body.insert("messages".into(), Value::Array(out));
    if !tools.is_empty() {
        let specs: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(specs));
    }
    body.insert("stream".into(), Value::Bool(true));
    Value::Object(body)
}

/// A Messages API `usage` object; `None` when it has no token counts at all.
pub(crate) fn parse_usage(usage: &Value) -> Option<Usage> {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    if count("input_tokens").is_none() && count("output_tokens").is_none() {
        return None;
    }
    Some(Usage {
        input_tokens: count("input_tokens").unwrap_or(0),
        cache_creation_input_tokens: count("cache_creation_input_tokens").unwrap_or(0),
        cache_read_input_tokens: count("cache_read_input_tokens").unwrap_or(0),
        output_tokens: count("output_tokens").unwrap_or(0),
    })
}

fn block_id(block: &Value) -> Option<String> {
    block
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some(_) => StopReason::Other,
    }
}

/// An `error` event inside a stream; transient kinds are retried.
fn stream_error(url: &str, data: &Value) -> AttemptError {
    let error = data.get("error").unwrap_or(data);
    let api_type = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let (kind, retryable) = match api_type {
        "overloaded_error" => (ModelErrorKind::Overloaded, true),
        "rate_limit_error" => (ModelErrorKind::RateLimit, true),
        "api_error" => (ModelErrorKind::ServerError, true),
        "authentication_error" | "permission_error" => {
            (ModelErrorKind::AuthenticationFailed, false)
        }
        "not_found_error" => (ModelErrorKind::ModelNotFound, false),
        "invalid_request_error" | "request_too_large" => (ModelErrorKind::InvalidRequest, false),
        _ => (ModelErrorKind::Unknown, false),
    };
    AttemptError {
        kind,
        message: format!("error event in stream from {url}: {message} ({api_type})"),
        retryable,
        retry_after: None,
    }
}

/// The message being assembled from stream events, blocks kept in index order.
#[derive(Default)]
struct StreamState {
    message: Assembler,
    stop_reason: Option<String>,
}

impl StreamState {
    fn start(&mut self, data: &Value) {
        let message = data.get("message").unwrap_or(data);
        self.message.identify(
            message.get("id").and_then(Value::as_str),
            message.get("model").and_then(Value::as_str),
        );
        self.message.usage = message.get("usage").and_then(parse_usage);
    }

    fn block_start(&mut self, data: &Value) {
        let key = (0, data.get("index").and_then(Value::as_u64).unwrap_or(0));
        let block = data.get("content_block").unwrap_or(&Value::Null);
        match block.get("type").and_then(Value::as_str) {
            Some("text") => self.message.open_text(
                key,
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            Some("tool_use") => self.message.open_tool(
                key,
                block_id(block),
                block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                block.get("input").cloned().unwrap_or(json!({})),
            ),
            _ => self.message.open_ignored(key),
        }
    }

    /// Applies one delta; returns the text it added to a text block, if any.
    fn block_delta<'d>(&mut self, data: &'d Value) -> Option<&'d str> {
        let key = (0, data.get("index").and_then(Value::as_u64).unwrap_or(0));
        let delta = data.get("delta").unwrap_or(&Value::Null);
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => {
                let added = delta
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.message.push_text(key, added, false).then_some(added)
            }
            Some("input_json_delta") => {
                self.message.push_json(
                    key,
                    delta
                        .get("partial_json")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
                None
            }
            _ => None,
        }
    }

    fn message_delta(&mut self, data: &Value) {
        // `message_delta.usage` carries the final (cumulative) output count, and on some
        // servers the input counts too.
        if let Some(delta) = data.get("usage") {
            let count = |key: &str| delta.get(key).and_then(Value::as_u64);
            let usage = self.message.usage.get_or_insert_with(Usage::default);
            if let Some(n) = count("output_tokens") {
                usage.output_tokens = n;
            }
            if let Some(n) = count("input_tokens") {
                usage.input_tokens = n;
            }
            if let Some(n) = count("cache_creation_input_tokens") {
                usage.cache_creation_input_tokens = n;
            }
            if let Some(n) = count("cache_read_input_tokens") {
                usage.cache_read_input_tokens = n;
            }
        }
        if let Some(reason) = data
            .get("delta")
            .and_then(|d| d.get("stop_reason"))
            .and_then(Value::as_str)
        {
            self.stop_reason = Some(reason.to_string());
        }
    }

    fn finish(self, configured_model: &str, generate_id: impl FnMut() -> String) -> ModelResponse {
        let stop = stop_reason(self.stop_reason.as_deref());
        self.message.finish(configured_model, stop, generate_id)
    }
}
