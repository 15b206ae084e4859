//! The `Model` trait: `complete(messages, tools)` behind which the mock, OpenAI-compatible and
//! Anthropic providers live, and the message types they share.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::future::BoxFuture;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user: prompts, tool results, and the context rein adds for the model.
    User,
    /// The model.
    Assistant,
}

/// One block of a message, in Messages-API terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call by the model. `input` is the parsed arguments; a provider that received
    /// arguments that are not valid JSON passes them as `Value::String(raw)` so the pipeline
    /// reports a schema error. A call without an id gets a generated one (`toolu_rein_<n>`).
    ToolUse {
        /// The call's id, which its result names.
        id: String,
        /// The tool's name (`Bash`, `Read`, …).
        name: String,
        /// The arguments.
        input: Value,
    },
    /// A text the harness adds for the model that Claude Code 2.1.328 carries in a system-role
    /// entry: a hook's context or a hook's blocking error (`SessionStart hook additional
    /// context: …`, `UserPromptSubmit hook success: …`, `PostToolUse:Bash hook additional
    /// context: …`), after the prompt or tool results of the user message it rides in
    /// (fixtures `ctx_place`, `ctx_place2`, `stop_cap`). The public Messages API has no system
    /// role inside `messages`, so both providers send each note as a `<system-reminder>` text
    /// after the message's other blocks ([`reminder_text`]), as the protocol spec (§4.5)
    /// prescribes. Transcripts and stream-json record these notes as hook attachments, not in
    /// the user line.
    SystemNote {
        /// The text, unwrapped.
        text: String,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// What the model sees.
        content: String,
        /// Whether the call failed or was refused.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// A system note as a provider sends it: wrapped in `<system-reminder>` tags.
pub fn reminder_text(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}

/// Whether a successful result of `tool` still carries `"is_error": false`, as Claude Code
/// 2.1.328 writes it (on the wire and in its transcript): Bash results do, the other tools'
/// successes leave the key out (the recorded tool_results of tests/fixtures/cc-2.1.328: 58 of
/// 58 Bash successes, 0 of 31 others).
pub fn success_marks_is_error(tool: &str) -> bool {
    tool == "Bash"
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
}

/// Why the model stopped writing its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants its tool calls run.
    ToolUse,
    /// It hit the output token limit.
    MaxTokens,
    /// Any other reason the provider gave.
    Other,
}

/// The assistant's reply to one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelResponse {
    /// Provider message id, if any.
    pub id: Option<String>,
    /// The model that answered, as the provider names it.
    pub model: String,
    /// The reply's blocks: text and tool calls.
    pub content: Vec<ContentBlock>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// The tokens the request and the reply took, as the provider reported them; `None` when
    /// it reported nothing (then rein cannot know how full the context is).
    pub usage: Option<Usage>,
}

/// Token counts of one request, in the Messages API's terms: `input_tokens` excludes what was
/// written to or read from the prompt cache, which the two `cache_*` counts give.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens neither written to nor read from the cache.
    pub input_tokens: u64,
    /// Prompt tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
}

impl Usage {
    /// Every prompt token of the request: how much context the conversation took.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// These counts less `earlier` (never below zero): what was spent since `earlier`.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            cache_creation_input_tokens: self
                .cache_creation_input_tokens
                .saturating_sub(earlier.cache_creation_input_tokens),
            cache_read_input_tokens: self
                .cache_read_input_tokens
                .saturating_sub(earlier.cache_read_input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
        }
    }
}

/// One model request: the system prompt, the conversation, the tools offered, and where the
/// reply's text goes as it streams in.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The system prompt, if any.
    pub system: Option<&'a str>,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolSpec],
    /// Called with each piece of the reply's text as it arrives (a provider that does not
    /// stream calls it once with the whole text, or not at all).
    pub on_text: Option<&'a (dyn Fn(&str) + Send + Sync)>,
    /// Called with each event of the reply's stream in the Messages API's streaming shape
    /// (`message_start`, `content_block_start`/`_delta`/`_stop`, `message_delta`,
    /// `message_stop`): the Anthropic provider passes its own events on, the others build the
    /// same events from what they receive. `None` when nobody listens.
    pub on_event: Option<&'a (dyn Fn(&Value) + Send + Sync)>,
}

impl<'a> Request<'a> {
    /// A request for `messages` offering `tools`, with no system prompt and no callbacks.
    pub fn new(messages: &'a [Message], tools: &'a [ToolSpec]) -> Request<'a> {
        Request {
            system: None,
            messages,
            tools,
            on_text: None,
            on_event: None,
        }
    }
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("system", &self.system)
            .field("messages", &self.messages.len())
            .field("tools", &self.tools.len())
            .field("streams", &self.on_text.is_some())
            .field("events", &self.on_event.is_some())
            .finish()
    }
}

/// The StopFailure `error` kinds (spec §2.3) rein can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    /// The credentials were refused.
    AuthenticationFailed,
    /// Too many requests.
    RateLimit,
    /// The provider is overloaded.
    Overloaded,
    /// The provider refused the request as malformed.
    InvalidRequest,
    /// No such model.
    ModelNotFound,
    /// The provider failed.
    ServerError,
    /// The reply hit the output token limit.
    MaxOutputTokens,
    /// Anything else.
    Unknown,
}

impl ModelErrorKind {
    /// The StopFailure `error` string.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelErrorKind::AuthenticationFailed => "authentication_failed",
            ModelErrorKind::RateLimit => "rate_limit",
            ModelErrorKind::Overloaded => "overloaded",
            ModelErrorKind::InvalidRequest => "invalid_request",
            ModelErrorKind::ModelNotFound => "model_not_found",
            ModelErrorKind::ServerError => "server_error",
            ModelErrorKind::MaxOutputTokens => "max_output_tokens",
            ModelErrorKind::Unknown => "unknown",
        }
    }
}

/// A provider failure, after retries. `Display` is the clear message shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct ModelError {
    /// The provider's name (`openai`, `anthropic`, `mock`, …).
    pub provider: String,
    /// What kind of failure it was.
    pub kind: ModelErrorKind,
    /// What went wrong, for the user.
    pub message: String,
}

/// A model behind `complete(messages, tools)`: the built-in providers implement it, and so can
/// a type of an embedder's own, handed to [`crate::EngineBuilder::model`].
pub trait Model: Send + Sync {
    /// Provider/model name for transcripts (e.g. `mock`, `gpt-4o-mini`).
    fn name(&self) -> &str;
    /// The effort level sent with each request (`output_config.effort`), if any; hooks of the
    /// tool loop are told the same level (`effort` in their input, `CLAUDE_EFFORT`).
    fn effort(&self) -> Option<&str> {
        None
    }
    /// The model's reply to the conversation so far, offered `tools`.
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// The model's reply to a whole [`Request`]. The session calls this one; the default
    /// ignores the system prompt and the text callback and calls [`Model::complete`], so a
    /// model that needs neither implements only `complete`. The built-in providers send the
    /// system prompt and stream.
    fn respond<'a>(
        &'a self,
        request: Request<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.complete(request.messages, request.tools)
    }
}
