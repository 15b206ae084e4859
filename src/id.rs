//! Random identifiers: UUID v4 strings for session ids, prompt ids and transcript line ids.
//!
//! Why not a crate: the bytes come from `/dev/urandom` and the format is 20 lines; if the device
//! cannot be read (a locked-down sandbox) a time-, pid- and counter-seeded SplitMix64 stream
//! keeps ids unique within and across processes, which is all rein needs them for.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh random UUID v4, lower-case hyphenated (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
pub fn uuid_v4() -> String {
    let mut bytes = [0u8; 16];
    if !read_urandom(&mut bytes) {
        fallback_bytes(&mut bytes);
    }
    format_uuid_v4(bytes)
}

/// A fresh random name of `len` characters from `[a-z0-9]` (Claude Code names a saved Bash
/// output `<9 such characters>.txt`).
pub fn short_id(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    if !read_urandom(&mut bytes) {
        let mut more = [0u8; 16];
        for chunk in bytes.chunks_mut(16) {
            fallback_bytes(&mut more);
            chunk.copy_from_slice(&more[..chunk.len()]);
        }
    }
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// Formats 16 bytes as a UUID v4 (setting the version and variant bits).
pub fn format_uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn read_urandom(buf: &mut [u8]) -> bool {
    match std::fs::File::open("/dev/urandom") {
        Ok(mut f) => f.read_exact(buf).is_ok(),
        Err(_) => false,
    }
}

fn fallback_bytes(buf: &mut [u8; 16]) {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut state = nanos
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for chunk in buf.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_has_v4_shape_and_differs() {
        let a = uuid_v4();
        let b = uuid_v4();
        assert_ne!(a, b);
        let re = regex::Regex::new(
            r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        )
        .unwrap();
        assert!(re.is_match(&a), "{a}");
    }

    #[test]
    fn fallback_sets_version_bits() {
        let mut bytes = [0u8; 16];
        fallback_bytes(&mut bytes);
        let id = format_uuid_v4(bytes);
        assert_eq!(&id[14..15], "4");
        assert_eq!(
            format_uuid_v4([0xff; 16]),
            "ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
    }
}
