//! The `Model` trait: `complete(messages, tools)` behind which the mock, OpenAI-compatible and
//! Anthropic providers live, and the message types they share.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::BoxFuture;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One block of a message, in Messages-API terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    /// `input` is the parsed arguments; a provider that received arguments that are not valid
    /// JSON passes them as `Value::String(raw)` so the pipeline reports a schema error. A call
    /// without an id gets a generated one (`toolu_rein_<n>`).
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
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
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    Other,
}

/// The assistant's reply to one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelResponse {
    /// Provider message id, if any.
    pub id: Option<String>,
    pub model: String,
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
}

/// The StopFailure `error` kinds (spec §2.3) rein can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    AuthenticationFailed,
    RateLimit,
    Overloaded,
    InvalidRequest,
    ModelNotFound,
    ServerError,
    MaxOutputTokens,
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
    pub provider: String,
    pub kind: ModelErrorKind,
    pub message: String,
}

/// A model behind `complete(messages, tools)`.
pub trait Model: Send + Sync {
    /// Provider/model name for transcripts (e.g. `mock`, `gpt-4o-mini`).
    fn name(&self) -> &str;
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}
