//! Broken settings files through the binary (spec §1.1, §1.7): a file that is not JSON, has a
//! BOM or comments, a `hooks` of the wrong type, a catastrophic matcher, 10,000 handlers, a
//! symlink loop or a named pipe. Each costs that file (or that part of it) and nothing else:
//! the diagnostic names the file, line and column and what is wrong, the user's
//! `~/.claude/settings.json` hook still runs, the session finishes far below any hang, and the
//! transcript is complete JSON. `rein hooks validate` reports the same lines.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Env, Run, TOOL_RAN, assert_within, env, path_str, run_capped, tool_results};

/// A run that outlives this is killed (and the test fails on its exit code): an unprotected
/// read of a named pipe or a backtracking matcher would never finish.
const CAP: Duration = Duration::from_secs(60);

/// Loading broken settings is milliseconds of work; this bound is for a loaded 2-core CI box.
const QUICK: Duration = Duration::from_secs(20);

/// `~/.claude/settings.json`: a PreToolUse hook on Bash appending to `user-hook.log`.
fn user_hook(e: &Env) {
    let log = e.path("user-hook.log");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("echo user >> '{}'", log.display())}
    ]}]}});
    std::fs::write(
        e.home.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
}

/// A project hook (as JSON text) on Bash that creates `name` in the project.
fn marker_hook(e: &Env, name: &str) -> String {
    format!(
        r#"{{"type": "command", "command": "touch '{}'"}}"#,
        e.path(name).display()
    )
}

/// The standard Bash call under a cap.
fn session(e: &Env) -> Run {
    run_capped(e.mock_cmd(super::tool_then_done(), &[]), CAP)
}

fn validate(e: &Env) -> Run {
    let mut c = e.cmd();
    c.args(["hooks", "validate"]);
    run_capped(c, CAP)
}

/// The session went on: exit 0, the tool ran, the final text, a complete transcript, and the
/// user's own hook ran exactly once.
fn assert_went_on(e: &Env, run: &Run) {
    assert_eq!(
        run.code,
        Some(0),
        "after {:?} (a run killed at {CAP:?} has no code)\nstderr: {:.3000}",
        run.elapsed,
        run.stderr
    );
    assert!(
        e.exists(TOOL_RAN),
        "the tool did not run: {:.3000}",
        run.stderr
    );
    assert!(run.stdout.contains("done"), "stdout: {:.500}", run.stdout);
    assert!(!e.transcript().is_empty());
    assert_user_hook_ran(e);
    assert_within(run, QUICK);
}

fn assert_user_hook_ran(e: &Env) {
    assert_eq!(
        e.read("user-hook.log"),
        "user\n",
        "the ~/.claude/settings.json hook did not run exactly once"
    );
}

/// The diagnostic lines about `file` in `text` (stderr of a session, stdout of validate).
fn lines_about(text: &str, file: &str) -> Vec<String> {
    let prefix = format!("{file}:");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// Asserts `text` holds exactly one diagnostic about `file`, and that it starts with `head`
/// (`<file>:<line>:<col>: <severity>: <what>`). Returns the line.
fn assert_one(text: &str, file: &str, head: &str) -> String {
    let lines = lines_about(text, file);
    assert_eq!(
        lines.len(),
        1,
        "diagnostics about {file}: {lines:#?}\n{text:.3000}"
    );
    assert!(
        lines[0].starts_with(head),
        "expected a line starting with\n  {head}\ngot\n  {}",
        lines[0]
    );
    lines[0].clone()
}

/// `(line, col)` just past the end of `text` (where a parser meets the end of the file).
fn end_of(text: &str) -> (usize, usize) {
    let line = text.matches('\n').count() + 1;
    let col = text.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// The whole file is skipped with `head`; the user hook runs; validate agrees and fails.
fn assert_file_skipped(e: &Env, head: &str) {
    let file = path_str(&e.path(".claude/settings.json"));
    let run = session(e);
    assert_went_on(e, &run);
    let line = assert_one(&run.stderr, &file, head);
    assert!(
        line.ends_with("the whole file is skipped (Claude Code skips it silently)"),
        "{line}"
    );
    assert!(
        !e.exists("project.flag"),
        "a hook from the skipped file ran"
    );
    let v = validate(e);
    assert_eq!(v.code, Some(1), "{}", v.stdout);
    assert_eq!(assert_one(&v.stdout, &file, head), line);
    assert!(v.stdout.contains("1 error, 0 warnings"), "{}", v.stdout);
}

#[test]
fn truncated_json_skips_that_file_with_the_position_of_the_cut() {
    let e = env();
    let full = format!(
        "{{\n  \"hooks\": {{\n    \"PreToolUse\": [\n      {{\"matcher\": \"Bash\", \"hooks\": [{}]}}\n    ]\n  }}\n}}\n",
        marker_hook(&e, "project.flag")
    );
    // Cut inside the command string (line 4) and after the last complete value (line 5).
    let in_string = &full[..full.find("touch").unwrap() + 3];
    let after_value = &full[..full.find("\n    ]").unwrap() + 1];
    for (cut, what) in [
        (in_string, "unterminated string (the JSON is truncated)"),
        (after_value, "unexpected end of file"),
    ] {
        let e = env();
        user_hook(&e);
        e.write(".claude/settings.json", cut);
        let file = path_str(&e.path(".claude/settings.json"));
        let (line, col) = if what.starts_with("unterminated") {
            // An unterminated string is reported where it opens.
            let open = cut.rfind('"').unwrap();
            end_of(&cut[..open])
        } else {
            end_of(cut)
        };
        assert_file_skipped(
            &e,
            &format!("{file}:{line}:{col}: error: not valid JSON: {what}"),
        );
    }
}

#[test]
fn utf8_bom_is_stripped_with_a_warning_and_the_file_applies() {
    let e = env();
    user_hook(&e);
    e.write(
        ".claude/settings.json",
        &format!(
            "\u{feff}{{\"hooks\": {{\"PreToolUse\": [{{\"matcher\": \"Bash\", \"hooks\": [{}]}}]}}}}\n",
            marker_hook(&e, "project.flag")
        ),
    );
    let file = path_str(&e.path(".claude/settings.json"));
    let head =
        format!("{file}:1:1: warning: file starts with a UTF-8 byte order mark; rein ignores it");
    let run = session(&e);
    assert_went_on(&e, &run);
    assert_one(&run.stderr, &file, &head);
    assert!(
        e.exists("project.flag"),
        "the hook of the BOM file did not run"
    );
    let v = validate(&e);
    assert_eq!(v.code, Some(0), "{}", v.stdout);
    assert_one(&v.stdout, &file, &head);
    assert!(v.stdout.contains("0 errors, 1 warning"), "{}", v.stdout);
}

#[test]
fn comments_skip_the_file_with_the_position_of_the_comment() {
    for (text, line, col) in [
        ("{\n  // the hooks\n  \"hooks\": {}\n}\n", 2, 3),
        (
            "{\n  \"hooks\": {\n    \"PreToolUse\": [] /* none yet */\n  }\n}\n",
            3,
            22,
        ),
        ("{\"hooks\": {}}\n// trailing\n", 2, 1),
    ] {
        let e = env();
        user_hook(&e);
        e.write(".claude/settings.json", text);
        let file = path_str(&e.path(".claude/settings.json"));
        assert_file_skipped(
            &e,
            &format!(
                "{file}:{line}:{col}: error: not valid JSON: comments are not allowed in JSON (settings files are plain JSON, not JSONC)"
            ),
        );
    }
}

#[test]
fn hooks_of_the_wrong_type_void_that_file_but_keep_its_deny_rules() {
    for (value, type_name) in [
        (r#""PreToolUse""#, "string"),
        (r#"[{"PreToolUse": []}]"#, "array"),
        ("42", "number"),
    ] {
        let e = env();
        user_hook(&e);
        // Beside the unreadable hooks: an allow rule they may have guarded (must not apply,
        // fail closed) and a deny rule (must still apply).
        e.write(
            ".claude/settings.json",
            &format!(
                "{{\n  \"permissions\": {{\"allow\": [\"Bash(touch allowed.flag)\"], \"deny\": [\"Bash(echo ran*)\"]}},\n  \"hooks\": {value}\n}}\n"
            ),
        );
        let file = path_str(&e.path(".claude/settings.json"));
        let head = format!(
            "{file}:3:12: error: \"hooks\" must be an object mapping event names to arrays, found {type_name}; because it may have held the PreToolUse hooks that guard this file's permissions, none of this file's hooks, allow rules or env apply until it is fixed (its deny and ask rules still do)"
        );
        let script = e.mock(json!([
            super::bash("touch allowed.flag"),
            super::bash(&format!("echo ran > {TOOL_RAN}")),
            super::say("done"),
        ]));
        let mut c = e.cmd();
        c.args(["-p", "go", "--mock-script"]).arg(&script);
        let run = run_capped(c, CAP);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(assert_one(&run.stderr, &file, &head), head);
        // The user's own hook ran for both calls: other files still apply.
        assert_eq!(e.read("user-hook.log"), "user\nuser\n");
        assert!(
            !e.exists("allowed.flag"),
            "{type_name}: the allow rule of the voided file applied"
        );
        assert!(
            !e.exists(TOOL_RAN),
            "{type_name}: the deny rule beside the bad hooks was lost"
        );
        let results = tool_results(&e.transcript());
        assert_eq!(results.len(), 2, "{results:?}");
        assert!(results.iter().all(|r| r["is_error"] == true), "{results:?}");
        assert_within(&run, QUICK);
        let v = validate(&e);
        assert_eq!(v.code, Some(1), "{}", v.stdout);
        assert_eq!(assert_one(&v.stdout, &file, &head), head);
    }
}

/// 50,000 `a`s: `(a+)+$` against this plus one more character is 2^50000 steps for a
/// backtracking engine.
fn long_a() -> String {
    "a".repeat(50_000)
}

#[test]
fn catastrophic_matcher_in_a_session_costs_nothing() {
    let e = env();
    user_hook(&e);
    // Records which of the two Bash calls the `if` hook fired on: the first call's tool
    // creates TOOL_RAN, after its hooks.
    let if_hook = format!(
        "if [ -f '{ran}' ]; then touch '{second}'; else touch '{first}'; fi",
        ran = e.path(TOOL_RAN).display(),
        second = e.path("if-second.flag").display(),
        first = e.path("if-first.flag").display()
    );
    e.write_json(
        ".claude/settings.json",
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "(a+)+$", "hooks": [
                {"type": "command", "command": format!("touch '{}'", e.path("regex.flag").display())}
            ]},
            {"matcher": "Bash", "hooks": [
                {"type": "command", "if": "Bash(*a*a*a*a*a*a*a*a*a*a*b)", "command": if_hook}
            ]}
        ]}}),
    );
    let a = long_a();
    // Unknown tools get an error result before any hook is selected (pipeline step 1): the
    // matcher never sees these names. Both Bash calls carry 50,000 `a`s for the `if` rule;
    // only the second ends in `b`.
    let turns = json!([
        {"tool_use": [{"name": format!("{a}b"), "input": {}}]},
        {"tool_use": [{"name": a.clone(), "input": {}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": format!("echo {a} > {TOOL_RAN}")}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": format!("echo {a}b")}}]},
        {"text": "done"}
    ]);
    let run = run_capped(e.mock_cmd(turns, &[]), CAP);
    assert_eq!(run.code, Some(0), "{:.3000}", run.stderr);
    assert!(e.exists(TOOL_RAN), "{:.3000}", run.stderr);
    assert!(run.stdout.contains("done"), "stdout: {:.500}", run.stdout);
    assert_within(&run, QUICK);
    assert_eq!(
        e.read("user-hook.log"),
        "user\nuser\n",
        "one user hook run per Bash call"
    );
    assert!(
        !e.exists("if-first.flag"),
        "the if rule matched a command not ending in b"
    );
    assert!(
        e.exists("if-second.flag"),
        "the if rule missed a command ending in b"
    );
    assert!(
        !e.exists("regex.flag"),
        "a matcher ran against an unknown tool or matched Bash"
    );
    // The 50,000-character names are not echoed whole to the terminal.
    let longest = run.stderr.lines().map(|l| l.chars().count()).max();
    assert!(longest < Some(400), "a {longest:?}-character progress line");
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 4, "{results:.500?}");
    for (i, name) in [format!("{a}b"), a].iter().enumerate() {
        assert_eq!(results[i]["is_error"], true);
        let content = results[i]["content"].as_str().unwrap_or_default();
        assert!(
            content
                == format!(
                    "<tool_use_error>Error: No such tool available: {name}</tool_use_error>"
                ),
            "{content:.300}"
        );
    }
}

/// `rein hooks test PreToolUse --tool NAME` really matches NAME against the matchers.
fn hooks_test(e: &Env, tool: &str) -> Run {
    let mut c = e.cmd();
    c.args(["hooks", "test", "PreToolUse", "--tool", tool]);
    run_capped(c, CAP)
}

#[test]
fn catastrophic_matcher_against_a_50k_tool_name_finishes_in_hooks_test() {
    let e = env();
    e.write(
        ".claude/settings.json",
        &format!(
            r#"{{"hooks": {{"PreToolUse": [{{"matcher": "(a+)+$", "hooks": [{}]}}]}}}}"#,
            marker_hook(&e, "regex.flag")
        ),
    );
    let a = long_a();
    let miss = hooks_test(&e, &format!("{a}b"));
    assert_eq!(miss.code, Some(0), "{}", miss.stderr);
    assert!(
        miss.stdout.contains("No handler matched."),
        "{:.2000}",
        miss.stdout
    );
    assert!(!e.exists("regex.flag"));
    assert_within(&miss, QUICK);
    // The same matcher does fire on a name it matches, so the miss above is a real evaluation.
    let hit = hooks_test(&e, &a);
    assert_eq!(hit.code, Some(0), "{}", hit.stderr);
    assert!(e.exists("regex.flag"), "{:.2000}", hit.stdout);
    assert_within(&hit, QUICK);
    // `rein hooks explain`, which runs nothing, evaluates the same matcher and says why.
    let mut c = e.cmd();
    c.args(["hooks", "explain", "PreToolUse", "--tool", &format!("{a}b")]);
    let explain = run_capped(c, CAP);
    assert_eq!(explain.code, Some(0), "{}", explain.stderr);
    assert!(
        explain.stdout.contains("0 of 1 handler configured for PreToolUse would run")
            && explain.stdout.contains(
                "why: matcher \"(a+)+$\" (JavaScript regex, unanchored search, case-sensitive) does not match"
            ),
        "{:.600}",
        explain.stdout.replace(&a, "<50k a>")
    );
    assert_within(&explain, QUICK);
}

/// 10,000 handlers in one project file: 4,000 exact matchers (one name each), 1,000 distinct
/// regexes, and one Bash group holding 5,000 copies of the same command (deduplicated to one
/// run, spec §5.2), on both PreToolUse and PostToolUse.
fn ten_thousand(e: &Env) -> Value {
    let log = e.path("dedup.log").display().to_string();
    let mut groups: Vec<Value> = Vec::new();
    for i in 0..4_000 {
        groups.push(json!({"matcher": format!("Tool{i}"), "hooks": [
            {"type": "command", "command": format!("true exact {i}")}
        ]}));
    }
    for i in 0..1_000 {
        groups.push(json!({"matcher": format!("mcp__srv{i}__.*"), "hooks": [
            {"type": "command", "command": format!("true regex {i}")}
        ]}));
    }
    let copies: Vec<Value> = (0..5_000)
        .map(|_| json!({"type": "command", "command": format!("echo x >> '{log}'")}))
        .collect();
    groups.push(json!({"matcher": "Bash", "hooks": copies}));
    json!({"hooks": {"PreToolUse": groups}})
}

#[test]
fn ten_thousand_handlers_load_match_and_dedup_in_bounded_time_and_memory() {
    let e = env();
    user_hook(&e);
    e.write_json(".claude/settings.json", &ten_thousand(&e));
    let run = session(&e);
    eprintln!(
        "10,000 handlers: session {:?}, peak RSS {} KiB",
        run.elapsed, run.max_rss_kib
    );
    assert_went_on(&e, &run);
    assert!(
        run.stderr.lines().all(|l| !l.contains("settings.json:")),
        "{:.2000}",
        run.stderr
    );
    assert_eq!(
        e.read("dedup.log"),
        "x\n",
        "5,000 identical handlers must run once"
    );
    // The file is ~1 MB; 1,000 compiled regexes cost ~10 KiB each (44 MiB measured).
    assert!(
        run.max_rss_kib < 100 * 1024,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
    let v = validate(&e);
    assert_eq!(v.code, Some(0), "{:.2000}", v.stdout);
    assert!(
        v.stdout.contains("0 errors, 0 warnings"),
        "{:.2000}",
        v.stdout
    );
    assert_within(&v, QUICK);
}

/// Every special file rein may meet where a settings file should be, one per source.
fn plant_special_files(e: &Env) -> PathBuf {
    let claude = e.path(".claude");
    let link = |target: &str, at: &PathBuf| std::os::unix::fs::symlink(target, at).unwrap();
    link("settings.local.json", &claude.join("settings.local.json"));
    link("../.claude", &claude.join("loop"));
    link("nowhere.json", &claude.join("settings.json"));
    let managed = e.home.join("no-managed");
    std::fs::create_dir_all(managed.join("managed-settings.d")).unwrap();
    mkfifo(&managed.join("managed-settings.json"));
    let dropins = managed.join("managed-settings.d");
    link("b.json", &dropins.join("a.json"));
    link("a.json", &dropins.join("b.json"));
    link("..", &dropins.join("c.json"));
    managed
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

#[test]
fn symlink_loops_dangling_links_and_a_named_pipe_are_skipped_without_hanging() {
    let e = env();
    user_hook(&e);
    let managed = plant_special_files(&e);
    let claude = |f: &str| path_str(&e.path(&format!(".claude/{f}")));
    let dropin = |f: &str| path_str(&managed.join("managed-settings.d").join(f));
    let expected = [
        (
            claude("settings.json"),
            "1:1: error: cannot read: dangling symlink to nowhere.json",
        ),
        (
            claude("settings.local.json"),
            "1:1: error: cannot read: a symlink loop",
        ),
        (
            path_str(&managed.join("managed-settings.json")),
            "1:1: error: cannot read: not a regular file (a named pipe)",
        ),
        (dropin("a.json"), "1:1: error: cannot read: a symlink loop"),
        (dropin("b.json"), "1:1: error: cannot read: a symlink loop"),
        (
            dropin("c.json"),
            "1:1: error: cannot read: not a regular file (a directory)",
        ),
    ];
    // Glob and Grep walk `.claude/` with its loop and the named pipe beside it.
    let turns = json!([
        {"tool_use": [{"name": "Glob", "input": {"pattern": ".claude/**"}}]},
        {"tool_use": [{"name": "Grep", "input": {"pattern": "hooks", "output_mode": "files_with_matches"}}]},
        {"tool_use": [{"name": "Bash", "input": {"command": format!("echo ran > {TOOL_RAN}")}}]},
        {"text": "done"}
    ]);
    mkfifo(&e.path(".claude/pipe.json"));
    let run = run_capped(e.mock_cmd(turns, &[]), CAP);
    assert_went_on(&e, &run);
    let v = validate(&e);
    assert_eq!(v.code, Some(1), "{}", v.stdout);
    for (file, rest) in &expected {
        let head = format!("{file}:{rest}");
        let line = assert_one(&run.stderr, file, &head);
        assert!(line.ends_with("; this settings file is skipped"), "{line}");
        assert_eq!(assert_one(&v.stdout, file, &head), line);
    }
    assert!(v.stdout.contains("6 errors, 0 warnings"), "{}", v.stdout);
    assert_within(&v, QUICK);
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|r| r["is_error"] != true),
        "{results:#?}"
    );
}
