//! What rein sends the SDK against what Claude Code 2.1.328 sent it in the same session
//! (fixture `tests/fixtures/cc-2.1.328/agent_sdk/measure`, recorded by `measure.py` there with
//! the Python SDK: a UserPromptSubmit and a PreToolUse callback, `can_use_tool`, an in-process
//! MCP server `calc`; the model runs `echo hi > f.txt`, then `mcp__calc__add`, then answers).
//! rein plays the same turns with its mock model; each request it sends has Claude Code's keys
//! in Claude Code's order, but for the ones named here.

use serde_json::{Value, json};

use super::faults::{Driven, is_request};
use crate::harness::Sandbox;

fn fixture() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cc-2.1.328/agent_sdk/measure/stdout");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// Keys of the requests Claude Code sent, by subtype and a distinguishing detail.
fn cc_request(subtype: &str, pick: impl Fn(&Value) -> bool) -> Value {
    fixture()
        .into_iter()
        .find(|v| is_request(v, subtype) && pick(&v["request"]))
        .unwrap_or_else(|| panic!("no {subtype} in the fixture"))["request"]
        .clone()
}

#[test]
fn the_requests_rein_sends_the_sdk_have_claude_codes_shape() {
    let s = Sandbox::new("project", &["project/.claude"]);
    let mock = s.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "echo hi > f.txt", "description": "write"}}]},
        {"tool_use": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
        {"text": "done"},
    ]));
    let config = json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}).to_string();
    let mut d = Driven::start(
        &s,
        &[
            "--mock-script",
            mock.to_str().unwrap(),
            "--system-prompt",
            "",
            "--permission-prompt-tool",
            "stdio",
            "--permission-mode",
            "default",
            "--mcp-config",
            &config,
        ],
    );
    d.send(
        &json!({"type": "control_request", "request_id": "init", "request": {
        "subtype": "initialize", "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5}],
            "UserPromptSubmit": [{"matcher": null, "hookCallbackIds": ["hook_1"]}]}}}),
    );
    let mut seen: Vec<Value> = Vec::new();
    let mut states: Vec<Value> = Vec::new();
    let mut initialized = false;
    loop {
        let v = d.until(|v| {
            v["type"] == "control_request"
                || v["type"] == "result"
                || v["type"] == "control_response"
                || v["subtype"] == "session_state_changed"
        });
        if v["subtype"] == "session_state_changed" {
            states.push(v["state"].clone());
            if v["state"] == "idle" {
                break;
            }
            continue;
        }
        match v["type"].as_str() {
            Some("result") => continue,
            Some("control_response") => {
                let answer = &v["response"]["response"];
                let cc = fixture()
                    .into_iter()
                    .find(|l| {
                        l["type"] == "control_response"
                            && l["response"]["response"]["commands"].is_array()
                    })
                    .unwrap();
                // Every key rein answers initialize with is one Claude Code answers with (rein
                // adds only its own version).
                for k in keys(answer) {
                    assert!(
                        k == "rein_version" || cc["response"]["response"].get(&k).is_some(),
                        "initialize: {k} is not Claude Code's"
                    );
                }
                if !initialized {
                    initialized = true;
                    d.user("please do it");
                }
                continue;
            }
            _ => {}
        }
        let request = v["request"].clone();
        let answer = match request["subtype"].as_str().unwrap() {
            "mcp_message" => {
                let m = &request["message"];
                let id = m["id"].clone();
                match m["method"].as_str().unwrap() {
                    "initialize" => json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "result": {
                        "capabilities": {"tools": {"listChanged": false}},
                        "protocolVersion": m["params"]["protocolVersion"],
                        "serverInfo": {"name": "calc", "version": "1.0.0"}}}}),
                    "tools/list" => json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "result": {
                        "tools": [{"name": "add", "description": "Add two numbers", "inputSchema": {
                            "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                            "required": ["a", "b"]}}]}}}),
                    "tools/call" => json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": "5"}], "isError": false}}}),
                    _ => json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}}),
                }
            }
            "hook_callback" => json!({}),
            "can_use_tool" => json!({"behavior": "allow", "updatedInput": request["input"]}),
            other => panic!("rein sent an unexpected request {other}"),
        };
        d.answer(&v["request_id"], answer);
        seen.push(request);
    }
    let (code, err) = d.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(s.path("f.txt")).unwrap(), "hi\n");
    // The session states of the turn, through its `idle`: Claude Code's sequence (running,
    // asking twice, idle at the end).
    let cc_states: Vec<Value> = fixture()
        .into_iter()
        .filter(|v| v["subtype"] == "session_state_changed")
        .map(|v| v["state"].clone())
        .scan(false, |done, state| {
            if *done {
                return None;
            }
            *done = state == "idle";
            Some(state)
        })
        .collect();
    assert_eq!(states, cc_states);

    let rein = |subtype: &str, pick: &dyn Fn(&Value) -> bool| -> Value {
        seen.iter()
            .find(|r| r["subtype"] == subtype && pick(r))
            .unwrap_or_else(|| panic!("rein sent no {subtype}"))
            .clone()
    };
    // hook_callback: the same keys, and the input a command hook would read.
    for event in ["UserPromptSubmit", "PreToolUse"] {
        let pick = |r: &Value| r["input"]["hook_event_name"] == event;
        let (cc, ours) = (
            cc_request("hook_callback", pick),
            rein("hook_callback", &pick),
        );
        assert_eq!(keys(&ours), keys(&cc), "hook_callback for {event}");
        // `effort` is the model's effort level; rein's mock model has none (with a real
        // provider the key is there: tests/it/cc_fidelity).
        let cc_input: Vec<String> = keys(&cc["input"])
            .into_iter()
            .filter(|k| k != "effort")
            .collect();
        assert_eq!(keys(&ours["input"]), cc_input, "{event} input");
        if event == "PreToolUse" {
            assert_eq!(ours["tool_use_id"], ours["input"]["tool_use_id"]);
        }
    }
    // can_use_tool: Claude Code's keys in its order; rein adds decision_reason (which the
    // SDKs read) and has no server policy to report (server_policy_ask_only).
    for tool in ["Bash", "mcp__calc__add"] {
        let pick = |r: &Value| r["tool_name"] == tool;
        let (cc, ours) = (
            cc_request("can_use_tool", pick),
            rein("can_use_tool", &pick),
        );
        let want: Vec<String> = keys(&cc)
            .into_iter()
            .filter(|k| k != "server_policy_ask_only")
            .collect();
        let got: Vec<String> = keys(&ours)
            .into_iter()
            .filter(|k| k != "decision_reason")
            .collect();
        assert_eq!(got, want, "can_use_tool for {tool}");
        assert_eq!(ours["display_name"], cc["display_name"], "{tool}");
        assert_eq!(ours["mcp_server"], cc["mcp_server"], "{tool}");
        assert_eq!(ours["input"], cc["input"], "{tool}");
    }
    let bash = rein("can_use_tool", &|r: &Value| r["tool_name"] == "Bash");
    assert_eq!(
        bash["blocked_path"],
        json!(s.path("f.txt").to_string_lossy()),
        "blocked_path names the file the command writes, as Claude Code's does"
    );
    // mcp_message: the same keys; the tool call carries the same arguments.
    let call = |r: &Value| r["message"]["method"] == "tools/call";
    let (cc, ours) = (cc_request("mcp_message", call), rein("mcp_message", &call));
    assert_eq!(keys(&ours), keys(&cc));
    assert_eq!(
        ours["message"]["params"]["arguments"],
        cc["message"]["params"]["arguments"]
    );
}
