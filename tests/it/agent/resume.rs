//! Sessions that go on: `--continue`, `--resume ID`, `--fork-session`, `--session-id`,
//! `--no-session-persistence`, against a loopback provider of both kinds. The rebuilt history
//! is compared with what the model was sent before.

use serde_json::{Value, json};

use super::loopback::{Api, Loopback, Turn};
use crate::harness::Sandbox;

/// Runs `rein -p PROMPT --output-format json EXTRA…` against `server`; returns (exit code,
/// result JSON or Null, stderr).
fn run(
    s: &Sandbox,
    api: Api,
    server: &Loopback,
    prompt: &str,
    extra: &[&str],
) -> (i32, Value, String) {
    let mut cmd = s.rein();
    cmd.args([
        "-p",
        prompt,
        "--output-format",
        "json",
        "--allowedTools",
        "Bash",
    ])
    .args(extra);
    api.point(&mut cmd, &server.url);
    let out = cmd.output().unwrap();
    let result = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        result,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A project whose SessionStart hook adds context and records its stdin, and whose PostToolUse
/// hook adds context: the rebuild must put both where the model saw them.
fn project() -> Sandbox {
    let s = Sandbox::new("project", &[]);
    let start = s.script(
        "start.sh",
        "cat >> \"$CLAUDE_PROJECT_DIR/start-stdin.jsonl\"; echo 'START-CONTEXT'",
    );
    let post = s.script(
        "post.sh",
        "cat > /dev/null; printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"POST-CONTEXT\"}}'",
    );
    // UserPromptSubmit context both ways (plain stdout and JSON), and a Stop hook that blocks
    // once: their lines follow the prompt and the feedback line, as Claude Code writes them.
    let plain = s.script("plain.sh", "cat > /dev/null; echo 'PROMPT-PLAIN'");
    let prompt_json = s.script(
        "prompt.sh",
        "cat > /dev/null; printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"PROMPT-CONTEXT\"}}'",
    );
    let stop = s.script(
        "stop.sh",
        "cat > /dev/null; m=\"$CLAUDE_PROJECT_DIR/stopped\"; [ -e \"$m\" ] && exit 0; touch \"$m\"; echo '{\"decision\":\"block\",\"reason\":\"STOP-FEEDBACK\"}'",
    );
    s.hooks(json!({
        "SessionStart": [{"hooks": [{"type": "command", "command": start}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": post}]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": plain},
            {"type": "command", "command": prompt_json}
        ]}],
        "Stop": [{"hooks": [{"type": "command", "command": stop}]}],
    }));
    s
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first session: a prompt, a Bash call, its result, a final text. Returns its id and the
/// messages of its last request plus the final assistant reply, as the API saw them.
fn first_session(s: &Sandbox, api: Api) -> (String, Vec<Value>) {
    let server = Loopback::start(
        api,
        vec![
            Turn::call("toolu_1", "Bash", json!({"command": "echo hi"})),
            Turn::text("FIRST-PAUSE"),
            Turn::text("FIRST-DONE"),
        ],
    );
    let (code, result, stderr) = run(s, api, &server, "first prompt", &[]);
    assert_eq!(code, 0, "{api:?}: {stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the Stop hook blocked once");
    let sent = api.messages_of(&requests[2]);
    let flat = serde_json::to_string(&sent).unwrap();
    for seen in [
        "START-CONTEXT",
        "POST-CONTEXT",
        "PROMPT-PLAIN",
        "PROMPT-CONTEXT",
        "STOP-FEEDBACK",
    ] {
        assert!(flat.contains(seen), "{seen}: {flat}");
    }
    (result["session_id"].as_str().unwrap().to_string(), sent)
}

#[test]
fn continue_rebuilds_the_history_the_model_saw_and_fires_session_start_resume() {
    for api in Api::BOTH {
        let s = project();
        let (id, before) = first_session(&s, api);
        let server = Loopback::start(api, vec![Turn::text("SECOND-DONE")]);
        let (code, result, stderr) = run(&s, api, &server, "second prompt", &["--continue"]);
        assert_eq!(code, 0, "{api:?}: {stderr}");
        assert_eq!(result["session_id"], id.as_str(), "same session");
        let after = api.messages_of(&server.requests()[0]);
        // Everything the model saw before, unchanged, then its reply, then the new prompt.
        assert_eq!(after[..before.len()], before[..], "{api:?}");
        assert_eq!(after.len(), before.len() + 2, "{api:?}: {after:?}");
        let reply = serde_json::to_string(&after[before.len()]).unwrap();
        assert!(reply.contains("FIRST-DONE") && after[before.len()]["role"] == "assistant");
        let prompt = serde_json::to_string(&after[before.len() + 1]).unwrap();
        assert!(prompt.contains("second prompt"), "{prompt}");
        assert!(
            prompt.contains("SessionStart:resume hook success"),
            "{prompt}"
        );

        let starts: Vec<Value> = std::fs::read_to_string(s.path("start-stdin.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(starts.len(), 2);
        assert_eq!(starts[0]["source"], "startup");
        assert_eq!(starts[1]["source"], "resume", "{api:?}");
        assert_eq!(starts[1]["session_id"], id.as_str());
        // One transcript, its lines chained across both runs.
        let files = s.transcript_files();
        assert_eq!(files.len(), 1);
        let all = lines(&files[0]);
        for pair in all.windows(2) {
            assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
        }
    }
}

#[test]
fn resume_by_id_fork_session_and_session_id() {
    let api = Api::Anthropic;
    let s = project();
    let (id, before) = first_session(&s, api);
    let old = s.transcript_files()[0].clone();
    let old_lines = lines(&old).len();

    // --resume ID --fork-session: the old transcript stays as it was; the new one starts with
    // its lines.
    let fork_id = "0b5e1f5e-1111-4222-8333-944455556666";
    let server = Loopback::start(api, vec![Turn::text("FORKED")]);
    let (code, result, stderr) = run(
        &s,
        api,
        &server,
        "forked prompt",
        &["--resume", &id, "--fork-session", "--session-id", fork_id],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["session_id"], fork_id);
    let after = api.messages_of(&server.requests()[0]);
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(
        lines(&old).len(),
        old_lines,
        "the resumed session's transcript is untouched"
    );
    let forked = old.with_file_name(format!("{fork_id}.jsonl"));
    let forked_lines = lines(&forked);
    assert!(forked_lines.len() > old_lines);
    // The copied entries keep their uuids and chain, under the fork's id.
    let mut renamed = 0;
    for (copied, original) in forked_lines.iter().zip(lines(&old)) {
        assert_eq!(copied["uuid"], original["uuid"]);
        if original.get("sessionId").is_some() {
            assert_eq!(original["sessionId"], id.as_str());
            assert_eq!(copied["sessionId"], fork_id, "{copied}");
            renamed += 1;
        }
    }
    assert!(renamed > 3, "{renamed}");
    // SessionStart says `fork`, under the new id and transcript, with the resume fields, as
    // Claude Code 2.1.328 does (fixture cc-2.1.328/interactive/fork-hooks-fork.jsonl).
    let starts = lines(&s.path("start-stdin.jsonl"));
    assert_eq!(starts.len(), 2);
    let fork = &starts[1];
    assert_eq!(fork["source"], "fork", "{fork}");
    assert_eq!(fork["session_id"], fork_id);
    assert_eq!(fork["transcript_path"], forked.to_str().unwrap());
    assert!(fork["seconds_since_last_response"].is_u64(), "{fork}");
    assert!(fork["context_tokens"].is_u64(), "{fork}");
    assert_eq!(fork["prompt_cache_likely_expired"], false, "{fork}");
    assert!(fork.get("model").is_none(), "{fork}");

    // --continue --fork-session: a new id of its own, SessionStart `fork` again.
    let server = Loopback::start(api, vec![Turn::text("FORKED AGAIN")]);
    let (code, result, stderr) = run(&s, api, &server, "again", &["-c", "--fork-session"]);
    assert_eq!(code, 0, "{stderr}");
    let new_id = result["session_id"].as_str().unwrap();
    assert!(new_id != id && new_id != fork_id, "{new_id}");
    let starts = lines(&s.path("start-stdin.jsonl"));
    assert_eq!(starts.len(), 3);
    assert_eq!(starts[2]["source"], "fork");
    assert_eq!(starts[2]["session_id"], new_id);

    // The id is taken now.
    let (code, _, stderr) = run(&s, api, &server, "x", &["--session-id", fork_id]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("Session ID {fork_id} is already in use")),
        "{stderr}"
    );
    // Not a UUID; a UUID nobody used; --session-id with --resume but no fork.
    let (code, _, stderr) = run(&s, api, &server, "x", &["--session-id", "nope"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--session-id \"nope\": not a valid UUID"),
        "{stderr}"
    );
    let missing = "00000000-0000-4000-8000-000000000000";
    let (code, _, stderr) = run(&s, api, &server, "x", &["--resume", missing]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!("No conversation found with session ID: {missing}")),
        "{stderr}"
    );
    let (code, _, stderr) = run(&s, api, &server, "x", &["-r", &id, "--session-id", missing]);
    assert_eq!(code, 2);
    assert!(stderr.contains("also needs --fork-session"), "{stderr}");
    // --resume without an id and no terminal to pick on.
    let (code, _, stderr) = run(&s, api, &server, "x", &["--resume"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
}

#[test]
fn a_transcript_cut_mid_line_resumes_from_the_last_complete_entry_with_a_notice() {
    let api = Api::OpenAi;
    let s = project();
    let (_, before) = first_session(&s, api);
    let file = s.transcript_files()[0].clone();
    let whole = std::fs::read(&file).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(br#"{"parentUuid":"abc","isSidechain":false,"type":"user","mess"#);
    std::fs::write(&file, &torn).unwrap();

    let server = Loopback::start(api, vec![Turn::text("AFTER-CRASH")]);
    let (code, _, stderr) = run(&s, api, &server, "go on", &["--continue"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the transcript {} ends in a partial line",
            file.display()
        )),
        "{stderr}"
    );
    let after = api.messages_of(&server.requests()[0]);
    assert_eq!(after[..before.len()], before[..]);
    // The torn tail is gone and the new lines follow whole lines.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(std::str::from_utf8(&whole).unwrap()));
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

#[test]
fn no_session_persistence_writes_no_transcript_and_continue_without_sessions_fails() {
    let api = Api::Anthropic;
    let s = Sandbox::new("project", &[]);
    let server = Loopback::start(api, vec![Turn::text("x"), Turn::text("y")]);
    let (code, _, stderr) = run(&s, api, &server, "x", &["--continue"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("No conversation found to continue"),
        "{stderr}"
    );
    let (code, result, stderr) = run(&s, api, &server, "x", &["--no-session-persistence"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["result"], "x");
    assert!(
        s.transcript_files().is_empty(),
        "{:?}",
        s.transcript_files()
    );
}

/// `--input-format stream-json -r ID`: SessionStart `resume` carries the same resume fields as
/// a `-p` resume (the stream path used to send bare `source: "resume"`).
#[test]
fn stream_json_input_resume_sends_the_resume_fields() {
    use std::io::Write;
    let api = Api::Anthropic;
    let s = project();
    let (id, before) = first_session(&s, api);
    let server = Loopback::start(api, vec![Turn::text("STREAMED RESUME")]);
    let mut cmd = s.rein();
    cmd.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "-r",
        &id,
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    api.point(&mut cmd, &server.url);
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            br#"{"type":"user","message":{"role":"user","content":"resumed through stdin"}}
"#,
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = api.messages_of(&server.requests()[0]);
    assert_eq!(sent[..before.len()], before[..], "the history is rebuilt");
    let starts = lines(&s.path("start-stdin.jsonl"));
    assert_eq!(starts.len(), 2);
    let resumed = &starts[1];
    assert_eq!(resumed["source"], "resume", "{resumed}");
    assert_eq!(resumed["session_id"], id.as_str());
    assert!(resumed["seconds_since_last_response"].is_u64(), "{resumed}");
    assert!(resumed["context_tokens"].is_u64(), "{resumed}");
    assert_eq!(resumed["prompt_cache_likely_expired"], false, "{resumed}");
    assert!(resumed.get("model").is_none(), "{resumed}");
}
