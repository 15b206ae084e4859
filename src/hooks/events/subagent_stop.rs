//! SubagentStop: a subagent is about to end. A blocking hook keeps the subagent going with
//! feedback (`SubagentStop hook feedback:\n…`), bounded by the same loop cap as Stop.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::events::stop::{Wording, collect_block, explain_stop, feedback};
use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubagentStop;

/// SubagentStop's stdin, in Claude Code 2.1.328's key order
/// (`tests/fixtures/subagents/claude-code-2.1.328.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentStopInput {
    /// Base fields (`agent_id`, `agent_type` set).
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `SubagentStop`.
    pub hook_event_name: HookEvent,
    /// The subagent already continued because of a SubagentStop hook.
    pub stop_hook_active: bool,
    /// The subagent's own transcript (`…/<session>/subagents/agent-<agent_id>.jsonl`).
    pub agent_transcript_path: String,
    /// The text of the subagent's last assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// Background tasks still running.
    #[serde(default)]
    pub background_tasks: Vec<Value>,
    /// Scheduled prompts of the session.
    #[serde(default)]
    pub session_crons: Vec<Value>,
}

/// SubagentStop's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStopOutput {
    /// Context for the subagent.
    pub additional_context: Option<String>,
}

/// What SubagentStop hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubagentStopOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// Every blocking reason, joined with `\n`: the subagent continues.
    pub block: Option<String>,
    /// The user-role feedback the subagent continues with.
    pub feedback: Option<String>,
}

impl Event for SubagentStop {
    const EVENT: HookEvent = HookEvent::SubagentStop;
    type Input = SubagentStopInput;
    type Output = SubagentStopOutput;
    type Outcome = SubagentStopOutcome;
    const FIELDS: &'static [&'static str] = &[
        "stop_hook_active",
        "agent_transcript_path",
        "last_assistant_message",
        "background_tasks",
        "session_crons",
    ];

    fn base(input: &SubagentStopInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &SubagentStopInput) -> Option<&str> {
        input.base.agent_type.as_deref()
    }

    fn common(outcome: &mut SubagentStopOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut SubagentStopOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        collect_block(&mut outcome.block, answer);
    }

    fn context_entry(joined: &str, _cx: FoldCx<'_>) -> String {
        format!("SubagentStop hook additional context: {joined}")
    }

    fn finish(outcome: &mut SubagentStopOutcome, _input: &SubagentStopInput, _cx: FoldCx<'_>) {
        outcome.feedback = feedback(HookEvent::SubagentStop, outcome.block.as_deref());
    }

    fn sample_input(mut base: BaseInput, _tool: &str) -> SubagentStopInput {
        base.agent_id = Some("a0123456789abcdef".to_string());
        base.agent_type = Some("general-purpose".to_string());
        SubagentStopInput {
            agent_transcript_path: base.transcript_path.trim_end_matches(".jsonl").to_string()
                + "/subagents/agent-a0123456789abcdef.jsonl",
            base,
            hook_event_name: HookEvent::SubagentStop,
            stop_hook_active: false,
            last_assistant_message: None,
            background_tasks: Vec::new(),
            session_crons: Vec::new(),
        }
    }

    fn explain(outcome: &SubagentStopOutcome, _input: &SubagentStopInput) -> Explained {
        explain_stop(
            outcome.feedback.as_deref(),
            &outcome.common,
            Wording {
                continues: "block: the subagent continues with this feedback",
                ends: "the subagent ends",
                message: "user message to the subagent (it continues)",
            },
        )
    }
}
