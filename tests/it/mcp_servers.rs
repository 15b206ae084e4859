//! Real MCP servers from the npm registry for the MCP tests, installed once per target
//! directory: `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem`
//! at pinned versions, under `<CARGO_TARGET_TMPDIR>/mcp-npm-<versions>/`. A finished install
//! leaves a marker file; a broken or half-finished one is removed and redone (three tries, for
//! a flaky registry). Needs `node` and `npm` on PATH (`.ci/run` installs them when missing).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The pinned packages.
pub const PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];

/// `<prefix>/node_modules/.bin`, with `mcp-server-everything` and `mcp-server-filesystem`.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(install)
}

pub fn everything() -> String {
    bin_dir()
        .join("mcp-server-everything")
        .display()
        .to_string()
}

pub fn filesystem() -> String {
    bin_dir()
        .join("mcp-server-filesystem")
        .display()
        .to_string()
}

fn install() -> PathBuf {
    let tag: String = PACKAGES
        .iter()
        .map(|p| p.rsplit('@').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("-");
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-npm-{tag}"));
    let marker = prefix.join(".installed");
    let bin = prefix.join("node_modules/.bin");
    std::fs::create_dir_all(&prefix).unwrap();
    // One installer at a time across test processes.
    let lock = std::fs::File::create(prefix.join(".lock")).unwrap();
    // SAFETY: flock(2) on a file descriptor this function owns for its whole run.
    unsafe {
        libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX);
    }
    if marker.exists() && bin.join("mcp-server-everything").exists() {
        return bin;
    }
    for tool in ["node", "npm"] {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "`{tool}` is not on PATH: the MCP tests run real servers from npm (install nodejs and npm; .ci/run does)"
        );
    }
    let mut last = String::new();
    for _attempt in 0..3 {
        let _ = std::fs::remove_dir_all(prefix.join("node_modules"));
        let out = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&prefix)
            .args(PACKAGES)
            .output()
            .expect("run npm");
        if out.status.success() && bin.join("mcp-server-everything").exists() {
            std::fs::write(&marker, PACKAGES.join("\n")).unwrap();
            return bin;
        }
        last = String::from_utf8_lossy(&out.stderr).into_owned();
    }
    panic!("npm install of {PACKAGES:?} failed three times:\n{last}");
}
