//! MCP servers as tools, end to end: the built `rein` binary with `--mock-script`, real
//! servers from npm that nobody here wrote ([`crate::mcp_servers`]), real hook scripts, and
//! real side effects (a file the filesystem server would write) as the proof.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Sandbox, say};
use crate::mcp_servers::{everything, filesystem};

fn sandbox() -> Sandbox {
    Sandbox::new("proj", &["proj/.claude", "proj/hooks", "proj/data"])
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn call(name: &str, input: Value) -> Value {
    json!({"tool_use": [{"name": name, "input": input}]})
}

/// `rein -p go --mock-script <steps> <extra…>` with `envs`.
fn run(sb: &Sandbox, steps: Value, extra: &[&str], envs: &[(&str, &str)]) -> Out {
    let script = sb.mock(steps);
    let mut c = sb.rein();
    c.env("IS_SANDBOX", "1")
        .args(["-p", "go", "--mock-script"])
        .arg(&script)
        .args(extra);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `{"mcpServers": {"everything": …}}` as a `--mcp-config` JSON string.
fn everything_config() -> String {
    json!({"mcpServers": {"everything": {"command": everything(), "args": ["stdio"]}}}).to_string()
}

/// The filesystem server allowed into `<project>/data`.
fn filesystem_config(sb: &Sandbox) -> String {
    json!({"mcpServers": {"filesystem": {
        "command": filesystem(),
        "args": [sb.path("data").display().to_string()],
    }}})
    .to_string()
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

fn result_text(v: &Value) -> String {
    match &v["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A hook that appends its stdin (one line) to `<project>/<log>`.
fn dump(sb: &Sandbox, log: &str) -> String {
    sb.script(
        &format!("dump-{log}.sh"),
        &format!(
            "cat >> '{}'; echo >> '{}'",
            sb.path(log).display(),
            sb.path(log).display()
        ),
    )
}

fn log(sb: &Sandbox, name: &str) -> Vec<Value> {
    std::fs::read_to_string(sb.path(name))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn init_line(stdout: &str) -> Value {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["subtype"] == "init")
        .expect("an init line")
}

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only probes for the process.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn tools_are_listed_in_init_and_a_call_fires_hooks_with_claude_codes_stdin() {
    let sb = sandbox();
    let pre = dump(&sb, "pre.log");
    let post = dump(&sb, "post.log");
    let fail = dump(&sb, "fail.log");
    sb.hooks(json!({
        "PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": pre}]}],
        "PostToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": post}]}],
        "PostToolUseFailure": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": fail}]}],
    }));
    let out = run(
        &sb,
        json!([
            call("mcp__everything__echo", json!({"message": "hello mcp"})),
            call(
                "mcp__everything__get-structured-content",
                json!({"location": "Chicago"})
            ),
            call("mcp__everything__get-sum", json!({"a": "x"})),
            say("done"),
        ]),
        &[
            "--mcp-config",
            &everything_config(),
            "--allowedTools",
            "mcp__everything",
            "--output-format",
            "stream-json",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let init = init_line(&out.stdout);
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "everything", "status": "connected", "source": "dynamic"}])
    );
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"mcp__everything__echo"), "{tools:?}");
    assert!(tools.contains(&"mcp__everything__get-sum"), "{tools:?}");

    // Shapes and key order as Claude Code 2.1.328 sent them (tests/fixtures/mcp/).
    let pre = log(&sb, "pre.log");
    assert_eq!(pre.len(), 3);
    let keys: Vec<&str> = pre[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.last(), Some(&"mcp_server"));
    assert_eq!(keys[keys.len() - 2], "tool_use_id");
    assert_eq!(
        pre[0]["mcp_server"],
        json!({"name": "everything", "source": "dynamic"})
    );
    assert_eq!(pre[0]["tool_input"], json!({"message": "hello mcp"}));
    let post = log(&sb, "post.log");
    assert_eq!(post.len(), 2);
    assert_eq!(
        post[0]["tool_response"],
        json!([{"type": "text", "text": "Echo: hello mcp"}])
    );
    let structured: Value =
        serde_json::from_str(post[1]["tool_response"].as_str().unwrap()).unwrap();
    assert!(structured["temperature"].is_number(), "{structured}");
    let fail = log(&sb, "fail.log");
    assert_eq!(fail.len(), 1);
    assert!(
        fail[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("MCP error -32602: "),
        "{}",
        fail[0]
    );
    assert_eq!(fail[0]["mcp_server"]["name"], "everything");
    let results = tool_results(&sb);
    assert_eq!(result_text(&results[0]), "Echo: hello mcp");
    assert_eq!(results[2]["is_error"], true);
}

#[test]
fn a_pre_tool_use_matcher_regex_denies_an_mcp_write_and_nothing_is_written() {
    let sb = sandbox();
    let deny = sb.script("deny.sh", "echo 'no MCP writes' >&2\nexit 2");
    sb.hooks(json!({
        "PreToolUse": [{"matcher": "mcp__.*__write.*", "hooks": [{"type": "command", "command": deny}]}],
    }));
    let victim = sb.path("data/victim.txt");
    std::fs::write(&victim, "original").unwrap();
    let out = run(
        &sb,
        json!([
            call(
                "mcp__filesystem__write_file",
                json!({"path": victim.display().to_string(), "content": "overwritten"})
            ),
            call(
                "mcp__filesystem__read_text_file",
                json!({"path": victim.display().to_string()})
            ),
            say("done"),
        ]),
        &[
            "--mcp-config",
            &filesystem_config(&sb),
            "--allowedTools",
            "mcp__filesystem",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
    let results = tool_results(&sb);
    assert!(
        result_text(&results[0]).contains("no MCP writes"),
        "{}",
        results[0]
    );
    // The read is not matched by the regex and runs.
    assert_eq!(results[1]["is_error"], Value::Null, "{}", results[1]);
    assert!(
        result_text(&results[1]).contains("original"),
        "{}",
        results[1]
    );
}

#[test]
fn permission_rules_on_mcp_tools_apply() {
    let sb = sandbox();
    let victim = sb.path("data/victim.txt");
    std::fs::write(&victim, "original").unwrap();
    // User settings: a repository's own allow rules wait for folder trust.
    crate::harness::write(
        &sb.home.join(".claude/settings.json"),
        &json!({"permissions": {
            "allow": ["mcp__filesystem"],
            "deny": ["mcp__filesystem__write_file"],
        }})
        .to_string(),
    );
    let out = run(
        &sb,
        json!([
            call(
                "mcp__filesystem__write_file",
                json!({"path": victim.display().to_string(), "content": "overwritten"})
            ),
            call("mcp__filesystem__list_allowed_directories", json!({})),
            say("done"),
        ]),
        &["--mcp-config", &filesystem_config(&sb)],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
    let results = tool_results(&sb);
    assert_eq!(results[0]["is_error"], true);
    // The whole-server allow rule lets the other tool run in the default mode.
    assert!(
        result_text(&results[1]).contains(&sb.path("data").display().to_string()),
        "{}",
        results[1]
    );

    // `mcp__filesystem__*` denies every tool of the server.
    let sb = sandbox();
    sb.settings(json!({"permissions": {"deny": ["mcp__filesystem__*"]}}));
    let out = run(
        &sb,
        json!([
            call("mcp__filesystem__list_allowed_directories", json!({})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &filesystem_config(&sb),
            "--permission-mode",
            "bypassPermissions",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&sb);
    assert_eq!(results[0]["is_error"], true, "{}", results[0]);
}

#[test]
fn post_tool_use_updated_tool_output_replaces_an_mcp_result() {
    let sb = sandbox();
    let rewrite = sb.script(
        "rewrite.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":[{"type":"text","text":"redacted by policy"}]}}'"#,
    );
    sb.hooks(json!({
        "PostToolUse": [{"matcher": "mcp__everything__echo", "hooks": [{"type": "command", "command": rewrite}]}],
    }));
    let out = run(
        &sb,
        json!([
            call("mcp__everything__echo", json!({"message": "secret"})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &everything_config(),
            "--allowedTools",
            "mcp__everything",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&sb);
    assert_eq!(result_text(&results[0]), "redacted by policy");
}

/// A wrapper that records the real server's pid, then becomes it.
fn recording_wrapper(sb: &Sandbox, name: &str, pidfile: &Path) -> String {
    sb.script(
        name,
        &format!(
            "echo $$ > '{}'\nexec '{}' stdio",
            pidfile.display(),
            everything()
        ),
    )
}

#[test]
fn a_server_that_crashes_mid_call_costs_only_that_call_and_its_tools_go_away() {
    let sb = sandbox();
    let pidfile = sb.path("server.pid");
    let wrapper = recording_wrapper(&sb, "everything.sh", &pidfile);
    // The PreToolUse hook arranges the crash: one second into the call, SIGKILL the server.
    let killer = sb.script(
        "killer.sh",
        &format!(
            "cat > /dev/null\nsetsid sh -c 'sleep 1; kill -9 $(cat {})' < /dev/null > /dev/null 2>&1 &\nexit 0",
            pidfile.display()
        ),
    );
    sb.hooks(json!({
        "PreToolUse": [{"matcher": "mcp__everything__trigger-long-running-operation",
                        "hooks": [{"type": "command", "command": killer}]}],
    }));
    let config = json!({"mcpServers": {"everything": {"command": wrapper}}}).to_string();
    let started = Instant::now();
    let out = run(
        &sb,
        json!([
            call(
                "mcp__everything__trigger-long-running-operation",
                json!({"duration": 20, "steps": 4})
            ),
            call(
                "mcp__everything__echo",
                json!({"message": "after the crash"})
            ),
            call("Bash", json!({"command": "echo session goes on"})),
            say("done"),
        ]),
        &[
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__everything",
            "Bash",
            "--output-format",
            "stream-json",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the crashed call waited for its end"
    );
    let results = tool_results(&sb);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        result_text(&results[0]).contains("MCP server \"everything\" disconnected"),
        "{}",
        results[0]
    );
    // The dead server's tools are gone: a later call to one is refused as unknown, or fails.
    assert_eq!(results[1]["is_error"], true, "{}", results[1]);
    assert!(
        result_text(&results[2]).contains("session goes on"),
        "{}",
        results[2]
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!pid_alive(pid));
}

#[test]
fn a_call_that_never_answers_times_out_under_mcp_tool_timeout() {
    let sb = sandbox();
    let started = Instant::now();
    let out = run(
        &sb,
        json!([
            call(
                "mcp__everything__trigger-long-running-operation",
                json!({"duration": 60, "steps": 2})
            ),
            call("mcp__everything__echo", json!({"message": "still here"})),
            say("done"),
        ]),
        &[
            "--mcp-config",
            &everything_config(),
            "--allowedTools",
            "mcp__everything",
        ],
        &[("MCP_TOOL_TIMEOUT", "1500")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the timeout was not applied"
    );
    let results = tool_results(&sb);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        result_text(&results[0]).contains("timed out after 1500 ms"),
        "{}",
        results[0]
    );
    // The server is still usable for its next call.
    assert_eq!(result_text(&results[1]), "Echo: still here");
}

#[test]
fn a_server_that_never_handshakes_is_reported_and_killed_and_the_others_work() {
    let sb = sandbox();
    let pidfile = sb.path("hung.pid");
    let hung = sb.script(
        "hung.sh",
        &format!("echo $$ > '{}'\nexec sleep 300", pidfile.display()),
    );
    let config = json!({"mcpServers": {
        "hung": {"command": hung},
        "everything": {"command": everything(), "args": ["stdio"]},
        "missing": {"command": "/nonexistent/mcp-server"},
        "weird": {"type": "carrier-pigeon", "url": "x"},
    }})
    .to_string();
    let started = Instant::now();
    let out = run(
        &sb,
        json!([
            call("mcp__everything__echo", json!({"message": "hi"})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__everything",
            "--output-format",
            "stream-json",
        ],
        &[("MCP_TIMEOUT", "2000")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        out.stderr
            .contains("MCP server \"hung\" failed to start: connection timed out after 2000 ms"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("MCP server \"missing\" failed to start"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("MCP server \"weird\" skipped: unknown transport \"carrier-pigeon\""),
        "{}",
        out.stderr
    );
    let init = init_line(&out.stdout);
    let statuses: Vec<(String, String)> = init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("hung".into(), "failed".into())),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("everything".into(), "connected".into())),
        "{statuses:?}"
    );
    assert_eq!(result_text(&tool_results(&sb)[0]), "Echo: hi");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!pid_alive(pid), "the hung server was left running");
}

#[test]
fn children_are_killed_at_session_end() {
    let sb = sandbox();
    let pidfile = sb.path("server.pid");
    let wrapper = recording_wrapper(&sb, "everything.sh", &pidfile);
    let config = json!({"mcpServers": {"everything": {"command": wrapper}}}).to_string();
    let out = run(&sb, json!([say("done")]), &["--mcp-config", &config], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!pid_alive(pid), "the MCP server outlived the session");
}

#[test]
fn output_over_max_mcp_output_tokens_is_cut_with_a_note() {
    let sb = sandbox();
    let long = "x".repeat(4000);
    let out = run(
        &sb,
        json!([
            call("mcp__everything__echo", json!({"message": long})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &everything_config(),
            "--allowedTools",
            "mcp__everything",
        ],
        &[("MAX_MCP_OUTPUT_TOKENS", "100")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = result_text(&tool_results(&sb)[0]);
    assert!(text.len() < 1000, "not capped: {} chars", text.len());
    assert!(text.contains("MAX_MCP_OUTPUT_TOKENS"), "{text}");
}

#[test]
fn project_servers_start_only_when_approved_outside_the_project_file() {
    let sb = sandbox();
    sb.write_json(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": everything(), "args": ["stdio"]}}}),
    );
    // The committed project settings cannot approve the repository's own server.
    sb.settings(
        json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["everything"]}),
    );
    let steps = json!([
        call("mcp__everything__echo", json!({"message": "hi"})),
        say("done")
    ]);
    let args = [
        "--allowedTools",
        "mcp__everything",
        "--output-format",
        "stream-json",
    ];
    let out = run(&sb, steps.clone(), &args, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        init_line(&out.stdout)["mcp_servers"],
        json!([{"name": "everything", "status": "pending", "source": "project"}])
    );
    assert!(
        out.stderr
            .contains("is not approved, so it was not started"),
        "{}",
        out.stderr
    );
    assert_eq!(tool_results(&sb)[0]["is_error"], true);

    // Approved in the local settings: it starts.
    let sb2 = sandbox();
    sb2.write_json(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": everything(), "args": ["stdio"]}}}),
    );
    sb2.write_json(
        ".claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["everything"]}),
    );
    let out = run(&sb2, steps.clone(), &args, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        init_line(&out.stdout)["mcp_servers"],
        json!([{"name": "everything", "status": "connected", "source": "project"}])
    );
    assert_eq!(result_text(&tool_results(&sb2)[0]), "Echo: hi");

    // disabledMcpjsonServers wins over enableAllProjectMcpServers.
    let sb3 = sandbox();
    sb3.write_json(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": everything(), "args": ["stdio"]}}}),
    );
    sb3.write_json(
        ".claude/settings.local.json",
        &json!({"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["everything"]}),
    );
    let out = run(&sb3, steps, &args, &[]);
    assert_eq!(
        init_line(&out.stdout)["mcp_servers"][0]["status"],
        "disabled",
        "{}",
        out.stdout
    );
}

#[test]
fn a_broken_mcp_json_is_reported_with_its_position_and_other_servers_start() {
    let sb = sandbox();
    sb.write(
        ".mcp.json",
        "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}\n",
    );
    let out = run(
        &sb,
        json!([
            call("mcp__everything__echo", json!({"message": "hi"})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &everything_config(),
            "--allowedTools",
            "mcp__everything",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mcp_json = sb.path(".mcp.json").display().to_string();
    assert!(
        out.stderr.contains(&format!("{mcp_json}:2:")),
        "no file:line:col in: {}",
        out.stderr
    );
    assert_eq!(result_text(&tool_results(&sb)[0]), "Echo: hi");
}

#[test]
fn env_expansion_in_server_config() {
    let sb = sandbox();
    let config = json!({"mcpServers": {"everything": {
        "command": "${REIN_TEST_MCP_BIN}",
        "args": ["${REIN_TEST_MODE:-stdio}"],
        "env": {"POLICY_LEVEL": "${REIN_TEST_LEVEL:-strict}"},
    }}})
    .to_string();
    let out = run(
        &sb,
        json!([call("mcp__everything__get-env", json!({})), say("done")]),
        &["--mcp-config", &config, "--allowedTools", "mcp__everything"],
        &[("REIN_TEST_MCP_BIN", &everything())],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = result_text(&tool_results(&sb)[0]);
    assert!(text.contains("POLICY_LEVEL"), "{text}");
    assert!(text.contains("strict"), "{text}");
}

#[test]
fn an_mcp_tool_hook_reads_its_decision_from_a_real_server() {
    let sb = sandbox();
    std::fs::write(
        sb.path("data/policy.json"),
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "the policy file says no",
        }})
        .to_string(),
    )
    .unwrap();
    sb.hooks(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "mcp_tool",
            "server": "filesystem",
            "tool": "read_text_file",
            "input": {"path": "${cwd}/data/policy.json"},
        }]}],
    }));
    let out = run(
        &sb,
        json!([
            call("Bash", json!({"command": "touch ran.flag"})),
            say("done")
        ]),
        &[
            "--mcp-config",
            &filesystem_config(&sb),
            "--allowedTools",
            "Bash",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !sb.exists("ran.flag"),
        "the mcp_tool hook's deny was not applied"
    );
    assert!(
        result_text(&tool_results(&sb)[0]).contains("the policy file says no"),
        "{}",
        out.stderr
    );

    // An unknown server: a non-blocking error; with onFailure: block it blocks.
    let sb = sandbox();
    sb.hooks(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "mcp_tool", "server": "nope", "tool": "x", "onFailure": "block",
        }]}],
    }));
    let out = run(
        &sb,
        json!([
            call("Bash", json!({"command": "touch ran.flag"})),
            say("done")
        ]),
        &["--allowedTools", "Bash"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!sb.exists("ran.flag"));
    assert!(
        result_text(&tool_results(&sb)[0]).contains("MCP server 'nope' not connected"),
        "{}",
        tool_results(&sb)[0]
    );
}

/// server-everything listening on a free port with `transport` (`streamableHttp` or `sse`).
struct HttpServerChild {
    child: std::process::Child,
    port: u16,
}

impl Drop for HttpServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_everything(transport: &str) -> HttpServerChild {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(everything())
        .arg(transport)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the http server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    HttpServerChild { child, port }
}

#[test]
fn streamable_http_transport() {
    let server = http_everything("streamableHttp");
    let sb = sandbox();
    let config = json!({"mcpServers": {"remote": {"type": "http", "url": format!("http://127.0.0.1:{}/mcp", server.port)}}})
        .to_string();
    let out = run(
        &sb,
        json!([
            call("mcp__remote__get-sum", json!({"a": 2, "b": 3})),
            say("done")
        ]),
        &["--mcp-config", &config, "--allowedTools", "mcp__remote"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        result_text(&tool_results(&sb)[0]),
        "The sum of 2 and 3 is 5."
    );
}

#[test]
fn legacy_sse_transport() {
    let server = http_everything("sse");
    let sb = sandbox();
    let config = json!({"mcpServers": {"legacy": {"type": "sse", "url": format!("http://127.0.0.1:{}/sse", server.port)}}})
        .to_string();
    let out = run(
        &sb,
        json!([
            call("mcp__legacy__echo", json!({"message": "over sse"})),
            say("done")
        ]),
        &["--mcp-config", &config, "--allowedTools", "mcp__legacy"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(result_text(&tool_results(&sb)[0]), "Echo: over sse");
}

#[test]
fn mcp_cli_add_list_get_remove() {
    let sb = sandbox();
    let mcp = |args: &[&str]| {
        let out = sb.rein().arg("mcp").args(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = mcp(&["add", "everything", &everything(), "stdio"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Added stdio MCP server everything to local config"),
        "{stdout}"
    );
    let claude_json: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.home.join(".claude.json")).unwrap())
            .unwrap();
    let project = sb.project.display().to_string();
    assert_eq!(
        claude_json["projects"][&project]["mcpServers"]["everything"]["args"],
        json!(["stdio"])
    );
    let (code, _, _) = mcp(&["add", "everything", "x"]);
    assert_ne!(code, 0, "a duplicate name was accepted");
    let (code, _, stderr) = mcp(&[
        "add",
        "-s",
        "project",
        "-t",
        "http",
        "web",
        "http://127.0.0.1:9/mcp",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = mcp(&["list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("everything: "), "{stdout}");
    assert!(stdout.contains("✓ Connected"), "{stdout}");
    assert!(
        stdout.contains("web: http://127.0.0.1:9/mcp - ⏸ Needs approval"),
        "{stdout}"
    );
    let (code, stdout, _) = mcp(&["get", "everything"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Scope: local"), "{stdout}");
    assert!(stdout.contains("mcp__everything__echo"), "{stdout}");
    let (code, stdout, _) = mcp(&["remove", "everything"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Removed MCP server everything from local config"),
        "{stdout}"
    );
    let (code, _, _) = mcp(&["get", "everything"]);
    assert_ne!(code, 0);
}

#[test]
fn hooks_validate_knows_the_configured_mcp_servers() {
    let sb = sandbox();
    sb.write_json(
        ".mcp.json",
        &json!({"mcpServers": {"filesystem": {"command": filesystem(), "args": ["."]}}}),
    );
    sb.hooks(json!({"PreToolUse": [
        {"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "true"}]},
        {"matcher": "mcp__filesystem", "hooks": [{"type": "command", "command": "true"}]},
        {"matcher": "mcp__filesystem__.*", "hooks": [{"type": "command", "command": "true"}]},
        {"matcher": "Bash", "hooks": [{"type": "mcp_tool", "server": "policy", "tool": "check"}]},
        {"matcher": "Bash", "hooks": [{"type": "mcp_tool", "server": "filesystem", "tool": "read_text_file"}]},
    ]}));
    let out = sb.rein().args(["hooks", "validate"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_ne!(
        out.status.code(),
        Some(0),
        "an unknown mcp_tool server must fail validation"
    );
    assert!(
        stdout.contains("matcher \"mcp__github__.*\" is about MCP server \"github\", which is not configured (configured: filesystem)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("matcher \"mcp__filesystem\" matches no tool"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("error: mcp_tool hook names MCP server \"policy\", which is not configured"),
        "{stdout}"
    );
    let problems = stdout
        .lines()
        .filter(|l| l.contains(": warning: ") || l.contains(": error: "))
        .count();
    assert_eq!(problems, 3, "{stdout}");
}

#[test]
fn malformed_and_oversized_lines_from_a_server_cost_nothing_else() {
    let sb = sandbox();
    // Garbage, a JSON line that is not JSON-RPC, and a 20 MB line (over the SDK's 16 MiB cap)
    // before the real server speaks; another server alongside must not notice.
    let noisy = sb.script(
        "noisy.sh",
        &format!(
            "echo 'this is not json'\necho '{{\"hello\": 1}}'\nhead -c 20000000 /dev/zero | tr '\\0' 'x'\necho\nexec '{}' stdio",
            everything()
        ),
    );
    let config = json!({"mcpServers": {
        "noisy": {"command": noisy},
        "quiet": {"command": everything(), "args": ["stdio"]},
    }})
    .to_string();
    let out = run(
        &sb,
        json!([
            call("mcp__noisy__echo", json!({"message": "through the noise"})),
            call("mcp__quiet__echo", json!({"message": "unbothered"})),
            say("done"),
        ]),
        &[
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__noisy",
            "mcp__quiet",
        ],
        &[("MCP_TIMEOUT", "20000")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&sb);
    assert_eq!(result_text(&results[1]), "Echo: unbothered");
    // The SDK drops the lines that are not JSON-RPC and the line over its cap; the server's
    // own answers then get through.
    assert_eq!(result_text(&results[0]), "Echo: through the noise");
}

#[test]
fn a_tool_with_an_unusable_schema_is_named_and_skipped() {
    let sb = sandbox();
    // A minimal hand-written stdio server (fault injection: no registry server sends a bad
    // schema): one tool whose inputSchema is not an object schema, one that is fine.
    let server = sb.raw_script(
        "bad-schema.py",
        br#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bad-schema", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [
            {"name": "broken", "inputSchema": {"type": "string"}},
            {"name": "fine", "inputSchema": {"type": "object", "properties": {}}},
        ]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "fine was called"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"#,
    );
    let config = json!({"mcpServers": {"odd": {"command": server}}}).to_string();
    let out = run(
        &sb,
        json!([call("mcp__odd__fine", json!({})), say("done")]),
        &[
            "--mcp-config",
            &config,
            "--allowedTools",
            "mcp__odd",
            "--output-format",
            "stream-json",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("MCP server \"odd\": tool \"broken\" skipped: its inputSchema is not a JSON Schema object"),
        "{}",
        out.stderr
    );
    let tools = init_line(&out.stdout)["tools"].clone();
    assert!(tools.as_array().unwrap().contains(&json!("mcp__odd__fine")));
    assert!(
        !tools
            .as_array()
            .unwrap()
            .contains(&json!("mcp__odd__broken"))
    );
    assert_eq!(result_text(&tool_results(&sb)[0]), "fine was called");
}

/// A plugin's `.mcp.json` (given with `--plugin-dir`) starts its server: its tools are
/// `mcp__plugin_<plugin>_<server>__<tool>`, `${CLAUDE_PLUGIN_ROOT}` is expanded in the entry, and
/// hooks see the calls; `--plugin-dir-no-mcp` loads the same plugin without it.
#[test]
fn a_plugins_mcp_server_starts_and_its_tools_go_through_the_hooks() {
    let sb = sandbox();
    let plug = sb.path("plug");
    crate::harness::write(
        &plug.join(".claude-plugin/plugin.json"),
        r#"{"name": "guard"}"#,
    );
    crate::harness::write(
        &plug.join(".mcp.json"),
        &json!({"mcpServers": {"ev": {"command": everything(), "args": ["stdio"],
            "env": {"PLUGIN_ROOT_SEEN": "${CLAUDE_PLUGIN_ROOT}"}}}})
        .to_string(),
    );
    let pre = dump(&sb, "pre.log");
    sb.hooks(json!({"PreToolUse": [{"matcher": "mcp__plugin_guard_ev__.*", "hooks": [{"type": "command", "command": pre}]}]}));
    let steps = json!([
        call(
            "mcp__plugin_guard_ev__echo",
            json!({"message": "from a plugin server"})
        ),
        say("done")
    ]);
    let plug_arg = plug.display().to_string();
    let out = run(
        &sb,
        steps.clone(),
        &[
            "--permission-mode",
            "bypassPermissions",
            "--plugin-dir",
            &plug_arg,
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&sb);
    assert!(
        result_text(&results[0]).contains("from a plugin server"),
        "{results:?}\n{}",
        out.stderr
    );
    let seen = log(&sb, "pre.log");
    assert_eq!(seen.len(), 1, "{}", out.stderr);
    assert_eq!(seen[0]["tool_name"], "mcp__plugin_guard_ev__echo");

    let sb2 = sandbox();
    let out = run(
        &sb2,
        steps,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--plugin-dir-no-mcp",
            &plug_arg,
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = tool_results(&sb2);
    assert!(
        result_text(results.last().unwrap()).contains("No such tool available"),
        "{results:?}"
    );
}
