//! Notification: rein wants the user's attention (a permission prompt, an idle prompt).
//! Hooks observe; they decide nothing.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Notification;

/// Notification's stdin. Carries no `permission_mode` or `effort`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotificationInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `Notification`.
    pub hook_event_name: HookEvent,
    /// The text.
    pub message: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `permission_prompt`, `idle_prompt`, …; the matcher's target.
    pub notification_type: String,
}

/// Notification's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// What Notification hooks produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NotificationOutcome {
    /// Context, notices, runs.
    pub common: Common,
}

impl Event for Notification {
    const EVENT: HookEvent = HookEvent::Notification;
    type Input = NotificationInput;
    type Output = NotificationOutput;
    type Outcome = NotificationOutcome;
    const FIELDS: &'static [&'static str] = &["message", "title", "notification_type"];

    fn base(input: &NotificationInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &NotificationInput) -> Option<&str> {
        Some(&input.notification_type)
    }

    fn common(outcome: &mut NotificationOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut NotificationOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> NotificationInput {
        NotificationInput {
            base,
            hook_event_name: HookEvent::Notification,
            message: "Claude is waiting for your input".to_string(),
            title: None,
            notification_type: "idle_prompt".to_string(),
        }
    }

    fn explain(outcome: &NotificationOutcome, _input: &NotificationInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
