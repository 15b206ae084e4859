//! The system prompt and the memory files: what reaches the model (both providers), in which
//! order, what `InstructionsLoaded` hooks read (compared with Claude Code's stdin in
//! `tests/fixtures/cc/instructions_and_usage.json`), and the prompt flags.

use std::path::Path;

use serde_json::{Value, json};

use super::loopback::{Api, Loopback, Turn};
use crate::harness::{Sandbox, write};

/// The memory files of the Claude Code measurement, laid out the same way: the user's, one in
/// the parent directory, the project's (importing two files, one missing), `.claude/CLAUDE.md`
/// and `CLAUDE.local.md`; the second import imports the project file again (a cycle).
fn lay_out_memory(s: &Sandbox) {
    write(&s.home.join(".claude/CLAUDE.md"), "USER-MEMORY line\n");
    write(&s.root.join("CLAUDE.md"), "PARENT-MEMORY line\n");
    s.write(
        "CLAUDE.md",
        "PROJECT-MEMORY line\n@docs/extra.md\n@docs/missing.md\nnot an import: `@docs/code.md`\n",
    );
    s.write("docs/extra.md", "EXTRA-IMPORT line\n@./extra2.md\n");
    s.write("docs/extra2.md", "EXTRA2-IMPORT line\n@../CLAUDE.md\n");
    s.write("docs/code.md", "CODE-SPAN-NEVER-LOADED\n");
    s.write(".claude/CLAUDE.md", "DOTCLAUDE-MEMORY line\n");
    s.write("CLAUDE.local.md", "LOCAL-MEMORY line\n");
}

fn positions(text: &str, markers: &[&str]) -> Vec<usize> {
    markers
        .iter()
        .map(|m| {
            text.find(m)
                .unwrap_or_else(|| panic!("{m} missing from the system prompt:\n{text}"))
        })
        .collect()
}

/// `<HOME>`, `<ROOT>`, `<PROJECT>`, `<SESSION>` of the fixture replaced by this run's values.
fn localize(v: &Value, s: &Sandbox, session: &str) -> Value {
    let text = v
        .to_string()
        .replace("<PROJECT>", &s.project.display().to_string())
        .replace("<HOME>", &s.home.display().to_string())
        .replace("<ROOT>", &s.root.display().to_string())
        .replace("<SESSION>", session);
    serde_json::from_str(&text).unwrap()
}

fn fixture() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc/instructions_and_usage.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn memory_files_and_imports_reach_both_providers_in_order_and_instructions_loaded_matches_claude_code()
 {
    for api in Api::BOTH {
        let s = Sandbox::new("project", &[]);
        lay_out_memory(&s);
        let hook = s.script("il.sh", "cat >> \"$CLAUDE_PROJECT_DIR/il-stdin.jsonl\"");
        s.hooks(json!({"InstructionsLoaded": [{"hooks": [{"type": "command", "command": hook}]}]}));
        let server = Loopback::start(api, vec![Turn::text("hi")]);
        let mut cmd = s.rein();
        cmd.args(["-p", "hello", "--output-format", "json"])
            .args(["--append-system-prompt", "APPENDED-TEXT"]);
        api.point(&mut cmd, &server.url);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{api:?}: {stderr}");

        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{api:?}");
        let system = api.system_of(&requests[0]);
        // rein's own prompt first, then the memory files in Claude Code's order, then the
        // appended text.
        let order = positions(
            &system,
            &[
                "You are rein",
                "# Environment",
                "USER-MEMORY",
                "PARENT-MEMORY",
                "PROJECT-MEMORY",
                "EXTRA-IMPORT",
                "EXTRA2-IMPORT",
                "DOTCLAUDE-MEMORY",
                "LOCAL-MEMORY",
                "APPENDED-TEXT",
            ],
        );
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "{api:?} order {order:?}:\n{system}"
        );
        assert_eq!(
            system.matches("PROJECT-MEMORY").count(),
            1,
            "loaded once despite the cycle"
        );
        assert!(
            !system.contains("CODE-SPAN-NEVER-LOADED"),
            "an @ in code is no import"
        );
        assert!(system.contains(&format!("Working directory: {}", s.project.display())));
        // The prompt is not sent as a user message.
        let messages = api.messages_of(&requests[0]);
        assert_eq!(messages.len(), 1, "{messages:?}");

        // One clear line each for the missing import and the cycle; the session went on.
        assert!(
            stderr.contains(&format!(
                "memory import @docs/missing.md in {}: {} does not exist; skipped",
                s.path("CLAUDE.md").display(),
                s.path("docs/missing.md").display()
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains("memory import cycle")
                && stderr.contains(&format!(
                    "{} imports {}",
                    s.path("docs/extra2.md").display(),
                    s.path("CLAUDE.md").display()
                )),
            "{stderr}"
        );

        // InstructionsLoaded: one firing per file, each stdin as Claude Code's (key order
        // included); Claude Code runs them async, so its arrival order is not compared.
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        let session = result["session_id"].as_str().unwrap();
        let text = std::fs::read_to_string(s.path("il-stdin.jsonl")).unwrap();
        let mut ours: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let fixture = fixture();
        let mut theirs: Vec<Value> = fixture
            ["instructions_loaded_stdin_in_arrival_order (hooks run async, so arrival order is not load order)"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| localize(v, &s, session))
            .collect();
        for line in ours.iter_mut().chain(theirs.iter_mut()) {
            // Where the transcript lives is rein's own (~/.rein); everything else must agree.
            line["transcript_path"] = json!("[transcript]");
        }
        let key = |v: &Value| v["file_path"].as_str().unwrap().to_string();
        theirs.sort_by_key(key);
        let mut sorted = ours.clone();
        sorted.sort_by_key(key);
        assert_eq!(
            serde_json::to_string(&sorted).unwrap(),
            serde_json::to_string(&theirs).unwrap(),
            "{api:?}"
        );
        // rein fires them in load order.
        let loaded: Vec<String> = ours.iter().map(key).collect();
        let expected: Vec<String> = fixture["first_user_block_memory_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| localize(p, &s, session).as_str().unwrap().to_string())
            .collect();
        assert_eq!(loaded, expected, "{api:?}");

        // Usage: the provider's counts in the result, per model, and on the transcript line.
        assert_eq!(
            result["usage"],
            json!({"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 2}),
            "{api:?}"
        );
        let model = match api {
            Api::Anthropic => "claude-loopback",
            Api::OpenAi => "gpt-loopback",
        };
        assert_eq!(result["modelUsage"][model]["inputTokens"], 10, "{result}");
        assert_eq!(result["modelUsage"][model]["outputTokens"], 2, "{result}");
        assert_eq!(
            result["total_cost_usd"], 0.0,
            "no prices configured: no cost"
        );
        let transcript = std::fs::read_to_string(&s.transcript_files()[0]).unwrap();
        let assistant: Value = transcript
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["type"] == "assistant")
            .unwrap();
        assert_eq!(
            serde_json::to_string(&assistant["message"]["usage"]).unwrap(),
            r#"{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}"#,
            "Claude Code's key order"
        );
    }
}

#[test]
fn system_prompt_file_replaces_reins_prompt_and_keeps_the_memory_files() {
    for api in Api::BOTH {
        let s = Sandbox::new("project", &[]);
        s.write("CLAUDE.md", "PROJECT-MEMORY line\n");
        s.write("prompt.txt", "CUSTOM-PROMPT from a file");
        s.write("extra.txt", "APPENDED-FROM-FILE");
        let server = Loopback::start(api, vec![Turn::text("hi")]);
        let mut cmd = s.rein();
        cmd.args(["-p", "hello", "--system-prompt-file", "prompt.txt"])
            .args(["--append-system-prompt-file", "extra.txt"]);
        api.point(&mut cmd, &server.url);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let system = api.system_of(&server.requests()[0]);
        assert!(system.starts_with("CUSTOM-PROMPT from a file"), "{system}");
        assert!(!system.contains("You are rein"), "{system}");
        let order = positions(
            &system,
            &["CUSTOM-PROMPT", "PROJECT-MEMORY", "APPENDED-FROM-FILE"],
        );
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{system}");
    }
}

#[test]
fn an_unreadable_prompt_file_or_add_dir_is_one_clear_error() {
    let s = Sandbox::new("project", &[]);
    let out = s
        .rein()
        .args(["-p", "hi", "--system-prompt-file", "nope.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--system-prompt-file nope.txt: No such file"),
        "{stderr}"
    );

    let out = s
        .rein()
        .args(["-p", "hi", "--add-dir", "missing-dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--add-dir missing-dir: No such file"),
        "{stderr}"
    );

    // An unreadable CLAUDE.md is named and skipped; the session goes on.
    s.write("CLAUDE.md", "secret");
    std::fs::create_dir_all(s.path(".claude/CLAUDE.md")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    s.write("CLAUDE.local.md", "x");
    std::fs::set_permissions(
        s.path("CLAUDE.local.md"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let out = s.rein().args(["-p", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Root reads files whatever their mode; only check the message where the read fails.
    if std::fs::read(s.path("CLAUDE.local.md")).is_err() {
        assert!(
            stderr.contains(&format!(
                "cannot read memory file {}",
                s.path("CLAUDE.local.md").display()
            )),
            "{stderr}"
        );
    }
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn add_dir_is_named_to_the_model_and_its_memory_loads_only_when_asked() {
    let s = Sandbox::new("project", &["other"]);
    write(&s.root.join("other/CLAUDE.md"), "OTHER-DIR-MEMORY\n");
    for (var, loaded) in [(None, false), (Some("1"), true)] {
        let server = Loopback::start(Api::Anthropic, vec![Turn::text("hi")]);
        let mut cmd = s.rein();
        cmd.args(["-p", "hello", "--add-dir", "../other"]);
        Api::Anthropic.point(&mut cmd, &server.url);
        match var {
            Some(v) => cmd.env("CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD", v),
            None => cmd.env_remove("CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD"),
        };
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let system = Api::Anthropic.system_of(&server.requests()[0]);
        assert!(
            system.contains(&format!(
                "Additional directory you may work in: {}",
                s.root.join("other").display()
            )),
            "{system}"
        );
        assert_eq!(system.contains("OTHER-DIR-MEMORY"), loaded, "{system}");
    }
}
