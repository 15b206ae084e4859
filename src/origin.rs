//! Where a setting came from: the source tier and the file position, and which configured MCP
//! server a tool comes from. A leaf every layer may use (settings fill it, hooks, permissions
//! and tools report it).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The settings tiers, lowest precedence first (spec §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    /// `~/.claude/settings.json`.
    User,
    /// `<project>/.claude/settings.json`.
    Project,
    /// `<project>/.claude/settings.local.json`.
    Local,
    /// `--settings` (a file or inline JSON; [`crate::EngineBuilder::settings`]).
    Flag,
    /// The managed settings an administrator installs.
    Policy,
}

impl SourceKind {
    /// The tier's name as rein prints it (`user`, `project`, `local`, `flag`, `policy`).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::User => "user",
            SourceKind::Project => "project",
            SourceKind::Local => "local",
            SourceKind::Flag => "flag",
            SourceKind::Policy => "policy",
        }
    }
}

/// A position in a settings file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Path of the file, or `<--settings>` for inline JSON given on the command line.
    pub file: Arc<str>,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub col: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// `mcp_server` of the tool events: which configured MCP server serves an `mcp__…` tool and
/// where it was configured (`project` = `.mcp.json`, `user` / `local` = `~/.claude.json`,
/// `dynamic` = `--mcp-config`), as Claude Code 2.1.328 sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerRef {
    /// The server's configured name.
    pub name: String,
    /// Where it was configured.
    pub source: String,
}

impl McpServerRef {
    /// For `rein hooks test` samples: the server named by an `mcp__<server>__<tool>` name.
    pub(crate) fn sample(tool: &str) -> Option<McpServerRef> {
        let rest = tool.strip_prefix("mcp__")?;
        let (server, _) = rest.split_once("__")?;
        Some(McpServerRef {
            name: server.to_string(),
            source: "project".to_string(),
        })
    }
}
