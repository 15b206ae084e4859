//! Shell lines a call runs before its own work — the `` !`command` `` lines of a slash command
//! or a skill — and the gate that lets a command's or skill's `allowed-tools` allow them.
//!
//! Each line is a Bash call through the whole pipeline (PreToolUse hooks, permission rules and
//! mode, PostToolUse), so a guard that refuses `rm -rf` refuses it in a skill too. Claude Code
//! 2.1.328 checks the same lines against the rules and `allowed-tools` and fires no hook for
//! them (fixtures `skill_bang`, `slash_command`); rein is stricter where a hook refuses.

use serde_json::{Value, json};

use super::*;
use crate::permissions::policy::HookAnswer;
use crate::permissions::rule::{Rule, RuleContext, RulePurpose};
use crate::tools::ShellLines;

/// Why a line gave no output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFailure {
    /// A hook, a rule, the mode or a person refused it; it never ran. The refusal's text.
    Refused(String),
    /// It ran and failed (or its input was invalid). The Bash tool's error text.
    Failed(String),
}

/// A line that did not give its output: the command and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub command: String,
    pub failure: LineFailure,
}

impl LineError {
    /// The text the model gets for a skill whose line failed, with Claude Code 2.1.328's
    /// openings (fixtures `sk_b`, `sk_g`), which a PostToolUseFailure hook sees.
    pub fn skill_text(&self) -> String {
        match &self.failure {
            LineFailure::Refused(why) => format!(
                "Shell command permission check failed for pattern \"!`{}`\": {why}",
                self.command
            ),
            LineFailure::Failed(why) => format!(
                "Shell command failed for pattern \"!`{}`\": {why}",
                self.command
            ),
        }
    }
}

impl ToolPipeline<'_> {
    /// Runs `lines` in order, each as a Bash call under `base`, and returns their outputs (the
    /// command's stdout without its last newlines; Claude Code's no-output text when empty).
    /// Stops at the first line that is refused or fails.
    pub async fn run_shell_lines(
        &self,
        lines: &ShellLines,
        base: &BaseInput,
    ) -> Result<Vec<String>, LineError> {
        let gate = AllowedToolsGate::new(self.gate, &lines.allow, self.ctx);
        let pipeline = ToolPipeline {
            hooks: self.hooks,
            tools: self.tools,
            gate: &gate,
            ctx: self.ctx,
            observer: self.observer,
        };
        let mut outputs = Vec::with_capacity(lines.commands.len());
        for command in &lines.commands {
            let call = ToolCall {
                id: format!("toolu_line_{}", crate::id::uuid_v4().replace('-', "")),
                name: "Bash".to_string(),
                input: json!({"command": command, "description": lines.description}),
            };
            // Boxed: a line's call runs in the pipeline that is running the skill's call.
            let report = Box::pin(pipeline.run(&call, base)).await;
            let failure = match report.status {
                CallStatus::Succeeded if !report.is_error => None,
                CallStatus::Refused | CallStatus::Deferred => Some(LineFailure::Refused(
                    report.denial.clone().unwrap_or(report.content.clone()),
                )),
                _ => Some(LineFailure::Failed(report.content.clone())),
            };
            if let Some(failure) = failure {
                return Err(LineError {
                    command: command.clone(),
                    failure,
                });
            }
            let stdout = report
                .response
                .as_ref()
                .and_then(|r| r.get("stdout"))
                .and_then(Value::as_str)
                .unwrap_or(&report.content)
                .trim_end_matches('\n')
                .to_string();
            outputs.push(if stdout.is_empty() {
                crate::tools::bash::NO_OUTPUT_TEXT.to_string()
            } else {
                stdout
            });
        }
        Ok(outputs)
    }
}

/// A gate with extra allow rules (a command's or skill's `allowed-tools`): they allow what
/// would otherwise need a prompt. Deny rules, ask rules, a hook's refusal or question and the
/// mode's refusals stand.
pub struct AllowedToolsGate<'a> {
    inner: &'a dyn PermissionGate,
    texts: Vec<String>,
    allow: Vec<Rule>,
    project_dir: std::path::PathBuf,
    home: std::path::PathBuf,
    ctx: &'a ToolContext,
}

impl<'a> AllowedToolsGate<'a> {
    /// `inner` with `rules` (a rule that does not parse allows nothing; `rein hooks validate`
    /// reports it).
    pub fn new(inner: &'a dyn PermissionGate, rules: &[String], ctx: &'a ToolContext) -> Self {
        AllowedToolsGate {
            inner,
            texts: rules.to_vec(),
            allow: rules.iter().filter_map(|r| Rule::parse(r).ok()).collect(),
            project_dir: ctx.project_dir.clone(),
            home: std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_default(),
            ctx,
        }
    }
}

impl PermissionGate for AllowedToolsGate<'_> {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        if self.texts.is_empty() {
            return self.inner.evaluate(tool, input, hook);
        }
        // The session's rules with these added: exactly what the same rules in the settings
        // allow (a line of ruled and reading parts included).
        if let Some(verdict) = self
            .inner
            .evaluate_with_allow(tool, input, hook, &self.texts)
        {
            return verdict;
        }
        // A gate without rules of its own: the rules are matched here, after it asked.
        let verdict = self.inner.evaluate(tool, input, hook);
        let asked_by_hook = matches!(hook, Some(HookAnswer::Ask { .. }));
        match verdict {
            GateVerdict::Ask { .. } if !asked_by_hook && !self.allow.is_empty() => {
                // Relative paths resolve where the shell is now (`cd` persists).
                let cwd = self.ctx.current_dir();
                let rules = RuleContext {
                    cwd: &cwd,
                    project_dir: &self.project_dir,
                    home: &self.home,
                };
                let allowed = self
                    .allow
                    .iter()
                    .any(|r| r.matches(tool, input, &rules, RulePurpose::Allow));
                if allowed && self.inner.check_ask(tool, input).is_none() {
                    GateVerdict::Allow
                } else {
                    verdict
                }
            }
            other => other,
        }
    }

    fn evaluate_with_allow(
        &self,
        tool: &str,
        input: &Value,
        hook: Option<&HookAnswer>,
        allow: &[String],
    ) -> Option<GateVerdict> {
        let both: Vec<String> = self.texts.iter().chain(allow).cloned().collect();
        self.inner.evaluate_with_allow(tool, input, hook, &both)
    }

    fn check_deny(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.check_deny(tool, input)
    }

    fn follow_cwd(&self, cwd: &std::path::Path) {
        self.inner.follow_cwd(cwd);
    }

    fn follow_plan_file(&self, path: Option<&std::path::Path>) {
        self.inner.follow_plan_file(path);
    }

    fn set_mode(&self, mode: &str) -> Result<(), String> {
        self.inner.set_mode(mode)
    }

    fn suggestions(&self, tool: &str, input: &Value) -> Vec<Value> {
        self.inner.suggestions(tool, input)
    }

    fn apply_hook_updates(&self, updates: &[Value]) -> Vec<String> {
        self.inner.apply_hook_updates(updates)
    }

    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.check_ask(tool, input)
    }

    fn prompt<'b>(
        &'b self,
        tool: &'b str,
        input: &'b Value,
        reason: &'b str,
    ) -> BoxFuture<'b, PromptAnswer> {
        self.inner.prompt(tool, input, reason)
    }

    fn can_prompt(&self) -> bool {
        self.inner.can_prompt()
    }

    fn host(&self) -> Option<Arc<dyn PermissionHost>> {
        self.inner.host()
    }

    fn blocked_path(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.blocked_path(tool, input)
    }
}
