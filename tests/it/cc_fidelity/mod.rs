//! Fidelity with Claude Code 2.1.328, scenario by scenario. Each scenario in
//! `tests/fixtures/cc-2.1.328/scenarios/` was run against the real Claude Code with the oracle
//! (`tests/fixtures/cc-2.1.328/record.sh`); `<name>/summary.json` is what it did. Each test
//! here replays the same scenario against rein ([`replay::run`]) and compares. Where rein
//! differs on purpose, the test names the difference and the README says why.

// Why: the replay records more than the tests written so far read.
#[allow(dead_code)]
mod replay;

use serde_json::{Value, json};

use replay::{fixture, fixture_stdins, run};

/// The tool-loop events carry `effort` in Claude Code's key position, and their hooks get
/// `CLAUDE_EFFORT`; the events outside the loop carry neither. The request carries
/// `output_config.effort`.
#[test]
fn effort_in_stdin_env_and_request() {
    let fx = fixture("env_cwd");
    let r = run("env_cwd", &[]);
    for event in ["PreToolUse", "PostToolUse"] {
        let cc = fixture_stdins(&fx, event);
        let ours: Vec<&Value> = r.of(event).iter().map(|h| &h.stdin).collect();
        assert_eq!(ours.len(), cc.len(), "{event} runs");
        for (ours, cc) in ours.iter().zip(&cc) {
            assert_eq!(ours["effort"], json!({"level": "medium"}));
            let keys =
                |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
            assert_eq!(keys(ours), keys(cc), "{event} key order");
        }
        for h in r.of(event) {
            assert_eq!(
                h.env.get("CLAUDE_EFFORT").map(String::as_str),
                Some("medium")
            );
        }
    }
    for h in r.of("CwdChanged") {
        assert!(h.stdin.get("effort").is_none());
        assert!(!h.env.contains_key("CLAUDE_EFFORT"));
    }
    assert_eq!(fx["model"]["output_config"], json!({"effort": "medium"}));
    for body in &r.requests {
        assert_eq!(body["output_config"], json!({"effort": "medium"}));
    }
}

/// `--effort` picks the level; a model Claude Code sends no effort to gets none, and then no
/// hook sees `effort` or `CLAUDE_EFFORT`.
#[test]
fn effort_flag_and_models_without_effort() {
    let r = run("env_cwd", &["--effort", "high"]);
    assert!(
        r.requests
            .iter()
            .all(|b| b["output_config"] == json!({"effort": "high"}))
    );
    assert!(
        r.of("PreToolUse")
            .iter()
            .all(|h| h.stdin["effort"] == json!({"level": "high"}))
    );
    let r = run("env_cwd", &["--model", "claude-sonnet-4-5"]);
    assert!(!r.requests.is_empty());
    assert!(r.requests.iter().all(|b| b.get("output_config").is_none()));
    for h in &r.hooks {
        assert!(h.stdin.get("effort").is_none(), "{:?}", h.stdin);
        assert!(!h.env.contains_key("CLAUDE_EFFORT"));
    }
}

/// The Bash tool's environment: every variable Claude Code 2.1.328 set for its commands is set
/// the same way, except the ones naming Claude Code's own machinery.
#[test]
fn bash_tool_environment_matches() {
    let fx = fixture("env_cwd");
    let r = run("env_cwd", &[]);
    let parse = |text: &str| -> Vec<(String, String)> {
        text.lines()
            .filter_map(|l| {
                l.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect()
    };
    let cc = parse(fx["files"]["bash-env.txt"]["text"].as_str().unwrap());
    let ours = parse(
        &r.normalize(&std::fs::read_to_string(r.sandbox.project.join("bash-env.txt")).unwrap()),
    );
    let ours: std::collections::HashMap<_, _> = ours.into_iter().collect();
    // Claude Code's messaging channel, child notes and its own binary: rein has none of them.
    const NOT_IN_REIN: &[&str] = &[
        "CLAUDE_CODE_CHILD_NOTES_DIR",
        "CLAUDE_CODE_MESSAGING_SOCKET",
        "CLAUDE_CODE_MESSAGING_TOKEN",
        "CLAUDE_CODE_EXECPATH",
    ];
    const PER_RUN: &[&str] = &[
        "AI_AGENT",
        "CLAUDE_PID",
        "ANTHROPIC_BASE_URL",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "http_proxy",
        "https_proxy",
        "NO_PROXY",
        "no_proxy",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_TELEMETRY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "TERM",
        "LANG",
        "SHELL",
        "USER",
        "PATH",
        "IS_SANDBOX",
        "ANTHROPIC_API_KEY",
        "_",
        "SHLVL",
    ];
    for (k, v) in &cc {
        if NOT_IN_REIN.contains(&k.as_str()) {
            assert!(!ours.contains_key(k), "{k}");
        } else if !PER_RUN.contains(&k.as_str()) {
            assert_eq!(ours.get(k), Some(v), "{k}");
        }
    }
    assert_eq!(
        ours.get("AI_AGENT").cloned(),
        Some(format!("rein_{}", env!("CARGO_PKG_VERSION")))
    );
    assert!(
        !ours.contains_key("CLAUDE_PROJECT_DIR"),
        "Claude Code does not give it to Bash"
    );
}

/// Every hook run of the replay equals Claude Code's, in order: same events, same stdin bytes
/// once normalized (key order included). `skip` names events left out of the comparison.
fn assert_hooks_match(fx: &Value, r: &replay::Replay, skip: &[&str]) {
    let cc: Vec<String> = fx["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| !skip.contains(&h["event"].as_str().unwrap_or("")))
        .map(|h| format!("{} {}", h["event"].as_str().unwrap_or("?"), h["stdin"]))
        .collect();
    let ours: Vec<String> = r
        .hooks
        .iter()
        .filter(|h| !skip.contains(&h.event.as_str()))
        .map(|h| format!("{} {}", h.event, h.stdin))
        .collect();
    for (i, (a, b)) in ours.iter().zip(&cc).enumerate() {
        assert_eq!(a, b, "hook run {i} differs");
    }
    assert_eq!(ours.len(), cc.len(), "hook runs: {ours:#?}");
}

/// What the model was told for each call equals Claude Code's (`is_error` compared by truth:
/// Claude Code also sends an explicit `false` on Bash results). Masked: the random name of a
/// saved output, and the schema listing after `Expected schema:` (rein lists the event's own
/// fields; Claude Code every event's).
fn assert_tool_results_match(fx: &Value, r: &replay::Replay) {
    let cc = fx["model"]["tool_results"].as_array().unwrap();
    assert_eq!(r.tool_results.len(), cc.len(), "{:#?}", r.tool_results);
    let saved = regex::Regex::new(r"tool-results/[a-z0-9]{9}\.txt").unwrap();
    let mask = |v: &Value| -> String {
        let text = v["content"].as_str().unwrap_or("").to_string();
        let text = saved
            .replace_all(&text, "tool-results/<ID>.txt")
            .into_owned();
        match text.find("\n\nExpected schema:") {
            Some(at) => text[..at].to_string(),
            None => text,
        }
    };
    for (ours, cc) in r.tool_results.iter().zip(cc) {
        assert_eq!(ours["tool_use_id"], cc["tool_use_id"]);
        assert_eq!(mask(ours), mask(cc), "{}", cc["tool_use_id"]);
        assert_eq!(
            ours["is_error"].as_bool().unwrap_or(false),
            cc["is_error"].as_bool().unwrap_or(false),
            "is_error of {}",
            cc["tool_use_id"]
        );
    }
}

/// Read's `1\tline` rendering, the Write/Edit texts (with and without the file in the model's
/// context), `<tool_use_error>` for unknown tools, invalid input and Edit's own checks, the
/// Bash failure text; and every hook's stdin, including Edit's `contentNotInModelContext` and
/// PostToolBatch's copies of those texts.
#[test]
fn file_tool_texts_and_hook_inputs_match() {
    let fx = fixture("texts_files");
    let r = run("texts_files", &[]);
    assert_tool_results_match(&fx, &r);
    assert_hooks_match(&fx, &r, &[]);
}

/// Edit after Read, a saved long Bash output (`(293KB)`, blank line before the preview), a
/// spilled hook context, onFailure-block texts (stderr trimmed; the schema library's wording).
#[test]
fn spill_and_on_failure_texts_match() {
    let fx = fixture("texts_more");
    let r = run("texts_more", &[]);
    assert_tool_results_match(&fx, &r);
    let context = r
        .requests
        .iter()
        .map(|b| b["messages"].to_string())
        .find(|m| m.contains("PostToolUse:Bash hook additional context: <persisted-output>"))
        .expect("the spilled context reached the model");
    assert!(
        context.contains("Output too large (293KB)"),
        "{context:.400}"
    );
}
