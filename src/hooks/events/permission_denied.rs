//! PermissionDenied: rein fires it for every call a hook, a rule or a person refused, with the
//! reason. Hooks may tell the model it may retry.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::events::{
    Answer, BaseInput, Common, Event, Explained, FoldCx, McpServerRef, block_as_notice,
    tool_event_accessors,
};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PermissionDenied;

/// PermissionDenied's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDeniedInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PermissionDenied`.
    pub hook_event_name: HookEvent,
    /// The tool's name.
    pub tool_name: String,
    /// The tool input.
    pub tool_input: Value,
    /// The id of the call.
    pub tool_use_id: String,
    /// Why it was refused (the model-facing text).
    pub reason: String,
    /// The MCP server behind an `mcp__<server>__<tool>` tool (Claude Code appends it last);
    /// absent for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerRef>,
}

/// PermissionDenied's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PermissionDeniedOutput {
    /// Tell the model it may retry the call.
    pub retry: Option<bool>,
}

/// What PermissionDenied hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionDeniedOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// Some hook answered `retry: true`.
    pub retry: bool,
}

impl Event for PermissionDenied {
    const EVENT: HookEvent = HookEvent::PermissionDenied;
    type Input = PermissionDeniedInput;
    type Output = PermissionDeniedOutput;
    type Outcome = PermissionDeniedOutcome;
    const FIELDS: &'static [&'static str] = &["tool_name", "tool_input", "tool_use_id", "reason"];

    tool_event_accessors!(PermissionDeniedInput);

    fn tool_use_id(input: &PermissionDeniedInput) -> Option<&str> {
        Some(&input.tool_use_id)
    }

    fn common(outcome: &mut PermissionDeniedOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// The call is already refused, so a blocking error stops nothing: it becomes a user
    /// message. `retry` if any answer says so.
    fn fold(outcome: &mut PermissionDeniedOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
        outcome.retry |= answer
            .specific::<PermissionDeniedOutput>()
            .retry
            .unwrap_or(false);
    }

    fn sample_input(base: BaseInput, tool: &str) -> PermissionDeniedInput {
        PermissionDeniedInput {
            base,
            hook_event_name: HookEvent::PermissionDenied,
            tool_name: tool.to_string(),
            tool_input: Value::Object(Map::new()),
            tool_use_id: crate::hooks::new_tool_use_id(),
            reason: crate::permissions::headless_denial_text(tool),
            mcp_server: McpServerRef::sample(tool),
        }
    }

    fn explain(outcome: &PermissionDeniedOutcome, input: &PermissionDeniedInput) -> Explained {
        let mut explained = Explained::summary("no decision").with_common(&outcome.common);
        if outcome.retry {
            explained
                .model
                .push(("context".to_string(), retry_text(&input.tool_name)));
        }
        explained
    }
}

/// The context entry of a `retry: true` answer.
pub fn retry_text(tool: &str) -> String {
    format!("PermissionDenied:{tool} hook: you may retry this tool call.")
}
