//! Permission rules: `Tool`, `Tool(content)`, `Tool(*)` — parsing and matching against a call.
//!
//! SKELETON: the API below is the contract used by hook `if` conditions and by the permission
//! service; the matching itself is a placeholder (tool name only) until the permissions work
//! lands.

use std::path::Path;

use serde_json::Value;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Canonical tool name (aliases resolved, e.g. `Task` → `Agent`).
    pub tool: String,
    /// `None` for `Tool`, `Tool()` and `Tool(*)`.
    pub content: Option<String>,
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        let (tool, content) = match text.find('(') {
            Some(open) => {
                if !text.ends_with(')') {
                    return Err(RuleError {
                        rule: text.to_string(),
                        reason: "missing closing `)`".to_string(),
                    });
                }
                let inner = &text[open + 1..text.len() - 1];
                let content = if inner.is_empty() || inner == "*" {
                    None
                } else {
                    Some(inner.to_string())
                };
                (&text[..open], content)
            }
            None => (text, None),
        };
        if tool.is_empty() {
            return Err(RuleError {
                rule: text.to_string(),
                reason: "empty tool name".to_string(),
            });
        }
        Ok(Rule {
            tool: tool.to_string(),
            content,
        })
    }

    /// Whether this rule covers a call of `tool_name` with `tool_input`.
    pub fn matches(
        &self,
        tool_name: &str,
        _tool_input: &Value,
        _ctx: &RuleContext<'_>,
        _purpose: RulePurpose,
    ) -> bool {
        self.tool == tool_name && self.content.is_none()
    }
}
