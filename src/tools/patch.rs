//! `structuredPatch` hunks for Write and Edit responses, in the shape of jsdiff's
//! `structuredPatch` that Claude Code emits: 3 lines of context, 1-based starts, lines
//! prefixed with `' '`, `'-'`, `'+'` and without their newline.

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change, as jsdiff's default (and `diff -U3`).
const CONTEXT_LINES: usize = 3;

/// jsdiff's marker after a line that has no trailing newline.
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// The hunks turning `old` into `new`; empty when they are equal.
pub fn structured_patch(old: &str, new: &str) -> Value {
    let diff = TextDiff::from_lines(old, new);
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
    Value::Array(hunks)
}
