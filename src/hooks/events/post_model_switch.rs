//! PostModelSwitch: `/model NAME` switched the session's model. `additionalContext` reaches
//! the model with the next request.

use serde::Deserialize;

use crate::hooks::events::pre_model_switch::PreModelSwitchInput;
use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PostModelSwitch;

/// PostModelSwitch's stdin: the same fields as PreModelSwitch's.
pub type PostModelSwitchInput = PreModelSwitchInput;

/// PostModelSwitch's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostModelSwitchOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// What PostModelSwitch hooks produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostModelSwitchOutcome {
    /// Context for the next request, notices, runs.
    pub common: Common,
}

impl Event for PostModelSwitch {
    const EVENT: HookEvent = HookEvent::PostModelSwitch;
    type Input = PreModelSwitchInput;
    type Output = PostModelSwitchOutput;
    type Outcome = PostModelSwitchOutcome;
    const FIELDS: &'static [&'static str] =
        crate::hooks::events::pre_model_switch::PreModelSwitch::FIELDS_LIST;

    fn base(input: &PreModelSwitchInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &PreModelSwitchInput) -> Option<&str> {
        Some(&input.to_model)
    }

    fn common(outcome: &mut PostModelSwitchOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PostModelSwitchOutcome, answer: &Answer, cx: FoldCx<'_>) {
        crate::hooks::events::pre_model_switch::post_fold(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, tool: &str) -> PreModelSwitchInput {
        let mut input =
            <crate::hooks::events::pre_model_switch::PreModelSwitch as Event>::sample_input(
                base, tool,
            );
        input.hook_event_name = HookEvent::PostModelSwitch;
        input
    }

    fn explain(outcome: &PostModelSwitchOutcome, _input: &PreModelSwitchInput) -> Explained {
        Explained::summary("the model was switched").with_common(&outcome.common)
    }
}
