//! The TaskStop tool (Claude Code's name; formerly `KillShell`/`KillBash`):
//! `{task_id?, shell_id?}` → `{"message","task_id","task_type","command"}`, stopping a background
//! Bash command with the same TERM → grace → KILL as a hook.
//!
//! There is no output-reading tool: Claude Code 2.1.328 removed `TaskOutput` (formerly
//! `BashOutput`) — the model reads a background command's log file with `Read` — so rein offers
//! none either.

#![deny(missing_docs)]

use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

pub(crate) const FIELDS: &[Field] = &[
    Field::optional("task_id", FieldKind::String),
    Field::optional("shell_id", FieldKind::String),
];

const DESCRIPTION: &str = concat!(
    "Stops a command that Bash started with `run_in_background: true`, with its children \
(TERM, then KILL if it does not exit).\n\n\
Use it when a background server, watcher or long job is no longer needed, or is stuck. \
`task_id` is the id the Bash call answered with. An id that names no background command of \
this session, or one that has already ended, is an error.",
    super::refusal_note!()
);

/// The TaskStop tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStopTool;

impl TaskStopTool {
    /// Claude Code's text for an id that names no task of this session.
    pub fn not_found(id: &str) -> String {
        format!("No task found with ID: {id}")
    }
}

fn task_id(input: &Value) -> Option<&str> {
    input
        .get("task_id")
        .or_else(|| input.get("shell_id"))
        .and_then(Value::as_str)
}

impl Tool for TaskStopTool {
    fn name(&self) -> &str {
        "TaskStop"
    }

    fn aliases(&self) -> &[&str] {
        &["KillShell", "KillBash"]
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "task_id": {
                    "type": "string",
                    "description": "The id of the background command to stop, as Bash reported it."
                },
                "shell_id": {
                    "type": "string",
                    "description": "Older name of task_id; send task_id instead."
                }
            },
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare_touches_files(&self) -> bool {
        false
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let map = Value::Object(input::normalise(self.name(), input, FIELDS)?);
        let Some(id) = task_id(&map) else {
            return Err("Missing required parameter: task_id".to_string());
        };
        let Some(task) = ctx.background.get(id) else {
            return Err(TaskStopTool::not_found(id));
        };
        if task.ending().is_some() {
            return Err(format!("Task {id} is not running (status: completed)"));
        }
        Ok(map)
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(id) = task_id(&input) else {
                return failure("Missing required parameter: task_id".to_string());
            };
            let Some(task) = ctx.background.get(id) else {
                return failure(TaskStopTool::not_found(id));
            };
            if task.ending().is_some() {
                return failure(format!("Task {id} is not running (status: completed)"));
            }
            // Before the stop: the model asked for it, so it needs no notification.
            task.mark_announced();
            task.stop().await;
            let mut response = Map::new();
            response.insert(
                "message".into(),
                Value::from(format!(
                    "Successfully stopped task: {id} ({})",
                    task.command
                )),
            );
            response.insert("task_id".into(), Value::from(id));
            response.insert("task_type".into(), Value::from("local_bash"));
            response.insert("command".into(), Value::from(task.command.as_str()));
            let response = Value::Object(response);
            let content = response.to_string();
            ToolOutcome::Success { response, content }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        response.get("message")?.as_str()?;
        Some(response.to_string())
    }
}

fn failure(error: String) -> ToolOutcome {
    ToolOutcome::Failure {
        error,
        is_interrupt: false,
    }
}
