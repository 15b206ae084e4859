//! Which tool names a hook matcher can meet in rein, for `rein hooks validate` (a matcher that
//! differs from a tool's name only in case never matches: matching is case-sensitive) and
//! `rein hooks list` (a matcher naming only tools rein does not have never fires).

use crate::hooks::matcher::{Matcher, tool_aliases};
use crate::hooks::spec::{HookEvent, MatcherClass};

/// The tools a rein session offers: the Agent tool, the built-in tools
/// ([`crate::tools::builtin_tools`]) and Skill (when there are skills or commands to run). A
/// matcher is tested against each name and its former names ([`tool_aliases`]).
pub const REIN_TOOLS: &[&str] = &[
    "Agent",
    "Bash",
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "TaskStop",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "ToolSearch",
    "Skill",
];

/// Tool names of Claude Code (2.1.328 and earlier versions whose names still appear in shared
/// settings) that rein does not have.
pub const CLAUDE_CODE_ONLY_TOOLS: &[&str] = &[
    "AskUserQuestion",
    "BashOutput",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "LS",
    "LSP",
    "ListAgents",
    "ListMcpResourcesTool",
    "Monitor",
    "MultiEdit",
    "NotebookRead",
    "ReadMcpResourceTool",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "SlashCommand",
    "TodoWrite",
    "Workflow",
];

/// Every name a rein tool is matched under (its own and its former names).
fn rein_names() -> impl Iterator<Item = &'static str> {
    REIN_TOOLS
        .iter()
        .flat_map(|t| std::iter::once(*t).chain(tool_aliases(t).iter().copied()))
}

fn is_rein_name(name: &str) -> bool {
    rein_names().any(|n| n == name)
}

/// Every tool name rein or Claude Code knows.
fn known_names() -> impl Iterator<Item = &'static str> {
    rein_names().chain(CLAUDE_CODE_ONLY_TOOLS.iter().copied())
}

/// Whether `event`'s matcher is tested against a tool name.
pub fn matches_tool_names(event: Option<HookEvent>) -> bool {
    event.is_some_and(|e| e.is_tool_event() && MatcherClass::of(Some(e)) != MatcherClass::NoTarget)
}

/// A part of a tool matcher that never matches because of case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseSlip {
    /// The name or regex as written.
    pub written: String,
    /// The known tool names it matches when case is ignored.
    pub meant: Vec<&'static str>,
    /// A regex (else one name of an exact list).
    pub regex: bool,
}

impl CaseSlip {
    /// The validate message.
    pub fn message(&self) -> String {
        let lacking: Vec<&str> = self
            .meant
            .iter()
            .copied()
            .filter(|m| !is_rein_name(m))
            .collect();
        let note = match lacking.len() {
            0 => String::new(),
            _ if lacking.len() == self.meant.len() && !self.regex => {
                " (a Claude Code tool rein does not have)".to_string()
            }
            _ => format!(" (rein has no {})", lacking.join(", ")),
        };
        if self.regex {
            format!(
                "matcher {:?} never matches: tool names are case-sensitive, and only with case ignored would it match {}{note}",
                self.written,
                self.meant.join(", ")
            )
        } else {
            format!(
                "matcher {:?} never matches: tool names are case-sensitive; did you mean {:?}?{note}",
                self.written, self.meant[0]
            )
        }
    }
}

/// Parts of a tool matcher that never match because of case. An exact list is checked name by
/// name (`"Read|write"` → `write`); a regex as a whole, when it matches no known tool name but
/// would without case (`"bash.*"`).
pub fn case_slips(matcher: &Matcher) -> Vec<CaseSlip> {
    match matcher {
        Matcher::Exact(names) => names
            .iter()
            .filter(|n| !n.starts_with("mcp__") && !known_names().any(|k| k == n.as_str()))
            .filter_map(|n| {
                known_names()
                    .find(|k| k.eq_ignore_ascii_case(n))
                    .map(|k| CaseSlip {
                        written: n.clone(),
                        meant: vec![k],
                        regex: false,
                    })
            })
            .collect(),
        Matcher::Regex(re) => {
            if known_names().any(|k| re.is_match(k)) {
                return Vec::new();
            }
            let Ok(folded) = regex::RegexBuilder::new(re.as_str())
                .case_insensitive(true)
                .build()
            else {
                return Vec::new();
            };
            let meant: Vec<&'static str> = known_names().filter(|k| folded.is_match(k)).collect();
            if meant.is_empty() {
                Vec::new()
            } else {
                vec![CaseSlip {
                    written: re.as_str().to_string(),
                    meant,
                    regex: true,
                }]
            }
        }
        Matcher::All | Matcher::Invalid(_) => Vec::new(),
    }
}

/// Whether a tool matcher can fire in rein.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It matches one of rein's tools (or names a tool of a configured MCP server).
    Fires,
    /// It matches none of rein's own tools; only tools of the configured MCP servers might.
    OnlyMcp(Vec<String>),
    /// It can never match: why, in words.
    Never(String),
}

/// Whether `matcher` (of a tool event) can ever match a tool of a rein session whose MCP
/// servers are `mcp_servers`.
pub fn reach(matcher: &Matcher, mcp_servers: &[String]) -> Reach {
    match matcher {
        Matcher::All | Matcher::Invalid(_) => Reach::Fires,
        Matcher::Exact(names) => {
            let mut why = Vec::new();
            for name in names {
                if is_rein_name(name) {
                    return Reach::Fires;
                }
                match mcp_server_of(name) {
                    Some(server) if mcp_servers.iter().any(|s| s == server) => {
                        return Reach::Fires;
                    }
                    Some(server) => why.push(format!("MCP server \"{server}\" is not configured")),
                    None => match rein_names().find(|n| n.eq_ignore_ascii_case(name)) {
                        Some(n) => why.push(format!(
                            "no tool is named {name} (tool names are case-sensitive: {n})"
                        )),
                        None => why.push(format!("rein has no tool {name}")),
                    },
                }
            }
            if why.is_empty() {
                Reach::Never("its matcher lists no tool name".to_string())
            } else {
                Reach::Never(why.join("; "))
            }
        }
        Matcher::Regex(re) => {
            if rein_names().any(|n| re.is_match(n)) {
                Reach::Fires
            } else if mcp_servers.is_empty() {
                Reach::Never(format!(
                    "its matcher matches none of rein's tools ({}) and no MCP server is configured",
                    REIN_TOOLS.join(", ")
                ))
            } else {
                Reach::OnlyMcp(mcp_servers.to_vec())
            }
        }
    }
}

/// `server` of `mcp__server__tool` (or of `mcp__server__`).
fn mcp_server_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    Some(rest.split("__").next().unwrap_or(rest))
}
