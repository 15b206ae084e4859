//! A prompt that runs a slash command (`/mark alpha beta`): after UserPromptSubmit has seen
//! the prompt as typed, the command's body is expanded and sent instead, as Claude Code 2.1.328
//! sends it (fixtures `slash_command`, `plugin_command` in `tests/fixtures/cc-2.1.328/`):
//!
//! 1. for each `@file` of the body, two user messages: `Called the Read tool with the
//!    following input: {"file_path":…}` and `Result of calling the Read tool:` with the
//!    file's numbered lines, each in a system reminder;
//! 2. one user message of two text blocks: the `<command-message>` / `<command-name>` /
//!    `<command-args>` header, and the expanded body.
//!
//! Each `` !`command` `` of the body runs before the model is asked, as a Bash call through
//! the whole gate — PreToolUse hooks, permission rules and mode — with the command's
//! `allowed-tools` as extra allow rules for it, and is replaced by its output. A refused or
//! failed one stops the command: the model is not asked, and the result says which line and
//! why. (Claude Code checks the same lines against `allowed-tools`; rein also lets the user's
//! hooks see them, so a guard that refuses `rm -rf` refuses it here too.)
//!
//! An `@file` the permission rules deny reading is not attached.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::commands::{self, Entry};
use crate::permissions::policy::HookAnswer;
use crate::permissions::rule::{Rule, RuleContext, RulePurpose};
use crate::pipeline::{GateVerdict, PromptAnswer};

/// What running a command produced for the request.
pub(super) enum Expansion {
    /// The user messages to send (file reminders, then the command).
    Messages(Vec<Message>),
    /// A `!` line was refused or failed: the text the user is shown; nothing is sent.
    Failed(String),
}

impl Session {
    /// The command `prompt` runs, if it names one of the session's commands or skills.
    pub(super) fn command_for(&self, prompt: &str) -> Option<(Arc<Entry>, String)> {
        let catalog = self.catalog.as_ref()?;
        let (name, args) = commands::parse_invocation(prompt.trim_start())?;
        let entry = catalog.find(name)?;
        Some((Arc::new(entry.clone()), args.to_string()))
    }

    /// Expands `entry` run with `args` (see the module's text).
    pub(super) async fn expand_command(&mut self, entry: &Entry, args: &str) -> Expansion {
        let mut body = entry.expand(args);
        let bangs = commands::bang_commands(&body);
        if !bangs.is_empty() {
            let gate = AllowedToolsGate::new(self.gate.as_ref(), entry, &self.ctx);
            let base = {
                let mut base = self.base(HookEvent::PreToolUse);
                base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
                base
            };
            let pipeline = ToolPipeline {
                hooks: self.hooks.as_ref(),
                tools: &self.tools,
                gate: &gate,
                ctx: &self.ctx,
                observer: &self.sink,
            };
            let mut outputs = Vec::with_capacity(bangs.len());
            for (_, command) in &bangs {
                let call = ToolCall {
                    id: format!("toolu_cmd_{}", uuid_v4().replace('-', "")),
                    name: "Bash".to_string(),
                    input: json!({
                        "command": command,
                        "description": format!("!`…` line of /{}", entry.name),
                    }),
                };
                let report = pipeline.run(&call, &base).await;
                if report.status != CallStatus::Succeeded || report.is_error {
                    return Expansion::Failed(format!(
                        "/{}: the line !`{command}` of {} did not run: {}",
                        entry.name,
                        entry.path.display(),
                        report.denial.clone().unwrap_or(report.content.clone())
                    ));
                }
                let stdout = report
                    .response
                    .as_ref()
                    .and_then(|r| r.get("stdout"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or(report.content.clone());
                outputs.push(stdout.trim_end_matches('\n').to_string());
            }
            for ((range, _), output) in bangs.iter().zip(outputs).rev() {
                body.replace_range(range.clone(), &output);
            }
        }

        let mut messages = Vec::new();
        let cwd = self.ctx.current_dir();
        for path in commands::file_mentions(&body, &cwd) {
            let shown = path.to_string_lossy().into_owned();
            let input = json!({ "file_path": shown });
            if self.gate.check_deny("Read", &input).is_some() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let total = text.split('\n').count() as u64;
            let numbered = crate::tools::read::render_text(&text, 1, total);
            self.ctx.mark_in_context(&shown);
            for text in [
                format!("Called the Read tool with the following input: {input}"),
                format!("Result of calling the Read tool:\n{numbered}"),
            ] {
                messages.push(Message {
                    role: Role::User,
                    content: vec![system_reminder(&text)],
                });
            }
        }
        messages.push(Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text {
                    text: format!(
                        "<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n<command-args>{args}</command-args>\n",
                        name = entry.name
                    ),
                },
                ContentBlock::Text { text: body },
            ],
        });
        Expansion::Messages(messages)
    }
}

/// The session's gate, with a command's `allowed-tools` allowing what would otherwise need a
/// prompt. Deny rules, a hook's refusal and the mode's refusals stand.
struct AllowedToolsGate<'a> {
    inner: &'a dyn PermissionGate,
    allow: Vec<Rule>,
    cwd: std::path::PathBuf,
    project_dir: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl<'a> AllowedToolsGate<'a> {
    fn new(inner: &'a dyn PermissionGate, entry: &Entry, ctx: &ToolContext) -> Self {
        AllowedToolsGate {
            inner,
            // A rule that does not parse allows nothing (it is reported by `rein hooks validate`).
            allow: entry
                .allowed_tools
                .iter()
                .filter_map(|r| Rule::parse(r).ok())
                .collect(),
            cwd: ctx.current_dir(),
            project_dir: ctx.project_dir.clone(),
            home: std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_default(),
        }
    }
}

impl PermissionGate for AllowedToolsGate<'_> {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        let verdict = self.inner.evaluate(tool, input, hook);
        let asked_by_hook = matches!(hook, Some(HookAnswer::Ask { .. }));
        match verdict {
            GateVerdict::Ask { .. } if !asked_by_hook => {
                let ctx = RuleContext {
                    cwd: &self.cwd,
                    project_dir: &self.project_dir,
                    home: &self.home,
                };
                let allowed = self
                    .allow
                    .iter()
                    .any(|r| r.matches(tool, input, &ctx, RulePurpose::Allow));
                if allowed && self.inner.check_ask(tool, input).is_none() {
                    GateVerdict::Allow
                } else {
                    verdict
                }
            }
            other => other,
        }
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

    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.check_ask(tool, input)
    }

    fn prompt<'b>(
        &'b self,
        tool: &'b str,
        input: &'b Value,
        reason: &'b str,
    ) -> crate::future::BoxFuture<'b, PromptAnswer> {
        self.inner.prompt(tool, input, reason)
    }

    fn can_prompt(&self) -> bool {
        self.inner.can_prompt()
    }

    fn host(&self) -> Option<Arc<dyn crate::pipeline::PermissionHost>> {
        self.inner.host()
    }

    fn blocked_path(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.blocked_path(tool, input)
    }
}
