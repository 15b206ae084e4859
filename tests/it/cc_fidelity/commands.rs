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

/// The tool_result of the `turn`-th request's reply in a fixture.
fn their_result(fx: &Value, turn: usize) -> Value {
    fx["model"]["turns"][turn]["new_messages"][0]["content"][0].clone()
}

/// A skill's `!` lines run before its text is sent, as in Claude Code 2.1.328 (fixture
/// `skill_bang`): the text after the result is Claude Code's byte for byte and the hooks see
/// its Skill input and response (`allowedTools`). rein also runs each line as a Bash call the
/// user's hooks see (Claude Code fires none for them).
#[test]
fn a_skills_bang_lines_run_before_its_text_is_sent() {
    let fx = fixture("skill_bang");
    let r = run("skill_bang", &["--trust"]);
    assert!(
        r.output.status.success(),
        "{}",
        String::from_utf8_lossy(&r.output.stderr)
    );
    let their_reply = fx["model"]["turns"][1]["new_messages"][0]["content"].clone();
    let our_reply = last_messages(&r.requests[1], 1)[0]["content"].clone();
    let our_reply: Value = serde_json::from_str(&r.normalize(&our_reply.to_string())).unwrap();
    assert_eq!(our_reply[0]["content"], their_reply[0]["content"]);
    assert_eq!(
        our_reply[1], their_reply[1],
        "the expanded body, lines replaced"
    );
    let post: Vec<&Value> = r
        .of("PostToolUse")
        .into_iter()
        .map(|h| &h.stdin)
        .filter(|s| s["tool_name"] == "Skill")
        .collect();
    let theirs = fixture_stdins(&fx, "PostToolUse");
    assert_eq!(post.len(), 1);
    assert_eq!(post[0]["tool_response"], theirs[0]["tool_response"]);
    let lines: Vec<&str> = r
        .of("PreToolUse")
        .into_iter()
        .filter(|h| h.stdin["tool_name"] == "Bash")
        .map(|h| h.stdin["tool_input"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(lines, ["echo skill-bang-output", "echo second-line"]);
    // The skill's instructions count as a turn, as in Claude Code.
    assert_eq!(
        r.stream.last().unwrap()["num_turns"],
        fx["agent_result"]["num_turns"]
    );
}

/// A line the rules do not allow is refused before it runs (fixture `skill_bang_refused`):
/// the file is not made, the Skill call fails with Claude Code's opening, PostToolUseFailure
/// sees it, and the skill's text is not sent.
#[test]
fn a_skills_refused_line_never_runs_and_fails_the_call() {
    let fx = fixture("skill_bang_refused");
    let r = run("skill_bang_refused", &[]);
    assert!(!r.sandbox.exists("made.txt"), "the refused line never ran");
    assert!(fx["files"].get("made.txt").is_none(), "nor in Claude Code");
    let opening =
        "Shell command permission check failed for pattern \"!`touch made.txt && echo made`\": ";
    let theirs = their_result(&fx, 1);
    assert!(theirs["content"].as_str().unwrap().starts_with(opening));
    let ours = &r.tool_results[0];
    assert_eq!(ours["is_error"], true);
    assert!(
        ours["content"].as_str().unwrap().starts_with(opening),
        "{ours}"
    );
    let failure = r.of("PostToolUseFailure");
    let failure: Vec<_> = failure
        .iter()
        .filter(|h| h.stdin["tool_name"] == "Skill")
        .collect();
    assert_eq!(failure.len(), 1);
    assert_eq!(failure[0].stdin["error"], ours["content"]);
    let sent = r.requests[1].to_string();
    assert!(
        !sent.contains("Base directory for this skill"),
        "nothing sent"
    );
}

/// A line that runs and fails fails the call with Claude Code's other opening (fixture
/// `skill_bang_failed`).
#[test]
fn a_skills_failing_line_fails_the_call_with_its_error() {
    let fx = fixture("skill_bang_failed");
    let r = run("skill_bang_failed", &[]);
    let opening = "Shell command failed for pattern \"!`ls nonexistent-file`\": ";
    assert!(
        their_result(&fx, 1)["content"]
            .as_str()
            .unwrap()
            .starts_with(opening)
    );
    let ours = r.tool_results[0]["content"].as_str().unwrap();
    assert!(ours.starts_with(opening), "{ours}");
    assert!(ours.contains("No such file or directory"), "{ours}");
}

/// A skill's `allowed-tools` allow the model's later calls of the turn (fixture
/// `skill_allowed_tools`); in a folder not trusted the project's skill grants nothing (rein is
/// stricter there: Claude Code applies them).
#[test]
fn a_skills_allowed_tools_allow_the_turns_later_calls_in_a_trusted_folder() {
    let fx = fixture("skill_allowed_tools");
    assert!(
        fx["files"].get("made2.txt").is_some(),
        "Claude Code ran the touch"
    );
    let r = run("skill_allowed_tools", &["--trust"]);
    assert!(r.sandbox.exists("made2.txt"), "{:?}", r.tool_results);
    assert_eq!(r.tool_results[1], their_result(&fx, 2));
    let untrusted = run("skill_allowed_tools", &[]);
    assert!(
        !untrusted.sandbox.exists("made2.txt"),
        "{:?}",
        untrusted.tool_results
    );
}

/// Starting a skill that names `allowed-tools` needs approval; one without starts at once
/// (fixture `skill_needs_approval`; headless, nobody approves).
#[test]
fn a_skill_that_grants_tools_needs_approval_to_start() {
    let fx = fixture("skill_needs_approval");
    let r = run("skill_needs_approval", &["--trust"]);
    assert_eq!(their_result(&fx, 1)["is_error"], true);
    assert_eq!(r.tool_results[0]["is_error"], true, "{:?}", r.tool_results);
    assert_eq!(
        r.tool_results[1],
        their_result(&fx, 2),
        "the plain skill starts"
    );
    let result = r.stream.last().unwrap();
    assert_eq!(
        result["permission_denials"], fx["agent_result"]["permission_denials"],
        "{result}"
    );
    assert_eq!(
        result["num_turns"], fx["agent_result"]["num_turns"],
        "{result}"
    );
}

/// A command without arguments has no `<command-args>` line, and a `!` line that prints
/// nothing leaves Claude Code's no-output text (fixture `cmd_empty_bang`).
#[test]
fn a_command_without_arguments_and_a_silent_line() {
    let fx = fixture("cmd_empty_bang");
    let r = run("cmd_empty_bang", &[]);
    let theirs = fx["model"]["turns"][0]["new_messages"].as_array().unwrap();
    let theirs: Vec<String> = texts(theirs.last().unwrap())
        .into_iter()
        .filter(|t| !t.starts_with("<system-reminder>"))
        .collect();
    assert_eq!(last_texts(&r, 0, 2), theirs);
}

/// A command's `allowed-tools` allow the model's calls of its turn (fixture
/// `cmd_allowed_tools`), in a trusted folder; the next prompt's calls ask again.
#[test]
fn a_commands_allowed_tools_allow_its_turns_calls_in_a_trusted_folder() {
    let fx = fixture("cmd_allowed_tools");
    assert!(
        fx["files"].get("made3.txt").is_some(),
        "Claude Code ran the touch"
    );
    let r = run("cmd_allowed_tools", &["--trust"]);
    assert!(r.sandbox.exists("made3.txt"), "{:?}", r.tool_results);
    assert_eq!(r.tool_results[0], their_result(&fx, 1));
    let untrusted = run("cmd_allowed_tools", &[]);
    assert!(!untrusted.sandbox.exists("made3.txt"));
}

/// A command's `allowed-tools` count as the settings' allow rules would (Claude Code 2.1.328,
/// fixtures `cmd_allowed_mixed`, `cmd_allowed_dontask`): a line of a ruled part and a reading
/// part runs, and in dontAsk mode the ruled call runs too (trusted folder).
#[test]
fn a_commands_allowed_tools_count_as_allow_rules() {
    for (name, made) in [
        ("cmd_allowed_mixed", "a.txt"),
        ("cmd_allowed_dontask", "b.txt"),
    ] {
        let fx = fixture(name);
        assert!(
            fx["files"].get(made).is_some(),
            "{name}: Claude Code ran it"
        );
        let r = run(name, &["--trust"]);
        assert!(r.sandbox.exists(made), "{name}: {:?}", r.tool_results);
        assert_eq!(r.tool_results[0], their_result(&fx, 1), "{name}");
    }
}
