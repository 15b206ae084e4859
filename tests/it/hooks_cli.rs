//! `rein hooks list|validate|test|explain` through the built binary, against a settings tree
//! with a deliberate mistake in every category (user + project + local + `--settings` files),
//! real `/bin/sh` hook scripts, and the shipped `block-dangerous-commands` hook.
//!
//! HOME, REIN_HOME, CLAUDE_CONFIG_DIR and REIN_MANAGED_SETTINGS_DIR point into a temp dir, so
//! nothing of the machine's own settings leaks in. Outputs are snapshotted with the temp dir,
//! durations, session ids and tool-use ids redacted.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::{Sandbox, redact, rein_bin, write, write_executable};

/// A fake machine under one temp dir: `home/`, `config/` (CLAUDE_CONFIG_DIR), `rein/`
/// (REIN_HOME), `managed/`, and the project `project/`.
struct Machine {
    sandbox: Sandbox,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            sandbox: Sandbox::new("project", &["config", "rein", "managed", "project/.claude"]),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.sandbox.root.join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        write(&p, text);
        p
    }

    fn script(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        write_executable(&p, text);
        p
    }

    /// The sealed `rein` ([`Sandbox::rein`]) with this machine's own rein home, Claude config
    /// dir and managed-settings dir.
    fn rein(&self) -> Command {
        let mut cmd = self.sandbox.rein();
        cmd.env("REIN_HOME", self.path("rein"))
            .env("CLAUDE_CONFIG_DIR", self.path("config"))
            .env("REIN_MANAGED_SETTINGS_DIR", self.path("managed"));
        cmd
    }

    /// Runs `rein` with `args`; returns (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.rein().args(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// Output with the machine-specific parts replaced ([`redact`]).
    fn redact(&self, text: &str) -> String {
        redact(text, &self.sandbox.root)
    }
}

/// The settings tree with one mistake of every kind:
/// - user: a good guard, an exit-1-only guard with `timeout: 5000`, an invalid regex, `if` on
///   SessionStart, ConfigChange (never fired by rein), an unknown event;
/// - project: the good guard again (duplicate), an `if` that only matches `src/**`, a missing
///   script, a non-executable script, a handler without `command`, a bash-only script run with
///   `sh`, `once: true`;
/// - local: a malformed PreToolUse entry that voids the file, and a Stop hook voided with it;
/// - `--settings`: a file that is not valid JSON, and inline JSON with a Notification hook and
///   an exact copy of the project's UserPromptSubmit hook (which removes the project's copy);
/// - user also has an `http` hook, a type rein does not run yet.
fn mistakes() -> (Machine, Vec<String>) {
    let m = Machine::new();
    m.script(
        "project/hooks/guard.sh",
        "#!/bin/sh\n# Blocks rm -rf: exit 2 with the reason on stderr.\ninput=$(cat)\ncase \"$input\" in\n  *'rm -rf'*) echo \"guard: rm -rf is not allowed\" >&2; exit 2 ;;\nesac\nexit 0\n",
    );
    m.script(
        "project/hooks/exit1.sh",
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in\n  *secret*) echo refusing >&2; exit 1 ;;\nesac\nexit 0\n",
    );
    m.write("project/hooks/noexec.sh", "#!/bin/sh\nexit 0\n");
    m.script(
        "project/hooks/bashism.sh",
        "#!/bin/bash\nread -r input\nif [[ -n \"$input\" ]]; then echo ok; fi\n",
    );
    m.write(
        "config/settings.json",
        r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          { "type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh" },
          { "type": "command", "command": "hooks/exit1.sh", "timeout": 5000 }
        ]
      },
      { "matcher": "(?i)bash", "hooks": [ { "type": "command", "command": "echo never" } ] }
    ],
    "SessionStart": [
      { "hooks": [ { "type": "command", "command": "echo started", "if": "Bash(git *)" } ] }
    ],
    "ConfigChange": [ { "hooks": [ { "type": "command", "command": "echo config" } ] } ],
    "PostToolUse": [ { "hooks": [ { "type": "http", "url": "http://127.0.0.1:9/audit" } ] } ],
    "NotAnEvent": [ { "hooks": [ { "type": "command", "command": "echo unknown" } ] } ]
  },
  "allowedHttpHookUrls": ["https://audit.example.com/*"]
}
"#,
    );
    m.write(
        "project/.claude/settings.json",
        r#"{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash|Read", "hooks": [ { "type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh" } ] },
      { "matcher": "Edit", "hooks": [ { "type": "command", "command": "echo edit", "if": "Edit(src/**)" } ] }
    ],
    "PostToolUse": [
      { "matcher": "*", "hooks": [
        { "type": "command", "command": "./hooks/missing.sh" },
        { "type": "command", "command": "hooks/noexec.sh" },
        { "type": "command" }
      ] }
    ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "sh hooks/bashism.sh" } ] } ],
    "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "echo remember the style guide", "once": true } ] } ]
  }
}
"#,
    );
    m.write(
        "project/.claude/settings.local.json",
        r#"{
  "hooks": {
    "PreToolUse": [ { "matcher": "Write", "hooks": [ { "type": "command", "command": "echo local", "timeout": "ten" } ] } ],
    "Stop": [ { "hooks": [ { "type": "command", "command": "echo local-stop" } ] } ]
  }
}
"#,
    );
    m.write("broken.json", "{ \"hooks\": {\n");
    let flags = vec![
        "--settings".to_string(),
        m.path("broken.json").display().to_string(),
        "--settings".to_string(),
        r#"{"hooks":{"Notification":[{"matcher":"idle_prompt","hooks":[{"type":"command","command":"echo note"}]}],"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo remember the style guide"}]}]}}"#.to_string(),
    ];
    (m, flags)
}

fn with<'a>(args: &[&'a str], flags: &'a [String]) -> Vec<&'a str> {
    let mut v: Vec<&str> = args.to_vec();
    v.extend(flags.iter().map(String::as_str));
    v
}

#[test]
fn list_shows_every_handler_its_source_and_why_it_never_fires() {
    let (m, flags) = mistakes();
    let (code, out, err) = m.run(&with(&["hooks", "list"], &flags));
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("list_mistakes", m.redact(&out));
}

#[test]
fn list_json_has_stable_fields_and_a_reason_code_per_handler() {
    let (m, flags) = mistakes();
    let (code, out, err) = m.run(&with(&["hooks", "list", "--json"], &flags));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let handlers = v["handlers"].as_array().unwrap();
    let codes: Vec<(String, Value)> = handlers
        .iter()
        .map(|h| {
            (
                h["text"].as_str().unwrap().to_string(),
                h["never_fires"]["code"].clone(),
            )
        })
        .collect();
    let expect = |text: &str, code: Option<&str>| {
        let got = codes
            .iter()
            .find(|(t, _)| t == text)
            .unwrap_or_else(|| panic!("{text} not listed: {codes:?}"));
        assert_eq!(got.1.as_str(), code, "{text}");
    };
    expect("echo never", Some("invalid_matcher"));
    expect("echo started", Some("if_on_non_tool_event"));
    expect("echo config", Some("event_not_fired"));
    expect("echo unknown", Some("unknown_event"));
    expect("echo local-stop", Some("file_voided"));
    expect("echo note", None);
    expect("http://127.0.0.1:9/audit", Some("url_not_allowed"));
    let ups_copies: Vec<&Value> = handlers
        .iter()
        .filter(|h| h["text"] == "echo remember the style guide")
        .collect();
    assert_eq!(ups_copies.len(), 2);
    assert_eq!(ups_copies[0]["never_fires"]["code"], "duplicate");
    assert_eq!(ups_copies[0]["duplicate_of"], ups_copies[1]["index"]);
    assert_eq!(
        ups_copies[1]["source"], "flag",
        "the --settings copy is preferred"
    );
    expect("hooks/exit1.sh", None);
    // The guard is in user and project settings: the project copy survives (the last one).
    let guards: Vec<&Value> = handlers
        .iter()
        .filter(|h| h["command"] == "\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh")
        .collect();
    assert_eq!(guards.len(), 2);
    assert_eq!(guards[0]["source"], "user");
    assert_eq!(guards[0]["duplicate_of"], guards[1]["index"]);
    assert_eq!(guards[0]["duplicate_always"], false, "matchers differ");
    assert_eq!(guards[1]["duplicate_of"], Value::Null);
    let ups = handlers
        .iter()
        .find(|h| h["event"] == "UserPromptSubmit")
        .unwrap();
    assert_eq!(ups["effective_timeout_s"], 30.0);
    assert_eq!(
        ups["timeout_description"],
        "30 s (UserPromptSubmit default)"
    );
    assert_eq!(ups["once"], true);
    let files: Vec<(&str, &str)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["source"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("user", "applied"),
            ("project", "applied"),
            ("local", "not_applied"),
            ("flag", "not_applied"),
            ("flag", "applied"),
            ("policy", "absent"),
        ]
    );
    insta::assert_snapshot!("list_mistakes_json", m.redact(&out));
}

#[test]
fn validate_prints_every_problem_compiler_style_and_fails() {
    let (m, flags) = mistakes();
    let (code, out, err) = m.run(&with(&["hooks", "validate"], &flags));
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    let (last, summary) = (lines[lines.len() - 1], lines[lines.len() - 2]);
    assert_eq!(summary, "6 errors, 8 warnings");
    assert!(last.starts_with("trust: "), "{last}");
    let re = regex::Regex::new(r"^\S+:\d+:\d+: (error|warning): ").unwrap();
    for line in out.lines().filter(|l| *l != last && *l != summary) {
        assert!(re.is_match(line), "not compiler-style: {line}");
    }
    insta::assert_snapshot!("validate_mistakes", m.redact(&out));
}

#[test]
fn validate_json_counts_match_the_text() {
    let (m, flags) = mistakes();
    let (code, out, _) = m.run(&with(&["hooks", "validate", "--json"], &flags));
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["errors"], 6);
    assert_eq!(v["warnings"], 8);
    assert_eq!(v["ok"], false);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 14);
}

#[test]
fn validate_passes_on_warnings_alone_and_strict_makes_them_fail() {
    let m = Machine::new();
    m.script(
        "project/hooks/ok.sh",
        "#!/bin/sh\ncat >/dev/null\necho 'blocked' >&2\nexit 2\n",
    );
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"hooks/ok.sh"}]}]}}"#,
    );
    let (code, out, _) = m.run(&["hooks", "validate"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "0 errors, 0 warnings\ntrust: this folder is not trusted: its repository settings may not raise permissions (`rein hooks trust` records trust)\n"
        )
    );
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"hooks/ok.sh","timeout":3000}]}]}}"#,
    );
    let (code, out, _) = m.run(&["hooks", "validate"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with("0 errors, 1 warning\ntrust: this folder is not trusted: its repository settings may not raise permissions (`rein hooks trust` records trust)\n"), "{out}");
    assert!(out.contains("\"timeout\": 3000 is in seconds"), "{out}");
    let (code, _, _) = m.run(&["hooks", "validate", "--strict"]);
    assert_eq!(code, 1);
}

#[test]
fn disable_all_hooks_names_the_file_that_switched_them_off() {
    let (m, mut flags) = mistakes();
    m.write("off.json", r#"{"disableAllHooks": true}"#);
    flags.push("--settings".into());
    flags.push(m.path("off.json").display().to_string());
    let (code, out, _) = m.run(&with(&["hooks", "list", "--json"], &flags));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let off = m.redact(&m.path("off.json").display().to_string());
    for h in v["handlers"].as_array().unwrap() {
        let reason = &h["never_fires"];
        match reason["code"].as_str() {
            // These keep their own, more basic reason.
            Some("unknown_event" | "file_voided") => {}
            Some("disabled") => assert_eq!(
                m.redact(reason["message"].as_str().unwrap()),
                format!("\"disableAllHooks\": true in {off}")
            ),
            other => panic!("{} should be disabled, is {other:?}", h["text"]),
        }
    }
    let (_, text, _) = m.run(&with(&["hooks", "list"], &flags));
    assert!(
        m.redact(&text)
            .contains("NEVER FIRES: \"disableAllHooks\": true in [TMP]/off.json"),
        "{text}"
    );
}

#[test]
fn explain_says_why_each_handler_would_not_run_without_running_anything() {
    let (m, flags) = mistakes();
    let marker = m.path("ran");
    // Edit validates its input first (the file must exist), as in a session.
    m.write("project/src/a.rs", "a\n");
    m.write("project/docs/a.md", "a\n");
    // A handler that would leave a trace if explain ran it.
    m.write(
        "project/.claude/settings.json",
        &fs::read_to_string(m.path("project/.claude/settings.json"))
            .unwrap()
            .replace("echo edit", &format!("touch {}", marker.display())),
    );
    let (code, out, err) = m.run(&with(
        &[
            "hooks",
            "explain",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"rm -rf /"}"#,
        ],
        &flags,
    ));
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("explain_bash", m.redact(&out));

    let (code, out, _) = m.run(&with(
        &[
            "hooks",
            "explain",
            "PreToolUse",
            "--tool",
            "Edit",
            "--input",
            r#"{"file_path":"src/a.rs","old_string":"a","new_string":"b"}"#,
        ],
        &flags,
    ));
    assert_eq!(code, 0);
    // The path is made absolute as the Edit tool does, so `Edit(src/**)` holds.
    assert!(out.contains("\"if\": \"Edit(src/**)\" holds"), "{out}");
    assert!(!marker.exists(), "explain must not run hooks");

    let (_, out, _) = m.run(&with(
        &[
            "hooks",
            "explain",
            "PreToolUse",
            "--tool",
            "Edit",
            "--input",
            r#"{"file_path":"docs/a.md","old_string":"a","new_string":"b"}"#,
        ],
        &flags,
    ));
    assert!(
        out.contains("why: \"if\": \"Edit(src/**)\" does not match this call"),
        "{out}"
    );
}

#[test]
fn explain_agrees_with_what_test_runs() {
    let (m, flags) = mistakes();
    let args = [
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"ls"}"#,
        "--json",
    ];
    let (_, explained, _) = m.run(&with(&[&["hooks", "explain"][..], &args].concat(), &flags));
    let (_, tested, _) = m.run(&with(&[&["hooks", "test"][..], &args].concat(), &flags));
    let e: Value = serde_json::from_str(&explained).unwrap();
    let t: Value = serde_json::from_str(&tested).unwrap();
    let would: Vec<&Value> = e["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["runs"] == true)
        .map(|h| &h["index"])
        .collect();
    let ran: Vec<&Value> = t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["index"])
        .collect();
    assert_eq!(would, ran);
    assert_eq!(ran.len(), 2);
}

#[test]
fn test_runs_the_matching_hooks_for_real_and_shows_the_model_facing_text() {
    let (m, flags) = mistakes();
    let (code, out, err) = m.run(&with(
        &[
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"rm -rf /"}"#,
        ],
        &flags,
    ));
    assert_eq!(code, 3, "the guard blocks: {err}");
    assert!(
        out.contains(
            "PreToolUse:Bash hook error: [\"$CLAUDE_PROJECT_DIR\"/hooks/guard.sh]: guard: rm -rf is not allowed"
        ),
        "{out}"
    );
    insta::assert_snapshot!("test_bash_rm", m.redact(&out));
    // The run log of that session has one line per run, in the rein home.
    let logs: Vec<PathBuf> = fs::read_dir(m.path("rein/logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1);
    let lines: Vec<Value> = fs::read_to_string(&logs[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines
            .iter()
            .any(|l| l["exit_code"] == 2 && l["outcome"] == "blocking")
    );
}

#[test]
fn test_a_prompt_hook_shows_its_context_and_the_stdin_a_session_sends() {
    let (m, flags) = mistakes();
    let (code, out, err) = m.run(&with(
        &[
            "hooks",
            "test",
            "UserPromptSubmit",
            "--input",
            r#"{"prompt":"fix the bug"}"#,
            "--json",
        ],
        &flags,
    ));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let stdin = &v["stdin"];
    let keys: Vec<&str> = stdin
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "permission_mode",
            "hook_event_name",
            "prompt"
        ]
    );
    assert_eq!(stdin["session_id"], v["session_id"]);
    assert_eq!(stdin["permission_mode"], "default");
    assert_eq!(stdin["prompt"], "fix the bug");
    let transcript = stdin["transcript_path"].as_str().unwrap();
    assert!(transcript.starts_with(m.path("rein/projects").to_str().unwrap()));
    assert_eq!(
        v["model_sees"][0]["text"],
        "UserPromptSubmit hook success: remember the style guide"
    );
    assert_eq!(v["runs"][0]["status"], "exited");
    assert_eq!(v["runs"][0]["exit_code"], 0);
}

#[test]
fn test_reports_a_timeout_and_a_signal_as_non_blocking() {
    let m = Machine::new();
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
            {"type":"command","command":"sleep 5","timeout":0.3},
            {"type":"command","command":"kill -9 $$"}
        ]}]}}"#,
    );
    let (code, out, err) = m.run(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"ls"}"#,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("result:  timed out after 0.3 s; its process group was killed"),
        "{out}"
    );
    assert!(out.contains("killed by signal 9"), "{out}");
    assert!(
        out.contains("A hook didn't answer in time, so it didn't check this action."),
        "{out}"
    );
    assert!(out.contains("Decision: no permission decision"), "{out}");
}

#[test]
fn usage_errors_exit_2_with_a_precise_message() {
    let (m, _) = mistakes();
    let cases: &[(&[&str], &str)] = &[
        (
            &["hooks", "test", "PreTooluse", "--tool", "Bash"],
            "unknown event \"PreTooluse\" (did you mean PreToolUse?)",
        ),
        (
            &["hooks", "test", "PreToolUse"],
            "PreToolUse is a tool event: give the tool with --tool NAME",
        ),
        (
            &[
                "hooks",
                "explain",
                "PreToolUse",
                "--tool",
                "Bash",
                "--input",
                "{\"command\": ls}",
            ],
            "--input is not valid JSON: line 1, column 13: expected value",
        ),
        (
            &["hooks", "test", "ConfigChange"],
            "rein never fires ConfigChange",
        ),
        (
            &["hooks", "test", "Stop", "--tool", "Bash"],
            "Stop is not a tool event",
        ),
        (
            &[
                "hooks",
                "test",
                "UserPromptSubmit",
                "--input",
                "{\"promt\":\"x\"}",
            ],
            "UserPromptSubmit has no field \"promt\" (fields: prompt)",
        ),
        (
            &[
                "hooks",
                "test",
                "PreToolUse",
                "--tool",
                "Read",
                "--input",
                "{}",
            ],
            "the Read tool rejects this input",
        ),
        (
            &[
                "hooks",
                "test",
                "PreToolUse",
                "--tool",
                "Bash",
                "--input",
                "@nope.json",
            ],
            "--input @nope.json: cannot read",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = m.run(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
}

#[test]
fn input_from_a_file_with_event_fields() {
    let m = Machine::new();
    m.script(
        "project/hooks/show.sh",
        "#!/bin/sh\ncat > \"$CLAUDE_PROJECT_DIR/seen.json\"\n",
    );
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"hooks/show.sh"}]}],
                   "SessionStart":[{"matcher":"resume","hooks":[{"type":"command","command":"echo resumed"}]}]}}"#,
    );
    m.write(
        "project/in.json",
        r#"{"tool_input":{"command":"ls"},"tool_response":{"stdout":"a\n","stderr":"","interrupted":false,"isImage":false},"duration_ms":7}"#,
    );
    let (code, _, err) = m.run(&[
        "hooks",
        "test",
        "PostToolUse",
        "--tool",
        "Bash",
        "--input",
        "@in.json",
    ]);
    assert_eq!(code, 0, "{err}");
    let seen: Value =
        serde_json::from_str(&fs::read_to_string(m.path("project/seen.json")).unwrap()).unwrap();
    assert_eq!(seen["tool_response"]["stdout"], "a\n");
    assert_eq!(seen["duration_ms"], 7);
    assert_eq!(seen["hook_event_name"], "PostToolUse");

    let (_, out, _) = m.run(&["hooks", "test", "SessionStart"]);
    assert!(out.contains("0 handlers ran"), "{out}");
    let (_, out, _) = m.run(&["hooks", "test", "SessionStart", "--matcher-value", "resume"]);
    assert!(
        out.contains("SessionStart:resume hook success: resumed"),
        "{out}"
    );
}

#[test]
fn shipped_block_dangerous_commands_denies_rm_rf() {
    let m = Machine::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::create_dir_all(m.path("project/hooks")).unwrap();
    for entry in fs::read_dir(repo.join("hooks")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "py" || e == "sh") {
            fs::copy(&p, m.path("project/hooks").join(p.file_name().unwrap())).unwrap();
        }
    }
    fs::copy(
        repo.join("settings.example.json"),
        m.path("project/.claude/settings.json"),
    )
    .unwrap();
    let (code, out, err) = m.run(&["hooks", "validate"]);
    assert_eq!(code, 0, "the example settings are clean: {out}{err}");
    let (code, out, err) = m.run(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"rm -rf /"}"#,
    ]);
    assert_eq!(code, 3, "denied: {err}");
    assert!(
        out.contains("Decision: deny: Blocked dangerous command"),
        "{out}"
    );
    let model_text = out
        .lines()
        .skip_while(|l| !l.starts_with("The model sees:"))
        .nth(2)
        .unwrap_or_default()
        .trim();
    assert!(
        model_text.starts_with("PreToolUse:Bash hook error: Blocked dangerous command"),
        "{out}"
    );
    let (_, out, _) = m.run(&[
        "hooks",
        "test",
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"echo \"rm -rf /\""}"#,
    ]);
    assert!(out.contains("Decision: no permission decision"), "{out}");
}

#[test]
fn debug_hooks_prints_the_run_log_lines_to_stderr() {
    let (m, flags) = mistakes();
    let (code, _, err) = m.run(&with(
        &["hooks", "test", "Stop", "--debug", "hooks"],
        &flags,
    ));
    assert_eq!(code, 0, "{err}");
    let debug: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("[hook] "))
        .collect();
    let log_dir = m.path("rein/logs");
    let log = fs::read_dir(&log_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = fs::read_to_string(log).unwrap();
    let logged: Vec<&str> = text.lines().collect();
    assert_eq!(debug, logged);
    assert_eq!(
        logged.len(),
        1,
        "only the project Stop hook (local is voided)"
    );
}

#[test]
fn print_mode_sessions_write_the_run_log_and_debug_hooks_echoes_it() {
    let m = Machine::new();
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo noted"}]}],
                   "Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}"#,
    );
    let (code, _, err) = m.run(&["-p", "hello", "--debug", "hooks"]);
    assert_eq!(code, 0, "{err}");
    let logs: Vec<PathBuf> = fs::read_dir(m.path("rein/logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1);
    let text = fs::read_to_string(&logs[0]).unwrap();
    let events: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(events, ["UserPromptSubmit", "Stop"]);
    for line in text.lines() {
        assert!(err.contains(&format!("[hook] {line}")), "{err}");
    }
}

/// One `$ command` of a console block in the docs and the output lines shown under it.
struct DocCommand {
    line: String,
    expected: Vec<String>,
}

/// Whether `shown` (a line of the docs, where `…` stands for anything) matches `actual`.
fn doc_line_matches(shown: &str, actual: &str) -> bool {
    let parts: Vec<&str> = shown.split('…').collect();
    if parts.len() == 1 {
        return shown == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || !actual.ends_with(last) || actual.len() < first.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len()
}

/// Every file block (```lang file=PATH) and console block of `docs/writing-hooks.md`.
fn doc_blocks(doc: &str) -> (Vec<(String, String)>, Vec<DocCommand>) {
    let mut files = Vec::new();
    let mut commands: Vec<DocCommand> = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        if let Some(path) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        {
            files.push((path.to_string(), format!("{}\n", body.join("\n"))));
        } else if info == "console" {
            for l in body {
                match l.strip_prefix("$ ") {
                    Some(cmd) => commands.push(DocCommand {
                        line: cmd.to_string(),
                        expected: Vec::new(),
                    }),
                    None if l == "…" => {}
                    None => commands
                        .last_mut()
                        .expect("output before the first command")
                        .expected
                        .push(l.to_string()),
                }
            }
        }
    }
    (files, commands)
}

#[test]
fn docs_writing_hooks_every_command_works_as_shown() {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/writing-hooks.md"))
            .unwrap();
    let (files, commands) = doc_blocks(&doc);
    assert_eq!(files.len(), 2, "the script and the settings");
    assert!(commands.len() >= 8, "{}", commands.len());
    let m = Machine::new();
    let project = m.path("myproject");
    for (path, text) in &files {
        let p = project.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let bin = rein_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = m.path("home");
    for c in &commands {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&c.line)
            .current_dir(&project)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("REIN_MANAGED_SETTINGS_DIR", m.path("managed"))
            .env_remove("REIN_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("REIN_LOG")
            .env_remove("REIN_PROVIDER")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .replace(project.to_str().unwrap(), "~/myproject")
        .replace(home.to_str().unwrap(), "~");
        assert!(out.status.success(), "`{}` failed:\n{text}", c.line);
        let actual: Vec<&str> = text.lines().collect();
        for shown in &c.expected {
            assert!(
                actual.iter().any(|a| doc_line_matches(shown, a)),
                "`{}`: the docs show\n{shown}\nbut the output is\n{text}",
                c.line
            );
        }
    }
}

#[test]
fn doc_line_matching_treats_the_ellipsis_as_anything() {
    assert!(doc_line_matches("a…c", "abbbc"));
    assert!(doc_line_matches("…b…", "abc"));
    assert!(doc_line_matches("abc", "abc"));
    assert!(!doc_line_matches("abc", "abcd"));
    assert!(!doc_line_matches("a…c", "ab"));
    assert!(!doc_line_matches("a…b…c", "acb"));
}

#[test]
fn validate_checks_scripts_the_way_sh_and_interpreters_will_run_them() {
    let m = Machine::new();
    m.script(
        "project/hooks/noshebang.sh",
        "read -r input\nsource ./lib.sh\necho \"$input\"\n",
    );
    m.write(
        "project/hooks/guard.py",
        "import json, sys\ndata = json.load(sys.stdin)\nif 'secret' in data['tool_input'].get('command', ''):\n    print('no', file=sys.stderr)\n    sys.exit(1)\n",
    );
    m.script("project/hooks/ok.sh", "#!/bin/sh\nexit 0\n");
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{
  "PostToolUse":[{"hooks":[
    {"type":"command","command":"hooks/noshebang.sh"},
    {"type":"command","command":"python3 hooks/absent.py --flag"},
    {"type":"command","command":"'$CLAUDE_PROJECT_DIR'/hooks/ok.sh"},
    {"type":"command","command":"jq -r .tool_name | logger"},
    {"type":"command","command":"$SOMEWHERE/hook.sh"}
  ]}],
  "PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 \"$CLAUDE_PROJECT_DIR/hooks/guard.py\""}]}]
}}"#,
    );
    let (code, out, err) = m.run(&["hooks", "validate"]);
    assert_eq!(code, 1, "a missing script is an error: {out}{err}");
    let out = m.redact(&out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 7, "{out}");
    assert!(lines[0].contains("[TMP]/project/hooks/noshebang.sh line 2 uses `source` (POSIX sh has `.`), which is bash-only, but it has no #! line, so /bin/sh runs it"), "{out}");
    assert!(
        lines[1].contains(
            ": error: script [TMP]/project/hooks/absent.py does not exist (from \"hooks/absent.py\""
        ),
        "{out}"
    );
    assert!(
        lines[2].contains("single quotes stop the shell from expanding $CLAUDE_PROJECT_DIR"),
        "{out}"
    );
    // The variable is unset here: the path would lose that part, and rein does not start it.
    assert!(
        lines[3].contains("$SOMEWHERE in the script path $SOMEWHERE/hook.sh is not set"),
        "{out}"
    );
    assert!(lines[4].contains("can never block this PermissionRequest call: its only non-zero exit is `exit 1` (line 5)"), "{out}");
    // The two missing scripts are errors.
    assert_eq!(lines[5], "2 errors, 3 warnings");
    // A PATH command with no script argument is not guessed at, nor is the script behind an
    // unknown variable checked for existence.
    assert!(!out.contains("jq"), "{out}");
    assert!(!out.contains("hook.sh does not exist"), "{out}");
}

/// PreModelSwitch (fired by `/model NAME`): a `deny` or an exit 2 keeps the model, anything
/// else lets the switch go ahead; the stdin has Claude Code's keys in its order (fixture
/// tests/fixtures/cc-2.1.328/interactive/run1-hooks.jsonl).
#[test]
fn test_pre_model_switch_deny_and_exit_2_keep_the_model() {
    let cases = [
        (
            r#"echo '{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"deny","permissionDecisionReason":"pinned by policy"}}'"#,
            "deny: the model stays",
            3,
        ),
        (
            "echo 'no switching today' >&2; exit 2",
            "deny: the model stays",
            3,
        ),
        (
            r#"echo '{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"allow"}}'"#,
            "the switch goes ahead",
            0,
        ),
        ("exit 0", "the switch goes ahead", 0),
    ];
    // `hooks test` exits 3 when the hooks block, 0 when they let the action go ahead.
    for (command, expected, status) in cases {
        let m = Machine::new();
        m.write(
            "project/.claude/settings.json",
            &serde_json::json!({"hooks": {"PreModelSwitch": [{"matcher": "claude-haiku-4-5",
                "hooks": [{"type": "command", "command": command}]}]}})
            .to_string(),
        );
        let (code, out, err) = m.run(&["hooks", "test", "PreModelSwitch", "--json"]);
        assert_eq!(code, status, "{command}: {out}{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(out.contains(expected), "{command}: {out}");
        let keys: Vec<&str> = v["stdin"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "session_id",
                "transcript_path",
                "cwd",
                "prompt_id",
                "hook_event_name",
                "from_model",
                "to_model",
                "requested_model",
                "source",
                "context_tokens",
                "prompt_cache_warm",
                "cache_ttl",
                "pricing"
            ],
            "{out}"
        );
    }
}

// ---------- dead matchers, missing scripts, exit statuses (issue 15, item 10) ----------

#[test]
fn validate_reports_case_only_matchers_and_missing_scripts_as_errors() {
    let m = Machine::new();
    m.script("project/hooks/ok.sh", "#!/bin/sh\ncat >/dev/null\nexit 0\n");
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PreToolUse":[
  {"matcher":"bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"Read|write","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"edit.*","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"webfetch","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"Bash|Write","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/gone.sh"}]},
  {"matcher":"Bash","hooks":[{"type":"command","command":"$SOMEWHERE/guard.sh"}]}
]}}"#,
    );
    let (code, out, err) = m.run(&["hooks", "validate"]);
    assert_eq!(code, 1, "{out}{err}");
    let out = m.redact(&out);
    let errors: Vec<&str> = out.lines().filter(|l| l.contains(": error: ")).collect();
    let expect = [
        (
            ":2:",
            r#"matcher "bash" never matches: tool names are case-sensitive; did you mean "Bash"?"#,
        ),
        (
            ":3:",
            r#"matcher "write" never matches: tool names are case-sensitive; did you mean "Write"?"#,
        ),
        (
            ":4:",
            r#"matcher "edit.*" never matches: tool names are case-sensitive, and only with case ignored would it match Edit, NotebookEdit, MultiEdit (rein has no MultiEdit)"#,
        ),
        (
            ":5:",
            r#"matcher "webfetch" never matches: tool names are case-sensitive; did you mean "WebFetch"?"#,
        ),
        (":6:", "script [TMP]/project/hooks/gone.sh does not exist"),
    ];
    assert_eq!(errors.len(), expect.len(), "{out}");
    for ((at, text), line) in expect.iter().zip(&errors) {
        assert!(
            line.contains(at) && line.contains(text),
            "{line}\nwanted {text}"
        );
    }
    // A script path behind a variable rein cannot know stays a warning, never "missing".
    assert!(
        out.lines()
            .any(|l| l.contains(":7:") && l.contains(": warning: $SOMEWHERE in the script path")),
        "{out}"
    );
    assert!(!out.contains("guard.sh does not exist"), "{out}");
    assert!(out.contains("5 errors, 1 warning"), "{out}");

    // Fixed: the right case and an existing script pass.
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{"PreToolUse":[
  {"matcher":"Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"Read|Write","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]},
  {"matcher":"Edit.*","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh"}]}
]}}"#,
    );
    let (code, out, err) = m.run(&["hooks", "validate", "--strict"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn hooks_test_exit_status_says_whether_the_hooks_block() {
    let m = Machine::new();
    m.script(
        "project/hooks/guard.sh",
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'rm -rf'*) echo 'no rm' >&2; exit 2 ;; esac\nexit 0\n",
    );
    m.script(
        "project/hooks/deny-write.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"read-only\"}}'\n",
    );
    m.script(
        "project/hooks/stop.sh",
        "#!/bin/sh\ncat >/dev/null\necho '{\"decision\":\"block\",\"reason\":\"keep going\"}'\n",
    );
    m.script(
        "project/hooks/broken.sh",
        "#!/bin/sh\ncat >/dev/null\nexit 1\n",
    );
    m.write(
        "project/.claude/settings.json",
        r#"{"hooks":{
  "PreToolUse":[
    {"matcher":"Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/guard.sh"}]},
    {"matcher":"Write","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/deny-write.sh"}]},
    {"matcher":"Read","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/broken.sh"}]}
  ],
  "Stop":[{"hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/stop.sh"}]}]
}}"#,
    );
    let test = |args: &[&str]| {
        let mut all = vec!["hooks", "test"];
        all.extend_from_slice(args);
        m.run(&all)
    };
    // exit 2 from the hook: blocked.
    let (code, out, _) = test(&[
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"rm -rf x"}"#,
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Blocked: exit status 3"), "{out}");
    // The same hook letting a command through.
    let (code, out, _) = test(&[
        "PreToolUse",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"ls"}"#,
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Blocked"), "{out}");
    // A JSON deny.
    let (code, out, _) = test(&[
        "PreToolUse",
        "--tool",
        "Write",
        "--input",
        r#"{"file_path":"a.txt","content":"x"}"#,
        "--json",
    ]);
    assert_eq!(code, 3, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["blocks"], true);
    // A hook that fails with exit 1 does not block: the action goes ahead, as in a session.
    let (code, out, _) = test(&[
        "PreToolUse",
        "--tool",
        "Read",
        "--input",
        r#"{"file_path":"a.txt"}"#,
        "--json",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["blocks"], false);
    // Stop `decision: block` keeps the turn going: a block too.
    let (code, out, _) = test(&["Stop"]);
    assert_eq!(code, 3, "{out}");
    // No handler for the event: nothing blocks.
    let (code, _, _) = test(&["SessionStart"]);
    assert_eq!(code, 0);
    // A usage error is 2, never taken for a block.
    let (code, _, err) = test(&["PreTooluse", "--tool", "Bash"]);
    assert_eq!(code, 2, "{err}");
    // --help documents the statuses.
    let (code, out, _) = m.run(&["hooks", "test", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("3 they block, refuse or stop it"), "{out}");
}

#[test]
fn list_says_never_fires_for_tools_rein_does_not_have() {
    let m = Machine::new();
    m.script(
        "project/hooks/ok.sh 1",
        "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    );
    let settings = r#"{"hooks":{"PreToolUse":[
  {"matcher":"CronCreate|Monitor","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 2"}]},
  {"matcher":"mcp__github__create_issue","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 3"}]},
  {"matcher":"Cron.*","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 4"}]},
  {"matcher":"CronCreate|Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 5"}]},
  {"matcher":"Task","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 6"}]},
  {"matcher":"bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/ok.sh 7"}]}
]}}"#;
    m.write("project/.claude/settings.json", settings);
    let (code, out, err) = m.run(&["hooks", "list"]);
    assert_eq!(code, 0, "{err}");
    let verdicts: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("fires") || l.starts_with("NEVER FIRES"))
        .collect();
    assert_eq!(
        verdicts,
        [
            "NEVER FIRES: rein has no tool CronCreate; rein has no tool Monitor",
            "NEVER FIRES: MCP server \"github\" is not configured",
            "NEVER FIRES: its matcher matches none of rein's tools (Agent, Bash, Read, Write, Edit, Glob, Grep, TaskStop, NotebookEdit, WebFetch, WebSearch, ToolSearch, Skill) and no MCP server is configured",
            "fires   yes",
            // `Task` is the Agent tool's former name.
            "fires   yes",
            "NEVER FIRES: no tool is named bash (tool names are case-sensitive: Bash)",
        ],
        "{out}"
    );
    assert!(
        out.contains("6 handlers: 2 can fire, 4 never fire."),
        "{out}"
    );
    let (_, out, _) = m.run(&["hooks", "list", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["handlers"][0]["fires"], false);
    assert_eq!(v["handlers"][0]["never_fires"]["code"], "no_such_tool");

    // With the github server configured, its tool's matcher fires, and the regex fires only
    // for the MCP tools it matches.
    m.write(
        "project/.mcp.json",
        r#"{"mcpServers":{"github":{"command":"true"}}}"#,
    );
    let (code, out, err) = m.run(&["hooks", "list"]);
    assert_eq!(code, 0, "{err}");
    let verdicts: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("fires") || l.starts_with("NEVER FIRES"))
        .collect();
    assert_eq!(verdicts[1], "fires   yes", "{out}");
    assert_eq!(
        verdicts[2],
        "fires   only for the tools of MCP servers github that it matches (none of rein's own tools)",
        "{out}"
    );
}

/// `rein hooks list` shows the status line command and where it is written; a repository's
/// is held back (named at its line) until the folder is trusted, and the user's runs meanwhile.
#[test]
fn hooks_list_shows_the_status_line_and_a_repositorys_waits_for_trust() {
    let s = crate::harness::Sandbox::new("proj", &["proj/.claude"]);
    crate::harness::write(
        &s.home.join(".claude/settings.json"),
        r#"{"statusLine": {"type": "command", "command": "~/user-status.sh"}}"#,
    );
    s.settings(serde_json::json!({"statusLine": {"type": "command", "command": "./status.sh"}}));
    let list = |s: &crate::harness::Sandbox| -> serde_json::Value {
        let out = s.rein().args(["hooks", "list", "--json"]).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = list(&s);
    assert_eq!(
        v["status_line"]["command"], "~/user-status.sh",
        "untrusted folder: {v}"
    );
    assert_eq!(v["status_line"]["source"], "user");
    let settings = s.path(".claude/settings.json").display().to_string();
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["file"] == settings
                && d["line"] == 2
                && d["message"].as_str().unwrap().contains("\"statusLine\"")
                && d["message"].as_str().unwrap().contains("trusted")),
        "{v}"
    );
    let text = s.rein().args(["hooks", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Status line") && text.contains("~/user-status.sh"),
        "{text}"
    );
    let trusted = s.rein().args(["hooks", "trust"]).output().unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let v = list(&s);
    assert_eq!(v["status_line"]["command"], "./status.sh", "{v}");
    assert_eq!(v["status_line"]["source"], "project");
    assert_eq!(v["status_line"]["line"], 2);
}
