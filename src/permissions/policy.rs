//! The approval decision for one tool call (spec §6.4 steps 2–4): PreToolUse's merged
//! permission decision, the deny/ask/allow rules, the mode and the tool's tier, combined into a
//! [`Verdict`]. Pure logic: no I/O. On [`Verdict::Ask`] the caller fires PermissionRequest hooks
//! and, without a hook answer, asks a [`super::prompt::Prompter`] on a terminal or refuses with
//! [`headless_denial`].
//!
//! Fail closed throughout:
//! - a Bash line is allowed by rules only when *every* simple command in it is allowed and the
//!   whole line could be checked ([`super::bash::Unchecked`] otherwise);
//! - a deny rule that cannot be parsed denies every call of the tool it names (every call of
//!   every tool when not even the tool name can be read); an unparsable ask rule likewise asks;
//!   an unparsable allow rule is ignored. Each one is reported as a warning;
//! - a panic inside the decision is caught and becomes a denial.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::permissions::config::{PermissionSettings, RuleEntry};
use crate::permissions::mode::{PermissionMode, ToolTier};
use crate::permissions::path::{normalize, resolve_links};
use crate::permissions::rule::{
    Rule, RuleContext, RuleError, RulePurpose, canonical_tool_name, input_path,
};
use crate::permissions::{bash, read_only};

/// What PreToolUse hooks answered, as the permission step reads it (the pipeline translates
/// the hooks' outcome into this; permissions know no hook types).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// Skip the prompt; deny and ask rules still apply.
    Allow,
    /// Ask a person, with this reason.
    Ask {
        /// Shown to the person.
        reason: Option<String>,
    },
    /// Do not run the call.
    Defer {
        /// The hook's reason.
        reason: Option<String>,
    },
    /// Refuse the call with this model-facing text.
    Deny {
        /// The model-facing text.
        message: String,
    },
}

/// What to do with a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Do not run it; `message` is the model-facing error tool_result.
    Deny { message: String },
    /// A person (or a PermissionRequest hook) must decide; `reason` says why it is asked.
    Ask { reason: String, cause: AskCause },
    /// PreToolUse said `defer`: stop the session at this call (the caller handles it).
    Defer { reason: Option<String> },
}

/// Why a call is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskCause {
    /// A PreToolUse hook answered `ask`; the reason is its `permissionDecisionReason`.
    Hook,
    /// An ask rule matched (holds the rule text).
    AskRule(String),
    /// The Bash line could not be fully checked, so allow rules could not vouch for it.
    Unchecked,
    /// No rule allowed it and its tier needs approval in this mode.
    Tier,
}

/// The directories a policy resolves paths against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyPaths {
    pub cwd: PathBuf,
    pub project_dir: PathBuf,
    pub home: PathBuf,
    /// `permissions.additionalDirectories` and `--add-dir`, absolute: with the cwd and the
    /// project dir, the working directories acceptEdits may edit in.
    pub additional_dirs: Vec<PathBuf>,
    /// Directories read-only tools may read without a prompt besides the working directories
    /// (rein's own session files, e.g. a Bash output saved to `tool-results`).
    pub readable_dirs: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
struct Entry {
    rule: Rule,
    text: String,
}

/// A rule that failed to parse, kept so it can fail closed.
#[derive(Debug, Clone)]
struct Broken {
    text: String,
    origin: String,
    /// The tool it names, as a whole-tool rule; `None`: it covers every tool.
    tool: Option<Rule>,
}

impl Broken {
    fn covers(&self, tool_name: &str, purpose: RulePurpose) -> bool {
        self.tool
            .as_ref()
            .is_none_or(|r| r.covers_tool(tool_name, purpose))
    }
}

/// The permission state of a session: rules, mode, remembered approvals.
#[derive(Debug, Clone)]
pub struct PermissionPolicy {
    mode: PermissionMode,
    allow: Vec<Entry>,
    ask: Vec<Entry>,
    deny: Vec<Entry>,
    broken_ask: Vec<Broken>,
    broken_deny: Vec<Broken>,
    /// Exact Bash lines approved "always for this session".
    session_commands: Vec<String>,
    paths: PolicyPaths,
    /// Whether a permission update may switch to bypassPermissions: only when the session
    /// started in it and `permissions.disableBypassPermissionsMode` is not set (Claude Code's
    /// rule).
    bypass_available: bool,
}

/// Commands acceptEdits runs without a prompt when they stay inside the working directories.
const FS_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp"];

const FILE_DENIED: &str = "File is in a directory that is denied by your permission settings.";

impl PermissionPolicy {
    /// Builds the policy from merged settings plus `--allowedTools` / `--disallowedTools`
    /// (each string may hold several rules separated by commas or spaces). Returns the warnings
    /// to show: every rule that could not be parsed, with where it came from and what rein does
    /// instead.
    pub fn from_settings(
        settings: &PermissionSettings,
        mode: PermissionMode,
        cli_allow: &[String],
        cli_deny: &[String],
        paths: PolicyPaths,
    ) -> (PermissionPolicy, Vec<String>) {
        let mut warnings = Vec::new();
        let mut policy = PermissionPolicy {
            mode,
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            broken_ask: Vec::new(),
            broken_deny: Vec::new(),
            session_commands: Vec::new(),
            paths,
            bypass_available: mode == PermissionMode::BypassPermissions
                && !settings.disable_bypass_mode,
        };
        // Rules from files were compiled when they were loaded; flag rules are compiled here.
        type Compiled = Result<Rule, crate::permissions::rule::RuleError>;
        let from_file = |entries: &[RuleEntry]| -> Vec<(String, String, Compiled)> {
            entries
                .iter()
                .map(|e| (e.text.clone(), e.location.to_string(), e.compiled.clone()))
                .collect()
        };
        let from_cli = |lists: &[String], flag: &str| -> Vec<(String, String, Compiled)> {
            lists
                .iter()
                .flat_map(|l| split_tool_list(l))
                .map(|t| {
                    let compiled = Rule::parse(&t);
                    (t, flag.to_string(), compiled)
                })
                .collect()
        };
        let mut allow = from_file(&settings.allow);
        allow.extend(from_cli(cli_allow, "--allowedTools"));
        let ask = from_file(&settings.ask);
        let mut deny = from_file(&settings.deny);
        deny.extend(from_cli(cli_deny, "--disallowedTools"));

        for (list, texts) in [
            (RulePurpose::Allow, allow),
            (RulePurpose::Ask, ask),
            (RulePurpose::Deny, deny),
        ] {
            for (text, origin, compiled) in texts {
                match compiled {
                    Ok(rule) => {
                        let entry = Entry { rule, text };
                        match list {
                            RulePurpose::Allow => policy.allow.push(entry),
                            RulePurpose::Ask => policy.ask.push(entry),
                            RulePurpose::Deny | RulePurpose::Condition => policy.deny.push(entry),
                        }
                    }
                    Err(e) => {
                        let broken = Broken {
                            tool: broken_rule_tool(&text),
                            text,
                            origin: origin.clone(),
                        };
                        warnings.push(broken_warning(&origin, &e, list, &broken));
                        match list {
                            RulePurpose::Allow => {}
                            RulePurpose::Ask => policy.broken_ask.push(broken),
                            RulePurpose::Deny | RulePurpose::Condition => {
                                policy.broken_deny.push(broken)
                            }
                        }
                    }
                }
            }
        }
        for dir in &settings.additional_directories {
            let expanded = match dir.strip_prefix("~/") {
                Some(rest) => policy.paths.home.join(rest),
                None => PathBuf::from(dir),
            };
            let abs = normalize(&expanded, &policy.paths.project_dir);
            if !policy.paths.additional_dirs.contains(&abs) {
                policy.paths.additional_dirs.push(abs);
            }
        }
        (policy, warnings)
    }

    #[cfg(test)]
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Switches the mode (e.g. after the user leaves plan mode).
    #[expect(dead_code, reason = "nothing switches the mode during a session yet")]
    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    /// Follows the session's working directory (relative rules and paths resolve against it).
    pub fn set_cwd(&mut self, cwd: PathBuf) {
        self.paths.cwd = cwd;
    }

    #[expect(dead_code, reason = "nothing reads the paths back yet")]
    pub fn paths(&self) -> &PolicyPaths {
        &self.paths
    }

    fn ctx(&self) -> RuleContext<'_> {
        RuleContext {
            cwd: &self.paths.cwd,
            project_dir: &self.paths.project_dir,
            home: &self.paths.home,
        }
    }

    /// Decides one call, on the input as PreToolUse left it. `hook` is PreToolUse's merged
    /// permission decision, if any hook gave one. In order, first match wins:
    /// 1. hook `deny` → Deny (the hook's text); hook `defer` → Defer;
    /// 2. a deny rule (or an unparsable one naming the tool) → Deny, in every mode;
    /// 3. plan mode and the tool is not read-only → Deny;
    /// 4. an ask rule → Ask, even when a hook said `allow` and in bypassPermissions;
    /// 5. hook `ask` → Ask, even when a rule allows;
    /// 6. hook `allow` → Allow;
    /// 7. allow rules (Bash: every simple command allowed, the line fully checked, output
    ///    redirections allowed as edits) or a remembered session approval → Allow;
    /// 8. the mode and the tier: bypassPermissions → Allow; read-only tools → Allow; edits in
    ///    acceptEdits inside the working directories → Allow; everything else → Ask.
    ///
    /// In dontAsk mode every Ask of steps 4–8 becomes a Deny.
    pub fn evaluate(&self, tool_name: &str, input: &Value, hook: Option<&HookAnswer>) -> Verdict {
        match catch_unwind(AssertUnwindSafe(|| {
            self.evaluate_inner(tool_name, input, hook)
        })) {
            Ok(v) => v,
            Err(_) => Verdict::Deny {
                message: format!(
                    "Permission to use {tool_name} has been denied: rein's permission check failed internally."
                ),
            },
        }
    }

    fn evaluate_inner(&self, tool_name: &str, input: &Value, hook: Option<&HookAnswer>) -> Verdict {
        let tool = canonical_tool_name(tool_name);
        match hook {
            Some(HookAnswer::Deny { message: text }) => {
                return Verdict::Deny {
                    message: text.clone(),
                };
            }
            Some(HookAnswer::Defer { reason }) => {
                return Verdict::Defer {
                    reason: reason.clone(),
                };
            }
            Some(HookAnswer::Allow | HookAnswer::Ask { .. }) | None => {}
        }
        if let Some(message) = self.check_deny(tool, input) {
            return Verdict::Deny { message };
        }
        let tier = ToolTier::of(tool);
        if self.mode == PermissionMode::Plan {
            match tier {
                ToolTier::ReadOnly => {}
                ToolTier::Edit | ToolTier::Command => {
                    return Verdict::Deny {
                        message: format!(
                            "Permission to use {tool} has been denied because rein is in plan mode: \
                             nothing may be changed or run until the plan is approved. \
                             Present the plan instead."
                        ),
                    };
                }
            }
        }
        if let Some(rule) = self.ask_rule(tool, input) {
            return self.ask(
                tool,
                format!("The permission rule `{rule}` requires approval for this call"),
                AskCause::AskRule(rule),
            );
        }
        match hook {
            Some(HookAnswer::Ask { reason }) => {
                let reason = reason
                    .clone()
                    .unwrap_or_else(|| "A PreToolUse hook asked for approval".to_string());
                return self.ask(tool, reason, AskCause::Hook);
            }
            Some(HookAnswer::Allow) => return Verdict::Allow,
            Some(HookAnswer::Deny { .. } | HookAnswer::Defer { .. }) | None => {}
        }
        let bypass = self.mode == PermissionMode::BypassPermissions;
        match tier {
            ToolTier::ReadOnly => {
                if bypass || self.allowed_by_rule(tool, input) {
                    return Verdict::Allow;
                }
                match input_path(tool, input, &self.paths.cwd) {
                    Some(p) if !self.in_working_dirs(&p) && !self.in_readable_dirs(&p) => self.ask(
                        tool,
                        format!(
                            "Reading {}, outside the working directories, requires approval",
                            p.display()
                        ),
                        AskCause::Tier,
                    ),
                    _ => Verdict::Allow,
                }
            }
            ToolTier::Edit => {
                if self.allowed_by_rule(tool, input) || bypass {
                    return Verdict::Allow;
                }
                let path = input_path(tool, input, &self.paths.cwd);
                match path {
                    Some(p) if self.in_working_dirs(&p) => {
                        if let Some(place) = self.protected_place(&p) {
                            self.ask(
                                tool,
                                format!(
                                    "{} is in {place}, which is always asked about",
                                    p.display()
                                ),
                                AskCause::Tier,
                            )
                        } else if self.mode == PermissionMode::AcceptEdits {
                            Verdict::Allow
                        } else {
                            self.ask(
                                tool,
                                format!("Editing {} requires approval", p.display()),
                                AskCause::Tier,
                            )
                        }
                    }
                    Some(p) => self.ask(
                        tool,
                        format!("{} is outside the working directories", p.display()),
                        AskCause::Tier,
                    ),
                    None => self.ask(
                        tool,
                        format!("Using {tool} requires approval"),
                        AskCause::Tier,
                    ),
                }
            }
            ToolTier::Command if tool == "Bash" => {
                let command = input
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if self.mode == PermissionMode::AcceptEdits
                    && self.is_working_dir_fs_command(command)
                {
                    return Verdict::Allow;
                }
                match self.bash_allowance(command) {
                    BashAllowance::Allowed => Verdict::Allow,
                    _ if bypass => Verdict::Allow,
                    // Deny and ask rules and hooks were consulted above: a reading line only
                    // skips the question nobody configured (Claude Code 2.1.328's behaviour).
                    BashAllowance::NotCovered
                        if self.mode != PermissionMode::DontAsk
                            && read_only::is_read_only(
                                &bash::parse(command),
                                &self.paths.cwd,
                                |p| {
                                    self.in_working_dirs(p)
                                        && self
                                            .check_deny("Read", &json!({"file_path": p}))
                                            .is_none()
                                },
                            ) =>
                    {
                        Verdict::Allow
                    }
                    BashAllowance::Unchecked(reason) => self.ask(tool, reason, AskCause::Unchecked),
                    BashAllowance::Writes(path) => self.ask(
                        tool,
                        format!(
                            "This command writes to {}, which needs approval",
                            path.display()
                        ),
                        AskCause::Tier,
                    ),
                    BashAllowance::NotCovered => self.ask(
                        tool,
                        "Running this command requires approval".to_string(),
                        AskCause::Tier,
                    ),
                }
            }
            ToolTier::Command => {
                if self.allowed_by_rule(tool, input) || bypass {
                    Verdict::Allow
                } else {
                    self.ask(
                        tool,
                        format!("Using {tool} requires approval"),
                        AskCause::Tier,
                    )
                }
            }
        }
    }

    /// Ask, or in dontAsk mode the denial that replaces the prompt.
    fn ask(&self, tool: &str, reason: String, cause: AskCause) -> Verdict {
        if self.mode == PermissionMode::DontAsk {
            return Verdict::Deny {
                message: format!(
                    "Permission to use {tool} has been denied because rein is in dontAsk mode, which never prompts: {reason}."
                ),
            };
        }
        Verdict::Ask { reason, cause }
    }

    /// The deny-rule check alone, for an input rewritten after the decision (PermissionRequest
    /// `updatedInput`, spec §6.4 step 4): the model-facing denial, if a deny rule covers it.
    pub fn check_deny(&self, tool_name: &str, input: &Value) -> Option<String> {
        match catch_unwind(AssertUnwindSafe(|| self.check_deny_inner(tool_name, input))) {
            Ok(v) => v,
            Err(_) => Some(format!(
                "Permission to use {tool_name} has been denied: rein's permission check failed internally."
            )),
        }
    }

    fn check_deny_inner(&self, tool_name: &str, input: &Value) -> Option<String> {
        let tool = canonical_tool_name(tool_name);
        if let Some(b) = self
            .broken_deny
            .iter()
            .find(|b| b.covers(tool, RulePurpose::Deny))
        {
            return Some(format!(
                "Permission to use {tool} has been denied: the deny rule `{}` ({}) could not be parsed, \
                 so rein refuses every call it might cover.",
                b.text, b.origin
            ));
        }
        let ctx = self.ctx();
        let bash_line = bash_line(tool, input);
        for e in &self.deny {
            let hit = match &bash_line {
                Some((command, parsed)) => {
                    e.rule
                        .matches_bash_parsed(parsed, command, RulePurpose::Deny)
                }
                None => e.rule.matches(tool, input, &ctx, RulePurpose::Deny),
            };
            if hit {
                if let Some((command, parsed)) = &bash_line
                    && let Some(open) = e.rule.hidden_bash_match(parsed, command)
                {
                    return Some(format!(
                        "Permission to use Bash with command {command} has been denied: {}, and \
                         the deny rule `{}` might match what it runs.",
                        open.why.reason(),
                        e.text
                    ));
                }
                return Some(deny_message(tool, input, &e.rule));
            }
        }
        if let Some((_, parsed)) = &bash_line {
            // File rules mean the file, whichever tool touches it: Read deny rules cover the
            // files a command names or reads from, Edit deny rules the ones it writes.
            let targets = bash_file_targets(
                parsed,
                &[&self.paths.cwd, &self.paths.project_dir],
                &self.paths.home,
            );
            for (paths, as_tool) in [(&targets.writes, "Write"), (&targets.reads, "Read")] {
                for target in paths {
                    if self.path_denied(as_tool, target) {
                        return Some(FILE_DENIED.to_string());
                    }
                }
            }
        } else if let Some(real) = self.resolved_input(tool, input) {
            // The same call with its symlinks resolved: a link to a denied file is denied.
            let rctx_paths = self.resolved_dirs();
            let rctx = RuleContext {
                cwd: &rctx_paths.0,
                project_dir: &rctx_paths.1,
                home: &rctx_paths.2,
            };
            if let Some(e) = self.deny.iter().find(|e| {
                e.rule.matches(tool, &real, &ctx, RulePurpose::Deny)
                    || e.rule.matches(tool, &real, &rctx, RulePurpose::Deny)
            }) {
                return Some(deny_message(tool, &real, &e.rule));
            }
        }
        None
    }

    /// Whether a path deny rule covers `path` for `tool` (`Read` or `Write`), as spelled or
    /// with its symlinks resolved.
    fn path_denied(&self, tool: &str, path: &Path) -> bool {
        if !self.deny.iter().any(|e| e.rule.is_path_rule()) {
            return false;
        }
        let ctx = self.ctx();
        let spelled = json!({ "file_path": path.to_string_lossy() });
        let real = resolve_links(path);
        let rdirs = self.resolved_dirs();
        let rctx = RuleContext {
            cwd: &rdirs.0,
            project_dir: &rdirs.1,
            home: &rdirs.2,
        };
        let resolved = json!({ "file_path": real.to_string_lossy() });
        self.deny.iter().any(|e| {
            e.rule.is_path_rule()
                && (e.rule.matches(tool, &spelled, &ctx, RulePurpose::Deny)
                    || (real != path
                        && (e.rule.matches(tool, &resolved, &ctx, RulePurpose::Deny)
                            || e.rule.matches(tool, &resolved, &rctx, RulePurpose::Deny))))
        })
    }

    /// The cwd, project dir and home with their symlinks resolved.
    fn resolved_dirs(&self) -> (PathBuf, PathBuf, PathBuf) {
        (
            resolve_links(&self.paths.cwd),
            resolve_links(&self.paths.project_dir),
            resolve_links(&self.paths.home),
        )
    }

    /// For a file tool: its input with the path's symlinks resolved, when that changes it.
    fn resolved_input(&self, tool: &str, input: &Value) -> Option<Value> {
        let field = match tool {
            "Read" | "Edit" | "Write" | "MultiEdit" => "file_path",
            "NotebookEdit" | "NotebookRead" => "notebook_path",
            "Grep" | "Glob" | "LS" => "path",
            _ => return None,
        };
        let spelled = match input.get(field).and_then(Value::as_str) {
            Some(p) if !p.is_empty() => normalize(Path::new(p), &self.paths.cwd),
            _ if field == "path" => self.paths.cwd.clone(),
            _ => return None,
        };
        let real = resolve_links(&spelled);
        if real == spelled {
            return None;
        }
        let mut out = input.clone();
        if let Some(map) = out.as_object_mut() {
            map.insert(field.to_string(), json!(real.to_string_lossy()));
        }
        Some(out)
    }

    /// Whether `path` is a file Read deny rules cover (Grep and Glob leave such files out of
    /// what they return).
    pub fn read_denied(&self, path: &Path) -> bool {
        catch_unwind(AssertUnwindSafe(|| self.path_denied("Read", path))).unwrap_or(true)
    }

    /// The ask rule covering this call, if any (for an input a hook rewrote after the decision).
    pub fn check_ask(&self, tool_name: &str, input: &Value) -> Option<String> {
        let tool = canonical_tool_name(tool_name);
        catch_unwind(AssertUnwindSafe(|| self.ask_rule(tool, input)))
            .unwrap_or_else(|_| Some("(rein's permission check failed internally)".to_string()))
    }

    fn ask_rule(&self, tool: &str, input: &Value) -> Option<String> {
        if let Some(b) = self
            .broken_ask
            .iter()
            .find(|b| b.covers(tool, RulePurpose::Ask))
        {
            return Some(b.text.clone());
        }
        let ctx = self.ctx();
        let bash_line = bash_line(tool, input);
        let real = self.resolved_input(tool, input);
        let rdirs = real.as_ref().map(|_| self.resolved_dirs());
        self.ask
            .iter()
            .find(|e| match &bash_line {
                Some((command, parsed)) => {
                    e.rule
                        .matches_bash_parsed(parsed, command, RulePurpose::Ask)
                }
                None => {
                    e.rule.matches(tool, input, &ctx, RulePurpose::Ask)
                        || real.as_ref().zip(rdirs.as_ref()).is_some_and(|(r, d)| {
                            let rctx = RuleContext {
                                cwd: &d.0,
                                project_dir: &d.1,
                                home: &d.2,
                            };
                            e.rule.matches(tool, r, &ctx, RulePurpose::Ask)
                                || e.rule.matches(tool, r, &rctx, RulePurpose::Ask)
                        })
                }
            })
            .map(|e| e.text.clone())
    }

    /// Allow rules vouch for a file by where it really is: with its symlinks resolved, the
    /// path must match (against the dirs as given or resolved).
    fn allowed_by_rule(&self, tool: &str, input: &Value) -> bool {
        let ctx = self.ctx();
        match self.resolved_input(tool, input) {
            None => self
                .allow
                .iter()
                .any(|e| e.rule.matches(tool, input, &ctx, RulePurpose::Allow)),
            Some(real) => {
                let rdirs = self.resolved_dirs();
                let rctx = RuleContext {
                    cwd: &rdirs.0,
                    project_dir: &rdirs.1,
                    home: &rdirs.2,
                };
                self.allow.iter().any(|e| {
                    if e.rule.is_path_rule() {
                        e.rule.matches(tool, &real, &ctx, RulePurpose::Allow)
                            || e.rule.matches(tool, &real, &rctx, RulePurpose::Allow)
                    } else {
                        e.rule.matches(tool, input, &ctx, RulePurpose::Allow)
                    }
                })
            }
        }
    }

    fn bash_allowance(&self, command: &str) -> BashAllowance {
        let whole_tool = self
            .allow
            .iter()
            .any(|e| e.rule.tool == "Bash" && e.rule.content.is_none());
        if whole_tool || self.session_commands.iter().any(|c| c == command) {
            return BashAllowance::Allowed;
        }
        let parsed = bash::parse(command);
        if let Some(u) = &parsed.unchecked {
            return BashAllowance::Unchecked(u.reason());
        }
        if parsed.parts.is_empty() {
            return BashAllowance::NotCovered;
        }
        let patterns: Vec<_> = self
            .allow
            .iter()
            .filter_map(|e| e.rule.bash_pattern())
            .collect();
        let covered = parsed
            .parts
            .iter()
            .all(|part| patterns.iter().any(|p| p.allows_part(part)));
        if !covered {
            return BashAllowance::NotCovered;
        }
        for part in &parsed.parts {
            for w in &part.writes {
                let target = normalize(Path::new(w), &self.paths.cwd);
                let as_write = json!({ "file_path": target.to_string_lossy() });
                let edit_ok = self.allowed_by_rule("Write", &as_write)
                    || (self.mode == PermissionMode::AcceptEdits
                        && self.in_working_dirs(&target)
                        && self.protected_place(&target).is_none());
                if !edit_ok {
                    return BashAllowance::Writes(target);
                }
            }
        }
        BashAllowance::Allowed
    }

    /// acceptEdits' "simple filesystem Bash": every simple command is one of
    /// [`FS_COMMANDS`], fully checked, without expansions, and every operand (and redirection
    /// target) lies inside the working directories. `~` counts as the home directory.
    fn is_working_dir_fs_command(&self, command: &str) -> bool {
        let parsed = bash::parse(command);
        if parsed.unchecked.is_some() || parsed.parts.is_empty() {
            return false;
        }
        parsed.parts.iter().all(|part| {
            let Some((name, args)) = part.argv.split_first() else {
                return false;
            };
            let inside = |arg: &str| {
                let expanded = match arg.strip_prefix('~') {
                    Some("") => self.paths.home.clone(),
                    Some(rest) if rest.starts_with('/') => self.paths.home.join(&rest[1..]),
                    Some(_) => return false,
                    None => PathBuf::from(arg),
                };
                let target = normalize(&expanded, &self.paths.cwd);
                // Strictly inside: `rm -rf .` on a working directory itself still asks.
                self.in_working_dirs(&target)
                    && !self.is_working_dir_root(&target)
                    && self.protected_place(&target).is_none()
            };
            FS_COMMANDS.contains(&name.as_str())
                && !part.argv_expanded
                && part.deny_views.len() == 1
                && args
                    .iter()
                    .filter(|a| !a.starts_with('-'))
                    .all(|a| inside(a))
                && part.writes.iter().all(|w| inside(w))
        })
    }

    fn is_working_dir_root(&self, path: &Path) -> bool {
        let p = &self.paths;
        std::iter::once(&p.cwd)
            .chain(std::iter::once(&p.project_dir))
            .chain(p.additional_dirs.iter())
            .any(|d| path == normalize(d, Path::new("/")))
    }

    /// [`protected_place`] judged on the part of `path` below the working directory holding it
    /// (a project that itself lives under some `.claude` directory is not all protected).
    fn protected_place(&self, path: &Path) -> Option<&'static str> {
        let p = &self.paths;
        let below = |path: &Path| -> PathBuf {
            std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
                .filter_map(|d| path.strip_prefix(normalize(d, Path::new("/"))).ok())
                .min_by_key(|rel| rel.components().count())
                .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
        };
        let real = resolve_links(path);
        protected_place(&below(path)).or_else(|| {
            let rdirs: Vec<PathBuf> = std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
                .map(|d| resolve_links(d))
                .collect();
            let rel = rdirs
                .iter()
                .filter_map(|d| real.strip_prefix(d).ok())
                .min_by_key(|rel| rel.components().count())
                .map_or_else(|| below(&real), Path::to_path_buf);
            protected_place(&rel)
        })
    }

    /// Whether `path` is inside a working directory, as spelled and with its symlinks resolved
    /// (a link in the project pointing at `~/.ssh` is not inside).
    fn in_working_dirs(&self, path: &Path) -> bool {
        let p = &self.paths;
        let dirs = || {
            std::iter::once(&p.cwd)
                .chain(std::iter::once(&p.project_dir))
                .chain(p.additional_dirs.iter())
        };
        if !dirs().any(|d| path.starts_with(normalize(d, Path::new("/")))) {
            return false;
        }
        let real = resolve_links(path);
        real == path
            || dirs().any(|d| {
                real.starts_with(normalize(d, Path::new("/"))) || real.starts_with(resolve_links(d))
            })
    }

    fn in_readable_dirs(&self, path: &Path) -> bool {
        let real = resolve_links(path);
        self.paths.readable_dirs.iter().any(|d| {
            path.starts_with(d) && (real.starts_with(d) || real.starts_with(resolve_links(d)))
        })
    }

    /// Remembers "always allow for this session" for a call the user approved: a Bash line
    /// exactly as approved (and each of its simple commands), the exact file for file tools,
    /// the whole tool otherwise.
    pub fn remember_session_allow(&mut self, tool_name: &str, input: &Value) {
        let tool = canonical_tool_name(tool_name).to_string();
        if tool == "Bash" {
            let Some(command) = input.get("command").and_then(Value::as_str) else {
                return;
            };
            self.session_commands.push(command.to_string());
            for part in bash::parse(command).parts {
                if let Some(view) = part.allow_views.first()
                    && let Some(rule) = Rule::exact_bash(view)
                {
                    self.allow.push(Entry {
                        rule,
                        text: format!("Bash({view})"),
                    });
                }
            }
            return;
        }
        let rule_text = match (
            ToolTier::of(&tool),
            input_path(&tool, input, &self.paths.cwd),
        ) {
            (ToolTier::Edit, Some(path)) => {
                format!("Edit(/{})", escape_glob(&path.to_string_lossy()))
            }
            (ToolTier::ReadOnly, Some(path)) => {
                format!("Read(/{})", escape_glob(&path.to_string_lossy()))
            }
            _ => tool.clone(),
        };
        if let Ok(rule) = Rule::parse(&rule_text) {
            self.allow.push(Entry {
                rule,
                text: rule_text,
            });
        }
    }
}

impl PermissionPolicy {
    /// Applies a hook's `updatedPermissions` (PermissionRequest `allow`) to this session only,
    /// refusing what would escalate past the user's own settings: removing or replacing deny or
    /// ask rules, and `setMode` to bypassPermissions when `disableBypassPermissionsMode` is set.
    /// Allow rules a hook adds still come after deny and ask rules. Returns one message per
    /// update not applied.
    pub fn apply_hook_updates(&mut self, updates: &[Value]) -> Vec<String> {
        let mut refused = Vec::new();
        for update in updates {
            let kind = update.get("type").and_then(Value::as_str).unwrap_or("");
            let behavior = update.get("behavior").and_then(Value::as_str).unwrap_or("");
            let why = if matches!(kind, "removeRules" | "replaceRules")
                && matches!(behavior, "deny" | "ask")
            {
                Some(format!("a hook may not remove {behavior} rules"))
            } else {
                None
            };
            let result = match why {
                Some(why) => Err(why),
                None => self.apply_update(update),
            };
            if let Err(e) = result {
                refused.push(format!(
                    "updatedPermissions entry {update} not applied: {e}"
                ));
            }
        }
        refused
    }

    /// `permission_suggestions` for a PermissionRequest about this call (SDK `PermissionUpdate`
    /// objects): for edits and filesystem-only Bash lines, working in acceptEdits (plus the
    /// directory, when outside the working directories), as Claude Code suggests for
    /// `touch c.txt`; for other Bash lines, an allow rule per simple command not yet allowed; for
    /// other tools, an allow rule for the tool.
    pub fn permission_suggestions(&self, tool_name: &str, input: &Value) -> Vec<Value> {
        let tool = canonical_tool_name(tool_name);
        let accept_edits = |dir: &Path| {
            vec![
                json!({"type": "addDirectories", "directories": [dir.to_string_lossy()], "destination": "session"}),
                json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
            ]
        };
        match ToolTier::of(tool) {
            ToolTier::ReadOnly => Vec::new(),
            ToolTier::Edit => match input_path(tool, input, &self.paths.cwd) {
                Some(p) if !self.in_working_dirs(&p) => {
                    accept_edits(p.parent().unwrap_or(Path::new("/")))
                }
                _ => vec![
                    json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
                ],
            },
            ToolTier::Command if tool == "Bash" => {
                let command = input
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let parsed = bash::parse(command);
                let fs_only = parsed.unchecked.is_none()
                    && !parsed.parts.is_empty()
                    && parsed.parts.iter().all(|p| {
                        p.argv
                            .first()
                            .is_some_and(|n| FS_COMMANDS.contains(&n.as_str()))
                    });
                if fs_only {
                    return accept_edits(&self.paths.cwd);
                }
                if parsed.unchecked.is_some() {
                    return Vec::new();
                }
                let patterns: Vec<_> = self
                    .allow
                    .iter()
                    .filter_map(|e| e.rule.bash_pattern())
                    .collect();
                let rules: Vec<Value> = parsed
                    .parts
                    .iter()
                    .filter(|p| !patterns.iter().any(|pat| pat.allows_part(p)))
                    .filter_map(|p| p.allow_views.first())
                    .map(|v| json!({"toolName": "Bash", "ruleContent": v}))
                    .collect();
                if rules.is_empty() {
                    return Vec::new();
                }
                vec![
                    json!({"type": "addRules", "rules": rules, "behavior": "allow", "destination": "localSettings"}),
                ]
            }
            ToolTier::Command => vec![json!({
                "type": "addRules",
                "rules": [{"toolName": tool}],
                "behavior": "allow",
                "destination": "localSettings"
            })],
        }
    }

    /// Applies one `PermissionUpdate` (from a PermissionRequest hook's `updatedPermissions` or a
    /// chosen suggestion) to this session: `addRules`, `replaceRules`, `removeRules`, `setMode`,
    /// `addDirectories`, `removeDirectories`. rein never writes settings files here: every
    /// destination takes effect for the session only. A malformed update changes nothing and
    /// returns what is wrong with it.
    pub fn apply_update(&mut self, update: &Value) -> Result<(), String> {
        let kind = update
            .get("type")
            .and_then(Value::as_str)
            .ok_or("update without a `type`")?;
        match kind {
            "addRules" | "replaceRules" | "removeRules" => {
                let behavior = update
                    .get("behavior")
                    .and_then(Value::as_str)
                    .ok_or("rules update without `behavior`")?;
                let list = update
                    .get("rules")
                    .and_then(Value::as_array)
                    .ok_or("rules update without `rules`")?;
                let mut rules = Vec::new();
                for r in list {
                    let tool = r
                        .get("toolName")
                        .and_then(Value::as_str)
                        .ok_or("rule without `toolName`")?;
                    if tool.contains(['(', ')']) || Rule::parse(tool).is_err() {
                        return Err(format!("`{tool}` is not a tool name"));
                    }
                    let text = match r.get("ruleContent").and_then(Value::as_str) {
                        Some(c) => format!("{tool}({})", c.replace('(', "\\(").replace(')', "\\)")),
                        None => tool.to_string(),
                    };
                    let rule = Rule::parse(&text).map_err(|e| e.to_string())?;
                    rules.push(Entry { rule, text });
                }
                let target = match behavior {
                    "allow" => &mut self.allow,
                    "ask" => &mut self.ask,
                    "deny" => &mut self.deny,
                    other => return Err(format!("unknown rule behavior `{other}`")),
                };
                match kind {
                    "addRules" => target.extend(rules),
                    "replaceRules" => *target = rules,
                    _ => target.retain(|e| !rules.iter().any(|r| r.rule == e.rule)),
                }
                Ok(())
            }
            "setMode" => {
                let mode = update
                    .get("mode")
                    .and_then(Value::as_str)
                    .ok_or("setMode without `mode`")?;
                let (mode, _) = PermissionMode::parse(mode).map_err(|e| e.to_string())?;
                if mode == PermissionMode::BypassPermissions && !self.bypass_available {
                    return Err(
                        "bypassPermissions is not available: disabled by \
                         permissions.disableBypassPermissionsMode, or the session did not start in it"
                            .to_string(),
                    );
                }
                self.mode = mode;
                Ok(())
            }
            "addDirectories" | "removeDirectories" => {
                let dirs = update
                    .get("directories")
                    .and_then(Value::as_array)
                    .ok_or("directories update without `directories`")?;
                let dirs: Vec<PathBuf> = dirs
                    .iter()
                    .map(|d| {
                        d.as_str()
                            .map(|d| normalize(Path::new(d), &self.paths.cwd))
                            .ok_or("a directory that is not a string")
                    })
                    .collect::<Result<_, _>>()?;
                if kind == "addDirectories" {
                    for d in dirs {
                        if !self.paths.additional_dirs.contains(&d) {
                            self.paths.additional_dirs.push(d);
                        }
                    }
                } else {
                    self.paths.additional_dirs.retain(|d| !dirs.contains(d));
                }
                Ok(())
            }
            other => Err(format!("unknown permission update type `{other}`")),
        }
    }
}

enum BashAllowance {
    Allowed,
    NotCovered,
    Unchecked(String),
    Writes(PathBuf),
}

/// A Bash call's command line and its decomposition; `None` for other tools and for a Bash
/// input without a `command` string (rules then fail closed on their own).
fn bash_line<'a>(tool: &str, input: &'a Value) -> Option<(&'a str, bash::ParsedCommand)> {
    if tool != "Bash" {
        return None;
    }
    let command = input.get("command").and_then(Value::as_str)?;
    Some((command, bash::parse(command)))
}

/// Places acceptEdits never edits without asking, by tool or by Bash: version control and
/// editor/agent configuration (a hook or a task there runs code), and shell start-up files.
/// Returns what the place is. `path` is relative to the working directory holding it.
fn protected_place(path: &Path) -> Option<&'static str> {
    const DIRS: &[&str] = &[".git", ".claude", ".vscode", ".idea", ".husky"];
    const FILES: &[&str] = &[
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        ".gitconfig",
        ".gitmodules",
        ".envrc",
    ];
    for c in path.components() {
        if let std::path::Component::Normal(name) = c
            && let Some(name) = name.to_str()
            && let Some(d) = DIRS.iter().find(|d| **d == name)
        {
            return Some(match *d {
                ".git" => "the .git directory",
                ".claude" => "the .claude directory",
                ".vscode" => "the .vscode directory",
                ".idea" => "the .idea directory",
                _ => "the .husky directory",
            });
        }
    }
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILES.contains(&n))
    {
        return Some("a shell or git start-up file");
    }
    None
}

/// The model-facing text for a call a deny rule refused (Claude Code's wording).
fn deny_message(tool: &str, input: &Value, rule: &Rule) -> String {
    if tool == "Bash"
        && let Some(command) = input.get("command").and_then(Value::as_str)
    {
        return format!("Permission to use Bash with command {command} has been denied.");
    }
    if rule.is_path_rule() {
        return FILE_DENIED.to_string();
    }
    format!("Permission to use {tool} has been denied.")
}

/// The files a Bash line reads and writes, as far as its words say.
#[derive(Debug, Default)]
struct FileTargets {
    reads: Vec<PathBuf>,
    writes: Vec<PathBuf>,
}

/// Commands whose file operands are written (or removed, or have their mode changed).
const WRITERS: &[&str] = &[
    "tee", "touch", "truncate", "rm", "unlink", "shred", "chmod", "chown", "chgrp", "mkdir",
    "rmdir", "mkfifo", "mknod",
];
/// Commands that copy or move operands to a destination (the last operand or `-t DIR`).
const COPIERS: &[&str] = &["cp", "mv", "install", "ln", "rsync", "scp"];

/// What each simple command of `parsed` reads and writes: every literal operand is a file it
/// may read (fail closed: `cat`, `base64`, `cp`, `tar` all read their operands), input
/// redirections are reads; output redirections, the operands of [`WRITERS`], the destinations
/// of [`COPIERS`] (and `dest/<name>` for each source) and the files of `sed -i`/`perl -i` are
/// writes. A literal `cd DIR` earlier on the line moves where later relative paths point; every
/// directory the line may be in is tried, so a subshell's `cd` cannot hide a path.
fn bash_file_targets(parsed: &bash::ParsedCommand, cwds: &[&Path], home: &Path) -> FileTargets {
    let expand = |arg: &str, dir: &Path| -> Option<PathBuf> {
        if arg.contains(['$', '`']) || arg.is_empty() {
            return None;
        }
        let p = match arg.strip_prefix('~') {
            Some("") => home.to_path_buf(),
            Some(rest) if rest.starts_with('/') => home.join(&rest[1..]),
            Some(_) => return None,
            None => PathBuf::from(arg),
        };
        Some(normalize(&p, dir))
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in cwds {
        if !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_path_buf());
        }
    }
    let mut out = FileTargets::default();
    for part in &parsed.parts {
        let argv = &part.argv;
        let name = argv
            .first()
            .map(|n| n.rsplit('/').next().unwrap_or(n).to_string())
            .unwrap_or_default();
        let operands: Vec<&str> = argv
            .iter()
            .skip(1)
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        let push = |list: &mut Vec<PathBuf>, arg: &str| {
            for d in &dirs {
                if let Some(p) = expand(arg, d)
                    && !list.contains(&p)
                {
                    list.push(p);
                }
            }
        };
        for a in &operands {
            push(&mut out.reads, a);
        }
        // `--opt=value` values may name files too.
        for a in argv.iter().skip(1) {
            if let Some((_, v)) = a.split_once('=')
                && a.starts_with('-')
            {
                push(&mut out.reads, v);
            }
        }
        for r in &part.reads {
            push(&mut out.reads, r);
        }
        for w in &part.writes {
            push(&mut out.writes, w);
        }
        if WRITERS.contains(&name.as_str()) {
            for a in &operands {
                push(&mut out.writes, a);
            }
        }
        let in_place = matches!(name.as_str(), "sed" | "perl" | "ruby")
            && argv.iter().skip(1).any(|a| {
                a.starts_with("-i")
                    || a == "--in-place"
                    || a.starts_with("--in-place=")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            });
        if in_place {
            for a in &operands {
                push(&mut out.writes, a);
            }
        }
        if name == "dd" {
            for a in argv.iter().skip(1) {
                if let Some(f) = a.strip_prefix("of=") {
                    push(&mut out.writes, f);
                }
            }
        }
        if COPIERS.contains(&name.as_str()) {
            let mut target_dir: Option<&str> = None;
            let mut i = 1;
            while let Some(a) = argv.get(i) {
                if a == "-t" || a == "--target-directory" {
                    target_dir = argv.get(i + 1).map(String::as_str);
                    i += 1;
                } else if let Some(d) = a.strip_prefix("--target-directory=") {
                    target_dir = Some(d);
                } else if let Some(d) = a.strip_prefix("-t").filter(|d| !d.is_empty()) {
                    target_dir = Some(d);
                }
                i += 1;
            }
            let (dest, sources): (Option<&str>, &[&str]) = match target_dir {
                Some(d) => (Some(d), &operands[..]),
                None => match operands.split_last() {
                    Some((last, rest)) => (Some(*last), rest),
                    None => (None, &[]),
                },
            };
            if let Some(dest) = dest {
                push(&mut out.writes, dest);
                for src in sources {
                    let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or(src);
                    if !base.is_empty() {
                        push(
                            &mut out.writes,
                            &format!("{}/{base}", dest.trim_end_matches('/')),
                        );
                    }
                }
            }
        }
        if matches!(name.as_str(), "cd" | "pushd") && !part.argv_expanded {
            let target = operands.first().copied().unwrap_or("~");
            let new: Vec<PathBuf> = dirs.iter().filter_map(|d| expand(target, d)).collect();
            for d in new {
                if !dirs.contains(&d) && dirs.len() < 16 {
                    dirs.push(d);
                }
            }
        }
    }
    out
}

/// The tool an unparsable rule names, if its tool part is readable.
fn broken_rule_tool(text: &str) -> Option<Rule> {
    let name = text.split('(').next().unwrap_or_default().trim();
    Rule::parse(name).ok().filter(|_| !name.is_empty())
}

fn broken_warning(origin: &str, e: &RuleError, list: RulePurpose, broken: &Broken) -> String {
    let scope = match &broken.tool {
        Some(r) => format!("every {} call", r.tool),
        None => "every tool call".to_string(),
    };
    let effect = match list {
        RulePurpose::Allow => "it is ignored".to_string(),
        RulePurpose::Ask => format!("rein asks before {scope} instead"),
        RulePurpose::Deny | RulePurpose::Condition => format!("rein denies {scope} instead"),
    };
    format!("{origin}: warning: {e}; {effect}")
}

/// Escapes glob metacharacters and parentheses so a path is matched literally in a rule.
fn escape_glob(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '(' | ')') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Splits a `--allowedTools` / `--disallowedTools` value into rules: separated by commas or
/// whitespace outside parentheses (`"Bash(git log:*) Read,Edit"` → three rules).
pub fn split_tool_list(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut escaped = false;
    for c in list.chars() {
        if escaped {
            cur.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                cur.push(c);
            }
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The model-facing refusal when a call would be asked about but nobody can answer (headless,
/// no PermissionRequest hook decided, or `denyInsteadOfPrompting`). A hook's `ask` shows the
/// hook's reason verbatim (spec §4.5); every other cause reads
/// `Permission to use <Tool> was not granted: <reason>. …`.
pub fn headless_denial(tool_name: &str, reason: &str, cause: &AskCause) -> String {
    match cause {
        AskCause::Hook => reason.to_string(),
        AskCause::AskRule(_) | AskCause::Unchecked | AskCause::Tier => format!(
            "Permission to use {tool_name} was not granted: {reason}. rein is running \
             non-interactively, so nobody could approve it; an allow rule (permissions.allow or \
             --allowedTools) lets it run."
        ),
    }
}
