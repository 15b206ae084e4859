//! Where a setting came from: the source tier and the file position. A leaf every layer may
//! use (settings fill it, hooks and permissions report it).

use std::sync::Arc;

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
