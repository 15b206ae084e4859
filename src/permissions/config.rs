//! Permission settings as the permission step reads them: allow/ask/deny rules with where each
//! came from, the default mode, additional directories. The settings loader fills these.

use crate::origin::{Location, SourceKind};
use crate::permissions::rule::{Rule, RuleError};

/// A permission rule string with where it came from, compiled once when it is loaded.
#[derive(Debug, Clone)]
pub struct RuleEntry {
    /// The rule as written.
    pub text: String,
    /// The settings tier it came from.
    pub source: SourceKind,
    /// Where it is written.
    pub location: Location,
    /// The compiled rule, or why it does not compile (the permission step fails closed on a
    /// broken deny or ask rule).
    pub compiled: Result<Rule, RuleError>,
}

impl RuleEntry {
    /// Compiles `text`.
    #[cfg(test)]
    pub fn new(text: impl Into<String>, source: SourceKind, location: Location) -> RuleEntry {
        let text = text.into();
        let compiled = Rule::parse(&text);
        RuleEntry {
            text,
            source,
            location,
            compiled,
        }
    }
}

/// Two entries are the same rule text from the same place (the compiled form follows from the
/// text).
impl PartialEq for RuleEntry {
    fn eq(&self, other: &RuleEntry) -> bool {
        self.text == other.text && self.source == other.source && self.location == other.location
    }
}

impl Eq for RuleEntry {}

/// `permissions` merged across files (arrays concatenated in precedence order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionSettings {
    pub allow: Vec<RuleEntry>,
    pub ask: Vec<RuleEntry>,
    pub deny: Vec<RuleEntry>,
    /// The highest-precedence `defaultMode` and the tier that set it.
    pub default_mode: Option<(String, SourceKind)>,
    pub additional_directories: Vec<String>,
    /// `permissions.disableBypassPermissionsMode: "disable"` in some settings file.
    pub disable_bypass_mode: bool,
}
