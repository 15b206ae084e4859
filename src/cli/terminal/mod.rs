//! The interactive terminal: prompt, slash commands, and what the user sees.

use std::time::Duration;

/// `5s`, `3m`, `2h`, `4d`: how long ago, for lists.
pub fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s ago"),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}
