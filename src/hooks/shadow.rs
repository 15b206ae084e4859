//! Shadow mode: a handler that runs, is judged and recorded, and never acts.
//!
//! rein's rule, for a handler in shadow mode (`"shadow": true`, its file's `"hooksShadow":
//! true`, or `--hooks-shadow`): its run is interpreted exactly as an enforced run's, and what
//! the answer would have done — a refusal, a rewrite, a permission answer, `continue: false`,
//! context or a message — is written into the run ([`crate::hooks::run::HandlerRun::withheld`]) as one sentence,
//! `would have denied: <reason>`. Then the answer is replaced by a plain success before the
//! event's merge, so the call (prompt, stop, …) goes on as if the hook had not objected and
//! had said nothing. A non-blocking error stays what it is (it never changed the flow).
//! Permission rules are not hooks and are never shadowed.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::hooks::environment::HookEnvironment;
use crate::hooks::events::Answer;
use crate::hooks::run::OutcomeKind;
use crate::hooks::run_log::log_run;
use crate::hooks::spec::HookEvent;

/// How much of a withheld text (context, a rewrite) the sentence quotes.
const QUOTE_CHARS: usize = 200;

/// Withholds everything of a shadowed `answer` that would change the flow or what anyone sees.
/// (The caller has set [`crate::hooks::run::HandlerRun::withheld`] from [`would_have`] before logging the run.)
pub(crate) fn withhold(answer: &mut Answer) {
    if matches!(answer.run.outcome, OutcomeKind::Blocking(_)) {
        answer.run.outcome = OutcomeKind::Success;
    }
    answer.output = None;
    answer.additional_context = None;
    answer.system_message = None;
    answer.success_text = None;
}

/// Logs a finished run. In shadow mode it first records what the answer would have done
/// (the log line carries it), then withholds it and keeps the withheld decision for
/// [`crate::hooks::dispatch::Dispatcher::shadow_log`].
pub(crate) fn settle(
    env: &HookEnvironment,
    shadowed: &ShadowLog,
    event: HookEvent,
    stdin_len: usize,
    mut answer: Answer,
    shadow: bool,
) -> Answer {
    answer.run.decision = crate::hooks::run_log::decision_of(event, &answer);
    if shadow {
        answer.run.shadow = true;
        answer.run.withheld = would_have(event, &answer);
    }
    log_run(env, event, stdin_len, &answer);
    if shadow {
        withhold(&mut answer);
        if let Some(text) = &answer.run.withheld {
            shadowed.record(ShadowedDecision {
                event,
                origin: answer.run.origin.location.to_string(),
                command: answer.run.command.clone(),
                withheld: text.clone(),
            });
        }
    }
    answer
}

/// What the answer would have done, as one sentence; `None` when it changes nothing.
pub(crate) fn would_have(event: HookEvent, answer: &Answer) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let OutcomeKind::Blocking(reason) = &answer.run.outcome {
        let verb = match event {
            HookEvent::PreToolUse | HookEvent::PermissionRequest => "denied",
            HookEvent::Stop | HookEvent::SubagentStop => "blocked the stop",
            HookEvent::UserPromptSubmit => "blocked the prompt",
            _ => "blocked",
        };
        parts.push(format!("{verb}: {}", quote(reason.trim_end())));
    }
    if let Some(out) = &answer.output {
        let hso = out.hook_specific.as_ref();
        let text = |key: &str| hso.and_then(|h| h.get(key)).and_then(Value::as_str);
        if let Some(decision) = text("permissionDecision")
            && !matches!(answer.run.outcome, OutcomeKind::Blocking(_))
        {
            let verb = match decision {
                "deny" => "denied",
                "ask" => "asked",
                "defer" => "deferred",
                _ => "allowed",
            };
            match text("permissionDecisionReason").filter(|r| !r.is_empty()) {
                Some(reason) => parts.push(format!("{verb}: {}", quote(reason))),
                None => parts.push(verb.to_string()),
            }
        } else if event == HookEvent::PreToolUse && out.approves() {
            parts.push("allowed".to_string());
        }
        if let Some(decision) = hso
            .and_then(|h| h.get("decision"))
            .and_then(Value::as_object)
        {
            let behavior = decision.get("behavior").and_then(Value::as_str);
            let message = decision.get("message").and_then(Value::as_str);
            match (behavior, message) {
                (Some("deny"), Some(m)) if !m.is_empty() => {
                    parts.push(format!("denied: {}", quote(m)));
                }
                (Some("deny"), _) => parts.push("denied".to_string()),
                (Some("allow"), _) => parts.push("allowed".to_string()),
                _ => {}
            }
            if let Some(input) = decision.get("updatedInput") {
                parts.push(format!(
                    "rewritten the input to {}",
                    quote(&input.to_string())
                ));
            }
        }
        if let Some(input) = hso.and_then(|h| h.get("updatedInput")) {
            parts.push(format!(
                "rewritten the input to {}",
                quote(&input.to_string())
            ));
        }
        if hso.is_some_and(|h| {
            h.contains_key("updatedToolOutput") || h.contains_key("updatedMCPToolOutput")
        }) {
            parts.push("replaced the tool's output".to_string());
        }
        if out.stops_loop() {
            match out.stop_reason.as_deref().filter(|r| !r.is_empty()) {
                Some(reason) => parts.push(format!("stopped the session: {}", quote(reason))),
                None => parts.push("stopped the session".to_string()),
            }
        }
    }
    if let Some(context) = &answer.additional_context {
        parts.push(format!("added context: {}", quote(context)));
    }
    // Plain stdout of exit 0 is context on these two events only (spec §4.2).
    if let Some(text) = &answer.success_text
        && matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    {
        parts.push(format!("added context: {}", quote(text)));
    }
    if let Some(text) = &answer.success_text
        && event == HookEvent::PreCompact
    {
        parts.push(format!("given compaction instructions: {}", quote(text)));
    }
    if let Some(message) = &answer.system_message {
        parts.push(format!("shown the user: {}", quote(message)));
    }
    (!parts.is_empty()).then(|| format!("would have {}", parts.join("; ")))
}

/// `text` on one line, cut at [`QUOTE_CHARS`] characters.
fn quote(text: &str) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= QUOTE_CHARS {
        return one_line;
    }
    let head: String = one_line.chars().take(QUOTE_CHARS).collect();
    format!("{head}…")
}

/// One decision shadow mode recorded and did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShadowedDecision {
    pub event: HookEvent,
    /// Where the handler is configured (`file:line:col`).
    pub origin: String,
    /// The command (or URL, prompt) as configured.
    pub command: String,
    /// `would have denied: <reason>`.
    pub withheld: String,
}

/// The decisions shadow mode withheld in a session, in the order the runs ended (a cheap,
/// shared handle).
#[derive(Debug, Clone, Default)]
pub struct ShadowLog(Arc<Mutex<Vec<ShadowedDecision>>>);

impl ShadowLog {
    pub(crate) fn record(&self, decision: ShadowedDecision) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(decision);
    }

    /// Every withheld decision so far.
    pub fn entries(&self) -> Vec<ShadowedDecision> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The summary shown at session end and by `/hooks`: per handler, how many decisions were
    /// withheld and the last one; `None` when there were none.
    pub fn summary(&self) -> Option<String> {
        let entries = self.entries();
        if entries.is_empty() {
            return None;
        }
        // Per handler, in the order each first withheld something.
        let mut rows: Vec<(&ShadowedDecision, usize)> = Vec::new();
        for entry in &entries {
            match rows
                .iter_mut()
                .find(|(first, _)| first.origin == entry.origin && first.event == entry.event)
            {
                Some(row) => {
                    row.0 = entry;
                    row.1 += 1;
                }
                None => rows.push((entry, 1)),
            }
        }
        let mut out = format!(
            "Shadow mode: {} hook decision{} recorded and not applied:\n",
            entries.len(),
            if entries.len() == 1 { "" } else { "s" }
        );
        for (last, count) in rows {
            out.push_str(&format!(
                "  {}× {} {} ({})\n    last: {}\n",
                count, last.event, last.command, last.origin, last.withheld
            ));
        }
        Some(out)
    }
}
