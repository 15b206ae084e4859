//! Subagents and model-evaluated hooks through the built binary: the Agent tool, SubagentStart
//! / SubagentStop, every subagent tool call through the parent's hooks and permission rules,
//! parallel subagents, prompt and agent hooks — with the mock model's `agents`/`hooks` script
//! entries, and with loopback OpenAI and Anthropic servers.
//!
//! Every run sets `REIN_GATE_LEDGER` and checks that each tool execution spent a gate pass
//! (`gate_passes == executions`); side-effect files prove what ran and what did not.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::harness::Sandbox;

const FIXTURE: &str = include_str!("../fixtures/subagents/claude-code-2.1.328.json");

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).unwrap()
}

/// The keys of Claude Code's recorded stdin for `name`, without `effort` (rein has no effort
/// setting, so it omits the field, as Claude Code does without one).
fn cc_keys(name: &str) -> Vec<String> {
    fixture()["stdin"][name]
        .as_object()
        .unwrap_or_else(|| panic!("fixture has no stdin {name}"))
        .keys()
        .filter(|k| *k != "effort")
        .cloned()
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

struct Env(Sandbox);

impl std::ops::Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.0
    }
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn env() -> Env {
    let e = Env(Sandbox::new("proj", &["proj/.claude/agents", "proj/hooks"]));
    e.write(
        ".claude/agents/helper.md",
        "---\nname: helper\ndescription: Runs shell commands for the parent\ntools: Bash, Read\n---\nYou run the commands you are given.\n",
    );
    e
}

impl Env {
    /// A hook that appends its stdin to `<project>/<log>` and exits 0.
    fn dump(&self, log: &str) -> String {
        self.script(
            &format!("dump-{log}.sh"),
            &format!("cat >> '{}'", self.project.join(log).display()),
        )
    }

    fn log(&self, name: &str) -> Vec<Value> {
        match std::fs::read_to_string(self.project.join(name)) {
            Ok(t) => t
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn run_with(&self, script: Value, args: &[&str], envs: &[(&str, &str)]) -> Out {
        let path = self.mock(script);
        let mut c = self.rein();
        c.env("IS_SANDBOX", "1")
            .env("REIN_GATE_LEDGER", self.project.join("ledger.json"))
            .args(["-p", "go", "--mock-script"])
            .arg(&path)
            .args(args);
        for (k, v) in envs {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let out = Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        self.check_ledger();
        out
    }

    fn run(&self, script: Value) -> Out {
        self.run_with(script, &["--permission-mode", "bypassPermissions"], &[])
    }

    /// Every execution spent a pass issued after PreToolUse and the permission step.
    fn check_ledger(&self) -> (u64, u64) {
        let text = std::fs::read_to_string(self.project.join("ledger.json")).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let passes = v["gate_passes"].as_u64().unwrap();
        let executions = v["executions"].as_u64().unwrap();
        assert_eq!(
            passes, executions,
            "a tool ran without passing the gate: {v}"
        );
        // For the closing count: `REIN_TEST_LEDGER_SUM=FILE cargo test --test it subagents`
        // appends every run's pair to FILE.
        if let Some(sum) = std::env::var_os("REIN_TEST_LEDGER_SUM") {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(sum)
                .unwrap();
            writeln!(f, "{passes} {executions}").unwrap();
        }
        (passes, executions)
    }

    fn ledger(&self) -> (u64, u64) {
        self.check_ledger()
    }
}

fn hook(command: &str) -> Value {
    json!({"type": "command", "command": command})
}

fn on(matcher: &str, command: &str) -> Value {
    json!([{"matcher": matcher, "hooks": [hook(command)]}])
}

fn agent_call(task: &str, subagent_type: &str) -> Value {
    json!({"name": "Agent", "input": {"description": "delegate", "prompt": task, "subagent_type": subagent_type}})
}

/// The subagent's report: the last text block of an Agent `tool_response`.
fn report(response: &Value) -> &str {
    response["content"]
        .as_array()
        .and_then(|b| b.last())
        .and_then(|b| b["text"].as_str())
        .unwrap_or("")
}

fn is_agent_id(id: &str) -> bool {
    id.len() == 17 && id.starts_with('a') && id[1..].chars().all(|c| c.is_ascii_hexdigit())
}

// ---------- every subagent tool call passes the parent's gate ----------

#[test]
fn subagent_bash_is_denied_by_the_parents_pre_tool_use_hook_with_the_subagent_fields() {
    let e = env();
    let pre = e.script(
        "pre.sh",
        &format!(
            "input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\ncase \"$input\" in *'\"agent_id\"'*'\"tool_name\":\"Bash\"'*) echo 'no Bash in subagents' >&2; exit 2;; esac\nexit 0",
            e.project.join("pre.jsonl").display()
        ),
    );
    e.hooks(json!({
        "PreToolUse": on("*", &pre),
        "PostToolUse": on("Agent", &e.dump("post.jsonl")),
        "SubagentStart": on("", &e.dump("start.jsonl")),
        "SubagentStop": on("", &e.dump("stop.jsonl")),
    }));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-ALPHA: run the command", "helper")]}, {"text": "parent done"}],
        "agents": [{"match": "SUBTASK-ALPHA", "turns": [
            {"tool_use": [{"name": "Bash", "input": {"command": "echo ran >> ran.txt"}}]},
            {"text": "sub finished"}
        ]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("ran.txt"), "the subagent's denied Bash call ran");

    let pre = e.log("pre.jsonl");
    assert_eq!(pre.len(), 2, "{pre:?}");
    let (parent, sub) = (&pre[0], &pre[1]);
    assert_eq!(parent["tool_name"], "Agent");
    assert!(parent.get("agent_id").is_none());
    assert_eq!(sub["tool_name"], "Bash");
    let agent_id = sub["agent_id"].as_str().unwrap();
    assert!(is_agent_id(agent_id), "{agent_id}");
    assert_eq!(sub["agent_type"], "helper");
    // The parent's transcript, prompt and session, as Claude Code puts them.
    assert_eq!(sub["transcript_path"], parent["transcript_path"]);
    assert_eq!(sub["prompt_id"], parent["prompt_id"]);
    assert_eq!(sub["session_id"], parent["session_id"]);
    assert_eq!(keys(sub), cc_keys("PreToolUse-Bash-in-subagent"));

    let start = e.log("start.jsonl");
    assert_eq!(start.len(), 1);
    assert_eq!(keys(&start[0]), cc_keys("SubagentStart"));
    assert_eq!(start[0]["agent_id"], agent_id);
    let stop = e.log("stop.jsonl");
    assert_eq!(stop.len(), 1);
    assert_eq!(keys(&stop[0]), cc_keys("SubagentStop"));
    assert_eq!(stop[0]["last_assistant_message"], "sub finished");
    assert_eq!(stop[0]["stop_hook_active"], false);
    let sub_transcript = stop[0]["agent_transcript_path"].as_str().unwrap();
    assert!(
        sub_transcript.ends_with(&format!("/subagents/agent-{agent_id}.jsonl")),
        "{sub_transcript}"
    );
    let text = std::fs::read_to_string(sub_transcript).unwrap();
    assert!(text.contains("no Bash in subagents"), "{text}");
    assert!(
        text.contains("SUBTASK-ALPHA"),
        "the subagent's own history: {text}"
    );

    let post = e.log("post.jsonl");
    assert_eq!(post.len(), 1);
    let response = &post[0]["tool_response"];
    assert_eq!(response["status"], "completed");
    assert_eq!(response["agentId"], agent_id);
    assert_eq!(response["agentType"], "helper");
    assert_eq!(response["toolsUsed"], json!(["Bash"]));
    assert_eq!(report(response), "sub finished");
    // Claude Code's first block names the tools the subagent used (fixture: PostToolUse-Agent).
    let cc = &fixture()["stdin"]["PostToolUse-Agent"]["tool_response"]["content"][0]["text"];
    assert_eq!(response["content"][0]["text"], *cc);
    // Only the Agent call itself executed.
    assert_eq!(e.ledger(), (1, 1));
}

#[test]
fn subagent_bash_is_denied_by_a_deny_rule_and_the_hook_still_sees_it() {
    let e = env();
    let pre = e.dump("pre.jsonl");
    e.settings(json!({
        "permissions": {"deny": ["Bash(touch:*)"]},
        "hooks": {"PreToolUse": on("Bash", &pre)},
    }));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-DENY: make the file", "helper")]}, {"text": "done"}],
        "agents": [{"match": "SUBTASK-DENY", "turns": [
            {"tool_use": [{"name": "Bash", "input": {"command": "touch victim.txt"}}]},
            {"tool_use": [{"name": "Bash", "input": {"command": "echo allowed >> allowed.txt"}}]},
            {"text": "sub finished"}
        ]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !e.exists("victim.txt"),
        "the deny rule did not hold in the subagent"
    );
    assert!(e.exists("allowed.txt"), "the allowed call should run");
    let pre = e.log("pre.jsonl");
    assert_eq!(pre.len(), 2);
    assert!(
        pre.iter()
            .all(|p| p["agent_type"] == "helper" && p.get("agent_id").is_some())
    );
    // Agent + the allowed Bash call.
    assert_eq!(e.ledger(), (2, 2));
}

#[test]
fn a_subagent_never_gains_a_mode_the_parent_lacks() {
    // Headless, nothing allows Bash or Write. The Agent call needs no approval (as in Claude
    // Code); the subagent's own calls meet the parent's mode: default asks (refused headless),
    // plan refuses, acceptEdits lets the Write through but not the Bash.
    for (mode, wrote) in [("default", false), ("plan", false), ("acceptEdits", true)] {
        let e = env();
        e.write(
            ".claude/agents/writer.md",
            "---\nname: writer\ndescription: writes\n---\nWrite.\n",
        );
        let out = e.run_with(
            json!({
                "turns": [{"tool_use": [agent_call("SUBTASK-MODE: write", "writer")]}, {"text": "done"}],
                "agents": [{"match": "SUBTASK-MODE", "turns": [
                    {"tool_use": [{"name": "Bash", "input": {"command": "tee victim.txt < /dev/null"}}]},
                    {"tool_use": [{"name": "Write", "input": {"file_path": e.path("written.txt").display().to_string(), "content": "x"}}]},
                    {"text": "sub finished"}
                ]}]
            }),
            &["--permission-mode", mode],
            &[],
        );
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        assert!(
            !e.exists("victim.txt"),
            "{mode}: the subagent ran Bash in a mode the parent lacks"
        );
        assert_eq!(e.exists("written.txt"), wrote, "{mode}");
        let runs = if wrote { 2 } else { 1 };
        assert_eq!(e.ledger(), (runs, runs), "{mode}");
    }
}

#[test]
fn subagent_stop_block_makes_the_subagent_continue_once() {
    let e = env();
    let stop = e.script(
        "stop.sh",
        &format!(
            "input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\ncase \"$input\" in *'\"stop_hook_active\":false'*) echo 'check your work' >&2; exit 2;; esac\nexit 0",
            e.project.join("stop.jsonl").display()
        ),
    );
    e.hooks(json!({
        "SubagentStop": on("helper", &stop),
        "PostToolUse": on("Agent", &e.dump("post.jsonl")),
        "Stop": on("", &e.dump("parent-stop.jsonl")),
    }));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-STOP: work", "helper")]}, {"text": "parent done"}],
        "agents": [{"match": "SUBTASK-STOP", "turns": [{"text": "first answer"}, {"text": "checked answer"}]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stops = e.log("stop.jsonl");
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[0]["last_assistant_message"], "first answer");
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[1]["last_assistant_message"], "checked answer");
    let post = e.log("post.jsonl");
    assert_eq!(report(&post[0]["tool_response"]), "checked answer");
    // The subagent saw the feedback in its own history.
    let sub = std::fs::read_to_string(stops[1]["agent_transcript_path"].as_str().unwrap()).unwrap();
    assert!(sub.contains("SubagentStop hook feedback:"), "{sub}");
    assert!(sub.contains("check your work"), "{sub}");
    // The parent's Stop fired once, for the parent's own end.
    let parent = e.log("parent-stop.jsonl");
    assert_eq!(parent.len(), 1);
    assert_eq!(parent[0]["last_assistant_message"], "parent done");
}

#[test]
fn subagent_stop_blocking_forever_is_capped_like_stop() {
    let e = env();
    let stop = e.script(
        "stop.sh",
        &format!(
            "cat >> '{}'\necho >> '{}'\necho 'never done' >&2\nexit 2",
            e.project.join("stop.jsonl").display(),
            e.project.join("stop.jsonl").display()
        ),
    );
    e.hooks(json!({
        "SubagentStop": on("", &stop),
        "PostToolUse": on("Agent", &e.dump("post.jsonl")),
    }));
    let turns: Vec<Value> = (0..10)
        .map(|i| json!({"text": format!("try {i}")}))
        .collect();
    let out = e.run_with(
        json!({
            "turns": [{"tool_use": [agent_call("SUBTASK-CAP: work", "helper")]}, {"text": "parent done"}],
            "agents": [{"match": "SUBTASK-CAP", "turns": turns}]
        }),
        &["--permission-mode", "bypassPermissions"],
        &[("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("parent done"), "{}", out.stdout);
    // Two blocks honoured, the third firing ends the subagent anyway.
    let text = std::fs::read_to_string(e.path("stop.jsonl")).unwrap();
    let fired: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(fired.len(), 3, "{text}");
    assert_eq!(report(&e.log("post.jsonl")[0]["tool_response"]), "try 2");
    assert!(
        out.stderr
            .contains("SubagentStop hooks kept the turn going 2 times in a row"),
        "{}",
        out.stderr
    );
}

// ---------- parallel subagents ----------

#[test]
fn parallel_subagents_run_concurrently_and_a_hanging_one_costs_only_its_result() {
    let e = env();
    e.hooks(json!({
        "PostToolUse": on("Agent", &e.dump("post.jsonl")),
        "PostToolUseFailure": on("Agent", &e.dump("failure.jsonl")),
    }));
    // A waits (up to 20 s) for the file B makes, records that it saw it, then hangs. Run one
    // after the other, A would wait in vain and be stopped before B ever started.
    let wait_for_b = "for i in $(seq 200); do [ -f b.txt ] && { echo seen > a-saw-b.txt; exit 0; }; sleep 0.1; done; exit 1";
    let out = e.run_with(
        json!({
            "turns": [
                {"tool_use": [agent_call("SUBTASK-A: wait", "helper"), agent_call("SUBTASK-B: make", "helper")]},
                {"text": "parent done"}
            ],
            "agents": [
                {"match": "SUBTASK-A", "turns": [
                    {"tool_use": [{"name": "Bash", "input": {"command": wait_for_b}}]},
                    {"hang": true}
                ]},
                {"match": "SUBTASK-B", "turns": [
                    {"tool_use": [{"name": "Bash", "input": {"command": "touch b.txt"}}]},
                    {"text": "B done"}
                ]}
            ]
        }),
        &["--permission-mode", "bypassPermissions"],
        &[("REIN_SUBAGENT_TIMEOUT_MS", "4000")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(e.exists("b.txt"));
    assert!(
        e.exists("a-saw-b.txt"),
        "the two subagents did not run at the same time"
    );
    let post = e.log("post.jsonl");
    assert_eq!(post.len(), 1, "{post:?}");
    assert_eq!(report(&post[0]["tool_response"]), "B done");
    let failure = e.log("failure.jsonl");
    assert_eq!(failure.len(), 1, "{failure:?}");
    let error = failure[0]["error"].as_str().unwrap();
    assert!(error.contains("did not finish within 4000 ms"), "{error}");
    assert!(out.stdout.contains("parent done"), "{}", out.stdout);
    // Agent ×2, A's Bash, B's Bash.
    assert_eq!(e.ledger(), (4, 4));
}

// ---------- bad input ----------

#[test]
fn unknown_subagent_type_fails_with_claude_codes_text() {
    let e = env();
    e.hooks(json!({"PostToolUseFailure": on("Agent", &e.dump("failure.jsonl"))}));
    let out = e.run(json!([{"tool_use": [agent_call("x", "no-such-agent")]}, {"text": "done"}]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let failure = e.log("failure.jsonl");
    assert_eq!(
        failure[0]["error"],
        "Agent type 'no-such-agent' not found. Available agents: Explore, general-purpose, helper"
    );
    // Claude Code's text, with its own list of agents (recorded in the fixture).
    let cc = fixture()["tool_results"]["toolu_01Oracle01x00"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(cc.starts_with("Agent type 'no-such-agent' not found. Available agents: "));
}

#[test]
fn a_definition_with_bad_front_matter_is_named_by_file_and_line_and_skipped() {
    let e = env();
    e.write(
        ".claude/agents/broken.md",
        "---\nname: broken\ndescription oops no colon\n---\nbody\n",
    );
    e.write(
        ".claude/agents/unclosed.md",
        "---\nname: unclosed\ndescription: d\n",
    );
    e.hooks(json!({"PostToolUse": on("Agent", &e.dump("post.jsonl"))}));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-OK: hi", "helper")]}, {"text": "done"}],
        "agents": [{"match": "SUBTASK-OK", "turns": [{"text": "helper works"}]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let broken = e.path(".claude/agents/broken.md");
    assert!(
        out.stderr.contains(&format!(
            "{}:3: expected `key: value`, found `description oops no colon`; agent definition skipped",
            broken.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("unclosed.md:3: front matter is not closed"),
        "{}",
        out.stderr
    );
    assert_eq!(
        report(&e.log("post.jsonl")[0]["tool_response"]),
        "helper works"
    );
}

#[test]
fn agents_flag_defines_a_type_with_its_own_tools() {
    let e = env();
    e.hooks(json!({"PreToolUse": on("*", &e.dump("pre.jsonl"))}));
    let agents =
        json!({"reader": {"description": "reads", "prompt": "Read files.", "tools": ["Read"]}})
            .to_string();
    let out = e.run_with(
        json!({
            "turns": [{"tool_use": [agent_call("SUBTASK-READER: go", "reader")]}, {"text": "done"}],
            "agents": [{"match": "SUBTASK-READER", "turns": [
                {"tool_use": [{"name": "Bash", "input": {"command": "touch victim.txt"}}]},
                {"text": "no bash for me"}
            ]}]
        }),
        &[
            "--permission-mode",
            "bypassPermissions",
            "--agents",
            &agents,
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Bash is not among the reader's tools: no such tool, no hook, no execution.
    assert!(!e.exists("victim.txt"));
    let pre = e.log("pre.jsonl");
    assert_eq!(pre.len(), 1, "{pre:?}");
    assert_eq!(e.ledger(), (1, 1));
}

// ---------- prompt and agent hooks ----------

#[test]
fn a_prompt_hook_answering_ok_false_denies_the_call_and_ends_the_turn() {
    let e = env();
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "PH-DENY is this safe? $ARGUMENTS"}
    ]}]}));
    let out = e.run(json!({
        "turns": [{"tool_use": [{"name": "Bash", "input": {"command": "touch victim.txt"}}]}, {"text": "NEVER-SEEN"}],
        "hooks": [{"match": "PH-DENY", "answer": {"text": "{\"ok\": false, \"reason\": \"too risky\"}"}}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("victim.txt"));
    let transcript = std::fs::read_to_string(&e.transcript_files()[0]).unwrap();
    // Claude Code's text (tests/fixtures/subagents: prompt_hook_outcomes).
    assert!(
        transcript
            .contains("PreToolUse:Bash hook error: [PH-DENY is this safe? $ARGUMENTS]: too risky"),
        "{transcript}"
    );
    // As in Claude Code, the turn ends: the model is not asked again.
    assert!(!out.stdout.contains("NEVER-SEEN"), "{}", out.stdout);
    assert_eq!(e.ledger(), (0, 0));
}

#[test]
fn a_prompt_hook_whose_model_answers_prose_fails_open_with_a_reason() {
    let e = env();
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "PH-PROSE check $ARGUMENTS"}
    ]}]}));
    let prose = "Sure, that command looks perfectly fine to me. ".repeat(10);
    let out = e.run(json!({
        "turns": [{"tool_use": [{"name": "Bash", "input": {"command": "touch ran.txt"}}]}, {"text": "done"}],
        "hooks": [{"match": "PH-PROSE", "answer": {"text": prose}}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(e.exists("ran.txt"), "a malformed verdict must not block");
    let first_200: String = prose.trim().chars().take(200).collect();
    assert!(
        out.stderr
            .contains("PreToolUse:Bash hook error: the model's answer is not"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&first_200), "{}", out.stderr);
    assert!(
        !out.stderr.contains(prose.trim()),
        "more than 200 characters shown"
    );
    assert_eq!(e.ledger(), (1, 1));
}

#[test]
fn a_prompt_hook_whose_model_fails_is_a_non_blocking_error_unless_on_failure_block() {
    let e = env();
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "PH-ERR check $ARGUMENTS"}
    ]}]}));
    let script = json!({
        "turns": [{"tool_use": [{"name": "Bash", "input": {"command": "touch ran.txt"}}]}, {"text": "done"}],
        "hooks": [{"match": "PH-ERR", "answer": {"error": "overloaded", "message": "busy"}}]
    });
    let out = e.run(script.clone());
    assert!(e.exists("ran.txt"));
    assert!(
        out.stderr.contains("Hook evaluator API error:"),
        "{}",
        out.stderr
    );

    std::fs::remove_file(e.path("ran.txt")).unwrap();
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "PH-ERR check $ARGUMENTS", "onFailure": "block"}
    ]}]}));
    let out = e.run(script);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !e.exists("ran.txt"),
        "onFailure: block must refuse the call"
    );
}

#[test]
fn a_stop_prompt_hook_answering_ok_false_keeps_the_turn_going_with_feedback() {
    let e = env();
    e.hooks(json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "PH-STOP tests pass? $ARGUMENTS"}]}]}));
    let out = e.run_with(
        json!({
            "turns": [{"text": "first"}, {"text": "second"}, {"text": "third"}],
            "hooks": [{"match": "PH-STOP", "answer": {"text": "{\"ok\": false, \"reason\": \"run the tests first\"}"}}]
        }),
        &["--permission-mode", "bypassPermissions"],
        &[("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let transcript = std::fs::read_to_string(&e.transcript_files()[0]).unwrap();
    assert!(
        transcript.contains(
            "Stop hook feedback:\\n[PH-STOP tests pass? $ARGUMENTS]: run the tests first"
        ),
        "{transcript}"
    );
    assert!(out.stdout.contains("third"), "{}", out.stdout);
}

#[test]
fn an_agent_hook_investigates_with_read_only_tools_then_denies() {
    let e = env();
    e.write("policy.txt", "no touching\n");
    e.hooks(json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "agent", "prompt": "AH-CHECK read policy.txt and judge $ARGUMENTS"}
        ]},
        {"matcher": "*", "hooks": [hook(&e.dump("pre.jsonl"))]}
    ]}));
    let out = e.run(json!({
        "turns": [{"tool_use": [{"name": "Bash", "input": {"command": "touch victim.txt"}}]}, {"text": "NEVER-SEEN"}],
        "agents": [{"match": "AH-CHECK", "turns": [
            {"tool_use": [{"name": "Read", "input": {"file_path": e.path("policy.txt").display().to_string()}}]},
            {"tool_use": [{"name": "Bash", "input": {"command": "touch agent-hook-ran-bash.txt"}}]},
            {"text": "{\"ok\": false, \"reason\": \"policy says no touching\"}"}
        ]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!e.exists("victim.txt"));
    assert!(
        !e.exists("agent-hook-ran-bash.txt"),
        "an agent hook got a writing tool"
    );
    let transcript = std::fs::read_to_string(&e.transcript_files()[0]).unwrap();
    assert!(
        transcript.contains("]: policy says no touching"),
        "{transcript}"
    );
    // The agent hook's own Read went through the command hooks too (not through itself).
    let pre = e.log("pre.jsonl");
    assert_eq!(pre.len(), 2, "{pre:?}");
    // Both hooks of the Bash call run at once, so the two lines come in either order.
    let read = pre.iter().find(|p| p["tool_name"] == "Read").unwrap();
    let bash = pre.iter().find(|p| p["tool_name"] == "Bash").unwrap();
    assert_eq!(read["agent_type"], "hook");
    assert!(is_agent_id(read["agent_id"].as_str().unwrap()));
    assert!(bash.get("agent_id").is_none());
    // Only the agent hook's Read executed, after the permission step.
    assert_eq!(e.ledger(), (1, 1));
}

#[test]
fn agent_hooks_on_permission_request_are_rejected_at_load() {
    let e = env();
    e.hooks(json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [
        {"type": "agent", "prompt": "judge $ARGUMENTS"}
    ]}]}));
    let out = e.run(json!([{"text": "done"}]));
    assert!(
        out.stderr
            .contains("agent hooks are not allowed on PermissionRequest"),
        "{}",
        out.stderr
    );
}

// ---------- loopback providers: the hook's request and the subagent's own requests ----------

/// A loopback server for `/v1/chat/completions` (OpenAI) and `/v1/messages` (Anthropic, SSE)
/// that answers each request by looking at it (`reply`), and records every body.
struct Loopback {
    base: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// What to answer: `Ok(text)` or `Err((id, tool, input))` for one tool call.
type Reply = Result<String, (String, String, Value)>;

fn first_user_text(body: &Value) -> String {
    let Some(m) = body["messages"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    m.to_string()
}

fn assistants(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map(|ms| ms.iter().filter(|m| m["role"] == "assistant").count())
        .unwrap_or(0)
}

fn tool_names(body: &Value, anthropic: bool) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    if anthropic {
                        t["name"].as_str().unwrap_or("").to_string()
                    } else {
                        t["function"]["name"].as_str().unwrap_or("").to_string()
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The scenario both providers play: the parent delegates to `scout` (which reads a file),
/// then runs Bash under a PreToolUse prompt hook that allows it, then ends.
fn scenario(body: &Value, project: &str) -> Reply {
    let first = first_user_text(body);
    if first.contains("You judge one hook event") {
        return Ok(r#"{"ok": true, "reason": "loopback allows"}"#.to_string());
    }
    if first.contains("LOOP-SUB") {
        return match assistants(body) {
            0 => Err((
                "call_sub_read".into(),
                "Read".into(),
                json!({"file_path": format!("{project}/notes.md")}),
            )),
            _ => Ok("sub report: notes say hello".into()),
        };
    }
    match assistants(body) {
        0 => Err((
            "call_agent".into(),
            "Agent".into(),
            json!({"description": "read notes", "prompt": "LOOP-SUB: read notes.md", "subagent_type": "scout"}),
        )),
        1 => Err((
            "call_bash".into(),
            "Bash".into(),
            json!({"command": "echo ran >> ran.txt"}),
        )),
        _ => Ok("all done".into()),
    }
}

impl Loopback {
    fn start(project: String) -> Loopback {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let project = project.clone();
                let recorded = recorded.clone();
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 8192];
                    let head_end = loop {
                        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break p + 4;
                        }
                        match stream.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let len: usize = head
                        .to_ascii_lowercase()
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:").map(str::to_string))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + len {
                        match stream.read(&mut chunk) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body: Value =
                        serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                    let anthropic = head.contains("/v1/messages");
                    recorded.lock().unwrap().push(body.clone());
                    let reply = scenario(&body, &project);
                    let (ctype, payload) = if anthropic {
                        ("text/event-stream", anthropic_sse(reply))
                    } else {
                        ("application/json", openai_json(reply))
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
                        payload.len()
                    );
                });
            }
        });
        Loopback { base, requests }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn openai_json(reply: Reply) -> String {
    let (message, finish) = match reply {
        Ok(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Err((id, name, input)) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()}
            }]}),
            "tool_calls",
        ),
    };
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "loop-model",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    .to_string()
}

fn anthropic_sse(reply: Reply) -> String {
    let mut out = String::new();
    let mut ev = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_loop", "type": "message", "role": "assistant",
            "model": "loop-model", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    let stop = match reply {
        Ok(text) => {
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            );
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            );
            "end_turn"
        }
        Err((id, name, input)) => {
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            );
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            );
            "tool_use"
        }
    };
    ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}

/// The system prompt a request carries: Anthropic's `system`, OpenAI's system message.
fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(text) => return text.clone(),
        Value::Array(blocks) => {
            return blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
        }
        _ => {}
    }
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn loopback_run(provider: &str) {
    let e = env();
    e.write("notes.md", "hello\n");
    e.write("CLAUDE.md", "LOOP-PROJECT-MEMORY: answer in English\n");
    std::fs::create_dir_all(e.home.join(".claude")).unwrap();
    std::fs::write(
        e.home.join(".claude/CLAUDE.md"),
        "LOOP-USER-MEMORY: be brief\n",
    )
    .unwrap();
    e.write(
        ".claude/agents/scout.md",
        "---\nname: scout\ndescription: Reads files\ntools: Read, Glob, Grep\nmodel: sub-model\n---\nRead what you are asked to.\n",
    );
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "LOOP-PH is this command safe? $ARGUMENTS", "model": "judge-model"}
    ]}]}));
    let server = Loopback::start(e.project.display().to_string());
    let mut c = e.rein();
    c.env("IS_SANDBOX", "1")
        .env("REIN_MAX_RETRIES", "0")
        .env("REIN_GATE_LEDGER", e.project.join("ledger.json"))
        .args(["-p", "go", "--provider", provider, "--model", "loop-model"])
        .args(["--permission-mode", "bypassPermissions"]);
    let anthropic = provider == "anthropic";
    if anthropic {
        c.env("ANTHROPIC_BASE_URL", &server.base)
            .env("ANTHROPIC_API_KEY", "test-key");
    } else {
        c.env("OPENAI_BASE_URL", format!("{}/v1", server.base))
            .env("OPENAI_API_KEY", "test-key");
    }
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("all done"));
    assert!(e.exists("ran.txt"), "the prompt hook allowed the call");
    assert_eq!(e.check_ledger(), (3, 3), "Agent, the subagent's Read, Bash");

    let requests = server.requests();
    // The subagent's own requests: its task first, no trace of the parent's prompt, its type's
    // tools only (Explore: Read, Glob, Grep), and its own tool result in its second request.
    let sub: Vec<&Value> = requests
        .iter()
        .filter(|b| first_user_text(b).contains("LOOP-SUB"))
        .collect();
    assert_eq!(sub.len(), 2, "{requests:#?}");
    assert_eq!(tool_names(sub[0], anthropic), ["Read", "Glob", "Grep"]);
    // On the model its definition names, same provider.
    assert_eq!(sub[0]["model"], "sub-model");
    assert_eq!(sub[1]["model"], "sub-model");
    assert_eq!(
        sub[0]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .count(),
        1,
        "own history: {}",
        sub[0]
    );
    assert!(!first_user_text(sub[0]).contains("\"go\""));
    // Its system prompt, as Claude Code builds a subagent's (fixture
    // tests/fixtures/subagents/system-prompt-2.1.328.json): its type's prompt first, then
    // how to report, the environment and the session's memory files (user, then project);
    // not the parent's own prompt. The type's prompt is no longer in the task message.
    let system = system_text(sub[0]);
    assert!(
        system.starts_with("Read what you are asked to.\n\n# Working as a subagent\n"),
        "{system}"
    );
    let order = [
        "# Environment\n",
        &format!("- Working directory: {}\n", e.project.display()),
        "- Model: sub-model",
        "LOOP-USER-MEMORY: be brief",
        "LOOP-PROJECT-MEMORY: answer in English",
    ];
    let mut at = 0;
    for want in order {
        let found = system[at..].find(want).unwrap_or_else(|| {
            panic!("{want:?} not in order in the subagent's system prompt:\n{system}")
        });
        at += found + want.len();
    }
    assert!(!system.contains("You are rein"), "{system}");
    assert_eq!(
        system_text(sub[1]),
        system,
        "the same prompt on every request"
    );
    assert!(!first_user_text(sub[0]).contains("Read what you are asked to."));
    // The parent's own prompt is rein's, with the same memory files.
    let parent_system = system_text(&requests[0]);
    assert!(parent_system.starts_with("You are rein"), "{parent_system}");
    assert!(parent_system.contains("LOOP-PROJECT-MEMORY"));
    assert!(
        sub[1].to_string().contains("hello"),
        "the subagent's Read result: {}",
        sub[1]
    );
    // The parent's requests offer Agent; its history has the subagent's report, not its reads.
    let main: Vec<&Value> = requests
        .iter()
        .filter(|b| tool_names(b, anthropic).contains(&"Agent".to_string()))
        .collect();
    assert_eq!(main.len(), 3, "{requests:#?}");
    let after_agent = main[1].to_string();
    assert!(after_agent.contains("sub report: notes say hello"));
    assert!(!after_agent.contains("call_sub_read"));
    // The prompt hook's request: no tools, the hook's prompt with the event JSON in place of
    // $ARGUMENTS.
    let hook: Vec<&Value> = requests
        .iter()
        .filter(|b| first_user_text(b).contains("LOOP-PH"))
        .collect();
    assert_eq!(hook.len(), 1, "{requests:#?}");
    assert!(tool_names(hook[0], anthropic).is_empty());
    assert_eq!(hook[0]["model"], "judge-model");
    assert!(main.iter().all(|b| b["model"] == "loop-model"));
    let question = first_user_text(hook[0]);
    assert!(
        question.contains("LOOP-PH is this command safe? {"),
        "{question}"
    );
    assert!(
        question.contains(r#"\"hook_event_name\":\"PreToolUse\""#),
        "{question}"
    );
    assert!(
        question.contains(r#"\"command\":\"echo ran >> ran.txt\""#),
        "{question}"
    );
    assert!(!question.contains("$ARGUMENTS"));
}

#[test]
fn loopback_openai_shows_the_prompt_hook_request_and_the_subagents_own_requests() {
    loopback_run("openai");
}

#[test]
fn loopback_anthropic_shows_the_prompt_hook_request_and_the_subagents_own_requests() {
    loopback_run("anthropic");
}

#[test]
fn subagent_start_context_reaches_the_subagent_and_matchers_see_the_agent_type() {
    let e = env();
    let ctx = e.script(
        "ctx.sh",
        r#"cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CTX-FOR-SUB"}}'"#,
    );
    e.hooks(json!({
        "SubagentStart": [
            {"matcher": "helper", "hooks": [hook(&ctx)]},
            {"matcher": "Explore", "hooks": [hook(&e.dump("explore.jsonl"))]}
        ],
        "SubagentStop": on("", &e.dump("stop.jsonl")),
        // `Task` is the Agent tool's former name: the matcher still catches it.
        "PreToolUse": on("Task", &e.dump("task.jsonl")),
    }));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-CTX: hi", "helper")]}, {"text": "done"}],
        "agents": [{"match": "SUBTASK-CTX", "turns": [{"text": "sub done"}]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        e.log("explore.jsonl").is_empty(),
        "a matcher on another agent type fired"
    );
    assert_eq!(e.log("task.jsonl").len(), 1);
    let stop = e.log("stop.jsonl");
    let sub = std::fs::read_to_string(stop[0]["agent_transcript_path"].as_str().unwrap()).unwrap();
    assert!(sub.contains("CTX-FOR-SUB"), "{sub}");
}

#[test]
fn a_deny_rule_on_task_refuses_the_agent_call_before_any_subagent_starts() {
    let e = env();
    e.settings(json!({
        "permissions": {"deny": ["Task"]},
        "hooks": {"SubagentStart": on("", &e.dump("start.jsonl"))},
    }));
    let out = e.run(json!({
        "turns": [{"tool_use": [agent_call("SUBTASK-NO: touch", "helper")]}, {"text": "done"}],
        "agents": [{"match": "SUBTASK-NO", "turns": [
            {"tool_use": [{"name": "Bash", "input": {"command": "touch victim.txt"}}]},
            {"text": "sub done"}
        ]}]
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(e.log("start.jsonl").is_empty());
    assert!(!e.exists("victim.txt"));
    assert_eq!(e.ledger(), (0, 0));
}

/// The JSON blocks of docs/subagents.md, in order.
fn doc_json_blocks() -> Vec<Value> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/subagents.md")).unwrap();
    doc.split("```json\n")
        .skip(1)
        .map(|rest| serde_json::from_str(rest.split("```").next().unwrap()).unwrap())
        .collect()
}

#[test]
fn the_docs_example_settings_and_mock_script_play_as_described() {
    let e = env();
    let blocks = doc_json_blocks();
    assert_eq!(blocks.len(), 2);
    let mut settings = blocks[0].clone();
    settings["hooks"]["PostToolUse"] = on("Agent", &e.dump("post.jsonl"));
    e.settings(settings);
    let out = e.run(blocks[1].clone());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        report(&e.log("post.jsonl")[0]["tool_response"]),
        "two files"
    );
    let transcript = std::fs::read_to_string(&e.transcript_files()[0]).unwrap();
    assert!(
        transcript.contains(
            "PreToolUse:Bash hook error: [Is this command safe to run in CI? $ARGUMENTS]: not in CI"
        ),
        "{transcript}"
    );
    // Agent and the subagent's Glob ran; the refused Bash did not.
    assert_eq!(e.ledger(), (2, 2));
}
