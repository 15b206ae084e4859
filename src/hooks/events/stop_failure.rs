//! StopFailure: the turn ended by a model/API error. Hooks observe; they decide nothing.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct StopFailure;

/// StopFailure's stdin. `error` is one of spec §2.3's kinds (`rate_limit`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopFailureInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `StopFailure`.
    pub hook_event_name: HookEvent,
    /// The kind of error; the matcher's target.
    pub error: String,
    /// The error's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_details: Option<String>,
    /// The text of the last assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

/// StopFailure reads no `hookSpecificOutput` field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct StopFailureOutput {}

/// What StopFailure hooks produced: notices only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopFailureOutcome {
    /// Notices and runs.
    pub common: Common,
}

impl Event for StopFailure {
    const EVENT: HookEvent = HookEvent::StopFailure;
    type Input = StopFailureInput;
    type Output = StopFailureOutput;
    type Outcome = StopFailureOutcome;
    const FIELDS: &'static [&'static str] = &["error", "error_details", "last_assistant_message"];

    fn base(input: &StopFailureInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &StopFailureInput) -> Option<&str> {
        Some(&input.error)
    }

    fn common(outcome: &mut StopFailureOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut StopFailureOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> StopFailureInput {
        StopFailureInput {
            base,
            hook_event_name: HookEvent::StopFailure,
            error: "unknown".to_string(),
            error_details: None,
            last_assistant_message: None,
        }
    }

    fn explain(outcome: &StopFailureOutcome, _input: &StopFailureInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
