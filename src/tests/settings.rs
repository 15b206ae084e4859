//! Settings discovery, merge and validation against real files in temp directories.

use std::fs;
use std::path::PathBuf;

use crate::hooks::matcher::Matcher;
use crate::hooks::spec::HookEvent;
use crate::settings::schema::{HandlerKind, Inactive, Settings, SourceKind};
use crate::settings::{LoadOptions, load, parse_setting_sources};

use crate::tests::harness::{Sandbox, write};

/// A fake machine: home, project, managed dir, all under one temp dir.
struct Env {
    _sandbox: Sandbox,
    root: PathBuf,
    opts: LoadOptions,
}

impl Env {
    fn new() -> Env {
        let sandbox = Sandbox::new("project", &["home/.claude", "project/.claude", "managed"]);
        let root = sandbox.root.clone();
        let opts = LoadOptions {
            project_dir: root.join("project"),
            cwd: root.join("project"),
            home: root.join("home"),
            config_dir: None,
            flag_settings: Vec::new(),
            setting_sources: None,
            managed_dir: root.join("managed"),
            repo_trusted: true,
            plugin_dirs: Vec::new(),
        };
        Env {
            _sandbox: sandbox,
            root,
            opts,
        }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        write(&p, text);
        p
    }

    fn user(&self, text: &str) {
        self.write("home/.claude/settings.json", text);
    }

    fn project(&self, text: &str) {
        self.write("project/.claude/settings.json", text);
    }

    fn load(&self) -> Settings {
        load(&self.opts)
    }

    /// Diagnostics as text with the temp root replaced by `<tmp>`.
    fn render(&self, s: &Settings) -> String {
        s.diagnostics
            .iter()
            .map(|d| d.to_string().replace(self.root.to_str().unwrap(), "<tmp>"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn commands(s: &Settings) -> Vec<String> {
    s.handlers
        .iter()
        .map(|h| match &h.kind {
            HandlerKind::Command(c) => c.command.clone(),
            other => other.type_name().to_string(),
        })
        .collect()
}

fn active(s: &Settings) -> Vec<String> {
    s.handlers
        .iter()
        .filter(|h| h.inactive.is_none())
        .map(|h| match &h.kind {
            HandlerKind::Command(c) => c.command.clone(),
            other => other.type_name().to_string(),
        })
        .collect()
}

fn one_hook(event: &str, command: &str) -> String {
    format!(
        r#"{{"hooks": {{"{event}": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "{command}"}}]}}]}}}}"#
    )
}

#[test]
fn merge_order_user_project_local_flag_policy() {
    let mut env = Env::new();
    env.user(&one_hook("PreToolUse", "user"));
    env.project(&one_hook("PreToolUse", "project"));
    env.write(
        "project/.claude/settings.local.json",
        &one_hook("PreToolUse", "local"),
    );
    let flag = env.write("flag.json", &one_hook("PreToolUse", "flag-file"));
    env.write(
        "managed/managed-settings.json",
        &one_hook("PreToolUse", "policy"),
    );
    env.write(
        "managed/managed-settings.d/20-b.json",
        &one_hook("PreToolUse", "dropin-b"),
    );
    env.write(
        "managed/managed-settings.d/10-a.json",
        &one_hook("PreToolUse", "dropin-a"),
    );
    env.write("managed/managed-settings.d/notes.txt", "not json");
    env.opts.flag_settings = vec![
        flag.display().to_string(),
        format!("  {}", one_hook("PreToolUse", "flag-inline")),
    ];
    let s = env.load();
    assert_eq!(env.render(&s), "");
    assert_eq!(
        commands(&s),
        [
            "user",
            "project",
            "local",
            "flag-file",
            "flag-inline",
            "policy",
            "dropin-a",
            "dropin-b"
        ]
    );
    let sources: Vec<SourceKind> = s.handlers.iter().map(|h| h.origin.source).collect();
    use SourceKind::*;
    assert_eq!(
        sources,
        [User, Project, Local, Flag, Flag, Policy, Policy, Policy]
    );
    assert_eq!(&*s.handlers[4].origin.location.file, "<--settings>");
    assert_eq!(s.handlers[4].origin.location.line, 1);
    let h = &s.handlers[0];
    assert_eq!(h.event, Some(HookEvent::PreToolUse));
    assert_eq!(
        h.origin
            .to_string()
            .replace(env.root.to_str().unwrap(), "<tmp>"),
        "<tmp>/home/.claude/settings.json:1:57 (user settings, PreToolUse[0].hooks[0])"
    );
    assert!(s.files.iter().filter(|f| f.applied).count() == 8);
}

#[test]
fn scalars_env_and_permissions_merge_by_tier() {
    let env = Env::new();
    env.user(r#"{"env": {"A": "user", "B": "user"}, "permissions": {"allow": ["Read"], "defaultMode": "plan"}}"#);
    env.project(r#"{"env": {"B": "project"}, "permissions": {"allow": ["Bash(ls *)"], "deny": ["Read(./.env)"], "defaultMode": "acceptEdits"}}"#);
    env.write(
        "managed/managed-settings.json",
        "{\n  \"permissions\": {\"deny\": [\"Bash(rm *)\"]}, \"env\": {\"C\": \"policy\"}\n}",
    );
    let s = env.load();
    assert_eq!(
        s.env,
        [
            ("A".into(), "user".into()),
            ("B".into(), "project".into()),
            ("C".into(), "policy".into())
        ]
    );
    let allow: Vec<_> = s
        .permissions
        .allow
        .iter()
        .map(|r| (r.text.as_str(), r.source))
        .collect();
    assert_eq!(
        allow,
        [
            ("Read", SourceKind::User),
            ("Bash(ls *)", SourceKind::Project)
        ]
    );
    let deny: Vec<_> = s.permissions.deny.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(deny, ["Read(./.env)", "Bash(rm *)"]);
    assert_eq!(
        (
            s.permissions.deny[1].location.line,
            s.permissions.deny[1].location.col
        ),
        (2, 28)
    );
    // acceptEdits from the committed project file is refused; the user's plan stays.
    assert_eq!(
        s.permissions.default_mode,
        Some(("plan".to_string(), SourceKind::User))
    );
    assert_eq!(s.diagnostics.len(), 1, "{}", env.render(&s));
    assert!(s.diagnostics[0].message.contains("escalating"));
}

#[test]
fn default_mode_from_local_wins() {
    let env = Env::new();
    env.user(r#"{"permissions": {"defaultMode": "plan"}}"#);
    env.write(
        "project/.claude/settings.local.json",
        r#"{"permissions": {"defaultMode": "acceptEdits"}}"#,
    );
    let s = env.load();
    assert_eq!(
        s.permissions.default_mode,
        Some(("acceptEdits".to_string(), SourceKind::Local))
    );
    assert!(s.diagnostics.is_empty());
}

/// One broken thing per case: exactly one diagnostic, at the right place, and the valid rest
/// of the file (the `ok` PostToolUse hook) still loads.
#[test]
fn each_problem_gives_one_located_diagnostic() {
    let ok = r#"{"matcher": "Bash", "hooks": [{"type": "command", "command": "ok"}]}"#;
    // (name, PostToolUse groups after `ok`, expected "line:col: severity", message part)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "missing command",
            r#"{"hooks": [{"type": "command"}]}"#,
            "3:12: error",
            "command hook has no \"command\"; this entry is ignored",
        ),
        (
            "missing type",
            r#"{"hooks": [{"command": "x"}]}"#,
            "3:12: error",
            "has no \"type\"",
        ),
        (
            "unknown type",
            r#"{"hooks": [{"type": "shell", "command": "x"}]}"#,
            "3:21: error",
            "unknown hook type \"shell\"",
        ),
        (
            "http without url",
            r#"{"hooks": [{"type": "http"}]}"#,
            "3:12: error",
            "http hook has no \"url\"",
        ),
        (
            "http bad url",
            r#"{"hooks": [{"type": "http", "url": "not a url"}]}"#,
            "3:36: error",
            "not a valid URL",
        ),
        (
            "prompt without prompt",
            r#"{"hooks": [{"type": "prompt"}]}"#,
            "3:12: error",
            "prompt hook has no \"prompt\"",
        ),
        (
            "agent without prompt",
            r#"{"hooks": [{"type": "agent"}]}"#,
            "3:12: error",
            "agent hook has no \"prompt\"",
        ),
        (
            "zero timeout",
            r#"{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}"#,
            "3:59: error",
            "greater than 0",
        ),
        (
            "negative timeout",
            r#"{"hooks": [{"type": "command", "command": "x", "timeout": -5}]}"#,
            "3:59: error",
            "greater than 0",
        ),
        (
            "string timeout",
            r#"{"hooks": [{"type": "command", "command": "x", "timeout": "30"}]}"#,
            "3:59: error",
            "must be a number of seconds, found string",
        ),
        (
            "bad onFailure",
            r#"{"hooks": [{"type": "command", "command": "x", "onFailure": "stop"}]}"#,
            "3:61: error",
            "\"onFailure\" must be \"continue\" or \"block\"",
        ),
        (
            "group without hooks",
            r#"{"matcher": "Read"}"#,
            "3:1: error",
            "has no \"hooks\" array",
        ),
        (
            "hooks not array",
            r#"{"hooks": {"type": "command"}}"#,
            "3:11: error",
            "\"hooks\" must be an array",
        ),
        (
            "group not object",
            r#""Bash""#,
            "3:1: error",
            "must be an object",
        ),
        (
            "matcher not string",
            r#"{"matcher": 3, "hooks": []}"#,
            "3:13: error",
            "\"matcher\" must be a string",
        ),
        (
            "invalid regex",
            r#"{"matcher": "(?i)bash", "hooks": [{"type": "command", "command": "x"}]}"#,
            "3:13: error",
            "Invalid regex pattern in hook matcher: (?i)bash",
        ),
        (
            "unparsable if",
            r#"{"hooks": [{"type": "command", "command": "x", "if": "Bash(git *"}]}"#,
            "3:54: error",
            "invalid \"if\" condition",
        ),
        (
            "once",
            r#"{"hooks": [{"type": "command", "command": "x", "once": true}]}"#,
            "3:48: warning",
            "\"once\" has no effect",
        ),
        (
            "typo",
            r#"{"hooks": [{"type": "command", "command": "x", "timout": 5}]}"#,
            "3:48: warning",
            "did you mean \"timeout\"",
        ),
        (
            "args with spaces",
            r#"{"hooks": [{"type": "command", "command": "my tool", "args": []}]}"#,
            "3:54: warning",
            "contains whitespace",
        ),
        (
            "empty matcher list",
            r#"{"matcher": "|", "hooks": [{"type": "command", "command": "x"}]}"#,
            "3:13: warning",
            "names nothing",
        ),
    ];
    let mut failures = Vec::new();
    for (name, group, want_pos, want_msg) in cases {
        let env = Env::new();
        env.project(&format!(
            "{{\"hooks\": {{\"PostToolUse\": [\n{ok},\n{group}\n]}}}}"
        ));
        let s = env.load();
        let rendered = env.render(&s);
        assert_eq!(s.diagnostics.len(), 1, "{name}: {rendered}");
        let want = format!("<tmp>/project/.claude/settings.json:{want_pos}: ");
        if !rendered.starts_with(&want) || !rendered.contains(want_msg) {
            failures.push(format!("{name}: want {want}…{want_msg}, got {rendered}"));
        }
        assert_eq!(commands(&s)[0], "ok", "{name}");
        assert!(s.handlers[0].inactive.is_none(), "{name}");
        assert!(s.files.iter().any(|f| f.applied), "{name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn inactive_reasons_are_recorded() {
    let env = Env::new();
    env.project(r#"{"hooks": {
        "PreToolUse": [{"matcher": "(?i)bash", "hooks": [{"type": "command", "command": "bad-matcher"}]},
                       {"hooks": [{"type": "command", "command": "bad-if", "if": "(x)"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "if-on-stop", "if": "Bash"}]}],
        "TaskCompleted": [{"hooks": [{"type": "command", "command": "never-fired"}]}],
        "NotAnEvent": [{"hooks": [{"type": "command", "command": "unknown"}]}],
        "PostToolUse": [{"hooks": [
            {"type": "http", "url": "https://example.com/x", "headers": {"A": "$T"}, "allowedEnvVars": ["T"]},
            {"type": "prompt", "prompt": "ok? $ARGUMENTS", "model": "m"},
            {"type": "agent", "prompt": "check"},
            {"type": "mcp_tool", "server": "s", "tool": "t", "input": {"p": "${tool_input.file_path}"}}
        ]}]
    }}"#);
    let s = env.load();
    let reasons: Vec<_> = s.handlers.iter().map(|h| h.inactive.clone()).collect();
    assert!(matches!(reasons[0], Some(Inactive::InvalidMatcher(_))));
    assert!(matches!(reasons[1], Some(Inactive::InvalidIf(_))));
    assert_eq!(reasons[2], Some(Inactive::IfOnNonToolEvent));
    assert_eq!(reasons[3], Some(Inactive::EventNotFired));
    assert_eq!(reasons[4], Some(Inactive::UnknownEvent));
    assert_eq!(s.handlers[4].event, None);
    assert_eq!(s.handlers[4].origin.event_key, "NotAnEvent");
    // Every type runs: http, prompt and agent (judged by the model), mcp_tool.
    for r in &reasons[5..9] {
        assert_eq!(*r, None);
    }
    let kinds: Vec<_> = s.handlers[5..].iter().map(|h| h.kind.type_name()).collect();
    assert_eq!(kinds, ["http", "prompt", "agent", "mcp_tool"]);
    let HandlerKind::McpTool(m) = &s.handlers[8].kind else {
        panic!()
    };
    assert_eq!(
        m.input,
        Some(serde_json::json!({"p": "${tool_input.file_path}"}))
    );
    assert!(
        env.render(&s)
            .contains("Unknown hook event \"NotAnEvent\" was ignored")
    );
}

#[test]
fn malformed_pretooluse_entry_voids_the_whole_file() {
    let env = Env::new();
    env.user(&one_hook("PreToolUse", "user-hook"));
    env.project(
        r#"{
  "permissions": {"allow": ["Bash(rm -rf *)"], "deny": ["Read(.env)"], "ask": ["Bash(git push*)"]},
  "env": {"FROM_PROJECT": "1"},
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "start"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "comand": "guard.sh"}]}]
  }
}"#,
    );
    let s = env.load();
    assert_eq!(commands(&s), ["user-hook", "start"]);
    assert_eq!(active(&s), ["user-hook"]);
    assert!(
        matches!(&s.handlers[1].inactive, Some(Inactive::FileVoided(r)) if r.contains("PreToolUse"))
    );
    assert!(s.permissions.allow.is_empty());
    // Fail closed: a voided file's deny and ask rules still hold.
    let texts = |rules: &[crate::settings::schema::RuleEntry]| {
        rules.iter().map(|r| r.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(texts(&s.permissions.deny), ["Read(.env)"]);
    assert_eq!(texts(&s.permissions.ask), ["Bash(git push*)"]);
    assert!(s.env.is_empty());
    let project = s
        .files
        .iter()
        .find(|f| f.source == SourceKind::Project)
        .unwrap();
    assert!(!project.applied);
    let rendered = env.render(&s);
    // The typo warning points at the key; the error explains the voiding.
    insta::assert_snapshot!(rendered, @r#"
    <tmp>/project/.claude/settings.json:6:50: error: command hook has no "command"; because this entry is under PreToolUse, none of this file's hooks, allow rules or env apply until it is fixed, as in Claude Code (its deny and ask rules still do)
    <tmp>/project/.claude/settings.json:6:70: warning: unknown key "comand" in a command hook (did you mean "command"?); ignored
    "#);
}

#[test]
fn malformed_entry_elsewhere_drops_only_that_entry() {
    let env = Env::new();
    env.project(
        r#"{"permissions": {"allow": ["Read"]}, "hooks": {
      "PostToolUse": [{"hooks": [{"type": "command"}, {"type": "command", "command": "sibling"}]}],
      "PreToolUse": [{"hooks": [{"type": "command", "command": "pre"}]}]}}"#,
    );
    let s = env.load();
    assert_eq!(active(&s), ["sibling", "pre"]);
    assert_eq!(s.permissions.allow.len(), 1);
    assert_eq!(s.diagnostics.len(), 1);
}

#[test]
fn invalid_json_files_are_skipped_with_the_position() {
    let cases = [
        (
            "truncated",
            "{\n  \"hooks\": {\n    \"PreToolUse\": [",
            "3:20",
            "truncated",
        ),
        (
            "comment",
            "{\n  // my hooks\n  \"hooks\": {}\n}",
            "2:3",
            "comments are not allowed",
        ),
        (
            "trailing comma",
            "{\n  \"env\": {\"A\": \"1\",},\n}",
            "2:19",
            "trailing comma",
        ),
        ("single quotes", "{'env': {}}", "1:2", "double quotes"),
        ("not an object", "[1, 2]", "1:1", "must be a JSON object"),
    ];
    for (name, text, pos, msg) in cases {
        let env = Env::new();
        env.user(&one_hook("PreToolUse", "user-hook"));
        env.project(text);
        let s = env.load();
        let rendered = env.render(&s);
        assert_eq!(s.diagnostics.len(), 1, "{name}: {rendered}");
        assert!(
            rendered.starts_with(&format!(
                "<tmp>/project/.claude/settings.json:{pos}: error: "
            )),
            "{name}: {rendered}"
        );
        assert!(rendered.contains(msg), "{name}: {rendered}");
        assert!(s.has_errors(), "{name}");
        assert_eq!(active(&s), ["user-hook"], "{name}");
        let project = s
            .files
            .iter()
            .find(|f| f.source == SourceKind::Project)
            .unwrap();
        assert!(!project.applied, "{name}");
    }
}

#[test]
fn bom_is_stripped_with_a_warning() {
    let env = Env::new();
    env.project(&format!("\u{feff}{}", one_hook("PreToolUse", "bom")));
    let s = env.load();
    assert_eq!(active(&s), ["bom"]);
    insta::assert_snapshot!(env.render(&s), @"<tmp>/project/.claude/settings.json:1:1: warning: file starts with a UTF-8 byte order mark; rein ignores it (remove it: JSON must not start with one)");
    // Columns after the BOM are counted from the first real character.
    assert_eq!(s.handlers[0].origin.location.col, 57);
}

#[test]
fn hooks_of_the_wrong_type() {
    let env = Env::new();
    env.project(r#"{"hooks": [], "env": {"DROPPED": "yes"}}"#);
    let s = env.load();
    assert!(s.handlers.is_empty());
    // Fail closed: the file is voided (its env and allow rules too), as for a malformed
    // PreToolUse entry.
    assert!(s.env.is_empty(), "{:?}", s.env);
    insta::assert_snapshot!(env.render(&s), @r#"<tmp>/project/.claude/settings.json:1:11: error: "hooks" must be an object mapping event names to arrays, found array; because it may have held the PreToolUse hooks that guard this file's permissions, none of this file's hooks, allow rules or env apply until it is fixed (its deny and ask rules still do)"#);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let env = Env::new();
    env.project(&format!("{{\"x\": {}}}", "[".repeat(50_000)));
    let s = env.load();
    assert_eq!(s.diagnostics.len(), 1);
    assert!(s.diagnostics[0].message.contains("deeper than 256"));
}

#[test]
fn disable_all_hooks_in_policy_switches_off_everything() {
    let env = Env::new();
    env.user(&one_hook("PreToolUse", "user"));
    env.write(
        "managed/managed-settings.json",
        &one_hook("PreToolUse", "policy").replacen('{', "{\"disableAllHooks\": true, ", 1),
    );
    let s = env.load();
    assert!(s.disable_all_hooks);
    assert!(active(&s).is_empty());
    assert!(s.handlers.iter().all(|h| matches!(&h.inactive, Some(Inactive::Disabled(f)) if f.ends_with("managed-settings.json"))));
    assert_eq!(s.diagnostics.len(), 1);
    assert!(s.diagnostics[0].message.contains("managed ones included"));
}

#[test]
fn disable_all_hooks_in_project_keeps_managed_hooks() {
    let env = Env::new();
    env.user(&one_hook("PreToolUse", "user"));
    env.project(r#"{"disableAllHooks": true}"#);
    env.write(
        "managed/managed-settings.json",
        &one_hook("PreToolUse", "policy"),
    );
    let s = env.load();
    assert_eq!(active(&s), ["policy"]);
    assert!(
        matches!(&s.handlers[0].inactive, Some(Inactive::Disabled(f)) if f.ends_with("project/.claude/settings.json"))
    );
    insta::assert_snapshot!(env.render(&s), @"<tmp>/project/.claude/settings.json:1:2: warning: \"disableAllHooks\": true — hooks from user, project, local and --settings files are switched off; managed hooks keep running (handlers switched off: 1)");
}

#[test]
fn disable_all_hooks_false_in_a_higher_tier_wins() {
    let env = Env::new();
    env.user(&one_hook("PreToolUse", "user").replacen('{', "{\"disableAllHooks\": true, ", 1));
    env.write(
        "project/.claude/settings.local.json",
        r#"{"disableAllHooks": false}"#,
    );
    let s = env.load();
    assert!(!s.disable_all_hooks);
    assert_eq!(active(&s), ["user"]);
}

#[test]
fn allow_managed_hooks_only() {
    let env = Env::new();
    env.user(&one_hook("PreToolUse", "user").replacen(
        '{',
        "{\"allowManagedHooksOnly\": true, ",
        1,
    ));
    let s = env.load();
    assert_eq!(active(&s), ["user"], "ignored outside policy");
    assert!(
        s.diagnostics[0]
            .message
            .contains("only honoured in managed")
    );
    env.write(
        "managed/managed-settings.d/a.json",
        &one_hook("PreToolUse", "policy").replacen('{', "{\"allowManagedHooksOnly\": true, ", 1),
    );
    let s = env.load();
    assert!(s.allow_managed_hooks_only);
    assert_eq!(active(&s), ["policy"]);
}

#[test]
fn symlink_loop_is_an_io_error() {
    let env = Env::new();
    let p = env.root.join("project/.claude/settings.json");
    std::os::unix::fs::symlink(&p, &p).unwrap();
    env.user(&one_hook("PreToolUse", "user"));
    let s = env.load();
    assert_eq!(active(&s), ["user"]);
    let rendered = env.render(&s);
    assert_eq!(s.diagnostics.len(), 1, "{rendered}");
    assert!(
        rendered.starts_with("<tmp>/project/.claude/settings.json:1:1: error: cannot read:"),
        "{rendered}"
    );
    assert!(
        rendered.to_lowercase().contains("symbolic links"),
        "{rendered}"
    );
}

#[test]
fn unreadable_or_special_files_do_not_hang() {
    let env = Env::new();
    // A directory where the file should be, and a FIFO nobody writes to.
    fs::create_dir_all(env.root.join("project/.claude/settings.json")).unwrap();
    let fifo = env.root.join("project/.claude/settings.local.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let s = env.load();
    let rendered = env.render(&s);
    assert_eq!(s.diagnostics.len(), 2, "{rendered}");
    assert!(rendered.contains("settings.json:1:1: error: cannot read: not a regular file"));
    assert!(rendered.contains("settings.local.json:1:1: error: cannot read: not a regular file"));
    if unsafe { libc::geteuid() } != 0 {
        let env = Env::new();
        env.user("{}");
        let p = env.root.join("home/.claude/settings.json");
        fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
        let s = env.load();
        assert!(env.render(&s).contains("Permission denied"));
    }
}

#[test]
fn missing_flag_file_is_reported() {
    let mut env = Env::new();
    env.opts.flag_settings = vec![
        "nope.json".to_string(),
        r#"{"hooks": {"Stop": "#.to_string(),
    ];
    let s = env.load();
    insta::assert_snapshot!(env.render(&s), @r#"
    <tmp>/project/nope.json:1:1: error: settings file given with --settings does not exist; this settings file is skipped
    <--settings>:1:20: error: not valid JSON: unexpected end of file where a value was expected (the JSON is truncated); the whole file is skipped (Claude Code skips it silently)
    "#);
}

#[test]
fn config_dir_and_setting_sources() {
    let mut env = Env::new();
    env.user(&one_hook("PreToolUse", "home-user"));
    env.write(
        "cfg/settings.json",
        &one_hook("PreToolUse", "config-dir-user"),
    );
    env.project(&one_hook("PreToolUse", "project"));
    env.opts.config_dir = Some(env.root.join("cfg"));
    assert_eq!(active(&env.load()), ["config-dir-user", "project"]);
    env.opts.setting_sources = Some(parse_setting_sources("project").unwrap());
    assert_eq!(active(&env.load()), ["project"]);
    assert!(parse_setting_sources("user,bogus").is_err());
}

#[test]
fn local_settings_at_git_root_and_legacy_cwd() {
    let mut env = Env::new();
    fs::create_dir_all(env.root.join("project/.git")).unwrap();
    env.write(
        "project/.claude/settings.local.json",
        &one_hook("PreToolUse", "root-local"),
    );
    env.write(
        "project/sub/.claude/settings.local.json",
        &one_hook("PreToolUse", "cwd-local"),
    );
    env.opts.cwd = env.root.join("project/sub");
    let s = env.load();
    assert_eq!(active(&s), ["root-local", "cwd-local"]);
    assert!(
        s.handlers
            .iter()
            .all(|h| h.origin.source == SourceKind::Local)
    );
}

#[test]
fn catastrophic_regex_in_settings_is_linear() {
    let env = Env::new();
    env.project(r#"{"hooks": {"PreToolUse": [{"matcher": "(a+)+$", "hooks": [{"type": "command", "command": "x"}]}]}}"#);
    let s = env.load();
    assert!(s.diagnostics.is_empty());
    let m = &s.handlers[0].matcher;
    assert!(matches!(m, Matcher::Regex(_)));
    let long = "a".repeat(100_000) + "!";
    assert!(!m.matches(&long));
    assert!(m.matches(&long[..100_000]));
}

#[test]
fn ten_thousand_handlers_load() {
    let env = Env::new();
    let handlers: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"type": "command", "command": "echo {i}", "timeout": 5}}"#))
        .collect();
    let groups: Vec<String> = handlers
        .chunks(10)
        .enumerate()
        .map(|(g, hs)| {
            format!(
                r#"{{"matcher": "Tool{}|mcp__.*", "hooks": [{}]}}"#,
                g % 7,
                hs.join(",")
            )
        })
        .collect();
    env.project(&format!(
        r#"{{"hooks": {{"PreToolUse": [{}]}}}}"#,
        groups.join(",\n")
    ));
    let start = std::time::Instant::now();
    let s = env.load();
    eprintln!("10,000 handlers loaded in {:?}", start.elapsed());
    assert!(s.diagnostics.is_empty());
    assert_eq!(s.handlers.len(), 10_000);
    assert_eq!(active(&s).len(), 10_000);
    assert!(s.handlers[9_999].matcher.matches("mcp__x"));
    assert_eq!(s.handlers[9_999].origin.group, 999);
    assert_eq!(s.handlers[9_999].origin.index, 9);
}

#[test]
fn a_file_full_of_problems_snapshot() {
    let env = Env::new();
    env.project(r#"{
  "hooks": {
    "PreTooluse": [{"hooks": [{"type": "command", "command": "typo-event"}]}],
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh", "timeout": 0}]},
      {"matcher": "[unclosed", "hooks": [{"type": "command", "command": "x"}]}
    ],
    "UserPromptSubmit": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "ups", "if": "Bash"}]}],
    "Notification": "oops",
    "WorktreeCreate": [{"hooks": [{"type": "command", "command": "wt"}]}]
  },
  "env": {"N": 1, "O": {}},
  "permissions": {"allow": "Bash", "defaultMode": "yolo"},
  "disableAllHooks": "yes"
}"#);
    let s = env.load();
    insta::assert_snapshot!(env.render(&s));
    assert_eq!(commands(&s), ["typo-event", "x", "ups", "wt"]);
}

#[test]
fn duplicate_event_keys_last_wins_like_json_parse() {
    let env = Env::new();
    env.project(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "first"}]}], "Stop": [{"hooks": [{"type": "command", "command": "second"}]}]}}"#);
    let s = env.load();
    assert_eq!(commands(&s), ["second"]);
    insta::assert_snapshot!(env.render(&s), @r#"<tmp>/project/.claude/settings.json:1:76: warning: duplicate key "Stop" (first at line 1, column 12); the later one wins"#);
}

#[test]
fn minified_one_line_file_with_ten_thousand_handlers() {
    let env = Env::new();
    let hs: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"type":"command","command":"é{i}"}}"#))
        .collect();
    env.project(&format!(
        r#"{{"hooks":{{"PostToolUse":[{{"hooks":[{}]}}]}}}}"#,
        hs.join(",")
    ));
    let start = std::time::Instant::now();
    let s = env.load();
    eprintln!("one-line file, 10,000 handlers: {:?}", start.elapsed());
    assert_eq!(s.handlers.len(), 10_000);
    let last = &s.handlers[9_999].origin.location;
    assert_eq!(last.line, 1);
    // 35 chars before the first handler, then each handler plus its comma.
    let expected: usize = 35
        + hs[..9_999]
            .iter()
            .map(|h| h.chars().count() + 1)
            .sum::<usize>();
    assert_eq!(last.col as usize, expected + 1);
}

#[test]
fn a_typical_real_world_file_loads_clean() {
    let env = Env::new();
    env.project(include_str!(
        "../../tests/fixtures/settings/real-world.json"
    ));
    let s = env.load();
    assert_eq!(env.render(&s), "");
    assert!(!s.has_errors());
    assert_eq!(s.handlers.len(), 10);
    assert!(s.handlers.iter().all(|h| h.inactive.is_none()));
    let describe: Vec<String> = s.handlers.iter().map(|h| h.matcher.describe()).collect();
    assert_eq!(
        describe,
        [
            "exact [Bash]",
            "exact [Bash]",
            "exact [Edit, MultiEdit, Write]",
            "regex /mcp__github__.*/",
            "exact [Edit, Write]",
            "all",
            "exact [startup, resume]",
            "exact [permission_prompt, idle_prompt]",
            "all",
            "all",
        ]
    );
    let HandlerKind::Command(c) = &s.handlers[1].kind else {
        panic!()
    };
    assert!(c.is_async);
    assert_eq!(s.handlers[0].timeout, Some(10.0));
    assert_eq!(s.handlers[5].timeout, Some(2.5));
    assert_eq!(s.handlers[2].if_text.as_deref(), Some("Edit(src/**)"));
    assert!(s.handlers[2].if_condition.is_some());
    assert_eq!(s.permissions.deny.len(), 3);
    assert_eq!(s.env, [("NODE_ENV".to_string(), "development".to_string())]);
}

/// The tool names `rein hooks validate`/`list` check matchers against are the tools a session
/// offers: the Agent tool and the built-in tools.
#[test]
fn hook_tool_names_are_the_tools_a_session_offers() {
    let mut offered: Vec<String> = vec!["Agent".to_string()];
    offered.extend(
        crate::tools::builtin_tools()
            .iter()
            .map(|t| t.name().to_string()),
    );
    // Offered when the session has skills or commands (tools::skill).
    offered.push("Skill".to_string());
    let mut listed: Vec<String> = crate::settings::tool_names::REIN_TOOLS
        .iter()
        .map(|s| s.to_string())
        .collect();
    offered.sort();
    listed.sort();
    assert_eq!(listed, offered);
    for name in crate::settings::tool_names::CLAUDE_CODE_ONLY_TOOLS {
        assert!(!offered.iter().any(|o| o == name), "{name} is a rein tool");
    }
}

#[test]
fn status_line_and_output_style_merge_by_tier_and_bad_ones_are_located() {
    let env = Env::new();
    env.user(r#"{"statusLine": {"type": "command", "command": "user.sh", "padding": 2}, "outputStyle": "Learning"}"#);
    env.project(r#"{"outputStyle": "Terse"}"#);
    let s = env.load();
    let (spec, _, source) = s.status_line.clone().unwrap();
    assert_eq!(
        (spec.command.as_str(), spec.padding, source),
        ("user.sh", 2, SourceKind::User)
    );
    assert_eq!(
        s.output_style.as_ref().map(|(n, _)| n.as_str()),
        Some("Terse")
    );

    env.project("{\n  \"statusLine\": {\"type\": \"static\", \"command\": \"x\"}\n}");
    let s = env.load();
    assert_eq!(
        s.status_line.as_ref().map(|(l, _, _)| l.command.as_str()),
        Some("user.sh")
    );
    let text = env.render(&s);
    assert!(
        text.contains("<tmp>/project/.claude/settings.json:2:")
            && text.contains("must be \"command\""),
        "{text}"
    );
    env.project(r#"{"statusLine": {"type": "command", "command": "p.sh", "padding": -1}}"#);
    let s = env.load();
    let (spec, _, source) = s.status_line.clone().unwrap();
    assert_eq!(
        (spec.command.as_str(), spec.padding, source),
        ("p.sh", 0, SourceKind::Project)
    );
    assert!(
        env.render(&s)
            .contains("\"padding\" must be a whole number"),
        "{}",
        env.render(&s)
    );
}
