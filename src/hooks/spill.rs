//! Large hook texts (spec §4.5): over [`SPILL_THRESHOLD`] characters, a text is written to a
//! file and the model gets a `<persisted-output>` notice with a preview.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::hooks::spec::HookEvent;

/// Texts longer than this many characters are spilled to a file (spec §4.5).
pub const SPILL_THRESHOLD: usize = 10_000;

/// Size of the preview kept in a `<persisted-output>` notice.
pub const SPILL_PREVIEW_BYTES: usize = 2048;

/// Replaces a text over [`SPILL_THRESHOLD`] characters by a `<persisted-output>` notice with a
/// 2 KB preview; the full text goes to a file in the output dir. If the file cannot be
/// written the text is kept whole (losing context would be worse than a long message).
pub(crate) fn spill(
    dir: &Path,
    counter: &AtomicU64,
    event: HookEvent,
    field: &str,
    text: String,
) -> String {
    if text.chars().count() <= SPILL_THRESHOLD {
        return text;
    }
    let n = counter.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(
        "hook-{n}-{}-{:016x}-{field}.txt",
        event.as_str(),
        fnv1a(text.as_bytes())
    ));
    let written = crate::private_fs::write(&path, text.as_bytes());
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), %err, "cannot spill large hook output");
        return text;
    }
    let mut end = SPILL_PREVIEW_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\nPreview (first 2KB):\n{}\n...\n</persisted-output>",
        crate::byte_size::format_size(text.len() as u64),
        path.display(),
        &text[..end]
    )
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
