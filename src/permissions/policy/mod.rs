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

mod bash_files;
mod rule_checks;
mod updates;

use bash_files::*;

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
    /// started in it (or `--allow-dangerously-skip-permissions` allowed it) and
    /// `permissions.disableBypassPermissionsMode` is not set (Claude Code's rule).
    bypass_available: bool,
    /// `permissions.disableBypassPermissionsMode` is set.
    bypass_disabled: bool,
    /// The session's plan file: the one file plan mode lets the model write.
    plan_file: Option<PathBuf>,
    /// Skills (and commands the model may run) whose front matter has `allowed-tools`:
    /// starting one with the Skill tool grants tools, so it needs approval as a command does.
    granting_skills: Vec<String>,
}

/// Whether writing `plan` writes that very file: no symlink at it or in its folders (a link
/// left there would carry plan mode's one allowed write to any file). Not there yet is fine.
fn plan_file_is_plain(plan: &Path) -> bool {
    let (Some(dir), Some(_)) = (plan.parent(), plan.file_name()) else {
        return false;
    };
    let mut dir = dir;
    // The nearest folder that exists must resolve to itself (no symlinked folder on the way).
    let real_dir = loop {
        match std::fs::canonicalize(dir) {
            Ok(real) => break real,
            Err(_) => match dir.parent() {
                Some(up) => dir = up,
                None => return false,
            },
        }
    };
    if !plan.starts_with(&real_dir) {
        return false;
    }
    match std::fs::symlink_metadata(plan) {
        Ok(meta) => meta.file_type().is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

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
            bypass_disabled: settings.disable_bypass_mode,
            plan_file: None,
            granting_skills: Vec::new(),
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

    /// `--allow-dangerously-skip-permissions`: the session may switch to bypassPermissions
    /// later (unless `permissions.disableBypassPermissionsMode` is set).
    pub fn allow_bypass_switch(&mut self) {
        self.bypass_available = !self.bypass_disabled;
    }

    /// Switches to `mode` if the session may (a `setMode` update, the Agent SDK's
    /// `set_permission_mode`): bypassPermissions only where [`Self::allow_bypass_switch`] or
    /// the starting mode made it available. `Err` says why not.
    pub fn switch_mode(&mut self, mode: PermissionMode) -> Result<(), String> {
        if mode == PermissionMode::BypassPermissions && !self.bypass_available {
            return Err(if self.bypass_disabled {
                "bypassPermissions is disabled by permissions.disableBypassPermissionsMode"
                    .to_string()
            } else {
                // Claude Code 2.1.328's words (fixture `agent_sdk/bypass_switch`).
                "Cannot set permission mode to bypassPermissions because the session was not launched with --dangerously-skip-permissions"
                    .to_string()
            });
        }
        self.mode = mode;
        Ok(())
    }

    /// [`PermissionPolicy::evaluate`] with `allow` (rule texts; one that does not parse allows
    /// nothing) added to the allow rules for this one call: a command's or skill's
    /// `allowed-tools` then allow exactly what the same rules in the settings would.
    pub fn evaluate_with_allow(
        &mut self,
        tool: &str,
        input: &Value,
        hook: Option<&HookAnswer>,
        allow: &[String],
    ) -> Verdict {
        let kept = self.allow.len();
        self.allow.extend(allow.iter().filter_map(|text| {
            Some(Entry {
                rule: Rule::parse(text).ok()?,
                text: text.clone(),
            })
        }));
        let verdict = self.evaluate(tool, input, hook);
        self.allow.truncate(kept);
        verdict
    }

    /// Names the skills whose `allowed-tools` a Skill call grants: such a call is approved as
    /// a command is (an allow rule `Skill(name)`, bypassPermissions, or a person), as Claude
    /// Code 2.1.328 asks for them (fixture `skill_bang`); other skills run without asking.
    pub fn set_granting_skills(&mut self, names: Vec<String>) {
        self.granting_skills = names;
    }

    /// The tier of a call: by the tool's name, except a Skill call that grants tools.
    fn tier_of(&self, tool: &str, input: &Value) -> ToolTier {
        if tool == "Skill" && !self.granting_skills.is_empty() {
            let name = input
                .get("skill")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = name.strip_prefix('/').unwrap_or(name);
            if self.granting_skills.iter().any(|s| s == name) {
                return ToolTier::Command;
            }
        }
        ToolTier::of(tool)
    }

    /// Follows the session's plan file (see [`PermissionPolicy::evaluate`]'s plan mode).
    pub fn set_plan_file(&mut self, path: Option<PathBuf>) {
        self.plan_file = path;
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
        let tier = self.tier_of(tool, input);
        if self.mode == PermissionMode::Plan {
            // The plan is written to its own file: the one edit plan mode allows (a deny
            // rule covering it was checked above).
            let plan_edit = tier == ToolTier::Edit
                && matches!(tool, "Write" | "Edit")
                && self.plan_file.as_deref().is_some_and(|plan| {
                    input
                        .get("file_path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| Path::new(p) == plan)
                        && plan_file_is_plain(plan)
                });
            if plan_edit {
                return Verdict::Allow;
            }
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
                                |p| self.reads_without_asking(p),
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
                } else if tool == "Skill" {
                    let name = input
                        .get("skill")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.ask(
                        tool,
                        format!(
                            "The skill {name} lets tools run without asking (its allowed-tools), so starting it requires approval; an allow rule Skill({name}) lets it start"
                        ),
                        AskCause::Tier,
                    )
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
            // "Always" for a skill that grants tools is for that skill, not every skill.
            _ if tool == "Skill" => match input.get("skill").and_then(Value::as_str) {
                Some(name) => format!("Skill({})", name.strip_prefix('/').unwrap_or(name)),
                None => return,
            },
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
