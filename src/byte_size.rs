//! How Claude Code writes a byte count in texts a model or a user reads (file sizes, spilled
//! hook output). A leaf: tools and hooks both show sizes.

/// A byte count as Claude Code shows file sizes: `512 bytes`, `1.5KB`, `256KB`, `3.1MB`, `1GB`
/// (one decimal, rounded half up, `.0` dropped).
pub fn format_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    let (unit, suffix) = if bytes < KB {
        return format!("{bytes} bytes");
    } else if bytes < KB * KB {
        (KB, "KB")
    } else if bytes < KB * KB * KB {
        (KB * KB, "MB")
    } else {
        (KB * KB * KB, "GB")
    };
    let tenths = (u128::from(bytes) * 10 + u128::from(unit) / 2) / u128::from(unit);
    let (whole, frac) = (tenths / 10, tenths % 10);
    if frac == 0 {
        format!("{whole}{suffix}")
    } else {
        format!("{whole}.{frac}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::format_size;

    #[test]
    fn sizes_read_as_claude_code_shows_them() {
        assert_eq!(format_size(512), "512 bytes");
        assert_eq!(format_size(1024), "1KB");
        assert_eq!(format_size(1280), "1.3KB");
        assert_eq!(format_size(262_144), "256KB");
        assert_eq!(format_size(300 * 1024), "300KB");
        assert_eq!(format_size(3_200_000), "3.1MB");
        assert_eq!(format_size(10 * 1024 * 1024), "10MB");
        assert_eq!(format_size(1 << 30), "1GB");
    }
}
