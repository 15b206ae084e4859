//! The NotebookEdit tool (Claude Code 2.1.328's name, input schema, result texts and
//! `tool_response`; fixture `tests/fixtures/cc-2.1.328/notebook_edit`): replaces, inserts or
//! deletes one cell of a Jupyter notebook.
//!
//! - The notebook must have been read in this session (as Claude Code requires), and a
//!   `cell_id` that names no cell is refused; both before any hook, as Claude Code does.
//! - `replace` sets the cell's `source` to `new_source` as one string (a `cell_type` given
//!   changes the type); `insert` adds a cell after `cell_id` (first without one) with a new
//!   8-hex-digit id; `delete` removes it.
//! - The file is written back as Claude Code writes it (one-space indent, key order kept, a
//!   final newline), atomically: a failure leaves the old file byte for byte.
//! - `tool_response`: `new_source`, `old_source` (not for an insert), `cell_type` (the input's,
//!   else `code`, as Claude Code reports it), `language`, `edit_mode`, `cell_id`, `error`,
//!   `notebook_path`, `original_file`, `updated_file`.

#![deny(missing_docs)]

use std::path::Path;

use serde_json::{Map, Value, json};

use super::atomic_write;
use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

pub(crate) const FIELDS: &[Field] = &[
    Field::required("notebook_path", FieldKind::String),
    Field::optional("cell_id", FieldKind::String),
    Field::required("new_source", FieldKind::String),
    Field::optional("cell_type", FieldKind::Enum(&["code", "markdown"])),
    Field::optional(
        "edit_mode",
        FieldKind::Enum(&["replace", "insert", "delete"]),
    ),
];

/// Largest notebook read (a notebook is JSON read whole).
const MAX_NOTEBOOK_BYTES: u64 = 50 * 1024 * 1024;

const DESCRIPTION: &str = concat!(
    "Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, \
or deletes one.\n\n\
- Read the notebook first in this conversation; the call is refused otherwise.\n\
- `notebook_path` must be absolute.\n\
- `cell_id` is the cell's `id` as the notebook has it. `replace` and `delete` need it; \
`insert` puts the new cell after it, or first when it is left out, and needs `cell_type`.\n\
- `edit_mode` is `replace` (the default), `insert` or `delete`.",
    super::refusal_note!()
);

/// The NotebookEdit tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEditTool;

fn text<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// The notebook's JSON, or the model-facing reason it cannot be edited.
fn load(path: &Path) -> Result<(String, Value), String> {
    let meta = std::fs::metadata(path)
        .map_err(|_| format!("Notebook file does not exist: {}", path.to_string_lossy()))?;
    if meta.len() > MAX_NOTEBOOK_BYTES {
        return Err(format!(
            "Notebook is too large to edit ({} bytes; at most {MAX_NOTEBOOK_BYTES})",
            meta.len()
        ));
    }
    let raw = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read notebook {}: {e}", path.display()))?;
    let nb: Value = serde_json::from_str(&raw)
        .map_err(|e| format!("Notebook is not valid JSON: line {}: {e}", e.line()))?;
    if !nb.get("cells").is_some_and(Value::is_array) {
        return Err("Notebook has no `cells` list".to_string());
    }
    Ok((raw, nb))
}

fn cell_index(nb: &Value, id: &str) -> Option<usize> {
    nb["cells"]
        .as_array()?
        .iter()
        .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
}

fn language(nb: &Value) -> String {
    nb.pointer("/metadata/language_info/name")
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_string()
}

/// The notebook as Claude Code writes it: `JSON.stringify(nb, null, 1)` and a newline.
fn serialise(nb: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    if serde::Serialize::serialize(nb, &mut ser).is_err() {
        return nb.to_string();
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    text
}

fn new_cell_id() -> String {
    crate::id::uuid_v4().replace('-', "")[..8].to_string()
}

impl Tool for NotebookEditTool {
    fn name(&self) -> &str {
        "NotebookEdit"
    }

    fn deferred(&self) -> bool {
        true
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": super::SCHEMA_DIALECT,
            "type": "object",
            "properties": {
                "notebook_path": {"description": "Absolute path of the notebook (.ipynb) to change.", "type": "string"},
                "cell_id": {"description": "The `id` of the cell to change; for insert, the cell the new one goes after (first if left out).", "type": "string"},
                "new_source": {"description": "The cell's new source.", "type": "string"},
                "cell_type": {"description": "code or markdown; needed for insert, else the cell keeps its type.", "type": "string", "enum": ["code", "markdown"]},
                "edit_mode": {"description": "replace (default), insert or delete.", "type": "string", "enum": ["replace", "insert", "delete"]}
            },
            "required": ["notebook_path", "new_source"],
            "additionalProperties": false
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let map = input::normalise(self.name(), input, FIELDS)?;
        let input = Value::Object(map);
        let path_text = text(&input, "notebook_path").unwrap_or_default();
        let path = Path::new(path_text);
        if !path.is_absolute() {
            return Err("notebook_path must be an absolute path".to_string());
        }
        if path.extension().is_none_or(|x| x != "ipynb") {
            return Err(
                "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool."
                    .to_string(),
            );
        }
        let mode = text(&input, "edit_mode").unwrap_or("replace");
        if !matches!(mode, "replace" | "insert" | "delete") {
            return Err("Edit mode must be replace, insert, or delete.".to_string());
        }
        if mode == "insert" && text(&input, "cell_type").is_none() {
            return Err("Cell type is required when using edit_mode=insert.".to_string());
        }
        if !ctx.is_in_context(path_text) {
            return Err(
                "File has not been read yet. Read it first before writing to it.".to_string(),
            );
        }
        let (_, nb) = load(path)?;
        match text(&input, "cell_id") {
            Some(id) if cell_index(&nb, id).is_none() => {
                return Err(format!("Cell with ID \"{id}\" not found in notebook."));
            }
            None if mode != "insert" => {
                return Err("Cell ID must be specified when not inserting a new cell.".to_string());
            }
            _ => {}
        }
        Ok(input)
    }

    fn execute<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let fail = |error: String| ToolOutcome::Failure {
                error,
                is_interrupt: false,
            };
            let path_text = text(&input, "notebook_path")
                .unwrap_or_default()
                .to_string();
            let path = Path::new(&path_text);
            let (original, mut nb) = match load(path) {
                Ok(loaded) => loaded,
                Err(e) => return fail(e),
            };
            let mode = text(&input, "edit_mode").unwrap_or("replace").to_string();
            let new_source = text(&input, "new_source").unwrap_or_default().to_string();
            let cell_type = text(&input, "cell_type").map(str::to_string);
            let given_id = text(&input, "cell_id").map(str::to_string);
            let language = language(&nb);
            let index = given_id.as_deref().and_then(|id| cell_index(&nb, id));
            let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else {
                return fail("Notebook has no `cells` list".to_string());
            };
            let source_of = |cell: &Value| match cell.get("source") {
                Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            let (cell_id, old_source, content) = match mode.as_str() {
                "insert" => {
                    let id = new_cell_id();
                    let kind = cell_type.clone().unwrap_or_else(|| "code".to_string());
                    let mut cell = Map::new();
                    cell.insert("cell_type".into(), json!(kind));
                    cell.insert("id".into(), json!(id));
                    cell.insert("source".into(), json!(new_source));
                    cell.insert("metadata".into(), json!({}));
                    if kind == "code" {
                        cell.insert("execution_count".into(), Value::Null);
                        cell.insert("outputs".into(), json!([]));
                    }
                    let at = index.map_or(0, |i| i + 1);
                    cells.insert(at, Value::Object(cell));
                    let content = format!("Inserted cell {id} with {new_source}");
                    (id, None, content)
                }
                other => {
                    let (Some(i), Some(id)) = (index, given_id.clone()) else {
                        return fail(format!(
                            "Cell with ID \"{}\" not found in notebook.",
                            given_id.unwrap_or_default()
                        ));
                    };
                    let old = source_of(&cells[i]);
                    if other == "delete" {
                        cells.remove(i);
                        (id.clone(), Some(old), format!("Deleted cell {id}"))
                    } else {
                        let cell = &mut cells[i];
                        cell["source"] = json!(new_source);
                        if let Some(kind) = &cell_type {
                            cell["cell_type"] = json!(kind);
                        }
                        if cell["cell_type"] == "code" {
                            // A replaced code cell's old outputs no longer belong to it.
                            if let Some(outputs) = cell.get_mut("outputs") {
                                *outputs = json!([]);
                            }
                            if cell.get("execution_count").is_some() {
                                cell["execution_count"] = Value::Null;
                            }
                        }
                        let content = format!("Updated cell {id} with {new_source}");
                        (id, Some(old), content)
                    }
                }
            };
            let updated = serialise(&nb);
            let written = tokio::task::spawn_blocking({
                let path = path.to_path_buf();
                let bytes = updated.clone().into_bytes();
                move || atomic_write::replace(&path, &bytes)
            })
            .await;
            match written {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return fail(format!("Cannot write notebook {path_text}: {e}")),
                Err(_) => return fail("NotebookEdit crashed while writing".to_string()),
            }
            let mut response = Map::new();
            response.insert("new_source".into(), json!(new_source));
            if let Some(old) = old_source {
                response.insert("old_source".into(), json!(old));
            }
            response.insert(
                "cell_type".into(),
                json!(cell_type.unwrap_or_else(|| "code".to_string())),
            );
            response.insert("language".into(), json!(language));
            response.insert("edit_mode".into(), json!(mode));
            response.insert("cell_id".into(), json!(cell_id));
            response.insert("error".into(), json!(""));
            response.insert("notebook_path".into(), json!(path_text));
            response.insert("original_file".into(), json!(original));
            response.insert("updated_file".into(), json!(updated));
            ToolOutcome::Success {
                response: Value::Object(response),
                content,
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let id = response.get("cell_id")?.as_str()?;
        let source = response.get("new_source")?.as_str()?;
        Some(match response.get("edit_mode")?.as_str()? {
            "insert" => format!("Inserted cell {id} with {source}"),
            "delete" => format!("Deleted cell {id}"),
            _ => format!("Updated cell {id} with {source}"),
        })
    }
}
