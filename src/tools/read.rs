//! The Read tool: `{file_path, offset?, limit?}` → `{"type":"text","file":{…}}` (spec §7).
//!
//! Line counting follows the golden samples: the text is split on `\n`, so a trailing newline
//! yields a final empty line (`"a\nb\n"` has 3 lines) and `content` is the selected lines joined
//! by `\n` — the whole file reads back byte for byte. The model sees the lines numbered as
//! Claude Code 2.1.328 shows them: the number, a tab, the line (`1\tline one`; fixture
//! `tests/fixtures/cc-2.1.328/texts_files`).
//!
//! Limits and refusals are Claude Code 2.1.328's, with its texts:
//! - devices, pipes, sockets and the `/proc`/`/dev` names of its device guard are refused
//!   before any `open` ([`device_guard`]);
//! - without a `limit`, a file over 256 KB is refused (`File content (<size>) exceeds maximum
//!   allowed size (256KB). …`) and the file is read whole, at most that much;
//! - with a `limit`, the file is streamed: only the requested lines are kept, the rest are
//!   counted for `totalLines`, and a range over 3.2 MB of text is refused;
//! - either way, content over 25,000 tokens (estimated) is refused.
//!
//! All file access runs on a blocking thread under [`READ_DEADLINE`].

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::bounded_read::{
    CappedError, OffRuntimeError, OpenError, READ_DEADLINE, WindowError, WindowRequest,
    off_runtime, open_regular, read_capped, read_window,
};
use super::device_guard::{self, NameClass};
use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};
use crate::byte_size::format_size;

/// Lines read when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown to the model; the rest is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Largest file read without a `limit` (Claude Code's 256 KB).
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;
/// Tokens one read may return (Claude Code's default; `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`
/// overrides it).
pub const DEFAULT_MAX_TOKENS: u64 = 25_000;
/// Bytes a line range may hold per token of the budget (Claude Code's ratio: 25,000 tokens allow
/// a range of 3.2 MB, past which it is refused without counting).
const BYTES_PER_TOKEN_CAP: u64 = 128;
/// Most bytes read from a file that reports no size (`/proc`-style) before giving up (Claude
/// Code's hard cap for streams).
const MAX_UNSIZED_BYTES: u64 = 128 * 1024 * 1024;
/// Bytes at the start of a file in which a NUL byte marks it binary.
const BINARY_SNIFF_BYTES: usize = 8192;

pub(crate) const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::optional("offset", FieldKind::Integer),
    Field::optional("limit", FieldKind::Integer),
];

const DESCRIPTION: &str = concat!(
    "Reads a text file and returns its lines numbered from 1, each as the number, a tab, \
then the line.\n\n\
Use it rather than cat, head or tail in Bash, and before you change a file: Edit and Write \
work best on a file whose current text you have read in this conversation.\n\n\
Limits:\n\
- `file_path` should be absolute; a relative one is taken from the working directory.\n\
- Without `limit`: the first 2000 lines, and a file over 256 KB is refused; read it in \
parts with `offset` and `limit`, or search it with Grep.\n\
- With `limit`: that many lines from line `offset` (1 = the first line), from a file of any \
size.\n\
- One answer holds at most about 25000 tokens; a bigger range is refused, so ask for fewer \
lines.\n\
- Lines longer than 2000 characters are cut.\n\
- Text files only: a directory (list it with `ls` in Bash), a binary file, a device or a \
pipe is refused.",
    super::refusal_note!()
);

/// The Read tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "Read"
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
                    "description": "Absolute path of the file to read."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Line number to start at (1 = the first line). Only for a file too long to read at once."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "How many lines to read from offset. Only for a file too long to read at once."
                }
            },
            "required": ["file_path"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let mut map = input::normalise(self.name(), input, FIELDS)?;
        input::absolutise_key(&mut map, "file_path", &ctx.current_dir());
        for key in ["offset", "limit"] {
            if map.get(key).and_then(Value::as_i64).is_some_and(|n| n < 0) {
                return Err(input::validation_error(
                    self.name(),
                    &[format!("The parameter `{key}` must not be negative")],
                ));
            }
        }
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { read(&input, ctx).await })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let file = response.get("file")?;
        if response.get("type")?.as_str()? != "text" {
            return None;
        }
        let content = file.get("content")?.as_str()?;
        let start = file.get("startLine")?.as_u64()?;
        let total = file.get("totalLines")?.as_u64()?;
        Some(render_text(content, start, total))
    }
}

async fn read(input: &Value, ctx: &ToolContext) -> ToolOutcome {
    let Some(path) = input.get("file_path").and_then(Value::as_str) else {
        return failure(input::validation_error(
            "Read",
            &["The required parameter `file_path` is missing".to_string()],
        ));
    };
    let request = ReadRequest {
        path: path.to_string(),
        offset: input.get("offset").and_then(Value::as_u64),
        limit: input.get("limit").and_then(Value::as_u64),
        cwd: ctx.current_dir(),
        max_tokens: max_tokens(),
    };
    let response = match off_runtime(READ_DEADLINE, move || read_file(&request)).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return failure(error),
        Err(OffRuntimeError::Stalled(after)) => return failure(stalled_text(path, after)),
        Err(OffRuntimeError::Panicked(e)) => return failure(format!("Error reading {path}: {e}")),
    };
    let content = ReadTool.render(&response).unwrap_or_default();
    ctx.mark_in_context(path);
    ToolOutcome::Success { response, content }
}

/// The model-facing text for a read that did not finish within its deadline.
pub fn stalled_text(path: &str, after: std::time::Duration) -> String {
    format!(
        "Error reading {path}: no answer within {} s; it may be on a file system that does not \
         respond, or a file that blocks like a pipe.",
        after.as_secs()
    )
}

/// One Read call, owned so it can move to a blocking thread.
struct ReadRequest {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
    cwd: PathBuf,
    max_tokens: u64,
}

/// The token budget of one read: `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS` when it is a positive
/// number, else Claude Code's default.
fn max_tokens() -> u64 {
    std::env::var("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS)
}

/// Reads the file of `request` with Claude Code's checks, in its order: the device guard by
/// name, then what the path is, then the limits.
fn read_file(request: &ReadRequest) -> Result<Value, String> {
    let path = request.path.as_str();
    if let Some(refusal) = device_guard::refuse_by_name(path) {
        return Err(refusal);
    }
    let (file, meta) = match open_regular(Path::new(path)) {
        Ok(opened) => opened,
        Err(OpenError::NotFound) => return Err(input::missing_file_error(&request.cwd)),
        Err(OpenError::Directory) => {
            return Err(format!(
                "EISDIR: illegal operation on a directory, read '{path}'"
            ));
        }
        Err(OpenError::Special) => {
            return Err(device_guard::cannot_read(
                path,
                NameClass::DeviceOrProcessFile,
            ));
        }
        Err(OpenError::Io(e)) => return Err(format!("Error reading {path}: {e}")),
    };
    let response = match request.limit {
        None => {
            if meta.len() > MAX_WHOLE_FILE_BYTES {
                return Err(size_error(meta.len()));
            }
            let bytes = match read_capped(&file, MAX_WHOLE_FILE_BYTES) {
                Ok(bytes) => bytes,
                Err(CappedError::TooLarge { read }) => return Err(size_error(read)),
                Err(CappedError::Io(e)) => return Err(format!("Error reading {path}: {e}")),
            };
            let text = decode_text(&bytes).ok_or_else(|| binary_error(path))?;
            text_response(path, &text, request.offset, None)
        }
        Some(limit) => {
            let start = request.offset.unwrap_or(1).max(1);
            let mut head = vec![0u8; BINARY_SNIFF_BYTES];
            let n = file.read_at(&mut head, 0).unwrap_or(0);
            if head[..n].contains(&0) {
                return Err(binary_error(path));
            }
            let wanted = WindowRequest {
                first: start - 1,
                count: limit,
                max_selected_bytes: request.max_tokens.saturating_mul(BYTES_PER_TOKEN_CAP),
                max_unsized_bytes: MAX_UNSIZED_BYTES,
            };
            let window = match read_window(&file, &meta, wanted) {
                Ok(window) => window,
                Err(WindowError::SelectionTooLarge) => {
                    return Err(selection_error(wanted.max_selected_bytes));
                }
                Err(WindowError::UnsizedTooLarge { read }) => {
                    return Err(format!(
                        "File content ({}) exceeds maximum allowed size ({}). {READ_LESS}",
                        format_size(read),
                        format_size(MAX_UNSIZED_BYTES)
                    ));
                }
                Err(WindowError::Io(e)) => return Err(format!("Error reading {path}: {e}")),
            };
            let content = String::from_utf8(window.content).map_err(|_| binary_error(path))?;
            window_response(path, content, window.lines, start, window.total_lines)
        }
    };
    let content = response["file"]["content"].as_str().unwrap_or_default();
    let tokens = estimate_tokens(content, path);
    if tokens > request.max_tokens {
        return Err(format!(
            "File content ({tokens} tokens) exceeds maximum allowed tokens ({}). {READ_LESS}",
            request.max_tokens
        ));
    }
    Ok(response)
}

/// Claude Code's advice after each of its size and token errors.
const READ_LESS: &str = "Use offset and limit parameters to read specific portions of the file, \
or search for specific content instead of reading the whole file.";

/// Claude Code's text for a whole-file read over [`MAX_WHOLE_FILE_BYTES`].
fn size_error(bytes: u64) -> String {
    format!(
        "File content ({}) exceeds maximum allowed size ({}). {READ_LESS}",
        format_size(bytes),
        format_size(MAX_WHOLE_FILE_BYTES)
    )
}

/// Claude Code's text for a line range whose text is over `max` bytes.
fn selection_error(max: u64) -> String {
    format!(
        "The requested line range contains over {} of text, more than a read can return. Use a \
         smaller limit \u{2014} or, if a single line is this large, no limit will fit it: search \
         for specific content instead.",
        format_size(max)
    )
}

/// Claude Code's rough token count: characters over 4 (over 2 for JSON, which tokenizes
/// densely).
///
/// Why an estimate: Claude Code asks the API to count when its estimate is near the limit; rein
/// runs offline by default and stays with the estimate.
fn estimate_tokens(content: &str, path: &str) -> u64 {
    let per_token = match Path::new(path).extension().and_then(|e| e.to_str()) {
        Some("json" | "jsonl" | "jsonc") => 2.0,
        _ => 4.0,
    };
    // JavaScript string length: UTF-16 code units.
    (content.encode_utf16().count() as f64 / per_token).round() as u64
}

/// The text response for a window read by [`read_window`].
fn window_response(path: &str, content: String, lines: u64, start: u64, total: u64) -> Value {
    let mut file = Map::new();
    file.insert("filePath".into(), Value::from(path));
    file.insert("content".into(), Value::from(content));
    file.insert("numLines".into(), Value::from(lines));
    file.insert("startLine".into(), Value::from(start));
    file.insert("totalLines".into(), Value::from(total));
    json!({"type": "text", "file": file})
}

/// The `{"type":"text","file":{…}}` response for `text` with the given window.
///
/// `offset` is the 1-based first line (0 is taken as 1, as Claude Code does).
pub fn text_response(path: &str, text: &str, offset: Option<u64>, limit: Option<u64>) -> Value {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    let start = offset.unwrap_or(1).max(1) as usize;
    let limit = limit.map_or(DEFAULT_LIMIT, |l| l as usize);
    let from = (start - 1).min(total);
    let to = from.saturating_add(limit).min(total);
    let selected = &lines[from..to];
    let mut file = Map::new();
    file.insert("filePath".into(), Value::from(path));
    file.insert("content".into(), Value::from(selected.join("\n")));
    file.insert("numLines".into(), Value::from(selected.len()));
    file.insert("startLine".into(), Value::from(start));
    file.insert("totalLines".into(), Value::from(total));
    json!({"type": "text", "file": file})
}

/// The numbered lines the model sees for a text window, or Claude Code's warnings for an empty
/// file and an offset past the end.
pub fn render_text(content: &str, start: u64, total: u64) -> String {
    if content.is_empty() {
        if total <= 1 && start <= 1 {
            return "<system-reminder>Warning: the file exists but the contents are empty.\
                    </system-reminder>"
                .to_string();
        }
        if start > total {
            return format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided \
                 offset ({start}). The file has {total} lines.</system-reminder>"
            );
        }
    }
    let mut out = String::with_capacity(content.len() + content.len() / 8);
    for (i, line) in content.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let shown = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => &line[..cut],
            None => line,
        };
        out.push_str(&format!("{}\t{shown}", start + i as u64));
    }
    out
}

/// UTF-8 text, or `None` for binary content (a NUL byte in the first 8 KiB, or invalid UTF-8).
fn decode_text(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if head.contains(&0) {
        return None;
    }
    String::from_utf8(bytes.to_vec()).ok()
}

fn binary_error(path: &str) -> String {
    let kind = match Path::new(path).extension() {
        Some(ext) => format!("binary .{} file", ext.to_string_lossy()),
        None => "binary file".to_string(),
    };
    format!(
        "This tool cannot read binary files. The file appears to be a {kind}. \
         Please use appropriate tools for binary file analysis."
    )
}

fn failure(error: String) -> ToolOutcome {
    ToolOutcome::Failure {
        error,
        is_interrupt: false,
    }
}
