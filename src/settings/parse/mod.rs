//! One settings file → its handlers, permissions, env and switches, plus every problem found,
//! each at `file:line:col` (spec §1.5–1.7).
//!
//! Malformed entries follow Claude Code (spec §1.7): under PreToolUse or PermissionRequest a
//! malformed entry voids the whole file (it may be what guards the permissions beside it);
//! elsewhere only that entry is dropped. Everything that loads is kept, including hooks that
//! can never run, so `rein hooks list` can show them with the reason.

use std::collections::HashMap;
use std::sync::Arc;

use crate::hooks::matcher::{IfCondition, Matcher};
use crate::hooks::spec::HookEvent;
use crate::hooks::spec::MatcherClass;
use crate::settings::keys;
use crate::settings::schema::{
    CommandHandler, ConfiguredHandler, Diagnostic, HandlerKind, HandlerOrigin, HttpHandler,
    Inactive, Location, McpToolHandler, OnFailure, PromptHandler, Severity, SourceKind,
};
use crate::settings::spanned::{self, JsonValue, LineIndex, Member, Node};

/// Compiled matchers shared across files: 10,000 handlers with the same regex compile it once.
pub type MatcherCache = HashMap<(MatcherClass, String), Matcher>;

/// A permission rule as written and as compiled (once, here).
#[derive(Debug, Clone)]
pub struct RuleText {
    /// The rule as written.
    pub text: String,
    /// The compiled rule or why it does not compile.
    pub compiled: Result<crate::permissions::rule::Rule, crate::permissions::rule::RuleError>,
}

/// A value with where it was set.
#[derive(Debug, Clone)]
pub struct Located<T> {
    pub value: T,
    pub location: Location,
}

/// A `statusLine` setting: the command run for the terminal's status line, and the columns
/// added before what it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLineSpec {
    pub command: String,
    pub padding: u16,
}

/// What one file contributes before merging.
#[derive(Debug)]
pub struct FileSettings {
    pub source: SourceKind,
    pub label: Arc<str>,
    /// False when the file could not be parsed (nothing from it applies).
    pub parsed: bool,
    /// Set when a malformed PreToolUse/PermissionRequest entry voided the file.
    pub voided: Option<String>,
    pub handlers: Vec<ConfiguredHandler>,
    pub allow: Vec<Located<RuleText>>,
    pub ask: Vec<Located<RuleText>>,
    pub deny: Vec<Located<RuleText>>,
    pub default_mode: Option<Located<String>>,
    pub additional_directories: Vec<String>,
    /// `permissions.disableBypassPermissionsMode: "disable"`.
    pub disable_bypass_mode: bool,
    pub env: Vec<(String, String)>,
    pub disable_all_hooks: Option<Located<bool>>,
    pub allow_managed_hooks_only: Option<Located<bool>>,
    /// `hooksShadow: true` (rein's key): every handler of this file runs in shadow mode.
    pub hooks_shadow: bool,
    /// `warmHooks` (rein's key): `false` runs every hook of every file cold.
    pub warm_hooks: Option<bool>,
    /// http-hook lists and `.mcp.json` approval keys.
    pub network: network::NetworkKeys,
    pub model: Option<String>,
    pub effort_level: Option<String>,
    pub transcript_dir: Option<String>,
    /// `outputStyle`, with where it is written.
    pub output_style: Option<Located<String>>,
    /// `statusLine`, with where it is written.
    pub status_line: Option<Located<StatusLineSpec>>,
    /// `enabledPlugins`: `"name@marketplace": true|false`, in file order.
    pub enabled_plugins: Vec<(String, Located<bool>)>,
    pub diagnostics: Vec<Diagnostic>,
}

pub(super) mod network;

mod handler;
mod hooks;
mod permissions;

const HANDLER_TYPES: &str = "\"command\", \"http\", \"prompt\", \"agent\" or \"mcp_tool\"";
const COMMON_KEYS: &[&str] = &[
    "type",
    "if",
    "timeout",
    "statusMessage",
    "once",
    "shadow",
    "warm",
];
const COMMAND_KEYS: &[&str] = &[
    "command",
    "args",
    "shell",
    "onFailure",
    "async",
    "asyncRewake",
    "rewakeMessage",
    "rewakeSummary",
    "cloud",
];
const HTTP_KEYS: &[&str] = &["url", "headers", "allowedEnvVars", "onFailure", "cloud"];
const PROMPT_KEYS: &[&str] = &["prompt", "model", "continueOnBlock", "onFailure"];
const MCP_KEYS: &[&str] = &["server", "tool", "input", "onFailure"];
const GROUP_KEYS: &[&str] = &["matcher", "hooks"];
/// The levels the `effortLevel` setting takes (Claude Code 2.1.328's schema; `max` is a
/// session-only level, given by `--effort`).
const EFFORT_SETTING_LEVELS: &[&str] = &["low", "medium", "high", "xhigh"];
const MODES: &[&str] = &[
    "default",
    "manual",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
];

/// Parses one file's bytes. `cache` is shared across files of one load.
pub fn parse_file(
    source: SourceKind,
    label: &str,
    bytes: &[u8],
    cache: &mut MatcherCache,
) -> FileSettings {
    parse_shaped(source, label, bytes, cache, Shape::Settings)
}

/// Parses a plugin's `hooks/hooks.json`: `{"description"?, "hooks": {…}}`, the `hooks` value
/// read exactly as a settings file's (same errors, same voiding rule for a malformed
/// PreToolUse entry).
pub fn parse_plugin_hooks(
    source: SourceKind,
    label: &str,
    bytes: &[u8],
    cache: &mut MatcherCache,
) -> FileSettings {
    parse_shaped(source, label, bytes, cache, Shape::PluginHooks)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Settings,
    PluginHooks,
}

fn parse_shaped(
    source: SourceKind,
    label: &str,
    bytes: &[u8],
    cache: &mut MatcherCache,
    shape: Shape,
) -> FileSettings {
    let label: Arc<str> = Arc::from(label);
    let mut fs = FileSettings {
        source,
        label: label.clone(),
        parsed: false,
        voided: None,
        handlers: Vec::new(),
        allow: Vec::new(),
        ask: Vec::new(),
        deny: Vec::new(),
        default_mode: None,
        additional_directories: Vec::new(),
        disable_bypass_mode: false,
        env: Vec::new(),
        disable_all_hooks: None,
        allow_managed_hooks_only: None,
        hooks_shadow: false,
        warm_hooks: None,
        network: network::NetworkKeys::default(),
        model: None,
        effort_level: None,
        transcript_dir: None,
        output_style: None,
        status_line: None,
        enabled_plugins: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut early = Vec::new();
    let (text, bom) = decode(bytes, &label, &mut early);
    let index = LineIndex::new(&text);
    let mut cx = FileCx {
        label,
        text: &text,
        index,
        source,
        cache,
        out: &mut fs,
    };
    cx.out.diagnostics.append(&mut early);
    if bom {
        cx.warn(
            0,
            "file starts with a UTF-8 byte order mark; rein ignores it (remove it: JSON must not start with one)",
        );
    }
    if text.trim().is_empty() {
        // An empty file is treated as `{}`: nothing configured, nothing broken.
        cx.out.parsed = true;
        return fs;
    }
    let doc = match spanned::parse(&text) {
        Ok(doc) => doc,
        Err(e) => {
            cx.error(
                e.offset,
                format!(
                    "not valid JSON: {e}; the whole file is skipped (Claude Code skips it silently)"
                ),
            );
            return fs;
        }
    };
    for dup in &doc.duplicates {
        let first = cx.location(dup.first_offset);
        cx.warn(
            dup.offset,
            format!(
                "duplicate key \"{}\" (first at line {}, column {}); the later one wins",
                dup.key, first.line, first.col
            ),
        );
    }
    let Some(members) = doc.root.value.as_object() else {
        cx.error(
            doc.root.offset,
            format!(
                "settings must be a JSON object, found {}; the whole file is skipped",
                doc.root.value.type_name()
            ),
        );
        return fs;
    };
    cx.out.parsed = true;
    match shape {
        Shape::Settings => cx.top_level(members),
        Shape::PluginHooks => cx.plugin_hooks_top_level(members),
    }
    if fs.hooks_shadow {
        for handler in &mut fs.handlers {
            handler.shadow = true;
        }
    }
    // Reported in file order, whatever order the checks ran in.
    fs.diagnostics
        .sort_by_key(|d| (d.location.line, d.location.col));
    fs
}

/// Decodes bytes: strips a BOM, replaces invalid UTF-8 (as Node's `utf8` decoding does) with a
/// warning at the first bad byte.
fn decode(bytes: &[u8], label: &Arc<str>, diags: &mut Vec<Diagnostic>) -> (String, bool) {
    let (bytes, bom) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, true),
        None => (bytes, false),
    };
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), bom),
        Err(e) => {
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("");
            let (line, col) = LineIndex::new(valid).line_col(valid, valid.len());
            diags.push(Diagnostic {
                severity: Severity::Warning,
                location: Location {
                    file: label.clone(),
                    line,
                    col,
                },
                message: "file is not valid UTF-8; invalid bytes were replaced with U+FFFD"
                    .to_string(),
            });
            (String::from_utf8_lossy(bytes).into_owned(), bom)
        }
    }
}

struct FileCx<'a> {
    pub(super) label: Arc<str>,
    pub(super) text: &'a str,
    pub(super) index: LineIndex,
    pub(super) source: SourceKind,
    pub(super) cache: &'a mut MatcherCache,
    pub(super) out: &'a mut FileSettings,
}

/// A schema violation: where, and what.
struct Malformed {
    pub(super) offset: usize,
    pub(super) message: String,
}

fn malformed(offset: usize, message: impl Into<String>) -> Malformed {
    Malformed {
        offset,
        message: message.into(),
    }
}

/// Where a handler sits, for messages: `PreToolUse[0].hooks[1]`.
#[derive(Clone, Copy)]
struct Path<'k> {
    pub(super) event_key: &'k str,
    pub(super) event: Option<HookEvent>,
    pub(super) group: usize,
}

impl FileCx<'_> {
    fn location(&self, offset: usize) -> Location {
        let (line, col) = self.index.line_col(self.text, offset);
        Location {
            file: self.label.clone(),
            line,
            col,
        }
    }

    fn push(&mut self, severity: Severity, offset: usize, message: impl Into<String>) {
        let location = self.location(offset);
        self.out.diagnostics.push(Diagnostic {
            severity,
            location,
            message: message.into(),
        });
    }

    fn error(&mut self, offset: usize, message: impl Into<String>) {
        self.push(Severity::Error, offset, message);
    }

    fn warn(&mut self, offset: usize, message: impl Into<String>) {
        self.push(Severity::Warning, offset, message);
    }

    fn top_level(&mut self, members: &[Member]) {
        for m in members {
            self.top_level_key(m);
        }
        if let Some(m) = spanned::get(members, "model") {
            self.out.model = self.string_setting(m);
        }
        if let Some(m) = spanned::get(members, "effortLevel") {
            self.out.effort_level = self.string_setting(m).and_then(|level| {
                if EFFORT_SETTING_LEVELS.contains(&level.as_str()) {
                    Some(level)
                } else {
                    self.warn(
                        m.value.offset,
                        format!(
                            "\"effortLevel\" must be one of {}, found \"{level}\"; ignored",
                            EFFORT_SETTING_LEVELS.join(", ")
                        ),
                    );
                    None
                }
            });
        }
        if let Some(m) = spanned::get(members, "enabledPlugins") {
            self.enabled_plugins(&m.value);
        }
        if let Some(m) = spanned::get(members, "outputStyle")
            && let Some(value) = self.string_setting(m)
        {
            let location = self.location(m.value.offset);
            self.out.output_style = Some(Located { value, location });
        }
        if let Some(m) = spanned::get(members, "statusLine") {
            self.status_line(&m.value);
        }
        if let Some(m) = spanned::get(members, "transcriptDir") {
            self.out.transcript_dir = self.string_setting(m);
        }
        if let Some(m) = spanned::get(members, "hooks") {
            self.hooks(&m.value);
        }
        if let Some(m) = spanned::get(members, "permissions") {
            self.permissions(&m.value);
        }
        if let Some(m) = spanned::get(members, "env") {
            self.env(&m.value);
        }
        if let Some(m) = spanned::get(members, "disableAllHooks") {
            self.out.disable_all_hooks = self.bool_switch(m);
        }
        if let Some(m) = spanned::get(members, "warmHooks") {
            self.out.warm_hooks = self.bool_switch(m).map(|b| b.value);
        }
        if let Some(m) = spanned::get(members, "hooksShadow") {
            self.out.hooks_shadow = self.bool_switch(m).is_some_and(|b| b.value);
        }
        self.network_keys(members);
        if let Some(m) = spanned::get(members, "allowManagedHooksOnly") {
            let value = self.bool_switch(m);
            match self.source {
                SourceKind::Policy => self.out.allow_managed_hooks_only = value,
                SourceKind::User | SourceKind::Project | SourceKind::Local | SourceKind::Flag => {
                    self.warn(
                        m.key_offset,
                        "\"allowManagedHooksOnly\" is only honoured in managed (policy) settings; ignored here",
                    );
                }
            }
        }
    }

    /// `statusLine: {"type": "command", "command": "…", "padding": N}`.
    fn status_line(&mut self, node: &Node) {
        let Some(members) = node.value.as_object() else {
            self.error(
                node.offset,
                format!(
                    "\"statusLine\" must be an object {{\"type\": \"command\", \"command\": \"…\"}}, found {}; no status line is shown",
                    node.value.type_name()
                ),
            );
            return;
        };
        match spanned::get(members, "type").map(|m| (m, m.value.value.as_str())) {
            Some((_, Some("command"))) => {}
            Some((m, _)) => {
                self.error(
                    m.value.offset,
                    "\"statusLine\".\"type\" must be \"command\" (the only kind Claude Code has); no status line is shown",
                );
                return;
            }
            None => {
                self.error(
                    node.offset,
                    "\"statusLine\" has no \"type\": write \"type\": \"command\"; no status line is shown",
                );
                return;
            }
        }
        let command = match spanned::get(members, "command") {
            Some(m) => match m.value.value.as_str() {
                Some(c) if !c.trim().is_empty() => c.to_string(),
                _ => {
                    self.error(
                        m.value.offset,
                        "\"statusLine\".\"command\" must be a non-empty string; no status line is shown",
                    );
                    return;
                }
            },
            None => {
                self.error(
                    node.offset,
                    "\"statusLine\" has no \"command\"; no status line is shown",
                );
                return;
            }
        };
        let mut padding = 0;
        if let Some(m) = spanned::get(members, "padding") {
            match m.value.value.as_f64() {
                Some(n) if (0.0..=80.0).contains(&n) && n.fract() == 0.0 => padding = n as u16,
                _ => self.warn(
                    m.value.offset,
                    "\"statusLine\".\"padding\" must be a whole number from 0 to 80; 0 is used",
                ),
            }
        }
        let location = self.location(node.offset);
        self.out.status_line = Some(Located {
            value: StatusLineSpec { command, padding },
            location,
        });
    }

    fn enabled_plugins(&mut self, node: &Node) {
        let Some(members) = node.value.as_object() else {
            self.error(
                node.offset,
                format!(
                    "\"enabledPlugins\" must be an object of \"name@marketplace\": true|false, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return;
        };
        for m in spanned::last_wins(members) {
            match m.value.value {
                JsonValue::Bool(value) => {
                    if !m.key.contains('@') {
                        self.warn(
                            m.key_offset,
                            format!(
                                "\"enabledPlugins\" entry \"{}\" names no marketplace (write \"{}@<marketplace>\"); ignored",
                                m.key, m.key
                            ),
                        );
                        continue;
                    }
                    let location = self.location(m.key_offset);
                    self.out
                        .enabled_plugins
                        .push((m.key.clone(), Located { value, location }));
                }
                _ => self.error(
                    m.value.offset,
                    format!(
                        "\"enabledPlugins\" entry \"{}\" must be true or false, found {}; ignored",
                        m.key,
                        m.value.value.type_name()
                    ),
                ),
            }
        }
    }

    fn plugin_hooks_top_level(&mut self, members: &[Member]) {
        for m in members {
            if !matches!(m.key.as_str(), "hooks" | "description") {
                self.warn(
                    m.key_offset,
                    format!(
                        "unknown key \"{}\" in a plugin's hooks file (it holds \"hooks\" and \"description\"); ignored",
                        m.key
                    ),
                );
            }
        }
        match spanned::get(members, "hooks") {
            Some(m) => self.hooks(&m.value),
            None => self.warn(
                0,
                "this plugin hooks file has no \"hooks\" key; nothing to run",
            ),
        }
    }

    /// A key rein does not act on: a Claude Code key is a note (`rein hooks validate` lists
    /// it), anything else a warning with a did-you-mean.
    fn top_level_key(&mut self, m: &Member) {
        let key = m.key.as_str();
        if keys::HONOURED_KEYS.contains(&key) {
            return;
        }
        if keys::CLAUDE_CODE_KEYS.contains(&key) {
            self.push(
                Severity::Note,
                m.key_offset,
                format!("\"{key}\" is a Claude Code setting not supported by rein; ignored"),
            );
            return;
        }
        let hint = closest(
            key,
            keys::CLAUDE_CODE_KEYS
                .iter()
                .chain(keys::HONOURED_KEYS)
                .copied(),
        )
        .map(|s| format!(" (did you mean \"{s}\"?)"))
        .unwrap_or_default();
        self.warn(
            m.key_offset,
            format!("unknown settings key \"{key}\"{hint}; ignored"),
        );
    }

    /// A non-empty string value, else an error naming the key.
    fn string_setting(&mut self, m: &Member) -> Option<String> {
        match m.value.value.as_str() {
            Some(text) if !text.trim().is_empty() => Some(text.trim().to_string()),
            _ => {
                self.error(
                    m.value.offset,
                    format!(
                        "\"{}\" must be a non-empty string, found {}; ignored",
                        m.key,
                        m.value.value.type_name()
                    ),
                );
                None
            }
        }
    }

    fn bool_switch(&mut self, m: &Member) -> Option<Located<bool>> {
        match m.value.value.as_bool() {
            Some(value) => Some(Located {
                value,
                location: self.location(m.key_offset),
            }),
            None => {
                self.error(
                    m.value.offset,
                    format!(
                        "\"{}\" must be true or false, found {}; ignored",
                        m.key,
                        m.value.value.type_name()
                    ),
                );
                None
            }
        }
    }

    fn env(&mut self, node: &Node) {
        let Some(members) = node.value.as_object() else {
            self.error(
                node.offset,
                format!(
                    "\"env\" must be an object of strings, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return;
        };
        for m in members {
            let value = match &m.value.value {
                JsonValue::String(s) => s.clone(),
                JsonValue::Number(n) => {
                    self.warn(
                        m.value.offset,
                        format!("env \"{}\" should be a string; using \"{n}\"", m.key),
                    );
                    n.clone()
                }
                JsonValue::Bool(b) => {
                    self.warn(
                        m.value.offset,
                        format!("env \"{}\" should be a string; using \"{b}\"", m.key),
                    );
                    b.to_string()
                }
                other => {
                    self.error(
                        m.value.offset,
                        format!(
                            "env \"{}\" must be a string, found {}; ignored",
                            m.key,
                            other.type_name()
                        ),
                    );
                    continue;
                }
            };
            match self.out.env.iter_mut().find(|(k, _)| *k == m.key) {
                Some(entry) => entry.1 = value,
                None => self.out.env.push((m.key.clone(), value)),
            }
        }
    }
}

/// The candidate within edit distance 2 (or equal ignoring case) of `word`, for "did you mean".
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .filter_map(|c| {
            let d = if c.eq_ignore_ascii_case(word) {
                0
            } else {
                edit_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase())
            };
            (d <= 2 && word.len() > 2).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
