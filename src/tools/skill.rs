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
//! Not run here: a skill's `` !`command` `` lines stay as written (a slash command typed by
//! the user runs them through the gate; a tool cannot start another call).

#![deny(missing_docs)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};
use crate::commands::Catalog;

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
        Box::pin(async move {
            let name = input
                .get("skill")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = name.strip_prefix('/').unwrap_or(name);
            let Some(entry) = self.catalog.find(name) else {
                return ToolOutcome::Failure {
                    error: format!("Unknown skill: {name}"),
                    is_interrupt: false,
                };
            };
            let args = input
                .get("args")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let body = entry.expand(args);
            let text = match &entry.dir {
                Some(dir) => format!("Base directory for this skill: {}\n\n{body}", dir.display()),
                None => body,
            };
            ctx.follow_up(text);
            let response = json!({"success": true, "commandName": entry.name});
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
