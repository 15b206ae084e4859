//! The tools Claude Code 2.1.328 defers behind ToolSearch, through the built binary with the
//! mock model: ToolSearch loads them (hooks see Claude Code's `tool_response`), WebFetch reads
//! a loopback page (a redirect to another host is not followed; a `WebFetch(domain:…)` deny rule
//! refuses before any request), NotebookEdit changes a notebook the model has read, and the
//! tools Claude Code turns off in `-p` answer in its words.

use serde_json::{Value, json};

use crate::harness::{Sandbox, say};
use crate::http_server::{HttpServer, Reply};

fn call(name: &str, input: Value) -> Value {
    json!({"tool_use": [{"name": name, "input": input}]})
}

/// Runs `steps` with a PreToolUse and PostToolUse(Failure) hook that records each stdin as one
/// line of `<project>/seen.jsonl`; returns (stdout, the records).
fn run(sb: &Sandbox, steps: Value, extra: &[&str]) -> (String, Vec<Value>) {
    let rec = sb.script(
        "rec.sh",
        &format!(
            "cat >> '{}'; echo >> '{}'",
            sb.path("seen.jsonl").display(),
            sb.path("seen.jsonl").display()
        ),
    );
    let group = json!([{"matcher": "", "hooks": [{"type": "command", "command": rec}]}]);
    sb.hooks(json!({"PreToolUse": group, "PostToolUse": group, "PostToolUseFailure": group}));
    let mock = sb.mock(steps);
    let out = sb
        .rein()
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--mock-script",
        ])
        .arg(&mock)
        .args(extra)
        .env("IS_SANDBOX", "1")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .output()
        .unwrap();
    let seen = std::fs::read_to_string(sb.path("seen.jsonl")).unwrap_or_default();
    let records = seen
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        records,
    )
}

fn of<'a>(records: &'a [Value], event: &str, tool: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["hook_event_name"] == event && r["tool_name"] == tool)
        .collect()
}

#[test]
fn toolsearch_loads_webfetch_which_reads_a_loopback_page() {
    let server = HttpServer::start(
        vec![
            (
                "/page.html",
                Reply::Status(
                    200,
                    vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
                    "<html><head><title>T</title><script>secret()</script></head><body><h1>Hello &amp; hi</h1><p>PAGE-TEXT here.</p></body></html>".into(),
                ),
            ),
            (
                "/away",
                Reply::Status(302, vec![("Location".into(), "http://example.invalid/x".into())], String::new()),
            ),
        ],
        false,
    );
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    let (out, records) = run(
        &sb,
        json!([
            call(
                "ToolSearch",
                json!({"query": "select:WebFetch,NotebookEdit", "max_results": 5})
            ),
            call(
                "WebFetch",
                json!({"url": server.url("/page.html"), "prompt": "What does it say?"})
            ),
            call(
                "WebFetch",
                json!({"url": server.url("/away"), "prompt": "follow?"})
            ),
            say("done")
        ]),
        &["--permission-mode", "bypassPermissions"],
    );
    let search = of(&records, "PostToolUse", "ToolSearch");
    assert_eq!(search.len(), 1, "{out}");
    assert_eq!(
        search[0]["tool_response"],
        json!({"matches": ["WebFetch", "NotebookEdit"], "query": "select:WebFetch,NotebookEdit", "total_deferred_tools": 3})
    );
    let fetched = of(&records, "PostToolUse", "WebFetch");
    assert_eq!(fetched.len(), 2, "{out}");
    let page = &fetched[0]["tool_response"];
    assert_eq!(page["code"], 200);
    assert_eq!(page["codeText"], "OK");
    assert_eq!(page["result"], "T\n\n# Hello & hi\n\nPAGE-TEXT here.");
    assert_eq!(page["url"], server.url("/page.html"));
    let keys: Vec<&str> = page
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["bytes", "code", "codeText", "result", "durationMs", "url"]
    );
    // The redirect to another host is returned, not followed.
    let away = &fetched[1]["tool_response"];
    assert_eq!(away["code"], 302);
    assert!(
        away["result"]
            .as_str()
            .unwrap()
            .contains("http://example.invalid/x"),
        "{away}"
    );
    assert_eq!(server.hits("/page.html"), 1);
}

#[test]
fn a_webfetch_domain_rule_refuses_before_any_request() {
    let server = HttpServer::start(
        vec![("/page.html", Reply::Status(200, vec![], "x".into()))],
        false,
    );
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    sb.write_json(
        ".claude/settings.local.json",
        &json!({"permissions": {"deny": ["WebFetch(domain:127.0.0.1)"]}}),
    );
    let (out, records) = run(
        &sb,
        json!([
            call(
                "WebFetch",
                json!({"url": server.url("/page.html"), "prompt": "p"})
            ),
            say("done")
        ]),
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(
        server.hits("/page.html"),
        0,
        "refused before fetching: {out}"
    );
    assert_eq!(of(&records, "PreToolUse", "WebFetch").len(), 1);
    assert!(of(&records, "PostToolUse", "WebFetch").is_empty());
}

#[test]
fn notebookedit_changes_a_notebook_the_model_has_read() {
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    let nb = json!({"cells": [
        {"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)\n"], "outputs": [], "execution_count": null},
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Title"]}],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5});
    sb.write(
        "nb.ipynb",
        &(serde_json::to_string_pretty(&nb).unwrap() + "\n"),
    );
    let path = sb.path("nb.ipynb").display().to_string();
    let (out, records) = run(
        &sb,
        json!([
            call(
                "NotebookEdit",
                json!({"notebook_path": path, "cell_id": "c1", "new_source": "print(0)"})
            ),
            call("Read", json!({"file_path": path})),
            call(
                "NotebookEdit",
                json!({"notebook_path": path, "cell_id": "c1", "new_source": "print(2)"})
            ),
            call(
                "NotebookEdit",
                json!({"notebook_path": path, "cell_id": "c1", "new_source": "x = 3", "cell_type": "code", "edit_mode": "insert"})
            ),
            call(
                "NotebookEdit",
                json!({"notebook_path": path, "cell_id": "m1", "new_source": "", "edit_mode": "delete"})
            ),
            call(
                "NotebookEdit",
                json!({"notebook_path": path, "cell_id": "nope", "new_source": "y"})
            ),
            say("done")
        ]),
        &["--permission-mode", "bypassPermissions"],
    );
    // Before the Read and for a missing cell: refused before hooks, as Claude Code does.
    assert_eq!(of(&records, "PreToolUse", "NotebookEdit").len(), 3, "{out}");
    let posts = of(&records, "PostToolUse", "NotebookEdit");
    assert_eq!(posts.len(), 3);
    let r = &posts[0]["tool_response"];
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    // Claude Code's keys and order (fixture notebook_edit).
    assert_eq!(
        keys,
        [
            "new_source",
            "old_source",
            "cell_type",
            "language",
            "edit_mode",
            "cell_id",
            "error",
            "notebook_path",
            "original_file",
            "updated_file"
        ]
    );
    assert_eq!(r["old_source"], "print(1)\n");
    assert_eq!(posts[1]["tool_response"]["edit_mode"], "insert");
    assert!(posts[1]["tool_response"].get("old_source").is_none());
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("nb.ipynb")).unwrap()).unwrap();
    let cells = written["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{written}");
    assert_eq!(cells[0]["source"], "print(2)");
    assert_eq!(cells[1]["source"], "x = 3");
    assert_eq!(cells[1]["id"].as_str().unwrap().len(), 8);
    let text = std::fs::read_to_string(sb.path("nb.ipynb")).unwrap();
    assert!(
        text.starts_with("{\n \"cells\": [\n  {\n"),
        "one-space indent: {text}"
    );
}

#[test]
fn tools_claude_code_turns_off_in_print_mode_answer_in_its_words() {
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    let (out, _) = run(
        &sb,
        json!([
            call("AskUserQuestion", json!({"questions": []})),
            call("TodoWrite", json!({"todos": []})),
            call("WebSearch", json!({"query": "rein hooks"})),
            say("done")
        ]),
        &["--permission-mode", "bypassPermissions"],
    );
    for name in ["AskUserQuestion", "TodoWrite"] {
        assert!(
            out.contains(&format!("No such tool available: {name}. {name} is disabled for this session, in subagents as well as here.")),
            "{name}: {out}"
        );
    }
    assert!(out.contains("no web search provider"), "{out}");
}
