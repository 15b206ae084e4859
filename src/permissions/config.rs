//! Permission settings as the permission step reads them: allow/ask/deny rules with where each
//! came from, the default mode, additional directories. The settings loader fills these.

use crate::origin::{Location, SourceKind};

/// A permission rule string with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    pub text: String,
    pub source: SourceKind,
    pub location: Location,
}

/// `permissions` merged across files (arrays concatenated in precedence order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionSettings {
    pub allow: Vec<RuleEntry>,
    pub ask: Vec<RuleEntry>,
    pub deny: Vec<RuleEntry>,
    /// The highest-precedence `defaultMode` and the tier that set it.
    pub default_mode: Option<(String, SourceKind)>,
    pub additional_directories: Vec<String>,
}
