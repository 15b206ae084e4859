//! InstructionsLoaded: a memory file (`CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md`,
//! `~/.claude/CLAUDE.md`, or a file one of them imports with `@path`) was read into the
//! model's instructions. Observability only: hooks cannot change or refuse the file.
//!
//! Stdin as Claude Code 2.1.328 writes it (`tests/fixtures/cc/instructions_and_usage.json`):
//! base fields without `prompt_id`/`permission_mode`, then `file_path`, `memory_type`
//! (`User|Project|Local`), `load_reason` (`session_start`, `include` for an import, `compact`
//! after a compaction), and `parent_file_path` on an import only.

use serde::{Deserialize, Serialize};

use crate::hooks::events::{Answer, BaseInput, Common, Event, Explained, FoldCx, block_as_notice};
use crate::hooks::spec::HookEvent;

/// The event.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstructionsLoaded;

/// InstructionsLoaded's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstructionsLoadedInput {
    /// Base fields.
    #[serde(flatten)]
    pub base: BaseInput,
    /// Always `InstructionsLoaded`.
    pub hook_event_name: HookEvent,
    /// The file that was loaded (absolute).
    pub file_path: String,
    /// `User`, `Project` or `Local`.
    pub memory_type: String,
    /// Why it was loaded; the matcher's target.
    pub load_reason: String,
    /// The file whose `@path` imported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_file_path: Option<String>,
}

/// InstructionsLoaded reads no `hookSpecificOutput` field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct InstructionsLoadedOutput {}

/// What InstructionsLoaded hooks produced: notices only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstructionsLoadedOutcome {
    /// Notices and runs.
    pub common: Common,
}

impl Event for InstructionsLoaded {
    const EVENT: HookEvent = HookEvent::InstructionsLoaded;
    type Input = InstructionsLoadedInput;
    type Output = InstructionsLoadedOutput;
    type Outcome = InstructionsLoadedOutcome;
    const FIELDS: &'static [&'static str] = &[
        "file_path",
        "memory_type",
        "load_reason",
        "parent_file_path",
    ];

    fn base(input: &InstructionsLoadedInput) -> &BaseInput {
        &input.base
    }

    fn match_value(input: &InstructionsLoadedInput) -> Option<&str> {
        Some(&input.load_reason)
    }

    fn common(outcome: &mut InstructionsLoadedOutcome) -> &mut Common {
        &mut outcome.common
    }

    /// Nothing to decide; a blocking error is only shown.
    fn fold(outcome: &mut InstructionsLoadedOutcome, answer: &Answer, cx: FoldCx<'_>) {
        block_as_notice(&mut outcome.common, answer, cx);
    }

    fn sample_input(base: BaseInput, _tool: &str) -> InstructionsLoadedInput {
        InstructionsLoadedInput {
            file_path: format!("{}/CLAUDE.md", base.cwd),
            base,
            hook_event_name: HookEvent::InstructionsLoaded,
            memory_type: "Project".to_string(),
            load_reason: "session_start".to_string(),
            parent_file_path: None,
        }
    }

    fn explain(outcome: &InstructionsLoadedOutcome, _input: &InstructionsLoadedInput) -> Explained {
        Explained::summary("no decision (observability only)").with_common(&outcome.common)
    }
}
