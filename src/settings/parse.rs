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
    /// http-hook lists and `.mcp.json` approval keys.
    pub network: network::NetworkKeys,
    pub model: Option<String>,
    pub effort_level: Option<String>,
    pub transcript_dir: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

#[path = "network.rs"]
pub(super) mod network;

const HANDLER_TYPES: &str = "\"command\", \"http\", \"prompt\", \"agent\" or \"mcp_tool\"";
const COMMON_KEYS: &[&str] = &["type", "if", "timeout", "statusMessage", "once"];
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
const PROMPT_KEYS: &[&str] = &["prompt", "model", "continueOnBlock"];
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
        network: network::NetworkKeys::default(),
        model: None,
        effort_level: None,
        transcript_dir: None,
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
    cx.top_level(members);
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
    label: Arc<str>,
    text: &'a str,
    index: LineIndex,
    source: SourceKind,
    cache: &'a mut MatcherCache,
    out: &'a mut FileSettings,
}

/// A schema violation: where, and what.
struct Malformed {
    offset: usize,
    message: String,
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
    event_key: &'k str,
    event: Option<HookEvent>,
    group: usize,
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

    fn hooks(&mut self, node: &Node) {
        let Some(events) = node.value.as_object() else {
            // Why void the file, not just drop its hooks: the unreadable value may have held
            // the PreToolUse hooks that guard the allow rules beside it — the same reason a
            // malformed PreToolUse entry voids its file (spec §1.7). Fail closed.
            let location = self.location(node.offset);
            let found = node.value.type_name();
            self.error(
                node.offset,
                format!(
                    "\"hooks\" must be an object mapping event names to arrays, found {found}; because it may have held the PreToolUse hooks that guard this file's permissions, none of this file's hooks, allow rules or env apply until it is fixed (its deny and ask rules still do)"
                ),
            );
            if self.out.voided.is_none() {
                self.out.voided =
                    Some(format!("\"hooks\" at {location} is {found}, not an object"));
            }
            return;
        };
        for member in spanned::last_wins(events) {
            self.event(member);
        }
    }

    fn event(&mut self, member: &Member) {
        let event = HookEvent::parse(&member.key);
        match event {
            None => {
                let hint = closest(&member.key, HookEvent::ALL.iter().map(|e| e.as_str()))
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                self.error(
                    member.key_offset,
                    format!(
                        "Unknown hook event \"{}\" was ignored{hint}; its hooks are listed but never run",
                        member.key
                    ),
                );
            }
            Some(e) if !e.fired_by_rein() => {
                self.warn(
                    member.key_offset,
                    format!(
                        "rein never fires {e}; hooks configured for it are loaded but never run"
                    ),
                );
            }
            Some(_) => {}
        }
        let Some(groups) = (match &member.value.value {
            JsonValue::Array(items) => Some(items),
            _ => None,
        }) else {
            let m = malformed(
                member.value.offset,
                format!(
                    "the value of \"{}\" must be an array of matcher groups, found {}",
                    member.key,
                    member.value.value.type_name()
                ),
            );
            self.report_malformed(event, m);
            return;
        };
        for (gi, group) in groups.iter().enumerate() {
            let path = Path {
                event_key: &member.key,
                event,
                group: gi,
            };
            if let Err(m) = self.group(path, group) {
                self.report_malformed(event, m);
            }
        }
    }

    fn report_malformed(&mut self, event: Option<HookEvent>, m: Malformed) {
        match event {
            Some(e) if e.spec().decides_permission => {
                let location = self.location(m.offset);
                self.error(
                    m.offset,
                    format!(
                        "{}; because this entry is under {e}, none of this file's hooks, allow rules or env apply until it is fixed, as in Claude Code (its deny and ask rules still do)",
                        m.message
                    ),
                );
                if self.out.voided.is_none() {
                    self.out.voided =
                        Some(format!("malformed {e} entry at {location}: {}", m.message));
                }
            }
            _ => self.error(m.offset, format!("{}; this entry is ignored", m.message)),
        }
    }

    fn group(&mut self, path: Path<'_>, node: &Node) -> Result<(), Malformed> {
        let Some(members) = node.value.as_object() else {
            return Err(malformed(
                node.offset,
                format!(
                    "{}[{}] must be an object {{\"matcher\": …, \"hooks\": […]}}, found {}",
                    path.event_key,
                    path.group,
                    node.value.type_name()
                ),
            ));
        };
        self.typo_check(members, GROUP_KEYS, "matcher group");
        let matcher_member = spanned::get(members, "matcher");
        let matcher_text = match matcher_member {
            None => None,
            Some(m) => match &m.value.value {
                JsonValue::String(s) => Some(s.clone()),
                other => {
                    return Err(malformed(
                        m.value.offset,
                        format!("\"matcher\" must be a string, found {}", other.type_name()),
                    ));
                }
            },
        };
        let hooks = match spanned::get(members, "hooks") {
            None => {
                let hint = if spanned::get(members, "type").is_some()
                    || spanned::get(members, "command").is_some()
                {
                    " (handler fields go inside it: {\"matcher\": …, \"hooks\": [{\"type\": …}]})"
                } else {
                    ""
                };
                return Err(malformed(
                    node.offset,
                    format!(
                        "{}[{}] has no \"hooks\" array{hint}",
                        path.event_key, path.group
                    ),
                ));
            }
            Some(m) => match &m.value.value {
                JsonValue::Array(items) => items,
                other => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"hooks\" must be an array of handlers, found {}",
                            other.type_name()
                        ),
                    ));
                }
            },
        };
        let class = MatcherClass::of(path.event);
        let matcher = self.compile(class, matcher_text.as_deref());
        if let (Some(m), Some(text)) = (matcher_member, matcher_text.as_deref()) {
            match &matcher {
                Matcher::Invalid(msg) => self.error(
                    m.value.offset,
                    format!("{msg}; the hooks of this group never run"),
                ),
                Matcher::Exact(names) if names.is_empty() => self.warn(
                    m.value.offset,
                    format!("matcher {text:?} names nothing; the hooks of this group never run"),
                ),
                Matcher::All
                    if class == MatcherClass::NoTarget && !text.is_empty() && text != "*" =>
                {
                    if let Some(e) = path.event {
                        self.warn(
                            m.value.offset,
                            format!("{e} has no match target, so the matcher is ignored and these hooks always run"),
                        );
                    }
                }
                Matcher::All | Matcher::Exact(_) | Matcher::Regex(_) => {}
            }
        }
        for (hi, handler) in hooks.iter().enumerate() {
            match self.handler(path, hi, handler, &matcher, matcher_text.as_deref()) {
                Ok(h) => self.out.handlers.push(h),
                Err(m) => self.report_malformed(path.event, m),
            }
        }
        Ok(())
    }

    fn compile(&mut self, class: MatcherClass, text: Option<&str>) -> Matcher {
        let Some(text) = text else {
            return Matcher::All;
        };
        if let Some(m) = self.cache.get(&(class, text.to_string())) {
            return m.clone();
        }
        let m = Matcher::compile_class(class, Some(text));
        self.cache.insert((class, text.to_string()), m.clone());
        m
    }

    fn typo_check(&mut self, members: &[Member], known: &[&str], what: &str) {
        for m in members {
            if known.contains(&m.key.as_str()) {
                continue;
            }
            if let Some(s) = closest(&m.key, known.iter().copied()) {
                self.warn(
                    m.key_offset,
                    format!(
                        "unknown key \"{}\" in a {what} (did you mean \"{s}\"?); ignored",
                        m.key
                    ),
                );
            }
        }
    }

    fn handler(
        &mut self,
        path: Path<'_>,
        index: usize,
        node: &Node,
        matcher: &Matcher,
        matcher_text: Option<&str>,
    ) -> Result<ConfiguredHandler, Malformed> {
        let Some(members) = node.value.as_object() else {
            return Err(malformed(
                node.offset,
                format!(
                    "{}[{}].hooks[{index}] must be an object, found {}",
                    path.event_key,
                    path.group,
                    node.value.type_name()
                ),
            ));
        };
        let f = Fields { members };
        let type_name = match spanned::get(members, "type") {
            None => {
                return Err(malformed(
                    node.offset,
                    format!("hook handler has no \"type\" (expected {HANDLER_TYPES})"),
                ));
            }
            Some(m) => match m.value.value.as_str() {
                Some(t @ ("command" | "http" | "prompt" | "agent" | "mcp_tool")) => t,
                Some(other) => {
                    return Err(malformed(
                        m.value.offset,
                        format!("unknown hook type \"{other}\" (expected {HANDLER_TYPES})"),
                    ));
                }
                None => {
                    return Err(malformed(
                        m.value.offset,
                        format!("\"type\" must be a string ({HANDLER_TYPES})"),
                    ));
                }
            },
        };
        let extra_keys = match type_name {
            "command" => COMMAND_KEYS,
            "http" => HTTP_KEYS,
            "prompt" | "agent" => PROMPT_KEYS,
            _ => MCP_KEYS,
        };
        let known: Vec<&str> = COMMON_KEYS.iter().chain(extra_keys).copied().collect();
        self.typo_check(members, &known, &format!("{type_name} hook"));
        if let Some(m) = spanned::get(members, "matcher") {
            // A classic slip: Claude Code ignores it here, so the hook runs for everything.
            self.warn(
                m.key_offset,
                "\"matcher\" belongs to the matcher group, not the handler; it is ignored here, so this hook runs for every match value",
            );
        }
        let if_member = f.string("if")?;
        let timeout = match spanned::get(members, "timeout") {
            None => None,
            Some(m) => match m.value.value.as_f64() {
                Some(t) if t > 0.0 && t.is_finite() => Some(t),
                Some(t) => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"timeout\" must be a number of seconds greater than 0, found {t}"
                        ),
                    ));
                }
                None => {
                    return Err(malformed(
                        m.value.offset,
                        format!(
                            "\"timeout\" must be a number of seconds, found {}",
                            m.value.value.type_name()
                        ),
                    ));
                }
            },
        };
        let status_message = f.string("statusMessage")?.map(|(s, _)| s.to_string());
        let once = f.boolean("once")?;
        let on_failure_member = f.string("onFailure")?;
        let (kind, on_failure) = match type_name {
            "command" => (
                self.command_kind(&f, node.offset)?,
                parse_on_failure(on_failure_member)?,
            ),
            "http" => (
                http_kind(&f, node.offset)?,
                parse_on_failure(on_failure_member)?,
            ),
            "prompt" | "agent" => (
                prompt_kind(&f, type_name, node.offset)?,
                OnFailure::Continue,
            ),
            // mcp_tool: any onFailure other than "continue" reads as "block" (spec §1.6).
            _ => (
                mcp_tool_kind(&f, node.offset)?,
                match on_failure_member {
                    None | Some(("continue", _)) => OnFailure::Continue,
                    Some(_) => OnFailure::Block,
                },
            ),
        };
        // Everything below is about whether the hook can run, not whether it is well-formed.
        let mut inactive: Option<Inactive> = None;
        let mut set = |reason: Inactive| {
            if inactive.is_none() {
                inactive = Some(reason);
            }
        };
        if path.event.is_none() {
            set(Inactive::UnknownEvent);
        }
        if let Matcher::Invalid(msg) = matcher {
            set(Inactive::InvalidMatcher(msg.clone()));
        }
        let mut if_condition = None;
        if let Some((text, off)) = if_member {
            match IfCondition::parse(text) {
                Ok(c) => if_condition = Some(c),
                Err(e) => {
                    self.error(
                        off,
                        format!("invalid \"if\" condition: {e}; this hook never runs"),
                    );
                    set(Inactive::InvalidIf(e.to_string()));
                }
            }
            if let Some(e) = path.event
                && !e.is_tool_event()
            {
                self.warn(
                    off,
                    format!("\"if\" cannot be evaluated for {e} (only tool events), so this hook never runs"),
                );
                set(Inactive::IfOnNonToolEvent);
            }
        }
        if path.event.is_some_and(|e| !e.fired_by_rein()) {
            set(Inactive::EventNotFired);
        }
        match &kind {
            HandlerKind::Command(_) | HandlerKind::Http(_) | HandlerKind::McpTool(_) => {}
            HandlerKind::Prompt(_) | HandlerKind::Agent(_) => {
                self.warn(
                    node.offset,
                    format!("{type_name} hooks are not run by rein yet; this hook is loaded but never runs"),
                );
                set(Inactive::UnsupportedType);
            }
        }
        if let (HandlerKind::Prompt(_) | HandlerKind::Agent(_), Some(e)) = (&kind, path.event) {
            if !e.spec().model_hooks {
                self.warn(
                    node.offset,
                    format!("{type_name} hooks need a conversation; Claude Code rejects them on {e} (use a command hook)"),
                );
            } else if matches!(kind, HandlerKind::Agent(_)) && !e.spec().agent_hooks {
                self.warn(
                    node.offset,
                    "agent hooks are not allowed on PermissionRequest (an agent hook answers ok or not ok)",
                );
            }
        }
        if once && let Some(m) = spanned::get(members, "once") {
            self.warn(
                m.key_offset,
                "\"once\" has no effect in settings files (only skill/agent frontmatter hooks honour it); this hook runs every time",
            );
        }
        Ok(ConfiguredHandler {
            event: path.event,
            matcher_text: matcher_text.map(str::to_string),
            matcher: matcher.clone(),
            if_text: if_member.map(|(t, _)| t.to_string()),
            if_condition,
            kind,
            timeout,
            status_message,
            on_failure,
            once,
            origin: HandlerOrigin {
                source: self.source,
                event_key: path.event_key.to_string(),
                group: path.group,
                index,
                location: self.location(node.offset),
            },
            inactive,
        })
    }

    /// `type: "command"` fields (spec §1.6).
    fn command_kind(
        &mut self,
        f: &Fields<'_>,
        handler_offset: usize,
    ) -> Result<HandlerKind, Malformed> {
        let Some((command, _)) = f.string("command")? else {
            return Err(malformed(handler_offset, "command hook has no \"command\""));
        };
        let args = f.string_array("args")?;
        if let Some(m) = spanned::get(f.members, "args")
            && command.chars().any(char::is_whitespace)
            && !command.contains(['/', '\\'])
        {
            self.warn(
                m.key_offset,
                format!("with \"args\", \"command\" is one executable, but {command:?} contains whitespace; it will not be split"),
            );
        }
        let shell = match f.string("shell")? {
            None => None,
            Some((s @ ("bash" | "powershell"), _)) => Some(s.to_string()),
            Some((other, off)) => {
                return Err(malformed(
                    off,
                    format!("\"shell\" must be \"bash\" or \"powershell\", found {other:?}"),
                ));
            }
        };
        let is_async = f.boolean("async")?;
        let async_rewake = f.boolean("asyncRewake")?;
        for key in ["rewakeMessage", "rewakeSummary"] {
            if let Some(("", off)) = f.string(key)? {
                return Err(malformed(off, format!("\"{key}\" must not be empty")));
            }
        }
        f.string("cloud")?;
        Ok(HandlerKind::Command(CommandHandler {
            command: command.to_string(),
            args,
            shell,
            // asyncRewake implies async (spec §1.6).
            is_async: is_async || async_rewake,
            async_rewake,
        }))
    }

    fn permissions(&mut self, node: &Node) {
        let Some(members) = node.value.as_object() else {
            self.error(
                node.offset,
                format!(
                    "\"permissions\" must be an object, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return;
        };
        for list in ["allow", "ask", "deny"] {
            let Some(m) = spanned::get(members, list) else {
                continue;
            };
            let rules = self.rule_list(list, &m.value);
            match list {
                "allow" => self.out.allow = rules,
                "ask" => self.out.ask = rules,
                _ => self.out.deny = rules,
            }
        }
        if let Some(m) = spanned::get(members, "defaultMode") {
            match m.value.value.as_str() {
                Some(mode) if MODES.contains(&mode) => {
                    self.out.default_mode = Some(Located {
                        value: mode.to_string(),
                        location: self.location(m.value.offset),
                    });
                }
                _ => self.error(
                    m.value.offset,
                    format!(
                        "\"defaultMode\" must be one of {}; ignored",
                        MODES.join(", ")
                    ),
                ),
            }
        }
        if let Some(m) = spanned::get(members, "disableBypassPermissionsMode") {
            match m.value.value.as_str() {
                Some("disable") => self.out.disable_bypass_mode = true,
                _ => self.error(
                    m.value.offset,
                    "\"disableBypassPermissionsMode\" takes only \"disable\"; ignored",
                ),
            }
        }
        if let Some(m) = spanned::get(members, "additionalDirectories") {
            match &m.value.value {
                JsonValue::Array(items) => {
                    for item in items {
                        match item.value.as_str() {
                            Some(s) => self.out.additional_directories.push(s.to_string()),
                            None => self.error(
                                item.offset,
                                "additional directory must be a string; ignored",
                            ),
                        }
                    }
                }
                other => self.error(
                    m.value.offset,
                    format!(
                        "\"additionalDirectories\" must be an array, found {}; ignored",
                        other.type_name()
                    ),
                ),
            }
        }
    }

    fn rule_list(&mut self, list: &str, node: &Node) -> Vec<Located<RuleText>> {
        let JsonValue::Array(items) = &node.value else {
            self.error(
                node.offset,
                format!(
                    "\"permissions.{list}\" must be an array of rule strings, found {}; ignored",
                    node.value.type_name()
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Some(text) = item.value.as_str() else {
                self.error(
                    item.offset,
                    format!(
                        "permission rule must be a string, found {}; ignored",
                        item.value.type_name()
                    ),
                );
                continue;
            };
            let compiled = crate::permissions::rule::Rule::parse(text);
            if let Err(e) = &compiled {
                self.error(item.offset, e.to_string());
            }
            out.push(Located {
                value: RuleText {
                    text: text.to_string(),
                    compiled,
                },
                location: self.location(item.offset),
            });
        }
        out
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

/// `type: "http"` fields (spec §1.6).
fn http_kind(f: &Fields<'_>, handler_offset: usize) -> Result<HandlerKind, Malformed> {
    let url = match f.string("url")? {
        None => return Err(malformed(handler_offset, "http hook has no \"url\"")),
        Some((u, off)) => {
            if !looks_like_url(u) {
                return Err(malformed(off, format!("\"url\" is not a valid URL: {u:?}")));
            }
            u.to_string()
        }
    };
    let headers = match spanned::get(f.members, "headers") {
        None => Vec::new(),
        Some(m) => {
            let Some(hs) = m.value.value.as_object() else {
                return Err(malformed(
                    m.value.offset,
                    "\"headers\" must be an object of strings",
                ));
            };
            let mut out = Vec::new();
            for h in spanned::last_wins(hs) {
                match h.value.value.as_str() {
                    Some(v) => out.push((h.key.clone(), v.to_string())),
                    None => {
                        return Err(malformed(
                            h.value.offset,
                            format!("header \"{}\" must be a string", h.key),
                        ));
                    }
                }
            }
            out
        }
    };
    f.string("cloud")?;
    Ok(HandlerKind::Http(HttpHandler {
        url,
        headers,
        allowed_env_vars: f.string_array("allowedEnvVars")?.unwrap_or_default(),
    }))
}

/// `type: "prompt"` / `"agent"` fields (spec §1.6).
fn prompt_kind(
    f: &Fields<'_>,
    type_name: &str,
    handler_offset: usize,
) -> Result<HandlerKind, Malformed> {
    let Some((prompt, _)) = f.string("prompt")? else {
        return Err(malformed(
            handler_offset,
            format!("{type_name} hook has no \"prompt\""),
        ));
    };
    let model = f.string("model")?.map(|(s, _)| s.to_string());
    f.boolean("continueOnBlock")?;
    let p = PromptHandler {
        prompt: prompt.to_string(),
        model,
    };
    if type_name == "prompt" {
        Ok(HandlerKind::Prompt(p))
    } else {
        Ok(HandlerKind::Agent(p))
    }
}

/// `type: "mcp_tool"` fields (spec §1.6).
fn mcp_tool_kind(f: &Fields<'_>, handler_offset: usize) -> Result<HandlerKind, Malformed> {
    let server = f.string("server")?;
    let tool = f.string("tool")?;
    let (Some((server, _)), Some((tool, _))) = (server, tool) else {
        return Err(malformed(
            handler_offset,
            "mcp_tool hook needs both \"server\" and \"tool\"",
        ));
    };
    let input = match spanned::get(f.members, "input") {
        None => None,
        Some(m) if m.value.value.as_object().is_some() => Some(m.value.value.to_serde()),
        Some(m) => {
            return Err(malformed(m.value.offset, "\"input\" must be an object"));
        }
    };
    Ok(HandlerKind::McpTool(McpToolHandler {
        server: server.to_string(),
        tool: tool.to_string(),
        input,
    }))
}

fn parse_on_failure(member: Option<(&str, usize)>) -> Result<OnFailure, Malformed> {
    match member {
        None | Some(("continue", _)) => Ok(OnFailure::Continue),
        Some(("block", _)) => Ok(OnFailure::Block),
        Some((other, off)) => Err(malformed(
            off,
            format!("\"onFailure\" must be \"continue\" or \"block\", found {other:?}"),
        )),
    }
}

/// `scheme://host…` with an http(s) scheme and a non-empty host: what `new URL()` accepts for
/// the URLs an http hook can use.
fn looks_like_url(u: &str) -> bool {
    let Some((scheme, rest)) = u.split_once("://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !host.is_empty()
        && !u.chars().any(char::is_whitespace)
}

/// Typed access to a handler's fields; a wrong type is a [`Malformed`] at the value.
struct Fields<'a> {
    members: &'a [Member],
}

impl<'a> Fields<'a> {
    fn string(&self, key: &str) -> Result<Option<(&'a str, usize)>, Malformed> {
        match spanned::get(self.members, key) {
            None => Ok(None),
            Some(m) => match &m.value.value {
                JsonValue::String(s) => Ok(Some((s.as_str(), m.value.offset))),
                other => Err(malformed(
                    m.value.offset,
                    format!("\"{key}\" must be a string, found {}", other.type_name()),
                )),
            },
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, Malformed> {
        match spanned::get(self.members, key) {
            None => Ok(false),
            Some(m) => m.value.value.as_bool().ok_or_else(|| {
                malformed(
                    m.value.offset,
                    format!(
                        "\"{key}\" must be true or false, found {}",
                        m.value.value.type_name()
                    ),
                )
            }),
        }
    }

    fn string_array(&self, key: &str) -> Result<Option<Vec<String>>, Malformed> {
        let Some(m) = spanned::get(self.members, key) else {
            return Ok(None);
        };
        let JsonValue::Array(items) = &m.value.value else {
            return Err(malformed(
                m.value.offset,
                format!(
                    "\"{key}\" must be an array of strings, found {}",
                    m.value.value.type_name()
                ),
            ));
        };
        items
            .iter()
            .map(|item| {
                item.value.as_str().map(str::to_string).ok_or_else(|| {
                    malformed(
                        item.offset,
                        format!(
                            "\"{key}\" must contain only strings, found {}",
                            item.value.type_name()
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
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
