//! Permission modes (spec §6.3), tool tiers, and which mode a session starts in.

use crate::origin::SourceKind;
use crate::permissions::config::PermissionSettings;

/// The session's permission mode. The string forms are Claude Code's (`permission_mode` in hook
/// input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionMode {
    /// Prompt for anything not allowed; read-only tools run. Also `manual`, and `auto` (rein
    /// has no approval classifier).
    Default,
    /// File edits inside the working directories run without a prompt.
    AcceptEdits,
    /// Planning only: no edit and no command runs.
    Plan,
    /// Everything runs except what a deny rule (or an ask rule / hook `ask`) stops.
    BypassPermissions,
    /// Never prompt: whatever would prompt is denied.
    DontAsk,
}

impl PermissionMode {
    /// The string hooks see in `permission_mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }

    /// Parses a mode name; the second value is a warning to show (for `auto`).
    pub fn parse(text: &str) -> Result<(PermissionMode, Option<String>), ModeError> {
        Ok(match text {
            "default" | "manual" => (PermissionMode::Default, None),
            "acceptEdits" => (PermissionMode::AcceptEdits, None),
            "plan" => (PermissionMode::Plan, None),
            "bypassPermissions" => (PermissionMode::BypassPermissions, None),
            "dontAsk" => (PermissionMode::DontAsk, None),
            "auto" => (
                PermissionMode::Default,
                Some(
                    "permission mode `auto` needs an approval classifier, which rein does not have; \
                     using `default` (prompts instead of automatic approvals)"
                        .to_string(),
                ),
            ),
            other => return Err(ModeError::Unknown(other.to_string())),
        })
    }

    /// Modes that grant more than `default` does.
    fn is_escalating(text: &str) -> bool {
        matches!(text, "bypassPermissions" | "acceptEdits" | "auto")
    }
}

/// A mode that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    #[error(
        "unknown permission mode `{0}` (expected default, acceptEdits, plan, bypassPermissions, dontAsk or auto)"
    )]
    Unknown(String),
    /// Claude Code's exact text.
    #[error(
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
    )]
    RootBypass,
}

/// How much a tool can change (spec §6.3): decides what happens when no rule speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolTier {
    /// Read, Glob, Grep (and Agent, whose subagent's calls are checked one by one): run in
    /// every mode.
    ReadOnly,
    /// Write, Edit, NotebookEdit, MultiEdit: prompt unless acceptEdits or allowed.
    Edit,
    /// Bash and every other (unknown, MCP, web) tool: prompt unless allowed.
    Command,
}

impl ToolTier {
    pub fn of(tool_name: &str) -> ToolTier {
        match tool_name {
            "Read" | "Glob" | "Grep" | "NotebookRead" | "LS" => ToolTier::ReadOnly,
            // The model's structured answer (`--json-schema`): it changes nothing.
            "StructuredOutput" => ToolTier::ReadOnly,
            // Starting a subagent needs no approval, as in Claude Code: every call the subagent
            // makes is checked on its own, under the same rules and mode.
            "Agent" | "Task" => ToolTier::ReadOnly,
            // Loading a deferred tool's definition, and a skill's instructions: text for the
            // model; each call it makes after is checked on its own.
            "ToolSearch" | "Skill" => ToolTier::ReadOnly,
            // They ask the person or switch the mode; they change no file and run nothing.
            "AskUserQuestion" | "EnterPlanMode" | "ExitPlanMode" => ToolTier::ReadOnly,
            "Write" | "Edit" | "NotebookEdit" | "MultiEdit" => ToolTier::Edit,
            _ => ToolTier::Command,
        }
    }
}

/// The session's starting mode:
/// 1. `--dangerously-skip-permissions` → bypassPermissions;
/// 2. else `--permission-mode`;
/// 3. else `permissions.defaultMode` of the highest-precedence file that sets it — except that an
///    escalating mode (bypassPermissions, acceptEdits, auto) set by the project tier
///    (`.claude/settings.json`, committed to the repository) is ignored with a warning;
/// 4. else `default`.
///
/// An unknown flag value is an error; an unknown settings value is a warning and `default`.
/// `permissions.disableBypassPermissionsMode: "disable"` turns a resolved bypassPermissions
/// into `default`, with a warning.
pub fn resolve_mode(
    dangerously_skip_permissions: bool,
    flag: Option<&str>,
    settings: &PermissionSettings,
) -> Result<(PermissionMode, Vec<String>), ModeError> {
    let (mode, mut warnings) =
        resolve_requested_mode(dangerously_skip_permissions, flag, settings)?;
    if mode == PermissionMode::BypassPermissions && settings.disable_bypass_mode {
        // Claude Code's reading: a session asking for the mode anyway runs in default.
        warnings.push(
            "bypassPermissions is disabled by permissions.disableBypassPermissionsMode; running in default mode"
                .to_string(),
        );
        return Ok((PermissionMode::Default, warnings));
    }
    Ok((mode, warnings))
}

fn resolve_requested_mode(
    dangerously_skip_permissions: bool,
    flag: Option<&str>,
    settings: &PermissionSettings,
) -> Result<(PermissionMode, Vec<String>), ModeError> {
    let mut warnings = Vec::new();
    if dangerously_skip_permissions {
        return Ok((PermissionMode::BypassPermissions, warnings));
    }
    if let Some(flag) = flag {
        let (mode, warning) = PermissionMode::parse(flag)?;
        warnings.extend(warning);
        return Ok((mode, warnings));
    }
    let Some((text, source)) = &settings.default_mode else {
        return Ok((PermissionMode::Default, warnings));
    };
    if *source == SourceKind::Project && PermissionMode::is_escalating(text) {
        warnings.push(format!(
            "ignoring permissions.defaultMode `{text}` from the project settings (.claude/settings.json): \
             a repository cannot grant itself more permissions; set it in your user or local settings"
        ));
        return Ok((PermissionMode::Default, warnings));
    }
    match PermissionMode::parse(text) {
        Ok((mode, warning)) => {
            warnings.extend(warning);
            Ok((mode, warnings))
        }
        Err(e) => {
            warnings.push(format!(
                "permissions.defaultMode ({} settings): {e}; using `default`",
                source.as_str()
            ));
            Ok((PermissionMode::Default, warnings))
        }
    }
}

/// Refuses bypassPermissions for root unless `IS_SANDBOX=1` says the process is sandboxed
/// (Claude Code's rule). The CLI calls it with `libc::geteuid()` and the env var.
pub fn check_bypass_allowed(euid: u32, is_sandbox: bool) -> Result<(), ModeError> {
    if euid == 0 && !is_sandbox {
        Err(ModeError::RootBypass)
    } else {
        Ok(())
    }
}
