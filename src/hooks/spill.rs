//! Large hook texts (spec §4.5): over [`SPILL_THRESHOLD`] characters, a text is written to a
//! file and the model gets a `<persisted-output>` notice with a preview.

use std::path::Path;

use crate::hooks::spec::HookEvent;

/// Texts longer than this many characters are spilled to a file (spec §4.5).
pub const SPILL_THRESHOLD: usize = 10_000;

/// Characters of the preview kept in a `<persisted-output>` notice (Claude Code 2.1.328 keeps
/// 2000: fixtures `ups_spill`, `texts_more`).
pub const SPILL_PREVIEW_CHARS: usize = 2000;

/// Replaces a text over [`SPILL_THRESHOLD`] characters by a `<persisted-output>` notice with a
/// 2000-character preview; the full text goes to a file in the output dir, named as Claude
/// Code 2.1.328 names it (fixtures `ups_spill`, `ups_spill_json`, `texts_more`):
/// `hook-<id>-<hash>-stdout.txt` for plain stdout, `hook-<id>-<Event>-<hash>-<field>.txt`
/// otherwise, `<id>` the tool call's id (a fresh UUID without one), `<hash>` 32 hex digits of
/// the text's hash. If the file cannot be written the text is kept whole (losing context
/// would be worse than a long message).
pub(crate) fn spill(
    dir: &Path,
    tool_use_id: Option<&str>,
    event: HookEvent,
    field: &str,
    text: String,
) -> String {
    if text.chars().count() <= SPILL_THRESHOLD {
        return text;
    }
    let id = tool_use_id.map_or_else(crate::id::uuid_v4, str::to_string);
    let hash = format!(
        "{:016x}{:016x}",
        fnv1a(0xcbf2_9ce4_8422_2325, text.as_bytes()),
        fnv1a(0x6c62_272e_07bb_0142, text.as_bytes())
    );
    let name = match field {
        "stdout" => format!("hook-{id}-{hash}-stdout.txt"),
        _ => format!("hook-{id}-{}-{hash}-{field}.txt", event.as_str()),
    };
    let path = dir.join(name);
    let written = crate::private_fs::write(&path, text.as_bytes());
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), %err, "cannot spill large hook output");
        return text;
    }
    let end = text
        .char_indices()
        .nth(SPILL_PREVIEW_CHARS)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\nPreview (first 2KB):\n{}\n...\n</persisted-output>",
        crate::byte_size::format_size(text.len() as u64),
        path.display(),
        &text[..end]
    )
}

fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut hash: u64 = seed;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
