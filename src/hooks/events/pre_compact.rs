//! PreCompact: the conversation is about to be summarised (`trigger`: `manual` for
//! `/compact`, `auto` when the context is nearly full). Exit 2 or `decision: "block"` stops
//! the compaction; plain stdout of exit 0 is added to the summarising instructions.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreCompact;

/// PreCompact's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreCompactInput {
    /// Base fields (`prompt_id` once there was a prompt; no `permission_mode`).
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PreCompact`.
    pub hook_event_name: HookEvent,
    /// `manual` or `auto`; the matcher's target.
    pub trigger: String,
    /// What the user asked the summary to focus on (`/compact <instructions>`), else `null`.
    pub custom_instructions: Option<String>,
}

/// PreCompact reads no `hookSpecificOutput` field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PreCompactOutput {}

/// What PreCompact hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreCompactOutcome {
    /// Notices and runs.
    pub common: Common,
    /// Why the compaction must not happen (every blocking reason, joined), if a hook blocked.
    pub block: Option<String>,
    /// Plain stdout of successful hooks, in configuration order: more instructions for the
    /// summary.
    pub instructions: Vec<String>,
}

impl Event for PreCompact {
    const EVENT: HookEvent = HookEvent::PreCompact;
    type Input = PreCompactInput;
    type Output = PreCompactOutput;
    type Outcome = PreCompactOutcome;
    const FIELDS: &'static [&'static str] = &["trigger", "custom_instructions"];

    fn base(input: &PreCompactInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &PreCompactInput) -> Option<&str> {
        Some(&input.trigger)
    }

    fn common(outcome: &mut PreCompactOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PreCompactOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        if let Some(reason) = answer.blocking() {
            match &mut outcome.block {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(reason);
                }
                None => outcome.block = Some(reason.to_string()),
            }
        } else if let Some(text) = &answer.success_text {
            outcome.instructions.push(text.clone());
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> PreCompactInput {
        PreCompactInput {
            base,
            hook_event_name: HookEvent::PreCompact,
            trigger: "manual".to_string(),
            custom_instructions: None,
        }
    }

    fn explain(outcome: &PreCompactOutcome, _input: &PreCompactInput) -> Explained {
        let mut explained = Explained::summary(match &outcome.block {
            Some(_) => "block: the compaction does not happen",
            None => "the compaction goes ahead",
        });
        for text in &outcome.instructions {
            explained.model.push((
                "added to the summarising instructions".to_string(),
                text.clone(),
            ));
        }
        explained.with_common(&outcome.common)
    }
}
