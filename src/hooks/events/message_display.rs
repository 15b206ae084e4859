//! MessageDisplay: an assistant message's text is about to be shown. A hook may change what is
//! shown (`displayContent`); the conversation keeps what the model said.
//!
//! Measured in Claude Code 2.1.328 (fixtures `tests/fixtures/cc-2.1.328/message_display`,
//! `message_display_json`): it fires once per assistant message with text, before the
//! message is written out, with the whole text as one final piece (`index: 0`,
//! `final: true`); `turn_id` is one UUID for the prompt's turn, `message_id` one per message.
//! A `displayContent` answer replaces the text of the message's `assistant` output line; the
//! model is never sent it, nor the `systemMessage`, nor an exit 2's stderr.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageDisplay;

/// MessageDisplay's stdin, in Claude Code 2.1.328's key order: the base fields with
/// `prompt_id` but without `permission_mode` or `effort`, then the message's piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDisplayInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `MessageDisplay`.
    pub hook_event_name: HookEvent,
    /// The prompt's turn (one UUID for every message of it).
    pub turn_id: String,
    /// The message (a UUID of its own).
    pub message_id: String,
    /// The piece's place in the message (rein sends the whole text as piece 0).
    pub index: u32,
    /// Whether this is the message's last piece (always, in rein).
    #[serde(rename = "final")]
    pub is_final: bool,
    /// The text.
    pub delta: String,
}

/// MessageDisplay's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageDisplayOutput {
    /// What to show instead of the message's text.
    pub display_content: Option<String>,
}

/// What MessageDisplay hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageDisplayOutcome {
    /// Notices and runs.
    pub common: Common,
    /// The text to show instead: the last `displayContent` in configuration order.
    pub display_content: Option<String>,
}

impl Event for MessageDisplay {
    const EVENT: HookEvent = HookEvent::MessageDisplay;
    type Input = MessageDisplayInput;
    type Output = MessageDisplayOutput;
    type Outcome = MessageDisplayOutcome;
    const FIELDS: &'static [&'static str] = &["turn_id", "message_id", "index", "final", "delta"];

    fn base(input: &MessageDisplayInput) -> &BaseInput {
        &input.base
    }

    fn common(outcome: &mut MessageDisplayOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut MessageDisplayOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
        if let Some(shown) = answer.specific::<MessageDisplayOutput>().display_content {
            outcome.display_content = Some(shown);
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> MessageDisplayInput {
        MessageDisplayInput {
            base,
            hook_event_name: HookEvent::MessageDisplay,
            turn_id: crate::id::uuid_v4(),
            message_id: crate::id::uuid_v4(),
            index: 0,
            is_final: true,
            delta: "Done.".to_string(),
        }
    }

    fn explain(outcome: &MessageDisplayOutcome, _input: &MessageDisplayInput) -> Explained {
        let mut explained = Explained::summary(match &outcome.display_content {
            Some(_) => "the message is shown with the hook's text",
            None => "the message is shown as the model wrote it",
        });
        if let Some(text) = &outcome.display_content {
            explained.user.push(format!("shown instead: {text}"));
        }
        explained.with_common(&outcome.common)
    }
}
