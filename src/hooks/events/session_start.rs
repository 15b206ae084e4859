//! SessionStart: a session starts (or resumes, or restarts after `/clear` or compaction).
//! Hooks add context (plain stdout counts) and may write `CLAUDE_ENV_FILE`.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionStart;

/// SessionStart's stdin. `source` is `startup|resume|clear|compact|fork`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStartInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `SessionStart`.
    pub hook_event_name: HookEvent,
    /// Why the session started; the matcher's target.
    pub source: String,
    /// The model's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// On `resume` inside a running session (`/resume ID`): seconds since the resumed
    /// session's last reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_since_last_response: Option<u64>,
    /// On `resume`: the resumed conversation's size in tokens, as last reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// On `resume`: whether the prompt cache has likely expired (five minutes or more since
    /// the last reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_likely_expired: Option<bool>,
    /// On `resume`: what writing the conversation to the cache again costs, where prices are
    /// configured (`REIN_PRICES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cache_write_usd: Option<f64>,
}

/// SessionStart's `hookSpecificOutput`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartOutput {
    /// Context for the model.
    pub additional_context: Option<String>,
    /// A first user message.
    pub initial_user_message: Option<String>,
    /// A title for the session.
    pub session_title: Option<String>,
    /// Paths to watch (FileChanged).
    pub watch_paths: Option<Vec<String>>,
}

/// What SessionStart hooks produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStartOutcome {
    /// Context (including each handler's plain stdout), notices, loop control, runs.
    pub common: Common,
}

impl Event for SessionStart {
    const EVENT: HookEvent = HookEvent::SessionStart;
    type Input = SessionStartInput;
    type Output = SessionStartOutput;
    type Outcome = SessionStartOutcome;
    const FIELDS: &'static [&'static str] = &[
        "source",
        "model",
        "seconds_since_last_response",
        "context_tokens",
        "prompt_cache_likely_expired",
        "estimated_cache_write_usd",
    ];

    fn base(input: &SessionStartInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &SessionStartInput) -> Option<&str> {
        Some(&input.source)
    }

    fn common(outcome: &mut SessionStartOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// Plain stdout of exit 0 is a context entry `<hookName> hook success: …`; a blocking
    /// error stops nothing and becomes a user message.
    fn fold(outcome: &mut SessionStartOutcome, answer: &Answer, cx: FoldCx<'_>) {
        if let Some(text) = &answer.success_text {
            outcome
                .common
                .context
                .push(format!("{} hook success: {text}", cx.hook_name));
        }
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> SessionStartInput {
        SessionStartInput {
            base,
            hook_event_name: HookEvent::SessionStart,
            source: "startup".to_string(),
            model: None,
            seconds_since_last_response: None,
            context_tokens: None,
            prompt_cache_likely_expired: None,
            estimated_cache_write_usd: None,
        }
    }

    fn explain(outcome: &SessionStartOutcome, _input: &SessionStartInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
