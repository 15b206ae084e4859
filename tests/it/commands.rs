//! Slash commands through the built binary: a command's `` !`line` `` is a Bash call through
//! the user's hooks and the permission step (a refused line never runs, and the model is not
//! asked); `allowed-tools` allow what the mode would ask for, only in a trusted folder; a
//! command file with broken front matter is named at its line and the others still run.

use std::process::Output;

use serde_json::json;

use crate::harness::{Sandbox, say};

fn run(sb: &Sandbox, prompt: &str, extra: &[&str]) -> Output {
    let mock = sb.mock(json!([say("MODEL-ANSWERED")]));
    sb.rein()
        .args(["-p", prompt, "--mock-script"])
        .arg(&mock)
        .args(extra)
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_hook_that_refuses_bash_refuses_a_commands_bang_line() {
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write("victim.txt", "precious\n");
    sb.write(
        ".claude/commands/wipe.md",
        "---\ndescription: Wipe\n---\nGone: !`rm victim.txt`\n",
    );
    let guard = sb.script(
        "guard.sh",
        "cat > /dev/null\necho 'no rm from commands' >&2\nexit 2",
    );
    sb.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}]}));
    let out = run(&sb, "/wipe", &["--permission-mode", "bypassPermissions"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(
        std::fs::read_to_string(sb.path("victim.txt")).unwrap(),
        "precious\n",
        "the refused line never ran"
    );
    assert!(
        !stdout.contains("MODEL-ANSWERED"),
        "the model was not asked: {stdout}"
    );
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("!`rm victim.txt`"), "names the line: {all}");
    assert!(all.contains("no rm from commands"), "says why: {all}");
}

#[test]
fn allowed_tools_allow_a_bang_line_only_in_a_trusted_folder() {
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write(
        ".claude/commands/mk.md",
        "---\ndescription: Make\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch made.txt`\n",
    );
    sb.write(".claude/commands/plain.md", "Made: !`touch plain.txt`\n");

    // Default mode asks for Bash; nobody can answer in -p: refused, not run.
    let out = run(&sb, "/plain", &[]);
    assert!(!sb.exists("plain.txt"), "{:?}", text(&out));

    // Untrusted folder: the repository's allowed-tools allow nothing.
    let out = run(&sb, "/mk", &[]);
    let (_, stderr) = text(&out);
    assert!(!sb.exists("made.txt"), "{stderr}");
    assert!(stderr.contains("allowed-tools ignored"), "{stderr}");

    // Trusted: the rule allows exactly the touch, and the model gets the expanded body.
    let out = run(&sb, "/mk", &["--trust"]);
    let (stdout, stderr) = text(&out);
    assert!(sb.exists("made.txt"), "{stdout}{stderr}");
    assert!(stdout.contains("MODEL-ANSWERED"), "{stdout}{stderr}");
}

#[test]
fn a_broken_command_file_is_named_and_the_rest_still_run() {
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write(
        ".claude/commands/bad.md",
        "---\ndescription: x\nthis line is wrong\n---\nBody\n",
    );
    sb.write(".claude/commands/good.md", "Good: !`echo ran > good.txt`\n");
    let out = run(&sb, "/good", &["--permission-mode", "bypassPermissions"]);
    let (stdout, stderr) = text(&out);
    assert!(sb.exists("good.txt"), "{stdout}{stderr}");
    let bad = sb.path(".claude/commands/bad.md");
    assert!(
        stderr.contains(&format!("{}:3:", bad.display())),
        "names file and line: {stderr}"
    );
    let out = sb.rein().args(["hooks", "validate"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(
        format!("{stdout}{stderr}").contains(&format!("{}:3", bad.display())),
        "rein hooks validate names it too: {stdout}{stderr}"
    );
}

/// A command's `model` answers every request of its turn, and the session's model the next
/// prompt (Claude Code 2.1.328: fixture `tests/fixtures/cc-2.1.328/command_model`, both
/// requests of the command's turn name its model); an alias keeps the session's model.
#[test]
fn a_commands_model_answers_its_turn_and_the_session_model_the_next() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write(
        ".claude/commands/fast.md",
        "---\ndescription: Fast one\nmodel: claude-fast\n---\nDo it quickly: $ARGUMENTS\n",
    );
    sb.write(
        ".claude/commands/alias.md",
        "---\nmodel: haiku\n---\nAliased: $ARGUMENTS\n",
    );
    sb.settings(json!({"permissions": {"allow": ["Bash"]}}));
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::call("b1", "Bash", json!({"command": "echo hi"})),
            Turn::text("done"),
            Turn::text("next"),
            Turn::text("aliased"),
        ],
    );
    let input = [
        json!({"type": "user", "message": {"role": "user", "content": "/fast go"}}),
        json!({"type": "user", "message": {"role": "user", "content": "plain prompt"}}),
        json!({"type": "user", "message": {"role": "user", "content": "/alias x"}}),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let mut cmd = sb.rein();
    cmd.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ])
    .args(["--verbose", "--model", "claude-main", "--trust"])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    Api::Anthropic.point(&mut cmd, &server.url);
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        models,
        ["claude-fast", "claude-fast", "claude-main", "claude-main"],
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A command's `allowed-tools` allow the model's calls of the command's own turn only: the
/// same call in the next prompt asks again (headless: refused), so the file of the second
/// touch is never made.
#[test]
fn a_commands_allowed_tools_end_with_its_turn() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write(
        ".claude/commands/tch.md",
        "---\ndescription: t\nallowed-tools: Bash(touch:*)\n---\nTouch it.\n",
    );
    let server = Loopback::start(
        Api::Anthropic,
        vec![
            Turn::call("b1", "Bash", json!({"command": "touch first.txt"})),
            Turn::text("done"),
            Turn::call("b2", "Bash", json!({"command": "touch second.txt"})),
            Turn::text("next"),
        ],
    );
    let input = [
        json!({"type": "user", "message": {"role": "user", "content": "/tch"}}),
        json!({"type": "user", "message": {"role": "user", "content": "touch again"}}),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let mut cmd = sb.rein();
    cmd.args([
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ])
    .args(["--verbose", "--trust"])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    Api::Anthropic.point(&mut cmd, &server.url);
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(sb.exists("first.txt"), "the command's turn: {stdout}");
    assert!(
        !sb.exists("second.txt"),
        "the next prompt asked again: {stdout}"
    );
}

/// A command's `allowed-tools` allow what the same rules in the settings allow: a line of a
/// ruled part and a reading part runs; one with a part they do not cover is refused before it
/// runs, and its victim survives; a deny rule of the settings still refuses.
#[test]
fn allowed_tools_allow_what_the_same_settings_rules_allow() {
    let sb = Sandbox::new("proj", &["proj/.claude/commands"]);
    sb.write("victim.txt", "precious\n");
    sb.write("notes.txt", "NOTES\n");
    sb.write(
        ".claude/commands/mix.md",
        "---\ndescription: Mix\nallowed-tools: Bash(touch:*)\n---\nMade: !`touch made.txt && cat notes.txt`\n",
    );
    sb.write(
        ".claude/commands/wipe.md",
        "---\ndescription: Wipe\nallowed-tools: Bash(touch:*)\n---\nGone: !`touch x.txt && rm victim.txt`\n",
    );
    sb.write(
        ".claude/commands/denied.md",
        "---\ndescription: Denied\nallowed-tools: Bash(touch:*)\n---\nNo: !`touch denied.txt`\n",
    );
    let out = run(&sb, "/mix", &["--trust"]);
    let (stdout, stderr) = text(&out);
    assert!(sb.exists("made.txt"), "{stdout}{stderr}");
    assert!(stdout.contains("MODEL-ANSWERED"), "{stdout}{stderr}");

    let out = run(&sb, "/wipe", &["--trust"]);
    assert_eq!(
        std::fs::read_to_string(sb.path("victim.txt")).unwrap(),
        "precious\n"
    );
    assert!(
        !sb.exists("x.txt"),
        "nothing of the refused line ran: {:?}",
        text(&out)
    );

    sb.settings(json!({"permissions": {"deny": ["Bash(touch denied.txt)"]}}));
    let out = run(&sb, "/denied", &["--trust"]);
    assert!(!sb.exists("denied.txt"), "{:?}", text(&out));
}
