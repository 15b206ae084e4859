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

const FIELDS: &[Field] = &[
    Field::optional("task_id", FieldKind::String),
    Field::optional("shell_id", FieldKind::String),
];

const DESCRIPTION: &str = "Stop a running background task by ID.\n\n\
- Takes a task_id: the ID a background Bash command reported when it started\n\
- Returns whether the task was stopped\n\
- Use it to end a long-running background command you no longer need";

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
                "task_id": {"type": "string", "description": "The ID of the background task to stop"},
                "shell_id": {"type": "string", "description": "Deprecated: use task_id instead"}
            },
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
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
