//! The Skill tool (Claude Code's name and shapes, fixture
//! `tests/fixtures/cc-2.1.328/plugin_command`): `{skill, args?}` runs a skill, or a command
//! with a description, of the session's catalog ([`crate::commands`]).
//!
//! The tool result is `Launching skill: <name>` and the hooks' `tool_response` is
//! `{"success":true,"commandName":<name>}`; the skill's expanded body reaches the model as a
//! text block right after the result — `Base directory for this skill: <dir>`, a blank line,
//! the body with `${CLAUDE_SKILL_DIR}`, `${CLAUDE_PLUGIN_ROOT}` and the arguments replaced —
//! through [`ToolContext::follow_up`].
//!
//! A skill's `` !`command` `` lines run before its text is sent ([`Tool::shell_lines`]): each
//! is a Bash call through the whole gate with the skill's `allowed-tools` as extra allow
//! rules, and is replaced by its output (Claude Code's `(Bash completed with no output)` when
//! it printed nothing). A line that is refused or fails fails the call with Claude Code
//! 2.1.328's opening (`Shell command permission check failed for pattern "!`…`": …`, `Shell
//! command failed for pattern …`; fixtures `sk_b`, `sk_g`) and nothing is sent. A skill that
//! names `allowed-tools` reports them in `tool_response.allowedTools`, and the session lets
//! them allow the model's calls for the rest of the turn.

#![deny(missing_docs)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, ShellLines, Tool, ToolContext, ToolOutcome};
use crate::commands::Catalog;
use crate::commands::Entry;

const FIELDS: &[Field] = &[
    Field::required("skill", FieldKind::String),
    Field::optional("args", FieldKind::String),
];

const DESCRIPTION: &str = "Runs one of the user's skills: a set of instructions the user wrote for a kind of task \
(listed below as `- name: description`).\n\n\
When the task matches a skill's description, call this tool with the skill's name first, \
before doing the task yourself; the skill's instructions then arrive right after the result, \
and you follow them. `args` is the text the skill works on (for `/name args` typed by the user, \
the part after the name). Run a skill once per task; do not call it for a skill whose \
instructions you already have in this conversation.";

/// The Skill tool over a session's catalog.
#[derive(Debug, Clone)]
pub struct SkillTool {
    catalog: Arc<Catalog>,
    /// [`DESCRIPTION`] and the catalog's listing.
    description: String,
}

impl SkillTool {
    /// The tool for `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> SkillTool {
        let listing = catalog.skill_listing().unwrap_or_default();
        SkillTool {
            description: format!("{DESCRIPTION}\n\n{listing}{}", super::refusal_note!()),
            catalog,
        }
    }
}

impl SkillTool {
    /// The skill a call names, and its arguments.
    fn entry_of<'a>(&'a self, input: &'a Value) -> Option<(&'a Entry, &'a str)> {
        let name = input.get("skill").and_then(Value::as_str)?;
        let name = name.strip_prefix('/').unwrap_or(name);
        let entry = self.catalog.find(name)?;
        let args = input
            .get("args")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Some((entry, args))
    }
}

impl Tool for SkillTool {
    fn name(&self) -> &str {
        "Skill"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {
                    "type": "string",
                    "description": "The skill's name as listed (`greet`, `plugin:skill`)."
                },
                "args": {
                    "type": "string",
                    "description": "What the skill works on, as text."
                }
            },
            "required": ["skill"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        let map = Value::Object(input::normalise(self.name(), input, FIELDS)?);
        let name = map.get("skill").and_then(Value::as_str).unwrap_or_default();
        let name = name.strip_prefix('/').unwrap_or(name);
        match self.catalog.find(name) {
            Some(entry) if entry.offered_to_model() => Ok(map),
            Some(_) => Err(format!(
                "Skill {name} cannot be run by the model (disable-model-invocation)"
            )),
            None => Err(format!("Unknown skill: {name}")),
        }
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        self.execute_with_outputs(input, Vec::new(), ctx)
    }

    fn shell_lines(&self, input: &Value) -> Option<ShellLines> {
        let (entry, args) = self.entry_of(input)?;
        let commands: Vec<String> = crate::commands::bang_commands(&entry.expand(args))
            .into_iter()
            .map(|(_, command)| command)
            .collect();
        Some(ShellLines {
            commands,
            allow: entry.allowed_tools.clone(),
            description: format!("!`…` line of the skill {}", entry.name),
        })
    }

    fn execute_with_outputs<'a>(
        &'a self,
        input: Value,
        outputs: Vec<String>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some((entry, args)) = self.entry_of(&input) else {
                let name = input
                    .get("skill")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return ToolOutcome::Failure {
                    error: format!("Unknown skill: {name}"),
                    is_interrupt: false,
                };
            };
            let mut body = entry.expand(args);
            let lines = crate::commands::bang_commands(&body);
            // The pipeline ran every line (or none: the tool called directly runs none and
            // leaves the text as written).
            if lines.len() == outputs.len() {
                for ((range, _), output) in lines.iter().zip(outputs).rev() {
                    body.replace_range(range.clone(), &output);
                }
            }
            let text = match &entry.dir {
                Some(dir) => format!("Base directory for this skill: {}\n\n{body}", dir.display()),
                None => body,
            };
            ctx.follow_up(text);
            let mut response = json!({"success": true, "commandName": entry.name});
            if !entry.allowed_tools.is_empty() {
                response["allowedTools"] = json!(entry.allowed_tools);
            }
            ToolOutcome::Success {
                response,
                content: format!("Launching skill: {}", entry.name),
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let name = response.get("commandName")?.as_str()?;
        Some(format!("Launching skill: {name}"))
    }
}
