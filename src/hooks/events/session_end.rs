//! SessionEnd: the session ends. Hooks cannot stop it; they share one time budget
//! ([`crate::hooks::timeout::session_end_budget`]).

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx};
use crate::hooks::run::RunStatus;
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionEnd;

/// SessionEnd's stdin. `reason` is `clear|resume|logout|prompt_input_exit|other`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEndInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `SessionEnd`.
    pub hook_event_name: HookEvent,
    /// Why the session ends; the matcher's target.
    pub reason: String,
}

/// SessionEnd reads no `hookSpecificOutput` field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SessionEndOutput {}

/// What SessionEnd hooks produced: notices only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionEndOutcome {
    /// Notices and runs.
    pub common: Common,
}

impl Event for SessionEnd {
    const EVENT: HookEvent = HookEvent::SessionEnd;
    type Input = SessionEndInput;
    type Output = SessionEndOutput;
    type Outcome = SessionEndOutcome;
    const FIELDS: &'static [&'static str] = &["reason"];

    fn base(input: &SessionEndInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &SessionEndInput) -> Option<&str> {
        Some(&input.reason)
    }

    fn common(outcome: &mut SessionEndOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// Nothing to decide: the session ends whatever the hooks say.
    fn fold(_outcome: &mut SessionEndOutcome, _answer: &Answer, _cx: FoldCx<'_>) {}

    /// `SessionEnd hook [<cmd>] failed: <stderr>` for any failed run (blocking or not), and a
    /// cancellation notice when the budget ran out.
    fn failure_notice(answer: &Answer, _cx: FoldCx<'_>) -> Option<String> {
        let cmd = answer.command();
        match &answer.run.status {
            RunStatus::Exited(0) | RunStatus::Backgrounded => None,
            RunStatus::Exited(_)
            | RunStatus::Signaled(_)
            | RunStatus::SpawnFailed(_)
            | RunStatus::Crashed(_)
            | RunStatus::RequestFailed(_) => Some(format!(
                "SessionEnd hook [{cmd}] failed: {}",
                answer.run.stderr
            )),
            RunStatus::TimedOut => Some(format!(
                "SessionEnd hook [{cmd}] was cancelled: the SessionEnd time budget ran out"
            )),
        }
    }

    fn sample_input(base: BaseInput, _tool: &str) -> SessionEndInput {
        SessionEndInput {
            base,
            hook_event_name: HookEvent::SessionEnd,
            reason: "other".to_string(),
        }
    }

    fn explain(outcome: &SessionEndOutcome, _input: &SessionEndInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
