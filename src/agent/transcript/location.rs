//! Where transcripts live (Claude Code's folder name for a project, its hash for long paths) and
//! the timestamps their lines carry.

use super::*;

/// `$REIN_HOME`, else `$HOME/.rein`, else `./.rein`.
pub fn rein_home() -> PathBuf {
    if let Some(home) = std::env::var_os("REIN_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".rein"),
        None => PathBuf::from(".rein"),
    }
}

/// The project directory as a single path component: every character outside `[A-Za-z0-9]`
/// becomes `-`; longer than 200 characters → the first 200, `-`, and the base-36 absolute
/// value of the Java-style string hash of the unencoded path (spec §8).
pub fn encode_cwd(path: &str) -> String {
    let encoded: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if encoded.chars().count() <= 200 {
        return encoded;
    }
    let head: String = encoded.chars().take(200).collect();
    format!("{head}-{}", to_base36(java_hash(path).unsigned_abs()))
}

/// `h = (h << 5) - h + code_unit`, wrapping at 32 bits, over UTF-16 code units (as JavaScript).
pub(super) fn java_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_shl(5)
            .wrapping_sub(h)
            .wrapping_add(i32::from(unit))
    })
}

pub(super) fn to_base36(mut n: u32) -> String {
    if n == 0 {
        return "0".to_string();
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// The transcript path of a session.
pub fn transcript_path(home: &Path, project_dir: &Path, session_id: &str) -> PathBuf {
    home.join("projects")
        .join(encode_cwd(&project_dir.to_string_lossy()))
        .join(format!("{session_id}.jsonl"))
}

/// Now as ISO-8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`).
pub fn timestamp_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_timestamp(since.as_millis() as i64)
}

/// Milliseconds since the Unix epoch as ISO-8601 UTC with milliseconds.
pub fn format_timestamp(epoch_ms: i64) -> String {
    let ms = epoch_ms.rem_euclid(1000);
    let secs = epoch_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 → (year, month, day).
pub(super) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
