//! `type: "http"` hooks end to end (spec §5.6): the built `rein` binary with `--mock-script`,
//! a real loopback HTTP server ([`HttpServer`]) as the policy service, and real side effects
//! (a flag file the Bash call would create) as the proof of what was allowed.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, say};
use crate::http_server::{HttpServer, Reply};

fn sandbox() -> Sandbox {
    Sandbox::new("proj", &["proj/.claude", "proj/hooks"])
}

struct Out {
    code: i32,
    stderr: String,
}

fn cmd(sb: &Sandbox) -> Command {
    let mut c = sb.rein();
    c.env("IS_SANDBOX", "1");
    c
}

/// `rein -p go --mock-script <steps>` with `extra` args and `envs`.
fn run(sb: &Sandbox, steps: Value, extra: &[&str], envs: &[(&str, &str)]) -> Out {
    let script = sb.mock(steps);
    let mut c = cmd(sb);
    c.args(["-p", "go", "--mock-script"])
        .arg(&script)
        .args(extra);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn http_hook(url: &str) -> Value {
    json!({"type": "http", "url": url})
}

fn pre_tool_use(hook: Value) -> Value {
    json!({"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})
}

fn pre(decision: &str, extra: Value) -> Value {
    let mut hso = json!({"hookEventName": "PreToolUse", "permissionDecision": decision});
    if let (Some(o), Some(e)) = (hso.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    json!({ "hookSpecificOutput": hso })
}

fn transcript(sb: &Sandbox) -> Vec<Value> {
    let files = sb.transcript_files();
    assert_eq!(files.len(), 1, "transcripts: {files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn tool_results(sb: &Sandbox) -> Vec<Value> {
    transcript(sb)
        .iter()
        .filter(|l| l["type"] == "user" && l["message"]["content"][0]["type"] == "tool_result")
        .map(|l| l["message"]["content"][0].clone())
        .collect()
}

/// Every run-log line of the session (`<home>/.rein/logs/*.jsonl`).
fn run_log(sb: &Sandbox) -> Vec<Value> {
    let dir: PathBuf = sb.home.join(".rein/logs");
    let mut out = Vec::new();
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        for l in std::fs::read_to_string(f.path()).unwrap().lines() {
            out.push(serde_json::from_str(l).unwrap());
        }
    }
    out
}

#[test]
fn deny_from_the_service_blocks_the_call_and_the_service_gets_the_event_json() {
    let server = HttpServer::start(
        vec![(
            "/policy",
            Reply::json(pre(
                "deny",
                json!({"permissionDecisionReason": "central policy: no touching"}),
            )),
        )],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("touch executed.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sb.exists("executed.flag"), "a denied call ran");
    let results = tool_results(&sb);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("central policy: no touching"),
        "{}",
        results[0]
    );
    let reqs = server.recorded();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(body["tool_name"], "Bash");
    assert_eq!(body["tool_input"]["command"], "touch executed.flag");
    assert!(
        !reqs[0].body.ends_with(b"\n"),
        "the body is the JSON without a trailing newline"
    );
}

#[test]
fn allow_from_the_service_runs_a_call_no_rule_allows() {
    let server = HttpServer::start(
        vec![("/policy", Reply::json(pre("allow", json!({}))))],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    // No allow rule: headless default mode would refuse it; the hook's allow lets it run.
    let out = run(
        &sb,
        json!([bash("touch allowed.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sb.exists("allowed.flag"), "{}", out.stderr);
}

#[test]
fn ask_from_the_service_forces_a_prompt_which_headless_refuses() {
    let server = HttpServer::start(vec![("/policy", Reply::json(pre("ask", json!({}))))], false);
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("touch asked.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !sb.exists("asked.flag"),
        "an `ask` ran without anyone asked"
    );
}

#[test]
fn updated_input_from_the_service_is_what_runs() {
    let server = HttpServer::start(
        vec![(
            "/policy",
            Reply::json(pre(
                "allow",
                json!({"updatedInput": {"command": "touch rewritten.flag"}}),
            )),
        )],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("touch original.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sb.exists("rewritten.flag"));
    assert!(!sb.exists("original.flag"));
}

#[test]
fn headers_substitute_only_allowed_non_credential_variables() {
    let server = HttpServer::start(vec![("/policy", Reply::json(json!({})))], false);
    let sb = sandbox();
    let mut hook = http_hook(&server.url("/policy"));
    hook["headers"] = json!({
        "Authorization": "Bearer $POLICY_TOKEN",
        "X-Braced": "id=${POLICY_TOKEN};",
        "X-Credential": "${ANTHROPIC_API_KEY}",
        "X-Not-Allowed": "[$TEAM_SECRET]",
        "X-Injected": "a${NEWLINE_VAR}b",
    });
    hook["allowedEnvVars"] = json!(["POLICY_TOKEN", "ANTHROPIC_API_KEY", "NEWLINE_VAR"]);
    sb.hooks(pre_tool_use(hook));
    let envs = [
        ("POLICY_TOKEN", "tok-123"),
        ("ANTHROPIC_API_KEY", "sk-ant-victim"),
        ("TEAM_SECRET", "hunter2"),
        ("NEWLINE_VAR", "x\r\nEvil: 1"),
    ];
    let out = run(
        &sb,
        json!([bash("true"), say("ok")]),
        &["--allowedTools", "Bash"],
        &envs,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let reqs = server.recorded();
    assert_eq!(reqs.len(), 1);
    let h = &reqs[0].headers;
    assert_eq!(h["authorization"], "Bearer tok-123");
    assert_eq!(h["x-braced"], "id=tok-123;");
    assert_eq!(h["x-credential"], "", "a credential variable was sent");
    assert_eq!(h["x-not-allowed"], "[]");
    assert_eq!(h["x-injected"], "axEvil: 1b");
    assert!(!h.contains_key("evil"), "a header was injected: {h:?}");
    let all = format!("{reqs:?}");
    assert!(!all.contains("sk-ant-victim") && !all.contains("hunter2"));
}

#[test]
fn settings_http_hook_allowed_env_vars_narrows_each_hooks_list() {
    let server = HttpServer::start(vec![("/policy", Reply::json(json!({})))], false);
    let sb = sandbox();
    let mut hook = http_hook(&server.url("/policy"));
    hook["headers"] = json!({"A": "$POLICY_TOKEN", "B": "$OTHER_TOKEN"});
    hook["allowedEnvVars"] = json!(["POLICY_TOKEN", "OTHER_TOKEN"]);
    sb.settings(json!({
        "httpHookAllowedEnvVars": ["OTHER_TOKEN"],
        "hooks": pre_tool_use(hook),
    }));
    let out = run(
        &sb,
        json!([bash("true"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[("POLICY_TOKEN", "p"), ("OTHER_TOKEN", "o")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let reqs = server.recorded();
    assert_eq!(reqs[0].headers["a"], "");
    assert_eq!(reqs[0].headers["b"], "o");
}

#[test]
fn a_redirect_is_not_followed() {
    let server = HttpServer::start(
        vec![
            (
                "/policy",
                Reply::Status(
                    302,
                    vec![("Location".into(), "/followed".into())],
                    String::new(),
                ),
            ),
            ("/followed", Reply::json(pre("allow", json!({})))),
        ],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("touch redirected.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.hits("/followed"), 0, "the redirect was followed");
    assert!(
        !sb.exists("redirected.flag"),
        "the allow behind a redirect was used"
    );
    let log = run_log(&sb);
    let expected = format!("HTTP 302 from {}", server.url("/policy"));
    assert_eq!(log[0]["outcome"], "non_blocking", "{log:?}");
    assert_eq!(log[0]["error"], expected.as_str());
}

#[test]
fn a_500_is_a_non_blocking_error_never_an_allow() {
    let server = HttpServer::start(
        vec![("/policy", Reply::Status(500, Vec::new(), "boom".into()))],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    // No rule allows the call: the failed hook must not turn into an allow.
    let out = run(
        &sb,
        json!([bash("touch after500.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sb.exists("after500.flag"));
    let log = run_log(&sb);
    assert_eq!(log[0]["outcome"], "non_blocking");
    assert_eq!(log[0]["status"], "request_failed");
    let expected = format!("HTTP 500 from {}", server.url("/policy"));
    assert_eq!(log[0]["error"], expected.as_str());
    // With an allow rule, a non-blocking error lets the rule decide: the call runs.
    let out = run(
        &sb,
        json!([bash("touch ruled.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sb.exists("ruled.flag"));
}

#[test]
fn an_html_answer_is_an_error_with_claude_codes_text() {
    let server = HttpServer::start(
        vec![(
            "/policy",
            Reply::Status(
                200,
                vec![("Content-Type".into(), "text/html".into())],
                "<html><body>Login required</body></html>".into(),
            ),
        )],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(&sb, json!([bash("touch html.flag"), say("ok")]), &[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sb.exists("html.flag"));
    let log = run_log(&sb);
    assert_eq!(
        log[0]["error"],
        "HTTP hook must return JSON, but got non-JSON response body: \
         <html><body>Login required</body></html>"
    );
}

#[test]
fn an_empty_2xx_body_is_an_empty_answer() {
    let server = HttpServer::start(
        vec![("/policy", Reply::Status(204, Vec::new(), String::new()))],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("touch empty.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sb.exists("empty.flag"));
    assert_eq!(run_log(&sb)[0]["outcome"], "success");
}

#[test]
fn a_hang_past_the_timeout_is_cancelled_and_with_on_failure_block_it_blocks() {
    let server = HttpServer::start(
        vec![("/policy", Reply::Hang(Duration::from_secs(30)))],
        false,
    );
    let sb = sandbox();
    let mut hook = http_hook(&server.url("/policy"));
    hook["timeout"] = json!(1);
    sb.hooks(pre_tool_use(hook.clone()));
    let started = Instant::now();
    let out = run(
        &sb,
        json!([bash("touch hang.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the timeout was not applied"
    );
    assert!(sb.exists("hang.flag"), "a cancelled hook is non-blocking");
    assert_eq!(run_log(&sb)[0]["outcome"], "cancelled");

    let sb = sandbox();
    hook["onFailure"] = json!("block");
    sb.hooks(pre_tool_use(hook));
    let out = run(
        &sb,
        json!([bash("touch hang-block.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !sb.exists("hang-block.flag"),
        "onFailure: block did not block"
    );
    let results = tool_results(&sb);
    let expected = format!(
        "[{}]: timed out; blocking because onFailure is \"block\"",
        server.url("/policy")
    );
    assert!(
        results[0]["content"].as_str().unwrap().contains(&expected),
        "{}",
        results[0]
    );
}

#[test]
fn a_refused_connection_with_on_failure_block_fails_closed() {
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/policy");
    let sb = sandbox();
    let mut hook = http_hook(&url);
    hook["onFailure"] = json!("block");
    sb.hooks(pre_tool_use(hook));
    let out = run(
        &sb,
        json!([bash("touch refused.flag"), say("ok")]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !sb.exists("refused.flag"),
        "a down service let the call through"
    );
    let results = tool_results(&sb);
    let text = results[0]["content"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "[{url}]: failed; blocking because onFailure is \"block\""
        )),
        "{text}"
    );
}

#[test]
fn a_url_outside_allowed_http_hook_urls_is_never_asked() {
    let server = HttpServer::start(
        vec![("/policy", Reply::json(pre("allow", json!({}))))],
        false,
    );
    let sb = sandbox();
    sb.settings(json!({
        "allowedHttpHookUrls": ["https://policy.example.com/*"],
        "hooks": pre_tool_use(http_hook(&server.url("/policy"))),
    }));
    let out = run(
        &sb,
        json!([bash("touch blocked-url.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.recorded().len(), 0, "a refused URL was asked");
    assert!(!sb.exists("blocked-url.flag"));
    let expected = format!(
        "HTTP hook blocked: {} does not match any pattern in allowedHttpHookUrls",
        server.url("/policy")
    );
    assert_eq!(run_log(&sb)[0]["error"], expected.as_str());

    // The same URL under a matching pattern is asked.
    let sb = sandbox();
    sb.settings(json!({
        "allowedHttpHookUrls": [format!("{}/*", server.base)],
        "hooks": pre_tool_use(http_hook(&server.url("/policy"))),
    }));
    let out = run(
        &sb,
        json!([bash("touch allowed-url.flag"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sb.exists("allowed-url.flag"));
}

#[test]
fn one_connection_serves_every_call_of_a_session() {
    let server = HttpServer::start(
        vec![("/policy", Reply::json(pre("allow", json!({}))))],
        false,
    );
    let sb = sandbox();
    sb.hooks(pre_tool_use(http_hook(&server.url("/policy"))));
    let out = run(
        &sb,
        json!([bash("true"), bash("true"), bash("true"), say("ok")]),
        &[],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let reqs = server.recorded();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs.iter().all(|r| r.connection == reqs[0].connection),
        "connections: {:?}",
        reqs.iter().map(|r| r.connection).collect::<Vec<_>>()
    );
}
