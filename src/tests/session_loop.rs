//! The turn loop and the tool pipeline against scripted hook decisions, a scripted model and a
//! test tool that really touches the filesystem (so "never executed" is observable).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::hook_compat::{Decision, HookInput, empty_outcome, outcome_of};
use crate::agent::session::{Session, SessionConfig, TurnEnd};
use crate::hooks::events::Firing;
use crate::hooks::events::permission_request::PermissionRequestDecision;
use crate::hooks::events::pre_tool_use::PermissionDecision;
use crate::hooks::host::HookHost;
use crate::hooks::spec::HookEvent;
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Role, StopReason,
    ToolSpec,
};
use crate::pipeline::AllowAllGate;
use crate::progress::{Observer, Progress};
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};
use serde_json::{Value, json};

// ---------- doubles ----------

#[derive(Default)]
struct Hooks {
    script: Mutex<HashMap<HookEvent, VecDeque<Decision>>>,
    fired: Mutex<Vec<HookInput>>,
    env_files: Vec<PathBuf>,
}

impl Hooks {
    fn on(&self, d: Decision) {
        self.script
            .lock()
            .unwrap()
            .entry(d.event)
            .or_default()
            .push_back(d);
    }
}

struct Host(Arc<Hooks>);

impl HookHost for Host {
    fn fire_erased<'a>(
        &'a self,
        firing: &'a dyn Firing,
    ) -> BoxFuture<'a, Box<dyn std::any::Any + Send>> {
        // Every reply with text fires MessageDisplay; these tests script the loop's events.
        if firing.event() == HookEvent::MessageDisplay {
            let outcome: Box<dyn std::any::Any + Send> =
                Box::new(crate::hooks::events::message_display::MessageDisplayOutcome::default());
            return Box::pin(async move { outcome });
        }
        let input = HookInput::from_firing(firing);
        self.0.fired.lock().unwrap().push(input.clone());
        let d = self
            .0
            .script
            .lock()
            .unwrap()
            .get_mut(&input.event())
            .and_then(|q| q.pop_front());
        let outcome = match d {
            Some(d) => outcome_of(&d),
            None => empty_outcome(input.event()),
        };
        Box::pin(async move { outcome })
    }
    fn env_files(&self) -> Vec<PathBuf> {
        self.0.env_files.clone()
    }
    fn take_async_context(&self) -> Vec<String> {
        Vec::new()
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

struct Scripted {
    replies: Mutex<VecDeque<Result<ModelResponse, ModelError>>>,
    requests: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl Model for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(
        &'a self,
        messages: &'a [Message],
        _tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.requests.lock().unwrap().push(messages.to_vec());
        let r = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Ok(text("done")));
        Box::pin(async move { r })
    }
}

fn text(t: &str) -> ModelResponse {
    ModelResponse {
        id: None,
        model: "scripted".into(),
        content: vec![ContentBlock::Text { text: t.into() }],
        stop_reason: StopReason::EndTurn,
        usage: None,
    }
}

fn calls(list: &[(&str, &str, Value)]) -> ModelResponse {
    ModelResponse {
        id: Some("msg_1".into()),
        model: "scripted".into(),
        content: list
            .iter()
            .map(|(id, name, input)| ContentBlock::ToolUse {
                id: id.to_string(),
                name: name.to_string(),
                input: input.clone(),
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
        usage: None,
    }
}

/// `Touch{path}` creates `<project>/<path>`; response `{"created": path}`, content `created
/// <path>`; renders `{"content": s}`.
struct Touch;

impl Tool for Touch {
    fn name(&self) -> &str {
        "Touch"
    }
    fn description(&self) -> &str {
        "create a file"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        match input.get("path").and_then(Value::as_str) {
            Some(p) if !p.is_empty() => Ok(json!({"path": p})),
            _ => Err("InputValidationError: path is required".into()),
        }
    }
    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let p = input["path"].as_str().unwrap_or_default().to_string();
            if p.starts_with("fail") {
                return ToolOutcome::Failure {
                    error: "Exit code 3".into(),
                    is_interrupt: false,
                };
            }
            std::fs::write(ctx.project_dir.join(&p), "x").unwrap();
            ToolOutcome::Success {
                response: json!({"created": p}),
                content: format!("created {p}"),
            }
        })
    }
    fn render(&self, response: &Value) -> Option<String> {
        response
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// `EnvFiles{}` answers with the env files the tool context holds.
struct EnvFiles;

impl Tool for EnvFiles {
    fn name(&self) -> &str {
        "EnvFiles"
    }
    fn description(&self) -> &str {
        "list env files"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        Ok(input)
    }
    fn execute<'a>(&'a self, _input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        let files: Vec<String> = ctx
            .env_files
            .lock()
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        Box::pin(async move {
            ToolOutcome::Success {
                response: json!({}),
                content: files.join(","),
            }
        })
    }
    fn render(&self, _response: &Value) -> Option<String> {
        None
    }
}

#[derive(Default, Clone)]
struct Notices(Arc<Mutex<Vec<String>>>);

impl Observer for Notices {
    fn observe(&self, p: Progress<'_>) {
        if let Progress::Notice { text } = p {
            self.0.lock().unwrap().push(text.to_string());
        }
    }
}

struct Harness {
    dir: tempfile::TempDir,
    hooks: Arc<Hooks>,
    requests: Arc<Mutex<Vec<Vec<Message>>>>,
    notices: Notices,
    session: Session,
}

fn harness(replies: Vec<Result<ModelResponse, ModelError>>, setup: impl FnOnce(&Hooks)) -> Harness {
    harness_with(replies, setup, |_| {})
}

fn harness_with(
    replies: Vec<Result<ModelResponse, ModelError>>,
    setup: impl FnOnce(&Hooks),
    config: impl FnOnce(&mut SessionConfig),
) -> Harness {
    harness_tools(
        replies,
        setup,
        config,
        vec![Arc::new(Touch), Arc::new(EnvFiles)],
    )
}

fn harness_tools(
    replies: Vec<Result<ModelResponse, ModelError>>,
    setup: impl FnOnce(&Hooks),
    config: impl FnOnce(&mut SessionConfig),
    tools: Vec<Arc<dyn Tool>>,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut hooks = Hooks {
        env_files: vec![dir.path().join("env.sh")],
        ..Hooks::default()
    };
    setup(&mut hooks);
    let hooks = Arc::new(hooks);
    let requests = Arc::new(Mutex::new(Vec::new()));
    let model = Scripted {
        replies: Mutex::new(replies.into()),
        requests: requests.clone(),
    };
    let mut cfg = SessionConfig {
        session_id: "sess-1".into(),
        project_dir: dir.path().to_path_buf(),
        transcript_path: dir.path().join("t.jsonl"),
        permission_mode: "default".into(),
        max_turns: None,
        stop_block_cap: 8,
        session_end_budget: Duration::from_millis(1500),
    };
    config(&mut cfg);
    let notices = Notices::default();
    let session = Session::new(
        cfg,
        Box::new(Host(hooks.clone())),
        Arc::new(model),
        tools,
        Box::new(AllowAllGate),
        ToolContext::new(dir.path().to_path_buf()),
        Box::new(notices.clone()),
    );
    Harness {
        dir,
        hooks,
        requests,
        notices,
        session,
    }
}

impl Harness {
    fn fired(&self) -> Vec<HookInput> {
        self.hooks.fired.lock().unwrap().clone()
    }
    fn events(&self) -> Vec<HookEvent> {
        self.fired().iter().map(HookInput::event).collect()
    }
    fn request(&self, n: usize) -> Vec<Message> {
        self.requests.lock().unwrap()[n].clone()
    }
    fn exists(&self, name: &str) -> bool {
        self.dir.path().join(name).exists()
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn tool_results(msg: &Message) -> Vec<(String, String, bool)> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn texts(msg: &Message) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            ContentBlock::SystemNote { text } => Some(format!("[system] {text}")),
            _ => None,
        })
        .collect()
}

fn deny(text: &str) -> Decision {
    let mut d = Decision::empty(HookEvent::PreToolUse);
    d.permission = Some(PermissionDecision::Deny {
        reason: "r".into(),
        text: text.into(),
    });
    d
}

// ---------- pipeline ----------

#[tokio::test]
async fn unknown_tool_is_an_error_result_and_fires_no_hook() {
    let mut h = harness(vec![Ok(calls(&[("t1", "Nope", json!({}))]))], |_| {});
    h.session.start().await;
    h.session.run_prompt("go").await;
    let last = h.request(1).last().cloned().unwrap();
    assert_eq!(
        tool_results(&last),
        vec![(
            "t1".into(),
            "<tool_use_error>Error: No such tool available: Nope</tool_use_error>".into(),
            true
        )]
    );
    assert!(!h.events().contains(&HookEvent::PreToolUse));
    assert!(!h.events().contains(&HookEvent::PermissionDenied));
}

#[tokio::test]
async fn invalid_input_is_an_error_result_and_fires_no_hook() {
    let mut h = harness(vec![Ok(calls(&[("t1", "Touch", json!({"x": 1}))]))], |_| {});
    h.session.run_prompt("go").await;
    let last = h.request(1).last().cloned().unwrap();
    assert_eq!(
        tool_results(&last)[0].1,
        "<tool_use_error>InputValidationError: path is required</tool_use_error>"
    );
    let tool_events: Vec<_> = h
        .events()
        .into_iter()
        .filter(|e| e.is_tool_event())
        .collect();
    assert!(tool_events.is_empty(), "{tool_events:?}");
}

#[tokio::test]
async fn pre_tool_use_deny_never_executes_and_the_model_sees_the_hook_text() {
    let text = "PreToolUse:Touch hook error: [deny.sh]: no writes\n";
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "flag"}))]))],
        |hk| hk.on(deny(text)),
    );
    let out = h.session.run_prompt("go").await;
    assert!(!h.exists("flag"), "a blocked call executed");
    let last = h.request(1).last().cloned().unwrap();
    assert_eq!(tool_results(&last), vec![("t1".into(), text.into(), true)]);
    let denied: Vec<_> = h
        .fired()
        .into_iter()
        .filter_map(|i| match i {
            HookInput::PermissionDenied(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0].reason, text);
    assert_eq!(denied[0].tool_use_id, "t1");
    assert!(!h.events().contains(&HookEvent::PostToolUse));
    assert_eq!(out.denials.len(), 1);
    assert_eq!(out.end, TurnEnd::Completed);
}

#[tokio::test]
async fn updated_input_replaces_the_input_and_post_tool_use_sees_it() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "orig"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PreToolUse);
            d.updated_input = Some(json!({"path": "rewritten"}));
            hk.on(d);
        },
    );
    h.session.run_prompt("go").await;
    assert!(h.exists("rewritten"));
    assert!(!h.exists("orig"));
    let post = h
        .fired()
        .into_iter()
        .find_map(|i| match i {
            HookInput::PostToolUse(p) => Some(p),
            _ => None,
        })
        .unwrap();
    assert_eq!(post.tool_input, json!({"path": "rewritten"}));
    assert_eq!(post.tool_response, json!({"created": "rewritten"}));
}

#[tokio::test]
async fn invalid_updated_input_is_refused() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "orig"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PreToolUse);
            d.updated_input = Some(json!({"nopath": true}));
            hk.on(d);
        },
    );
    h.session.run_prompt("go").await;
    assert!(!h.exists("orig"));
    let last = h.request(1).last().cloned().unwrap();
    let (_, content, is_error) = tool_results(&last).remove(0);
    assert!(is_error);
    assert!(content.contains("invalid updatedInput"), "{content}");
    assert!(h.events().contains(&HookEvent::PermissionDenied));
}

#[tokio::test]
async fn pre_tool_use_continue_false_runs_the_tool_then_stops() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "ran"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PreToolUse);
            d.stop_loop = true;
            d.stop_reason = Some("halt".into());
            hk.on(d);
        },
    );
    let out = h.session.run_prompt("go").await;
    assert!(h.exists("ran"));
    assert_eq!(h.requests.lock().unwrap().len(), 1);
    assert_eq!(
        out.end,
        TurnEnd::Stopped {
            reason: Some("halt".into())
        }
    );
    assert!(!h.events().contains(&HookEvent::Stop));
}

#[tokio::test]
async fn updated_tool_output_is_rendered_for_the_model_with_fallback() {
    let mut h = harness(
        vec![Ok(calls(&[
            ("t1", "Touch", json!({"path": "a"})),
            ("t2", "Touch", json!({"path": "b"})),
        ]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PostToolUse);
            d.updated_tool_output = Some(json!({"content": "REPLACED"}));
            hk.on(d);
            let mut d = Decision::empty(HookEvent::PostToolUse);
            d.updated_tool_output = Some(json!("bare string"));
            hk.on(d);
        },
    );
    h.session.run_prompt("go").await;
    let last = h.request(1).last().cloned().unwrap();
    let results = tool_results(&last);
    assert_eq!(results[0].1, "REPLACED");
    assert_eq!(results[1].1, "created b");
}

#[tokio::test]
async fn context_is_delivered_as_system_notes_after_tool_results() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "a"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PostToolUse);
            d.context = vec!["PostToolUse:Touch hook additional context: CTX".into()];
            hk.on(d);
            let mut d = Decision::empty(HookEvent::PostToolBatch);
            d.context = vec!["PostToolBatch hook additional context: BATCH".into()];
            hk.on(d);
        },
    );
    h.session.run_prompt("go").await;
    let req = h.request(1);
    let last = req.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert_eq!(tool_results(last).len(), 1);
    assert!(matches!(last.content[0], ContentBlock::ToolResult { .. }));
    assert_eq!(
        texts(last),
        vec![
            "[system] PostToolUse:Touch hook additional context: CTX",
            "[system] PostToolBatch hook additional context: BATCH",
        ]
    );
    // Roles alternate.
    for pair in req.windows(2) {
        assert_ne!(pair[0].role, pair[1].role);
    }
}

#[tokio::test]
async fn calls_run_in_order_then_one_post_tool_batch_with_model_facing_content() {
    let mut h = harness(
        vec![Ok(calls(&[
            ("t1", "Touch", json!({"path": "a"})),
            ("t2", "Touch", json!({"path": "fail-b"})),
            ("t3", "Nope", json!({})),
        ]))],
        |_| {},
    );
    h.session.run_prompt("go").await;
    let seq: Vec<String> = h
        .fired()
        .iter()
        .filter(|i| i.event() != HookEvent::UserPromptSubmit && i.event() != HookEvent::Stop)
        .map(|i| match i.tool() {
            Some((_, input)) => format!("{}({})", i.event(), input["path"].as_str().unwrap_or("")),
            None => i.event().to_string(),
        })
        .collect();
    assert_eq!(
        seq,
        vec![
            "PreToolUse(a)",
            "PostToolUse(a)",
            "PreToolUse(fail-b)",
            "PostToolUseFailure(fail-b)",
            "PostToolBatch"
        ]
    );
    let batch = h
        .fired()
        .into_iter()
        .find_map(|i| match i {
            HookInput::PostToolBatch(b) => Some(b),
            _ => None,
        })
        .unwrap();
    let responses: Vec<Value> = batch
        .tool_calls
        .iter()
        .map(|c| c.tool_response.clone().unwrap())
        .collect();
    assert_eq!(
        responses,
        vec![
            json!("created a"),
            json!("Exit code 3"),
            json!("<tool_use_error>Error: No such tool available: Nope</tool_use_error>")
        ]
    );
    let failure = h
        .fired()
        .into_iter()
        .find_map(|i| match i {
            HookInput::PostToolUseFailure(f) => Some(f),
            _ => None,
        })
        .unwrap();
    assert_eq!(failure.error, "Exit code 3");
    assert!(!failure.is_interrupt);
    assert_eq!(failure.base.prompt_id.as_deref().map(str::len), Some(36));
    assert_eq!(failure.base.permission_mode.as_deref(), Some("default"));
}

#[tokio::test]
async fn ask_fires_permission_request_whose_allow_rewrite_runs() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "asked"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PreToolUse);
            d.permission = Some(PermissionDecision::Ask {
                reason: Some("why".into()),
            });
            hk.on(d);
            let mut d = Decision::empty(HookEvent::PermissionRequest);
            d.permission_request = Some(PermissionRequestDecision::Allow {
                updated_input: Some(json!({"path": "approved"})),
                updated_permissions: vec![],
            });
            hk.on(d);
        },
    );
    h.session.run_prompt("go").await;
    assert!(h.exists("approved"));
    assert!(!h.exists("asked"));
    let req = h
        .fired()
        .into_iter()
        .find_map(|i| match i {
            HookInput::PermissionRequest(r) => Some(r),
            _ => None,
        })
        .unwrap();
    let bytes = String::from_utf8(HookInput::PermissionRequest(req).to_stdin_bytes()).unwrap();
    assert!(!bytes.contains("tool_use_id"), "{bytes}");
}

#[tokio::test]
async fn ask_denied_by_permission_request_or_headless_never_runs() {
    let mut h = harness(
        vec![Ok(calls(&[
            ("t1", "Touch", json!({"path": "one"})),
            ("t2", "Touch", json!({"path": "two"})),
        ]))],
        |hk| {
            for _ in 0..2 {
                let mut d = Decision::empty(HookEvent::PreToolUse);
                d.permission = Some(PermissionDecision::Ask {
                    reason: Some("needs a human".into()),
                });
                hk.on(d);
            }
            let mut d = Decision::empty(HookEvent::PermissionRequest);
            d.permission_request = Some(PermissionRequestDecision::Deny {
                message: "PR says no".into(),
                interrupt: false,
            });
            hk.on(d);
        },
    );
    let out = h.session.run_prompt("go").await;
    assert!(!h.exists("one") && !h.exists("two"));
    let last = h.request(1).last().cloned().unwrap();
    let r = tool_results(&last);
    assert_eq!(r[0].1, "PR says no");
    assert_eq!(r[1].1, "needs a human");
    assert!(r[0].2 && r[1].2);
    assert_eq!(out.denials.len(), 2);
    let denied = h
        .events()
        .iter()
        .filter(|e| **e == HookEvent::PermissionDenied)
        .count();
    assert_eq!(denied, 2);
}

#[tokio::test]
async fn defer_ends_the_turn_without_stop_or_another_request() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "d"}))]))],
        |hk| {
            let mut d = Decision::empty(HookEvent::PreToolUse);
            d.permission = Some(PermissionDecision::Defer { reason: None });
            hk.on(d);
        },
    );
    let out = h.session.run_prompt("go").await;
    assert_eq!(out.end, TurnEnd::Deferred);
    assert_eq!(out.result, "");
    assert!(!h.exists("d"));
    assert_eq!(h.requests.lock().unwrap().len(), 1);
    assert!(!h.events().contains(&HookEvent::Stop));
}

// ---------- session ----------

#[tokio::test]
async fn session_start_context_and_env_files_reach_the_first_request() {
    let mut h = harness(vec![], |hk| {
        let mut d = Decision::empty(HookEvent::SessionStart);
        d.context = vec!["SessionStart:startup hook success: hello".into()];
        hk.on(d);
        let mut d = Decision::empty(HookEvent::UserPromptSubmit);
        d.context = vec!["UserPromptSubmit hook success: ups".into()];
        hk.on(d);
    });
    h.session.start().await;
    h.session.run_prompt("the prompt").await;
    let first = h.request(0);
    assert_eq!(first.len(), 1);
    assert_eq!(
        texts(&first[0]),
        vec![
            "[system] SessionStart:startup hook success: hello",
            "the prompt",
            "[system] UserPromptSubmit hook success: ups",
        ]
    );
    let start = h.fired().remove(0);
    let bytes = String::from_utf8(start.to_stdin_bytes()).unwrap();
    assert!(
        !bytes.contains("prompt_id") && !bytes.contains("permission_mode"),
        "{bytes}"
    );
    assert!(bytes.contains(r#""source":"startup""#));
}

#[tokio::test]
async fn env_files_are_handed_to_tools_after_session_start() {
    let mut h = harness(vec![Ok(calls(&[("t1", "EnvFiles", json!({}))]))], |_| {});
    h.session.start().await;
    h.session.run_prompt("go").await;
    let last = h.request(1).last().cloned().unwrap();
    let expected = h.path().join("env.sh").display().to_string();
    assert_eq!(tool_results(&last)[0].1, expected);
}

#[tokio::test]
async fn user_prompt_submit_block_makes_no_model_call() {
    let mut h = harness(vec![], |hk| {
        let mut d = Decision::empty(HookEvent::UserPromptSubmit);
        d.block = Some("[ups.sh]: nope".into());
        d.prompt_blocked_text = Some(
            "UserPromptSubmit operation blocked by hook:\n[ups.sh]: nope\n\nOriginal prompt: hi"
                .into(),
        );
        hk.on(d);
    });
    let out = h.session.run_prompt("hi").await;
    assert!(h.requests.lock().unwrap().is_empty());
    assert!(matches!(out.end, TurnEnd::PromptBlocked { .. }));
    assert!(
        out.result
            .starts_with("UserPromptSubmit operation blocked by hook:")
    );
    assert!(!h.events().contains(&HookEvent::Stop));
}

fn stop_block(reason: &str) -> Decision {
    let mut d = Decision::empty(HookEvent::Stop);
    d.block = Some(reason.into());
    d.stop_feedback = Some(format!("Stop hook feedback:\n{reason}"));
    d
}

#[tokio::test]
async fn stop_block_continues_with_stop_hook_active_and_feedback() {
    let mut h = harness(vec![Ok(text("first")), Ok(text("second"))], |hk| {
        hk.on(stop_block("keep going"))
    });
    let out = h.session.run_prompt("go").await;
    assert_eq!(out.end, TurnEnd::Completed);
    assert_eq!(out.result, "second");
    let stops: Vec<(bool, Option<String>)> = h
        .fired()
        .into_iter()
        .filter_map(|i| match i {
            HookInput::Stop(s) => Some((s.stop_hook_active, s.last_assistant_message)),
            _ => None,
        })
        .collect();
    assert_eq!(
        stops,
        vec![(false, Some("first".into())), (true, Some("second".into()))]
    );
    let second = h.request(1);
    let last = second.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert_eq!(texts(last), vec!["Stop hook feedback:\nkeep going"]);
}

#[tokio::test]
async fn stop_blocks_are_capped() {
    let mut h = harness_with(
        vec![],
        |hk| {
            for _ in 0..20 {
                hk.on(stop_block("again"));
            }
        },
        |c| c.stop_block_cap = 3,
    );
    let out = h.session.run_prompt("go").await;
    assert_eq!(out.end, TurnEnd::Completed);
    // 3 honoured blocks → 4 requests, 4 Stop firings; the 4th block ends the turn.
    assert_eq!(h.requests.lock().unwrap().len(), 4);
    let stops = h.events().iter().filter(|e| **e == HookEvent::Stop).count();
    assert_eq!(stops, 4);
    let notices = h.notices.0.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n.contains("3 times")), "{notices:?}");
}

#[tokio::test]
async fn model_error_fires_stop_failure_with_the_kind() {
    let err = ModelError {
        provider: "mock".into(),
        kind: ModelErrorKind::RateLimit,
        message: "429".into(),
    };
    let mut h = harness(vec![Err(err.clone())], |_| {});
    let out = h.session.run_prompt("go").await;
    assert_eq!(out.end, TurnEnd::ModelFailed(err));
    let sf = h
        .fired()
        .into_iter()
        .find_map(|i| match i {
            HookInput::StopFailure(s) => Some(s),
            _ => None,
        })
        .unwrap();
    assert_eq!(sf.error, "rate_limit");
    assert!(!h.events().contains(&HookEvent::Stop));
}

#[tokio::test]
async fn max_turns_limits_model_requests() {
    let replies = (0..5)
        .map(|i| {
            Ok(calls(&[(
                &*format!("t{i}"),
                "Touch",
                json!({"path": format!("f{i}")}),
            )]))
        })
        .collect();
    let mut h = harness_with(replies, |_| {}, |c| c.max_turns = Some(2));
    let out = h.session.run_prompt("go").await;
    assert_eq!(out.end, TurnEnd::MaxTurns);
    assert_eq!(out.num_turns, 2);
    assert_eq!(h.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn session_end_fires_once_with_reason_and_prompt_id() {
    let mut h = harness(vec![], |_| {});
    h.session.run_prompt("go").await;
    h.session.end("other").await;
    h.session.end("other").await;
    let ends: Vec<_> = h
        .fired()
        .into_iter()
        .filter_map(|i| match i {
            HookInput::SessionEnd(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].reason, "other");
    assert!(ends[0].base.prompt_id.is_some());
    assert!(ends[0].base.permission_mode.is_none());
}

#[tokio::test]
async fn transcript_records_prompt_assistant_and_tool_result() {
    let mut h = harness(
        vec![Ok(calls(&[("t1", "Touch", json!({"path": "a"}))]))],
        |_| {},
    );
    h.session.run_prompt("go").await;
    let text = std::fs::read_to_string(h.path().join("t.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["user", "assistant", "user", "assistant"]);
    assert_eq!(lines[0]["message"]["content"], "go");
    assert_eq!(lines[2]["toolUseResult"], json!({"created": "a"}));
    assert_eq!(lines[2]["message"]["content"][0]["tool_use_id"], "t1");
    assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
}

// ---------- background commands ----------

fn background_harness(replies: Vec<Result<ModelResponse, ModelError>>) -> Harness {
    harness_tools(
        replies,
        |_| {},
        |_| {},
        vec![Arc::new(crate::tools::bash::BashTool)],
    )
}

/// A `run_in_background` Bash call that writes its process group id to `pgid` first.
fn background_call(command: &str) -> ModelResponse {
    calls(&[(
        "t1",
        "Bash",
        json!({"command": format!("ps -o pgid= $$ > pgid; {command}"),
               "run_in_background": true, "description": "job"}),
    )])
}

fn group_alive(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_a_library_session_stops_its_background_commands() {
    let mut h = background_harness(vec![Ok(background_call("sleep 60")), Ok(text("started"))]);
    h.session.start().await;
    h.session.run_prompt("go").await;
    let pgid_file = h.path().join("pgid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pgid_file).is_ok_and(|t| t.ends_with('\n')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pgid: i32 = std::fs::read_to_string(&pgid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(group_alive(pgid));
    // Still running: nothing to tell the model yet.
    assert!(h.session.run_background_notification().await.is_none());
    h.session.end("other").await;
    // Zombies still count for kill(2) until their new parent reaps them: give that a moment
    // (the command itself would live 60 s).
    for _ in 0..300 {
        if !group_alive(pgid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!group_alive(pgid), "group {pgid} outlived the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_background_command_gets_a_turn_that_says_no_person_wrote_it() {
    let mut h = background_harness(vec![
        Ok(background_call("exit 4")),
        Ok(text("started")),
        Ok(text("noted")),
    ]);
    h.session.start().await;
    h.session.run_prompt("go").await;
    let background = Arc::clone(h.session.background_tasks());
    for _ in 0..500 {
        if background.running().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let outcome = h.session.run_background_notification().await.unwrap();
    assert_eq!(outcome.result, "noted");
    // Told once.
    assert!(h.session.run_background_notification().await.is_none());
    let request = h.request(2);
    let last = request.last().unwrap();
    assert_eq!(last.role, Role::User);
    let ContentBlock::Text { text } = &last.content[0] else {
        panic!("{last:?}")
    };
    assert!(
        text.starts_with("<system-reminder>\nNotice from rein, not from the user"),
        "{text}"
    );
    assert!(text.contains("<tool-use-id>t1</tool-use-id>"), "{text}");
    assert!(text.contains("<status>failed</status>"), "{text}");
    assert!(
        text.contains("<summary>Background command \"job\" failed with exit code 4</summary>"),
        "{text}"
    );
    // UserPromptSubmit saw the bare block.
    let prompts: Vec<String> = h
        .fired()
        .iter()
        .filter_map(|f| match f {
            HookInput::UserPromptSubmit(i) => Some(i.prompt.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts.len(), 2);
    assert!(
        prompts[1].starts_with("<task-notification>\n<task-id>"),
        "{}",
        prompts[1]
    );
    h.session.end("other").await;
}

// ---------- a tool whose input check blocks ----------

/// A tool whose `prepare` blocks its thread for [`STUCK_FOR`], like a `stat` on a hung file
/// system.
struct StuckCheck;

const STUCK_FOR: Duration = Duration::from_secs(4);

impl Tool for StuckCheck {
    fn name(&self) -> &str {
        "Stuck"
    }
    fn description(&self) -> &str {
        "blocks in prepare"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        std::thread::sleep(STUCK_FOR);
        Ok(input)
    }
    fn execute<'a>(&'a self, _input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async {
            ToolOutcome::Success {
                response: json!({}),
                content: String::new(),
            }
        })
    }
    fn render(&self, _response: &Value) -> Option<String> {
        None
    }
}

/// On a one-thread runtime, as a signal beside the session's work would be: a blocked input
/// check must not hold the task that also waits for the signal.
#[tokio::test(flavor = "current_thread")]
async fn a_blocking_input_check_does_not_hold_the_session_task() {
    let mut h = harness_tools(
        vec![Ok(calls(&[("t1", "Stuck", json!({}))])), Ok(text("done"))],
        |_| {},
        |_| {},
        vec![Arc::new(StuckCheck)],
    );
    h.session.start().await;
    let started = std::time::Instant::now();
    let cut = tokio::time::timeout(Duration::from_millis(200), h.session.run_prompt("go")).await;
    let took = started.elapsed();
    assert!(cut.is_err(), "the turn finished: {cut:?}");
    // Held, it could only be cut after the check's 4 s.
    assert!(took < STUCK_FOR / 2, "cut after {took:?}");
}
