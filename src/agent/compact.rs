//! Compaction: when the conversation nears the model's context window (or on `/compact`), the
//! model summarises it and the summary replaces the older messages.
//!
//! When (auto): before a model request, if the last request's prompt plus reply tokens (the
//! provider's `usage`) reached [`CompactPolicy::threshold`]. A provider that reports no usage
//! leaves rein blind to the context size, so auto-compaction is off then (with a notice) rather
//! than guessed. Configuration, with Claude Code's variable names: `DISABLE_AUTO_COMPACT=1`,
//! `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (the window in tokens), `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
//! (the percentage of the window at which to compact, default [`DEFAULT_THRESHOLD_PCT`]).
//!
//! Hooks, as Claude Code fires them: PreCompact (`trigger`, `custom_instructions`; exit 2 or
//! `decision: block` stops the compaction; plain stdout adds to the instructions), then
//! PostCompact (`trigger`, `compact_summary`), then SessionStart with `source: compact`.

use crate::model::{ContentBlock, Message, Role};

/// Percentage of the window at which auto-compaction runs unless configured otherwise.
pub const DEFAULT_THRESHOLD_PCT: u64 = 80;

/// When to compact on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactPolicy {
    /// Auto-compaction is on.
    pub auto: bool,
    /// The model's context window, tokens.
    pub window: u64,
    /// Compact at this share of the window, percent (1–100).
    pub threshold_pct: u64,
}

impl CompactPolicy {
    /// The policy for `model` from the environment (see the module doc).
    pub fn from_env(model: &str) -> CompactPolicy {
        CompactPolicy::from_lookup(model, |name| std::env::var(name).ok())
    }

    /// [`CompactPolicy::from_env`] with an explicit environment.
    pub fn from_lookup(model: &str, env: impl Fn(&str) -> Option<String>) -> CompactPolicy {
        let number = |name: &str| env(name).and_then(|v| v.trim().parse::<u64>().ok());
        let auto = !env("DISABLE_AUTO_COMPACT")
            .is_some_and(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"));
        CompactPolicy {
            auto,
            window: number("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
                .filter(|w| *w > 0)
                .unwrap_or_else(|| context_window(model)),
            threshold_pct: number("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
                .filter(|p| (1..=100).contains(p))
                .unwrap_or(DEFAULT_THRESHOLD_PCT),
        }
    }

    /// The context size (tokens) at which auto-compaction runs.
    pub fn threshold(&self) -> u64 {
        self.window.saturating_mul(self.threshold_pct) / 100
    }
}

/// The context window of well-known model families; 128 000 tokens otherwise (set
/// `CLAUDE_CODE_AUTO_COMPACT_WINDOW` for a model with another). The offline mock has no
/// window: it compacts on its own only when a window is configured.
pub fn context_window(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    if m == "mock" {
        u64::MAX / 200
    } else if m.starts_with("claude") {
        200_000
    } else if m.starts_with("gpt-4.1") {
        1_000_000
    } else {
        128_000
    }
}

/// The request that asks the model for the summary: the user's and the hooks' extra
/// instructions are added.
pub fn summary_request(custom: Option<&str>, from_hooks: &[String]) -> String {
    let mut text = String::from(
        "Write a summary of this conversation so far that lets you carry on the work without \
         it. Keep: what the user asked for and every constraint they gave; decisions made and \
         why; files and functions read or changed (with paths); commands run and what they \
         showed; errors met and how they were handled; what is finished and what is still to \
         do, including the very next step. Be complete and concise. Reply with the summary \
         text only, and do not call any tool.",
    );
    if let Some(custom) = custom.filter(|c| !c.trim().is_empty()) {
        text.push_str("\n\nThe user asks the summary to follow these instructions: ");
        text.push_str(custom.trim());
    }
    for extra in from_hooks {
        text.push_str("\n\n");
        text.push_str(extra);
    }
    text
}

/// The text that opens the compacted conversation.
pub fn summary_message(summary: &str, mid_turn: bool) -> String {
    let mut text = format!(
        "This conversation was compacted to save context: the earlier messages were replaced \
         by this summary of them.\n\n{}",
        summary.trim()
    );
    if mid_turn {
        text.push_str(
            "\n\nThe work was in progress when this summary was written: continue it from where \
             it stopped.",
        );
    }
    text
}

/// How a history is split for compaction: what is summarised, and the prompt that stays after
/// the summary (when the history ends in a prompt the model has not answered yet).
pub fn split(messages: &[Message]) -> (&[Message], Option<&Message>) {
    match messages.split_last() {
        Some((last, rest))
            if last.role == Role::User
                && !last
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolResult { .. })) =>
        {
            (rest, Some(last))
        }
        Some(_) | None => (messages, None),
    }
}
