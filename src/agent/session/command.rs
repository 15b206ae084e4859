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

use serde_json::json;

use super::*;
use crate::commands::{self, Entry};
use crate::pipeline::{LineError, LineFailure};
use crate::tools::ShellLines;

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
            let base = {
                let mut base = self.base(HookEvent::PreToolUse);
                base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
                base
            };
            let pipeline = ToolPipeline {
                hooks: self.hooks.as_ref(),
                tools: &self.tools,
                gate: self.gate.as_ref(),
                ctx: &self.ctx,
                observer: &self.sink,
            };
            let lines = ShellLines {
                commands: bangs.iter().map(|(_, c)| c.clone()).collect(),
                allow: entry.allowed_tools.clone(),
                description: format!("!`…` line of /{}", entry.name),
            };
            match pipeline.run_shell_lines(&lines, &base).await {
                Ok(outputs) => {
                    for ((range, _), output) in bangs.iter().zip(outputs).rev() {
                        body.replace_range(range.clone(), &output);
                    }
                }
                Err(LineError { command, failure }) => {
                    let (LineFailure::Refused(why) | LineFailure::Failed(why)) = failure;
                    return Expansion::Failed(format!(
                        "/{}: the line !`{command}` of {} did not run: {why}",
                        entry.name,
                        entry.path.display(),
                    ));
                }
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
                    // No `<command-args>` line without arguments (fixture `cmd_empty_bang`).
                    text: if args.is_empty() {
                        format!(
                            "<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n",
                            name = entry.name
                        )
                    } else {
                        format!(
                            "<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n<command-args>{args}</command-args>\n",
                            name = entry.name
                        )
                    },
                },
                ContentBlock::Text { text: body },
            ],
        });
        Expansion::Messages(messages)
    }
}
