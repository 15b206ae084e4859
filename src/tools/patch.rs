//! `structuredPatch` hunks for Write and Edit responses, in the shape of jsdiff's
//! `structuredPatch` that Claude Code emits: 3 lines of context, 1-based starts, lines
//! prefixed with `' '`, `'-'`, `'+'` and without their newline.
//!
//! The diff runs under a deadline ([`DIFF_DEADLINE`]): Myers' algorithm is quadratic in the
//! number of changed lines (writing a new 200k-line file over an old one took a minute). Past the
//! deadline `similar` stops looking for the shortest edit and finishes with whole blocks deleted
//! and inserted: still a correct patch, only coarser. Claude Code gives up on its diff after 5 s
//! and sends an empty `structuredPatch`; rein keeps the coarse one and says so
//! ([`Patch::coarse`]).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change, as jsdiff's default (and `diff -U3`).
const CONTEXT_LINES: usize = 3;

/// jsdiff's marker after a line that has no trailing newline.
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// Longest the search for a minimal diff may take before it settles for a coarse one.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(250);

/// A `structuredPatch` and whether the deadline cut its search short.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    pub hunks: Value,
    /// The diff search ran past its deadline: the hunks may replace whole blocks where a
    /// smaller change would do.
    pub coarse: bool,
}

impl Patch {
    /// No hunks (a created file, or an original too large to diff).
    pub fn empty() -> Patch {
        Patch {
            hunks: Value::Array(Vec::new()),
            coarse: false,
        }
    }
}

/// The key Write and Edit add to their `tool_response` (`true`) when the patch is coarse. Absent
/// otherwise, so responses keep Claude Code's shape.
pub const COARSE_PATCH_KEY: &str = "structuredPatchIsCoarse";

/// The hunks turning `old` into `new`; empty when they are equal. Searches under
/// [`DIFF_DEADLINE`]; see [`structured_patch_within`].
pub fn structured_patch(old: &str, new: &str) -> Value {
    structured_patch_within(old, new, DIFF_DEADLINE).hunks
}

/// The hunks turning `old` into `new`, searching at most `deadline` for the minimal diff.
///
/// Run it off the async runtime's threads: building the hunks of a large file takes a while
/// even when the search is cut short.
pub fn structured_patch_within(old: &str, new: &str, deadline: Duration) -> Patch {
    let started = Instant::now();
    let diff = TextDiff::configure().timeout(deadline).diff_lines(old, new);
    // Why measured here: `similar` does not report whether it gave up; a search that ended
    // after its deadline is one that may have.
    let coarse = started.elapsed() >= deadline;
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_len = last.old_range().end - old_start;
        let new_start = first.new_range().start;
        let new_len = last.new_range().end - new_start;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let prefix = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                lines.push(Value::String(format!("{prefix}{text}")));
                if change.missing_newline() {
                    lines.push(Value::String(NO_NEWLINE.to_string()));
                }
            }
        }
        hunks.push(json!({
            "oldStart": old_start + 1,
            "oldLines": old_len,
            "newStart": new_start + 1,
            "newLines": new_len,
            "lines": lines,
        }));
    }
    Patch {
        hunks: Value::Array(hunks),
        coarse,
    }
}
