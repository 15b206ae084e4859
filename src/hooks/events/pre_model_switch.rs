//! PreModelSwitch: `/model NAME` is about to switch the session's model. A hook may deny the
//! switch (`permissionDecision: deny`, or exit 2); the model then stays.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreModelSwitch;

/// The stdin of PreModelSwitch and PostModelSwitch (Claude Code 2.1.328 sends the same fields
/// to both; fixture `tests/fixtures/cc-2.1.328/interactive/run1-hooks.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreModelSwitchInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// `PreModelSwitch` or `PostModelSwitch`.
    pub hook_event_name: HookEvent,
    /// The model in use.
    pub from_model: String,
    /// The model switched to; the matcher's target.
    pub to_model: String,
    /// The name as the user gave it.
    pub requested_model: Option<String>,
    /// What asked for the switch: `command` (`/model NAME`).
    pub source: String,
    /// The size of the conversation in tokens (0 before any request).
    pub context_tokens: u64,
    /// Whether a request was made in this session, so a prompt cache may be warm.
    pub prompt_cache_warm: bool,
    /// The prompt cache's lifetime: `5m`.
    pub cache_ttl: String,
    /// What writing the conversation to the new model's cache costs, where prices for it are
    /// configured (`REIN_PRICES`); left out otherwise (rein ships no price list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cache_write_usd: Option<f64>,
    /// Where the price came from: `configured` (`REIN_PRICES`) or `default` (none known).
    pub pricing: String,
}

/// PreModelSwitch's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreModelSwitchOutput {
    /// `allow`, `deny` or `ask`.
    pub permission_decision: Option<String>,
    /// Why.
    pub permission_decision_reason: Option<String>,
}

/// What PreModelSwitch hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreModelSwitchOutcome {
    /// `Some(reason)`: a hook denied the switch (the reason may be empty).
    pub denied: Option<String>,
    /// Notices and runs.
    pub common: Common,
}

impl PreModelSwitch {
    /// The event's own stdin fields, in Claude Code's order (PostModelSwitch shares them).
    pub const FIELDS_LIST: &'static [&'static str] = &[
        "from_model",
        "to_model",
        "requested_model",
        "source",
        "context_tokens",
        "prompt_cache_warm",
        "cache_ttl",
        "estimated_cache_write_usd",
        "pricing",
    ];
}

impl Event for PreModelSwitch {
    const EVENT: HookEvent = HookEvent::PreModelSwitch;
    type Input = PreModelSwitchInput;
    type Output = PreModelSwitchOutput;
    type Outcome = PreModelSwitchOutcome;
    const FIELDS: &'static [&'static str] = PreModelSwitch::FIELDS_LIST;

    fn base(input: &PreModelSwitchInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &PreModelSwitchInput) -> Option<&str> {
        Some(&input.to_model)
    }

    fn common(outcome: &mut PreModelSwitchOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut PreModelSwitchOutcome, answer: &Answer, _cx: FoldCx<'_>) {
        let specific: PreModelSwitchOutput = answer.specific();
        let reason = if let Some(reason) = answer.blocking() {
            Some(reason.to_string())
        } else if specific.permission_decision.as_deref() == Some("deny") {
            Some(specific.permission_decision_reason.unwrap_or_default())
        } else {
            None
        };
        if let Some(reason) = reason {
            match &mut outcome.denied {
                Some(joined) if !reason.is_empty() => {
                    if !joined.is_empty() {
                        joined.push('\n');
                    }
                    joined.push_str(&reason);
                }
                Some(_) => {}
                None => outcome.denied = Some(reason),
            }
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> PreModelSwitchInput {
        PreModelSwitchInput {
            base,
            hook_event_name: HookEvent::PreModelSwitch,
            from_model: "claude-sonnet-4-5".to_string(),
            to_model: "claude-haiku-4-5".to_string(),
            requested_model: Some("claude-haiku-4-5".to_string()),
            source: "command".to_string(),
            context_tokens: 0,
            prompt_cache_warm: false,
            cache_ttl: "5m".to_string(),
            estimated_cache_write_usd: None,
            pricing: "default".to_string(),
        }
    }

    fn explain(outcome: &PreModelSwitchOutcome, _input: &PreModelSwitchInput) -> Explained {
        Explained {
            blocks: outcome.denied.is_some(),
            ..Explained::summary(match &outcome.denied {
                Some(_) => "deny: the model stays",
                None => "the switch goes ahead",
            })
        }
        .with_common(&outcome.common)
    }
}

/// Blocking output of a PostModelSwitch hook cannot undo the switch: it is shown as a notice.
pub(crate) fn post_fold(common: &mut Common, answer: &Answer, cx: FoldCx<'_>) {
    block_as_notice(common, answer, cx);
}
