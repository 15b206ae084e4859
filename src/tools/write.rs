//! The Write tool: `{file_path, content}` → `{"type":"create"|"update",…}` (spec §7).
//!
//! Parent directories are created. The model sees Claude Code's 2.1.328 text for a new file
//! (golden `stdin-PostToolBatch.json`) and `The file <path> has been updated successfully.` for
//! an overwrite (the Edit text; the 2.1.328 update text was not recorded).
//!
//! Unlike Claude Code, rein does not require the file to have been Read before it is
//! overwritten: rein keeps no per-session file-state cache.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::patch::structured_patch;
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::required("content", FieldKind::String),
];

const DESCRIPTION: &str = "Writes a file to the local filesystem.\n\n\
Usage:\n\
- This tool will overwrite the existing file if there is one at the provided path.\n\
- The file_path parameter must be an absolute path; missing parent directories are created.\n\
- Prefer the Edit tool for changing existing files: it only sends the diff.";

/// The Write tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"},
                "content": {"type": "string", "description": "The content to write to the file"}
            },
            "required": ["file_path", "content"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let mut map = input::normalise(self.name(), input, FIELDS)?;
        input::absolutise_key(&mut map, "file_path", &ctx.current_dir());
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { write(&input).await })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let path = response.get("filePath")?.as_str()?;
        match response.get("type")?.as_str()? {
            "create" => Some(created_text(path)),
            "update" => Some(updated_text(path)),
            _ => None,
        }
    }
}

async fn write(input: &Value) -> ToolOutcome {
    let (Some(path), Some(content)) = (
        input.get("file_path").and_then(Value::as_str),
        input.get("content").and_then(Value::as_str),
    ) else {
        return failure(input::validation_error(
            "Write",
            &["The required parameters `file_path` and `content` must be strings".to_string()],
        ));
    };
    let original = match tokio::fs::read(path).await {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return failure(format!("Error writing {path}: {e}")),
    };
    if let Some(parent) = Path::new(path).parent()
        && let Err(e) = tokio::fs::create_dir_all(parent).await
    {
        return failure(format!("Error writing {path}: {e}"));
    }
    if let Err(e) = tokio::fs::write(path, content).await {
        return failure(format!("Error writing {path}: {e}"));
    }
    let response = write_response(path, content, original.as_deref());
    let content = WriteTool.render(&response).unwrap_or_default();
    ToolOutcome::Success { response, content }
}

/// The response for writing `content` to `path` over `original` (`None`: a new file).
pub fn write_response(path: &str, content: &str, original: Option<&str>) -> Value {
    let mut map = Map::new();
    let (kind, patch) = match original {
        None => ("create", Value::Array(Vec::new())),
        Some(old) => ("update", structured_patch(old, content)),
    };
    map.insert("type".into(), Value::from(kind));
    map.insert("filePath".into(), Value::from(path));
    map.insert("content".into(), Value::from(content));
    map.insert("structuredPatch".into(), patch);
    map.insert(
        "originalFile".into(),
        original.map_or(Value::Null, Value::from),
    );
    map.insert("userModified".into(), Value::Bool(false));
    Value::Object(map)
}

/// Claude Code 2.1.328's text for a created file.
pub fn created_text(path: &str) -> String {
    format!(
        "File created successfully at: {path} (file state is current in your context \u{2014} no need to Read it back)"
    )
}

/// The text for an overwritten or edited file.
pub fn updated_text(path: &str) -> String {
    format!("The file {path} has been updated successfully.")
}

fn failure(error: String) -> ToolOutcome {
    ToolOutcome::Failure {
        error,
        is_interrupt: false,
    }
}
