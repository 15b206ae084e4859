//! The stream-to-message assembler both real providers share: reading a server-sent event
//! stream (bytes decoded lossily, each event under the request timeout, a broken or early-ended
//! stream retryable) and building one [`ModelResponse`] from the pieces of a streamed reply —
//! text and tool-call blocks kept in key order, tool input assembled from JSON fragments.
//! Each provider keeps only its wire parsing: which event or chunk field is which piece.

use std::collections::BTreeMap;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::events::EventSink;
use super::http::{AttemptError, HttpSettings};
use crate::model::{ContentBlock, ModelErrorKind, ModelResponse, StopReason, Usage};

/// The server-sent events of a streamed response.
///
/// Why lossy: the SSE decoder stops at the first invalid byte and buffers everything after it
/// until the stream ends; one bad byte must cost one character instead.
pub(super) fn sse_events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Unpin {
    let mut utf8 = LossyUtf8::default();
    response
        .bytes_stream()
        .map(move |chunk| chunk.map(|bytes| utf8.push(&bytes)))
        .eventsource()
}

/// The next event, waited for under the request timeout; `None` when the stream has ended.
/// `end` names what a complete stream ends with (`[DONE]`, `message_stop`), for the error of a
/// stream that broke before it.
pub(super) async fn next_event<S>(
    events: &mut S,
    http: &HttpSettings,
    url: &str,
    end: &str,
) -> Result<Option<Event>, AttemptError>
where
    S: Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Unpin,
{
    match tokio::time::timeout(http.request_timeout, events.next()).await {
        Err(_elapsed) => Err(http.timeout_error(url, "stream event")),
        Ok(None) => Ok(None),
        Ok(Some(Err(err))) => Err(AttemptError::retryable(
            ModelErrorKind::ServerError,
            format!("stream from {url} broke before {end}: {err}"),
        )),
        Ok(Some(Ok(event))) => Ok(Some(event)),
    }
}

/// Whether the server answered with an event stream; else it sent one JSON body, as proxies
/// sometimes answer a streaming request.
pub(super) fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// A reply the server sent whole, mapped by the provider's `parse`, then shown as a streamed
/// one would have been: its text to `on_text`, its events replayed to `on_event`.
pub(super) async fn whole_reply(
    http: &HttpSettings,
    url: &str,
    response: reqwest::Response,
    parse: impl FnOnce(&Value) -> Result<ModelResponse, &'static str>,
    on_text: Option<&(dyn Fn(&str) + Send + Sync)>,
    on_event: EventSink<'_>,
) -> Result<ModelResponse, AttemptError> {
    let bytes = super::http::read_body(http, url, response).await?;
    let value = super::http::json_body(url, &bytes)?;
    let message = parse(&value).map_err(|what| super::http::malformed_body(url, what, &bytes))?;
    if let Some(on_text) = on_text {
        let text = crate::agent::session::response_text(&message);
        if !text.is_empty() {
            on_text(&text);
        }
    }
    if let Some(on_event) = on_event {
        super::events::replay(&message, on_event);
    }
    Ok(message)
}

/// The error of a stream that ended before `end`.
pub(super) fn ended_early(url: &str, end: &str) -> AttemptError {
    AttemptError::retryable(
        ModelErrorKind::ServerError,
        format!("stream from {url} ended before {end}"),
    )
}

/// One content block being assembled.
enum Partial {
    Text(String),
    ToolUse {
        id: Option<String>,
        name: String,
        /// The input the block opened with, used when no JSON fragment follows.
        start_input: Value,
        json: String,
    },
    /// Thinking and other block types rein does not keep.
    Ignored,
}

/// Where a block goes in the reply: blocks are ordered by key.
pub(super) type BlockKey = (u8, u64);

/// A reply being assembled from stream pieces.
#[derive(Default)]
pub(super) struct Assembler {
    id: Option<String>,
    model: Option<String>,
    blocks: BTreeMap<BlockKey, Partial>,
    /// The reply's usage, as the wire reports it (each provider folds its own counts in).
    pub usage: Option<Usage>,
}

impl Assembler {
    /// Records the reply's id and model unless already known (the first piece that names them
    /// wins).
    pub fn identify(&mut self, id: Option<&str>, model: Option<&str>) {
        if self.id.is_none() {
            self.id = id.map(str::to_string);
        }
        if self.model.is_none() {
            self.model = model.map(str::to_string);
        }
    }

    /// Opens a text block at `key` holding `text`.
    pub fn open_text(&mut self, key: BlockKey, text: &str) {
        self.blocks.insert(key, Partial::Text(text.to_string()));
    }

    /// Opens a tool-call block at `key`.
    pub fn open_tool(&mut self, key: BlockKey, id: Option<String>, name: &str, start_input: Value) {
        self.blocks.insert(
            key,
            Partial::ToolUse {
                id,
                name: name.to_string(),
                start_input,
                json: String::new(),
            },
        );
    }

    /// Opens a block rein does not keep (thinking, unknown types), so its deltas are ignored.
    pub fn open_ignored(&mut self, key: BlockKey) {
        self.blocks.insert(key, Partial::Ignored);
    }

    /// Appends `text` to the text block at `key`, opening it when `open` and it is missing;
    /// whether the text was taken.
    pub fn push_text(&mut self, key: BlockKey, text: &str, open: bool) -> bool {
        match self.blocks.get_mut(&key) {
            Some(Partial::Text(held)) => {
                held.push_str(text);
                true
            }
            None if open => {
                self.open_text(key, text);
                true
            }
            Some(Partial::ToolUse { .. } | Partial::Ignored) | None => false,
        }
    }

    /// Appends a JSON fragment to the input of the tool call at `key`, if one is there.
    pub fn push_json(&mut self, key: BlockKey, fragment: &str) {
        if let Some(Partial::ToolUse { json, .. }) = self.blocks.get_mut(&key) {
            json.push_str(fragment);
        }
    }

    /// The tool call at `key`, opened empty when missing (a Chat Completions call arrives in
    /// pieces: id, name fragments, argument fragments). `None` when another block is there.
    pub fn tool_piece(&mut self, key: BlockKey) -> Option<ToolPiece<'_>> {
        let block = self.blocks.entry(key).or_insert_with(|| Partial::ToolUse {
            id: None,
            name: String::new(),
            start_input: Value::Object(serde_json::Map::new()),
            json: String::new(),
        });
        match block {
            Partial::ToolUse { id, name, json, .. } => Some(ToolPiece { id, name, json }),
            Partial::Text(_) | Partial::Ignored => None,
        }
    }

    /// Whether any tool call is being assembled.
    pub fn has_tool_calls(&self) -> bool {
        self.blocks
            .values()
            .any(|b| matches!(b, Partial::ToolUse { .. }))
    }

    /// The reply: blocks in key order, a tool call's input parsed from its JSON fragments (its
    /// start input when there were none; the raw text when they do not parse, which the tool's
    /// validation then reports), a call without an id given `generate_id()`.
    pub fn finish(
        self,
        configured_model: &str,
        stop_reason: StopReason,
        mut generate_id: impl FnMut() -> String,
    ) -> ModelResponse {
        let mut content = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Partial::Text(text) => content.push(ContentBlock::Text { text }),
                Partial::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                } => {
                    let input = if json.trim().is_empty() {
                        start_input
                    } else {
                        serde_json::from_str(&json).unwrap_or(Value::String(json))
                    };
                    content.push(ContentBlock::ToolUse {
                        id: id.unwrap_or_else(&mut generate_id),
                        name,
                        input,
                    });
                }
                Partial::Ignored => {}
            }
        }
        ModelResponse {
            id: self.id,
            model: self.model.unwrap_or_else(|| configured_model.to_string()),
            content,
            stop_reason,
            usage: self.usage,
        }
    }
}

/// The parts of a tool call being assembled that its pieces fill in.
pub(super) struct ToolPiece<'a> {
    pub id: &'a mut Option<String>,
    pub name: &'a mut String,
    pub json: &'a mut String,
}

/// Turns a byte stream into valid UTF-8 chunks: each invalid sequence becomes U+FFFD, and a
/// sequence cut at a chunk boundary waits for the next chunk.
#[derive(Debug, Default)]
pub(super) struct LossyUtf8 {
    /// The start of a multi-byte character whose remaining bytes have not arrived yet.
    pending: Vec<u8>,
}

impl LossyUtf8 {
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut out = String::with_capacity(input.len());
        let mut rest = input.as_slice();
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    rest = &[];
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match err.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            rest = &[];
                        }
                    }
                }
            }
        }
        out.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::LossyUtf8;

    #[test]
    fn lossy_utf8_replaces_bad_bytes_and_joins_split_characters() {
        let mut utf8 = LossyUtf8::default();
        assert_eq!(utf8.push(b"caf\xff ok \xc3"), "caf\u{FFFD} ok ".as_bytes());
        assert_eq!(utf8.push(b"\xa9!"), "\u{e9}!".as_bytes());
        assert_eq!(utf8.push(b"\xe2\x82"), b"");
        assert_eq!(utf8.push(b"\xacx\xc3("), "\u{20ac}x\u{FFFD}(".as_bytes());
    }
}
