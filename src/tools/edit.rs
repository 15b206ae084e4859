//! The Edit tool: exact string replacement, `{file_path, old_string, new_string, replace_all}`
//! → `{filePath, oldString, newString, originalFile, structuredPatch, userModified,
//! replaceAll}` (spec §7, golden `stdin-PostToolUse-Edit.json`).
//!
//! `prepare` fills in `replace_all: false` and checks the edit against the file as it is, with
//! Claude Code's texts, so a refused edit fires no hook. `execute` checks again, because a
//! PreToolUse hook may have changed the input or the file in between.
//!
//! An empty `old_string` creates the file with `new_string` (or fills an empty file), as in
//! Claude Code.

use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::patch::structured_patch;
use super::write::updated_text;
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::required("old_string", FieldKind::String),
    Field::required("new_string", FieldKind::String),
    Field::optional("replace_all", FieldKind::Boolean),
];

const DESCRIPTION: &str = "Performs exact string replacements in files.\n\n\
Usage:\n\
- The edit will FAIL if `old_string` is not unique in the file. Either provide a larger string \
with more surrounding context to make it unique or use `replace_all` to change every instance \
of `old_string`.\n\
- Preserve the exact indentation (tabs/spaces) of the text you replace.\n\
- Use `replace_all` for replacing and renaming strings across the file.";

/// The Edit tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

/// A checked edit: the file's text before and after.
struct PlannedEdit {
    original: Option<String>,
    updated: String,
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                "old_string": {"type": "string", "description": "The text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
                "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string (default false)"}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let mut map = input::normalise(self.name(), input, FIELDS)?;
        let cwd = ctx.current_dir();
        input::absolutise_key(&mut map, "file_path", &cwd);
        if !map.contains_key("replace_all") {
            map.insert("replace_all".into(), Value::Bool(false));
        }
        let args = EditArgs::from_map(&map).ok_or_else(|| {
            input::validation_error(self.name(), &["The input is malformed".to_string()])
        })?;
        let current = read_current(args.path)?;
        plan(&args, current, &cwd)?;
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match edit(&input, ctx).await {
                Ok(outcome) => outcome,
                Err(error) => ToolOutcome::Failure {
                    error,
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        response.get("structuredPatch")?.as_array()?;
        Some(updated_text(response.get("filePath")?.as_str()?))
    }
}

struct EditArgs<'a> {
    path: &'a str,
    old: &'a str,
    new: &'a str,
    replace_all: bool,
}

impl<'a> EditArgs<'a> {
    fn from_map(map: &'a Map<String, Value>) -> Option<EditArgs<'a>> {
        Some(EditArgs {
            path: map.get("file_path")?.as_str()?,
            old: map.get("old_string")?.as_str()?,
            new: map.get("new_string")?.as_str()?,
            replace_all: map
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

async fn edit(input: &Value, ctx: &ToolContext) -> Result<ToolOutcome, String> {
    let cwd = ctx.current_dir();
    let map = input.as_object().ok_or("The input is malformed")?;
    let args = EditArgs::from_map(map)
        .ok_or_else(|| input::validation_error("Edit", &["The input is malformed".to_string()]))?;
    let current = read_current(args.path)?;
    let planned = plan(&args, current, &cwd)?;
    if let Some(parent) = std::path::Path::new(args.path).parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| format!("Error editing {}: {e}", args.path))?;
    }
    tokio::fs::write(args.path, &planned.updated)
        .await
        .map_err(|e| format!("Error editing {}: {e}", args.path))?;
    let original = planned.original.unwrap_or_default();
    let mut response = Map::new();
    response.insert("filePath".into(), Value::from(args.path));
    response.insert("oldString".into(), Value::from(args.old));
    response.insert("newString".into(), Value::from(args.new));
    response.insert("originalFile".into(), Value::from(original.as_str()));
    response.insert(
        "structuredPatch".into(),
        structured_patch(&original, &planned.updated),
    );
    response.insert("userModified".into(), Value::Bool(false));
    response.insert("replaceAll".into(), Value::Bool(args.replace_all));
    let response = Value::Object(response);
    let content = updated_text(args.path);
    Ok(ToolOutcome::Success { response, content })
}

/// The file's text, `None` if it does not exist.
fn read_current(path: &str) -> Result<Option<String>, String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("Cannot edit {path}: the file is not valid UTF-8 text.")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Err(format!(
            "EISDIR: illegal operation on a directory, read '{path}'"
        )),
        Err(e) => Err(format!("Error reading {path}: {e}")),
    }
}

/// Checks the edit against `current` with Claude Code's rules and texts.
fn plan(
    args: &EditArgs<'_>,
    current: Option<String>,
    cwd: &std::path::Path,
) -> Result<PlannedEdit, String> {
    if args.old == args.new {
        return Err(
            "No changes to make: old_string and new_string are exactly the same.".to_string(),
        );
    }
    let Some(original) = current else {
        if args.old.is_empty() {
            return Ok(PlannedEdit {
                original: None,
                updated: args.new.to_string(),
            });
        }
        return Err(input::missing_file_error(cwd));
    };
    if args.old.is_empty() {
        if original.trim().is_empty() {
            return Ok(PlannedEdit {
                original: Some(original),
                updated: args.new.to_string(),
            });
        }
        return Err("Cannot create new file - file already exists.".to_string());
    }
    let matches = original.matches(args.old).count();
    if matches == 0 {
        return Err(format!(
            "String to replace not found in file.\nString: {}",
            args.old
        ));
    }
    if matches > 1 && !args.replace_all {
        return Err(format!(
            "Found {matches} matches of the string to replace, but replace_all is false. To \
             replace all occurrences, set replace_all to true. To replace only one occurrence, \
             please provide more context to uniquely identify the instance.\nString: {}",
            args.old
        ));
    }
    // Deleting a whole line takes its newline with it, as in Claude Code: otherwise removing
    // `foo()` from `foo()\nbar()` would leave an empty line behind.
    let with_newline = format!("{}\n", args.old);
    let target =
        if args.new.is_empty() && !args.old.ends_with('\n') && original.contains(&with_newline) {
            with_newline.as_str()
        } else {
            args.old
        };
    let updated = if args.replace_all {
        original.replace(target, args.new)
    } else {
        original.replacen(target, args.new, 1)
    };
    Ok(PlannedEdit {
        original: Some(original),
        updated,
    })
}
