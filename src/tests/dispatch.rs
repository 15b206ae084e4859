//! Integration tests of the hook dispatcher: real `/bin/sh` hooks in temp dirs.

use std::time::{Duration, Instant};

use super::dispatch_support::*;
use crate::hooks::events::PreToolUse;
use crate::hooks::events::permission_request::{PermissionRequestDecision, PermissionRequestInput};
use crate::hooks::events::post_tool_batch::{BatchToolCall, PostToolBatchInput};
use crate::hooks::events::post_tool_use::PostToolUseInput;
use crate::hooks::events::post_tool_use_failure::PostToolUseFailureInput;
use crate::hooks::events::pre_tool_use::{PermissionDecision, PreToolUseInput};
use crate::hooks::events::session_end::SessionEndInput;
use crate::hooks::events::session_start::SessionStartInput;
use crate::hooks::events::stop::StopInput;
use crate::hooks::events::user_prompt_submit::UserPromptSubmitInput;
use crate::hooks::events::{BaseInput, Effort};
use crate::hooks::registry::HookReply;
use crate::hooks::run::{OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;
use crate::settings::schema::SourceKind;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Golden stdin bytes

fn s(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

fn opt_s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Builds the typed input from a (placeholder-substituted) golden sample.
fn input_from_golden(v: &Value) -> HookInput {
    let base = BaseInput {
        session_id: s(v, "session_id"),
        transcript_path: s(v, "transcript_path"),
        cwd: s(v, "cwd"),
        prompt_id: opt_s(v, "prompt_id"),
        permission_mode: opt_s(v, "permission_mode"),
        agent_id: opt_s(v, "agent_id"),
        agent_type: opt_s(v, "agent_type"),
        effort: v.get("effort").map(|e| Effort {
            level: s(e, "level"),
        }),
    };
    let event = HookEvent::parse(&s(v, "hook_event_name")).expect("event");
    match event {
        HookEvent::PreToolUse => HookInput::PreToolUse(PreToolUseInput {
            base,
            hook_event_name: event,
            tool_name: s(v, "tool_name"),
            tool_input: v["tool_input"].clone(),
            tool_use_id: s(v, "tool_use_id"),
            mcp_server: None,
        }),
        HookEvent::PermissionRequest => HookInput::PermissionRequest(PermissionRequestInput {
            base,
            hook_event_name: event,
            tool_name: s(v, "tool_name"),
            tool_input: v["tool_input"].clone(),
            permission_suggestions: v["permission_suggestions"].as_array().cloned(),
            mcp_server: None,
        }),
        HookEvent::PostToolUse => HookInput::PostToolUse(PostToolUseInput {
            base,
            hook_event_name: event,
            tool_name: s(v, "tool_name"),
            tool_input: v["tool_input"].clone(),
            tool_response: v["tool_response"].clone(),
            tool_use_id: s(v, "tool_use_id"),
            duration_ms: v["duration_ms"].as_u64().expect("duration"),
            mcp_server: None,
        }),
        HookEvent::PostToolUseFailure => HookInput::PostToolUseFailure(PostToolUseFailureInput {
            base,
            hook_event_name: event,
            tool_name: s(v, "tool_name"),
            tool_input: v["tool_input"].clone(),
            tool_use_id: s(v, "tool_use_id"),
            error: s(v, "error"),
            is_interrupt: v["is_interrupt"].as_bool().expect("is_interrupt"),
            duration_ms: v["duration_ms"].as_u64().expect("duration"),
            mcp_server: None,
        }),
        HookEvent::PostToolBatch => HookInput::PostToolBatch(PostToolBatchInput {
            base,
            hook_event_name: event,
            tool_calls: v["tool_calls"]
                .as_array()
                .expect("tool_calls")
                .iter()
                .map(|c| BatchToolCall {
                    tool_name: s(c, "tool_name"),
                    tool_input: c["tool_input"].clone(),
                    tool_use_id: s(c, "tool_use_id"),
                    tool_response: c.get("tool_response").cloned(),
                })
                .collect(),
        }),
        HookEvent::UserPromptSubmit => HookInput::UserPromptSubmit(UserPromptSubmitInput {
            base,
            hook_event_name: event,
            prompt: s(v, "prompt"),
        }),
        HookEvent::SessionStart => HookInput::SessionStart(SessionStartInput {
            base,
            hook_event_name: event,
            source: s(v, "source"),
            model: opt_s(v, "model"),
            seconds_since_last_response: None,
            context_tokens: None,
            prompt_cache_likely_expired: None,
            estimated_cache_write_usd: None,
        }),
        HookEvent::SessionEnd => HookInput::SessionEnd(SessionEndInput {
            base,
            hook_event_name: event,
            reason: s(v, "reason"),
        }),
        HookEvent::Stop => HookInput::Stop(StopInput {
            base,
            hook_event_name: event,
            stop_hook_active: v["stop_hook_active"].as_bool().expect("active"),
            last_assistant_message: opt_s(v, "last_assistant_message"),
            background_tasks: v["background_tasks"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            session_crons: v["session_crons"].as_array().cloned().unwrap_or_default(),
        }),
        other => panic!("no golden sample expected for {other}"),
    }
}

#[tokio::test]
async fn golden_stdin_bytes_reach_the_hook_byte_for_byte() {
    let fx = Fixture::new();
    let project = fx.project.to_string_lossy().into_owned();
    let home = fx.home.to_string_lossy().into_owned();
    let slug: String = project
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("stdin-") && n.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 18, "all golden samples are present");
    for name in names {
        let sample = std::fs::read_to_string(dir.join(&name)).expect("read sample");
        let mut expected = sample
            .replace("<SESSION>", SESSION)
            .replace("<PROJECT_SLUG>", &slug)
            .replace("<PROJECT>", &project)
            .replace("<HOME>", &home)
            .replace("<UUID_1>", "9b1c2d3e-4f50-4a6b-8c7d-0e1f2a3b4c5d")
            .replace("\"<NUM>\"", "1234");
        for i in 0..6 {
            for j in 0..4 {
                expected = expected.replace(
                    &format!("<TOOL_USE_ID_{i}_{j}>"),
                    &format!("toolu_01ABC{i}{j}"),
                );
            }
        }
        let value: Value = serde_json::from_str(&expected).expect("sample parses");
        let input = input_from_golden(&value);
        let saved = fx.path(&format!("saved-{name}"));
        let hook = handler(input.event(), None, &format!("cat > '{}'", saved.display()));
        let decision = fx.dispatcher(vec![hook]).fire_input(&input).await;
        assert_eq!(decision.runs.len(), 1, "{name}: the hook ran");
        assert_eq!(decision.runs[0].status, RunStatus::Exited(0), "{name}");
        let got = std::fs::read(&saved).expect("hook saved its stdin");
        assert_eq!(
            String::from_utf8_lossy(&got),
            expected,
            "{name}: stdin bytes differ"
        );
        assert!(got.ends_with(b"}\n") && !got.ends_with(b"\n\n"), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Concurrency and ordering

#[tokio::test]
async fn selected_hooks_run_concurrently() {
    let fx = Fixture::new();
    let one = fx.dispatcher(vec![handler(HookEvent::PreToolUse, None, "sleep 1")]);
    let t = Instant::now();
    let d = fire(&one, &fx.bash("ls")).await;
    let single = t.elapsed();
    assert_eq!(d.runs.len(), 1);

    let two = fx.dispatcher(vec![
        handler(HookEvent::PreToolUse, None, "sleep 1 # a"),
        handler(HookEvent::PreToolUse, None, "sleep 1 # b"),
    ]);
    let t = Instant::now();
    let d = fire(&two, &fx.bash("ls")).await;
    let double = t.elapsed();
    assert_eq!(d.runs.len(), 2);
    let ratio = double.as_secs_f64() / single.as_secs_f64();
    eprintln!("one hook {single:?}, two hooks {double:?}, ratio {ratio:.2}");
    assert!(ratio < 1.6, "two hooks took {ratio:.2}x one hook");
}

fn pre_json(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

#[tokio::test]
async fn deny_wins_over_ask_and_allow_with_the_deny_hooks_reason() {
    let fx = Fixture::new();
    // The deny hook is the fastest: completion order must not matter either way.
    let d = fx
        .dispatcher(vec![
            handler(
                HookEvent::PreToolUse,
                Some("Bash"),
                &format!("sleep 0.3; {}", print_json(&pre_json("allow", "ALLOW-R"))),
            ),
            handler(
                HookEvent::PreToolUse,
                Some("Bash"),
                &format!("sleep 0.2; {}", print_json(&pre_json("ask", "ASK-R"))),
            ),
            handler(
                HookEvent::PreToolUse,
                Some("Bash"),
                &print_json(&pre_json("deny", "DENY-R")),
            ),
        ])
        .fire_input(&fx.bash("rm -rf /"))
        .await;
    assert_eq!(
        d.permission,
        Some(PermissionDecision::Deny {
            reason: "DENY-R".into(),
            text: "PreToolUse:Bash hook error: DENY-R".into(),
        })
    );
    let origins: Vec<u32> = d.runs.iter().map(|r| r.origin.location.line).collect();
    let mut sorted = origins.clone();
    sorted.sort();
    assert_eq!(origins, sorted, "runs are reported in configuration order");
}

#[tokio::test]
async fn updated_input_comes_from_the_last_configured_hook_not_the_last_to_finish() {
    let fx = Fixture::new();
    let rewrite = |cmd: &str| {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "updatedInput": {"command": cmd}}})
    };
    let slow_first = handler(
        HookEvent::PreToolUse,
        None,
        &format!("sleep 0.4; {}", print_json(&rewrite("FIRST"))),
    );
    let fast_second = handler(HookEvent::PreToolUse, None, &print_json(&rewrite("SECOND")));
    let denying_third = handler(
        HookEvent::PreToolUse,
        None,
        &print_json(
            &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "defer", "updatedInput": {"command": "THIRD"}}}),
        ),
    );
    let d = fx
        .dispatcher(vec![slow_first.clone(), fast_second.clone(), denying_third])
        .fire_input(&fx.bash("ls"))
        .await;
    assert_eq!(d.updated_input, Some(json!({"command": "SECOND"})));
    // Swap the configuration order: now the slow one is last and wins.
    let d = fx
        .dispatcher(vec![fast_second, slow_first])
        .fire_input(&fx.bash("ls"))
        .await;
    assert_eq!(d.updated_input, Some(json!({"command": "FIRST"})));
}

#[tokio::test]
async fn additional_context_of_several_hooks_is_one_entry_in_configuration_order() {
    let fx = Fixture::new();
    let ctx = |c: &str| json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": c}});
    let d = fx
        .dispatcher(vec![
            handler(
                HookEvent::PostToolUse,
                Some("Bash"),
                &format!("sleep 0.3; {}", print_json(&ctx("ONE"))),
            ),
            handler(
                HookEvent::PostToolUse,
                Some("Bash"),
                &print_json(&ctx("TWO")),
            ),
        ])
        .fire_input(&fx.post_bash())
        .await;
    assert_eq!(
        d.context,
        vec!["PostToolUse:Bash hook additional context: ONE\nTWO".to_string()]
    );
}

// ---------------------------------------------------------------------------------------------
// Selection

#[tokio::test]
async fn matchers_select_by_tool_name_and_former_names() {
    let fx = Fixture::new();
    let log = fx.path("ran.log");
    let mark = |label: &str| format!("echo {label} >> '{}'", log.display());
    let dispatcher = fx.dispatcher(vec![
        handler(HookEvent::PreToolUse, Some("Bash"), &mark("exact")),
        handler(
            HookEvent::PreToolUse,
            Some("Read, Bash"),
            &mark("comma-list"),
        ),
        handler(
            HookEvent::PreToolUse,
            Some("Edit|Write"),
            &mark("other-tools"),
        ),
        handler(HookEvent::PreToolUse, Some("bash"), &mark("wrong-case")),
        handler(HookEvent::PreToolUse, Some("B.sh"), &mark("regex")),
        handler(HookEvent::PreToolUse, Some("*"), &mark("star")),
        handler(HookEvent::PreToolUse, None, &mark("absent")),
        handler(HookEvent::PostToolUse, Some("Bash"), &mark("other-event")),
    ]);
    fire(&dispatcher, &fx.bash("ls")).await;
    let ran = read(&log);
    let mut ran: Vec<&str> = ran.lines().collect();
    ran.sort();
    assert_eq!(ran, vec!["absent", "comma-list", "exact", "regex", "star"]);

    // `Task` is the former name of `Agent` (spec §3.3), in both directions.
    let log2 = fx.path("alias.log");
    let d = fx
        .dispatcher(vec![
            handler(
                HookEvent::PreToolUse,
                Some("Task"),
                &format!("echo task >> '{}'", log2.display()),
            ),
            handler(
                HookEvent::PreToolUse,
                Some("TaskStop"),
                &format!("echo stop >> '{}'", log2.display()),
            ),
        ])
        .fire_input(&fx.pre_tool("Agent", json!({"prompt": "x"})))
        .await;
    assert_eq!(d.runs.len(), 1);
    assert_eq!(read(&log2), "task\n");
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::PreToolUse,
            Some("TaskStop"),
            "true",
        )])
        .fire_input(&fx.pre_tool("KillShell", json!({})))
        .await;
    assert_eq!(d.runs.len(), 1, "KillShell is a former name of TaskStop");
}

/// The verified examples of spec §3.2 against tool `Bash`, through the whole dispatcher.
#[tokio::test]
async fn matcher_examples_of_spec_3_2() {
    let fx = Fixture::new();
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
    let log = fx.path("m.log");
    let all: Vec<&str> = fires.iter().chain(silent.iter()).copied().collect();
    let handlers = all
        .iter()
        .enumerate()
        .map(|(i, m)| {
            handler(
                HookEvent::PreToolUse,
                Some(m),
                &format!("echo {i} >> '{}'", log.display()),
            )
        })
        .collect();
    fx.dispatcher(handlers)
        .fire_input(&fx.bash("echo hi"))
        .await;
    let mut ran: Vec<usize> = read(&log).lines().map(|l| l.parse().unwrap()).collect();
    ran.sort();
    let ran: Vec<&str> = ran.iter().map(|i| all[*i]).collect();
    assert_eq!(ran, fires.to_vec());
}

#[tokio::test]
async fn events_without_match_target_ignore_the_matcher() {
    let fx = Fixture::new();
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::UserPromptSubmit,
            Some("NoSuchThing"),
            "true",
        )])
        .fire_input(&fx.prompt("hi"))
        .await;
    assert_eq!(d.runs.len(), 1);
}

#[tokio::test]
async fn if_on_a_non_tool_event_never_runs_and_on_a_tool_event_filters() {
    let fx = Fixture::new();
    let marker = fx.path("if.log");
    let cmd = format!("echo ran >> '{}'", marker.display());
    let d = fx
        .dispatcher(vec![with_if(
            handler(HookEvent::UserPromptSubmit, None, &cmd),
            "Bash",
        )])
        .fire_input(&fx.prompt("hello"))
        .await;
    assert!(d.runs.is_empty());
    assert!(
        !marker.exists(),
        "a hook with `if` on UserPromptSubmit never runs"
    );

    let dispatcher = fx.dispatcher(vec![
        with_if(
            handler(HookEvent::PreToolUse, None, &format!("{cmd} # bash")),
            "Bash",
        ),
        with_if(
            handler(HookEvent::PreToolUse, None, &format!("{cmd} # read")),
            "Read",
        ),
    ]);
    let d = fire(&dispatcher, &fx.bash("ls")).await;
    assert_eq!(d.runs.len(), 1);
    assert!(d.runs[0].command.ends_with("# bash"));
}

#[tokio::test]
async fn identical_handlers_from_three_sources_run_once() {
    let fx = Fixture::new();
    let count = fx.path("count.log");
    let cmd = format!("echo x >> '{}'", count.display());
    let d = fx
        .dispatcher(vec![
            with_source(
                handler(HookEvent::PreToolUse, Some("Bash"), &cmd),
                SourceKind::User,
            ),
            with_source(
                handler(HookEvent::PreToolUse, None, &cmd),
                SourceKind::Project,
            ),
            with_source(
                handler(HookEvent::PreToolUse, Some("*"), &cmd),
                SourceKind::Local,
            ),
            // Different `if` → a different handler.
            with_if(handler(HookEvent::PreToolUse, None, &cmd), "Bash(ls*)"),
        ])
        .fire_input(&fx.bash("ls"))
        .await;
    // The three identical copies ran once; the copy with its own `if` (which matches `ls`)
    // is a different handler and ran as well.
    assert_eq!(read(&count), "x\nx\n");
    assert_eq!(d.runs.len(), 2);
    assert_eq!(
        d.runs[0].origin.source,
        SourceKind::Local,
        "the last copy survives"
    );
}

#[tokio::test]
async fn policy_copy_survives_dedup() {
    let fx = Fixture::new();
    let d = fx
        .dispatcher(vec![
            with_source(
                handler(HookEvent::PreToolUse, None, "true"),
                SourceKind::Policy,
            ),
            with_source(
                handler(HookEvent::PreToolUse, None, "true"),
                SourceKind::Local,
            ),
        ])
        .fire_input(&fx.bash("ls"))
        .await;
    assert_eq!(d.runs.len(), 1);
    assert_eq!(d.runs[0].origin.source, SourceKind::Policy);
}

// ---------------------------------------------------------------------------------------------
// Environment

fn env_map(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn hooks_get_claude_code_environment_variables() {
    let fx = Fixture::new();
    let pre_env = fx.path("pre.env");
    let start_env = fx.path("start.env");
    let mut env = fx.env();
    env.extra_env = vec![
        ("FROM_SETTINGS".into(), "yes".into()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT".into(), "http://x".into()),
    ];
    let dispatcher = crate::hooks::dispatch::Dispatcher::new(
        settings(vec![
            handler(
                HookEvent::PreToolUse,
                None,
                &format!("env > '{}'", pre_env.display()),
            ),
            handler(
                HookEvent::SessionStart,
                None,
                &format!(
                    "env > '{}'; echo 'export FOO=bar' >> \"$CLAUDE_ENV_FILE\"",
                    start_env.display()
                ),
            ),
        ])
        .handlers,
        env,
    );
    fire(&dispatcher, &fx.bash("ls")).await;
    let pre = env_map(&read(&pre_env));
    assert_eq!(
        pre.get("CLAUDE_PROJECT_DIR").map(String::as_str),
        Some(fx.project.to_str().unwrap())
    );
    assert_eq!(
        pre.get("CLAUDE_CODE_SESSION_ID").map(String::as_str),
        Some(SESSION)
    );
    assert_eq!(
        pre.get("AI_AGENT").cloned(),
        Some(format!("rein_{}", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(
        pre.get("CLAUDE_CODE_SESSION_ATTENDED").map(String::as_str),
        Some("0")
    );
    assert_eq!(
        pre.get("CLAUDE_PID").cloned(),
        Some(std::process::id().to_string())
    );
    assert_eq!(pre.get("FROM_SETTINGS").map(String::as_str), Some("yes"));
    assert_cc_hook_env(&pre);
    assert!(
        !pre.contains_key("CLAUDE_ENV_FILE"),
        "only SessionStart gets CLAUDE_ENV_FILE"
    );
    assert!(!pre.keys().any(|k| k.starts_with("OTEL_")));
    assert_eq!(
        pre.get("PWD").map(String::as_str),
        Some(fx.project.to_str().unwrap())
    );

    assert!(dispatcher.env_files().is_empty());
    fire(&dispatcher, &fx.session_start()).await;
    let start = env_map(&read(&start_env));
    let expected = fx
        .home
        .join(".rein/session-env")
        .join(SESSION)
        .join("sessionstart-hook-0.sh");
    assert_eq!(
        start.get("CLAUDE_ENV_FILE").map(String::as_str),
        expected.to_str()
    );
    assert_eq!(dispatcher.env_files(), vec![expected.clone()]);
    assert_eq!(read(&expected), "export FOO=bar\n");
}

#[tokio::test]
async fn exec_form_substitutes_only_the_project_dir_placeholder() {
    let fx = Fixture::new();
    let out = fx.path("argv.txt");
    fx.script(
        "argv.sh",
        &format!("printf '%s\\n' \"$@\" > '{}'", out.display()),
    );
    let h = exec(
        handler(
            HookEvent::PreToolUse,
            None,
            "${CLAUDE_PROJECT_DIR}/hooks/argv.sh",
        ),
        &["${CLAUDE_PROJECT_DIR}/x", "$HOME", "a b"],
    );
    let d = fx.dispatcher(vec![h]).fire_input(&fx.bash("ls")).await;
    assert_eq!(d.runs[0].status, RunStatus::Exited(0));
    assert_eq!(
        d.runs[0].command,
        "${CLAUDE_PROJECT_DIR}/hooks/argv.sh ${CLAUDE_PROJECT_DIR}/x $HOME a b"
    );
    assert_eq!(
        read(&out),
        format!("{}/x\n$HOME\na b\n", fx.project.display())
    );
}

#[tokio::test]
async fn missing_cwd_falls_back_to_the_project_dir() {
    let fx = Fixture::new();
    let out = fx.path("pwd.txt");
    let mut input = fx.bash("ls");
    if let HookInput::PreToolUse(i) = &mut input {
        i.base.cwd = fx.path("gone").to_string_lossy().into_owned();
    }
    fx.dispatcher(vec![handler(
        HookEvent::PreToolUse,
        None,
        &format!("pwd > '{}'", out.display()),
    )])
    .fire_input(&input)
    .await;
    assert_eq!(read(&out).trim(), fx.project.to_str().unwrap());
}

// ---------------------------------------------------------------------------------------------
// Timeouts

#[tokio::test]
async fn session_end_budget_kills_a_slow_hook_unless_its_timeout_raises_it() {
    let fx = Fixture::new();
    let done = fx.path("done");
    let cmd = format!("sleep 2; touch '{}'", done.display());
    let d = fx
        .dispatcher(vec![handler(HookEvent::SessionEnd, None, &cmd)])
        .fire_input(&fx.session_end())
        .await;
    assert_eq!(
        d.runs[0].status,
        RunStatus::TimedOut,
        "1.5 s budget by default"
    );
    assert_eq!(d.runs[0].outcome, OutcomeKind::Cancelled);
    assert!(!done.exists(), "the whole process group was killed");

    let d = fx
        .dispatcher(vec![with_timeout(
            handler(HookEvent::SessionEnd, None, &cmd),
            4.0,
        )])
        .fire_input(&fx.session_end())
        .await;
    assert_eq!(d.runs[0].status, RunStatus::Exited(0));
    assert!(done.exists());
}

#[tokio::test]
async fn session_end_failure_is_reported_to_the_user() {
    let fx = Fixture::new();
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::SessionEnd,
            None,
            "echo cleanup broke >&2; exit 1",
        )])
        .fire_input(&fx.session_end())
        .await;
    assert_eq!(
        d.user_messages,
        vec![
            "SessionEnd hook [echo cleanup broke >&2; exit 1] failed: cleanup broke\n".to_string()
        ]
    );
}

#[tokio::test]
async fn timed_out_pre_tool_use_hook_is_non_blocking() {
    let fx = Fixture::new();
    let d = fx
        .dispatcher(vec![with_timeout(
            handler(HookEvent::PreToolUse, None, "sleep 5; exit 2"),
            0.3,
        )])
        .fire_input(&fx.bash("ls"))
        .await;
    assert_eq!(d.runs[0].status, RunStatus::TimedOut);
    assert_eq!(d.permission, None);
    assert_eq!(
        d.user_messages,
        vec!["A hook didn't answer in time, so it didn't check this action.".to_string()]
    );
}

// ---------------------------------------------------------------------------------------------
// Model-facing texts (tests/fixtures/golden/model-facing.txt)

fn golden_text(label: &str, channel: &str) -> String {
    let text = include_str!("../../tests/fixtures/golden/model-facing.txt");
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.splitn(3, '|').collect();
        if parts.len() == 3 && parts[0].trim() == label && parts[1].trim() == channel {
            let text = parts[2].strip_prefix(' ').unwrap_or(parts[2]);
            return text.replace("\\n", "\n");
        }
    }
    panic!("no golden line {label} / {channel}");
}

#[tokio::test]
async fn model_facing_texts_match_claude_code() {
    let fx = Fixture::new();
    // Commands are configured exactly as in the recordings: `$CLAUDE_PROJECT_DIR/hooks/x`.
    let cmd = |name: &str| format!("$CLAUDE_PROJECT_DIR/hooks/{name}");
    fx.script(
        "deny.sh",
        "echo 'blocked by policy: no writes allowed' >&2; exit 2",
    );
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::PreToolUse,
            Some("Bash"),
            &cmd("deny.sh"),
        )])
        .fire_input(&fx.bash("touch x"))
        .await;
    let Some(PermissionDecision::Deny { text, .. }) = &d.permission else {
        panic!("expected deny, got {:?}", d.permission);
    };
    assert_eq!(
        *text,
        golden_text("PreToolUse exit 2", "tool_result is_error=true")
    );

    for (label, output) in [
        (
            "PreToolUse JSON deny",
            pre_json("deny", "JSON-DENY-REASON: writes are forbidden"),
        ),
        (
            "PreToolUse decision:block",
            json!({"decision": "block", "reason": "LEGACY-BLOCK-REASON"}),
        ),
    ] {
        let d = fx
            .dispatcher(vec![handler(
                HookEvent::PreToolUse,
                None,
                &print_json(&output),
            )])
            .fire_input(&fx.bash("touch x"))
            .await;
        let Some(PermissionDecision::Deny { text, .. }) = &d.permission else {
            panic!("{label}: expected deny, got {:?}", d.permission);
        };
        assert_eq!(
            *text,
            golden_text(label, "tool_result is_error=true"),
            "{label}"
        );
    }

    fx.script(
        "post.sh",
        r#"echo '{"decision":"block","reason":"POST-BLOCK-REASON: output looked wrong"}'"#,
    );
    let d = fx
        .dispatcher(vec![handler(HookEvent::PostToolUse, None, &cmd("post.sh"))])
        .fire_input(&fx.post_bash())
        .await;
    assert_eq!(
        d.context,
        vec![golden_text(
            "PostToolUse decision:block",
            "extra context message"
        )]
    );

    fx.script("post.sh", "echo POST-EXIT2-STDERR >&2; exit 2");
    let d = fx
        .dispatcher(vec![handler(HookEvent::PostToolUse, None, &cmd("post.sh"))])
        .fire_input(&fx.post_bash())
        .await;
    assert_eq!(
        d.context,
        vec![golden_text("PostToolUse exit 2", "extra context message")]
    );

    let out = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "POST-ADDITIONAL-CONTEXT"}});
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::PostToolUse,
            None,
            &print_json(&out),
        )])
        .fire_input(&fx.post_bash())
        .await;
    assert_eq!(
        d.context,
        vec![golden_text(
            "PostToolUse additionalContext",
            "extra context message"
        )]
    );

    // A /bin/sh script that happens to be called stop.py, to keep the test fast.
    fx.script(
        "stop.py",
        r#"echo '{"decision":"block","reason":"STOP-BLOCK-REASON: also write final.txt"}'"#,
    );
    let d = fx
        .dispatcher(vec![handler(HookEvent::Stop, None, &cmd("stop.py"))])
        .fire_input(&fx.stop())
        .await;
    assert_eq!(
        d.stop_feedback,
        Some(golden_text("Stop decision:block", "user text"))
    );
    assert_eq!(
        d.context,
        vec![golden_text("Stop decision:block", "extra context message")]
    );

    fx.script(
        "stop.sh",
        "echo 'STOP-EXIT2-STDERR: keep going' >&2; exit 2",
    );
    let d = fx
        .dispatcher(vec![handler(HookEvent::Stop, None, &cmd("stop.sh"))])
        .fire_input(&fx.stop())
        .await;
    assert_eq!(
        d.stop_feedback,
        Some(golden_text("Stop exit 2", "user text"))
    );
    assert!(d.context.is_empty());
    assert!(d.block.is_some(), "the turn goes on");

    let d = fx
        .dispatcher(vec![handler(
            HookEvent::UserPromptSubmit,
            None,
            "echo the word is plover",
        )])
        .fire_input(&fx.prompt("what is the secret word?"))
        .await;
    assert_eq!(
        d.context,
        vec![
            golden_text("UserPromptSubmit plain stdout", "context")
                .replace("<stdout>", "the word is plover")
        ]
    );
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::SessionStart,
            None,
            "echo  hello from start ",
        )])
        .fire_input(&fx.session_start())
        .await;
    assert_eq!(
        d.context,
        vec![
            golden_text("SessionStart plain stdout", "context")
                .replace("<stdout>", "hello from start")
        ]
    );

    let d = fx
        .dispatcher(vec![handler(
            HookEvent::UserPromptSubmit,
            None,
            "echo nope >&2; exit 2",
        )])
        .fire_input(&fx.prompt("do it"))
        .await;
    assert_eq!(
        d.prompt_blocked_text,
        Some(
            golden_text("UserPromptSubmit block", "no model call; result")
                .replace("<reason>", "[echo nope >&2; exit 2]: nope\n")
                .replace("<prompt>", "do it")
        )
    );
    let out = json!({"decision": "block", "reason": "R",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "suppressOriginalPrompt": true}});
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::UserPromptSubmit,
            None,
            &print_json(&out),
        )])
        .fire_input(&fx.prompt("secret"))
        .await;
    assert_eq!(
        d.prompt_blocked_text.as_deref(),
        Some("UserPromptSubmit operation blocked by hook:\nR")
    );
}

#[tokio::test]
async fn stop_context_system_message_and_continue_false() {
    let fx = Fixture::new();
    let out = json!({"systemMessage": "heads up", "continue": false, "stopReason": "enough",
        "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "CTX"}});
    let d = fx
        .dispatcher(vec![handler(HookEvent::Stop, None, &print_json(&out))])
        .fire_input(&fx.stop())
        .await;
    assert_eq!(
        d.context,
        vec![
            "<system-reminder>\nStop hook additional context: CTX\n</system-reminder>".to_string()
        ]
    );
    assert_eq!(d.user_messages, vec!["Stop says: heads up".to_string()]);
    assert!(d.stop_loop);
    assert_eq!(d.stop_reason.as_deref(), Some("enough"));
}

#[tokio::test]
async fn permission_request_and_permission_denied_answers() {
    let fx = Fixture::new();
    let input = HookInput::PermissionRequest(PermissionRequestInput {
        base: fx.base(),
        hook_event_name: HookEvent::PermissionRequest,
        tool_name: "Bash".into(),
        tool_input: json!({"command": "touch c"}),
        permission_suggestions: None,
        mcp_server: None,
    });
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": {"command": "touch d"}}}});
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "not today"}}});
    let d = fx
        .dispatcher(vec![handler(
            HookEvent::PermissionRequest,
            None,
            &print_json(&allow),
        )])
        .fire_input(&input)
        .await;
    assert_eq!(
        d.permission_request,
        Some(PermissionRequestDecision::Allow {
            updated_input: Some(json!({"command": "touch d"})),
            updated_permissions: vec![],
        })
    );
    let d = fx
        .dispatcher(vec![
            handler(HookEvent::PermissionRequest, None, &print_json(&allow)),
            handler(HookEvent::PermissionRequest, None, &print_json(&deny)),
        ])
        .fire_input(&input)
        .await;
    assert_eq!(
        d.permission_request,
        Some(PermissionRequestDecision::Deny {
            message: "not today".into(),
            interrupt: false
        })
    );
}

#[tokio::test]
async fn large_additional_context_is_spilled_to_a_file_with_a_preview() {
    let fx = Fixture::new();
    let big = "x".repeat(12_000);
    let small = "y".repeat(9_900);
    for (text, spilled) in [(&big, true), (&small, false)] {
        let out = json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
            "additionalContext": text}});
        let file = fx.path("out.json");
        std::fs::write(&file, out.to_string()).unwrap();
        let d = fx
            .dispatcher(vec![handler(
                HookEvent::UserPromptSubmit,
                None,
                &format!("cat '{}'", file.display()),
            )])
            .fire_input(&fx.prompt("p"))
            .await;
        assert_eq!(d.context.len(), 1);
        let entry = &d.context[0];
        if spilled {
            assert!(
                entry.starts_with("UserPromptSubmit hook additional context: <persisted-output>\n"),
                "{}",
                &entry[..100]
            );
            assert!(entry.ends_with("</persisted-output>"));
            assert!(entry.len() < 3000);
            let path = entry
                .lines()
                .find_map(|l| l.split("Full output saved to: ").nth(1))
                .expect("path in notice");
            let saved = std::fs::read_to_string(path).expect("spilled file");
            assert!(saved == *big, "the file holds the whole additionalContext");
        } else {
            assert_eq!(
                *entry,
                format!("UserPromptSubmit hook additional context: {small}")
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// In-process hooks

#[tokio::test]
async fn in_process_hooks_are_merged_after_configured_ones_and_can_be_unregistered() {
    let fx = Fixture::new();
    let dispatcher = fx.dispatcher(vec![handler(
        HookEvent::PreToolUse,
        None,
        &print_json(&pre_json("allow", "configured")),
    )]);
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let handle = dispatcher
        .registry()
        .on::<PreToolUse, _, _>("Bash", move |input| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let cmd = input.tool_input["command"].clone();
            async move { PreToolUse::deny(format!("no {}", cmd.as_str().unwrap_or(""))) }
        })
        .unwrap();
    let d = fire(&dispatcher, &fx.bash("rm x")).await;
    assert_eq!(d.runs.len(), 2);
    assert_eq!(&*d.runs[1].origin.location.file, "<in-process>");
    assert_eq!(
        d.permission,
        Some(PermissionDecision::Deny {
            reason: "no rm x".into(),
            text: "PreToolUse:Bash hook error: no rm x".into()
        })
    );
    // The matcher applies.
    let d = fire(
        &dispatcher,
        &fx.pre_tool("Read", json!({"file_path": "/x"})),
    )
    .await;
    assert_eq!(d.runs.len(), 1);
    handle.unregister();
    let d = fire(&dispatcher, &fx.bash("rm x")).await;
    assert_eq!(d.runs.len(), 1);
    assert!(matches!(
        d.permission,
        Some(PermissionDecision::Allow { .. })
    ));
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);

    // Dropping the handle unregisters too.
    {
        let _h = dispatcher
            .registry()
            .on::<PreToolUse, _, _>("", |_| async { HookReply::none() })
            .unwrap();
        assert_eq!(dispatcher.registry().len(), 1);
    }
    assert!(dispatcher.registry().is_empty());
}

#[tokio::test]
async fn in_process_panic_and_error_are_isolated_and_logged() {
    let fx = Fixture::new();
    let log = fx.path("logs/run.jsonl");
    let mut env = fx.env();
    env.run_log = Some(log.clone());
    let dispatcher = crate::hooks::dispatch::Dispatcher::new(
        settings(vec![with_timeout(
            handler(HookEvent::PreToolUse, None, "sleep 5"),
            0.2,
        )])
        .handlers,
        env,
    );
    let _a = dispatcher
        .registry()
        .on::<PreToolUse, _, _>("*", |_| async { panic!("boom") })
        .unwrap();
    let _b = dispatcher
        .registry()
        .on::<PreToolUse, _, _>("*", |_| async { HookReply::error("nope") })
        .unwrap();
    let d = fire(&dispatcher, &fx.bash("ls")).await;
    assert_eq!(d.runs.len(), 3);
    assert_eq!(d.runs[0].status, RunStatus::TimedOut);
    assert!(matches!(&d.runs[1].status, RunStatus::Crashed(w) if w.contains("boom")));
    assert_eq!(d.runs[2].status, RunStatus::Crashed("nope".into()));
    assert_eq!(
        d.permission, None,
        "failures of in-process hooks do not block"
    );

    let lines: Vec<Value> = read(&log)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    let mut statuses: Vec<&str> = lines
        .iter()
        .map(|l| l["status"].as_str().unwrap())
        .collect();
    statuses.sort();
    assert_eq!(statuses, vec!["crashed", "crashed", "timed_out"]);
    let timed_out = lines.iter().find(|l| l["status"] == "timed_out").unwrap();
    assert_eq!(timed_out["event"], "PreToolUse");
    assert_eq!(timed_out["command"], "sleep 5");
    assert_eq!(timed_out["timed_out"], true);
    assert!(
        timed_out["origin"]
            .as_str()
            .unwrap()
            .starts_with("/test/settings.json:")
    );
    assert!(timed_out["stdin_bytes"].as_u64().unwrap() > 100);
}

// ---------------------------------------------------------------------------------------------
// Async hooks

#[tokio::test]
async fn async_hook_proceeds_now_and_delivers_context_later() {
    let fx = Fixture::new();
    let out = json!({"systemMessage": "bg done",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "LATER"}});
    let dispatcher = fx.dispatcher(vec![asynchronous(handler(
        HookEvent::PostToolUse,
        None,
        &format!("sleep 0.5; {}", print_json(&out)),
    ))]);
    let d = fire(&dispatcher, &fx.post_bash()).await;
    assert_eq!(d.runs[0].status, RunStatus::Backgrounded);
    assert!(d.context.is_empty());
    assert!(dispatcher.take_async_context().is_empty());
    dispatcher.wait_background().await;
    assert_eq!(
        dispatcher.take_async_context(),
        // Claude Code's form (fixture tests/fixtures/cc-2.1.328/async_end): one bare text,
        // systemMessage then additionalContext.
        vec!["bg done\nLATER".to_string()]
    );
    assert!(dispatcher.take_async_context().is_empty(), "taken once");
}

#[tokio::test]
async fn shutdown_kills_background_hooks() {
    let fx = Fixture::new();
    let done = fx.path("bg-done");
    let dispatcher = fx.dispatcher(vec![asynchronous(handler(
        HookEvent::PostToolUse,
        None,
        &format!("sleep 3; touch '{}'", done.display()),
    ))]);
    fire(&dispatcher, &fx.post_bash()).await;
    let t = Instant::now();
    dispatcher.shutdown().await;
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "shutdown did not wait for the hook"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!done.exists());
}

#[test]
fn fire_future_is_send() {
    fn is_send<T: Send>(_: &T) {}
    let fx = Fixture::new();
    let d = fx.dispatcher(vec![]);
    let input = fx.bash("ls");
    let fut = fire(&d, &input);
    is_send(&fut);
}

#[tokio::test]
async fn hook_switching_itself_to_async_is_backgrounded() {
    let fx = Fixture::new();
    let later = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "SWITCHED"}});
    let cmd = format!(
        "echo '{{\"async\":true}}'; sleep 0.5; {}",
        print_json(&later)
    );
    let dispatcher = fx.dispatcher(vec![handler(HookEvent::PostToolUse, None, &cmd)]);
    let d = fire(&dispatcher, &fx.post_bash()).await;
    assert_eq!(d.runs[0].status, RunStatus::Backgrounded);
    assert_eq!(d.runs[0].outcome, OutcomeKind::Success);
    assert!(d.context.is_empty());
    dispatcher.wait_background().await;
    assert_eq!(
        dispatcher.take_async_context(),
        vec!["SWITCHED".to_string()]
    );
}

#[tokio::test]
async fn session_end_budget_can_be_set_by_env() {
    let fx = Fixture::new();
    let mut env = fx.env();
    env.extra_env = vec![(
        "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS".into(),
        "4000".into(),
    )];
    let d = crate::hooks::dispatch::Dispatcher::new(
        settings(vec![handler(HookEvent::SessionEnd, None, "sleep 2")]).handlers,
        env,
    )
    .fire_input(&fx.session_end())
    .await;
    assert_eq!(d.runs[0].status, RunStatus::Exited(0));
}

#[tokio::test]
async fn permission_denied_retry_is_merged() {
    let fx = Fixture::new();
    let input = HookInput::PermissionDenied(
        crate::hooks::events::permission_denied::PermissionDeniedInput {
            base: fx.base(),
            hook_event_name: HookEvent::PermissionDenied,
            tool_name: "Bash".into(),
            tool_input: json!({"command": "rm x"}),
            tool_use_id: "toolu_1".into(),
            reason: "denied by rule".into(),
            mcp_server: None,
        },
    );
    let out = json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}});
    let d = fx
        .dispatcher(vec![
            handler(HookEvent::PermissionDenied, Some("Bash"), "true"),
            handler(HookEvent::PermissionDenied, Some("Bash"), &print_json(&out)),
        ])
        .fire_input(&input)
        .await;
    assert_eq!(d.runs.len(), 2);
    assert!(d.retry);
}

/// Every variable Claude Code 2.1.328 added to a hook's environment (recorded in
/// `tests/fixtures/cc-2.1.328/env_cwd/`) is set by rein with the same value, except the ones
/// that name Claude Code's own machinery, which rein does not have, and `AI_AGENT`, rein's
/// identity; the session-specific ones are checked by the caller.
fn assert_cc_hook_env(env: &std::collections::HashMap<String, String>) {
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cc-2.1.328/env_cwd/summary.json"
    ))
    .unwrap();
    let summary: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    let added = summary["hook_env_common"]["added"].as_object().unwrap();
    // Claude Code's inter-session messaging and child-notes channel: rein has neither.
    const NOT_IN_REIN: &[&str] = &[
        "CLAUDE_CODE_CHILD_NOTES_DIR",
        "CLAUDE_CODE_MESSAGING_SOCKET",
        "CLAUDE_CODE_MESSAGING_TOKEN",
    ];
    // Values that are per session or per process (checked against this run by the caller).
    const PER_RUN: &[&str] = &[
        "AI_AGENT",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_PID",
        "CLAUDE_PROJECT_DIR",
    ];
    assert!(added.len() > 8, "fixture lost its variables: {added:?}");
    for (name, value) in added {
        if NOT_IN_REIN.contains(&name.as_str()) {
            assert!(
                !env.contains_key(name),
                "{name} is set, but rein has no such channel"
            );
        } else if PER_RUN.contains(&name.as_str()) {
            assert!(env.contains_key(name), "{name} missing");
        } else {
            assert_eq!(
                env.get(name),
                value.as_str().map(str::to_string).as_ref(),
                "{name}"
            );
        }
    }
}
