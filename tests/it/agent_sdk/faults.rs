//! The control protocol's faults, driven raw (JSON lines on rein's stdin and stdout, as an SDK
//! would write them, but wrong): unknown subtypes, a request without an id, an answer to a
//! request rein never sent, a callback id nobody registered, a callback that never answers, an
//! SDK that closes stdin mid-turn or goes away, a `can_use_tool` answer that is not JSON or
//! never comes, 1000 requests in a burst, a 20 MB MCP answer. Security checks look at a victim
//! file; session ends at a SessionEnd hook's marker.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, say};

/// rein under a raw driver: its stdin, its stdout lines as they come.
pub(super) struct Driven {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Driven {
    pub(super) fn start(s: &Sandbox, extra: &[&str]) -> Driven {
        let mut child = s
            .rein()
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json",
            ])
            .args(extra)
            .env("IS_SANDBOX", "1")
            // As both SDKs set it: rein then says when it runs and when it is idle.
            .env("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                    Err(e) => panic!("rein wrote a line that is not JSON ({e}): {line:.200}"),
                }
            }
        });
        let stdin = child.stdin.take();
        Driven {
            child,
            stdin,
            lines,
        }
    }

    pub(super) fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn send(&mut self, v: &Value) {
        self.send_raw(&v.to_string());
    }

    pub(super) fn initialize(&mut self, request: Value) -> Value {
        let mut request = request;
        request["subtype"] = json!("initialize");
        self.send(&json!({"type": "control_request", "request_id": "init", "request": request}));
        self.until(|v| v["type"] == "control_response" && v["response"]["request_id"] == "init")
    }

    pub(super) fn user(&mut self, text: &str) {
        self.send(
            &json!({"type": "user", "message": {"role": "user", "content": text},
            "parent_tool_use_id": null}),
        );
    }

    pub(super) fn answer(&mut self, request_id: &Value, response: Value) {
        self.send(
            &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": request_id, "response": response}}),
        );
    }

    /// The next stdout line `pred` accepts (earlier ones are skipped); panics after 30 s.
    pub(super) fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if pred(&v) => return v,
                Ok(_) => {}
                Err(e) => panic!("no such line within 30 s ({e})"),
            }
        }
    }

    pub(super) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for rein to exit; its code and stderr.
    pub(super) fn finish(mut self) -> (i32, String) {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut err)
                    .unwrap();
                return (status.code().unwrap_or(-1), err);
            }
            assert!(Instant::now() < deadline, "rein did not exit within 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub(super) fn is_request(v: &Value, subtype: &str) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == subtype
}

/// A project whose SessionEnd hook leaves a marker.
fn project() -> Sandbox {
    let s = Sandbox::new("project", &["project/.claude", "project/hooks"]);
    let marker = s.path("session-ended");
    let hook = s.script("end.sh", &format!("cat > '{}'", marker.display()));
    s.hooks(json!({"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]}));
    s
}

fn session_end_reason(s: &Sandbox) -> String {
    let text = std::fs::read_to_string(s.path("session-ended")).expect("SessionEnd did not fire");
    serde_json::from_str::<Value>(&text).unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn unknown_subtypes_missing_ids_and_unsolicited_answers_are_reported_and_the_session_goes_on() {
    let s = project();
    let mut d = Driven::start(&s, &[]);
    let init = d.initialize(json!({"hooks": null}));
    assert_eq!(init["response"]["subtype"], "success", "{init}");
    assert_eq!(
        init["response"]["response"]["claude_code_version"],
        "2.1.328"
    );
    d.send(&json!({"type": "control_request", "request_id": "u1", "request": {"subtype": "frobnicate"}}));
    let r = d.until(|v| v["response"]["request_id"] == "u1");
    assert_eq!(
        r["response"],
        json!({"subtype": "error", "request_id": "u1",
            "error": "Unsupported control request subtype: frobnicate",
            "error_code": "unsupported_request"})
    );
    d.send(&json!({"type": "control_request", "request_id": "u2", "request": {"subtype": "rewind_files", "user_message_id": "x"}}));
    let r = d.until(|v| v["response"]["request_id"] == "u2");
    assert!(
        r["response"]["error"]
            .as_str()
            .unwrap()
            .contains("rewind_files"),
        "{r}"
    );
    d.send(&json!({"type": "control_request", "request": {"subtype": "mcp_status"}}));
    d.send(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "never-sent", "response": {}}}));
    d.user("执行命令 echo fine");
    let result = d.until(|v| v["type"] == "result");
    assert_eq!(result["subtype"], "success", "{result}");
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("stdin line 4: a control_request (mcp_status) without a request_id cannot be answered; ignored"), "{err}");
    assert!(err.contains("stdin line 5: a control_response for request \"never-sent\", which rein never sent or no longer waits for; ignored"), "{err}");
    assert_eq!(session_end_reason(&s), "other");
}

#[test]
fn a_callback_id_the_sdk_does_not_know_and_one_that_never_answers_cost_only_their_own_result() {
    let s = project();
    let mock = s.mock(json!([bash("echo ran > ran.txt"), say("done")]));
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    d.initialize(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hookCallbackIds": ["hook_99"]},
        {"matcher": "Bash", "hookCallbackIds": ["hook_slow"], "timeout": 1}]}}));
    d.user("go");
    let started = Instant::now();
    // Both callbacks are asked at once (the event's hooks run concurrently).
    let first = d.until(|v| is_request(v, "hook_callback"));
    let second = d.until(|v| is_request(v, "hook_callback"));
    let asked = Instant::now();
    let (unknown, slow) = if first["request"]["callback_id"] == "hook_99" {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(slow["request"]["callback_id"], "hook_slow");
    assert_eq!(unknown["request"]["input"]["hook_event_name"], "PreToolUse");
    assert_eq!(
        unknown["request"]["tool_use_id"],
        unknown["request"]["input"]["tool_use_id"]
    );
    // What the Python SDK answers for an id it never registered.
    d.send(
        &json!({"type": "control_response", "response": {"subtype": "error",
        "request_id": unknown["request_id"], "error": "No hook callback found for ID: hook_99"}}),
    );
    // The slow one is withdrawn when its 1 s timeout passes, not before; the call goes on.
    let cancel = d.until(|v| v["type"] == "control_cancel_request");
    assert_eq!(cancel["request_id"], slow["request_id"]);
    assert!(
        asked.elapsed() >= Duration::from_millis(900),
        "{:?}",
        asked.elapsed()
    );
    let result = d.until(|v| v["type"] == "result");
    assert_eq!(result["subtype"], "success");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(std::fs::read_to_string(s.path("ran.txt")).unwrap(), "ran\n");
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_sdk_that_closes_stdin_mid_turn_fails_what_waits_and_session_end_fires() {
    let s = project();
    std::fs::write(s.path("victim.txt"), "keep me").unwrap();
    let mock = s.mock(json!([bash("rm victim.txt"), say("done")]));
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--permission-prompt-tool",
            "stdio",
        ],
    );
    d.initialize(json!({}));
    d.user("go");
    let ask = d.until(|v| is_request(v, "can_use_tool"));
    assert_eq!(ask["request"]["tool_name"], "Bash");
    assert!(
        ask["request"]["tool_use_id"]
            .as_str()
            .unwrap()
            .starts_with("toolu_")
    );
    d.close_stdin();
    let result = d.until(|v| v["type"] == "result");
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Bash",
        "{result}"
    );
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(s.path("victim.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(session_end_reason(&s), "other");
}

#[test]
fn an_sdk_that_dies_mid_turn_ends_the_session_like_a_closed_stdin() {
    let s = project();
    let mock = s.mock(json!([bash("sleep 1; echo late > late.txt"), say("done")]));
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    d.initialize(json!({}));
    d.user("go");
    d.until(|v| v["type"] == "assistant");
    // The SDK's process is gone: both pipes close at once.
    let mut d = d;
    d.close_stdin();
    let Driven { child, lines, .. } = d;
    drop(lines);
    let mut child = child;
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "rein outlived its SDK by 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(session_end_reason(&s), "other");
}

#[test]
fn a_can_use_tool_answer_that_is_not_json_refuses_the_call_and_ends_the_session() {
    let s = project();
    std::fs::write(s.path("victim.txt"), "keep me").unwrap();
    let mock = s.mock(json!([bash("rm victim.txt"), say("done")]));
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--permission-prompt-tool",
            "stdio",
        ],
    );
    d.initialize(json!({}));
    d.user("go");
    d.until(|v| is_request(v, "can_use_tool"));
    d.send_raw("allow, please");
    let (code, err) = d.finish();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Error: stdin line 3: not valid JSON"), "{err}");
    assert_eq!(
        std::fs::read_to_string(s.path("victim.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(session_end_reason(&s), "other");
}

#[test]
fn a_can_use_tool_answer_without_a_behavior_refuses_the_call() {
    let s = project();
    std::fs::write(s.path("victim.txt"), "keep me").unwrap();
    let mock = s.mock(json!([bash("rm victim.txt"), say("done")]));
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--permission-prompt-tool",
            "stdio",
        ],
    );
    d.initialize(json!({}));
    d.user("go");
    let ask = d.until(|v| is_request(v, "can_use_tool"));
    d.answer(&ask["request_id"], json!({"decision": "yes"}));
    let tool_result =
        d.until(|v| v["type"] == "user" && v["message"]["content"][0]["type"] == "tool_result");
    let text = tool_result["message"]["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("no behavior \"allow\" or \"deny\""), "{text}");
    d.until(|v| v["type"] == "result");
    let (code, _) = d.finish();
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(s.path("victim.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn a_burst_of_1000_control_requests_is_answered_each_once() {
    let s = project();
    let mut d = Driven::start(&s, &[]);
    d.initialize(json!({}));
    let mut burst = String::new();
    for i in 0..1000u32 {
        burst.push_str(
            &json!({"type": "control_request", "request_id": format!("b{i}"),
            "request": {"subtype": if i.is_multiple_of(2) { "mcp_status" } else { "no_such_thing" }}})
            .to_string(),
        );
        burst.push('\n');
    }
    d.send_raw(burst.trim_end());
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 1000 {
        let r = d.until(|v| v["type"] == "control_response");
        let id = r["response"]["request_id"].as_str().unwrap().to_string();
        let n: usize = id[1..].parse().unwrap();
        let want = if n.is_multiple_of(2) {
            "success"
        } else {
            "error"
        };
        assert_eq!(r["response"]["subtype"], want, "{r}");
        assert!(seen.insert(id), "answered twice: {r}");
    }
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_20_mb_answer_to_an_mcp_message_reaches_the_tool_result() {
    let s = project();
    let mock =
        s.mock(json!([{"tool_use": [{"name": "mcp__big__blob", "input": {}}]}, say("done")]));
    let config = json!({"mcpServers": {"big": {"type": "sdk", "name": "big"}}}).to_string();
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__big__blob",
        ],
    );
    d.send(&json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}}));
    let blob = "x".repeat(20 * 1024 * 1024);
    let mut answered_call = false;
    loop {
        let v = d.until(|v| {
            is_request(v, "mcp_message")
                || (v["type"] == "control_response" && v["response"]["request_id"] == "init")
        });
        if v["type"] == "control_response" {
            d.user("go");
            continue;
        }
        assert_eq!(v["request"]["server_name"], "big");
        let msg = &v["request"]["message"];
        let id = msg["id"].clone();
        let reply = match msg["method"].as_str().unwrap() {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "big", "version": "1"}}}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "blob", "description": "a big answer", "inputSchema": {"type": "object"}}]}}),
            "tools/call" => {
                answered_call = true;
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": blob}]}})
            }
            _ => json!({"jsonrpc": "2.0", "result": {}}),
        };
        d.answer(&v["request_id"], json!({"mcp_response": reply}));
        if answered_call {
            break;
        }
    }
    let result =
        d.until(|v| v["type"] == "user" && v["message"]["content"][0]["type"] == "tool_result");
    let text = result["message"]["content"][0]["content"].to_string();
    assert!(text.contains("xxxxxxxx"), "{text:.300}");
    let done = d.until(|v| v["type"] == "result");
    assert_eq!(done["subtype"], "success");
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_matcher_on_an_event_with_nothing_to_match_is_ignored_with_a_word_and_the_callback_runs() {
    let s = project();
    let mut d = Driven::start(&s, &[]);
    d.initialize(json!({"hooks": {
        "Stop": [{"matcher": "Bash", "hookCallbackIds": ["stop_cb"]}],
        "NoSuchEvent": [{"hookCallbackIds": ["x"]}]}}));
    d.user("hello");
    let stop = d.until(|v| is_request(v, "hook_callback"));
    assert_eq!(stop["request"]["callback_id"], "stop_cb");
    assert_eq!(stop["request"]["input"]["hook_event_name"], "Stop");
    d.answer(&stop["request_id"], json!({}));
    d.until(|v| v["type"] == "result");
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("initialize: Stop has nothing to match, so matcher \"Bash\" is ignored (the callback always runs)"),
        "{err}"
    );
    assert!(
        err.contains("initialize: hooks for unknown event \"NoSuchEvent\" are not registered"),
        "{err}"
    );
}
