//! End-to-end: the built `rein` binary, `--mock-script` files or a loopback OpenAI-compatible
//! server, real `/bin/sh` hook scripts, `HOME`/`REIN_HOME` in temp dirs.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::ops::Deref;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, redact_json, rein_bin, say};

// ---------- harness ----------

/// A [`Sandbox`] with `<project>/.claude/` and `<project>/hooks/`.
struct Env(Sandbox);

impl Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.0
    }
}

fn env() -> Env {
    Env(Sandbox::new("proj", &["proj/.claude", "proj/hooks"]))
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Env {
    /// A hook that appends its stdin (one JSON line) to `<project>/<log>`.
    fn dump(&self, log: &str) -> String {
        self.script(
            &format!("dump-{log}.sh"),
            &format!("cat >> '{}'", self.project.join(log).display()),
        )
    }

    fn cmd(&self) -> Command {
        let mut c = self.rein();
        // The suite may run as root, where bypassPermissions needs a declared sandbox.
        c.env("IS_SANDBOX", "1");
        c
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_cmd(self.cmd().args(args))
    }

    fn run_cmd(&self, c: &mut Command) -> Out {
        let out = c.output().unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `rein -p PROMPT --mock-script <steps> --allowedTools Bash` plus extra args (Bash is
    /// allowed by rule so hooks, not the default mode's headless denial, decide).
    fn run_mock(&self, steps: Value, extra: &[&str]) -> Out {
        let script = self.mock(steps);
        let mut args = vec!["-p", "go", "--allowedTools", "Bash", "--mock-script"];
        let script = script.display().to_string();
        args.push(&script);
        args.extend_from_slice(extra);
        self.run(&args)
    }

    fn transcript(&self) -> Vec<Value> {
        let files = self.transcript_files();
        assert_eq!(files.len(), 1, "transcripts: {files:?}");
        std::fs::read_to_string(&files[0])
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}")))
            .collect()
    }

    /// JSON lines a dump hook wrote.
    fn log(&self, name: &str) -> Vec<Value> {
        match std::fs::read_to_string(self.project.join(name)) {
            Ok(t) => t
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn hook(command: &str) -> Value {
    json!({"type": "command", "command": command})
}

fn on(matcher: &str, command: &str) -> Value {
    json!([{"matcher": matcher, "hooks": [hook(command)]}])
}

fn tool_results(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "user" && l["message"]["content"][0]["type"] == "tool_result")
        .map(|l| l["message"]["content"][0].clone())
        .collect()
}

fn assistants(lines: &[Value]) -> usize {
    lines.iter().filter(|l| l["type"] == "assistant").count()
}

// ---------- a loopback OpenAI-compatible server that records request bodies ----------

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    /// Serves `replies` (Chat Completions `message` objects) in order, then `"done"` texts.
    fn start(replies: Vec<Value>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let head_end = loop {
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => break 0,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                if head_end == 0 {
                    continue;
                }
                let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                recorded.lock().unwrap().push(body);
                let message = queue
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or_else(|| json!({"role": "assistant", "content": "done"}));
                let finish = if message.get("tool_calls").is_some() {
                    "tool_calls"
                } else {
                    "stop"
                };
                let reply = json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "loop-model",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}]
                })
                .to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                    reply.len(),
                    reply
                );
            }
        });
        Server { url, requests }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn oa_bash(id: &str, command: &str) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": id, "type": "function",
        "function": {"name": "Bash", "arguments": json!({"command": command}).to_string()}
    }]})
}

impl Env {
    fn run_server(&self, server: &Server, extra: &[&str]) -> Out {
        let mut c = self.cmd();
        c.env("OPENAI_BASE_URL", &server.url)
            .env("OPENAI_API_KEY", "test-key")
            .env("REIN_MAX_RETRIES", "0")
            .args(["-p", "go", "--provider", "openai", "--model", "loop-model"])
            .args(["--allowedTools", "Bash"])
            .args(extra);
        self.run_cmd(&mut c)
    }
}

/// All strings anywhere inside a request body, joined (where a text landed does not matter to
/// these checks; that it reached the model does).
fn request_text(body: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    let mut out = String::new();
    walk(&body["messages"], &mut out);
    out
}

// ---------- pipeline ----------

#[test]
fn blocked_call_never_executes_and_the_next_request_carries_the_hook_text() {
    let e = env();
    let deny = e.script("deny.sh", "echo 'blocked by policy: no writes' >&2\nexit 2");
    let denied = e.dump("denied.log");
    e.hooks(json!({
        "PreToolUse": on("Bash", &deny),
        "PermissionDenied": on("Bash", &denied),
    }));
    let out = e.run_mock(json!([bash("touch executed.flag"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("executed.flag"), "the blocked call ran");
    let expected = format!("PreToolUse:Bash hook error: [{deny}]: blocked by policy: no writes\n");
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["content"], expected.as_str());
    assert_eq!(results[0]["is_error"], true);
    let d = e.log("denied.log");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["hook_event_name"], "PermissionDenied");
    assert_eq!(d[0]["reason"], expected.as_str());
    assert_eq!(d[0]["tool_input"]["command"], "touch executed.flag");
    assert!(
        out.stderr.contains("Bash(touch executed.flag)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("blocked: PreToolUse:Bash hook error"),
        "{}",
        out.stderr
    );
}

#[test]
fn blocked_call_text_reaches_the_real_provider_request() {
    let e = env();
    let deny = e.script("deny.sh", "echo 'no writes here' >&2\nexit 2");
    e.hooks(json!({"PreToolUse": on("Bash", &deny)}));
    let server = Server::start(vec![oa_bash("call_1", "touch executed.flag")]);
    let out = e.run_server(&server, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("executed.flag"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let second = request_text(&reqs[1]);
    assert!(
        second.contains(&format!(
            "PreToolUse:Bash hook error: [{deny}]: no writes here"
        )),
        "{second}"
    );
}

#[test]
fn updated_input_is_what_runs_and_what_post_tool_use_sees() {
    let e = env();
    let rewrite = e.script(
        "rewrite.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten > rewritten.txt","description":"rewritten by hook"}}}'"#,
    );
    let post = e.dump("post.log");
    e.hooks(json!({"PreToolUse": on("Bash", &rewrite), "PostToolUse": on("Bash", &post)}));
    let out = e.run_mock(json!([bash("touch original.flag"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("original.flag"));
    assert!(e.exists("rewritten.txt"));
    let p = e.log("post.log");
    assert_eq!(p.len(), 1);
    assert_eq!(
        p[0]["tool_input"],
        json!({"command": "echo rewritten > rewritten.txt", "description": "rewritten by hook"})
    );
}

#[test]
fn updated_tool_output_replaces_what_the_model_sees() {
    let e = env();
    let replace = e.script(
        "replace.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"REPLACED-OUTPUT","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}}}'"#,
    );
    e.hooks(json!({"PostToolUse": on("Bash", &replace)}));
    let out = e.run_mock(json!([bash("echo real-output"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = e.transcript();
    let results = tool_results(&lines);
    let content = results[0]["content"].as_str().unwrap();
    assert!(content.contains("REPLACED-OUTPUT"), "{content}");
    assert!(!content.contains("real-output"), "{content}");
    // The structured result keeps the real output.
    let tr = lines
        .iter()
        .find(|l| l.get("toolUseResult").is_some())
        .unwrap();
    assert_eq!(tr["toolUseResult"]["stdout"], "real-output");
}

#[test]
fn bare_string_updated_tool_output_falls_back_to_the_real_output() {
    let e = env();
    let replace = e.script(
        "replace.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"just a string"}}'"#,
    );
    e.hooks(json!({"PostToolUse": on("Bash", &replace)}));
    let out = e.run_mock(json!([bash("echo real-output"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&e.transcript());
    assert_eq!(results[0]["content"], "real-output");
}

#[test]
fn additional_context_and_post_tool_use_feedback_arrive_as_system_reminders() {
    let e = env();
    let ctx = e.script(
        "ctx.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"POST-ADDITIONAL-CONTEXT"}}'"#,
    );
    let fb = e.script("fb.sh", "echo 'POST-EXIT2-STDERR' >&2\nexit 2");
    e.hooks(json!({"PostToolUse": [{"matcher": "Bash", "hooks": [hook(&ctx), hook(&fb)]}]}));
    let server = Server::start(vec![oa_bash("call_1", "echo hi")]);
    let out = e.run_server(&server, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let second = request_text(&reqs[1]);
    assert!(
        second.contains(
            "<system-reminder>\nPostToolUse:Bash hook additional context: POST-ADDITIONAL-CONTEXT\n</system-reminder>"
        ),
        "{second}"
    );
    assert!(
        second.contains(&format!(
            "PostToolUse:Bash hook blocking error from command: \"{fb}\": [{fb}]: POST-EXIT2-STDERR"
        )),
        "{second}"
    );
    // The tool result itself is untouched.
    assert!(second.contains("hi\n"), "{second}");
}

#[test]
fn session_start_stdout_is_context_for_the_first_request() {
    let e = env();
    let start = e.script("start.sh", "echo 'the secret word is banana'");
    e.hooks(json!({"SessionStart": on("startup", &start)}));
    let server = Server::start(vec![]);
    let out = e.run_server(&server, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = request_text(&server.requests()[0]);
    assert!(
        first.contains(
            "<system-reminder>\nSessionStart:startup hook success: the secret word is banana"
        ),
        "{first}"
    );
    assert!(first.contains("go"), "{first}");
}

#[test]
fn pre_tool_use_continue_false_runs_the_tool_then_stops_the_loop() {
    let e = env();
    let stop = e.script(
        "stop.sh",
        r#"echo '{"continue":false,"stopReason":"STOPPED-BY-HOOK"}'"#,
    );
    e.hooks(json!({"PreToolUse": on("Bash", &stop)}));
    let out = e.run_mock(json!([bash("touch ran.flag"), say("never")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        e.exists("ran.flag"),
        "continue:false must not block the call"
    );
    assert_eq!(assistants(&e.transcript()), 1);
    assert!(!out.stdout.contains("never"));
    assert!(out.stderr.contains("STOPPED-BY-HOOK"), "{}", out.stderr);
}

#[test]
fn system_message_goes_to_stderr_in_json_mode() {
    let e = env();
    let sm = e.script("sm.sh", r#"echo '{"systemMessage":"HELLO-JSON"}'"#);
    e.hooks(json!({"PreToolUse": on("Bash", &sm)}));
    let out = e.run_mock(
        json!([bash("true"), say("ok")]),
        &["--output-format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("HELLO-JSON"), "{}", out.stderr);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(v["result"], "ok");
}

#[test]
fn system_message_is_shown_on_stderr() {
    let e = env();
    let sm = e.script("sm.sh", r#"echo '{"systemMessage":"HELLO-USER"}'"#);
    e.hooks(json!({"PreToolUse": on("Bash", &sm)}));
    let out = e.run_mock(json!([bash("true"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("HELLO-USER"), "{}", out.stderr);
    assert!(!out.stdout.contains("HELLO-USER"));
    assert_eq!(out.stdout, "ok\n");
}

#[test]
fn ask_goes_to_permission_request_whose_allow_runs_the_rewrite() {
    let e = env();
    let ask = e.script(
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"please confirm"}}'"#,
    );
    let pr_log = e.project.join("pr.log");
    let allow = e.script(
        "allow.sh",
        &format!(
            r#"cat >> '{}'
echo '{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"allow","updatedInput":{{"command":"touch approved.flag"}}}}}}}}'"#,
            pr_log.display()
        ),
    );
    e.hooks(json!({"PreToolUse": on("Bash", &ask), "PermissionRequest": on("Bash", &allow)}));
    let out = e.run_mock(json!([bash("touch asked.flag"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(e.exists("approved.flag"));
    assert!(!e.exists("asked.flag"));
    let pr = e.log("pr.log");
    assert_eq!(pr.len(), 1);
    assert!(pr[0].get("tool_use_id").is_none(), "{}", pr[0]);
    assert_eq!(pr[0]["tool_input"]["command"], "touch asked.flag");
}

#[test]
fn headless_ask_without_a_hook_answer_is_denied_with_the_reason() {
    let e = env();
    let ask = e.script(
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"ASK-REASON"}}'"#,
    );
    let denied = e.dump("denied.log");
    e.hooks(json!({"PreToolUse": on("Bash", &ask), "PermissionDenied": on("*", &denied)}));
    let out = e.run_mock(
        json!([bash("touch asked.flag"), say("ok")]),
        &["--dangerously-skip-permissions", "--output-format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("asked.flag"));
    let results = tool_results(&e.transcript());
    assert_eq!(results[0]["content"], "ASK-REASON");
    assert_eq!(e.log("denied.log")[0]["reason"], "ASK-REASON");
    let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
}

#[test]
fn permission_request_deny_message_is_the_result() {
    let e = env();
    let ask = e.script(
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'"#,
    );
    let deny = e.script(
        "prdeny.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"PR-DENIED"}}}'"#,
    );
    e.hooks(json!({"PreToolUse": on("Bash", &ask), "PermissionRequest": on("Bash", &deny)}));
    let out = e.run_mock(json!([bash("touch asked.flag"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("asked.flag"));
    assert_eq!(tool_results(&e.transcript())[0]["content"], "PR-DENIED");
}

#[test]
fn unknown_tool_and_invalid_input_fire_no_hooks() {
    let e = env();
    let pre = e.dump("pre.log");
    e.hooks(json!({"PreToolUse": on("*", &pre)}));
    let out = e.run_mock(
        json!([
            {"tool_use": [{"name": "Nope", "input": {}}, {"name": "Bash", "input": {"nocommand": 1}}]},
            say("ok")
        ]),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(e.log("pre.log").is_empty());
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0]["content"],
        "<tool_use_error>Error: No such tool available: Nope</tool_use_error>"
    );
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[1]["is_error"], true);
}

#[test]
fn calls_run_in_order_and_post_tool_batch_gets_model_facing_content() {
    let e = env();
    let log = e.dump("events.log");
    let all = json!([{"matcher": "*", "hooks": [hook(&log)]}]);
    let any = json!([{"hooks": [hook(&log)]}]);
    e.hooks(json!({
        "PreToolUse": all, "PostToolUse": all, "PostToolUseFailure": all, "PostToolBatch": any
    }));
    let out = e.run_mock(
        json!([
            {"tool_use": [
                {"name": "Bash", "input": {"command": "echo one"}},
                {"name": "Bash", "input": {"command": "echo two; exit 3"}}
            ]},
            say("ok")
        ]),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let events = e.log("events.log");
    let seq: Vec<String> = events
        .iter()
        .map(|v| {
            format!(
                "{} {}",
                v["hook_event_name"].as_str().unwrap(),
                v["tool_input"]["command"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        seq,
        vec![
            "PreToolUse echo one",
            "PostToolUse echo one",
            "PreToolUse echo two; exit 3",
            "PostToolUseFailure echo two; exit 3",
            "PostToolBatch ",
        ]
    );
    assert!(events[1]["duration_ms"].is_u64());
    assert_eq!(events[1]["tool_response"]["stdout"], "one");
    assert!(
        events[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("Exit code 3"),
        "{}",
        events[3]
    );
    assert_eq!(events[3]["is_interrupt"], false);
    let calls = events[4]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["tool_response"], "one");
    assert!(calls[1]["tool_response"].is_string());
}

#[test]
fn claude_env_file_exports_reach_later_bash_calls() {
    let e = env();
    let start = e.script(
        "env.sh",
        r#"echo 'export REIN_E2E_VAR=from-env-file' >> "$CLAUDE_ENV_FILE""#,
    );
    e.hooks(json!({"SessionStart": on("startup", &start)}));
    let out = e.run_mock(
        json!([bash("echo \"var=$REIN_E2E_VAR\" > var.txt"), say("ok")]),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got = std::fs::read_to_string(e.project.join("var.txt")).unwrap();
    assert_eq!(got.trim(), "var=from-env-file");
}

#[test]
fn default_mode_headless_denies_an_unapproved_bash_call() {
    let e = env();
    let denied = e.dump("denied.log");
    let note = e.dump("note.log");
    e.hooks(json!({"PermissionDenied": on("Bash", &denied), "Notification": on("*", &note)}));
    let script = e.mock(json!([bash("touch executed.flag"), say("ok")]));
    let out = e.run_cmd(e.cmd().args(["-p", "go", "--mock-script"]).arg(&script));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("executed.flag"));
    let results = tool_results(&e.transcript());
    let content = results[0]["content"].as_str().unwrap();
    assert!(
        content.contains("Permission to use Bash was not granted"),
        "{content}"
    );
    assert_eq!(e.log("denied.log")[0]["reason"], content);
    assert!(
        e.log("note.log").is_empty(),
        "no Notification for a headless denial"
    );
}

#[test]
fn deny_rule_beats_a_hook_allow() {
    let e = env();
    let allow = e.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#,
    );
    e.hooks(json!({"PreToolUse": on("Bash", &allow)}));
    let out = e.run_mock(
        json!([bash("touch executed.flag"), say("ok")]),
        &["--disallowedTools", "Bash(touch *)"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("executed.flag"));
    assert_eq!(tool_results(&e.transcript())[0]["is_error"], true);
}

#[test]
fn permission_request_allow_rewrite_is_rechecked_against_deny_rules() {
    let e = env();
    let ask = e.script(
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'"#,
    );
    let allow = e.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"rm -f keep.txt"}}}}'"#,
    );
    std::fs::write(e.project.join("keep.txt"), "keep").unwrap();
    e.hooks(json!({"PreToolUse": on("Bash", &ask), "PermissionRequest": on("Bash", &allow)}));
    let out = e.run_mock(
        json!([bash("echo harmless"), say("ok")]),
        &["--disallowedTools", "Bash(rm *)"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        e.exists("keep.txt"),
        "a PermissionRequest rewrite bypassed a deny rule"
    );
}

// ---------- session ----------

#[test]
fn base_fields_follow_the_golden_samples() {
    let e = env();
    let log = e.dump("all.log");
    let any = json!([{"hooks": [hook(&log)]}]);
    e.hooks(json!({
        "SessionStart": any, "UserPromptSubmit": any, "PreToolUse": any, "Stop": any,
        "SessionEnd": any
    }));
    let out = e.run_mock(
        json!([bash("echo hi > out.txt"), say("first answer")]),
        &["--dangerously-skip-permissions"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = std::fs::read_to_string(e.project.join("all.log")).unwrap();
    let session = e.transcript()[0]["sessionId"].as_str().unwrap().to_string();
    let prompt_id = e.log("all.log")[1]["prompt_id"]
        .as_str()
        .unwrap()
        .to_string();
    let slug: String = e
        .project
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let normalised = lines
        .replace(&session, "<SESSION>")
        .replace(&prompt_id, "<UUID_1>")
        .replace(&slug, "<PROJECT_SLUG>")
        .replace(&e.project.display().to_string(), "<PROJECT>")
        .replace(&e.home.display().to_string(), "<HOME>")
        .replace("toolu_mock_1_0", "<TOOL_USE_ID_0_0>");
    let got: Vec<&str> = normalised.lines().collect();
    let golden = |name: &str| {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/golden/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
        .trim_end()
        .replace("/.claude/projects/", "/.rein/projects/")
        .replace(r#""effort":{"level":"medium"},"#, "")
    };
    assert_eq!(got.len(), 5, "{normalised}");
    assert_eq!(got[0], golden("stdin-SessionStart.json"));
    let ups = golden("stdin-UserPromptSubmit.json").replace("what is the secret word?", "go");
    assert_eq!(got[1], ups);
    let pre = golden("stdin-PreToolUse-Bash.json").replace(r#","description":"write out.txt""#, "");
    assert_eq!(got[2], pre);
    assert_eq!(got[3], golden("stdin-Stop.json"));
    assert_eq!(got[4], golden("stdin-SessionEnd.json"));
}

#[test]
fn user_prompt_submit_block_skips_the_model() {
    let e = env();
    let block = e.script("ups.sh", "echo 'no secrets please' >&2\nexit 2");
    let stop = e.dump("stop.log");
    e.hooks(json!({"UserPromptSubmit": on("", &block), "Stop": on("", &stop)}));
    let out = e.run_mock(json!([say("should not be said")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "UserPromptSubmit operation blocked by hook:\n[{block}]: no secrets please\n\n\nOriginal prompt: go\n"
        )
    );
    let lines = e.transcript();
    assert_eq!(assistants(&lines), 0);
    assert!(e.log("stop.log").is_empty());
}

#[test]
fn stop_block_continues_with_stop_hook_active_true() {
    let e = env();
    let flag = e.project.join("stopped-once");
    let stop = e.script(
        "stop.sh",
        &format!(
            "cat >> '{log}'\nif [ ! -e '{flag}' ]; then touch '{flag}'; echo 'STOP-EXIT2-STDERR: keep going' >&2; exit 2; fi",
            log = e.project.join("stop.log").display(),
            flag = flag.display()
        ),
    );
    e.hooks(json!({"Stop": on("", &stop)}));
    let out = e.run_mock(json!([say("first answer"), say("finished")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "finished\n");
    let stops = e.log("stop.log");
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[0]["last_assistant_message"], "first answer");
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[1]["last_assistant_message"], "finished");
    let lines = e.transcript();
    let feedback = lines
        .iter()
        .find(|l| {
            l["type"] == "user"
                && l["message"]["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("Stop hook feedback:"))
        })
        .expect("feedback line");
    assert_eq!(
        feedback["message"]["content"][0]["text"],
        format!("Stop hook feedback:\n[{stop}]: STOP-EXIT2-STDERR: keep going\n")
    );
}

#[test]
fn stop_blocks_are_capped_at_eight_by_default() {
    let e = env();
    let stop = e.script(
        "stop.sh",
        &format!(
            "cat >> '{}'\necho again >&2\nexit 2",
            e.project.join("stop.log").display()
        ),
    );
    e.hooks(json!({"Stop": on("", &stop)}));
    let out = e.run_mock(json!([]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stops = e.log("stop.log");
    assert_eq!(
        stops.len(),
        9,
        "8 honoured blocks, then the 9th ends the turn"
    );
    assert_eq!(assistants(&e.transcript()), 9);
    assert!(stops[1..].iter().all(|s| s["stop_hook_active"] == true));
    assert!(out.stderr.contains("8 times"), "{}", out.stderr);
}

#[test]
fn stop_block_cap_follows_the_env_var() {
    let e = env();
    let stop = e.script(
        "stop.sh",
        &format!(
            "cat >> '{}'\necho again >&2\nexit 2",
            e.project.join("stop.log").display()
        ),
    );
    e.hooks(json!({"Stop": on("", &stop)}));
    let script = e.mock(json!([]));
    let out = e.run_cmd(
        e.cmd()
            .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
            .args(["-p", "go", "--mock-script"])
            .arg(&script),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(e.log("stop.log").len(), 3);
}

#[test]
fn model_error_fires_stop_failure_and_exits_1() {
    let e = env();
    let sf = e.dump("sf.log");
    let stop = e.dump("stop.log");
    e.hooks(json!({"StopFailure": on("", &sf), "Stop": on("", &stop)}));
    let out = e.run_mock(
        json!([{"error": "rate_limit", "message": "slow down"}]),
        &[],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("slow down"), "{}", out.stderr);
    let sf = e.log("sf.log");
    assert_eq!(sf.len(), 1);
    assert_eq!(sf[0]["error"], "rate_limit");
    assert!(e.log("stop.log").is_empty());
}

#[test]
fn max_turns_stops_after_n_requests_and_exits_1() {
    let e = env();
    let out = e.run_mock(
        json!([bash("echo 1"), bash("echo 2"), bash("echo 3"), say("done")]),
        &["--max-turns", "2", "--output-format", "json"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    // Claude Code counts the turn the cap cut off (fixture tests/fixtures/cc-2.1.328/max_turns:
    // `--max-turns 1`, one request, `num_turns: 2`), and reports no result.
    assert_eq!(result["num_turns"], 3);
    assert_eq!(result["result"], Value::Null);
    assert_eq!(assistants(&e.transcript()), 2);
    assert!(out.stderr.contains("max turns (2)"), "{}", out.stderr);
}

#[test]
fn session_end_runs_on_normal_exit_with_reason_other() {
    let e = env();
    let end = e.dump("end.log");
    e.hooks(json!({"SessionEnd": on("", &end)}));
    let out = e.run_mock(json!([say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ends = e.log("end.log");
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["reason"], "other");
    assert!(ends[0].get("prompt_id").is_some());
    assert!(ends[0].get("permission_mode").is_none());
}

fn signal_mid_tool_call(signal: i32, expected_code: i32) {
    let e = env();
    let end = e.dump("end.log");
    e.hooks(json!({"SessionEnd": on("", &end)}));
    let script = e.mock(json!([bash("touch started.flag; sleep 30"), say("never")]));
    let mut child = e
        .cmd()
        .args(["-p", "go", "--allowedTools", "Bash", "--mock-script"])
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !e.exists("started.flag") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "tool never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let waited = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "rein did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(expected_code), "{stderr}");
    let ends = e.log("end.log");
    assert_eq!(ends.len(), 1, "{stderr}");
    assert_eq!(ends[0]["reason"], "other");
    let lines = e.transcript();
    assert!(lines.last().is_some());
}

#[test]
fn sigint_mid_tool_call_runs_session_end_and_exits_130() {
    signal_mid_tool_call(libc::SIGINT, 130);
}

#[test]
fn sigterm_mid_tool_call_runs_session_end_and_exits_143() {
    signal_mid_tool_call(libc::SIGTERM, 143);
}

// ---------- transcript ----------

#[test]
fn transcript_line_shapes() {
    let e = env();
    e.script(
        "post.sh",
        r#"echo '{"systemMessage":"SM","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"CTX"}}'"#,
    );
    e.script("deny.sh", "echo nope >&2; exit 2");
    // Commands as written in settings: `$CLAUDE_PROJECT_DIR` stays unexpanded in the texts.
    e.hooks(json!({
        "SessionStart": on("startup", "echo started"),
        "PostToolUse": on("Bash", "$CLAUDE_PROJECT_DIR/hooks/post.sh"),
        "PreToolUse": on("Write", "$CLAUDE_PROJECT_DIR/hooks/deny.sh"),
    }));
    let out = e.run_mock(
        json!([
            bash("echo hi"),
            {"tool_use": [{"name": "Write", "input": {"file_path": "x.txt", "content": "x"}}]},
            say("all done")
        ]),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines = e.transcript();
    // Every line is linked to the previous one.
    for pair in lines.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    let ts = lines[0]["timestamp"].as_str().unwrap();
    let re = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$").unwrap();
    assert!(re.is_match(ts), "{ts}");
    for l in &mut lines {
        redact_json(l, &e.project);
    }
    insta::assert_json_snapshot!("transcript_line_shapes", lines);
}

// ---------- output formats and exit codes ----------

#[test]
fn json_output_is_one_result_object() {
    let e = env();
    let out = e.run_mock(
        json!([bash("echo hi"), say("all done")]),
        &["--output-format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(out.stdout.trim().lines().count(), 1);
    assert_eq!(v["type"], "result");
    assert_eq!(v["subtype"], "success");
    assert_eq!(v["is_error"], false);
    assert_eq!(v["result"], "all done");
    assert_eq!(v["num_turns"], 2);
    assert!(v["duration_ms"].is_u64());
    let session = e.transcript()[0]["sessionId"].clone();
    assert_eq!(v["session_id"], session);
}

#[test]
fn stream_json_output_is_one_line_per_message() {
    let e = env();
    let out = e.run_mock(
        json!([bash("echo hi"), say("all done")]),
        &["--output-format", "stream-json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{}{}",
                l["type"].as_str().unwrap(),
                l["subtype"]
                    .as_str()
                    .map(|s| format!(":{s}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "system:init",
            "assistant",
            "user",
            "assistant",
            "result:success"
        ]
    );
    // Agent and the eleven built-in tools (three of them deferred behind ToolSearch).
    assert_eq!(lines[0]["tools"].as_array().unwrap().len(), 12);
    assert_eq!(lines[0]["tools"][0], "Agent");
    assert_eq!(lines[2]["message"]["content"][0]["content"], "hi");
    assert_eq!(lines[4]["result"], "all done");
}

#[test]
fn text_output_is_the_final_answer_only() {
    let e = env();
    let out = e.run_mock(json!([bash("echo hi"), say("all done")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "all done\n");
    assert!(out.stderr.contains("Bash(echo hi)"), "{}", out.stderr);
}

#[test]
fn run_subcommand_works_like_print() {
    let e = env();
    let script = e.mock(json!([say("from run")]));
    let out = e.run_cmd(e.cmd().args(["run", "go", "--mock-script"]).arg(&script));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "from run\n");
}

#[test]
fn no_prompt_without_a_terminal_is_a_usage_error() {
    let e = env();
    let out = e.run(&[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no prompt"), "{}", out.stderr);
}

#[test]
fn bad_flags_are_usage_errors() {
    let e = env();
    assert_eq!(
        e.run(&["-p", "x", "--permission-mode", "sometimes"]).code,
        2
    );
    assert_eq!(e.run(&["-p", "x", "--output-format", "xml"]).code, 2);
    assert_eq!(e.run(&["-p", "x", "--provider", "nobody"]).code, 2);
    assert_eq!(e.run(&["--no-such-flag"]).code, 2);
}

#[test]
fn help_and_version_exit_0() {
    let e = env();
    let out = e.run(&["--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("--mock-script"));
    assert_eq!(e.run(&["--version"]).code, 0);
}

#[test]
fn prompt_from_stdin_with_print_flag() {
    let e = env();
    let script = e.mock(json!([say("stdin ok")]));
    let mut child = e
        .cmd()
        .args(["-p", "--mock-script"])
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"prompt via stdin\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "stdin ok\n");
    let lines = e.transcript();
    assert_eq!(lines[0]["message"]["content"], "prompt via stdin");
}

#[test]
fn closed_stdout_is_not_an_error() {
    let e = env();
    let script = e.mock(json!([say(&"x".repeat(200_000))]));
    let mut child = e
        .cmd()
        .args(["-p", "go", "--mock-script"])
        .arg(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn settings_diagnostics_are_printed_with_a_location() {
    let e = env();
    std::fs::write(
        e.project.join(".claude/settings.json"),
        "{\n  \"hooks\": {\n    \"PreToolUse\": [ oops ]\n  }\n}\n",
    )
    .unwrap();
    let out = e.run_mock(json!([say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let re = regex::Regex::new(r"settings\.json:3:\d+: error: ").unwrap();
    assert!(re.is_match(&out.stderr), "{}", out.stderr);
}

#[test]
fn transcript_is_readable_by_a_hook_mid_session() {
    let e = env();
    // The PostToolUse hook copies the transcript as it is at that moment.
    let copy = e.script(
        "copy.sh",
        &format!(
            "tp=$(sed -n 's/.*\"transcript_path\":\"\\([^\"]*\\)\".*/\\1/p'); cp \"$tp\" '{}'",
            e.project.join("mid.jsonl").display()
        ),
    );
    e.hooks(json!({"PostToolUse": on("Bash", &copy)}));
    let out = e.run_mock(json!([bash("echo hi"), say("ok")]), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mid = std::fs::read_to_string(e.project.join("mid.jsonl")).unwrap();
    let lines: Vec<Value> = mid
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.last().unwrap()["type"], "assistant");
    assert_eq!(
        lines.last().unwrap()["message"]["content"][0]["type"],
        "tool_use"
    );
}

// ---------- interactive ----------

/// Runs `rein ARGS` on a pseudo-terminal (util-linux `script`), typing `input` up front, and
/// returns everything the terminal showed. rein reads a line only when it wants one, so the
/// typed lines are consumed in order by the prompt and the permission dialogue.
fn run_on_tty(e: &Env, args: &str, input: &str) -> (i32, String) {
    let bin = rein_bin();
    let template = e.cmd();
    let mut c = Command::new("script");
    c.args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
        .current_dir(&e.project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let mut child = c
        .spawn()
        .expect("util-linux `script` is needed for tty tests");
    let mut stdin = child.stdin.take().unwrap();
    // One line at a time, each once rein can be waiting for it: the line editor reads what is
    // typed ahead into its own buffer, where a permission prompt (which reads the terminal
    // itself) would never see it, and a Ctrl+D typed before rein switches the terminal to raw
    // mode is eaten by the kernel's line discipline.
    for piece in input.split_inclusive(['\n', '\x04']) {
        std::thread::sleep(Duration::from_millis(700));
        stdin.write_all(piece.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "interactive rein hung"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let mut shown = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut shown)
        .unwrap();
    (status.code().unwrap_or(-1), shown)
}

#[test]
fn interactive_session_prompts_for_permission_and_ends_with_prompt_input_exit() {
    let e = env();
    let end = e.dump("end.log");
    let note = e.dump("note.log");
    e.hooks(json!({"SessionEnd": on("", &end), "Notification": on("permission_prompt", &note)}));
    let script = e.mock(json!([
        bash("touch approved.flag"),
        say("interactive answer")
    ]));
    // The project's hooks make rein ask about trusting the folder first: `o`, this run only.
    let (code, shown) = run_on_tty(
        &e,
        &format!("--mock-script {}", script.display()),
        "o\ngo\ny\n/exit\n",
    );
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("Trust this folder?"), "{shown}");
    assert!(e.exists("approved.flag"), "{shown}");
    assert!(shown.contains("rein wants to use Bash"), "{shown}");
    assert!(shown.contains("interactive answer"), "{shown}");
    let ends = e.log("end.log");
    assert_eq!(ends.len(), 1, "{shown}");
    assert_eq!(ends[0]["reason"], "prompt_input_exit");
    let notes = e.log("note.log");
    assert_eq!(notes.len(), 1, "{shown}");
    assert_eq!(notes[0]["notification_type"], "permission_prompt");
    assert_eq!(
        notes[0]["message"],
        "rein needs your permission to use Bash"
    );
    assert!(notes[0].get("permission_mode").is_none());
}

#[test]
fn interactive_permission_prompt_answered_no_refuses_the_call() {
    let e = env();
    let script = e.mock(json!([bash("touch refused.flag"), say("after refusal")]));
    let (code, shown) = run_on_tty(
        &e,
        &format!("--mock-script {}", script.display()),
        "go\nn\n/exit\n",
    );
    assert_eq!(code, 0, "{shown}");
    assert!(!e.exists("refused.flag"), "{shown}");
    let results = tool_results(&e.transcript());
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("doesn't want to proceed"),
        "{}",
        results[0]
    );
}

#[test]
fn interactive_eof_ends_the_session() {
    let e = env();
    let end = e.dump("end.log");
    e.hooks(json!({"SessionEnd": on("", &end)}));
    let script = e.mock(json!([say("one")]));
    // The project's hook makes rein ask about trusting the folder first: `o`, this run only.
    // Ctrl-D on an empty line is EOF for the terminal.
    let (code, shown) = run_on_tty(
        &e,
        &format!("--mock-script {}", script.display()),
        "o\ngo\n\x04",
    );
    assert_eq!(code, 0, "{shown}");
    assert_eq!(e.log("end.log")[0]["reason"], "prompt_input_exit");
}
