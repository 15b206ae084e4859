//! Permission rules, modes and the fail-closed approval step (spec §6).
//!
//! - [`rule`]: one rule (`Bash(git *)`, `Read(./.env)`, `mcp__srv`) and whether it covers a call;
//! - [`bash`]: decomposing a command line into the simple commands rules are matched against;
//! - [`path`]: gitignore-style file patterns with Claude Code's anchors;
//! - [`mode`]: permission modes, tool tiers, the starting mode;
//! - [`policy`]: the decision for one call ([`policy::PermissionPolicy::evaluate`]);
//! - [`prompt`]: asking a person on the terminal;
//! - [`read_only`]: the Bash lines that only read, which run without asking in default mode.

pub mod bash;
pub mod config;
pub mod mode;
pub mod path;
pub mod policy;
pub mod prompt;
pub mod read_only;
pub mod rule;

/// The text a headless run gives the model when a call needs approval nobody can give.
pub fn headless_denial_text(tool: &str) -> String {
    format!("Claude requested permissions to use {tool}, but you haven't granted it yet.")
}
