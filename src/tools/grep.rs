//! The Grep tool: ripgrep-style search with `grep-searcher`, `grep-regex` and `ignore`
//! (spec §7, `GrepOutput`).
//!
//! Rules:
//! - The walk is ripgrep's: `.gitignore`/`.ignore`/`.rgignore` honoured (also outside a git
//!   repository), binary files and version-control directories ([`VCS_DIRS`]) skipped, hidden
//!   files searched (Claude Code passes `--hidden`), `glob` as ripgrep's `--glob` (several globs
//!   split on whitespace, `!` negates), `type` as ripgrep's `--type`.
//! - `files_with_matches` (default) lists files newest first, like Claude Code; `content` and
//!   `count` list files in path order. Paths are relative to the session cwd when inside it.
//! - `content` lines are `path:N:text` for matches and `path-N-text` for context, `--` between
//!   groups; `-n` defaults to true in content mode, as in Claude Code. `-o` prints each match.
//! - `head_limit` (default 250, 0 = unlimited) and `offset` page the lines (content), files
//!   (files_with_matches) or count lines (count). `appliedLimit` appears only when the limit cut
//!   something, `appliedOffset` only when the offset is non-zero.
//! - Claude Code's device guard applies: a `path` on its list is refused with its text, a pipe
//!   or device as `path` is refused (`Refusing to search <path>: it is a pipe or a device, …`),
//!   and files on the list met in the walk are skipped. Pipes and devices in the walk are never
//!   opened (only regular files are searched).
//! - Memory follows the page, not the matches: `content` and `count` stop searching once
//!   `offset + head_limit` entries and one more are in hand (the one more tells that the limit
//!   cut something); `files_with_matches` keeps only the newest `offset + head_limit` names.
//!   A file that turns out binary after its first matches is dropped as before, unless the page
//!   filled up first (ripgrep itself prints the matches it found before the binary data).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::{Map, Value, json};

use super::device_guard::{self, SpecialKind};
use super::input::{self, Field, FieldKind};
use super::newest::Newest;
use super::{BoxFuture, ReadFilter, Tool, ToolContext, ToolOutcome};
use crate::byte_size::format_size;

/// Characters of a content line shown; longer lines are replaced by a note, as ripgrep's
/// `--max-columns 500` that Claude Code passes (minified files would flood the context).
pub const MAX_COLUMNS: usize = 500;
/// Version-control directories never searched. Hidden files are otherwise searched, as Claude
/// Code runs ripgrep with `--hidden` and these exclusions (`.github/`, `.env.example` are code).
pub const VCS_DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];
/// Lines/files/entries returned when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Bytes of one file a `multiline` search reads at most: such a search holds the whole file
/// in memory, so larger files are skipped and named in the answer.
pub const MULTILINE_FILE_LIMIT: u64 = 64 * 1024 * 1024;

const MODES: &[&str] = &["content", "files_with_matches", "count"];

pub(crate) const FIELDS: &[Field] = &[
    Field::required("pattern", FieldKind::String),
    Field::optional("path", FieldKind::String),
    Field::optional("glob", FieldKind::String),
    Field::optional("output_mode", FieldKind::Enum(MODES)),
    Field::optional("-B", FieldKind::Integer),
    Field::optional("-A", FieldKind::Integer),
    Field::optional("-C", FieldKind::Integer),
    Field::optional("context", FieldKind::Integer),
    Field::optional("-n", FieldKind::Boolean),
    Field::optional("-i", FieldKind::Boolean),
    Field::optional("-o", FieldKind::Boolean),
    Field::optional("type", FieldKind::String),
    Field::optional("head_limit", FieldKind::Integer),
    Field::optional("offset", FieldKind::Integer),
    Field::optional("multiline", FieldKind::Boolean),
];

const DESCRIPTION: &str = concat!(
    "Searches file contents for a regular expression, the way ripgrep does, and returns the \
matching files, lines or counts.\n\n\
Use it whenever you look for text in the project (a symbol, an error message, a setting); \
do not run grep or rg through Bash. To find files by name use Glob.\n\n\
How it searches:\n\
- `pattern` is a Rust/ripgrep regular expression: escape special characters for a literal \
match (\"fn main\\\\(\"), `-i` ignores case, `multiline: true` lets a match span lines (and \
`.` match a line break).\n\
- `path` is a file or a directory (default: the working directory). Directories are \
searched recursively; files ignored by .gitignore, .ignore or .rgignore, binary files and \
version-control directories are skipped; other hidden files are searched.\n\
- Narrow the files with `glob` (\"*.rs\", \"*.{ts,tsx}\", \"!*_test.go\"; several separated \
by spaces) or `type` (ripgrep's type names: rust, py, js, go, …).\n\n\
Output (`output_mode`):\n\
- \"files_with_matches\" (default): the paths of matching files, newest first.\n\
- \"content\": matching lines as path:line:text, with line numbers unless `-n` is false; \
`-A`, `-B` and `-C` (or `context`) add lines after, before or around each match; `-o` shows \
only the matched part. Lines over 500 characters are left out with a note.\n\
- \"count\": path:count for each matching file.\n\
- At most `head_limit` entries are returned (default 250; 0 means all), after skipping \
`offset`. The answer says when it was cut: page on with `offset`, or narrow the search.",
    super::refusal_note!()
);

/// The Grep tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "Grep"
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
                    "description": "The regular expression to search for (ripgrep syntax)."
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search (absolute, or relative to the working directory). Default: the working directory."
                },
                "glob": {
                    "type": "string",
                    "description": "Only files whose path matches this glob, as rg --glob: \"*.js\", \"src/**/*.{ts,tsx}\", \"!vendor/**\". Several globs separated by spaces."
                },
                "output_mode": {
                    "type": "string",
                    "enum": MODES,
                    "description": "\"files_with_matches\" (default): matching file paths. \"content\": matching lines. \"count\": matches per file."
                },
                "-B": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines of context before each match. Only in content mode."
                },
                "-A": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines of context after each match. Only in content mode."
                },
                "-C": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines of context before and after each match. Only in content mode."
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Same as -C (and used if both are given). -A or -B, when given, set their own side."
                },
                "-n": {
                    "type": "boolean",
                    "description": "Show line numbers. Only in content mode; default true."
                },
                "-i": {
                    "type": "boolean",
                    "description": "Ignore case. Default false."
                },
                "-o": {
                    "type": "boolean",
                    "description": "Show only the matched part of each line, one match per line. Only in content mode; default false."
                },
                "type": {
                    "type": "string",
                    "description": "Only files of this ripgrep type (rg --type), e.g. rust, py, js, go, java, md."
                },
                "head_limit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Most lines (content), files (files_with_matches) or entries (count) returned. Default 250; 0 means no limit, so use it sparingly."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Entries to skip before head_limit applies, to page through a long answer. Default 0."
                },
                "multiline": {
                    "type": "boolean",
                    "description": "Let a match span lines and `.` match a line break (files over 64 MiB are then skipped). Default false."
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
        for key in ["-B", "-A", "-C", "context", "head_limit", "offset"] {
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
        Box::pin(async move {
            let cwd = ctx.current_dir();
            let filter = ctx.read_filter.clone();
            let outcome =
                tokio::task::spawn_blocking(move || grep(&input, &cwd, filter.as_ref())).await;
            match outcome {
                Ok(Ok(response)) => {
                    let content = GrepTool.render(&response).unwrap_or_default();
                    ToolOutcome::Success { response, content }
                }
                Ok(Err(error)) => ToolOutcome::Failure {
                    error,
                    is_interrupt: false,
                },
                Err(e) => ToolOutcome::Failure {
                    error: format!("Grep failed: {e}"),
                    is_interrupt: false,
                },
            }
        })
    }

    fn render(&self, response: &Value) -> Option<String> {
        let text = render_results(response)?;
        let skipped: Vec<&str> = response
            .get("multilineSkipped")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if skipped.is_empty() {
            return Some(text);
        }
        Some(format!(
            "{text}\n\nNot searched, over {} for a multiline search (it reads a whole file into \
             memory): {}. Search them without `multiline`, or narrow `path`.",
            format_size(MULTILINE_FILE_LIMIT),
            skipped.join(", ")
        ))
    }
}

/// The model-facing text of a Grep response, as Claude Code words it per mode.
fn render_results(response: &Value) -> Option<String> {
    let mode = response.get("mode")?.as_str()?;
    let num_files = response.get("numFiles")?.as_u64()?;
    let pagination = pagination_note(response);
    match mode {
        "files_with_matches" => {
            let names: Vec<&str> = response
                .get("filenames")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if names.is_empty() {
                return Some("No files found".to_string());
            }
            let noun = if num_files == 1 { "file" } else { "files" };
            let head = match pagination {
                Some(note) => format!("Found {num_files} {noun} {note}"),
                None => format!("Found {num_files} {noun}"),
            };
            Some(format!("{head}\n{}", names.join("\n")))
        }
        "content" => {
            let content = response.get("content")?.as_str()?;
            let mut text = if content.is_empty() {
                "No matches found".to_string()
            } else {
                content.to_string()
            };
            if let Some(note) = pagination {
                text.push_str("\n\n");
                text.push_str(&note);
            }
            Some(text)
        }
        "count" => {
            let content = response.get("content")?.as_str()?;
            if content.is_empty() {
                return Some("No matches found".to_string());
            }
            let matches = response.get("numMatches")?.as_u64()?;
            let occ = if matches == 1 {
                "occurrence"
            } else {
                "occurrences"
            };
            let noun = if num_files == 1 { "file" } else { "files" };
            let mut text =
                format!("{content}\n\nFound {matches} total {occ} across {num_files} {noun}.");
            if let Some(note) = pagination {
                text.push(' ');
                text.push_str(&note);
            }
            Some(text)
        }
        _ => None,
    }
}

fn pagination_note(response: &Value) -> Option<String> {
    let limit = response.get("appliedLimit").and_then(Value::as_u64);
    let offset = response.get("appliedOffset").and_then(Value::as_u64);
    let parts: Vec<String> = [
        limit.map(|l| format!("limit: {l}")),
        offset.map(|o| format!("offset: {o}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        None
    } else {
        Some(format!(
            "[Showing results with pagination = {}]",
            parts.join(", ")
        ))
    }
}

/// The three output modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Content,
    FilesWithMatches,
    Count,
}

/// The parsed options of one search.
struct Options {
    mode: Mode,
    line_numbers: bool,
    only_matching: bool,
}

/// What one file produced.
#[derive(Default)]
struct FileResult {
    lines: Vec<String>,
    matched_lines: u64,
    binary: bool,
}

struct CollectSink<'a> {
    matcher: &'a RegexMatcher,
    options: &'a Options,
    shown: &'a str,
    out: FileResult,
    /// Most lines worth keeping from this file (`None`: all): past it, the search of the file
    /// stops, because the page is already full.
    room: Option<usize>,
}

impl CollectSink<'_> {
    /// Whether the search of this file may go on.
    fn wants_more(&self) -> bool {
        self.room.is_none_or(|room| self.out.lines.len() < room)
    }

    fn push(&mut self, sep: char, line_number: Option<u64>, text: &[u8]) {
        let text = String::from_utf8_lossy(text);
        let text = text.trim_end_matches(['\n', '\r']);
        let omitted;
        let text = if text.chars().nth(MAX_COLUMNS).is_none() {
            text
        } else if sep == ':' {
            omitted = format!(
                "[Omitted long line with {} matches]",
                count_matches(self.matcher, text.as_bytes())
            );
            &omitted
        } else {
            "[Omitted long context line]"
        };
        let line = match (self.options.line_numbers, line_number) {
            (true, Some(n)) => format!("{}{sep}{n}{sep}{text}", self.shown),
            _ => format!("{}{sep}{text}", self.shown),
        };
        self.out.lines.push(line);
    }
}

impl Sink for CollectSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.out.matched_lines += 1;
        match self.options.mode {
            Mode::FilesWithMatches => return Ok(false),
            Mode::Count => return Ok(true),
            Mode::Content => {}
        }
        let first = mat.line_number();
        if self.options.only_matching {
            let bytes = mat.bytes();
            let mut found = Vec::new();
            let _ = self.matcher.find_iter(bytes, |m| {
                found.push((m.start(), m.end()));
                true
            });
            for (start, end) in found {
                let line = first
                    .map(|n| n + bytes[..start].iter().filter(|&&b| b == b'\n').count() as u64);
                self.push(':', line, &bytes[start..end]);
            }
        } else {
            for (i, line) in mat.lines().enumerate() {
                self.push(':', first.map(|n| n + i as u64), line);
            }
        }
        Ok(self.wants_more())
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.options.mode == Mode::Content {
            self.push('-', ctx.line_number(), ctx.bytes());
        }
        Ok(self.wants_more())
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.options.mode == Mode::Content {
            self.out.lines.push("--".to_string());
        }
        Ok(self.wants_more())
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.out.binary = true;
        Ok(false)
    }
}

fn count_matches(matcher: &RegexMatcher, bytes: &[u8]) -> usize {
    let mut n = 0;
    let _ = matcher.find_iter(bytes, |_| {
        n += 1;
        true
    });
    n
}

fn get_usize(input: &Value, key: &str) -> Option<usize> {
    input.get(key).and_then(Value::as_u64).map(|n| n as usize)
}

fn get_bool(input: &Value, key: &str) -> Option<bool> {
    input.get(key).and_then(Value::as_bool)
}

/// The files to search under `base`, in path order, walked as they are asked for.
fn files(input: &Value, base: &Path) -> Result<Box<dyn Iterator<Item = PathBuf>>, String> {
    if base.is_file() {
        return Ok(Box::new(std::iter::once(base.to_path_buf())));
    }
    let mut builder = ignore::WalkBuilder::new(base);
    builder
        .require_git(false)
        .hidden(false)
        .filter_entry(|entry| {
            !(entry.file_type().is_some_and(|t| t.is_dir())
                && VCS_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
        })
        .sort_by_file_name(|a, b| a.cmp(b));
    if let Some(globs) = input.get("glob").and_then(Value::as_str) {
        let mut overrides = ignore::overrides::OverrideBuilder::new(base);
        for glob in split_globs(globs) {
            overrides
                .add(glob)
                .map_err(|e| format!("Invalid glob `{glob}`: {e}"))?;
        }
        builder.overrides(overrides.build().map_err(|e| e.to_string())?);
    }
    if let Some(name) = input.get("type").and_then(Value::as_str) {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        types.select(name);
        builder.types(types.build().map_err(|e| e.to_string())?);
    }
    Ok(Box::new(
        builder
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(ignore::DirEntry::into_path),
    ))
}

/// The globs of the `glob` parameter: split on whitespace, and on commas outside braces
/// (`"*.ts,*.tsx"` is two globs, `"*.{ts,tsx}"` one), as Claude Code does.
fn split_globs(globs: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for token in globs.split_whitespace() {
        if token.contains('{') {
            out.push(token);
        } else {
            out.extend(token.split(',').filter(|g| !g.is_empty()));
        }
    }
    out
}

/// The `offset..offset + limit` window of a stream of entries (lines, files or counts), taken
/// as they come: the stream can stop as soon as the window is known to be cut.
struct Page<T> {
    offset: usize,
    /// 0: no limit.
    limit: usize,
    skipped: usize,
    kept: Vec<T>,
    /// An entry came after the window was full.
    cut: bool,
}

impl<T> Page<T> {
    fn new(limit: usize, offset: usize) -> Page<T> {
        Page {
            offset,
            limit,
            skipped: 0,
            kept: Vec::new(),
            cut: false,
        }
    }

    /// Takes the next entry; `false` once the window is full and cut, when nothing that follows
    /// can change the result.
    fn push(&mut self, item: T) -> bool {
        if self.skipped < self.offset {
            self.skipped += 1;
            return true;
        }
        if self.limit > 0 && self.kept.len() >= self.limit {
            self.cut = true;
            return false;
        }
        self.kept.push(item);
        true
    }

    /// Entries still worth producing: enough to fill the window and see it cut (`None`: all).
    fn room(&self) -> Option<usize> {
        (self.limit > 0).then(|| self.offset - self.skipped + self.limit - self.kept.len() + 1)
    }

    /// `appliedLimit` (only when the limit cut something) and `appliedOffset` (only when not 0).
    fn applied(&self) -> (Option<usize>, Option<usize>) {
        (
            self.cut.then_some(self.limit),
            (self.offset > 0).then_some(self.offset),
        )
    }
}

fn grep(input: &Value, cwd: &Path, denied: Option<&ReadFilter>) -> Result<Value, String> {
    let pattern = input
        .get("pattern")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            input::validation_error(
                "Grep",
                &["The required parameter `pattern` is missing".into()],
            )
        })?;
    let mode = match input.get("output_mode").and_then(Value::as_str) {
        Some("content") => Mode::Content,
        Some("count") => Mode::Count,
        _ => Mode::FilesWithMatches,
    };
    let multiline = get_bool(input, "multiline").unwrap_or(false);
    let options = Options {
        mode,
        line_numbers: get_bool(input, "-n").unwrap_or(true),
        only_matching: get_bool(input, "-o").unwrap_or(false),
    };
    let mut matcher = RegexMatcherBuilder::new();
    matcher.case_insensitive(get_bool(input, "-i").unwrap_or(false));
    if multiline {
        matcher.multi_line(true).dot_matches_new_line(true);
    } else {
        matcher.line_terminator(Some(b'\n'));
    }
    let matcher = matcher
        .build(pattern)
        .map_err(|e| format!("Invalid regex pattern `{pattern}`: {e}"))?;
    let around = get_usize(input, "context")
        .or(get_usize(input, "-C"))
        .unwrap_or(0);
    let (before, after) = match mode {
        Mode::Content => (
            get_usize(input, "-B").unwrap_or(around),
            get_usize(input, "-A").unwrap_or(around),
        ),
        Mode::FilesWithMatches | Mode::Count => (0, 0),
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .multi_line(multiline)
        // A multi-line search holds the whole file: bounded, and larger files are skipped
        // (and named) below rather than read.
        .heap_limit(multiline.then_some(MULTILINE_FILE_LIMIT as usize))
        .before_context(before)
        .after_context(after)
        .binary_detection(BinaryDetection::quit(0))
        .build();

    let base = input
        .get("path")
        .and_then(Value::as_str)
        .map_or_else(|| cwd.to_path_buf(), PathBuf::from);
    if let Some(refusal) = device_guard::refuse_by_name(&base.to_string_lossy()) {
        return Err(refusal);
    }
    let meta = match std::fs::metadata(&base) {
        Ok(meta) => meta,
        Err(_) => {
            return Err(format!(
                "Path does not exist: {}. Note: your current working directory is {}.",
                base.display(),
                cwd.display()
            ));
        }
    };
    if SpecialKind::of(&meta).is_some() {
        return Err(format!(
            "Refusing to search {}: it is a pipe or a device, not a file or a folder.",
            base.display()
        ));
    }
    let limit = get_usize(input, "head_limit").unwrap_or(DEFAULT_HEAD_LIMIT);
    let offset = get_usize(input, "offset").unwrap_or(0);
    let mut map = Map::new();
    let mode_name = match mode {
        Mode::Content => "content",
        Mode::FilesWithMatches => "files_with_matches",
        Mode::Count => "count",
    };
    map.insert("mode".into(), Value::from(mode_name));
    // Why each mode stops where it does: `content` and `count` list files in path order, so the
    // walk ends once the page is full and cut; `files_with_matches` lists the newest first, so
    // every file is searched (up to its first match) but only the page's worth is kept.
    let mut lines: Page<String> = Page::new(limit, offset);
    let mut counts: Page<(String, u64)> = Page::new(limit, offset);
    let keep = if limit == 0 {
        usize::MAX
    } else {
        offset.saturating_add(limit)
    };
    let mut newest: Newest<String> = Newest::new(keep);
    let mut emitted_any = false;
    let mut too_large: Vec<String> = Vec::new();
    for path in files(input, &base)? {
        // A file Read deny rules cover is neither searched nor named.
        if denied.is_some_and(|d| d.denies(&path)) {
            continue;
        }
        // `/proc/kmsg` and its kind are regular files that block or never end.
        if device_guard::classify(&path).is_some() {
            continue;
        }
        let shown = input::display_path(&path, cwd);
        if multiline && std::fs::metadata(&path).is_ok_and(|m| m.len() > MULTILINE_FILE_LIMIT) {
            too_large.push(shown);
            continue;
        }
        let mut sink = CollectSink {
            matcher: &matcher,
            options: &options,
            shown: &shown,
            out: FileResult::default(),
            room: match mode {
                Mode::Content => lines.room(),
                Mode::FilesWithMatches | Mode::Count => None,
            },
        };
        // An unreadable file is skipped, as ripgrep does (it reports on stderr).
        if searcher.search_path(&matcher, &path, &mut sink).is_err() {
            continue;
        }
        let out = sink.out;
        if out.matched_lines == 0 || out.binary {
            continue;
        }
        let more = match mode {
            Mode::Content => {
                let separator = (before > 0 || after > 0) && emitted_any;
                emitted_any = true;
                let mut more = !separator || lines.push("--".to_string());
                for line in out.lines {
                    more = more && lines.push(line);
                }
                more
            }
            Mode::Count => counts.push((shown, out.matched_lines)),
            Mode::FilesWithMatches => {
                let mtime = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                newest.push(mtime, shown);
                true
            }
        };
        if !more {
            break;
        }
    }

    let (applied_limit, applied_offset) = match mode {
        Mode::FilesWithMatches => {
            let matched = newest.seen();
            let names: Vec<String> = newest.into_sorted().into_iter().skip(offset).collect();
            map.insert("numFiles".into(), Value::from(names.len()));
            map.insert(
                "filenames".into(),
                Value::Array(names.into_iter().map(Value::from).collect()),
            );
            let cut = limit > 0 && matched.saturating_sub(offset) > limit;
            (cut.then_some(limit), (offset > 0).then_some(offset))
        }
        Mode::Content => {
            let applied = lines.applied();
            map.insert("numFiles".into(), Value::from(0));
            map.insert("filenames".into(), Value::Array(Vec::new()));
            map.insert("content".into(), Value::from(lines.kept.join("\n")));
            map.insert("numLines".into(), Value::from(lines.kept.len()));
            applied
        }
        Mode::Count => {
            let applied = counts.applied();
            let entries = counts.kept;
            let total: u64 = entries.iter().map(|(_, n)| n).sum();
            let content: Vec<String> = entries.iter().map(|(s, n)| format!("{s}:{n}")).collect();
            map.insert("numFiles".into(), Value::from(entries.len()));
            map.insert("filenames".into(), Value::Array(Vec::new()));
            map.insert("content".into(), Value::from(content.join("\n")));
            map.insert("numMatches".into(), Value::from(total));
            applied
        }
    };
    if let Some(limit) = applied_limit {
        map.insert("appliedLimit".into(), Value::from(limit));
    }
    if !too_large.is_empty() {
        map.insert(
            "multilineSkipped".into(),
            Value::Array(too_large.into_iter().map(Value::from).collect()),
        );
    }
    if let Some(offset) = applied_offset {
        map.insert("appliedOffset".into(), Value::from(offset));
    }
    Ok(Value::Object(map))
}
