//! CwdChanged: the session's working directory moved (a Bash `cd`). Hooks observe; rein acts
//! on none of their output (`watchPaths` would feed FileChanged, which rein does not fire).

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct CwdChanged;

/// CwdChanged's stdin (Claude Code 2.1.328, fixture `tests/fixtures/cc-2.1.328/env_cwd`): the
/// base fields without `permission_mode` or `effort`, then the two directories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CwdChangedInput {
    /// Base fields; `cwd` is already the new directory.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `CwdChanged`.
    pub hook_event_name: HookEvent,
    /// The directory before.
    pub old_cwd: String,
    /// The directory now.
    pub new_cwd: String,
}

/// CwdChanged's `hookSpecificOutput` (read, not acted on).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CwdChangedOutput {}

/// What CwdChanged hooks produced: notices only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CwdChangedOutcome {
    /// Notices and runs.
    pub common: Common,
}

impl Event for CwdChanged {
    const EVENT: HookEvent = HookEvent::CwdChanged;
    type Input = CwdChangedInput;
    type Output = CwdChangedOutput;
    type Outcome = CwdChangedOutcome;
    const FIELDS: &'static [&'static str] = &["old_cwd", "new_cwd"];

    fn base(input: &CwdChangedInput) -> &BaseInput {
        &input.base
    }

    fn match_value(_input: &CwdChangedInput) -> Option<&str> {
        None
    }

    fn common(outcome: &mut CwdChangedOutcome) -> &mut Common {
        &mut outcome.common
    }

    fn fold(outcome: &mut CwdChangedOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> CwdChangedInput {
        let cwd = base.cwd.clone();
        CwdChangedInput {
            base,
            hook_event_name: HookEvent::CwdChanged,
            old_cwd: cwd.clone(),
            new_cwd: cwd,
        }
    }

    fn explain(outcome: &CwdChangedOutcome, _input: &CwdChangedInput) -> Explained {
        Explained::summary("no decision").with_common(&outcome.common)
    }
}
