//! UserPromptSubmit: a prompt is about to be processed. Hooks may add context (plain stdout
//! counts) or block the prompt, which then never reaches the model.

use serde::{Deserialize, Serialize};

use crate::hooks::events::post_tool_use::join_block;
use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserPromptSubmit;

/// UserPromptSubmit's stdin. No `effort`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserPromptSubmitInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `UserPromptSubmit`.
    pub hook_event_name: HookEvent,
    /// The prompt as typed.
    pub prompt: String,
}

/// UserPromptSubmit's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserPromptSubmitOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
    /// A title for the session.
    pub session_title: Option<String>,
    /// When blocking: do not echo the original prompt.
    pub suppress_original_prompt: Option<bool>,
}

/// What UserPromptSubmit hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserPromptSubmitOutcome {
    /// Context (including each handler's plain stdout), notices, loop control, runs.
    pub common: Common,
    /// Every blocking reason, joined with `\n`: the prompt is not processed.
    pub block: Option<String>,
    /// When blocked: the text shown instead of running the prompt.
    pub blocked_text: Option<String>,
    /// Some hook asked not to echo the prompt.
    pub suppress_original_prompt: bool,
}

impl Event for UserPromptSubmit {
    const EVENT: HookEvent = HookEvent::UserPromptSubmit;
    type Input = UserPromptSubmitInput;
    type Output = UserPromptSubmitOutput;
    type Outcome = UserPromptSubmitOutcome;
    const FIELDS: &'static [&'static str] = &["prompt"];

    fn base(input: &UserPromptSubmitInput) -> &BaseInput {
        &input.base
    }

    fn common(outcome: &mut UserPromptSubmitOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// Plain stdout of exit 0 is a context entry `<hookName> hook success: …`; blocking reasons
    /// are collected; `suppressOriginalPrompt` if any answer says so.
    fn fold(outcome: &mut UserPromptSubmitOutcome, answer: &Answer, cx: FoldCx<'_>) {
        if let Some(text) = &answer.success_text {
            outcome
                .common
                .context
                .push(format!("{} hook success: {text}", cx.hook_name));
        }
        if let Some(reason) = answer.blocking() {
            join_block(&mut outcome.block, reason);
        }
        outcome.suppress_original_prompt |= answer
            .specific::<UserPromptSubmitOutput>()
            .suppress_original_prompt
            .unwrap_or(false);
    }

    fn finish(
        outcome: &mut UserPromptSubmitOutcome,
        input: &UserPromptSubmitInput,
        _cx: FoldCx<'_>,
    ) {
        if let Some(joined) = &outcome.block {
            outcome.blocked_text = Some(if outcome.suppress_original_prompt {
                format!("UserPromptSubmit operation blocked by hook:\n{joined}")
            } else {
                format!(
                    "UserPromptSubmit operation blocked by hook:\n{joined}\n\nOriginal prompt: {}",
                    input.prompt
                )
            });
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> UserPromptSubmitInput {
        UserPromptSubmitInput {
            base,
            hook_event_name: HookEvent::UserPromptSubmit,
            prompt: String::new(),
        }
    }

    fn explain(outcome: &UserPromptSubmitOutcome, _input: &UserPromptSubmitInput) -> Explained {
        let mut explained = Explained::summary(match &outcome.blocked_text {
            Some(_) => "prompt blocked (no model call; the text is shown to the user)",
            None => "prompt goes ahead",
        });
        if let Some(text) = &outcome.blocked_text {
            explained.user.push(text.clone());
        }
        explained.with_common(&outcome.common)
    }
}
