//! The Write tool: `{file_path, content}` → `{"type":"create"|"update",…}` (spec §7).
//!
//! Parent directories are created. The model sees Claude Code's 2.1.328 text for a new file
//! (golden `stdin-PostToolBatch.json`) and `The file <path> has been updated successfully.` for
//! an overwrite (the Edit text; the 2.1.328 update text was not recorded).
//!
//! Unlike Claude Code, rein does not require the file to have been Read before it is
//! overwritten: rein keeps no per-session file-state cache.
//!
//! The content is written atomically ([`atomic_write`]): a full disk or any other failure leaves
//! the old file byte for byte. A directory, FIFO, socket or device at the path is refused with
//! Claude Code's texts before anything is opened; the old content is read (for `originalFile`
//! and the patch) only up to [`MAX_ORIGINAL_BYTES`], past which Claude Code sends neither.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::atomic_write::{self, WriteError};
use super::bounded_read::{
    CappedError, OffRuntimeError, OpenError, READ_DEADLINE, off_runtime, open_regular, read_capped,
};
use super::device_guard::{self, SpecialKind};
use super::input::{self, Field, FieldKind};
use super::patch::{COARSE_PATCH_KEY, DIFF_DEADLINE, Patch, structured_patch_within};
use super::read::stalled_text;
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Largest old content Write reads back for `originalFile` and the patch (Claude Code's 10 MB).
pub const MAX_ORIGINAL_BYTES: u64 = 10 * 1024 * 1024;

pub(crate) const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::required("content", FieldKind::String),
];

const DESCRIPTION: &str = concat!(
    "Writes a whole file: creates it (and any missing parent directories) or replaces \
everything in it with `content`.\n\n\
Use it for new files and for rewriting a file from scratch. To change part of an existing \
file use Edit: it sends only the change and cannot drop text by accident. Read an existing \
file before you overwrite it, so you know what you replace.\n\n\
Limits:\n\
- `file_path` should be absolute; a relative one is taken from the working directory.\n\
- The file is replaced in one step: if anything fails, the old file stays as it was.\n\
- A directory, pipe, socket or device at the path is refused.\n\
- Do not create files the task does not need (summaries, notes, backups).",
    super::refusal_note!()
);

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
                "file_path": {
                    "type": "string",
                    "description": "Absolute path of the file to create or replace."
                },
                "content": {
                    "type": "string",
                    "description": "The file's complete new text."
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let mut map = input::normalise(self.name(), input, FIELDS)?;
        input::absolutise_key(&mut map, "file_path", &ctx.current_dir());
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let path = input
                .get("file_path")
                .and_then(Value::as_str)
                .map(str::to_string);
            let outcome = write(input).await;
            if let (ToolOutcome::Success { .. }, Some(path)) = (&outcome, path) {
                ctx.mark_in_context(&path);
            }
            outcome
        })
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

async fn write(input: Value) -> ToolOutcome {
    let (Some(path), Some(content)) = (
        input.get("file_path").and_then(Value::as_str),
        input.get("content").and_then(Value::as_str),
    ) else {
        return failure(input::validation_error(
            "Write",
            &["The required parameters `file_path` and `content` must be strings".to_string()],
        ));
    };
    let path = path.to_string();
    let checked = {
        let path = path.clone();
        off_runtime(READ_DEADLINE, move || read_original(&path)).await
    };
    let original = match checked {
        Ok(Ok(original)) => original,
        Ok(Err(error)) => return failure(error),
        Err(OffRuntimeError::Stalled(after)) => return failure(stalled_text(&path, after)),
        Err(OffRuntimeError::Panicked(e)) => return failure(format!("Error writing {path}: {e}")),
    };
    let content = content.to_string();
    // Why no deadline: a write cut off by one would be reported as failed and land later. The
    // temp file and rename make it all or nothing, and a signal still ends rein (the runtime
    // shuts down with its own deadline).
    let job = tokio::task::spawn_blocking(move || {
        write_content(&path, &content, original.is_some())
            .map(|()| write_response(&path, &content, &original))
    });
    match job.await {
        Ok(Ok(response)) => {
            let content = WriteTool.render(&response).unwrap_or_default();
            ToolOutcome::Success { response, content }
        }
        Ok(Err(error)) => failure(error),
        Err(e) => failure(format!("Write failed: {e}")),
    }
}

/// What Write knows of the file it replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Original {
    /// Its text (invalid UTF-8 shown lossily).
    Text(String),
    /// Over [`MAX_ORIGINAL_BYTES`]: not read, as Claude Code does not.
    TooLargeToShow,
}

/// Checks the target as Claude Code does and reads what it holds (`None`: a new file).
fn read_original(path: &str) -> Result<Option<Original>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("Error writing {path}: {e}")),
    };
    if meta.is_dir() {
        return Err(format!(
            "{path} is a directory, not a file. To create a file inside it, include the file \
             name in file_path."
        ));
    }
    if SpecialKind::of(&meta).is_some() {
        return Err(device_guard::not_regular(path, "Write"));
    }
    if let Some(refusal) = device_guard::refuse_by_name(path) {
        return Err(refusal);
    }
    if meta.len() > MAX_ORIGINAL_BYTES {
        return Ok(Some(Original::TooLargeToShow));
    }
    let file = match open_regular(Path::new(path)) {
        Ok((file, _)) => file,
        Err(OpenError::NotFound) => return Ok(None),
        Err(OpenError::Directory | OpenError::Special) => {
            return Err(device_guard::not_regular(path, "Write"));
        }
        Err(OpenError::Io(e)) => return Err(format!("Error writing {path}: {e}")),
    };
    match read_capped(&file, MAX_ORIGINAL_BYTES) {
        Ok(bytes) => Ok(Some(Original::Text(
            String::from_utf8_lossy(&bytes).into_owned(),
        ))),
        Err(CappedError::TooLarge { .. }) => Ok(Some(Original::TooLargeToShow)),
        Err(CappedError::Io(e)) => Err(format!("Error writing {path}: {e}")),
    }
}

/// Creates the parent directories and replaces the file's content atomically.
fn write_content(path: &str, content: &str, existed: bool) -> Result<(), String> {
    if let Some(parent) = Path::new(path).parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return Err(format!("Error writing {path}: {e}"));
    }
    atomic_write::replace(Path::new(path), content.as_bytes())
        .map(|_| ())
        .map_err(|e| write_error_text("writing", path, &e, existed))
}

/// The model-facing text for a failed write (`doing`: "writing", "editing"): what went wrong,
/// and that the file is as it was.
pub(crate) fn write_error_text(
    doing: &str,
    path: &str,
    error: &WriteError,
    existed: bool,
) -> String {
    let left = if existed {
        "the file was left as it was"
    } else {
        "no file was created"
    };
    format!("Error {doing} {path}: {error}; {left}.")
}

/// The response for writing `content` to `path` over `original` (`None`: a new file).
///
/// Over a file larger than [`MAX_ORIGINAL_BYTES`] the response has an empty `structuredPatch`
/// and a null `originalFile`, as Claude Code's.
pub fn write_response(path: &str, content: &str, original: &Option<Original>) -> Value {
    let mut map = Map::new();
    let (kind, patch, original) = match original {
        None => ("create", Patch::empty(), Value::Null),
        Some(Original::TooLargeToShow) => ("update", Patch::empty(), Value::Null),
        Some(Original::Text(old)) => (
            "update",
            structured_patch_within(old, content, DIFF_DEADLINE),
            Value::from(old.as_str()),
        ),
    };
    map.insert("type".into(), Value::from(kind));
    map.insert("filePath".into(), Value::from(path));
    map.insert("content".into(), Value::from(content));
    map.insert("structuredPatch".into(), patch.hunks);
    map.insert("originalFile".into(), original);
    map.insert("userModified".into(), Value::Bool(false));
    if patch.coarse {
        map.insert(COARSE_PATCH_KEY.into(), Value::Bool(true));
    }
    Value::Object(map)
}

/// Claude Code 2.1.328's text for a created file.
pub fn created_text(path: &str) -> String {
    format!(
        "File created successfully at: {path} (file state is current in your context \u{2014} no need to Read it back)"
    )
}

/// Claude Code 2.1.328's text for an overwritten file, or an edited one whose content the
/// model had seen.
pub fn updated_text(path: &str) -> String {
    format!(
        "The file {path} has been updated successfully. (file state is current in your context \u{2014} no need to Read it back)"
    )
}

/// Claude Code 2.1.328's text for an edited file whose content the model had not seen
/// (`contentNotInModelContext`).
pub fn updated_unseen_text(path: &str) -> String {
    format!("The file {path} has been updated successfully.")
}

fn failure(error: String) -> ToolOutcome {
    ToolOutcome::Failure {
        error,
        is_interrupt: false,
    }
}
