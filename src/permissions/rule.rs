//! Permission rules: `Tool`, `Tool(content)`, `Tool(*)` — parsing and matching against a call
//! (spec §6.2, §3.4). One rule, one question; the policy ([`super::policy`]) combines them.
//!
//! Content by tool:
//! - `Bash(…)`: a command pattern, `*` = any text (spaces included), `prefix:*` = the prefix then
//!   the end or more words, a trailing ` *` is optional (`ls *` matches `ls`). Matched against
//!   every simple command of the decomposed line ([`super::bash`]).
//! - `Read(…)`, `Edit(…)`, `Write(…)`, `Grep(…)`, `Glob(…)`, `NotebookEdit(…)`: a path pattern
//!   ([`super::path`]).
//! - `WebFetch(domain:host)`: the host of the input's `url` (`*.host` for subdomains).
//! - `Agent(type)`, `Skill(name)`, `WebSearch(query)`: a `*` pattern on that input field.
//! - MCP: `mcp__server` and `mcp__server__*` (every tool of the server), `mcp__server__tool`.
//! - Any other tool with content: rein cannot interpret it, so it covers every call of the tool
//!   as a deny/ask rule (fail closed) and none as an allow rule or `if` condition.
//!
//! Which tools a rule governs: an `if` condition (`RulePurpose::Condition`) names exactly one
//! tool (or a former name of it). As a permission rule, `Read` also governs Grep, Glob and
//! NotebookRead, and `Edit` governs every editing tool (Write, NotebookEdit, MultiEdit); a
//! `Write` deny/ask rule also governs Edit (fail closed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use crate::permissions::bash::{self, ParsedCommand, SimpleCommand};
use crate::permissions::path::PathPattern;

/// A rule that could not be parsed; `Display` names the rule text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule `{rule}`: {reason}")]
pub struct RuleError {
    pub rule: String,
    pub reason: String,
}

/// What a rule is used for: `if` conditions anchor single-segment `dir/**` at the cwd only
/// (spec §3.4), deny/ask rules match it at any depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulePurpose {
    Condition,
    Allow,
    Ask,
    Deny,
}

/// Paths a rule is resolved against.
#[derive(Debug, Clone, Copy)]
pub struct RuleContext<'a> {
    /// The session's current directory (relative patterns).
    pub cwd: &'a Path,
    /// The project root (`/path` patterns).
    pub project_dir: &'a Path,
    /// The home directory (`~/path` patterns).
    pub home: &'a Path,
}

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Canonical tool name (aliases resolved, e.g. `Task` → `Agent`).
    pub tool: String,
    /// `None` for `Tool`, `Tool()` and `Tool(*)`; otherwise the content with `\(`/`\)` unescaped.
    pub content: Option<String>,
    /// The content compiled once at parse time.
    compiled: Arc<Compiled>,
}

// Two rules are the same rule when they say the same thing; the compiled form follows from it.
impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.tool == other.tool && self.content == other.content
    }
}

impl Eq for Rule {}

#[derive(Debug)]
enum Compiled {
    Whole,
    Bash(BashPattern),
    Path(PathPattern),
    Domain(String),
    Field { field: &'static str, pattern: Regex },
    Opaque,
}

/// A compiled `Bash(…)` content.
#[derive(Debug)]
pub(crate) struct BashPattern {
    regex: Regex,
    /// The content as written, for the `find -exec`-style flag check.
    text: String,
    /// The literal text every match starts with (up to the first wildcard).
    literal: String,
    /// What may follow `literal` in a match.
    after: After,
}

/// What a pattern allows after its literal beginning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// Nothing: the pattern has no wildcard.
    End,
    /// The end, or a space and more (`prefix:*`, `prefix *`).
    Words,
    /// Anything (`prefix*…`).
    Any,
}

impl BashPattern {
    fn compile(content: &str) -> Result<BashPattern, String> {
        let c = collapse_ws(content.trim());
        let (body, head, words) = if let Some(prefix) = c.strip_suffix(":*") {
            (format!("{}(?:\\s.*)?", wildcard(prefix)), prefix, true)
        } else if let Some(head) = c.strip_suffix(" *").filter(|h| !h.ends_with('\\')) {
            (format!("{}(?: .*)?", wildcard(head)), head, true)
        } else {
            (wildcard(&c), c.as_str(), false)
        };
        let regex = Regex::new(&format!("(?s)^{body}$")).map_err(|e| e.to_string())?;
        // The literal beginning: up to the first `*` or escape.
        let cut = head.find(['*', '\\']);
        let literal = head[..cut.unwrap_or(head.len())].to_string();
        let after = match (cut, words) {
            (Some(_), _) => After::Any,
            (None, true) => After::Words,
            (None, false) => After::End,
        };
        Ok(BashPattern {
            regex,
            text: c,
            literal,
            after,
        })
    }

    /// Whether some command starting with `known` could match: `known` and the literal
    /// beginning agree as far as both go, and what `known` adds past the literal is allowed.
    fn could_continue(&self, known: &str) -> bool {
        if self.literal.starts_with(known) {
            return true;
        }
        let Some(extra) = known.strip_prefix(self.literal.as_str()) else {
            return false;
        };
        match self.after {
            After::Any => true,
            After::Words => extra.starts_with([' ', '\t']),
            After::End => false,
        }
    }

    /// Whether some command the parser sees only the beginning of could match.
    pub(crate) fn touches_open(&self, parsed: &ParsedCommand) -> bool {
        parsed.open.iter().any(|o| self.could_continue(&o.prefix))
    }

    fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Whether this pattern alone lets `part` run.
    pub(crate) fn allows_part(&self, part: &SimpleCommand) -> bool {
        if part.transparent || (part.deny_views.is_empty() && part.allow_views.is_empty()) {
            return true;
        }
        part.allow_views.iter().any(|v| self.is_match(v))
            && part.risky_flags.iter().all(|f| self.text.contains(f))
    }

    /// Whether any view of `part` matches (deny/ask/`if`).
    pub(crate) fn touches_part(&self, part: &SimpleCommand) -> bool {
        part.deny_views.iter().any(|v| self.is_match(v))
    }
}

/// Former tool names (spec §3.3), mapped to the current ones.
const ALIASES: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("ListPeers", "ListAgents"),
    ("Brief", "SendUserMessage"),
    ("ListMcpResources", "ListMcpResourcesTool"),
    ("ReadMcpResource", "ReadMcpResourceTool"),
    ("ReadMcpResourceDir", "ReadMcpResourceDirTool"),
    ("ProposeGoal", "SetGoal"),
];

/// The current name of a tool (former names mapped, spec §3.3).
pub fn canonical_tool_name(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// Tools whose `Read(…)` rules cover them (as permission rules).
const READ_FAMILY: &[&str] = &["Read", "Grep", "Glob", "NotebookRead", "LS"];
/// Tools whose `Edit(…)` rules cover them (as permission rules).
const EDIT_FAMILY: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// The file path a file tool's input names, made absolute against `cwd`. Grep/Glob without a
/// `path` search the cwd.
pub fn input_path(tool_name: &str, input: &Value, cwd: &Path) -> Option<PathBuf> {
    let field = match tool_name {
        "Read" | "Edit" | "Write" | "MultiEdit" => "file_path",
        "NotebookEdit" | "NotebookRead" => "notebook_path",
        "Grep" | "Glob" | "LS" => "path",
        _ => return None,
    };
    let base = match input.get(field).and_then(Value::as_str) {
        Some(p) if !p.is_empty() => crate::permissions::path::normalize(Path::new(p), cwd),
        _ if field == "path" => cwd.to_path_buf(),
        _ => return None,
    };
    if tool_name == "Glob" {
        // Best effort: the literal directory part of the pattern (`secrets/**/*.pem` searches
        // `secrets`), so Read deny rules see where the search goes.
        let pattern = input
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let literal: Vec<&str> = pattern
            .split('/')
            .take_while(|seg| !seg.contains(['*', '?', '[', '{']))
            .collect();
        let literal = if pattern.split('/').count() == literal.len() {
            // No glob at all: the last segment is a name, not a directory.
            &literal[..literal.len().saturating_sub(1)]
        } else {
            &literal[..]
        };
        let mut prefix = literal.join("/");
        if pattern.starts_with('/') && prefix.is_empty() {
            prefix.push('/');
        }
        if !prefix.is_empty() {
            return Some(crate::permissions::path::normalize(
                Path::new(&prefix),
                &base,
            ));
        }
    }
    Some(base)
}

impl Rule {
    /// Parses `Tool`, `Tool()`, `Tool(*)` or `Tool(content)` (spec §6.2).
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        let err = |reason: &str| RuleError {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        if text.is_empty() {
            return Err(err("empty rule"));
        }
        let open = find_unescaped(text, '(');
        let (name, raw_content) = match open {
            Some(open) => {
                if !text.ends_with(')') || text.len() < open + 2 {
                    return Err(err("missing closing `)` at the end"));
                }
                (&text[..open], Some(&text[open + 1..text.len() - 1]))
            }
            None => {
                if text.contains(')') {
                    return Err(err("`)` without `(`"));
                }
                (text, None)
            }
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(err("empty tool name"));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(err("a tool name has only letters, digits, `_` and `-`"));
        }
        let is_mcp = name.starts_with("mcp__");
        if name.contains('*') && !is_mcp {
            return Err(err(
                "`*` in a tool name is only supported for MCP tools (`mcp__server__*`)",
            ));
        }
        let tool = canonical_tool_name(name).to_string();
        let content = raw_content
            .map(|c| c.replace("\\(", "(").replace("\\)", ")"))
            .filter(|c| !c.trim().is_empty() && c.trim() != "*");
        let compiled = match &content {
            None => Compiled::Whole,
            Some(c) => compile_content(&tool, c).map_err(|reason| err(&reason))?,
        };
        Ok(Rule {
            tool,
            content,
            compiled: Arc::new(compiled),
        })
    }

    /// A rule covering exactly this Bash command text (a remembered session approval).
    pub(crate) fn exact_bash(command: &str) -> Option<Rule> {
        let escaped = command.replace('\\', "\\\\").replace('*', "\\*");
        let pattern = BashPattern::compile(&escaped).ok()?;
        Some(Rule {
            tool: "Bash".to_string(),
            content: Some(escaped),
            compiled: Arc::new(Compiled::Bash(pattern)),
        })
    }

    /// The compiled Bash pattern, if this is a `Bash(content)` rule.
    pub(crate) fn bash_pattern(&self) -> Option<&BashPattern> {
        match self.compiled.as_ref() {
            Compiled::Bash(p) => Some(p),
            Compiled::Whole
            | Compiled::Path(_)
            | Compiled::Domain(_)
            | Compiled::Field { .. }
            | Compiled::Opaque => None,
        }
    }

    /// [`Rule::matches`] for a Bash call whose line the caller already decomposed (the policy
    /// parses once per call, not once per rule).
    pub(crate) fn matches_bash_parsed(
        &self,
        parsed: &ParsedCommand,
        command: &str,
        purpose: RulePurpose,
    ) -> bool {
        if !self.covers_tool("Bash", purpose) {
            return false;
        }
        match self.compiled.as_ref() {
            Compiled::Whole => true,
            Compiled::Bash(pattern) => bash_matches_parsed(pattern, parsed, command, purpose),
            Compiled::Opaque | Compiled::Path(_) | Compiled::Domain(_) | Compiled::Field { .. } => {
                matches!(purpose, RulePurpose::Deny | RulePurpose::Ask)
            }
        }
    }

    /// For a deny/ask match on a Bash line: the hidden command that made it match, when no
    /// visible command did (the match is the fail-closed reading of a line rein cannot see).
    pub(crate) fn hidden_bash_match<'p>(
        &self,
        parsed: &'p ParsedCommand,
        command: &str,
    ) -> Option<&'p bash::OpenCommand> {
        let Compiled::Bash(pattern) = self.compiled.as_ref() else {
            return None;
        };
        let visible = parsed.parts.iter().any(|p| pattern.touches_part(p))
            || (parsed.unchecked.is_some() && pattern.is_match(&collapse_ws(command.trim())));
        if visible {
            return None;
        }
        parsed
            .open
            .iter()
            .find(|o| pattern.could_continue(&o.prefix))
    }

    /// Whether the rule has a path pattern (a file rule).
    pub(crate) fn is_path_rule(&self) -> bool {
        matches!(self.compiled.as_ref(), Compiled::Path(_))
    }

    /// Whether this rule's tool part covers `tool_name` for `purpose` (families, MCP servers).
    pub fn covers_tool(&self, tool_name: &str, purpose: RulePurpose) -> bool {
        let tool_name = canonical_tool_name(tool_name);
        if let Some(server) = self.tool.strip_prefix("mcp__") {
            return mcp_covers(server, tool_name);
        }
        if self.tool == tool_name {
            return true;
        }
        match purpose {
            RulePurpose::Condition => false,
            RulePurpose::Allow => match self.tool.as_str() {
                "Read" => READ_FAMILY.contains(&tool_name),
                "Edit" => EDIT_FAMILY.contains(&tool_name),
                _ => false,
            },
            RulePurpose::Ask | RulePurpose::Deny => match self.tool.as_str() {
                "Read" => READ_FAMILY.contains(&tool_name),
                "Edit" | "Write" => EDIT_FAMILY.contains(&tool_name),
                _ => false,
            },
        }
    }

    /// Whether this rule covers a call of `tool_name` with `tool_input`.
    ///
    /// For Bash, `Allow` means every simple command of the line is covered by this one rule and
    /// the line could be fully checked; the other purposes mean any simple command is covered.
    pub fn matches(
        &self,
        tool_name: &str,
        tool_input: &Value,
        ctx: &RuleContext<'_>,
        purpose: RulePurpose,
    ) -> bool {
        if !self.covers_tool(tool_name, purpose) {
            return false;
        }
        let tool_name = canonical_tool_name(tool_name);
        let fail_closed = matches!(purpose, RulePurpose::Deny | RulePurpose::Ask);
        match self.compiled.as_ref() {
            Compiled::Whole => true,
            Compiled::Opaque => fail_closed,
            Compiled::Bash(pattern) => {
                let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
                    return fail_closed;
                };
                bash_matches(pattern, command, purpose)
            }
            Compiled::Path(pattern) => match input_path(tool_name, tool_input, ctx.cwd) {
                Some(path) => pattern.matches(&path, ctx, purpose),
                None => fail_closed,
            },
            Compiled::Domain(domain) => {
                let Some(host) = tool_input
                    .get("url")
                    .and_then(Value::as_str)
                    .and_then(url_host)
                else {
                    return fail_closed;
                };
                domain_matches(domain, &host, fail_closed)
            }
            Compiled::Field { field, pattern } => {
                match tool_input.get(*field).and_then(Value::as_str) {
                    // The Skill tool runs `/name` as `name`: a rule for one covers both.
                    Some(v) if *field == "skill" => {
                        pattern.is_match(v.strip_prefix('/').unwrap_or(v))
                    }
                    Some(v) => pattern.is_match(v),
                    None => fail_closed,
                }
            }
        }
    }
}

/// [`bash::parse`] of `command`, reused while the same command text is asked about again on
/// this thread.
///
/// Why: the dispatcher checks one tool call against every hook's `if` condition in turn
/// (through [`Rule::matches`]), and each used to re-parse the same line: about 1 µs for
/// `ls -la`, so 500 hooks with `if` rules cost 0.7 ms per call (docs/performance.md). Keyed by
/// the exact text, so a hit is the very parse that would have been computed; only the last
/// line is kept.
fn parse_cached(command: &str) -> std::rc::Rc<ParsedCommand> {
    use std::cell::RefCell;
    use std::rc::Rc;
    thread_local! {
        static LAST: RefCell<Option<(String, Rc<ParsedCommand>)>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((text, parsed)) = last.as_ref()
            && text == command
        {
            return Rc::clone(parsed);
        }
        let parsed = Rc::new(bash::parse(command));
        *last = Some((command.to_string(), Rc::clone(&parsed)));
        parsed
    })
}

fn bash_matches(pattern: &BashPattern, command: &str, purpose: RulePurpose) -> bool {
    bash_matches_parsed(pattern, &parse_cached(command), command, purpose)
}

fn bash_matches_parsed(
    pattern: &BashPattern,
    parsed: &ParsedCommand,
    command: &str,
    purpose: RulePurpose,
) -> bool {
    match purpose {
        RulePurpose::Allow => {
            parsed.unchecked.is_none()
                && !parsed.parts.is_empty()
                && parsed
                    .parts
                    .iter()
                    .all(|p| p.writes.is_empty() && pattern.allows_part(p))
        }
        RulePurpose::Condition | RulePurpose::Ask | RulePurpose::Deny => {
            parsed.parts.iter().any(|p| pattern.touches_part(p))
                // A line that could not be fully read is also tried as a whole.
                || (parsed.unchecked.is_some() && pattern.is_match(&collapse_ws(command.trim())))
                // Fail closed: a command whose text is hidden may be what the rule names.
                || pattern.touches_open(parsed)
        }
    }
}

fn compile_content(tool: &str, content: &str) -> Result<Compiled, String> {
    Ok(match tool {
        "Bash" => Compiled::Bash(BashPattern::compile(content)?),
        "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "NotebookRead" | "Grep"
        | "Glob" | "LS" => Compiled::Path(PathPattern::compile(content)?),
        "WebFetch" => {
            let Some(domain) = content.trim().strip_prefix("domain:") else {
                return Err("WebFetch rules take `domain:<host>`".to_string());
            };
            let domain = domain.trim().to_ascii_lowercase();
            if domain.is_empty() || domain.contains(['/', ':', ' ']) {
                return Err("expected a host name after `domain:`".to_string());
            }
            Compiled::Domain(domain)
        }
        "Agent" | "Skill" | "WebSearch" => {
            let field = match tool {
                "Agent" => "subagent_type",
                "Skill" => "skill",
                _ => "query",
            };
            let pattern = Regex::new(&format!("(?s)^{}$", wildcard(content.trim())))
                .map_err(|e| e.to_string())?;
            Compiled::Field { field, pattern }
        }
        _ if tool.starts_with("mcp__") => {
            return Err(
                "MCP rules take no content: use `mcp__server` or `mcp__server__tool`".to_string(),
            );
        }
        _ => Compiled::Opaque,
    })
}

/// `server` is the rule text after `mcp__` (`srv`, `srv__*`, `srv__tool`, `srv__to*`).
fn mcp_covers(server_part: &str, tool_name: &str) -> bool {
    let Some(rest) = tool_name.strip_prefix("mcp__") else {
        return false;
    };
    match server_part.split_once("__") {
        None => {
            if server_part.contains('*') {
                let re = format!("^{}__.+$", wildcard(server_part));
                Regex::new(&re).is_ok_and(|r| r.is_match(rest))
            } else {
                rest.strip_prefix(server_part)
                    .is_some_and(|t| t.starts_with("__"))
            }
        }
        Some(_) => {
            let re = format!("^{}$", wildcard(server_part));
            Regex::new(&re).is_ok_and(|r| r.is_match(rest))
        }
    }
}

fn domain_matches(domain: &str, host: &str, include_subdomains: bool) -> bool {
    if let Some(base) = domain.strip_prefix("*.") {
        return host.ends_with(&format!(".{base}")) || (include_subdomains && host == base);
    }
    host == domain || (include_subdomains && host.ends_with(&format!(".{domain}")))
}

/// The lowercase host of an `http(s)://` URL (no userinfo, no port).
pub(crate) fn url_host(url: &str) -> Option<String> {
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() { None } else { Some(host) }
}

/// A `*` pattern as a regex body: `*` = any text, `\*` = a literal star.
fn wildcard(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str("\\*");
            }
            '\\' if chars.peek() == Some(&'\\') => {
                chars.next();
                out.push_str("\\\\");
            }
            '*' => out.push_str(".*"),
            _ => out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

fn collapse_ws(s: &str) -> String {
    s.split([' ', '\t'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn find_unescaped(text: &str, ch: char) -> Option<usize> {
    let mut prev_backslash = false;
    for (i, c) in text.char_indices() {
        if c == ch && !prev_backslash {
            return Some(i);
        }
        prev_backslash = c == '\\' && !prev_backslash;
    }
    None
}
