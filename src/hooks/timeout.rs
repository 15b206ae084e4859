//! How long a handler may run (spec §5.3): the one place these rules live. The per-event
//! defaults are a column of the spec table ([`crate::hooks::spec::EventSpec::timeout`]).

use std::time::Duration;

use crate::hooks::spec::{DefaultTimeout, HookEvent};

/// The whole SessionEnd phase's budget when nothing raises it.
pub const SESSION_END_BUDGET: Duration = Duration::from_millis(1500);
/// Upper bound of the SessionEnd budget raised by a handler's `timeout`.
pub const SESSION_END_HANDLER_CAP: Duration = Duration::from_secs(60);
/// Upper bound of the SessionEnd budget set by [`SESSION_END_TIMEOUT_VAR`].
pub const SESSION_END_ENV_CAP: Duration = Duration::from_secs(3600);
/// Env var that sets the SessionEnd budget in milliseconds.
pub const SESSION_END_TIMEOUT_VAR: &str = "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS";

/// A configured `timeout` in seconds as a duration; `None` for zero, negative or non-finite
/// values (they mean "the default").
pub fn seconds(s: f64) -> Option<Duration> {
    if s.is_finite() && s > 0.0 {
        // 2^31-1 ms is Claude Code's effective maximum.
        Some(Duration::from_secs_f64(s.min(2_147_483.647)))
    } else {
        None
    }
}

/// The SessionEnd phase budget: [`SESSION_END_BUDGET`], raised to the largest `timeout` among
/// the SessionEnd handlers (capped at [`SESSION_END_HANDLER_CAP`]); the env var's value in
/// milliseconds (`env_override`, capped at [`SESSION_END_ENV_CAP`]) replaces it.
pub fn session_end_budget(
    timeouts: impl IntoIterator<Item = Option<f64>>,
    env_override: Option<&str>,
) -> Duration {
    if let Some(ms) = env_override.and_then(|v| v.trim().parse::<u64>().ok()) {
        return Duration::from_millis(ms).min(SESSION_END_ENV_CAP);
    }
    let largest = timeouts
        .into_iter()
        .flatten()
        .filter_map(seconds)
        .max()
        .unwrap_or(Duration::ZERO)
        .min(SESSION_END_HANDLER_CAP);
    largest.max(SESSION_END_BUDGET)
}

/// The timeout of one handler of `event` with `configured` seconds; SessionEnd handlers never
/// outlive the phase's `budget`.
pub fn effective(event: HookEvent, configured: Option<f64>, budget: Duration) -> Duration {
    let own = configured.and_then(seconds);
    match event.spec().timeout {
        DefaultTimeout::Fixed(default) => own.unwrap_or(default),
        DefaultTimeout::SessionEndBudget => own.unwrap_or(budget).min(budget),
    }
}

/// The timeout in seconds `rein hooks list` shows, before any env override: a SessionEnd
/// handler's own timeout is capped at 60 s, and without one it gets the default budget.
pub fn listed_seconds(event: Option<HookEvent>, configured: Option<f64>) -> f64 {
    match (event.map(|e| e.spec().timeout), configured) {
        (Some(DefaultTimeout::SessionEndBudget), Some(t)) => {
            t.min(SESSION_END_HANDLER_CAP.as_secs_f64())
        }
        (_, Some(t)) => t,
        (Some(DefaultTimeout::SessionEndBudget), None) => SESSION_END_BUDGET.as_secs_f64(),
        (Some(DefaultTimeout::Fixed(d)), None) => d.as_secs_f64(),
        (None, None) => DEFAULT_SECS,
    }
}

const DEFAULT_SECS: f64 = 600.0;

/// How `rein hooks list` says the timeout: `10 s`, `600 s (default)`,
/// `30 s (UserPromptSubmit default)`, the SessionEnd budget.
pub fn describe(event: Option<HookEvent>, configured: Option<f64>) -> String {
    let secs = |t: f64| format_seconds(t);
    match (event, event.map(|e| e.spec().timeout), configured) {
        (_, Some(DefaultTimeout::SessionEndBudget), Some(t))
            if t > SESSION_END_HANDLER_CAP.as_secs_f64() =>
        {
            format!(
                "{} s (capped at {} s: the SessionEnd phase budget)",
                secs(t),
                secs(SESSION_END_HANDLER_CAP.as_secs_f64())
            )
        }
        (_, _, Some(t)) => format!("{} s", secs(t)),
        (_, Some(DefaultTimeout::SessionEndBudget), None) => format!(
            "{} s (SessionEnd phase budget, default)",
            secs(SESSION_END_BUDGET.as_secs_f64())
        ),
        (Some(e), Some(DefaultTimeout::Fixed(d)), None) if d.as_secs_f64() != DEFAULT_SECS => {
            format!("{} s ({e} default)", secs(d.as_secs_f64()))
        }
        (_, _, None) => format!("{} s (default)", secs(DEFAULT_SECS)),
    }
}

/// `10` → `10`, `0.5` → `0.5`.
pub fn format_seconds(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{}", t as i64)
    } else {
        let s = format!("{t:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_table() {
        let budget = Duration::from_secs(5);
        assert_eq!(
            effective(HookEvent::PreToolUse, None, budget),
            Duration::from_secs(600)
        );
        assert_eq!(
            effective(HookEvent::UserPromptSubmit, None, budget),
            Duration::from_secs(30)
        );
        assert_eq!(effective(HookEvent::SessionEnd, None, budget), budget);
        assert_eq!(effective(HookEvent::SessionEnd, Some(9.0), budget), budget);
        assert_eq!(
            effective(HookEvent::Stop, Some(0.0), budget),
            Duration::from_secs(600)
        );
    }

    #[test]
    fn session_end_budget_rules() {
        assert_eq!(session_end_budget([None], None), SESSION_END_BUDGET);
        assert_eq!(
            session_end_budget([Some(5.0), Some(2.0)], None),
            Duration::from_secs(5)
        );
        assert_eq!(
            session_end_budget([Some(500.0)], None),
            SESSION_END_HANDLER_CAP
        );
        assert_eq!(
            session_end_budget([Some(5.0)], Some("250")),
            Duration::from_millis(250)
        );
        assert_eq!(
            session_end_budget([], Some("99999999999")),
            SESSION_END_ENV_CAP
        );
    }

    #[test]
    fn describe_matches_the_listing_texts() {
        assert_eq!(
            describe(Some(HookEvent::PreToolUse), None),
            "600 s (default)"
        );
        assert_eq!(
            describe(Some(HookEvent::UserPromptSubmit), None),
            "30 s (UserPromptSubmit default)"
        );
        assert_eq!(
            describe(Some(HookEvent::SessionEnd), None),
            "1.5 s (SessionEnd phase budget, default)"
        );
        assert_eq!(
            describe(Some(HookEvent::SessionEnd), Some(90.0)),
            "90 s (capped at 60 s: the SessionEnd phase budget)"
        );
        assert_eq!(describe(None, Some(10.0)), "10 s");
    }
}
