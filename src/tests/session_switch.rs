//! What `/clear`, `/resume ID` and a stopped tool rely on below the terminal: the hook
//! environment following a new session id, the facts SessionStart `resume` reports, and a
//! stopped tool's history rebuilt from the transcript exactly as the session sent it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::agent::resume::{last_reply_facts, parse_timestamp, rebuild_bytes};
use crate::agent::session::{INTERRUPTED_TOOL_USE, STOPPED_TOOL_RESULT, ends_in_interruption};
use crate::agent::transcript::{
    LineContext, ToolDecision, ToolResultLine, Transcript, format_timestamp,
};
use crate::hooks::environment::HookEnvironment;
use crate::model::{ContentBlock, Message, ModelResponse, Role, StopReason, Usage};

#[test]
fn a_new_session_id_moves_the_env_file_dir_run_log_and_output_dir() {
    let mut env = HookEnvironment::new("/p", "old-id", "/h/.rein/session-env/old-id");
    env.run_log = Some(PathBuf::from("/h/.rein/logs/old-id.jsonl"));
    env.output_dir = Some(PathBuf::from("/h/.rein/projects/-p/old-id/tool-results"));
    env.extra_env = vec![("A".into(), "1".into())];
    let next = env.for_session(
        "new-id",
        Some(PathBuf::from("/h/.rein/projects/-p/new-id/tool-results")),
    );
    assert_eq!(next.session_id, "new-id");
    assert_eq!(next.env_file_dir, Path::new("/h/.rein/session-env/new-id"));
    assert_eq!(
        next.run_log.as_deref(),
        Some(Path::new("/h/.rein/logs/new-id.jsonl"))
    );
    assert_eq!(
        next.output_dir.as_deref(),
        Some(Path::new("/h/.rein/projects/-p/new-id/tool-results"))
    );
    assert_eq!(next.extra_env, env.extra_env);
    assert_eq!(next.project_dir, env.project_dir);
    // A directory not named after the session (an embedder's choice) stays as it is.
    let custom = HookEnvironment::new("/p", "old-id", "/somewhere/else");
    assert_eq!(
        custom.for_session("new-id", None).env_file_dir,
        Path::new("/somewhere/else")
    );
}

#[test]
fn transcript_timestamps_parse_back_to_the_instant_written() {
    for ms in [0i64, 1_796_310_034_987, 951_782_400_000, 4_102_444_799_999] {
        let text = format_timestamp(ms);
        let at = parse_timestamp(&text).unwrap_or_else(|| panic!("{text}"));
        let back = at.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(back.as_millis() as i64, ms, "{text}");
    }
    assert_eq!(
        parse_timestamp("2026-12-03T15:01:15Z"),
        parse_timestamp("2026-12-03T15:01:15.000Z")
    );
    for bad in [
        "",
        "2026-12-03",
        "2026-13-03T00:00:00Z",
        "2026-12-03T25:00:00Z",
        "x",
    ] {
        assert_eq!(parse_timestamp(bad), None, "{bad}");
    }
}

#[test]
fn resume_facts_come_from_the_last_reply_with_usage() {
    let lines = [
        json!({"type": "user", "message": {"content": "hi"}, "timestamp": "2026-12-03T15:00:00.000Z"}),
        json!({"type": "assistant", "timestamp": "2026-12-03T15:00:01.000Z",
            "message": {"content": [], "usage": {"input_tokens": 100, "output_tokens": 20,
                "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}}}),
        json!({"type": "assistant", "timestamp": "2026-12-03T15:00:10.500Z",
            "message": {"content": [], "usage": {"input_tokens": 300, "output_tokens": 40}}}),
        json!({"type": "system", "timestamp": "2026-12-03T15:09:00.000Z"}),
    ];
    let bytes: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let now = parse_timestamp("2026-12-03T15:05:10.600Z").unwrap();
    let facts = last_reply_facts(&bytes, now);
    assert_eq!(facts.seconds_since_last_response, Some(300));
    assert_eq!(facts.context_tokens, Some(340));
    // No reply yet: nothing to report.
    let facts = last_reply_facts(format!("{}\n", lines[0]).as_bytes(), now);
    assert_eq!(facts.seconds_since_last_response, None);
    assert_eq!(facts.context_tokens, None);
    // A clock behind the transcript does not underflow.
    let early = now - Duration::from_secs(3600);
    assert_eq!(
        last_reply_facts(&bytes, early).seconds_since_last_response,
        Some(0)
    );
}

/// The history after a stopped tool, as [`crate::agent::session::Session`] builds it: the
/// results, the note, then the next prompt, in one user message.
#[test]
fn a_stopped_tool_is_rebuilt_from_the_transcript_as_the_session_sent_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let t = Transcript::new(path.clone(), "s", dir.path());
    let ctx = LineContext::default();
    t.user_prompt(&ctx, "run it");
    t.assistant(
        &ctx,
        &ModelResponse {
            id: None,
            model: "m".into(),
            content: vec![ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "Bash".into(),
                input: json!({"command": "sleep 30"}),
            }],
            stop_reason: StopReason::ToolUse,
            usage: Some(Usage::default()),
        },
    );
    t.tool_result(
        &ctx,
        &ToolResultLine {
            tool_use_id: "toolu_1",
            tool_name: "Bash",
            content: STOPPED_TOOL_RESULT,
            is_error: true,
            tool_use_result: None,
            decision: ToolDecision::Unrecorded,
        },
    );
    let note = format!("{INTERRUPTED_TOOL_USE}\n");
    t.user_text(&ctx, &note);
    t.user_prompt(&ctx, "and now?");
    let rebuilt = rebuild_bytes(&path, &std::fs::read(&path).unwrap());
    let expected = Message {
        role: Role::User,
        content: vec![
            ContentBlock::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: STOPPED_TOOL_RESULT.into(),
                is_error: true,
            },
            ContentBlock::Text { text: note.clone() },
            ContentBlock::Text {
                text: "and now?".into(),
            },
        ],
    };
    assert_eq!(rebuilt.messages.len(), 3, "{:#?}", rebuilt.messages);
    assert_eq!(rebuilt.messages[2], expected);
    assert!(rebuilt.notices.is_empty(), "{:?}", rebuilt.notices);
    // Only a message that ends in the note takes the next prompt.
    assert!(!ends_in_interruption(&rebuilt.messages[2]));
    let mut stopped = expected.clone();
    stopped.content.pop();
    assert!(ends_in_interruption(&stopped));
}
