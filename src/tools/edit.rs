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
//!
//! Claude Code's refusals come first, with its texts: a file over 1 GB, a FIFO, socket or
//! device, a name on its device guard's list. The file is written atomically
//! ([`atomic_write`]): on any failure it is left byte for byte as it was. Reading, checking and
//! writing run on blocking threads, the read under [`READ_DEADLINE`].

use serde_json::{Map, Value, json};

use super::atomic_write;
use super::bounded_read::{
    CappedError, OffRuntimeError, OpenError, READ_DEADLINE, off_runtime, open_regular, read_capped,
};
use super::device_guard::{self, SpecialKind};
use super::input::{self, Field, FieldKind};
use super::patch::{COARSE_PATCH_KEY, DIFF_DEADLINE, structured_patch_within};
use super::read::stalled_text;
use super::write::{updated_text, updated_unseen_text, write_error_text};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};
use crate::byte_size::format_size;

/// Largest file Edit changes (Claude Code's 1 GB).
pub const MAX_EDIT_BYTES: u64 = 1024 * 1024 * 1024;
/// Most bytes Edit reads from a file that reports a size of 0 (Claude Code's 10 MB).
pub const MAX_UNSIZED_EDIT_BYTES: u64 = 10 * 1024 * 1024;

pub(crate) const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::required("old_string", FieldKind::String),
    Field::required("new_string", FieldKind::String),
    Field::optional("replace_all", FieldKind::Boolean),
];

const DESCRIPTION: &str = concat!(
    "Changes a file by replacing an exact piece of its text: `old_string` becomes \
`new_string`.\n\n\
Use it for every change to an existing file; use Write only to create a file or to replace \
all of it. Read the file first in this conversation, and copy `old_string` from what Read \
showed, without the line number and tab in front of each line, keeping the indentation \
(tabs or spaces) exactly.\n\n\
Rules:\n\
- `old_string` must occur in the file exactly as given. If it occurs more than once, the \
edit is refused unless `replace_all` is true; otherwise include enough surrounding lines to \
make it unique.\n\
- `replace_all: true` replaces every occurrence (renaming a variable across a file).\n\
- `new_string` must differ from `old_string`. An empty `new_string` deletes the text (a \
whole line with its line break).\n\
- An empty `old_string` creates a file that does not exist (or fills an empty one) with \
`new_string`.\n\
- `file_path` should be absolute; a relative one is taken from the working directory.\n\
- The file is replaced in one step: if anything fails, it stays as it was. Files over 1 GB, \
text that is not UTF-8, and devices or pipes are refused.",
    super::refusal_note!()
);

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
                "file_path": {
                    "type": "string",
                    "description": "Absolute path of the file to change."
                },
                "old_string": {
                    "type": "string",
                    "description": "The exact text to replace, as it is in the file (without Read's line numbers)."
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to put in its place; must differ from old_string."
                },
                "replace_all": {
                    "type": "boolean",
                    "default": false,
                    "description": "true: replace every occurrence of old_string. Default false: it must occur exactly once."
                }
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
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
        // Why only small files here: `prepare` runs on the session's own thread, before any hook;
        // a long read there would hold off signals. Larger files are checked in `execute`.
        match read_current(args.path, CURRENT_CHECK_IN_PREPARE)? {
            Current::Unchecked => {}
            Current::Missing => {
                plan(&args, None, &cwd)?;
            }
            Current::Text(text) => {
                plan(&args, Some(text), &cwd)?;
            }
        }
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match edit(input, ctx).await {
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
        let path = response.get("filePath")?.as_str()?;
        Some(
            if response.get(NOT_IN_CONTEXT_KEY) == Some(&Value::Bool(true)) {
                updated_unseen_text(path)
            } else {
                updated_text(path)
            },
        )
    }
}

/// `tool_response` key Claude Code 2.1.328 adds (`true`) when the edited file's content was
/// never shown to the model this session (fixture `tests/fixtures/cc-2.1.328/texts_files`).
pub const NOT_IN_CONTEXT_KEY: &str = "contentNotInModelContext";

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

async fn edit(input: Value, ctx: &ToolContext) -> Result<ToolOutcome, String> {
    let cwd = ctx.current_dir();
    let path = input
        .get("file_path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let checked = off_runtime(READ_DEADLINE, move || {
        let map = input.as_object().ok_or("The input is malformed")?;
        let args = EditArgs::from_map(map).ok_or_else(|| {
            input::validation_error("Edit", &["The input is malformed".to_string()])
        })?;
        let current = match read_current(args.path, u64::MAX)? {
            Current::Missing => None,
            Current::Text(text) => Some(text),
            // Without a limit every existing file is read; never leave one unchecked.
            Current::Unchecked => {
                return Err(format!(
                    "Error editing {}: the file could not be read",
                    args.path
                ));
            }
        };
        let planned = plan(&args, current, &cwd)?;
        Ok::<_, String>((input, planned))
    })
    .await;
    let (input, planned) = match checked {
        Ok(result) => result?,
        Err(OffRuntimeError::Stalled(after)) => return Err(stalled_text(&path, after)),
        Err(OffRuntimeError::Panicked(e)) => return Err(format!("Error editing {path}: {e}")),
    };
    // Why no deadline from here on: see the Write tool; the write is all or nothing.
    let seen = ctx.is_in_context(&path);
    let job = tokio::task::spawn_blocking(move || write_and_respond(&input, planned, seen));
    match job.await {
        Ok(outcome) => outcome,
        Err(e) => Err(format!("Edit failed: {e}")),
    }
}

/// Writes the edit; `seen`: the model has been shown the file's content this session.
fn write_and_respond(
    input: &Value,
    planned: PlannedEdit,
    seen: bool,
) -> Result<ToolOutcome, String> {
    let map = input.as_object().ok_or("The input is malformed")?;
    let args = EditArgs::from_map(map)
        .ok_or_else(|| input::validation_error("Edit", &["The input is malformed".to_string()]))?;
    if let Some(parent) = std::path::Path::new(args.path).parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("Error editing {}: {e}", args.path))?;
    }
    atomic_write::replace(std::path::Path::new(args.path), planned.updated.as_bytes())
        .map_err(|e| write_error_text("editing", args.path, &e, planned.original.is_some()))?;
    let original = planned.original.unwrap_or_default();
    let patch = structured_patch_within(&original, &planned.updated, DIFF_DEADLINE);
    let mut response = Map::new();
    response.insert("filePath".into(), Value::from(args.path));
    response.insert("oldString".into(), Value::from(args.old));
    response.insert("newString".into(), Value::from(args.new));
    response.insert("originalFile".into(), Value::from(original));
    response.insert("structuredPatch".into(), patch.hunks);
    response.insert("userModified".into(), Value::Bool(false));
    response.insert("replaceAll".into(), Value::Bool(args.replace_all));
    if !seen {
        response.insert(NOT_IN_CONTEXT_KEY.into(), Value::Bool(true));
    }
    if patch.coarse {
        response.insert(COARSE_PATCH_KEY.into(), Value::Bool(true));
    }
    let response = Value::Object(response);
    let content = if seen {
        updated_text(args.path)
    } else {
        updated_unseen_text(args.path)
    };
    Ok(ToolOutcome::Success { response, content })
}

/// The file an edit starts from.
enum Current {
    /// It does not exist.
    Missing,
    /// Its text.
    Text(String),
    /// Not read: larger than the caller's limit.
    Unchecked,
}

/// Largest file `prepare` reads to check an edit before the hooks run.
const CURRENT_CHECK_IN_PREPARE: u64 = 8 * 1024 * 1024;

/// Reads the file to edit with Claude Code's checks and texts, in its order: size, kind, the
/// device guard, then the content (at most [`MAX_EDIT_BYTES`]; a file that reports no size, as
/// `/proc` files do, at most [`MAX_UNSIZED_EDIT_BYTES`]). Files over `limit` bytes, and
/// `/proc` or `/sys` files reporting no size when `limit` is finite, are left [`Current::Unchecked`].
fn read_current(path: &str, limit: u64) -> Result<Current, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Current::Missing),
        Err(e) => return Err(format!("Error reading {path}: {e}")),
    };
    if meta.len() > MAX_EDIT_BYTES {
        return Err(format!(
            "File is too large to edit ({}). Maximum editable file size is {}.",
            format_size(meta.len()),
            format_size(MAX_EDIT_BYTES)
        ));
    }
    if meta.is_dir() {
        return Err(format!(
            "EISDIR: illegal operation on a directory, read '{path}'"
        ));
    }
    if SpecialKind::of(&meta).is_some() {
        return Err(device_guard::not_regular(path, "Edit"));
    }
    if let Some(refusal) = device_guard::refuse_by_name(path) {
        return Err(refusal);
    }
    let unsized_special =
        meta.len() == 0 && (path.starts_with("/proc/") || path.starts_with("/sys/"));
    if meta.len() > limit || (limit != u64::MAX && unsized_special) {
        return Ok(Current::Unchecked);
    }
    let file = match open_regular(std::path::Path::new(path)) {
        Ok((file, _)) => file,
        Err(OpenError::NotFound) => return Ok(Current::Missing),
        Err(OpenError::Directory) => {
            return Err(format!(
                "EISDIR: illegal operation on a directory, read '{path}'"
            ));
        }
        Err(OpenError::Special) => return Err(device_guard::not_regular(path, "Edit")),
        Err(OpenError::Io(e)) => return Err(format!("Error reading {path}: {e}")),
    };
    let cap = if meta.len() == 0 {
        MAX_UNSIZED_EDIT_BYTES
    } else {
        MAX_EDIT_BYTES
    };
    let bytes = match read_capped(&file, cap) {
        Ok(bytes) => bytes,
        Err(CappedError::TooLarge { .. }) if meta.len() == 0 => {
            return Err(format!(
                "File is too large to edit: it reports a size of 0 bytes and holds more than {}.",
                format_size(MAX_UNSIZED_EDIT_BYTES)
            ));
        }
        Err(CappedError::TooLarge { .. }) => {
            return Err(format!(
                "File is too large to edit. Maximum editable file size is {}.",
                format_size(MAX_EDIT_BYTES)
            ));
        }
        Err(CappedError::Io(e)) => return Err(format!("Error reading {path}: {e}")),
    };
    String::from_utf8(bytes)
        .map(Current::Text)
        .map_err(|_| format!("Cannot edit {path}: the file is not valid UTF-8 text."))
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
