//! Why a configured hook does or does not run: the facts `rein hooks list` and
//! `rein hooks explain` print, computed from the loaded [`Settings`] and, for one event firing,
//! from the dispatcher's own selection.
//!
//! [`explain`] never re-implements selection: the handlers that would run are exactly
//! [`Dispatcher::select`]'s; every other handler of the event gets the first reason, in the
//! dispatcher's order of checks (inactive → matcher → `if` → de-duplication), that kept it out.

use std::path::PathBuf;

use crate::hooks::dispatch::{Dispatcher, SelectedHandler, Target, dedup, tool_names};
use crate::hooks::matcher::Matcher;
use crate::hooks::spec::HookEvent;
use crate::hooks::spec::MatcherClass;
use crate::permissions::rule::RuleContext;
use crate::settings::schema::{ConfiguredHandler, HandlerKind, Inactive, Settings};
use crate::settings::tool_names;

/// A reason with a stable machine-readable code (the `--json` field `code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub code: &'static str,
    pub message: String,
}

fn reason(code: &'static str, message: impl Into<String>) -> Reason {
    Reason {
        code,
        message: message.into(),
    }
}

/// Another handler with the same identity (spec §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duplicate {
    /// Index (in [`Settings::handlers`]) of the copy that survives de-duplication.
    pub of: usize,
    /// Both copies have the same matcher, so this one is removed on every firing; otherwise
    /// only when both match.
    pub always: bool,
}

/// One configured handler as `rein hooks list` reports it.
#[derive(Debug, Clone)]
pub struct HandlerStatus<'a> {
    /// Position in effective order (index into [`Settings::handlers`]).
    pub index: usize,
    pub handler: &'a ConfiguredHandler,
    /// Why it never fires, if it never does.
    pub never: Option<Reason>,
    pub duplicate: Option<Duplicate>,
}

/// How the matcher is read: `(kind, description)`, kind ∈ `all|exact|regex|invalid|ignored`.
pub fn matcher_summary(handler: &ConfiguredHandler) -> (&'static str, String) {
    let text = handler.matcher_text.as_deref();
    let class = MatcherClass::of(handler.event);
    if class == MatcherClass::NoTarget
        && let (Some(e), Some(t)) = (handler.event, text)
        && !t.is_empty()
        && t != "*"
    {
        return (
            "ignored",
            format!("{t:?} (ignored: {e} has no match target, so every firing matches)"),
        );
    }
    let kind = match &handler.matcher {
        Matcher::All => "all",
        Matcher::Exact(_) => "exact",
        Matcher::Regex(_) => "regex",
        Matcher::Invalid(_) => "invalid",
    };
    let read_as = match &handler.matcher {
        Matcher::All => "matches everything".to_string(),
        Matcher::Exact(names) if names.is_empty() => {
            "exact list of no names: matches nothing".to_string()
        }
        Matcher::Exact(names) => format!("exact list, case-sensitive: {}", names.join(", ")),
        Matcher::Regex(_) => "JavaScript regex, unanchored search, case-sensitive".to_string(),
        Matcher::Invalid(_) => "invalid regex: never matches".to_string(),
    };
    let description = match text {
        None => format!("(none) ({read_as})"),
        Some(t) => format!("{t:?} ({read_as})"),
    };
    (kind, description)
}

/// Why an inactive handler never runs, in words.
pub fn inactive_reason(handler: &ConfiguredHandler, why: &Inactive, settings: &Settings) -> Reason {
    let event = handler.origin.event_key.as_str();
    match why {
        Inactive::UnknownEvent => reason(
            "unknown_event",
            format!(
                "\"{event}\" is not a hook event (Claude Code drops it with \"Unknown hook event\")"
            ),
        ),
        Inactive::EventNotFired => reason(
            "event_not_fired",
            format!("rein never fires {event} (Claude Code does; rein has no such feature)"),
        ),
        Inactive::IfOnNonToolEvent => reason(
            "if_on_non_tool_event",
            format!(
                "it has an \"if\", which cannot be evaluated on {event} (only on tool events), so it is skipped every time"
            ),
        ),
        Inactive::InvalidMatcher(msg) => reason("invalid_matcher", msg.clone()),
        Inactive::InvalidIf(msg) => reason("invalid_if", format!("invalid \"if\" rule: {msg}")),
        Inactive::Disabled(file) => {
            let key = if settings.disable_all_hooks {
                "disableAllHooks"
            } else {
                "allowManagedHooksOnly"
            };
            reason("disabled", format!("\"{key}\": true in {file}"))
        }
        Inactive::FileVoided(why) => reason(
            "file_voided",
            format!("nothing in its settings file is applied: {why}"),
        ),
        Inactive::UnsupportedType => reason(
            "unsupported_type",
            match (&handler.kind, handler.event) {
                (HandlerKind::Prompt(_) | HandlerKind::Agent(_), Some(event)) => format!(
                    "{} hooks cannot run on {event} (Claude Code rejects them there)",
                    handler.kind.type_name()
                ),
                _ => format!("{} hooks are not run by rein yet", handler.kind.type_name()),
            },
        ),
    }
}

/// An active handler that runs but can never reach what it calls: an http hook whose URL
/// `allowedHttpHookUrls` refuses (each firing is an error, or a block with `onFailure: block`).
fn never_reaches(handler: &ConfiguredHandler, settings: &Settings) -> Option<Reason> {
    match &handler.kind {
        HandlerKind::Http(http) => settings
            .http_policy
            .url_refusal(&http.url)
            .map(|refusal| reason("url_not_allowed", refusal)),
        _ => None,
    }
}

/// The same configured handler: its origin (file, position, tier, place in the file) names it.
fn same_handler(a: &ConfiguredHandler, b: &ConfiguredHandler) -> bool {
    a.origin == b.origin
}

fn index_of(settings: &Settings, handler: &ConfiguredHandler) -> Option<usize> {
    settings
        .handlers
        .iter()
        .position(|h| same_handler(h, handler))
}

/// A tool-event handler whose matcher names only tools a rein session with `mcp_servers`
/// does not have.
fn no_such_tool(handler: &ConfiguredHandler, mcp_servers: &[String]) -> Option<Reason> {
    if !tool_names::matches_tool_names(handler.event) {
        return None;
    }
    match tool_names::reach(&handler.matcher, mcp_servers) {
        tool_names::Reach::Never(why) => Some(reason("no_such_tool", why)),
        tool_names::Reach::Fires | tool_names::Reach::OnlyMcp(_) => None,
    }
}

/// Every handler of `settings` with whether and why it never fires, in effective order, in a
/// session whose configured MCP servers are `mcp_servers`.
pub fn statuses<'a>(settings: &'a Settings, mcp_servers: &[String]) -> Vec<HandlerStatus<'a>> {
    let mut out: Vec<HandlerStatus<'_>> = settings
        .handlers
        .iter()
        .enumerate()
        .map(|(index, handler)| HandlerStatus {
            index,
            handler,
            never: handler
                .inactive
                .as_ref()
                .map(|why| inactive_reason(handler, why, settings))
                .or_else(|| never_reaches(handler, settings))
                .or_else(|| no_such_tool(handler, mcp_servers)),
            duplicate: None,
        })
        .collect();
    // Static duplicates: the dispatcher's own dedup over every active command handler of an
    // event (as if all of them matched one firing).
    for event in HookEvent::ALL {
        let candidates: Vec<SelectedHandler<'_>> = settings
            .handlers
            .iter()
            .filter(|h| h.event == Some(event) && h.inactive.is_none())
            .filter_map(SelectedHandler::configured)
            .collect();
        if candidates.len() < 2 {
            continue;
        }
        let keys: Vec<(usize, String)> = candidates
            .iter()
            .filter_map(|sel| Some((index_of(settings, sel.handler()?)?, sel.dedup_key()?)))
            .collect();
        let kept: Vec<usize> = dedup(candidates)
            .iter()
            .filter_map(|sel| index_of(settings, sel.handler()?))
            .collect();
        for (i, key) in &keys {
            if kept.contains(i) {
                continue;
            }
            let Some((survivor, _)) = keys.iter().find(|(j, k)| k == key && kept.contains(j))
            else {
                continue;
            };
            let always = settings.handlers[*i].matcher.describe()
                == settings.handlers[*survivor].matcher.describe();
            let dup = Duplicate {
                of: *survivor,
                always,
            };
            out[*i].duplicate = Some(dup);
            if always && out[*i].never.is_none() {
                let s = &settings.handlers[*survivor];
                out[*i].never = Some(reason(
                    "duplicate",
                    format!(
                        "removed as a duplicate of #{} at {} ({} settings): same command and \"if\", which runs once",
                        survivor + 1,
                        s.origin.location,
                        s.origin.source.as_str()
                    ),
                ));
            }
        }
    }
    out
}

/// What `explain` says about one handler of the event.
#[derive(Debug, Clone)]
pub enum Verdict {
    Runs,
    Skipped(Reason),
}

/// One handler configured for the event being explained.
#[derive(Debug, Clone)]
pub struct Explained<'a> {
    pub index: usize,
    pub handler: &'a ConfiguredHandler,
    pub verdict: Verdict,
}

/// Which configured handlers of `target`'s event would run for it, and why each other one
/// would not. Runs nothing.
pub fn explain<'a>(
    settings: &'a Settings,
    dispatcher: &Dispatcher,
    target: &Target<'_>,
) -> Vec<Explained<'a>> {
    let selected = dispatcher.select(target);
    let env = dispatcher.environment();
    let home = env.home.clone().unwrap_or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"))
    });
    let cwd = PathBuf::from(target.cwd);
    let ctx = RuleContext {
        cwd: &cwd,
        project_dir: &env.project_dir,
        home: &home,
    };
    let event = target.event;
    let mut out = Vec::new();
    for (index, handler) in settings.handlers.iter().enumerate() {
        if handler.event != Some(event) {
            continue;
        }
        let runs = selected
            .iter()
            .any(|sel| sel.handler().is_some_and(|h| same_handler(h, handler)));
        let verdict = if runs {
            Verdict::Runs
        } else {
            Verdict::Skipped(skip_reason(handler, target, settings, &selected, &ctx))
        };
        out.push(Explained {
            index,
            handler,
            verdict,
        });
    }
    out
}

fn skip_reason(
    handler: &ConfiguredHandler,
    target: &Target<'_>,
    settings: &Settings,
    selected: &[SelectedHandler<'_>],
    ctx: &RuleContext<'_>,
) -> Reason {
    if let Some(why) = &handler.inactive {
        return inactive_reason(handler, why, settings);
    }
    let this = match &handler.kind {
        HandlerKind::Prompt(prompt) | HandlerKind::Agent(prompt) => SelectedHandler::Model {
            handler,
            prompt,
            agent: matches!(handler.kind, HandlerKind::Agent(_)),
        },
        _ => match SelectedHandler::configured(handler) {
            Some(this) => this,
            None => return inactive_reason(handler, &Inactive::UnsupportedType, settings),
        },
    };
    if let Some(value) = target.match_value {
        let names: Vec<&str> = if target.event.is_tool_event() {
            tool_names(value)
        } else {
            vec![value]
        };
        if !names.iter().any(|n| handler.matcher.matches(n)) {
            let (_, how) = matcher_summary(handler);
            let others = if names.len() > 1 {
                format!(" (nor its other names: {})", names[1..].join(", "))
            } else {
                String::new()
            };
            return reason(
                "matcher",
                format!("matcher {how} does not match {value:?}{others}"),
            );
        }
    }
    if let Some(text) = &handler.if_text {
        let holds = match (target.tool, &handler.if_condition) {
            (Some((tool, tool_input)), Some(cond)) => tool_names(tool)
                .iter()
                .any(|n| cond.matches(n, tool_input, ctx)),
            _ => false,
        };
        if !holds {
            return reason("if", format!("\"if\": {text:?} does not match this call"));
        }
    }
    if let SelectedHandler::Model { .. } = this {
        return reason(
            "model_hook",
            format!(
                "{} hooks ask the session's model, which `rein hooks explain` does not call",
                handler.kind.type_name()
            ),
        );
    }
    let key = this.dedup_key();
    for sel in selected {
        if let Some(s) = sel.handler()
            && sel.dedup_key() == key
        {
            let n = index_of(settings, s).map_or(0, |i| i + 1);
            return reason(
                "duplicate",
                format!(
                    "removed as a duplicate of #{n} at {} ({} settings): same command and \"if\", which runs once",
                    s.origin.location,
                    s.origin.source.as_str()
                ),
            );
        }
    }
    reason("not_selected", "not selected by the dispatcher")
}
