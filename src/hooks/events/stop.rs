//! Stop: the main agent is about to end its turn. A blocking hook keeps it going with
//! feedback (bounded by the session's loop cap).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hooks::events::post_tool_use::join_block;
use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stop;

/// Stop's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `Stop`.
    pub hook_event_name: HookEvent,
    /// The turn already continued because of a Stop hook.
    pub stop_hook_active: bool,
    /// The text of the last assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// Background tasks still running.
    #[serde(default)]
    pub background_tasks: Vec<Value>,
    /// Scheduled prompts of the session.
    #[serde(default)]
    pub session_crons: Vec<Value>,
}

/// Stop's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StopOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// What Stop hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopOutcome {
    /// Context, notices, loop control, runs.
    pub common: Common,
    /// Every blocking reason, joined with `\n`: the turn continues.
    pub block: Option<String>,
    /// The user-role feedback text the turn continues with (`Stop hook feedback:\n…`).
    pub feedback: Option<String>,
}

impl Event for Stop {
    const EVENT: HookEvent = HookEvent::Stop;
    type Input = StopInput;
    type Output = StopOutput;
    type Outcome = StopOutcome;
    const FIELDS: &'static [&'static str] = &[
        "stop_hook_active",
        "last_assistant_message",
        "background_tasks",
        "session_crons",
    ];

    fn base(input: &StopInput) -> &BaseInput {
        &input.base
    }

    fn common(outcome: &mut StopOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// A JSON block (`decision: block`) is also a context entry
    /// `Stop hook blocking error from command: "<cmd>": <reason>`; every blocking reason is
    /// collected.
    fn fold(outcome: &mut StopOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        if let Some(reason) = answer.blocking()
            && answer.block_from_json()
        {
            outcome.common.context.push(format!(
                "Stop hook blocking error from command: \"{}\": {reason}",
                answer.command()
            ));
        }
        collect_block(&mut outcome.block, answer);
    }

    fn context_entry(joined: &str, _cx: FoldCx<'_>) -> String {
        format!("<system-reminder>\nStop hook additional context: {joined}\n</system-reminder>")
    }

    fn finish(outcome: &mut StopOutcome, _input: &StopInput, _cx: FoldCx<'_>) {
        outcome.feedback = feedback(HookEvent::Stop, outcome.block.as_deref());
    }

    fn sample_input(base: BaseInput, _tool: &str) -> StopInput {
        StopInput {
            base,
            hook_event_name: HookEvent::Stop,
            stop_hook_active: false,
            last_assistant_message: None,
            background_tasks: Vec::new(),
            session_crons: Vec::new(),
        }
    }

    fn explain(outcome: &StopOutcome, _input: &StopInput) -> Explained {
        explain_stop(
            outcome.feedback.as_deref(),
            &outcome.common,
            Wording {
                continues: "block: the turn continues with this feedback",
                ends: "the turn ends",
                message: "user message (the turn continues)",
            },
        )
    }
}

// Stop's merge, which SubagentStop shares (its own part is only Stop's JSON-block context
// entry): every blocking reason is collected, and the agent goes on with
// `<Event> hook feedback:\n<reasons>`.

/// Collects `answer`'s blocking reason, if any, into `block` (joined with `\n`).
pub(super) fn collect_block(block: &mut Option<String>, answer: &Answer) {
    if let Some(reason) = answer.blocking() {
        join_block(block, reason);
    }
}

/// The user-role feedback the agent continues with when `block` holds reasons.
pub(super) fn feedback(event: HookEvent, block: Option<&str>) -> Option<String> {
    block.map(|joined| format!("{event} hook feedback:\n{joined}"))
}

/// How `rein hooks explain` words a Stop-like outcome for one kind of agent.
pub(super) struct Wording {
    pub continues: &'static str,
    pub ends: &'static str,
    pub message: &'static str,
}

/// What `rein hooks test` prints for a Stop-like outcome.
pub(super) fn explain_stop(feedback: Option<&str>, common: &Common, wording: Wording) -> Explained {
    let mut explained = Explained::summary(match feedback {
        Some(_) => wording.continues,
        None => wording.ends,
    });
    if let Some(text) = feedback {
        explained
            .model
            .push((wording.message.to_string(), text.to_string()));
    }
    explained.with_common(common)
}
