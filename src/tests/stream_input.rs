//! `--input-format stream-json` lines and the event synthesizer of
//! `--include-partial-messages`, without a process.

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::agent::providers::events::{Synthesizer, replay};
use crate::cli::stream_input::{Input, parse_line};
use crate::model::{ContentBlock, ModelResponse, StopReason};

fn user(line: usize, text: &str, message: Value) -> Option<Input> {
    Some(Input::User {
        line,
        text: text.to_string(),
        message,
    })
}

#[test]
fn user_messages_as_string_and_as_text_blocks() {
    let m = json!({"role": "user", "content": "hi"});
    assert_eq!(
        parse_line(3, &json!({"type": "user", "message": m}).to_string()),
        user(3, "hi", m)
    );
    let m = json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
    assert_eq!(
        parse_line(
            1,
            &json!({"type": "user", "message": m, "session_id": ""}).to_string()
        ),
        user(1, "a\nb", m)
    );
}

#[test]
fn bad_lines_say_what_is_wrong() {
    let invalid = |line: &str| match parse_line(7, line) {
        Some(Input::Invalid { line, message }) => {
            assert_eq!(line, 7);
            message
        }
        other => panic!("{line}: {other:?}"),
    };
    assert!(invalid("{nope").starts_with("not valid JSON ("));
    assert_eq!(invalid("[1]"), "expected a JSON object, got an array");
    assert_eq!(
        invalid(r#"{"type":"user"}"#),
        "Expected message role 'user', got 'undefined'"
    );
    assert_eq!(
        invalid(r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#),
        "Expected message role 'user', got 'assistant'"
    );
    assert_eq!(
        invalid(r#"{"type":"user","message":{"role":"user","content":[{"type":"image"}]}}"#),
        "content block 0: type 'image' is not supported by rein (only text blocks)"
    );
    assert!(matches!(
        parse_line(
            2,
            r#"{"type":"user","message":{"role":"user","content":5}}"#
        ),
        Some(Input::Skipped { line: 2, .. })
    ));
}

#[test]
fn control_requests_and_ignored_lines() {
    assert_eq!(
        parse_line(
            1,
            r#"{"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}"#
        ),
        Some(Input::Interrupt {
            request_id: json!("r")
        })
    );
    assert_eq!(
        parse_line(
            1,
            r#"{"type":"control_request","request_id":7,"request":{"subtype":"set_model"}}"#
        ),
        Some(Input::Control {
            line: 1,
            request_id: Some(json!(7)),
            subtype: "set_model".into(),
            request: json!({"subtype": "set_model"}),
        })
    );
    // No request_id: kept, so the loop can say it cannot be answered.
    assert_eq!(
        parse_line(
            3,
            r#"{"type":"control_request","request":{"subtype":"mcp_status"}}"#
        ),
        Some(Input::Control {
            line: 3,
            request_id: None,
            subtype: "mcp_status".into(),
            request: json!({"subtype": "mcp_status"}),
        })
    );
    assert_eq!(
        parse_line(
            4,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"x"}}"#
        ),
        Some(Input::Response {
            line: 4,
            response: json!({"subtype": "success", "request_id": "x"}),
        })
    );
    assert_eq!(parse_line(1, "   \n"), None);
    assert_eq!(parse_line(1, r#"{"type":"keep_alive"}"#), None);
}

fn collect(f: impl FnOnce(&(dyn Fn(&Value) + Send + Sync))) -> Vec<Value> {
    let out = Mutex::new(Vec::new());
    let sink = |v: &Value| out.lock().unwrap().push(v.clone());
    f(&sink);
    out.into_inner().unwrap()
}

/// A call whose id and name come in later pieces opens its block only then, with the
/// arguments held back so far; text after a call opens a new block.
#[test]
fn synthesizer_opens_blocks_when_they_are_known() {
    let response = ModelResponse {
        id: Some("m1".into()),
        model: "x".into(),
        content: vec![],
        stop_reason: StopReason::ToolUse,
        usage: None,
    };
    let events = collect(|sink| {
        let mut s = Synthesizer::new(Some(sink));
        s.start(Some("m1"), "x", None);
        s.tool(0, None, None, "{\"a\"");
        s.tool(0, Some("c1"), Some("Read"), ":1}");
        s.text("after");
        s.finish(&response);
    });
    let types: Vec<String> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[1]["content_block"]["id"], "c1");
    assert_eq!(events[2]["delta"]["partial_json"], "{\"a\":1}");
    assert_eq!(events[4]["index"], 1);
    assert_eq!(events[7]["delta"]["stop_reason"], "tool_use");
}

/// A call whose id never came in a piece takes the finished reply's.
#[test]
fn synthesizer_takes_late_ids_from_the_reply() {
    let response = ModelResponse {
        id: None,
        model: "x".into(),
        content: vec![ContentBlock::ToolUse {
            id: "toolu_rein_1".into(),
            name: "Bash".into(),
            input: json!({}),
        }],
        stop_reason: StopReason::ToolUse,
        usage: None,
    };
    let events = collect(|sink| {
        let mut s = Synthesizer::new(Some(sink));
        s.tool(0, None, Some("Bash"), "{}");
        s.finish(&response);
    });
    assert_eq!(events[0]["type"], "message_start");
    assert_eq!(events[1]["content_block"]["id"], "toolu_rein_1");
    assert_eq!(events[2]["delta"]["partial_json"], "{}");
}

#[test]
fn a_whole_reply_replays_as_events() {
    let response = ModelResponse {
        id: Some("m".into()),
        model: "mock".into(),
        content: vec![
            ContentBlock::Text { text: "a".into() },
            ContentBlock::Text { text: "b".into() },
        ],
        stop_reason: StopReason::EndTurn,
        usage: None,
    };
    let events = collect(|sink| replay(&response, sink));
    let starts = events
        .iter()
        .filter(|e| e["type"] == "content_block_start")
        .count();
    assert_eq!(starts, 2, "two text blocks stay two: {events:#?}");
    assert_eq!(events.last().unwrap()["type"], "message_stop");
}
