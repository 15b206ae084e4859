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

use serde_json::{Map, Value};
use similar::algorithms::{
    Capture, Compact, DiffHook, IdentifyDistinct, NoFinishHook, Replace, myers,
};
use similar::{DiffTag, group_diff_ops};

/// Lines of context around each change, as jsdiff's default (and `diff -U3`).
const CONTEXT_LINES: usize = 3;

/// jsdiff's marker after a line that has no trailing newline.
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// Longest the search for a minimal diff may take before it settles for a coarse one. Myers'
/// search on hashed lines finds a few hundred changed lines in a 200k-line file within it.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(200);

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
#[cfg(test)]
pub fn structured_patch(old: &str, new: &str) -> Value {
    structured_patch_within(old, new, DIFF_DEADLINE).hunks
}

/// The hunks turning `old` into `new`, searching at most `deadline` for the minimal diff.
///
/// The ops are `similar`'s `TextDiff::diff_lines` ops (same line splitting, same algorithm and
/// clean-up), computed here so the deadline covers only the search — splitting and hashing the
/// lines are linear and always done — and so whether it ran out is known.
///
/// Run it off the async runtime's threads: building the hunks of a large file takes a while
/// even when the search is cut short.
pub fn structured_patch_within(old: &str, new: &str, deadline: Duration) -> Patch {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    // Why trim first: the lines an edit leaves alone are most of a large file; comparing them
    // in order is cheaper than hashing them for the search (which Myers would trim anyway).
    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old_lines[prefix..]
        .iter()
        .rev()
        .zip(new_lines[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let old_middle = prefix..old_lines.len() - suffix;
    let new_middle = prefix..new_lines.len() - suffix;
    let ids = IdentifyDistinct::<u32>::new(
        &old_lines[..],
        old_middle.clone(),
        &new_lines[..],
        new_middle.clone(),
    );
    let give_up_at = Instant::now() + deadline;
    // The hooks `TextDiff` stacks (clean-up over the whole file, then replaces, then capture),
    // fed the trimmed lines as equal runs around the search of the middle.
    let mut hook = Compact::new(Replace::new(Capture::new()), &old_lines[..], &new_lines[..]);
    let searched = (|| {
        if prefix > 0 {
            hook.equal(0, 0, prefix)?;
        }
        myers::diff_deadline(
            &mut NoFinishHook::new(&mut hook),
            ids.old_lookup(),
            ids.old_range(),
            ids.new_lookup(),
            ids.new_range(),
            Some(give_up_at),
        )?;
        if suffix > 0 {
            hook.equal(old_middle.end, new_middle.end, suffix)?;
        }
        hook.finish()
    })();
    let ops = match searched {
        Ok(()) => hook.into_inner().into_inner().into_ops(),
        Err(never) => match never {},
    };
    // Why measured: `similar` does not report whether it gave up; a search that ended after its
    // deadline is one that may have.
    let coarse = Instant::now() >= give_up_at;
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_len = last.old_range().end - old_start;
        let new_start = first.new_range().start;
        let new_len = last.new_range().end - new_start;
        let mut lines = Vec::new();
        for op in &group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            let (deleted, inserted) = match tag {
                DiffTag::Equal => {
                    push_lines(&mut lines, ' ', &old_lines[old_range]);
                    continue;
                }
                DiffTag::Delete => (old_range, 0..0),
                DiffTag::Insert => (0..0, new_range),
                DiffTag::Replace => (old_range, new_range),
            };
            push_lines(&mut lines, '-', &old_lines[deleted]);
            push_lines(&mut lines, '+', &new_lines[inserted]);
        }
        let mut hunk = Map::new();
        hunk.insert("oldStart".into(), Value::from(old_start + 1));
        hunk.insert("oldLines".into(), Value::from(old_len));
        hunk.insert("newStart".into(), Value::from(new_start + 1));
        hunk.insert("newLines".into(), Value::from(new_len));
        // Moved, not passed to `json!`, which would copy every line.
        hunk.insert("lines".into(), Value::Array(lines));
        hunks.push(Value::Object(hunk));
    }
    Patch {
        hunks: Value::Array(hunks),
        coarse,
    }
}

/// `text` split after each `\n`, `\r\n` or lone `\r` (as `similar` splits lines); the last
/// line may lack its line break.
fn split_lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => i + 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i + 2,
            b'\r' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        start = end;
        i = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Each line prefixed, without its line break; jsdiff's marker after one that has none.
fn push_lines(out: &mut Vec<Value>, prefix: char, lines: &[&str]) {
    for line in lines {
        let text = line.strip_suffix('\n').unwrap_or(line);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let mut shown = String::with_capacity(text.len() + 1);
        shown.push(prefix);
        shown.push_str(text);
        out.push(Value::String(shown));
        if !line.ends_with(['\n', '\r']) {
            out.push(Value::String(NO_NEWLINE.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use similar::{ChangeTag, TextDiff};

    /// The hunks as `similar`'s `TextDiff` groups them, with no deadline: what rein sent before
    /// the diff had one.
    fn reference(old: &str, new: &str) -> Value {
        let diff = TextDiff::from_lines(old, new);
        let mut hunks = Vec::new();
        for group in diff.grouped_ops(CONTEXT_LINES) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
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
                "oldStart": first.old_range().start + 1,
                "oldLines": last.old_range().end - first.old_range().start,
                "newStart": first.new_range().start + 1,
                "newLines": last.new_range().end - first.new_range().start,
                "lines": lines,
            }));
        }
        Value::Array(hunks)
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("c"),
                Just("\n"),
                Just("\r\n"),
                Just("\r")
            ],
            0..80,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn within_the_deadline_the_patch_is_similars_text_diff(old in text(), new in text()) {
            let patch = structured_patch_within(&old, &new, Duration::from_secs(10));
            prop_assert!(!patch.coarse);
            prop_assert_eq!(patch.hunks, reference(&old, &new));
        }
    }

    /// Found by the property above against a first version that cleaned up only the middle:
    /// the clean-up must see the trimmed lines too.
    #[test]
    fn clean_up_slides_edits_into_the_trimmed_lines_as_text_diff_does() {
        let (old, new) = ("a\n\r\r\n\n", "\naaaaaaaaaaaaa\n\n");
        assert_eq!(
            structured_patch_within(old, new, DIFF_DEADLINE).hunks,
            reference(old, new)
        );
    }

    #[test]
    fn past_the_deadline_the_patch_is_coarse_but_complete() {
        let old: String = (0..200_000).map(|i| format!("old line {i}\n")).collect();
        let new: String = (0..200_000).map(|i| format!("new line {i}\n")).collect();
        let started = Instant::now();
        let patch = structured_patch_within(&old, &new, Duration::from_millis(50));
        let took = started.elapsed();
        assert!(patch.coarse);
        let hunks = patch.hunks.as_array().unwrap();
        let lines: Vec<&str> = hunks
            .iter()
            .flat_map(|h| h["lines"].as_array().unwrap())
            .map(|l| l.as_str().unwrap())
            .collect();
        assert_eq!(lines.iter().filter(|l| l.starts_with('-')).count(), 200_000);
        assert_eq!(lines.iter().filter(|l| l.starts_with('+')).count(), 200_000);
        eprintln!("200k-line coarse patch in {took:?}");
    }
}
