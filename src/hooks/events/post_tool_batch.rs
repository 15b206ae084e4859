//! PostToolBatch: once after every call of one assistant message resolved. A blocking error
//! stops the loop.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::events::post_tool_use::join_block;
use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostToolBatch;

/// A fresh `toolu_…` id, for `rein hooks test` inputs that leave it out.
fn new_tool_use_id() -> String {
    crate::hooks::new_tool_use_id()
}

/// One call of a PostToolBatch; `tool_response` is the model-facing content (a string).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchToolCall {
    /// The tool's name.
    pub tool_name: String,
    /// The input the call ended with.
    pub tool_input: Value,
    /// The id of the call (`rein hooks test --input` may leave it out).
    #[serde(default = "new_tool_use_id")]
    pub tool_use_id: String,
    /// The model-facing result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
}

/// PostToolBatch's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolBatchInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PostToolBatch`.
    pub hook_event_name: HookEvent,
    /// Every call of the message, in order.
    pub tool_calls: Vec<BatchToolCall>,
}

/// PostToolBatch's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostToolBatchOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// What PostToolBatch hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolBatchOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// Every blocking reason, joined with `\n`: the loop stops with it.
    pub block: Option<String>,
}

impl Event for PostToolBatch {
    const EVENT: HookEvent = HookEvent::PostToolBatch;
    type Input = PostToolBatchInput;
    type Output = PostToolBatchOutput;
    type Outcome = PostToolBatchOutcome;
    const FIELDS: &'static [&'static str] = &["tool_calls"];

    fn base(input: &PostToolBatchInput) -> &BaseInput {
        &input.base
    }

    fn common(outcome: &mut PostToolBatchOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PostToolBatchOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        if let Some(reason) = answer.blocking() {
            join_block(&mut outcome.block, reason);
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> PostToolBatchInput {
        PostToolBatchInput {
            base,
            hook_event_name: HookEvent::PostToolBatch,
            tool_calls: Vec::new(),
        }
    }

    fn explain(outcome: &PostToolBatchOutcome, _input: &PostToolBatchInput) -> Explained {
        Explained::summary(match &outcome.block {
            Some(b) => format!("block: the loop stops ({b})"),
            None => "no decision".to_string(),
        })
        .with_common(&outcome.common)
    }
}
