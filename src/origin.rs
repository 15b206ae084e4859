//! Where a setting came from: the source tier and the file position. A leaf every layer may
//! use (settings fill it, hooks and permissions report it).

use std::sync::Arc;

/// The settings tiers, lowest precedence first (spec §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    User,
    Project,
    Local,
    Flag,
    Policy,
}

impl SourceKind {
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
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}
