//! `matcher` (match-all, exact lists, unanchored regex) and `if` conditions, compiled once at
//! load (spec §3).
//!
//! SKELETON: the API is the contract used by settings and the dispatcher; the bodies are
//! placeholders until the settings/matcher work lands.

use serde_json::Value;

use crate::hooks::event::HookEvent;
use crate::permissions::rule::{Rule, RuleContext, RuleError, RulePurpose};

/// A compiled `matcher`.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Absent, `""` or `"*"`.
    All,
    /// A list of exact names (split on `|`, and on `,` for most events).
    Exact(Vec<String>),
    /// An unanchored, case-sensitive regular expression (JavaScript semantics).
    Regex(regex::Regex),
    /// Not a valid pattern: never matches. Holds the compile error.
    Invalid(String),
}

impl Matcher {
    /// Compiles a matcher for `event` per spec §3.1–3.2.
    pub fn compile(_event: Option<HookEvent>, text: Option<&str>) -> Matcher {
        match text {
            None | Some("") | Some("*") => Matcher::All,
            Some(t) => Matcher::Exact(t.split('|').map(|s| s.trim().to_string()).collect()),
        }
    }

    /// Whether the matcher accepts `value` (tool name, source, reason, …).
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(names) => names.iter().any(|n| n == value),
            Matcher::Regex(re) => re.is_match(value),
            Matcher::Invalid(_) => false,
        }
    }
}

/// A compiled `if` condition: one permission rule (spec §3.4).
#[derive(Debug, Clone)]
pub struct IfCondition {
    pub rule: Rule,
}

impl IfCondition {
    pub fn parse(text: &str) -> Result<IfCondition, RuleError> {
        Ok(IfCondition {
            rule: Rule::parse(text)?,
        })
    }

    pub fn matches(&self, tool_name: &str, tool_input: &Value, ctx: &RuleContext<'_>) -> bool {
        self.rule
            .matches(tool_name, tool_input, ctx, RulePurpose::Condition)
    }
}
