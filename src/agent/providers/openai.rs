//! The OpenAI-compatible Chat Completions provider (streamed, with tool calling): request
//! building from rein's Messages-API shaped history, the SSE chunk decoder, and response
//! mapping back. A server that answers the streaming request with one JSON body is understood
//! too.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::assembler::{
    Assembler, BlockKey, ended_early, is_event_stream, next_event, sse_events, whole_reply,
};
use super::events::{EventSink, Synthesizer};
use super::http::{self, AttemptError, HttpSettings};
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Request, Role,
    StopReason, ToolSpec, Usage,
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

    async fn attempt(
        &self,
        url: &str,
        body: &Value,
        on_text: Option<&(dyn Fn(&str) + Send + Sync)>,
        on_event: EventSink<'_>,
    ) -> Result<ModelResponse, AttemptError> {
        let mut request = self.http.client.post(url).json(body);
        if let Some(key) = &self.http.api_key {
            request = request.bearer_auth(key);
        }
        let response = http::send(&self.http, url, request).await?;
        if is_event_stream(&response) {
            return self.read_stream(url, response, on_text, on_event).await;
        }
        let parse = |value: &Value| parse_response(value, &self.model, &self.next_id);
        whole_reply(&self.http, url, response, parse, on_text, on_event).await
    }

    /// Decodes a stream of `chat.completion.chunk`s up to `data: [DONE]`; a stream that ends
    /// before it (or before any `finish_reason`) is a retryable error.
    async fn read_stream(
        &self,
        url: &str,
        response: reqwest::Response,
        on_text: Option<&(dyn Fn(&str) + Send + Sync)>,
        on_event: EventSink<'_>,
    ) -> Result<ModelResponse, AttemptError> {
        // Anthropic-shaped events built from the chunks (`--include-partial-messages`).
        let mut synth = Synthesizer::new(on_event);
        let mut events = sse_events(response);
        let mut state = ChunkState::default();
        loop {
            let Some(event) = next_event(&mut events, &self.http, url, "[DONE]").await? else {
                if state.finish_reason.is_some() {
                    break;
                }
                return Err(ended_early(url, "[DONE]"));
            };
            let data = event.data.trim();
            if data == "[DONE]" {
                break;
            }
            if data.is_empty() {
                continue;
            }
            let chunk: Value = serde_json::from_str(data).map_err(|err| {
                http::malformed_body(
                    url,
                    &format!("invalid JSON in a chunk: {err}"),
                    data.as_bytes(),
                )
            })?;
            if let Some(error) = chunk.get("error") {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)");
                return Err(AttemptError::fatal(
                    ModelErrorKind::Unknown,
                    format!("error in stream from {url}: {message}"),
                ));
            }
            if on_event.is_some() {
                synth_chunk(&mut synth, &chunk, &self.model);
            }
            if let Some(text) = state.push(&chunk)
                && let Some(on_text) = on_text
            {
                on_text(&text);
            }
        }
        let response = state.finish(&self.model, &self.next_id);
        synth.finish(&response);
        Ok(response)
    }
}

/// Hands one chunk's pieces to the event synthesizer: the message opens at the first chunk,
/// then its text and each tool call's id, name and arguments, in the chunk's order.
fn synth_chunk(synth: &mut Synthesizer<'_>, chunk: &Value, configured_model: &str) {
    let model = chunk
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(configured_model);
    synth.start(chunk.get("id").and_then(Value::as_str), model, None);
    let Some(delta) = chunk
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("delta"))
    else {
        return;
    };
    if let Some(text) = delta.get("content").and_then(Value::as_str) {
        synth.text(text);
    }
    for call in delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let key = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(more)) => more.clone(),
            Some(Value::Object(map)) => Value::Object(map.clone()).to_string(),
            Some(_) | None => String::new(),
        };
        synth.tool(key, id, name, &arguments);
    }
}

/// Where the reply's text goes among its blocks: before every tool call, as a non-streamed
/// response has it.
const TEXT_KEY: BlockKey = (0, 0);

/// The reply being assembled from `chat.completion.chunk`s.
#[derive(Default)]
struct ChunkState {
    message: Assembler,
    finish_reason: Option<String>,
}

impl ChunkState {
    /// Applies one chunk; returns the text it added.
    fn push(&mut self, chunk: &Value) -> Option<String> {
        self.message.identify(
            chunk.get("id").and_then(Value::as_str),
            chunk.get("model").and_then(Value::as_str),
        );
        if let Some(usage) = chunk.get("usage").and_then(parse_usage) {
            self.message.usage = Some(usage);
        }
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())?;
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let delta = choice.get("delta")?;
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let Some(partial) = self.message.tool_piece((1, index)) else {
                continue;
            };
            if let Some(id) = call.get("id").and_then(Value::as_str)
                && !id.is_empty()
            {
                *partial.id = Some(id.to_string());
            }
            if let Some(function) = call.get("function") {
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    partial.name.push_str(name);
                }
                match function.get("arguments") {
                    Some(Value::String(more)) => partial.json.push_str(more),
                    Some(Value::Object(map)) => partial
                        .json
                        .push_str(&Value::Object(map.clone()).to_string()),
                    Some(_) | None => {}
                }
            }
        }
        let text = delta.get("content").and_then(Value::as_str)?;
        if text.is_empty() {
            return None;
        }
        self.message.push_text(TEXT_KEY, text, true);
        Some(text.to_string())
    }

    /// The assembled reply, mapped as a non-streamed response is.
    fn finish(self, configured_model: &str, next_id: &AtomicU64) -> ModelResponse {
        let stop = stop_reason(self.finish_reason.as_deref(), self.message.has_tool_calls());
        self.message
            .finish(configured_model, stop, || generated_id(next_id))
    }
}

/// An id for a tool call the server sent without one.
fn generated_id(next_id: &AtomicU64) -> String {
    format!("toolu_rein_{}", next_id.fetch_add(1, Ordering::Relaxed))
}

/// Chat Completions' `finish_reason` as a stop reason.
///
/// Why the calls count: some compatible servers report "stop" even when they return tool
/// calls; the calls are what the turn loop must act on.
fn stop_reason(finish_reason: Option<&str>, has_calls: bool) -> StopReason {
    match finish_reason {
        Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some(_) => StopReason::Other,
    }
}

/// An OpenAI `usage` object (`prompt_tokens` counts cached tokens too; rein's
/// `input_tokens` does not, as in the Messages API).
fn parse_usage(usage: &Value) -> Option<Usage> {
    let prompt = usage.get("prompt_tokens").and_then(Value::as_u64);
    let completion = usage.get("completion_tokens").and_then(Value::as_u64);
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let cached = usage
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let prompt = prompt.unwrap_or(0);
    Some(Usage {
        input_tokens: prompt.saturating_sub(cached),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cached.min(prompt),
        output_tokens: completion.unwrap_or(0),
    })
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
        self.respond(Request::new(messages, tools))
    }

    fn respond<'a>(
        &'a self,
        request: Request<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let url = format!("{}/chat/completions", self.http.base_url);
            let body = request_body(
                &self.model,
                request.system.or(self.system.as_deref()),
                request.messages,
                request.tools,
            );
            http::with_retries(&self.http, || {
                self.attempt(&url, &body, request.on_text, request.on_event)
            })
            .await
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
                let mut texts: Vec<String> = Vec::new();
                let mut notes: Vec<String> = Vec::new();
                for block in &message.content {
                    match block {
                        ContentBlock::Text { text } => texts.push(text.clone()),
                        ContentBlock::SystemNote { text } => {
                            notes.push(crate::model::reminder_text(text))
                        }
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
                texts.append(&mut notes);
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
                        ContentBlock::ToolResult { .. } | ContentBlock::SystemNote { .. } => {}
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
    body.insert("stream".into(), Value::Bool(true));
    // Why: without it a streamed reply carries no token counts, and rein tracks the context
    // size from them.
    body.insert("stream_options".into(), json!({"include_usage": true}));
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
            _ => generated_id(next_id),
        };
        content.push(ContentBlock::ToolUse {
            id,
            name: name.to_string(),
            input,
        });
    }
    let stop_reason = stop_reason(
        choice.get("finish_reason").and_then(Value::as_str),
        !calls.is_empty(),
    );
    Ok(ModelResponse {
        id: value.get("id").and_then(Value::as_str).map(str::to_string),
        model: value
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(configured_model)
            .to_string(),
        content,
        stop_reason,
        usage: value.get("usage").and_then(parse_usage),
    })
}
