//! PostCompact: the conversation was summarised; `compact_summary` is the summary the model
//! continues from. Plain stdout of exit 0 is shown to the user.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostCompact;

/// PostCompact's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostCompactInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `PostCompact`.
    pub hook_event_name: HookEvent,
    /// `manual` or `auto`; the matcher's target.
    pub trigger: String,
    /// The summary that replaced the older turns.
    pub compact_summary: String,
}

/// PostCompact reads no `hookSpecificOutput` field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PostCompactOutput {}

/// What PostCompact hooks produced: texts for the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostCompactOutcome {
    /// Notices (each successful hook's plain stdout among them) and runs.
    pub common: Common,
}

impl Event for PostCompact {
    const EVENT: HookEvent = HookEvent::PostCompact;
    type Input = PostCompactInput;
    type Output = PostCompactOutput;
    type Outcome = PostCompactOutcome;
    const FIELDS: &'static [&'static str] = &["trigger", "compact_summary"];

    fn base(input: &PostCompactInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &PostCompactInput) -> Option<&str> {
        Some(&input.trigger)
    }

    fn common(outcome: &mut PostCompactOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PostCompactOutcome, answer: &Answer, cx: FoldCx<'_>) {
        if let Some(text) = &answer.success_text {
            outcome.common.user_messages.push(text.clone());
        }
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> PostCompactInput {
        PostCompactInput {
            base,
            hook_event_name: HookEvent::PostCompact,
            trigger: "manual".to_string(),
            compact_summary: "(summary)".to_string(),
        }
    }

    fn explain(outcome: &PostCompactOutcome, _input: &PostCompactInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
