//! The Glob tool: `{pattern, path?}` → `{durationMs, numFiles, filenames, truncated}` (spec §7).
//!
//! Rules, each a decision where Claude Code is loose:
//! - The pattern is matched against the path relative to the search directory with standard
//!   glob semantics (`*` stays inside one directory, `**` crosses them): `*.rs` finds top-level
//!   files only, `**/*.rs` all of them. A literal leading part (`src/**`, or an absolute
//!   `/abs/dir/*.txt`) narrows the walk.
//! - The walk honours `.gitignore`, `.ignore` and `.rgignore` like ripgrep, also outside a git
//!   repository (a `.gitignore` states intent either way), and skips hidden files unless the
//!   pattern itself names a dot-entry (`.github/**`, `**/.env`).
//! - Results are sorted by modification time, newest first (ties by path), and capped at
//!   [`MAX_RESULTS`]; `truncated` says whether more matched. Only the newest [`MAX_RESULTS`]
//!   are kept while walking, so a tree of a million matches costs no more than a hundred.
//! - `filenames` are relative to the session cwd when inside it (as observed), else absolute.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use globset::GlobBuilder;
use serde_json::{Map, Value, json};

use super::input::{self, Field, FieldKind};
use super::newest::Newest;
use super::{BoxFuture, ReadFilter, Tool, ToolContext, ToolOutcome};

/// Most filenames returned.
pub const MAX_RESULTS: usize = 100;
/// Appended for the model when results were cut.
pub const TRUNCATED_NOTE: &str =
    "(Results are truncated. Consider using a more specific path or pattern.)";

pub(crate) const FIELDS: &[Field] = &[
    Field::required("pattern", FieldKind::String),
    Field::optional("path", FieldKind::String),
];

const DESCRIPTION: &str = concat!(
    "Finds files whose path matches a glob pattern and returns their paths, most recently \
modified first.\n\n\
Use it to find files by name or extension (\"**/*.rs\", \"src/**/test_*.py\"). To find \
files by what they contain use Grep; to list one directory, `ls` in Bash.\n\n\
Rules:\n\
- The pattern is matched against the path relative to `path` (default: the working \
directory). `*` stays within one directory and `**` crosses directories, so \"*.rs\" finds \
only the files directly in it and \"**/*.rs\" finds them at any depth. `{a,b}` and `[abc]` \
work as usual.\n\
- Files ignored by .gitignore, .ignore or .rgignore are left out, and so are hidden files \
and directories unless the pattern names them (\".github/**\", \"**/.env\").\n\
- At most 100 paths are returned; when more match, the answer says so: narrow the pattern \
or the path.\n\
- Paths inside the working directory are shown relative to it, others absolute.",
    super::refusal_note!()
);

/// The Glob tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool;

impl Tool for GlobTool {
    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The glob to match, e.g. \"**/*.ts\" or \"docs/*.md\"."
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search in (absolute, or relative to the working directory). Leave it out to search the working directory; never send \"undefined\" or \"null\"."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false,
            "$schema": super::SCHEMA_DIALECT
        })
    }

    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String> {
        let mut map = input::normalise(self.name(), input, FIELDS)?;
        input::absolutise_key(&mut map, "path", &ctx.current_dir());
        Ok(Value::Object(map))
    }

    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let cwd = ctx.current_dir();
            let filter = ctx.read_filter.clone();
            let outcome =
                tokio::task::spawn_blocking(move || glob(&input, &cwd, filter.as_ref())).await;
            match outcome {
                Ok(Ok(response)) => {
                    let content = GlobTool.render(&response).unwrap_or_default();
                    ToolOutcome::Success { response, content }
                }
                Ok(Err(error)) => ToolOutcome::Failure {
                    error,
                    is_interrupt: false,
                },
                Err(e) => ToolOutcome::Failure {
                    error: format!("Glob failed: {e}"),
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let names = response.get("filenames")?.as_array()?;
        let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
        if names.is_empty() {
            return Some("No files found".to_string());
        }
        let mut text = names.join("\n");
        if response.get("truncated").and_then(Value::as_bool) == Some(true) {
            text.push('\n');
            text.push_str(TRUNCATED_NOTE);
        }
        Some(text)
    }
}

fn has_glob_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// Splits `pattern` into the directory to walk and the pattern relative to it.
fn split_pattern(pattern: &str, base: &Path) -> (PathBuf, String) {
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let mut dir = if absolute {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut i = 0;
    while i + 1 < parts.len() && !has_glob_meta(parts[i]) {
        match parts[i] {
            "." => {}
            ".." => {
                dir.pop();
            }
            part => dir.push(part),
        }
        i += 1;
    }
    (dir, parts[i..].join("/"))
}

/// Whether the pattern names a hidden entry, so the walk must not skip dot-files.
fn names_hidden(pattern: &str) -> bool {
    pattern
        .split('/')
        .any(|part| part.starts_with('.') && part != "." && part != "..")
}

fn glob(input: &Value, cwd: &Path, denied: Option<&ReadFilter>) -> Result<Value, String> {
    let started = Instant::now();
    let pattern = input
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            input::validation_error(
                "Glob",
                &["The required parameter `pattern` is missing".into()],
            )
        })?;
    let base = input
        .get("path")
        .and_then(Value::as_str)
        .map_or_else(|| cwd.to_path_buf(), PathBuf::from);
    if !base.is_dir() {
        return Err(format!(
            "Directory does not exist: {}. Note: your current working directory is {}.",
            base.display(),
            cwd.display()
        ));
    }
    let (root, relative) = split_pattern(pattern, &base);
    let matcher = GlobBuilder::new(&relative)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("Invalid glob pattern: {e}"))?
        .compile_matcher();
    let mut found: Newest<PathBuf> = Newest::new(MAX_RESULTS);
    // An empty rest (`""`, `"/"`) matches no file: do not walk the whole tree for nothing.
    if root.is_dir() && !relative.is_empty() {
        let walker = ignore::WalkBuilder::new(&root)
            .hidden(!names_hidden(pattern))
            .require_git(false)
            .build();
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(&root) else {
                continue;
            };
            if matcher.is_match(rel) && !denied.is_some_and(|d| d.denies(path)) {
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                found.push(mtime, path.to_path_buf());
            }
        }
    }
    let truncated = found.seen() > MAX_RESULTS;
    let filenames: Vec<Value> = found
        .into_sorted()
        .iter()
        .map(|p| Value::from(input::display_path(p, cwd)))
        .collect();
    let mut map = Map::new();
    map.insert(
        "durationMs".into(),
        Value::from(started.elapsed().as_millis() as u64),
    );
    map.insert("numFiles".into(), Value::from(filenames.len()));
    map.insert("filenames".into(), Value::Array(filenames));
    map.insert("truncated".into(), Value::Bool(truncated));
    Ok(Value::Object(map))
}
