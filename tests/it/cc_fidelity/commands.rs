//! Slash commands and skills against Claude Code 2.1.328 (fixtures `slash_command`,
//! `plugin_command`): what UserPromptSubmit sees, what the model is sent for `/name args`, and
//! what the Skill tool answers.

use serde_json::{Value, json};

use super::replay::{fixture, fixture_stdins, run};

/// The last `n` messages of a request.
fn last_messages(request: &Value, n: usize) -> Vec<Value> {
    let messages = request["messages"].as_array().unwrap();
    messages[messages.len() - n..].to_vec()
}

/// The last `n` text blocks of a request's last message (consecutive user messages reach the
/// API as one, so rein's reminders before the command share its message).
fn last_texts(r: &super::replay::Replay, request: usize, n: usize) -> Vec<String> {
    let all = texts(&last_messages(&r.requests[request], 1)[0]);
    all[all.len().saturating_sub(n)..]
        .iter()
        .map(|t| r.normalize(t))
        .collect()
}

/// A message's text blocks (a string content counts as one).
fn texts(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_project_command_reaches_the_model_as_claude_code_sends_it() {
    let fx = fixture("slash_command");
    let r = run("slash_command", &[]);
    assert!(
        r.output.status.success(),
        "{}",
        String::from_utf8_lossy(&r.output.stderr)
    );
    // UserPromptSubmit sees the prompt as typed.
    let ups: Vec<&Value> = r.of("UserPromptSubmit").iter().map(|h| &h.stdin).collect();
    assert_eq!(ups.len(), 1);
    assert_eq!(
        ups[0]["prompt"],
        fixture_stdins(&fx, "UserPromptSubmit")[0]["prompt"]
    );
    assert_eq!(ups[0]["prompt"], "/mark alpha beta");

    let theirs = fx["model"]["turns"][0]["new_messages"].as_array().unwrap();
    let command = theirs.last().unwrap();
    assert_eq!(
        last_texts(&r, 0, 2),
        texts(command),
        "the command's header and expanded body ($ARGUMENTS, $1, $2 left, the ! line's output, @notes.txt as written)"
    );
    // The @file is attached before it, as a Read call and its result.
    let all: Vec<String> = r.requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(texts)
        .map(|t| r.normalize(&t))
        .collect();
    let called = texts(&theirs[0]).remove(0);
    assert!(all.contains(&called), "{called} in {all:#?}");
    assert!(
        all.contains(
            &"<system-reminder>\nResult of calling the Read tool:\n1\tNOTES-CONTENT\n2\t\n</system-reminder>"
                .to_string()
        ),
        "{all:#?}"
    );
}

#[test]
fn a_plugin_command_and_a_skill_through_the_skill_tool() {
    let fx = fixture("plugin_command");
    let r = run("plugin_command", &[]);
    assert!(
        r.output.status.success(),
        "{}",
        String::from_utf8_lossy(&r.output.stderr)
    );
    let turns = fx["model"]["turns"].as_array().unwrap();
    let theirs = turns[0]["new_messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        last_texts(&r, 0, 2),
        texts(theirs),
        "/guard:pc zeta with ${{CLAUDE_PLUGIN_ROOT}} replaced"
    );
    // The model is told of the skills it may run, in Claude Code's words (in the Skill tool's
    // description).
    let skill = r.requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("the Skill tool is offered");
    let description = skill["description"].as_str().unwrap();
    let at = description
        .find("The following skills are available for use with the Skill tool:")
        .unwrap_or_else(|| panic!("no skill listing in {description}"));
    let listing = &description[at..];
    for line in [
        "- greet: Greets people warmly",
        "- guard:pc: Plugin cmd",
        "- guard:tidy: Tidy things up",
    ] {
        assert!(listing.contains(line), "{line} in {listing}");
    }
    // The Skill call: its result and the text after it.
    let their_reply = turns[1]["new_messages"][0]["content"].as_array().unwrap();
    let our_reply = last_messages(&r.requests[1], 1)[0]["content"].clone();
    let our_reply: Value = serde_json::from_str(&r.normalize(&our_reply.to_string())).unwrap();
    assert_eq!(our_reply[0]["type"], "tool_result");
    assert_eq!(our_reply[0]["content"], their_reply[0]["content"]);
    assert_eq!(
        our_reply[1], their_reply[1],
        "the skill's body after its result"
    );
    // Hooks see Claude Code's input and response.
    for event in ["PreToolUse", "PostToolUse"] {
        let cc = fixture_stdins(&fx, event);
        let ours: Vec<&Value> = r.of(event).iter().map(|h| &h.stdin).collect();
        assert_eq!(ours.len(), 1, "{event}");
        assert_eq!(ours[0]["tool_name"], "Skill");
        assert_eq!(ours[0]["tool_input"], cc[0]["tool_input"], "{event}");
    }
    assert_eq!(
        r.of("PostToolUse")[0].stdin["tool_response"],
        json!({"success": true, "commandName": "greet"})
    );
    // The project agent is offered with its tools.
    let agent = r.requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Agent")
        .expect("Agent tool");
    assert!(
        agent["description"].as_str().unwrap().contains("rev"),
        "{}",
        agent["description"]
    );
    // init lists them as Claude Code's does.
    let init = r
        .stream
        .iter()
        .find(|l| l["subtype"] == "init")
        .expect("init line");
    for name in ["greet", "guard:pc", "guard:tidy"] {
        assert!(
            init["slash_commands"]
                .as_array()
                .unwrap()
                .contains(&json!(name)),
            "{name} in {}",
            init["slash_commands"]
        );
    }
    assert_eq!(init["plugins"][0]["name"], "guard");
}
