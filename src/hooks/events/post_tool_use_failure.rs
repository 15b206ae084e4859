//! PostToolUseFailure: the tool returned an error. Hooks may add context or feedback.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::events::post_tool_use::feedback;
use crate::hooks::events::{
    Answer, BaseInput, Common, Event, Explained, FoldCx, McpServerRef, tool_event_accessors,
};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostToolUseFailure;

/// PostToolUseFailure's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseFailureInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PostToolUseFailure`.
    pub hook_event_name: HookEvent,
    /// The tool's name.
    pub tool_name: String,
    /// The input the tool ran with.
    pub tool_input: Value,
    /// The id of the call.
    pub tool_use_id: String,
    /// The model-facing error.
    pub error: String,
    /// Whether the call was interrupted (Ctrl-C, shutdown).
    pub is_interrupt: bool,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The MCP server behind an `mcp__<server>__<tool>` tool (Claude Code appends it last);
    /// absent for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerRef>,
}

/// PostToolUseFailure's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostToolUseFailureOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// What PostToolUseFailure hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseFailureOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// Every blocking reason, in configuration order, joined with `\n`.
    pub block: Option<String>,
}

impl Event for PostToolUseFailure {
    const EVENT: HookEvent = HookEvent::PostToolUseFailure;
    type Input = PostToolUseFailureInput;
    type Output = PostToolUseFailureOutput;
    type Outcome = PostToolUseFailureOutcome;
    const FIELDS: &'static [&'static str] = &[
        "tool_name",
        "tool_input",
        "tool_use_id",
        "error",
        "is_interrupt",
        "duration_ms",
    ];

    tool_event_accessors!(PostToolUseFailureInput);

    fn tool_use_id(input: &PostToolUseFailureInput) -> Option<&str> {
        Some(&input.tool_use_id)
    }

    fn common(outcome: &mut PostToolUseFailureOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// As PostToolUse: a blocking error is feedback for the model.
    fn fold(outcome: &mut PostToolUseFailureOutcome, answer: &Answer, cx: FoldCx<'_>) {
        feedback(&mut outcome.common, &mut outcome.block, answer, cx);
    }

    fn sample_input(base: BaseInput, tool: &str) -> PostToolUseFailureInput {
        PostToolUseFailureInput {
            base,
            hook_event_name: HookEvent::PostToolUseFailure,
            tool_name: tool.to_string(),
            tool_input: Value::Object(Map::new()),
            tool_use_id: crate::hooks::new_tool_use_id(),
            error: "Error".to_string(),
            is_interrupt: false,
            duration_ms: 0,
            mcp_server: McpServerRef::sample(tool),
        }
    }

    fn explain(outcome: &PostToolUseFailureOutcome, _input: &PostToolUseFailureInput) -> Explained {
        Explained::summary(match &outcome.block {
            Some(b) => format!("blocking error: {b}"),
            None => "no decision".to_string(),
        })
        .with_common(&outcome.common)
    }
}
