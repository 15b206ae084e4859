//! SubagentStart: an Agent-tool subagent is starting. Nothing can stop it; additional context
//! goes to the subagent (in front of its task), stderr of a blocking exit only to the user.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubagentStart;

/// SubagentStart's stdin: only base fields (`agent_id` and `agent_type` among them, no
/// `permission_mode`), as Claude Code 2.1.328 writes it
/// (`tests/fixtures/subagents/claude-code-2.1.328.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentStartInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `SubagentStart`.
    pub hook_event_name: HookEvent,
}

/// SubagentStart's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStartOutput {
    /// Context for the subagent.
    pub additional_context: Option<String>,
}

/// What SubagentStart hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubagentStartOutcome {
    /// Context (for the subagent), notices, runs.
    pub common: Common,
}

impl Event for SubagentStart {
    const EVENT: HookEvent = HookEvent::SubagentStart;
    type Input = SubagentStartInput;
    type Output = SubagentStartOutput;
    type Outcome = SubagentStartOutcome;
    const FIELDS: &'static [&'static str] = &[];

    fn base(input: &SubagentStartInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &SubagentStartInput) -> Option<&str> {
        input.base.agent_type.as_deref()
    }

    fn common(outcome: &mut SubagentStartOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut SubagentStartOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(mut base: BaseInput, _tool: &str) -> SubagentStartInput {
        base.agent_id = Some("a0123456789abcdef".to_string());
        base.agent_type = Some("general-purpose".to_string());
        SubagentStartInput {
            base,
            hook_event_name: HookEvent::SubagentStart,
        }
    }

    fn explain(outcome: &SubagentStartOutcome, _input: &SubagentStartInput) -> Explained {
        Explained::summary("the subagent starts").with_common(&outcome.common)
    }
}
