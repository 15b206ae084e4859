//! `matcher` (match-all, exact lists, unanchored JavaScript regex) and `if` conditions, compiled
//! once at load (spec §3).
//!
//! The decisive rule (spec §3.2): absent, `""` or `"*"` match everything; a matcher made only of
//! name characters is a list of exact names; anything else is a JavaScript `RegExp` with no flags
//! and no anchors, tested with search semantics. Regexes are translated to Rust syntax
//! ([`js_regex`]) and run on the linear-time `regex` engine; only patterns that need
//! look-around or backreferences go to `fancy-regex`, under a backtracking limit, so no matcher
//! can hang a session.

mod js_regex;

use serde_json::Value;

use crate::hooks::spec::{HookEvent, MatcherClass};
use crate::permissions::rule::{Rule, RuleContext, RuleError, RulePurpose};

/// Backtracking budget for the few matchers that need `fancy-regex`; exceeding it is a
/// non-match (logged), never a hang.
const BACKTRACK_LIMIT: usize = 200_000;

/// Most bytes one compiled matcher may take (its NFA, for either engine). Why explicit: over
/// the limit the matcher is invalid ("pattern is too large") instead of costing memory —
/// `(a{1000}){1000}` would need a million states. Why 10 MiB, the `regex` crate's default:
/// real matchers compile to a few KiB, and a smaller cap would refuse patterns Claude Code
/// accepts, such as `.{1000}` (JavaScript's `.` is a large Unicode class).
const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// A compiled `matcher`.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Absent, `""` or `"*"` — or any matcher on an event without a match target.
    All,
    /// A list of exact names (split on `|`, and on `,` for most events). May be empty (a
    /// matcher such as `"|"`), which matches nothing.
    Exact(Vec<String>),
    /// An unanchored, case-sensitive regular expression (JavaScript semantics).
    Regex(JsRegex),
    /// Not a valid pattern: never matches. Holds the compile error.
    Invalid(String),
}

/// A JavaScript regex compiled for Rust: the source as written plus the engine that runs it.
#[derive(Debug, Clone)]
pub struct JsRegex {
    source: String,
    engine: Engine,
}

#[derive(Debug, Clone)]
enum Engine {
    /// Linear time; used whenever the pattern allows it.
    Linear(regex::Regex),
    /// Look-around / backreferences, bounded by [`BACKTRACK_LIMIT`].
    Backtracking(fancy_regex::Regex),
}

impl JsRegex {
    /// Compiles a JS `RegExp` source; the error reads like JavaScript's.
    pub fn new(source: &str) -> Result<JsRegex, String> {
        let translated = js_regex::translate(source)?;
        let engine = if translated.needs_backtracking {
            fancy_regex::RegexBuilder::new(&translated.pattern)
                .backtrack_limit(BACKTRACK_LIMIT)
                .delegate_size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map(Engine::Backtracking)
                .map_err(|e| match e {
                    fancy_regex::Error::CompileError(fancy_regex::CompileError::InnerError(
                        inner,
                    )) if inner.size_limit().is_some() => too_large(),
                    other => format!("not supported by rein's regex engine: {other}"),
                })?
        } else {
            regex::RegexBuilder::new(&translated.pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map(Engine::Linear)
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(_) => too_large(),
                    other => format!("not supported by rein's regex engine: {other}"),
                })?
        };
        Ok(JsRegex {
            source: source.to_string(),
            engine,
        })
    }

    /// The pattern as written in the settings file.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern needs the backtracking engine.
    pub fn is_backtracking(&self) -> bool {
        matches!(self.engine, Engine::Backtracking(_))
    }

    /// Search semantics (JS `.test()`): true if the pattern matches anywhere in `value`.
    pub fn is_match(&self, value: &str) -> bool {
        match &self.engine {
            Engine::Linear(re) => re.is_match(value),
            Engine::Backtracking(re) => match re.is_match(value) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(matcher = %self.source, error = %e, "hook matcher gave up; treated as no match");
                    false
                }
            },
        }
    }
}

fn too_large() -> String {
    format!(
        "pattern is too large (compiled, it exceeds rein's {} KiB limit)",
        REGEX_SIZE_LIMIT / 1024
    )
}

impl Matcher {
    /// Compiles a matcher for `event` per spec §3.1–3.2.
    pub fn compile(event: Option<HookEvent>, text: Option<&str>) -> Matcher {
        Matcher::compile_class(MatcherClass::of(event), text)
    }

    /// Like [`Matcher::compile`], for a precomputed class (lets the loader cache by class).
    pub fn compile_class(class: MatcherClass, text: Option<&str>) -> Matcher {
        let text = match text {
            None | Some("") | Some("*") => return Matcher::All,
            Some(t) => t,
        };
        match class {
            MatcherClass::NoTarget => return Matcher::All,
            MatcherClass::Extended => {
                if text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | ',' | ' ' | '-'))
                {
                    return Matcher::exact(text.split(['|', ',']));
                }
            }
            MatcherClass::Strict => {
                if text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|'))
                {
                    return Matcher::exact(text.split('|'));
                }
            }
        }
        match JsRegex::new(text) {
            Ok(re) => Matcher::Regex(re),
            Err(e) => Matcher::Invalid(format!(
                "Invalid regex pattern in hook matcher: {text}: {e}"
            )),
        }
    }

    fn exact<'a>(parts: impl Iterator<Item = &'a str>) -> Matcher {
        Matcher::Exact(
            parts
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
        )
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

    /// A short human description for `rein hooks list`: `all`, `exact [Bash, Read]`,
    /// `regex /mcp__.*/`, `invalid (…)`.
    pub fn describe(&self) -> String {
        match self {
            Matcher::All => "all".to_string(),
            Matcher::Exact(names) if names.is_empty() => "exact [] (matches nothing)".to_string(),
            Matcher::Exact(names) => format!("exact [{}]", names.join(", ")),
            Matcher::Regex(re) if re.is_backtracking() => {
                format!("regex /{}/ (backtracking, bounded)", re.as_str())
            }
            Matcher::Regex(re) => format!("regex /{}/", re.as_str()),
            Matcher::Invalid(msg) => format!("invalid, never matches ({msg})"),
        }
    }
}

/// Former tool names, in both directions (spec §3.3): the other names of `name`'s tool, e.g.
/// `Agent` → `["Task"]`, `Task` → `["Agent"]`, `TaskStop` → `["KillShell", "KillBash"]`.
pub fn tool_aliases(name: &str) -> &'static [&'static str] {
    match name {
        "Agent" => &["Task"],
        "Task" => &["Agent"],
        "TaskStop" => &["KillShell", "KillBash"],
        "KillShell" => &["TaskStop", "KillBash"],
        "KillBash" => &["TaskStop", "KillShell"],
        "ListAgents" => &["ListPeers"],
        "ListPeers" => &["ListAgents"],
        "SendUserMessage" => &["Brief"],
        "Brief" => &["SendUserMessage"],
        "ListMcpResourcesTool" => &["ListMcpResources"],
        "ListMcpResources" => &["ListMcpResourcesTool"],
        "ReadMcpResourceTool" => &["ReadMcpResource"],
        "ReadMcpResource" => &["ReadMcpResourceTool"],
        "ReadMcpResourceDirTool" => &["ReadMcpResourceDir"],
        "ReadMcpResourceDir" => &["ReadMcpResourceDirTool"],
        "SetGoal" => &["ProposeGoal"],
        "ProposeGoal" => &["SetGoal"],
        _ => &[],
    }
}

/// A compiled `if` condition: one permission rule (spec §3.4).
#[derive(Debug, Clone)]
pub struct IfCondition {
    pub rule: Rule,
}

impl IfCondition {
    /// Parses the `if` string as a permission rule.
    pub fn parse(text: &str) -> Result<IfCondition, RuleError> {
        Ok(IfCondition {
            rule: Rule::parse(text)?,
        })
    }

    /// Whether the rule covers this tool call (condition anchoring, spec §3.4).
    pub fn matches(&self, tool_name: &str, tool_input: &Value, ctx: &RuleContext<'_>) -> bool {
        self.rule
            .matches(tool_name, tool_input, ctx, RulePurpose::Condition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(event: HookEvent, text: &str) -> Matcher {
        Matcher::compile(Some(event), Some(text))
    }

    /// Every row of the spec §3.2 table, against tool `Bash`.
    #[test]
    fn spec_table_against_bash() {
        let fires = [
            "Bash",
            "Bash ",
            "Bash|Read",
            "Bash,Read",
            "Read, Bash",
            "Bas.*",
            "^Bash$",
            "B.sh",
            "as.",
            ".*",
            "",
            "*",
        ];
        let silent = [
            "bash",
            "BASH",
            "Bas",
            "Ba",
            "Bash Read",
            "^as",
            "mcp__.*",
            "Read|Edit",
            "Agent|Task",
            "Bash(echo *)",
            "(?i)bash",
        ];
        for t in fires {
            assert!(
                m(HookEvent::PreToolUse, t).matches("Bash"),
                "{t:?} should fire"
            );
        }
        for t in silent {
            assert!(
                !m(HookEvent::PreToolUse, t).matches("Bash"),
                "{t:?} should not fire"
            );
        }
        assert!(matches!(
            m(HookEvent::PreToolUse, "(?i)bash"),
            Matcher::Invalid(_)
        ));
        assert!(matches!(
            m(HookEvent::PreToolUse, "Bash(echo *)"),
            Matcher::Regex(_)
        ));
        assert!(matches!(
            m(HookEvent::PreToolUse, "Bash Read"),
            Matcher::Exact(_)
        ));
    }

    #[test]
    fn hyphenated_names_are_exact() {
        let mm = m(HookEvent::PreToolUse, "mcp__brave-search");
        assert!(matches!(mm, Matcher::Exact(_)));
        assert!(!mm.matches("mcp__brave-search__web"));
        assert!(!m(HookEvent::PreToolUse, "mcp__server").matches("mcp__server__tool"));
        assert!(m(HookEvent::PreToolUse, "mcp__server__.*").matches("mcp__server__tool"));
    }

    #[test]
    fn strict_events_split_on_pipe_only() {
        // FileChanged: `.` makes it a regex; `,` is not a separator.
        let mm = m(HookEvent::FileChanged, ".envrc|.env");
        assert!(matches!(mm, Matcher::Regex(_)));
        assert!(mm.matches(".env"));
        let mm = m(HookEvent::StopFailure, "rate_limit,overloaded");
        assert!(matches!(mm, Matcher::Regex(_)));
        assert!(!mm.matches("rate_limit"));
        assert!(mm.matches("rate_limit,overloaded"));
        let mm = m(HookEvent::StopFailure, "rate_limit|overloaded");
        assert!(matches!(mm, Matcher::Exact(ref v) if v.len() == 2));
        assert!(mm.matches("overloaded"));
        // Space is not part of the strict set: regex with a literal space.
        assert!(matches!(
            m(HookEvent::StopFailure, "a b"),
            Matcher::Regex(_)
        ));
    }

    #[test]
    fn no_target_events_ignore_the_matcher() {
        assert!(matches!(m(HookEvent::Stop, "(?i)bad"), Matcher::All));
        assert!(matches!(
            m(HookEvent::UserPromptSubmit, "Bash"),
            Matcher::All
        ));
    }

    #[test]
    fn empty_exact_list_matches_nothing() {
        let mm = m(HookEvent::PreToolUse, " | ,");
        assert!(matches!(mm, Matcher::Exact(ref v) if v.is_empty()));
        assert!(!mm.matches(""));
        assert!(!mm.matches("Bash"));
    }

    #[test]
    fn js_regex_dialect() {
        let yes: &[(&str, &str)] = &[
            (r"\d+", "abc123"),
            (r"^mcp__\w+__\w+$", "mcp__srv__tool"),
            (r"mcp\/x", "mcp/x"),
            (r"a{", "a{"),
            (r"x]", "x]"),
            (r"[[]", "["),
            (r"[a-c&&]", "&"),
            (r"\Aa", "Aa"),
            (r"[^]", "z"),
            (r"(?<n>ab)\k<n>", "abab"),
            (r"(a)\1", "aa"),
            (r"Ed(?=it)", "Edit"),
            (r"(?<!Multi)Edit", "Edit"),
            (r"\x41\u0042", "AB"),
            (r"\s", "a\u{3000}b"),
            (r"\bRead\b", "Read"),
            (r"\cJ", "\n"),
            (r"\101", "A"),
            (r"[\d-z]", "-"),
            (r"a{2,3}", "aa"),
            (r"(Write|Edit)", "MultiEdit"),
            (r"(?=\d)[^\D]\s?\b", "5"),
            (r"(?<![\w-])Bash\b", "Bash"),
            // JS `\b` is ASCII: `é` is not a word character, so both boundaries exist.
            (r"\bBash\b", "éBashé"),
            (r"(?=B)\bBash\b", "éBashé"),
        ];
        for (pat, value) in yes {
            let mm = m(HookEvent::PreToolUse, pat);
            assert!(mm.matches(value), "{pat:?} should match {value:?}: {mm:?}");
        }
        let no: &[(&str, &str)] = &[
            (r"\d", "١"),
            (r"\w", "é"),
            (r"a.b", "a\rb"),
            (r"a.b", "a\u{2028}b"),
            (r"[]", "a"),
            (r"(?<!Multi)Edit", "MultiEdit"),
            (r"\8", "\u{8}"),
        ];
        for (pat, value) in no {
            let mm = m(HookEvent::PreToolUse, pat);
            assert!(!mm.matches(value), "{pat:?} should not match {value:?}");
            assert!(!matches!(mm, Matcher::Invalid(_)), "{pat:?} is valid JS");
        }
        let invalid = [
            "(?i)bash",
            "*a",
            "a**",
            "(",
            ")",
            "a)",
            "[a",
            "[z-a]",
            "a{3,2}",
            "\\",
            "(?P<x>a)",
            "{1}",
            "x|+",
            "^*",
            "(?<a>x)(?<a>y)",
            r"(?<n>a)\k<m>",
            "(?<=a)*",
        ];
        for pat in invalid {
            let mm = m(HookEvent::PreToolUse, pat);
            assert!(
                matches!(mm, Matcher::Invalid(_)),
                "{pat:?} should be invalid: {mm:?}"
            );
            assert!(!mm.matches(pat));
        }
    }

    #[test]
    fn invalid_message_names_the_pattern() {
        let Matcher::Invalid(msg) = m(HookEvent::PreToolUse, "(?i)bash") else {
            panic!("expected invalid");
        };
        assert_eq!(
            msg,
            "Invalid regex pattern in hook matcher: (?i)bash: Invalid group"
        );
    }

    #[test]
    fn catastrophic_patterns_stay_fast() {
        let long = "a".repeat(100_000) + "!";
        let mm = m(HookEvent::PreToolUse, "(a+)+$");
        assert!(matches!(mm, Matcher::Regex(ref r) if !r.is_backtracking()));
        assert!(!mm.matches(&(long.clone() + "b")));
        assert!(m(HookEvent::PreToolUse, "(a+)+!$").matches(&long));
        // Backtracking engine: the limit turns blow-up into a non-match.
        let fancy = m(HookEvent::PreToolUse, "(?=x)|(a|aa)+$");
        assert!(matches!(fancy, Matcher::Regex(ref r) if r.is_backtracking()));
        assert!(!fancy.matches(&long));
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let ok = "(".repeat(60) + "a" + &")".repeat(60);
        let deep = "(".repeat(10_000) + "a" + &")".repeat(10_000);
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                (
                    Matcher::compile(Some(HookEvent::PreToolUse), Some(&ok)).matches("a"),
                    Matcher::compile(Some(HookEvent::PreToolUse), Some(&deep)).describe(),
                )
            })
            .unwrap();
        let (ok_matches, deep_description) = handle.join().unwrap();
        assert!(ok_matches);
        assert!(
            deep_description.contains("too deeply"),
            "{deep_description}"
        );
    }

    #[test]
    fn describe_forms() {
        assert_eq!(Matcher::compile(None, None).describe(), "all");
        assert_eq!(
            m(HookEvent::PreToolUse, "Bash|Read").describe(),
            "exact [Bash, Read]"
        );
        assert_eq!(
            m(HookEvent::PreToolUse, "mcp__.*").describe(),
            "regex /mcp__.*/"
        );
        assert!(
            m(HookEvent::PreToolUse, "(?i)x")
                .describe()
                .starts_with("invalid")
        );
    }

    #[test]
    fn aliases_are_symmetric() {
        for name in [
            "Agent",
            "Task",
            "TaskStop",
            "KillShell",
            "KillBash",
            "SetGoal",
            "Brief",
        ] {
            for other in tool_aliases(name) {
                assert!(tool_aliases(other).contains(&name), "{name} <-> {other}");
            }
        }
        assert!(tool_aliases("Bash").is_empty());
    }

    proptest::proptest! {
        /// Any matcher text compiles to something (never a panic), and running it is total.
        #[test]
        fn compile_and_match_are_total(text in r"[\\()\[\]{}<>?*+|^$.,:=!a-dk0-9_ -]{0,32}", value in "[a-d0-9_ ]{0,16}") {
            for event in [HookEvent::PreToolUse, HookEvent::FileChanged, HookEvent::Stop] {
                let m = Matcher::compile(Some(event), Some(&text));
                let hit = m.matches(&value);
                match &m {
                    Matcher::All => proptest::prop_assert!(hit),
                    Matcher::Exact(names) => proptest::prop_assert_eq!(hit, names.contains(&value)),
                    Matcher::Regex(re) => proptest::prop_assert_eq!(re.as_str(), text.as_str()),
                    Matcher::Invalid(_) => proptest::prop_assert!(!hit),
                }
                proptest::prop_assert!(!m.describe().is_empty());
            }
        }
    }
}
