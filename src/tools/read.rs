//! The Read tool: `{file_path, offset?, limit?}` → `{"type":"text","file":{…}}` (spec §7).
//!
//! Line counting follows the golden samples: the text is split on `\n`, so a trailing newline
//! yields a final empty line (`"a\nb\n"` has 3 lines) and `content` is the selected lines joined
//! by `\n` — the whole file reads back byte for byte. The model sees the lines numbered as
//! Claude Code shows them: the number right-aligned in 6 columns, `→`, the line.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// Lines read when the model gives no `limit`.
pub const DEFAULT_LIMIT: usize = 2000;
/// Characters of one line shown to the model; the rest is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Largest file read whole without `offset`/`limit` (Claude Code's 256 KB).
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;

const FIELDS: &[Field] = &[
    Field::required("file_path", FieldKind::String),
    Field::optional("offset", FieldKind::Integer),
    Field::optional("limit", FieldKind::Integer),
];

const DESCRIPTION: &str = "Reads a file from the local filesystem.\n\n\
Usage:\n\
- The file_path parameter must be an absolute path, not a relative path\n\
- By default, it reads up to 2000 lines starting from the beginning of the file\n\
- You can optionally specify a line offset and limit (especially handy for long files)\n\
- Any lines longer than 2000 characters will be truncated\n\
- Results are returned with line numbers starting at 1\n\
- This tool can only read text files, not directories; to list a directory use Bash `ls`";

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
                "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                "offset": {"type": "integer", "minimum": 0, "description": "The line number to start reading from. Only provide if the file is too large to read at once"},
                "limit": {"type": "integer", "exclusiveMinimum": 0, "description": "The number of lines to read. Only provide if the file is too large to read at once."}
            },
            "required": ["file_path"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
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
    let offset = input.get("offset").and_then(Value::as_u64);
    let limit = input.get("limit").and_then(Value::as_u64);
    let meta = match tokio::fs::metadata(path).await {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return failure(input::missing_file_error(&ctx.current_dir()));
        }
        Err(e) => return failure(format!("Error reading {path}: {e}")),
    };
    if meta.is_dir() {
        return failure(format!(
            "EISDIR: illegal operation on a directory, read '{path}'"
        ));
    }
    if offset.is_none() && limit.is_none() && meta.len() > MAX_WHOLE_FILE_BYTES {
        return failure(format!(
            "File content ({} KB) exceeds maximum allowed size ({} KB). Please use offset and \
             limit parameters to read specific portions of the file, or use the Grep tool to \
             search for specific content.",
            meta.len() / 1024,
            MAX_WHOLE_FILE_BYTES / 1024
        ));
    }
    let bytes = match tokio::fs::read(path).await {
        Ok(bytes) => bytes,
        Err(e) => return failure(format!("Error reading {path}: {e}")),
    };
    let text = match decode_text(&bytes) {
        Some(text) => text,
        None => return failure(binary_error(path)),
    };
    let response = text_response(path, &text, offset, limit);
    let content = ReadTool.render(&response).unwrap_or_default();
    ToolOutcome::Success { response, content }
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
        out.push_str(&format!("{:>6}\u{2192}{shown}", start + i as u64));
    }
    out
}

/// UTF-8 text, or `None` for binary content (a NUL byte in the first 8 KiB, or invalid UTF-8).
fn decode_text(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(8192)];
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
