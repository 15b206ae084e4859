//! Pins the merge rule of `hooks::events::merge` and PreToolUse's fold (their doc comments'
//! numbered lists) with one table: permission precedence and `updatedInput` selection over
//! answers in configuration order.

use std::sync::Arc;
use std::time::Duration;

use super::dispatch_support::Fixture;
use super::hook_compat::HookInput;
use crate::hooks::events::pre_tool_use::PermissionDecision;
use crate::hooks::events::{Answer, PostToolUse, PreToolUse, merge};
use crate::hooks::output::HookJsonOutput;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::settings::schema::{HandlerOrigin, Location, SourceKind};
use serde_json::{Value, json};

fn answer(n: usize, outcome: OutcomeKind) -> Answer {
    Answer {
        run: HandlerRun {
            origin: HandlerOrigin {
                source: SourceKind::User,
                event_key: "PreToolUse".into(),
                group: 0,
                index: n,
                location: Location {
                    file: Arc::from("/s.json"),
                    line: n as u32,
                    col: 1,
                },
                plugin: None,
            },
            command: format!("hook{n}"),
            status: RunStatus::Exited(0),
            outcome,
            duration: Duration::ZERO,
            stdout: String::new(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_capped: false,
            stderr_capped: false,
            decision: None,
            warm: false,
            matcher: None,
            shadow: false,
            withheld: None,
            json: None,
        },
        output: None,
        additional_context: None,
        system_message: None,
        success_text: None,
    }
}

/// Sets a `hookSpecificOutput` field of the answer's (valid) JSON output.
fn specific(a: &mut Answer, key: &str, value: Value) {
    let output = a.output.get_or_insert_with(HookJsonOutput::default);
    output
        .hook_specific
        .get_or_insert_with(serde_json::Map::new)
        .insert(key.to_string(), value);
}

/// Sets a top-level field of the answer's (valid) JSON output.
fn top(a: &mut Answer, f: impl FnOnce(&mut HookJsonOutput)) {
    f(a.output.get_or_insert_with(HookJsonOutput::default));
}

/// One hook's answer in the table: `allow:R`, `ask:R`, `defer:R`, `deny:R`, `block:R` (a
/// blocking error, exit 2), `-` (no decision); optionally `+UI` for an `updatedInput`
/// `{"command": "UI"}`.
fn parse(n: usize, spec: &str) -> Answer {
    let (decision, ui) = match spec.split_once('+') {
        Some((d, ui)) => (d, Some(ui)),
        None => (spec, None),
    };
    let (kind, reason) = decision.split_once(':').unwrap_or((decision, ""));
    let reason_opt = (!reason.is_empty()).then(|| reason.to_string());
    let mut a = answer(n, OutcomeKind::Success);
    match kind {
        "allow" | "ask" | "defer" | "deny" => {
            specific(&mut a, "permissionDecision", json!(kind));
            if let Some(r) = reason_opt {
                specific(&mut a, "permissionDecisionReason", json!(r));
            }
        }
        "block" => a.run.outcome = OutcomeKind::Blocking(reason.into()),
        "-" => {}
        other => panic!("bad spec {other}"),
    }
    if let Some(u) = ui {
        specific(&mut a, "updatedInput", json!({ "command": u }));
    }
    a
}

#[test]
fn merge_precedence_table() {
    let fx = Fixture::new();
    let HookInput::PreToolUse(input) = fx.bash("ls") else {
        unreachable!()
    };
    // (answers in configuration order, expected permission "kind:reason" or "none",
    //  expected updatedInput command or "none")
    let table: &[(&[&str], &str, &str)] = &[
        (&["allow:A"], "allow:A", "none"),
        (&["allow:A", "ask:B"], "ask:B", "none"),
        (&["ask:B", "allow:A"], "ask:B", "none"),
        (&["ask:B", "defer:C"], "defer:C", "none"),
        (&["defer:C", "ask:B", "allow:A"], "defer:C", "none"),
        (&["allow:A", "ask:B", "deny:D"], "deny:D", "none"),
        (&["deny:D1", "deny:D2"], "deny:D1", "none"),
        (&["allow:A1", "allow:A2"], "allow:A1", "none"),
        (
            &["allow:A", "block:[hook]: stderr"],
            "deny:[hook]: stderr",
            "none",
        ),
        (&["deny:D", "block:[x]: e"], "deny:D", "none"),
        (&["-"], "none", "none"),
        (&["-+U1", "-+U2"], "none", "U2"),
        (&["allow:A+U1", "-+U2"], "allow:A", "U2"),
        (&["allow:A+U1", "deny:D+U2"], "deny:D", "U1"),
        (&["ask:B+U1", "defer:C+U2"], "defer:C", "U1"),
        (&["block:[x]: e+U1"], "deny:[x]: e", "none"),
        (&["-+U1", "-"], "none", "U1"),
    ];
    for (specs, want_perm, want_ui) in table {
        let answers = specs.iter().enumerate().map(|(i, s)| parse(i, s)).collect();
        let d = merge::<PreToolUse>(&input, answers);
        let got_perm = match &d.permission {
            None => "none".to_string(),
            Some(PermissionDecision::Allow { reason }) => {
                format!("allow:{}", reason.clone().unwrap_or_default())
            }
            Some(PermissionDecision::Ask { reason }) => {
                format!("ask:{}", reason.clone().unwrap_or_default())
            }
            Some(PermissionDecision::Defer { reason }) => {
                format!("defer:{}", reason.clone().unwrap_or_default())
            }
            Some(PermissionDecision::Deny { reason, text }) => {
                assert_eq!(*text, format!("PreToolUse:Bash hook error: {reason}"));
                format!("deny:{reason}")
            }
        };
        let got_ui = match &d.updated_input {
            None => "none".to_string(),
            Some(v) => v["command"].as_str().unwrap_or("?").to_string(),
        };
        assert_eq!(
            (got_perm.as_str(), got_ui.as_str()),
            (*want_perm, *want_ui),
            "answers {specs:?}"
        );
        assert_eq!(d.common.runs.len(), specs.len());
    }
}

#[test]
fn merge_collects_messages_and_takes_last_tool_output() {
    let fx = Fixture::new();
    let HookInput::PostToolUse(input) = fx.post_bash() else {
        unreachable!()
    };
    let stop = |a: &mut Answer, reason: &str| {
        top(a, |o| {
            o.continue_ = Some(false);
            o.stop_reason = Some(reason.to_string());
        })
    };
    let mut a = answer(0, OutcomeKind::Success);
    specific(&mut a, "updatedToolOutput", json!({"stdout": "A"}));
    a.system_message = Some("m1".into());
    a.additional_context = Some("c1".into());
    let mut b = answer(1, OutcomeKind::Success);
    specific(&mut b, "updatedToolOutput", json!({"stdout": "B"}));
    b.system_message = Some("m2".into());
    stop(&mut b, "first");
    let mut c = answer(2, OutcomeKind::Success);
    stop(&mut c, "second");
    c.additional_context = Some("c3".into());
    let o = merge::<PostToolUse>(&input, vec![a, b, c]);
    assert_eq!(o.updated_tool_output, Some(json!({"stdout": "B"})));
    let d = o.common;
    assert_eq!(
        d.user_messages,
        vec![
            "PostToolUse:Bash says: m1".to_string(),
            "PostToolUse:Bash says: m2".to_string()
        ]
    );
    assert_eq!(
        d.context,
        vec!["PostToolUse:Bash hook additional context: c1\nc3".to_string()]
    );
    assert!(d.stop_loop);
    assert_eq!(d.stop_reason.as_deref(), Some("first"));
}
