//! Compaction against a loopback provider of both kinds: a provider reporting a nearly full
//! context triggers it before the next request; PreCompact/PostCompact/SessionStart fire with
//! Claude Code's stdin (`tests/fixtures/cc/pre_compact.json`); the next request is smaller; a
//! PreCompact exit 2 blocks it; `/compact` compacts by hand; a provider without usage turns
//! auto-compaction off with a notice.

use std::path::Path;

use serde_json::{Value, json};

use super::loopback::{Api, Loopback, Turn};
use crate::harness::Sandbox;

/// Hooks that record their stdin in `<event>.jsonl`; PreCompact prints an extra instruction
/// (or, with `block`, exits 2).
fn project(block: bool) -> Sandbox {
    let s = Sandbox::new("project", &[]);
    let rec = |name: &str, extra: &str| {
        s.script(
            &format!("{name}.sh"),
            &format!("cat >> \"$CLAUDE_PROJECT_DIR/{name}.jsonl\"\n{extra}"),
        )
    };
    let pre = if block {
        rec("PreCompact", "echo 'not now' >&2; exit 2")
    } else {
        rec("PreCompact", "echo 'HOOK-INSTRUCTION: keep the numbers'")
    };
    let post = rec("PostCompact", "echo 'post-compact says hi'");
    let start = rec("SessionStart", "");
    let one = |cmd: String| json!([{"hooks": [{"type": "command", "command": cmd}]}]);
    s.hooks(json!({"PreCompact": one(pre), "PostCompact": one(post), "SessionStart": one(start)}));
    s
}

fn records(s: &Sandbox, event: &str) -> Vec<Value> {
    std::fs::read_to_string(s.path(&format!("{event}.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn run(
    s: &Sandbox,
    api: Api,
    server: &Loopback,
    prompt: &str,
    extra: &[&str],
) -> (i32, String, String) {
    let mut cmd = s.rein();
    cmd.args(["-p", prompt, "--allowedTools", "Bash"])
        .args(extra)
        .env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "1000")
        .env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50");
    api.point(&mut cmd, &server.url);
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A tool call whose result is long, reported with a prompt of 900 tokens (over half of the
/// 1000-token window).
fn big_call() -> Turn {
    Turn::call("toolu_big", "Bash", json!({"command": "seq 1 3000"})).usage(Some((900, 20)))
}

fn fixture_pre_compact() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc/pre_compact.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["hook_stdin_in_order"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["hook_event_name"] == "PreCompact")
        .unwrap()
        .clone()
}

#[test]
fn a_nearly_full_context_is_compacted_with_claude_codes_hooks_and_the_next_request_is_smaller() {
    for api in Api::BOTH {
        let s = project(false);
        let server = Loopback::start(
            api,
            vec![
                big_call(),
                Turn::text("SUMMARY-TEXT of the work"),
                Turn::text("DONE"),
            ],
        );
        let (code, stdout, stderr) = run(&s, api, &server, "count to 3000", &[]);
        assert_eq!(code, 0, "{api:?}: {stderr}");
        assert_eq!(stdout, "DONE\n");
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{api:?}: prompt, summary, continuation");
        let summary_request = serde_json::to_string(&api.messages_of(&requests[1])).unwrap();
        assert!(
            summary_request.contains("2999"),
            "the summary request holds the history"
        );
        assert!(summary_request.contains("HOOK-INSTRUCTION: keep the numbers"));
        let next = api.messages_of(&requests[2]);
        let next_text = serde_json::to_string(&next).unwrap();
        assert!(
            next_text.contains("SUMMARY-TEXT of the work"),
            "{next_text}"
        );
        assert!(
            !next_text.contains("2999"),
            "the tool output was summarised away"
        );
        assert!(
            next_text.len() * 4 < summary_request.len(),
            "{api:?}: {} vs {}",
            next_text.len(),
            summary_request.len()
        );

        // PreCompact: Claude Code's keys in its order; PostCompact: the summary.
        let pre = records(&s, "PreCompact");
        assert_eq!(pre.len(), 1);
        assert_eq!(keys(&pre[0]), keys(&fixture_pre_compact()), "{}", pre[0]);
        assert_eq!(pre[0]["trigger"], "auto");
        assert_eq!(pre[0]["custom_instructions"], Value::Null);
        let post = records(&s, "PostCompact");
        assert_eq!(post.len(), 1);
        assert_eq!(post[0]["trigger"], "auto");
        assert_eq!(post[0]["compact_summary"], "SUMMARY-TEXT of the work");
        assert_eq!(
            keys(&post[0]),
            [
                "session_id",
                "transcript_path",
                "cwd",
                "prompt_id",
                "hook_event_name",
                "trigger",
                "compact_summary"
            ]
        );
        assert!(stderr.contains("post-compact says hi"), "{stderr}");
        let sources: Vec<Value> = records(&s, "SessionStart")
            .iter()
            .map(|l| l["source"].clone())
            .collect();
        assert_eq!(sources, [json!("startup"), json!("compact")]);

        // The transcript marks the boundary; a resumed session starts from the summary.
        let server = Loopback::start(api, vec![Turn::text("AGAIN")]);
        let (code, _, stderr) = run(&s, api, &server, "and now?", &["--continue"]);
        assert_eq!(code, 0, "{stderr}");
        let resumed = serde_json::to_string(&api.messages_of(&server.requests()[0])).unwrap();
        assert!(
            resumed.contains("SUMMARY-TEXT") && !resumed.contains("2999"),
            "{resumed}"
        );
    }
}

#[test]
fn a_pre_compact_exit_2_blocks_the_compaction() {
    let api = Api::Anthropic;
    let s = project(true);
    let server = Loopback::start(api, vec![big_call(), Turn::text("DONE")]);
    let (code, stdout, stderr) = run(&s, api, &server, "count", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "DONE\n");
    assert!(
        stderr.contains("Compaction blocked by a PreCompact hook"),
        "{stderr}"
    );
    assert!(stderr.contains("not now"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no summary request");
    assert!(
        serde_json::to_string(&requests[1])
            .unwrap()
            .contains("2999")
    );
    assert!(records(&s, "PostCompact").is_empty());
}

#[test]
fn slash_compact_compacts_by_hand_with_the_users_instructions() {
    let api = Api::OpenAi;
    let s = project(false);
    let server = Loopback::start(
        api,
        vec![
            Turn::call("toolu_1", "Bash", json!({"command": "echo one"})),
            Turn::text("FIRST"),
        ],
    );
    let (code, _, stderr) = run(&s, api, &server, "first", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        records(&s, "PreCompact").is_empty(),
        "small context: no auto compaction"
    );

    let server = Loopback::start(api, vec![Turn::text("HAND-SUMMARY")]);
    let (code, stdout, stderr) = run(&s, api, &server, "/compact keep the names", &["--continue"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Conversation compacted.\n");
    let pre = records(&s, "PreCompact");
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "keep the names");
    let asked = serde_json::to_string(&server.requests()[0]).unwrap();
    assert!(asked.contains("keep the names"), "{asked}");
    assert_eq!(
        records(&s, "PostCompact")[0]["compact_summary"],
        "HAND-SUMMARY"
    );
}

#[test]
fn a_provider_without_usage_turns_auto_compaction_off_with_a_notice() {
    for api in Api::BOTH {
        let s = Sandbox::new("project", &[]);
        let server = Loopback::start(api, vec![Turn::text("hi").usage(None)]);
        let (code, _, stderr) = run(&s, api, &server, "hello", &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            stderr.matches("reported no token usage").count(),
            1,
            "{api:?}: {stderr}"
        );
    }
}
