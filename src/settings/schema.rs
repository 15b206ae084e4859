//! The typed shape of merged settings: hook handlers with where they came from, permissions,
//! and the diagnostics found while reading them.
//!
//! This is the contract between the settings loader (which fills it) and its consumers (the
//! dispatcher, the permission service, `rein hooks list`).

use std::path::PathBuf;

pub use crate::hooks::config::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, HttpHandler, Inactive,
    McpToolHandler, OnFailure, PromptHandler,
};
pub use crate::origin::{Location, SourceKind};
pub use crate::permissions::config::{PermissionSettings, RuleEntry};

/// How bad a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Something in the file does not apply (an entry, a hook, the whole file).
    Error,
    /// It applies, but probably not as meant.
    Warning,
    /// A Claude Code setting rein does not act on: listed by `rein hooks validate`, not
    /// printed when a session starts (a settings file shared with Claude Code holds many).
    Note,
}

/// One problem found in the settings, printed compiler-style: `file:line:col: error: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// Where in which file.
    pub location: Location,
    /// What is wrong and what rein does about it.
    pub message: String,
}

impl Diagnostic {
    /// An error at `line` of a file that is not a settings file (a command, agent or style).
    pub fn error_at(path: &std::path::Path, line: usize, message: String) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            location: Location {
                file: std::sync::Arc::from(path.display().to_string()),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                col: 1,
            },
            message,
        }
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(f, "{}: {}: {}", self.location, sev, self.message)
    }
}

/// A settings file that was looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    pub source: SourceKind,
    pub path: PathBuf,
    /// False when the file was absent or could not be parsed.
    pub applied: bool,
}

/// Everything the session needs from the settings files.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Every handler of every source in effective order (user → project → local → flag →
    /// policy; within a file, in file order), including inactive ones.
    pub handlers: Vec<ConfiguredHandler>,
    pub permissions: PermissionSettings,
    /// Merged `env` (higher tiers override lower).
    pub env: Vec<(String, String)>,
    pub disable_all_hooks: bool,
    pub allow_managed_hooks_only: bool,
    /// `allowedHttpHookUrls` / `httpHookAllowedEnvVars`, merged.
    pub http_policy: crate::hooks::http::HttpHookPolicy,
    /// `enabledMcpjsonServers` / `disabledMcpjsonServers` / `enableAllProjectMcpServers`.
    pub mcp_approval: crate::settings::parse::network::McpJsonApproval,
    /// `model` (highest tier that sets it wins).
    pub model: Option<String>,
    /// `effortLevel` (highest tier that sets it wins).
    pub effort_level: Option<String>,
    /// `transcriptDir`: where session transcripts go instead of `~/.rein/projects` (rein's
    /// own key; highest tier wins).
    pub transcript_dir: Option<String>,
    /// `outputStyle` (highest tier that sets it wins), with the file and line that set it.
    pub output_style: Option<(String, Location)>,
    /// `statusLine` (highest tier that sets it wins; a repository-controlled file's only in a
    /// trusted folder): the command, where it is written and from which tier.
    pub status_line: Option<(crate::settings::parse::StatusLineSpec, Location, SourceKind)>,
    pub files: Vec<LoadedFile>,
    /// Plugins loaded (`--plugin-dir`, `enabledPlugins`), in load order; their hooks are at
    /// the end of [`Settings::handlers`].
    pub plugins: Vec<crate::settings::plugins::Plugin>,
    /// Whether the project folder is trusted ([`crate::settings::trust`]): a repository's
    /// command may then allow tools through its `allowed-tools`.
    pub repo_trusted: bool,
    /// Claude's config folder the settings were read with (`~/.claude`, `CLAUDE_CONFIG_DIR`):
    /// user commands, skills and agents live there.
    pub claude_dir: std::path::PathBuf,
    pub diagnostics: Vec<Diagnostic>,
}

impl Settings {
    /// `--hooks-shadow`: every handler into shadow mode ([`crate::hooks::shadow`]) except the
    /// managed-policy ones, which an administrator set and a command-line flag must not weaken.
    pub fn shadow_hooks(&mut self) {
        for handler in &mut self.handlers {
            if handler.origin.source != SourceKind::Policy {
                handler.shadow = true;
            }
        }
    }

    /// Whether any diagnostic is an error (what `rein hooks validate` fails on).
    #[cfg(test)]
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}
