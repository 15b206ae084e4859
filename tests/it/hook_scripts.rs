//! Integration tests for the hook scripts shipped in `hooks/` and wired in
//! `settings.example.json`.
//!
//! Every script is run exactly the way the engine runs a shell-form command hook (spec §5.4):
//! `/bin/sh -c "\"$CLAUDE_PROJECT_DIR\"/hooks/<script>"`, with the golden-shaped stdin JSON
//! (compact, one trailing newline, then EOF), `CLAUDE_PROJECT_DIR` pointing at a temporary project
//! whose path contains a space, and the hook's cwd set to that project. Assertions are on the exit
//! code, the parsed stdout JSON and the files the hooks write.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const SESSION: &str = "3f6b2c1e-0d4a-4c55-9f1e-7a2b8c9d0e1f";

/// Config variables the scripts read; cleared so the developer's environment cannot leak in.
const SCRIPT_ENV: &[&str] = &[
    "REIN_LEDGER_DIR",
    "AUDIT_LOG_FILE",
    "BLOCKED_LOG_FILE",
    "AUDIT_LOG_MAX_STRING",
    "TURN_LOG_FILE",
    "BLOCK_DANGEROUS_EXTRA",
    "NORMALIZE_PATHS_KEYS",
    "PROTECT_FILES_EXTRA",
    "PROTECT_FILES_ALLOW",
    "RUN_TESTS_CMD",
    "RUN_TESTS_TIMEOUT",
    "RUN_TESTS_TAIL_LINES",
    "RUN_TESTS_REPORT_SUCCESS",
    "RUN_TESTS_ASYNC",
    "TDD_STATE_FILE",
    "TDD_SOURCE_EXTS",
    "TDD_TEST_GLOBS",
    "TDD_TEST_COMMANDS",
    "TDD_MAX_AGE_SECONDS",
    "TDD_GUARD_DISABLE",
    "REIN_NOTES_FILE",
    "INJECT_NOTES_MAX_CHARS",
    "INJECT_GIT_MAX_LINES",
    "INJECT_CONTEXT_GIT",
    "REDACT_SECRETS_EXTRA",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A temporary project directory (with a space in its path) whose `hooks/` is the repo's.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

/// What one hook process did.
#[derive(Debug)]
struct HookRun {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl HookRun {
    /// stdout parsed as the single JSON object Claude Code would read (spec §4.2).
    fn json(&self) -> Value {
        assert_eq!(self.code, Some(0), "hook failed: {self:?}");
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// The hook exited 0 and printed nothing: no decision, no rewrite, no context.
    fn assert_silent(&self) {
        assert_eq!(self.code, Some(0), "hook failed: {self:?}");
        assert_eq!(self.stdout, "", "expected no stdout: {self:?}");
    }
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("my project");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(repo().join("hooks"), root.join("hooks")).unwrap();
        Project { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn abs(&self, rel: &str) -> String {
        self.path(rel).to_string_lossy().into_owned()
    }

    /// A golden stdin sample with its placeholders filled in for this project.
    fn golden(&self, name: &str) -> Value {
        let file = repo().join(format!("tests/fixtures/golden/stdin-{name}.json"));
        let text = std::fs::read_to_string(&file).unwrap();
        let root = self.root.to_string_lossy();
        let filled = text
            .replace("\"<NUM>\"", "17")
            .replace(
                "<PROJECT_SLUG>",
                &root.replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
            )
            .replace("<PROJECT>", &root)
            .replace("<SESSION>", SESSION)
            .replace("<HOME>", "/home/user");
        serde_json::from_str(&filled).unwrap()
    }

    /// Start `command` under `/bin/sh -c` like the engine does, with `input` as compact JSON.
    fn spawn(&self, command: &str, input: &Value, env: &[(&str, &str)]) -> Child {
        let bytes = format!("{}\n", serde_json::to_string(input).unwrap());
        self.spawn_raw(command, bytes, env)
    }

    /// Start `command` under `/bin/sh -c` with exactly `bytes` on stdin (written by a thread).
    fn spawn_raw(&self, command: &str, bytes: String, env: &[(&str, &str)]) -> Child {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(&self.root)
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .env("CLAUDECODE", "1")
            .env("GIT_CEILING_DIRECTORIES", self.root.parent().unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in SCRIPT_ENV {
            cmd.env_remove(var);
        }
        if let Some(path) = fast_path() {
            cmd.env("PATH", path);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            // A hook may exit without reading stdin; the engine tolerates EPIPE, so do we.
            let _ = stdin.write_all(bytes.as_bytes());
        });
        child
    }

    fn run_command(&self, command: &str, input: &Value, env: &[(&str, &str)]) -> HookRun {
        finish(self.spawn(command, input, env))
    }

    fn run(&self, script: &str, input: &Value, env: &[(&str, &str)]) -> HookRun {
        self.run_command(&hook_command(script), input, env)
    }

    /// Run one script once per input, all processes at the same time.
    fn run_parallel(&self, script: &str, inputs: &[Value], env: &[(&str, &str)]) -> Vec<HookRun> {
        let children: Vec<Child> = inputs
            .iter()
            .map(|input| self.spawn(&hook_command(script), input, env))
            .collect();
        children.into_iter().map(finish).collect()
    }

    fn pre_tool_use_bash(&self, command: &str) -> Value {
        let mut input = self.golden("PreToolUse-Bash");
        input["tool_input"]["command"] = json!(command);
        input
    }

    fn pre_tool_use_edit(&self, file_path: &str) -> Value {
        let mut input = self.golden("PreToolUse-Edit");
        input["tool_input"]["file_path"] = json!(file_path);
        input
    }
}

/// `PATH` with the directory of the real `python3` interpreter first.
///
/// Why: `python3` may be a version-manager shim (pyenv's costs ~3x a plain start); the scripts'
/// `#!/usr/bin/env python3` still resolves through `PATH`, exactly as under the engine, only
/// without the detour, which keeps this suite affordable on 2 cores.
fn fast_path() -> Option<&'static str> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import os, sys; print(os.path.dirname(sys.executable))",
            ])
            .output()
            .ok()?;
        let dir = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        let rest = std::env::var("PATH").unwrap_or_default();
        Some(format!("{dir}:{rest}"))
    })
    .as_deref()
}

fn hook_command(script: &str) -> String {
    format!("\"$CLAUDE_PROJECT_DIR\"/hooks/{script}")
}

fn finish(child: Child) -> HookRun {
    let out = child.wait_with_output().unwrap();
    HookRun {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ledger(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad ledger line {line:?}: {e}"))
        })
        .collect()
}

/// The deny reason of a PreToolUse answer, after checking the answer's shape.
fn deny_reason(run: &HookRun) -> String {
    let out = run.json();
    let specific = &out["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{out}");
    assert_eq!(specific["permissionDecision"], "deny", "{out}");
    specific["permissionDecisionReason"]
        .as_str()
        .unwrap_or_else(|| panic!("no reason: {out}"))
        .to_owned()
}

// ---------------------------------------------------------------- block-dangerous-commands

const BLOCK: &str = "block-dangerous-commands.py";

#[test]
fn dangerous_commands_are_denied_naming_the_rule() {
    let p = Project::new();
    let cases: &[(&str, &str)] = &[
        ("rm -rf /", "rm -rf (recursive delete)"),
        ("rm  -rf x", "rm -rf (recursive delete)"),
        ("sudo rm -fr ~", "rm -rf (recursive delete)"),
        ("ls && rm -r d", "rm -r (recursive delete)"),
        ("echo $(rm -rf /)", "rm -rf (recursive delete)"),
        ("bash -c \"rm -rf /\"", "rm -rf (recursive delete)"),
        ("mkfs.ext4 /dev/sda1", "mkfs.ext4 (format a filesystem)"),
        ("dd if=/dev/zero of=/dev/sda", "dd if= (raw disk copy)"),
        (
            "shutdown -h now",
            "shutdown (power off or restart the machine)",
        ),
        ("/bin/rm --recursive build", "rm -r (recursive delete)"),
        ("rm -R -v dir", "rm -r (recursive delete)"),
        (
            "A=1 B=2 timeout 5 nice -n 3 nohup env X=1 rm -Rf y",
            "rm -rf",
        ),
        ("find . -name '*.o' -exec rm -rf {} \\;", "rm -rf"),
        ("git status; echo `reboot`", "reboot"),
        ("find . | xargs -0 rm -rf", "rm -rf"),
        ("eval 'rm -rf /'", "rm -rf"),
        ("env -S 'rm -rf /tmp/x'", "rm -rf"),
        ("echo \"$(echo \"$(rm -rf /)\")\"", "rm -rf"),
        ("cat <<EOF\n$(rm -rf /)\nEOF", "rm -rf"),
        ("ls\npoweroff", "poweroff"),
        ("halt", "halt"),
        ("format c:", "format (format a disk)"),
        ("chmod -R 777 /", "chmod -R / (recursive permission change"),
        (
            "echo garbage > /dev/sda",
            "> /dev/sda (overwrite a disk device)",
        ),
        (":(){ :|:& };:", "fork bomb"),
        (
            "sh -ec 'cd /; sudo -u root mkfs /dev/sdb'",
            "mkfs (format a filesystem)",
        ),
        ("diff <(ls) <(rm -rf /)", "rm -rf"),
        (r"$'\x72m' -rf /", "rm -rf"),
        (r#"\rm -r "x""#, "rm -r (recursive delete)"),
        ("doas -u root rm -r /home", "rm -r"),
        ("stdbuf -o0 ionice -c 3 rm -rf x", "rm -rf"),
        ("command rm -rf x", "rm -rf"),
        ("true; exec rm -r y", "rm -r"),
        ("busybox rm -rf /", "rm -rf"),
        ("init 0", "init 0 (power off"),
        ("systemctl reboot", "systemctl poweroff/reboot/halt"),
        ("wipefs -a /dev/sda", "wipefs (format a filesystem)"),
        (
            "dd of=/dev/nvme0n1 bs=1M",
            "dd of=/dev/… (overwrite a disk device)",
        ),
        (
            "chown -R nobody /",
            "chown -R / (recursive permission change",
        ),
    ];
    let inputs: Vec<Value> = cases.iter().map(|(c, _)| p.pre_tool_use_bash(c)).collect();
    let runs = p.run_parallel(BLOCK, &inputs, &[]);
    for ((command, rule), run) in cases.iter().zip(&runs) {
        let reason = deny_reason(run);
        assert!(
            reason.starts_with("Blocked dangerous command: ") && reason.contains(rule),
            "{command:?}: reason {reason:?} does not name {rule:?}"
        );
    }
}

#[test]
fn harmless_commands_and_mere_mentions_pass_silently() {
    let p = Project::new();
    let commands = [
        "echo \"rm -rf\"",
        "echo $'rm -rf /' | cat",
        "diff <(ls a) <(ls b)",
        "systemctl status nginx",
        "chmod -R 755 ./build",
        "dd --version",
        "sh ./scripts/build.sh",
        "echo 'rm -rf /' && printf '%s\\n' shutdown",
        "ls -la",
        "rmdir x",
        "grep -r foo .",
        // Decided: `git rm -r` only removes tracked files, which git can restore.
        "git rm -r --cached x",
        "cp -r src dst",
        "rm file.txt",
        "echo \":(){ :|:& };:\"",
        "cat <<'EOF'\nrm -rf /\nEOF",
        "echo hi 2>&1 >/dev/null",
        "echo hi > out.txt",
        "cargo test -- --nocapture # rm -rf /",
    ];
    let inputs: Vec<Value> = commands.iter().map(|c| p.pre_tool_use_bash(c)).collect();
    for (command, run) in commands.iter().zip(p.run_parallel(BLOCK, &inputs, &[])) {
        assert_eq!(run.code, Some(0), "{command:?}: {run:?}");
        assert_eq!(run.stdout, "", "{command:?} was not expected to be blocked");
    }
}

#[test]
fn unparsable_commands_are_denied_fail_closed() {
    let p = Project::new();
    let inputs = [
        p.pre_tool_use_bash("echo 'unbalanced"),
        p.pre_tool_use_bash("echo \"$(ls"),
    ];
    for run in p.run_parallel(BLOCK, &inputs, &[]) {
        let reason = deny_reason(&run);
        assert!(reason.contains("could not be parsed"), "{reason}");
    }
}

#[test]
fn extra_denied_prefixes_come_from_the_environment() {
    let p = Project::new();
    let env = [(
        "BLOCK_DANGEROUS_EXTRA",
        "git push --force, terraform destroy",
    )];
    let inputs = [
        p.pre_tool_use_bash("cd app && git push --force origin main"),
        p.pre_tool_use_bash("git push origin main"),
    ];
    let runs = p.run_parallel(BLOCK, &inputs, &env);
    assert!(deny_reason(&runs[0]).contains("git push --force (BLOCK_DANGEROUS_EXTRA)"));
    runs[1].assert_silent();
}

#[test]
fn dangerous_commands_are_refused_in_permission_request_shape_too() {
    let p = Project::new();
    let mut ask = p.golden("PermissionRequest-Bash");
    ask["tool_input"]["command"] = json!("cd / && sudo rm -rf --no-preserve-root /");
    let out = p.run(BLOCK, &ask, &[]).json();
    let decision = &out["hookSpecificOutput"]["decision"];
    assert_eq!(
        out["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(decision["behavior"], "deny");
    assert!(
        decision["message"]
            .as_str()
            .unwrap()
            .starts_with("Blocked dangerous command: rm -rf (recursive delete)"),
        "{out}"
    );
    p.run(BLOCK, &p.golden("PermissionRequest-Bash"), &[])
        .assert_silent();
}

// ---------------------------------------------------------------- normalize-paths

#[test]
fn normalize_paths_rewrites_file_path_and_keeps_every_other_key() {
    let p = Project::new();
    let root = p.root.to_string_lossy().into_owned();
    let mut edit = p.golden("PreToolUse-Edit");
    edit["tool_input"]["file_path"] = json!(format!("{root}/./src//lib/../notes.txt"));
    let mut read = p.golden("PreToolUse-Read");
    read["tool_input"]["file_path"] = json!(format!("{root}/./Cargo.toml"));
    let mut relative = p.golden("PreToolUse-Write");
    relative["tool_input"]["file_path"] = json!("./x/./y.txt");
    let runs = p.run_parallel("normalize-paths.py", &[edit.clone(), read, relative], &[]);

    let out = runs[0].json();
    let mut expected = edit["tool_input"].clone();
    expected["file_path"] = json!(format!("{root}/src/notes.txt"));
    assert_eq!(
        out,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": expected}})
    );
    let keys: Vec<&String> = out["hookSpecificOutput"]["updatedInput"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["file_path", "old_string", "new_string", "replace_all"],
        "key order kept"
    );
    assert_eq!(
        runs[1].json()["hookSpecificOutput"]["updatedInput"],
        json!({"file_path": format!("{root}/Cargo.toml")})
    );
    assert_eq!(
        runs[2].json()["hookSpecificOutput"]["updatedInput"],
        json!({"file_path": "x/y.txt", "content": "final\n"})
    );
}

#[test]
fn normalize_paths_is_silent_for_normal_paths() {
    let p = Project::new();
    let inputs = [p.golden("PreToolUse-Read"), p.golden("PreToolUse-Write")];
    for run in p.run_parallel("normalize-paths.py", &inputs, &[]) {
        run.assert_silent();
    }
}

// ---------------------------------------------------------------- audit-log

#[test]
fn audit_log_keeps_every_line_of_twenty_parallel_calls_whole() {
    let p = Project::new();
    // 64 KiB of content per call: large enough that unlocked, unbuffered appends could tear.
    let inputs: Vec<Value> = (0..20)
        .map(|i| {
            let mut input = p.golden("PostToolUse-Write");
            input["tool_use_id"] = json!(format!("toolu_{i:02}"));
            input["tool_input"]["content"] = json!(format!("{i:02}").repeat(32 * 1024));
            input
        })
        .collect();
    let runs = p.run_parallel("audit-log.py", &inputs, &[("AUDIT_LOG_MAX_STRING", "0")]);
    for run in &runs {
        run.assert_silent();
    }
    let lines = ledger(&p.path(".rein/audit.jsonl"));
    assert_eq!(lines.len(), 20);
    let ids: BTreeSet<String> = lines
        .iter()
        .map(|l| l["tool_use_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, (0..20).map(|i| format!("toolu_{i:02}")).collect());
    for line in &lines {
        let id = &line["tool_use_id"].as_str().unwrap()[6..];
        assert_eq!(line["input"]["content"], json!(id.repeat(32 * 1024)));
        assert_eq!(line["event"], "PostToolUse");
        assert_eq!(line["ok"], true);
        assert_eq!(line["tool"], "Write");
        assert_eq!(line["session_id"], SESSION);
        assert_eq!(line["duration_ms"], 17);
    }
    assert!(!p.path(".rein/blocked.jsonl").exists());
}

#[test]
fn audit_log_records_failures_and_caps_long_strings() {
    let p = Project::new();
    let mut write = p.golden("PostToolUse-Write");
    write["tool_input"]["content"] = json!("a".repeat(5000));
    let runs = p.run_parallel(
        "audit-log.py",
        &[p.golden("PostToolUseFailure-Bash"), write],
        &[],
    );
    for run in &runs {
        run.assert_silent();
    }
    let lines = ledger(&p.path(".rein/audit.jsonl"));
    assert_eq!(lines.len(), 2);
    let failure = lines.iter().find(|l| l["tool"] == "Bash").unwrap();
    assert_eq!(failure["event"], "PostToolUseFailure");
    assert_eq!(failure["ok"], false);
    assert_eq!(failure["error"], "Exit code 1\nsome-output\nsome-err");
    assert_eq!(failure["is_interrupt"], false);
    let ts = failure["ts"].as_str().unwrap();
    assert!(ts.len() == 24 && ts.ends_with('Z'), "{ts}");
    let write = lines.iter().find(|l| l["tool"] == "Write").unwrap();
    assert_eq!(
        write["input"]["content"],
        json!(format!("{}…[+3000 chars]", "a".repeat(2000)))
    );
}

#[test]
fn audit_log_sends_permission_denials_to_the_blocked_ledger() {
    let p = Project::new();
    let pre = p.golden("PreToolUse-Bash");
    let denied = json!({
        "session_id": pre["session_id"], "transcript_path": pre["transcript_path"],
        "cwd": pre["cwd"], "prompt_id": pre["prompt_id"], "permission_mode": "auto",
        "hook_event_name": "PermissionDenied", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /", "description": "wipe"},
        "tool_use_id": "toolu_denied", "reason": "Blocked dangerous command: rm -rf"
    });
    let blocked_file = p.path("ledgers/denied.jsonl");
    let blocked = blocked_file.to_string_lossy().into_owned();
    p.run("audit-log.py", &denied, &[]).assert_silent();
    p.run("audit-log.py", &denied, &[("BLOCKED_LOG_FILE", &blocked)])
        .assert_silent();
    for path in [p.path(".rein/blocked.jsonl"), blocked_file] {
        let lines = ledger(&path);
        assert_eq!(lines.len(), 1, "{}", path.display());
        assert_eq!(lines[0]["reason"], "Blocked dangerous command: rm -rf");
        assert_eq!(lines[0]["tool_input"], Value::Null);
        assert_eq!(
            lines[0]["input"],
            json!({"command": "rm -rf /", "description": "wipe"})
        );
        assert_eq!(lines[0]["tool_use_id"], "toolu_denied");
    }
    assert!(!p.path(".rein/audit.jsonl").exists());
}

#[test]
fn audit_log_reports_an_unwritable_ledger_as_a_non_blocking_error() {
    let p = Project::new();
    std::fs::write(p.path("not-a-dir"), "").unwrap();
    let run = p.run(
        "audit-log.py",
        &p.golden("PostToolUse-Bash"),
        &[("REIN_LEDGER_DIR", &p.abs("not-a-dir"))],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("audit-log: cannot append"), "{run:?}");
}

// ---------------------------------------------------------------- turn-log

#[test]
fn turn_log_appends_one_line_per_event_and_prints_nothing() {
    let p = Project::new();
    let events = ["SessionStart", "Stop", "Stop-continued", "SessionEnd"];
    let mut inputs = Vec::new();
    for name in events {
        let input = p.golden(name);
        p.run("turn-log.sh", &input, &[]).assert_silent();
        inputs.push(input);
    }
    let lines = ledger(&p.path(".rein/turns.jsonl"));
    assert_eq!(lines.len(), 4);
    for (line, input) in lines.iter().zip(&inputs) {
        assert_eq!(line["event"], input["hook_event_name"]);
        assert_eq!(&line["input"], input, "stdin embedded verbatim");
        let ts = line["ts"].as_str().unwrap();
        assert!(ts.len() == 20 && ts.ends_with('Z'), "{ts}");
    }
}

#[test]
fn turn_log_runs_under_dash_itself() {
    // `/bin/sh` is bash on some systems; run the script with dash explicitly so a bashism fails.
    let p = Project::new();
    let script = repo().join("hooks/turn-log.sh");
    let command = format!("{} '{}'", posix_shell(), script.display());
    p.run_command(&command, &p.golden("Stop"), &[])
        .assert_silent();
    let lines = ledger(&p.path(".rein/turns.jsonl"));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["input"]["last_assistant_message"], "first answer");
}

#[test]
fn turn_log_lines_stay_whole_under_parallel_writers() {
    let p = Project::new();
    let inputs: Vec<Value> = (0..16)
        .map(|i| {
            let mut input = p.golden("Stop");
            input["last_assistant_message"] = json!(format!("{i:02} {}", "x".repeat(20_000)));
            input
        })
        .collect();
    for run in p.run_parallel("turn-log.sh", &inputs, &[]) {
        run.assert_silent();
    }
    let lines = ledger(&p.path(".rein/turns.jsonl"));
    let seen: BTreeSet<String> = lines
        .iter()
        .map(|l| l["input"]["last_assistant_message"].as_str().unwrap()[..2].to_owned())
        .collect();
    assert_eq!(lines.len(), 16);
    assert_eq!(seen.len(), 16);
}

#[test]
fn turn_log_never_fails_even_when_it_cannot_write() {
    let p = Project::new();
    std::fs::write(p.path("not-a-dir"), "").unwrap();
    let run = p.run(
        "turn-log.sh",
        &p.golden("SessionEnd"),
        &[("TURN_LOG_FILE", &p.abs("not-a-dir/turns.jsonl"))],
    );
    run.assert_silent();
    assert!(run.stderr.contains("turn-log: cannot append"), "{run:?}");
}

// ---------------------------------------------------------------- protect-files

#[test]
fn protect_files_denies_secrets_and_git_internals() {
    let p = Project::new();
    std::fs::write(p.path(".env"), "A=1\n").unwrap();
    std::os::unix::fs::symlink(p.path(".env"), p.path("harmless.txt")).unwrap();
    std::os::unix::fs::symlink(p.path(".env"), p.path(".env.sample")).unwrap();
    let root = p.root.to_string_lossy().into_owned();
    let cases: &[(String, Option<&str>)] = &[
        (format!("{root}/.env"), Some(".env / .env.*")),
        ("./.env".to_owned(), Some(".env / .env.*")),
        (format!("{root}/config/.env.local"), Some(".env / .env.*")),
        (format!("{root}/certs/server.pem"), Some("*.pem")),
        (format!("{root}/id_rsa.key"), Some("*.key")),
        (format!("{root}/.git/config"), Some(".git/")),
        (
            format!("{root}/src/../.git/hooks/pre-commit"),
            Some(".git/"),
        ),
        (format!("{root}/harmless.txt"), Some("symlink to")),
        // Allowed by name, but it points at .env: the target decides.
        (format!("{root}/.env.sample"), Some("symlink to")),
        (
            format!("{root}/secrets/token.txt"),
            Some("secrets (PROTECT_FILES_EXTRA)"),
        ),
        (
            format!("{root}/a/b.p12"),
            Some("*.p12 (PROTECT_FILES_EXTRA)"),
        ),
        (format!("{root}/src/main.rs"), None),
        (format!("{root}/.envrc"), None),
        (format!("{root}/environment.md"), None),
        (format!("{root}/.gitignore"), None),
        (format!("{root}/keys.txt"), None),
        (format!("{root}/.env.example"), None),
    ];
    let env = [
        ("PROTECT_FILES_EXTRA", "secrets, *.p12"),
        ("PROTECT_FILES_ALLOW", ".env.example, .env.sample"),
    ];
    let mut inputs: Vec<Value> = cases.iter().map(|(f, _)| p.pre_tool_use_edit(f)).collect();
    // Write is guarded the same way as Edit.
    let mut write = p.golden("PreToolUse-Write");
    write["tool_input"]["file_path"] = json!(format!("{root}/deploy/prod.pem"));
    inputs.push(write);
    let runs = p.run_parallel("protect-files.py", &inputs, &env);
    for ((file, rule), run) in cases.iter().zip(&runs) {
        match rule {
            Some(rule) => {
                let reason = deny_reason(run);
                assert!(
                    reason.starts_with("Protected file: ") && reason.contains(rule),
                    "{file}: {reason}"
                );
            }
            None => {
                assert_eq!(run.code, Some(0), "{file}: {run:?}");
                assert_eq!(run.stdout, "", "{file} was not expected to be protected");
            }
        }
    }
    assert!(deny_reason(runs.last().unwrap()).contains("*.pem"));
}

// ---------------------------------------------------------------- tdd-guard

#[test]
fn tdd_guard_allows_production_edits_only_while_a_test_fails() {
    let p = Project::new();
    let prod = p.abs("src/lib.rs");
    let guard = "tdd-guard.py";
    let state = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(p.path(".rein/tdd-state.json")).unwrap())
            .unwrap()
    };
    let bash_result = |event: &str, command: &str| -> Value {
        let mut input = if event == "PostToolUse" {
            p.golden("PostToolUse-Bash")
        } else {
            p.golden("PostToolUseFailure-Bash")
        };
        input["tool_input"]["command"] = json!(command);
        input
    };

    // 1. Nothing recorded yet: production code is refused, tests and docs are not.
    assert!(deny_reason(&p.run(guard, &p.pre_tool_use_edit(&prod), &[])).contains("TDD guard"));
    let free = [
        p.pre_tool_use_edit(&p.abs("tests/lib_test.rs")),
        p.pre_tool_use_edit(&p.abs("pkg/test_parser.py")),
        p.pre_tool_use_edit(&p.abs("web/app.spec.ts")),
        p.pre_tool_use_edit(&p.abs("README.md")),
    ];
    for run in p.run_parallel(guard, &free, &[]) {
        run.assert_silent();
    }

    // 2. A Bash command that is not a test run does not count.
    p.run(guard, &bash_result("PostToolUseFailure", "ls missing"), &[])
        .assert_silent();
    assert!(!p.path(".rein/tdd-state.json").exists());

    // 3. The test run fails: the edit is allowed.
    p.run(
        guard,
        &bash_result("PostToolUseFailure", "cargo test --lib"),
        &[],
    )
    .assert_silent();
    assert_eq!(state()["status"], "failing");
    assert_eq!(state()["session_id"], SESSION);
    p.run(guard, &p.pre_tool_use_edit(&prod), &[])
        .assert_silent();

    // 4. Tests pass again: the next production edit needs a new failing test.
    p.run(guard, &bash_result("PostToolUse", "cargo test"), &[])
        .assert_silent();
    assert_eq!(state()["status"], "passing");
    let reason = deny_reason(&p.run(guard, &p.pre_tool_use_edit(&prod), &[]));
    assert!(reason.contains("'passing'"), "{reason}");

    // 5. A failure recorded by another session does not unlock this one.
    let mut foreign = bash_result("PostToolUseFailure", "pytest -x");
    foreign["session_id"] = json!("another-session");
    p.run(guard, &foreign, &[]).assert_silent();
    let reason = deny_reason(&p.run(guard, &p.pre_tool_use_edit(&prod), &[]));
    assert!(reason.contains("another session"), "{reason}");

    // 6. The manual switch, as the header documents it.
    let record = format!("{} record failing", hook_command(guard));
    p.run_command(&record, &json!({}), &[]).assert_silent();
    p.run(guard, &p.pre_tool_use_edit(&prod), &[])
        .assert_silent();
}

// ---------------------------------------------------------------- run-tests-after-edit

const RUN_TESTS: &str = "run-tests-after-edit.py";

#[test]
fn run_tests_after_edit_is_silent_without_a_test_command() {
    let p = Project::new();
    p.run(RUN_TESTS, &p.golden("PostToolUse-Edit"), &[])
        .assert_silent();
    assert!(!p.path(".rein/tdd-state.json").exists());
}

#[test]
fn run_tests_after_edit_blocks_with_the_tail_of_a_failing_run() {
    let p = Project::new();
    let failing = "i=0; while [ $i -lt 60 ]; do echo out$i; i=$((i+1)); done; echo err >&2; exit 3";
    let input = p.golden("PostToolUse-Edit");
    let out = p
        .run(RUN_TESTS, &input, &[("RUN_TESTS_CMD", failing)])
        .json();
    assert_eq!(out["decision"], "block");
    let reason = out["reason"].as_str().unwrap();
    let edited = p.abs("notes.txt");
    let expected_tail: Vec<String> = (21..60)
        .map(|i| format!("out{i}"))
        .chain(["err".to_owned()])
        .collect();
    assert_eq!(
        reason,
        format!(
            "Tests failed after editing {edited}:\n{}",
            expected_tail.join("\n")
        )
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".rein/tdd-state.json")).unwrap())
            .unwrap();
    assert_eq!(state["status"], "failing");
    assert_eq!(state["source"], "run-tests-after-edit");
}

#[test]
fn run_tests_after_edit_reads_the_command_file_and_reports_success_on_request() {
    let p = Project::new();
    std::fs::create_dir(p.path(".rein")).unwrap();
    std::fs::write(
        p.path(".rein/test-command"),
        "# the project's tests\ntest -f notes.txt\n",
    )
    .unwrap();
    let input = p.golden("PostToolUse-Edit");
    let run = p.run(RUN_TESTS, &input, &[]);
    assert!(
        run.json()["decision"] == "block",
        "notes.txt is missing yet"
    );
    std::fs::write(p.path("notes.txt"), "line one\n").unwrap();
    p.run(RUN_TESTS, &input, &[]).assert_silent();
    let out = p
        .run(RUN_TESTS, &input, &[("RUN_TESTS_REPORT_SUCCESS", "1")])
        .json();
    assert_eq!(
        out,
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
            "additionalContext": format!("Tests passed after editing {}", p.abs("notes.txt"))}})
    );
}

#[test]
fn run_tests_after_edit_kills_the_whole_run_when_it_times_out() {
    let p = Project::new();
    let pidfile = p.abs("sleeper.pid");
    let cmd = format!("echo started; sleep 30 & echo $! > '{pidfile}'; wait");
    let env = [("RUN_TESTS_CMD", cmd.as_str()), ("RUN_TESTS_TIMEOUT", "1")];
    let out = p
        .run(RUN_TESTS, &p.golden("PostToolUse-Write"), &env)
        .json();
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Tests timed out after 1 s after editing ")
            && reason.ends_with("started"),
        "{reason}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    // Gone, or a zombie waiting for init: either way the grandchild was killed with its group.
    // SIGKILL takes effect when the process is next scheduled, so allow a moment on a busy
    // machine; unkilled, it would live for 30 s.
    let stat = format!("/proc/{}/stat", pid.trim());
    let alive = || {
        std::fs::read_to_string(&stat)
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(), "background test process survived the timeout");
}

#[test]
fn run_tests_after_edit_async_modes_use_channels_async_hooks_deliver() {
    let p = Project::new();
    let input = p.golden("PostToolUse-Edit");
    let base = ("RUN_TESTS_CMD", "echo broken; exit 1");
    let out = p
        .run(RUN_TESTS, &input, &[base, ("RUN_TESTS_ASYNC", "1")])
        .json();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert!(context.starts_with("Tests failed after editing ") && context.ends_with("broken"));
    assert!(out.get("decision").is_none());
    let rewake = p.run(RUN_TESTS, &input, &[base, ("RUN_TESTS_ASYNC", "rewake")]);
    assert_eq!(rewake.code, Some(2));
    assert_eq!(rewake.stdout, "");
    assert!(rewake.stderr.starts_with("Tests failed after editing "));
}

// ---------------------------------------------------------------- inject-context

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn inject_context_gives_notes_and_git_status_under_the_running_event() {
    let p = Project::new();
    git(&p.root, &["init", "-q", "-b", "main"]);
    std::fs::write(p.path("new.txt"), "x").unwrap();
    std::fs::create_dir(p.path(".rein")).unwrap();
    std::fs::write(p.path(".rein/notes.md"), "Remember: the build uses make.\n").unwrap();
    let runs = p.run_parallel(
        "inject-context.py",
        &[p.golden("SessionStart"), p.golden("UserPromptSubmit")],
        &[],
    );
    for (run, event) in runs.iter().zip(["SessionStart", "UserPromptSubmit"]) {
        let out = run.json();
        let specific = out["hookSpecificOutput"].as_object().unwrap();
        assert_eq!(specific.len(), 2, "{out}");
        assert_eq!(specific["hookEventName"], event);
        let context = specific["additionalContext"].as_str().unwrap();
        assert!(
            context.contains("Remember: the build uses make."),
            "{context}"
        );
        assert!(context.contains("## No commits yet on main"), "{context}");
        assert!(context.contains("?? new.txt"), "{context}");
    }
}

#[test]
fn inject_context_caps_notes_and_is_silent_with_nothing_to_say() {
    let p = Project::new();
    let input = p.golden("SessionStart");
    p.run("inject-context.py", &input, &[]).assert_silent();

    let notes = p.abs("long-notes.md");
    std::fs::write(&notes, "n".repeat(10_000)).unwrap();
    let out = p
        .run("inject-context.py", &input, &[("REIN_NOTES_FILE", &notes)])
        .json();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains(&format!(
        "{}\n[… notes truncated, 6000 more",
        "n".repeat(4000)
    )));
    assert!(!context.contains(&"n".repeat(4001)));
}

// ---------------------------------------------------------------- redact-secrets

#[test]
fn redact_secrets_masks_tokens_and_keeps_the_response_shape() {
    let p = Project::new();
    let mut bash = p.golden("PostToolUse-Bash");
    let secrets = [
        "AKIAIOSFODNN7EXAMPLE",
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "xoxb-123456789012-abcdefghijkl",
        "hunter2hunter2",
    ];
    bash["tool_response"]["stdout"] = json!(format!(
        "id={} key={}\ntoken {} slack {}\npassword={} ok",
        secrets[0], secrets[1], secrets[2], secrets[3], secrets[4]
    ));
    let mut read = p.golden("PostToolUse-Read");
    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    read["tool_response"]["file"]["content"] = json!(format!("before\n{pem}\nafter\n"));
    let runs = p.run_parallel("redact-secrets.py", &[bash.clone(), read.clone()], &[]);

    let masked = &runs[0].json()["hookSpecificOutput"];
    assert_eq!(masked["hookEventName"], "PostToolUse");
    let mut expected = bash["tool_response"].clone();
    expected["stdout"] = json!(
        "id=[REDACTED:aws-access-key] key=[REDACTED:api-key]\ntoken [REDACTED:github-token] \
         slack [REDACTED:slack-token]\npassword=[REDACTED:password] ok"
    );
    assert_eq!(masked["updatedToolOutput"], expected);

    let masked = &runs[1].json()["hookSpecificOutput"]["updatedToolOutput"];
    let mut expected = read["tool_response"].clone();
    expected["file"]["content"] = json!(
        "before\n-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED:private-key]\n\
         -----END OPENSSH PRIVATE KEY-----\nafter\n"
    );
    assert_eq!(masked, &expected);
}

#[test]
fn redact_secrets_is_silent_for_clean_output_and_code() {
    let p = Project::new();
    let mut code = p.golden("PostToolUse-Read");
    code["tool_response"]["file"]["content"] =
        json!("let password = read_password();\nlet api_key = $API_KEY;\n");
    let inputs = [
        p.golden("PostToolUse-Bash"),
        p.golden("PostToolUse-Edit"),
        code,
    ];
    for run in p.run_parallel("redact-secrets.py", &inputs, &[]) {
        run.assert_silent();
    }
}

// ---------------------------------------------------------------- the library as a whole

#[test]
fn garbage_input_gets_the_documented_answer_from_every_script() {
    let p = Project::new();
    // (script, exit code, denies?) — guards fail closed, observers report on stderr.
    let expected: &[(&str, i32, bool)] = &[
        (BLOCK, 0, true),
        ("protect-files.py", 0, true),
        ("normalize-paths.py", 0, false),
        ("audit-log.py", 1, false),
        ("turn-log.sh", 0, false),
        (RUN_TESTS, 1, false),
        ("tdd-guard.py", 0, false),
        ("inject-context.py", 0, false),
        ("redact-secrets.py", 0, false),
    ];
    assert_eq!(expected.len(), scripts().len(), "a script is missing here");
    let children: Vec<Child> = expected
        .iter()
        .map(|(script, _, _)| p.spawn_raw(&hook_command(script), "{not json\n".into(), &[]))
        .collect();
    for ((script, code, denies), child) in expected.iter().zip(children) {
        let run = finish(child);
        assert_eq!(run.code, Some(*code), "{script}: {run:?}");
        if *denies {
            assert!(
                deny_reason(&run).contains("could not parse its input"),
                "{script}"
            );
        } else {
            assert_eq!(run.stdout, "", "{script}: {run:?}");
        }
        if *script != "turn-log.sh" && !*denies {
            assert!(run.stderr.contains("not JSON"), "{script}: {run:?}");
        }
    }
    let lines = ledger(&p.path(".rein/turns.jsonl"));
    assert_eq!(lines[0]["input"], Value::Null);
}

/// dash, the strictest common `/bin/sh`, when installed (Debian/Ubuntu, CI); else `/bin/sh`.
fn posix_shell() -> &'static str {
    let dash = Command::new("dash")
        .args(["-c", ":"])
        .status()
        .is_ok_and(|s| s.success());
    if dash { "dash" } else { "/bin/sh" }
}

fn scripts() -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(repo().join("hooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "README.md")
        .collect();
    scripts.sort();
    scripts
}

#[test]
fn every_script_is_executable_documented_and_parses() {
    let scripts = scripts();
    assert!(scripts.len() >= 9, "{scripts:?}");
    let readme = std::fs::read_to_string(repo().join("hooks/README.md")).unwrap();
    let mut python = Vec::new();
    for script in &scripts {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let mode = std::fs::metadata(script).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{name} is not executable");
        let text = std::fs::read_to_string(script).unwrap();
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        let header = header.join("\n");
        for label in ["# Event", "Exit codes:", "Config"] {
            assert!(header.contains(label), "{name}: header lacks {label:?}");
        }
        assert!(
            readme.contains(&format!("`{name}`")),
            "README misses {name}"
        );
        match script.extension().and_then(|e| e.to_str()) {
            Some("sh") => {
                assert!(header.starts_with("#!/bin/sh\n"), "{name}: shebang");
                let out = Command::new(posix_shell())
                    .arg("-n")
                    .arg(script)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "dash -n {name}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Some("py") => {
                assert!(
                    header.starts_with("#!/usr/bin/env python3\n"),
                    "{name}: shebang"
                );
                python.push(script.clone());
            }
            other => panic!("{name}: unexpected extension {other:?}"),
        }
    }
    let out = Command::new("python3")
        .arg("-c")
        .arg("import ast, sys\nfor f in sys.argv[1:]: ast.parse(open(f).read(), f)")
        .args(&python)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn settings_example_wires_existing_scripts_that_work_as_configured() {
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("settings.example.json")).unwrap(),
    )
    .unwrap();
    let hooks = settings["hooks"].as_object().unwrap();
    let command_for = |event: &str, matcher: Option<&str>| -> String {
        let group = hooks[event]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g.get("matcher").and_then(Value::as_str) == matcher)
            .unwrap_or_else(|| panic!("{event} {matcher:?} not wired"));
        group["hooks"][0]["command"].as_str().unwrap().to_owned()
    };
    for (event, groups) in hooks {
        for group in groups.as_array().unwrap() {
            for hook in group["hooks"].as_array().unwrap() {
                let command = hook["command"].as_str().unwrap();
                let script = command
                    .strip_prefix("\"$CLAUDE_PROJECT_DIR\"/hooks/")
                    .unwrap_or_else(|| panic!("{event}: {command} is not project-relative"));
                assert!(
                    repo().join("hooks").join(script).is_file(),
                    "{event}: {script}"
                );
            }
        }
    }

    let p = Project::new();
    let denied = p.run_command(
        &command_for("PreToolUse", Some("Bash")),
        &p.pre_tool_use_bash("rm -rf /"),
        &[],
    );
    assert!(deny_reason(&denied).contains("rm -rf"));
    let mut read = p.golden("PreToolUse-Read");
    read["tool_input"]["file_path"] = json!(format!("{}/./notes.txt", p.root.display()));
    let rewritten = p
        .run_command(
            &command_for("PreToolUse", Some("Read|Write|Edit")),
            &read,
            &[],
        )
        .json();
    assert_eq!(
        rewritten["hookSpecificOutput"]["updatedInput"]["file_path"],
        json!(p.abs("notes.txt"))
    );
    for (event, golden) in [
        ("PostToolUse", "PostToolUse-Bash"),
        ("PostToolUseFailure", "PostToolUseFailure-Read"),
    ] {
        p.run_command(&command_for(event, Some("*")), &p.golden(golden), &[])
            .assert_silent();
    }
    assert_eq!(ledger(&p.path(".rein/audit.jsonl")).len(), 2);
    for event in ["SessionStart", "Stop", "SessionEnd"] {
        p.run_command(&command_for(event, None), &p.golden(event), &[])
            .assert_silent();
    }
    let events: Vec<Value> = ledger(&p.path(".rein/turns.jsonl"))
        .iter()
        .map(|l| l["event"].clone())
        .collect();
    assert_eq!(
        events,
        [json!("SessionStart"), json!("Stop"), json!("SessionEnd")]
    );
}
