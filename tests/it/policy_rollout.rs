//! Policy rollout (issue 27): `rein hooks replay` over Claude Code's and rein's transcripts,
//! checked against a live run of the same settings; shadow mode through the binary, checked on
//! the file system.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, say, write};

fn tool(name: &str, input: Value) -> Value {
    json!({"tool_use": [{"name": name, "input": input}]})
}

/// A PreToolUse Bash hook that refuses `rm` (exit 2), in bash.
const NO_RM: &str = r#"input=$(cat)
case "$input" in *'"rm '*|*'rm -'*) echo "rm is not allowed here" >&2; exit 2;; esac
exit 0"#;

/// A PreToolUse Write hook, in python: rewrites the content to upper case and adds context.
const SHOUT_PY: &str = r#"#!/usr/bin/env python3
import json, sys
d = json.load(sys.stdin)
ti = dict(d["tool_input"])
ti["content"] = ti.get("content", "").upper()
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
    "permissionDecision": "allow", "updatedInput": ti,
    "additionalContext": "contents are shouted"}}))
"#;

/// Settings that let every call run (user tier: no trust needed).
fn permissive(s: &Sandbox) {
    write(
        &s.home.join(".claude/settings.json"),
        &json!({"permissions": {"allow": ["Bash", "Read", "Write"]}}).to_string(),
    );
}

/// The policy under test: hooks in the project, a deny rule in the user's settings.
fn policy(s: &Sandbox) {
    let no_rm = s.script("no-rm.sh", NO_RM);
    let shout = s.raw_script("shout.py", SHOUT_PY.as_bytes());
    s.hooks(json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": no_rm}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": shout}]}
        ]
    }));
    write(
        &s.home.join(".claude/settings.json"),
        &json!({"permissions": {
            "allow": ["Bash", "Read", "Write"],
            "deny": ["Read(./secrets.txt)"]
        }})
        .to_string(),
    );
}

fn steps() -> Vec<Value> {
    vec![
        bash("echo fine"),
        bash("rm -f victim"),
        tool("Read", json!({"file_path": "secrets.txt"})),
        tool(
            "Write",
            json!({"file_path": "notes.txt", "content": "quiet words"}),
        ),
        bash("touch made-by-a-tool"),
        say("done"),
    ]
}

fn run_session(s: &Sandbox) -> std::process::Output {
    let script = s.mock(Value::Array(steps()));
    s.rein()
        .args(["-p", "go", "--mock-script"])
        .arg(&script)
        .output()
        .unwrap()
}

/// The newest transcript of the sandbox.
fn newest_transcript(s: &Sandbox, before: &[PathBuf]) -> PathBuf {
    s.transcript_files()
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new transcript")
}

/// tool_use_id → (tool name, refused?) from a transcript, in call order.
fn outcomes(transcript: &Path) -> Vec<(String, String, bool)> {
    let text = std::fs::read_to_string(transcript).unwrap();
    let mut names = std::collections::HashMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(blocks) = v["message"]["content"].as_array() else {
            continue;
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("tool_use") => {
                    names.insert(
                        b["id"].as_str().unwrap().to_string(),
                        b["name"].as_str().unwrap().to_string(),
                    );
                }
                Some("tool_result") => {
                    let id = b["tool_use_id"].as_str().unwrap().to_string();
                    let refused = v.get("toolDenialKind").is_some()
                        || v["permissionDecision"]["decision"] == "reject"
                        || (b["is_error"] == true
                            && (b["content"]
                                .as_str()
                                .unwrap_or("")
                                .starts_with("PreToolUse:")
                                || b["content"]
                                    .as_str()
                                    .unwrap_or("")
                                    .contains("denied by your permission settings")));
                    out.push((id.clone(), names[&id].clone(), refused));
                }
                _ => {}
            }
        }
    }
    out
}

fn replay(s: &Sandbox, args: &[&str]) -> (Vec<Value>, Value, std::process::Output) {
    let out = s
        .rein()
        .args(["hooks", "replay", "--json"])
        .args(args)
        .output()
        .unwrap();
    let mut events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = events.pop().expect("a summary line")["summary"].clone();
    (events, summary, out)
}

#[test]
fn replay_decides_each_call_as_a_live_run_of_the_same_settings_does() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    s.write("secrets.txt", "hunter2");
    s.write("victim", "precious");
    // 1. The past: a session under permissive settings, where every call ran.
    permissive(&s);
    let out = run_session(&s);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let past = newest_transcript(&s, &[]);
    assert!(!s.exists("victim"), "the permissive session ran rm");
    assert!(outcomes(&past).iter().all(|(_, _, refused)| !refused));
    // 2. The same session live under the policy.
    policy(&s);
    s.write("victim", "precious");
    std::fs::remove_file(s.path("made-by-a-tool")).unwrap();
    let before = s.transcript_files();
    let out = run_session(&s);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s.exists("victim"), "the policy kept the victim");
    let live = outcomes(&newest_transcript(&s, &before));
    std::fs::remove_file(s.path("made-by-a-tool")).unwrap();
    // 3. The past replayed under the policy: the same decision for every call.
    let (events, summary, out) = replay(&s, &[past.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "a call would now be refused");
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "PreToolUse")
        .collect();
    assert_eq!(calls.len(), live.len());
    for (call, (_, name, live_refused)) in calls.iter().zip(&live) {
        assert_eq!(call["tool"], name.as_str());
        assert_eq!(
            call["refused"], *live_refused,
            "replay and the live run disagree on {call}"
        );
        assert_eq!(call["then"], "ran");
    }
    let by_name = |n: &str| calls.iter().find(|c| c["tool"] == n).unwrap();
    assert_eq!(calls[1]["now"], "deny");
    assert!(
        calls[1]["reason"]
            .as_str()
            .unwrap()
            .contains("rm is not allowed here")
    );
    assert!(
        calls[1]["by"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("no-rm.sh")
    );
    assert!(
        calls[1]["by"][0]["origin"]
            .as_str()
            .unwrap()
            .contains(".claude/settings.json:")
    );
    assert_eq!(by_name("Read")["now"], "deny", "the deny rule");
    assert_eq!(by_name("Read")["by"], json!([]), "a rule, not a hook");
    let write_call = by_name("Write");
    assert_eq!(write_call["now"], "allow");
    assert_eq!(write_call["rewritten_input"]["content"], "QUIET WORDS");
    assert!(
        write_call["context"][0]
            .as_str()
            .unwrap()
            .contains("contents are shouted")
    );
    assert_eq!(summary["calls"], 5);
    assert_eq!(summary["newly_refused"], 2);
    assert_eq!(summary["by_rules"]["deny"], 1);
    // Replay ran no tool: the victim is still there and nothing was touched or written.
    assert!(s.exists("victim"));
    assert!(!s.exists("made-by-a-tool"), "replay ran a tool");
}

/// The Claude Code fixtures (`tests/fixtures/cc-2.1.328/transcripts/`): tr_block refused a
/// Bash call with a hook and read a file; tr_hooks ran a Bash call.
#[test]
fn replay_reads_claude_codes_transcripts_and_gives_hooks_the_recorded_call() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc-2.1.328/transcripts");
    let seen = s.path("seen.jsonl");
    let log = s.script(
        "log.sh",
        &format!("cat >> '{}'; echo >> '{}'", seen.display(), seen.display()),
    );
    let no_rm = s.script(
        "no-echo.sh",
        "grep -q '\"echo ' && { echo 'no echo' >&2; exit 2; }; exit 0",
    );
    let block_prompt = s.script(
        "prompt.sh",
        "grep -q 'try things' && { echo '{\"decision\":\"block\",\"reason\":\"not today\"}'; }; exit 0",
    );
    s.hooks(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": no_rm}]}],
        "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": log}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": block_prompt}]}]
    }));
    let (events, summary, out) = replay(&s, &[fixtures.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let bash: Vec<&Value> = events.iter().filter(|e| e["tool"] == "Bash").collect();
    assert_eq!(bash.len(), 2);
    let block = bash
        .iter()
        .find(|e| e["file"].as_str().unwrap().ends_with("tr_block.jsonl"))
        .unwrap();
    assert_eq!(block["then"], "refused");
    assert_eq!(block["now"], "deny");
    let hooks = bash
        .iter()
        .find(|e| e["file"].as_str().unwrap().ends_with("tr_hooks.jsonl"))
        .unwrap();
    assert_eq!(hooks["then"], "ran");
    assert_eq!(hooks["now"], "deny");
    let read = events.iter().find(|e| e["tool"] == "Read").unwrap();
    assert_eq!(read["now"], "allow");
    let prompt = events
        .iter()
        .find(|e| {
            e["event"] == "UserPromptSubmit"
                && e["file"].as_str().unwrap().ends_with("tr_block.jsonl")
        })
        .unwrap();
    assert_eq!(prompt["now"], "block");
    assert_eq!(summary["files"], 3);
    // The PostToolUse hook got the call as recorded, and the recorded tool_response.
    let fixture: Vec<Value> = std::fs::read_to_string(fixtures.join("tr_block.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let recorded = fixture
        .iter()
        .find(|l| l["toolUseResult"]["type"] == "text")
        .expect("the Read result line")["toolUseResult"]
        .clone();
    let seen: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 1, "one Read call");
    assert_eq!(seen[0]["hook_event_name"], "PostToolUse");
    assert_eq!(seen[0]["tool_input"], read["input"]);
    assert_eq!(seen[0]["tool_response"], recorded);
    assert_eq!(seen[0]["session_id"], "<SESSION>");
    assert!(
        seen[0]["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with("tr_block.jsonl")
    );
}

#[test]
fn replay_reports_bad_lines_by_file_and_line_and_goes_on_past_a_hanging_hook() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let hang = s.script("hang.sh", "grep -q slow && sleep 30; exit 0");
    let no_rm = s.script("no-rm.sh", NO_RM);
    s.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": hang, "timeout": 1},
        {"type": "command", "command": no_rm}
    ]}]}));
    let call = |id: &str, cmd: &str| {
        json!({"type": "assistant", "sessionId": "s1", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd}}]}})
        .to_string()
    };
    let result = |id: &str| {
        json!({"type": "user", "sessionId": "s1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": false}]}})
        .to_string()
    };
    let text = [
        call("t1", "echo slow"),
        "{not json at all".to_string(),
        result("t1"),
        call("t2", "rm -rf /tmp/x"),
        result("t2"),
        call("t3", "rm -f later"),
    ]
    .join("\n")
        + "\n{\"type\": \"user\", \"sessionId\"";
    let file = s.path("cut.jsonl");
    std::fs::write(&file, text).unwrap();
    let started = std::time::Instant::now();
    let (events, summary, out) = replay(&s, &[file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut.jsonl:2: not a JSON line"), "{stderr}");
    assert!(
        stderr.contains("cut.jsonl:7: the file ends inside this line"),
        "{stderr}"
    );
    assert_eq!(summary["bad_lines"], 2);
    assert_eq!(events.len(), 3, "three calls: {events:?}");
    assert_eq!(
        events[0]["now"], "allow",
        "the hanging hook timed out: non-blocking"
    );
    assert_eq!(events[1]["now"], "deny");
    assert_eq!(events[2]["then"], "no_result");
    assert_eq!(events[2]["now"], "deny");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the hang was cut at its timeout"
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn dry_hooks_lists_the_handlers_and_runs_none() {
    let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
    let marker = s.path("hook-ran");
    let touch = s.script("touch.sh", &format!("touch '{}'", marker.display()));
    s.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch}]}]}));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cc-2.1.328/transcripts/tr_hooks.jsonl");
    let (events, _, out) = replay(&s, &["--dry-hooks", fixture.to_str().unwrap()]);
    assert!(!marker.exists(), "--dry-hooks ran a hook");
    let bash = events.iter().find(|e| e["tool"] == "Bash").unwrap();
    assert_eq!(bash["would_run"].as_array().unwrap().len(), 1);
    assert!(bash["would_run"][0].as_str().unwrap().contains("touch.sh"));
    // `echo hi` is read-only: the rules alone let it run; the hooks are not judged.
    assert_eq!(bash["now"], "unjudged");
    assert_eq!(out.status.code(), Some(0));
    // And for real, the hook runs.
    let (_, _, _) = replay(&s, &[fixture.to_str().unwrap()]);
    assert!(marker.exists());
}

/// Shadow mode through the binary: under `--hooks-shadow` (or `"shadow": true`) the blocking
/// hook's refusal is recorded and not applied, so the victim is deleted; without it the victim
/// survives. A deny rule is never shadowed.
#[test]
fn shadow_mode_records_a_refusal_and_does_not_apply_it() {
    for how in ["flag", "handler key", "file key", "enforced"] {
        let s = Sandbox::new("proj", &["proj/.claude", "proj/hooks"]);
        permissive(&s);
        s.write("victim", "precious");
        s.write("kept", "precious");
        let no_rm = s.script("no-rm.sh", NO_RM);
        let mut handler = json!({"type": "command", "command": no_rm});
        if how == "handler key" {
            handler["shadow"] = json!(true);
        }
        let mut settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]},
            "permissions": {"deny": ["Bash(rm -f kept)"]}});
        if how == "file key" {
            settings["hooksShadow"] = json!(true);
        }
        s.settings(settings);
        let script = s.mock(json!([
            bash("rm -f victim"),
            bash("rm -f kept"),
            say("done")
        ]));
        let mut cmd = s.rein();
        cmd.args([
            "-p",
            "go",
            "--trust",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            "--mock-script",
        ])
        .arg(&script);
        if how == "flag" {
            cmd.arg("--hooks-shadow");
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{how}: {stderr}");
        assert!(s.exists("kept"), "{how}: a deny rule is never shadowed");
        let logs: Vec<Value> = std::fs::read_dir(s.home.join(".rein/logs"))
            .unwrap()
            .flatten()
            .flat_map(|f| {
                std::fs::read_to_string(f.path())
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        let responses: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["subtype"] == "hook_response")
            .collect();
        if how == "enforced" {
            assert!(s.exists("victim"), "the enforced hook kept the victim");
            assert_eq!(logs[0]["shadow"], false);
            assert!(!stderr.contains("Shadow mode"));
            continue;
        }
        assert!(
            !s.exists("victim"),
            "{how}: shadow mode must not apply the refusal"
        );
        let expected = "would have denied: ";
        assert_eq!(logs[0]["shadow"], true, "{how}");
        assert!(
            logs[0]["would_have"]
                .as_str()
                .unwrap()
                .starts_with(expected),
            "{how}: {logs:?}"
        );
        assert!(
            logs[0]["would_have"]
                .as_str()
                .unwrap()
                .contains("rm is not allowed here")
        );
        assert_eq!(responses[0]["would_have"], logs[0]["would_have"], "{how}");
        assert!(
            stderr.contains("Shadow mode: 2 hook decisions recorded and not applied"),
            "{how}: {stderr}"
        );
    }
}

/// `docs/policy-rollout.md`'s worked example, run as written (`bash -e`) in a scratch project
/// with the built `rein` first on PATH.
#[test]
fn the_worked_example_of_the_policy_rollout_doc_runs() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy-rollout.md"),
    )
    .unwrap();
    let section = doc
        .split("## A worked example")
        .nth(1)
        .expect("the worked example section");
    let block = section
        .split("```bash\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("its bash block");
    let s = Sandbox::new("proj", &["proj/.claude", "bin"]);
    std::os::unix::fs::symlink(crate::harness::rein_bin(), s.root.join("bin/rein")).unwrap();
    let path = format!(
        "{}:{}",
        s.root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("/bin/bash");
    cmd.args(["-euo", "pipefail", "-c", block])
        .current_dir(&s.project)
        .envs(crate::harness::home_vars(&s.home))
        .env("PATH", path)
        .stdin(std::process::Stdio::null());
    for var in crate::harness::LEAKY_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "the worked example failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s.exists("build"), "the enforced policy kept the directory");
}
