//! PostToolUse: the tool returned successfully. Hooks may add context, give the model feedback
//! (a blocking error), or replace the output the model sees.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::hooks::events::{
    Answer, BaseInput, Common, Event, Explained, FoldCx, McpServerRef, tool_event_accessors,
};
use crate::hooks::registry::HookReply;
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostToolUse;

/// PostToolUse's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PostToolUse`.
    pub hook_event_name: HookEvent,
    /// The tool's name.
    pub tool_name: String,
    /// The input the tool ran with.
    pub tool_input: Value,
    /// The tool's structured response (Claude Code's shape per tool).
    pub tool_response: Value,
    /// The id of the call.
    pub tool_use_id: String,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The MCP server behind an `mcp__<server>__<tool>` tool (Claude Code appends it last);
    /// absent for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerRef>,
}

/// A present key, even when its value is `null`: `Some(Value::Null)`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// PostToolUse's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostToolUseOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
    /// Replaces the output the model sees (rendered by the tool).
    #[serde(default, deserialize_with = "present")]
    pub updated_tool_output: Option<Value>,
}

/// What PostToolUse hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// The replacement output: the last answer in configuration order that has one.
    pub updated_tool_output: Option<Value>,
    /// Every blocking reason, in configuration order, joined with `\n`.
    pub block: Option<String>,
}

impl PostToolUse {
    /// An in-process answer: the model sees `output` instead of the tool's output.
    pub fn replace_output(output: impl Into<Value>) -> HookReply {
        HookReply::none().specific("updatedToolOutput", output.into())
    }
}

/// A blocking error after the tool ran is feedback for the model: one context entry
/// `<hookName> hook blocking error from command: "<cmd>": <reason>` per answer, and the reason
/// in `block`.
pub(crate) fn feedback(
    common: &mut Common,
    block: &mut Option<String>,
    answer: &Answer,
    cx: FoldCx<'_>,
) {
    if let Some(reason) = answer.blocking() {
        common.context.push(format!(
            "{} hook blocking error from command: \"{}\": {reason}",
            cx.hook_name,
            answer.command()
        ));
        join_block(block, reason);
    }
}

/// Appends `reason` to the `\n`-joined block text.
pub(crate) fn join_block(block: &mut Option<String>, reason: &str) {
    match block {
        Some(text) => {
            text.push('\n');
            text.push_str(reason);
        }
        None => *block = Some(reason.to_string()),
    }
}

impl Event for PostToolUse {
    const EVENT: HookEvent = HookEvent::PostToolUse;
    type Input = PostToolUseInput;
    type Output = PostToolUseOutput;
    type Outcome = PostToolUseOutcome;
    const FIELDS: &'static [&'static str] = &[
        "tool_name",
        "tool_input",
        "tool_response",
        "tool_use_id",
        "duration_ms",
    ];

    tool_event_accessors!(PostToolUseInput);

    fn tool_use_id(input: &PostToolUseInput) -> Option<&str> {
        Some(&input.tool_use_id)
    }

    fn common(outcome: &mut PostToolUseOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PostToolUseOutcome, answer: &Answer, cx: FoldCx<'_>) {
        feedback(&mut outcome.common, &mut outcome.block, answer, cx);
        if let Some(updated) = answer.specific::<PostToolUseOutput>().updated_tool_output {
            outcome.updated_tool_output = Some(updated);
        }
    }

    fn sample_input(base: BaseInput, tool: &str) -> PostToolUseInput {
        PostToolUseInput {
            base,
            hook_event_name: HookEvent::PostToolUse,
            tool_name: tool.to_string(),
            tool_input: Value::Object(Map::new()),
            tool_response: Value::Object(Map::new()),
            tool_use_id: crate::hooks::new_tool_use_id(),
            duration_ms: 0,
            mcp_server: McpServerRef::sample(tool),
        }
    }

    fn explain(outcome: &PostToolUseOutcome, _input: &PostToolUseInput) -> Explained {
        let mut explained = Explained::summary(match &outcome.block {
            Some(b) => format!("blocking error: {b}"),
            None => "no decision".to_string(),
        });
        if let Some(out) = &outcome.updated_tool_output {
            explained.model.push((
                "the tool output is replaced by".to_string(),
                out.to_string(),
            ));
        }
        explained.with_common(&outcome.common)
    }
}
