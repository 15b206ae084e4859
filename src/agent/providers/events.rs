//! The Messages API's streaming events (`message_start`, `content_block_start`/`_delta`/`_stop`,
//! `message_delta`, `message_stop`) for replies that did not arrive as such: an
//! OpenAI-compatible provider's `chat.completion.chunk`s, and a model that does not stream at
//! all (the mock, an embedder's own). `--include-partial-messages` shows every provider's reply
//! in this one shape, as Claude Code shows Anthropic's.
//!
//! How chunks map: the first chunk opens the message (`message_start`, usage still zero); text
//! opens a `text` block and each piece of it is a `text_delta`; a tool call opens a `tool_use`
//! block once its id and name are known and each piece of its arguments is an
//! `input_json_delta`; a new kind of block closes the one before; the end closes the open
//! block and sends the stop reason and the usage (`message_delta`), then `message_stop`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::{ContentBlock, ModelResponse, StopReason, Usage};

/// Where events go; `None` when nobody listens (then nothing is built).
pub type EventSink<'a> = Option<&'a (dyn Fn(&Value) + Send + Sync)>;

/// The Messages API's name of a stop reason.
pub fn stop_reason_str(reason: StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::Other => "stop_sequence",
    }
}

/// A tool call of the chunks: its block index once opened, its id and name as they arrive,
/// and arguments that came before the block could open.
#[derive(Default)]
struct Call {
    index: Option<usize>,
    id: String,
    name: String,
    pending: String,
}

/// Builds the events of one reply from its pieces, in order, and hands each to the sink.
pub struct Synthesizer<'a> {
    sink: EventSink<'a>,
    started: bool,
    next_index: usize,
    open: Option<usize>,
    /// The open block is text.
    open_is_text: bool,
    calls: BTreeMap<u64, Call>,
}

impl<'a> Synthesizer<'a> {
    /// A synthesizer writing to `sink`.
    pub fn new(sink: EventSink<'a>) -> Synthesizer<'a> {
        Synthesizer {
            sink,
            started: false,
            next_index: 0,
            open: None,
            open_is_text: false,
            calls: BTreeMap::new(),
        }
    }

    fn emit(&self, event: Value) {
        if let Some(sink) = self.sink {
            sink(&event);
        }
    }

    /// Opens the message (once): `message_start` with the provider's id and model.
    pub fn start(&mut self, id: Option<&str>, model: &str, usage: Option<&Usage>) {
        if self.started || self.sink.is_none() {
            return;
        }
        self.started = true;
        let usage = usage.copied().unwrap_or_default();
        self.emit(json!({
            "type": "message_start",
            "message": {
                "id": id.unwrap_or_default(),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                    "cache_read_input_tokens": usage.cache_read_input_tokens,
                },
            },
        }));
    }

    fn close(&mut self) {
        if let Some(index) = self.open.take() {
            self.emit(json!({"type": "content_block_stop", "index": index}));
        }
        self.open_is_text = false;
    }

    fn open(&mut self, block: Value, is_text: bool) -> usize {
        self.close();
        let index = self.next_index;
        self.next_index += 1;
        self.emit(json!({"type": "content_block_start", "index": index, "content_block": block}));
        self.open = Some(index);
        self.open_is_text = is_text;
        index
    }

    /// A piece of the reply's text.
    pub fn text(&mut self, text: &str) {
        if self.sink.is_none() || text.is_empty() {
            return;
        }
        let index = match self.open {
            Some(i) if self.open_is_text => i,
            _ => self.open(json!({"type": "text", "text": ""}), true),
        };
        self.emit(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": text}}));
    }

    /// A piece of tool call `key` (the provider's own numbering): its id, name and arguments as
    /// far as this piece gives them.
    pub fn tool(&mut self, key: u64, id: Option<&str>, name: Option<&str>, arguments: &str) {
        if self.sink.is_none() {
            return;
        }
        let call = self.calls.entry(key).or_default();
        if let Some(id) = id {
            call.id.push_str(id);
        }
        if let Some(name) = name {
            call.name.push_str(name);
        }
        call.pending.push_str(arguments);
        self.flush_call(key, false);
    }

    /// Opens call `key`'s block when its id and name are known (or `force`), and sends the
    /// arguments held back.
    fn flush_call(&mut self, key: u64, force: bool) {
        let Some(call) = self.calls.get(&key) else {
            return;
        };
        let index = match call.index {
            Some(i) => i,
            None if force || (!call.id.is_empty() && !call.name.is_empty()) => {
                let block =
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}});
                let i = self.open(block, false);
                if let Some(call) = self.calls.get_mut(&key) {
                    call.index = Some(i);
                }
                i
            }
            None => return,
        };
        let Some(call) = self.calls.get_mut(&key) else {
            return;
        };
        if call.pending.is_empty() {
            return;
        }
        let partial = std::mem::take(&mut call.pending);
        self.emit(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": partial}}));
    }

    /// Ends the message: opens what never could open (a call whose id came only with the
    /// finished reply takes that id), closes the open block, then `message_delta` (stop
    /// reason, usage) and `message_stop`.
    pub fn finish(&mut self, response: &ModelResponse) {
        if self.sink.is_none() {
            return;
        }
        self.start(response.id.as_deref(), &response.model, None);
        let final_calls: Vec<(&str, &str)> = response
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
                ContentBlock::Text { .. }
                | ContentBlock::SystemNote { .. }
                | ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        let keys: Vec<u64> = self.calls.keys().copied().collect();
        for (n, key) in keys.into_iter().enumerate() {
            if let Some(call) = self.calls.get_mut(&key)
                && call.index.is_none()
                && let Some((id, name)) = final_calls.get(n)
            {
                if call.id.is_empty() {
                    call.id = id.to_string();
                }
                if call.name.is_empty() {
                    call.name = name.to_string();
                }
            }
            self.flush_call(key, true);
        }
        self.close();
        let mut usage = serde_json::Map::new();
        if let Some(u) = &response.usage {
            usage.insert("input_tokens".into(), json!(u.input_tokens));
            usage.insert("output_tokens".into(), json!(u.output_tokens));
        }
        self.emit(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason_str(response.stop_reason), "stop_sequence": null},
            "usage": usage,
        }));
        self.emit(json!({"type": "message_stop"}));
    }
}

/// Every event of a reply that arrived whole (a model that does not stream): the message,
/// each block with its whole content as one delta, the end.
pub fn replay(response: &ModelResponse, sink: &(dyn Fn(&Value) + Send + Sync)) {
    let mut s = Synthesizer::new(Some(sink));
    s.start(response.id.as_deref(), &response.model, None);
    for (k, block) in response.content.iter().enumerate() {
        match block {
            ContentBlock::Text { text } => {
                if !text.is_empty() {
                    s.close();
                    s.text(text);
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                s.tool(k as u64, Some(id), Some(name), &input.to_string());
            }
            ContentBlock::ToolResult { .. } | ContentBlock::SystemNote { .. } => {}
        }
    }
    s.finish(response);
}
