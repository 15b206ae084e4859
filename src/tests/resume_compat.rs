//! Resuming a transcript written by the rein version before the Claude Code line shapes
//! (0.1.0 at commit d57ba03): hook context was written before the line it belongs to and as
//! the model-facing entry itself (`hook_additional_context` `content`), with no `rendered`.
//! The rebuilt history must be the one the model was sent then.

use std::path::Path;

use crate::agent::resume::rebuild_bytes;
use crate::model::{ContentBlock, Role};

/// Lines as rein 0.1.0 (d57ba03) wrote them for: SessionStart plain stdout, UserPromptSubmit
/// context, a prompt, a Bash call with PostToolUse context, a reply, Stop feedback.
const OLD: &str = r#"{"parentUuid":null,"isSidechain":false,"type":"attachment","attachment":{"type":"hook_success","hookName":"SessionStart:startup","hookEvent":"SessionStart","content":"","stdout":"started\n","stderr":"","exitCode":0,"command":"echo started","durationMs":3},"uuid":"00000000-0000-4000-8000-000000000001","timestamp":"2026-12-01T00:00:00.000Z","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000001","isSidechain":false,"type":"attachment","attachment":{"type":"hook_additional_context","content":["SessionStart:startup hook success: started"],"hookName":"SessionStart:startup","hookEvent":"SessionStart"},"uuid":"00000000-0000-4000-8000-000000000002","timestamp":"2026-12-01T00:00:00.000Z","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000002","isSidechain":false,"promptId":"p","type":"attachment","attachment":{"type":"hook_additional_context","content":["UserPromptSubmit hook additional context: UPS"],"hookName":"UserPromptSubmit","hookEvent":"UserPromptSubmit"},"uuid":"00000000-0000-4000-8000-000000000003","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000003","isSidechain":false,"promptId":"p","type":"user","message":{"role":"user","content":"go"},"uuid":"00000000-0000-4000-8000-000000000004","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000004","isSidechain":false,"promptId":"p","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"mock","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo hi"}}],"stop_reason":"tool_use","stop_sequence":null},"uuid":"00000000-0000-4000-8000-000000000005","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000005","isSidechain":false,"promptId":"p","type":"attachment","attachment":{"type":"hook_additional_context","content":["PostToolUse:Bash hook additional context: POST"],"hookName":"PostToolUse:Bash","toolUseID":"t1","hookEvent":"PostToolUse"},"uuid":"00000000-0000-4000-8000-000000000006","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000006","isSidechain":false,"promptId":"p","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hi"}]},"toolUseResult":{"stdout":"hi"},"uuid":"00000000-0000-4000-8000-000000000007","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000007","isSidechain":false,"promptId":"p","type":"assistant","message":{"id":"m2","type":"message","role":"assistant","model":"mock","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_sequence":null},"uuid":"00000000-0000-4000-8000-000000000008","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
{"parentUuid":"00000000-0000-4000-8000-000000000008","isSidechain":false,"promptId":"p","type":"user","message":{"role":"user","content":[{"type":"text","text":"Stop hook feedback:\nmore"}]},"uuid":"00000000-0000-4000-8000-000000000009","timestamp":"2026-12-01T00:00:00.000Z","permissionMode":"default","userType":"external","cwd":"/p","sessionId":"s","version":"0.1.0"}
"#;

fn texts(blocks: &[ContentBlock]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::SystemNote { text } => format!("note {text}"),
            ContentBlock::ToolUse { id, .. } => format!("use {id}"),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => format!("result {tool_use_id} {content}"),
        })
        .collect()
}

#[test]
fn a_transcript_of_the_previous_rein_version_resumes_as_the_model_saw_it() {
    let rebuilt = rebuild_bytes(Path::new("old.jsonl"), OLD.as_bytes());
    assert!(rebuilt.notices.is_empty(), "{:?}", rebuilt.notices);
    assert_eq!(
        rebuilt.last_uuid.as_deref(),
        Some("00000000-0000-4000-8000-000000000009")
    );
    let got: Vec<(Role, Vec<String>)> = rebuilt
        .messages
        .iter()
        .map(|m| (m.role, texts(&m.content)))
        .collect();
    // Hook entries come back as the system notes the session sends them as.
    let r = |t: &str| format!("note {t}");
    assert_eq!(
        got,
        vec![
            (
                Role::User,
                vec![
                    r("SessionStart:startup hook success: started"),
                    "go".to_string(),
                    r("UserPromptSubmit hook additional context: UPS"),
                ]
            ),
            (Role::Assistant, vec!["use t1".to_string()]),
            (
                Role::User,
                vec![
                    "result t1 hi".to_string(),
                    r("PostToolUse:Bash hook additional context: POST"),
                ]
            ),
            (Role::Assistant, vec!["done".to_string()]),
            (Role::User, vec!["Stop hook feedback:\nmore".to_string()]),
        ]
    );
}
