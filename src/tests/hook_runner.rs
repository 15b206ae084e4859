//! Runs real command hooks (`/bin/sh`, a few python3 scripts) through `hooks::command::run`
//! and `hooks::output::interpret`, pinning spec §4.1–4.2 and the process rules of §5.4.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hooks::command::{self, CommandForm, CommandSpec, RawRun, STDIN_EPIPE_TEXT, STDOUT_CAP};
use crate::hooks::events::permission_request::{PermissionRequestAnswer, PermissionRequestOutput};
use crate::hooks::events::post_tool_use::PostToolUseOutput;
use crate::hooks::events::pre_tool_use::{HookPermission, PreToolUseOutput};
use crate::hooks::events::session_start::SessionStartOutput;
use crate::hooks::events::user_prompt_submit::UserPromptSubmitOutput;
use crate::hooks::output::HookJsonOutput;
use crate::hooks::output::{Interpreted, interpret};
use crate::hooks::run::{OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;
use crate::process::signal_group;
use crate::settings::schema::OnFailure;
use serde_json::Value;

use crate::tests::harness::write_executable;

const STDIN: &[u8] =
    b"{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\"}\n";

fn shell(cwd: &Path, command: &str, timeout: Duration) -> CommandSpec {
    CommandSpec::new(
        CommandForm::Shell(command.to_string()),
        cwd.to_path_buf(),
        timeout,
    )
}

fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    write_executable(&path, body);
    path
}

/// Whether `pid` is gone (absent, or a zombie waiting for a reaper that is not us).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // Field 3, after the parenthesised command name.
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            matches!(state.and_then(|s| s.chars().next()), Some('Z') | Some('X'))
        }
    }
}

async fn wait_gone(pid: u32, within: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < within {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    process_gone(pid)
}

async fn read_pid(path: &Path) -> u32 {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no pid written to {}", path.display());
}

#[derive(Debug, Clone, Copy)]
enum Want {
    /// Success; plain stdout if `Some`.
    Success(Option<&'static str>),
    Blocking(&'static str),
    BlockingPrefix(&'static str),
    NonBlocking(&'static str),
    NonBlockingPrefix(&'static str),
    Cancelled,
}

/// The event-specific output, typed the way the event's module reads it.
fn typed<T: serde::de::DeserializeOwned + Default>(output: &HookJsonOutput) -> T {
    output
        .hook_specific
        .clone()
        .map(|m| serde_json::from_value(Value::Object(m)).unwrap())
        .unwrap_or_default()
}

/// PreToolUse's reading of an output: `permissionDecision` (reason falling back to `reason`),
/// else the legacy `decision` (`approve` → allow, `block` → deny).
fn permission(output: &HookJsonOutput) -> Option<(HookPermission, Option<String>)> {
    let specific: PreToolUseOutput = typed(output);
    if let Some(p) = specific.permission_decision {
        return Some((
            p,
            specific
                .permission_decision_reason
                .or_else(|| output.reason.clone()),
        ));
    }
    if output.approves() {
        return Some((HookPermission::Allow, output.reason.clone()));
    }
    output
        .block_reason()
        .map(|r| (HookPermission::Deny, Some(r)))
}

#[derive(Debug, Clone, Copy)]
enum WantOutput {
    /// No JSON output applied.
    None,
    /// JSON applied, with this PreToolUse permission answer.
    Permission(Option<HookPermission>),
    Backgrounded,
}

#[derive(Debug, Clone, Copy)]
enum Form {
    Shell(&'static str),
    /// Exec form of a program that does not exist.
    MissingProgram,
    /// Shell form in a cwd that does not exist.
    MissingCwd(&'static str),
}

struct Row {
    name: &'static str,
    event: HookEvent,
    form: Form,
    on_failure: OnFailure,
    want: Want,
    output: WantOutput,
    /// Expected status kind, checked loosely.
    status: fn(&RunStatus) -> bool,
}

fn exited(code: i32) -> impl Fn(&RunStatus) -> bool {
    move |s| *s == RunStatus::Exited(code)
}

const C: OnFailure = OnFailure::Continue;
const B: OnFailure = OnFailure::Block;
const PRE: HookEvent = HookEvent::PreToolUse;

fn rows() -> Vec<Row> {
    fn e0(s: &RunStatus) -> bool {
        exited(0)(s)
    }
    fn e1(s: &RunStatus) -> bool {
        exited(1)(s)
    }
    fn e2(s: &RunStatus) -> bool {
        exited(2)(s)
    }
    fn e3(s: &RunStatus) -> bool {
        exited(3)(s)
    }
    fn e126(s: &RunStatus) -> bool {
        exited(126)(s)
    }
    fn e127(s: &RunStatus) -> bool {
        exited(127)(s)
    }
    fn sig9(s: &RunStatus) -> bool {
        *s == RunStatus::Signaled(9)
    }
    fn timed_out(s: &RunStatus) -> bool {
        *s == RunStatus::TimedOut
    }
    fn spawn_failed(s: &RunStatus) -> bool {
        matches!(s, RunStatus::SpawnFailed(_))
    }
    use Want::*;
    let none = WantOutput::None;
    fn row(
        name: &'static str,
        event: HookEvent,
        form: Form,
        on_failure: OnFailure,
        want: Want,
        output: WantOutput,
        status: fn(&RunStatus) -> bool,
    ) -> Row {
        Row {
            name,
            event,
            form,
            on_failure,
            want,
            output,
            status,
        }
    }
    let sh = Form::Shell;
    vec![
        // --- plain text × exit codes ---
        row(
            "plain exit 0",
            PRE,
            sh("echo '  hi there  '"),
            C,
            Success(Some("hi there")),
            none,
            e0,
        ),
        row(
            "plain exit 1",
            PRE,
            sh("echo out; echo ' err1 ' >&2; exit 1"),
            C,
            NonBlocking("Failed with non-blocking status code: err1"),
            none,
            e1,
        ),
        row(
            "plain exit 1 no stderr",
            PRE,
            sh("exit 1"),
            C,
            NonBlocking("Failed with non-blocking status code: No stderr output"),
            none,
            e1,
        ),
        row(
            "plain exit 2",
            PRE,
            sh("echo out; printf 'line1\\nline2\\n' >&2; exit 2"),
            C,
            Blocking("[echo out; printf 'line1\\nline2\\n' >&2; exit 2]: line1\nline2\n"),
            none,
            e2,
        ),
        row(
            "plain exit 2 no stderr",
            PRE,
            sh("exit 2"),
            C,
            Blocking("[exit 2]: No stderr output"),
            none,
            e2,
        ),
        row(
            "plain exit 3",
            PRE,
            sh("echo e3 >&2; exit 3"),
            C,
            NonBlocking("Failed with non-blocking status code: e3"),
            none,
            e3,
        ),
        row(
            "exit 126 not executable",
            PRE,
            sh("./not-executable.sh"),
            C,
            NonBlockingPrefix(
                "Failed with non-blocking status code: /bin/sh: 1: ./not-executable.sh: Permission denied",
            ),
            none,
            e126,
        ),
        row(
            "exit 127 missing script",
            PRE,
            sh("./missing.sh"),
            C,
            NonBlocking(
                "Failed with non-blocking status code: /bin/sh: 1: ./missing.sh: not found",
            ),
            none,
            e127,
        ),
        row(
            "death by signal = exit 1",
            PRE,
            sh("echo bye >&2; kill -9 $$"),
            C,
            NonBlocking("Failed with non-blocking status code: bye"),
            none,
            sig9,
        ),
        row(
            "timeout",
            PRE,
            sh("echo partial; sleep 5"),
            C,
            Cancelled,
            none,
            timed_out,
        ),
        row(
            "spawn failure exec form",
            PRE,
            Form::MissingProgram,
            C,
            NonBlockingPrefix(
                "Error occurred while executing hook command: cannot start /nonexistent/hook-program: ",
            ),
            none,
            spawn_failed,
        ),
        row(
            "spawn failure missing cwd",
            PRE,
            Form::MissingCwd("true"),
            C,
            NonBlockingPrefix(
                "Error occurred while executing hook command: cannot start /bin/sh: working directory ",
            ),
            none,
            spawn_failed,
        ),
        // --- JSON × exit codes ---
        row(
            "json deny exit 0",
            PRE,
            sh(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'"#,
            ),
            C,
            Success(None),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e0,
        ),
        row(
            "json deny exit 1 still denies",
            PRE,
            sh(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'; exit 1"#,
            ),
            C,
            Success(None),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e1,
        ),
        row(
            "json allow exit 3 applied",
            PRE,
            sh(r#"echo '{"decision":"approve"}'; exit 3"#),
            C,
            Success(None),
            WantOutput::Permission(Some(HookPermission::Allow)),
            e3,
        ),
        row(
            "json allow + exit 2 blocks from stderr",
            PRE,
            sh(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'; echo why >&2; exit 2"#,
            ),
            C,
            Blocking(
                "[echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'; echo why >&2; exit 2]: why\n",
            ),
            WantOutput::Permission(Some(HookPermission::Allow)),
            e2,
        ),
        row(
            "json deny + exit 2: its own refusal",
            PRE,
            sh(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}'; echo why >&2; exit 2"#,
            ),
            C,
            Success(None),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e2,
        ),
        row(
            "json decision block",
            PRE,
            sh(r#"echo '{"decision":"block","reason":"LEGACY"}'"#),
            C,
            Blocking("LEGACY"),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e0,
        ),
        row(
            "json decision block no reason",
            PRE,
            sh(r#"echo '{"decision":"block"}'"#),
            C,
            Blocking("Blocked by hook"),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e0,
        ),
        row(
            "json block + exit 2 keeps its reason",
            PRE,
            sh(r#"echo '{"decision":"block","reason":"MINE"}'; echo err >&2; exit 2"#),
            C,
            Blocking("MINE"),
            WantOutput::Permission(Some(HookPermission::Deny)),
            e2,
        ),
        row(
            "json no decision exit 0",
            PRE,
            sh(r#"printf '\n  {"systemMessage":"hello"}  \n\n'"#),
            C,
            Success(None),
            WantOutput::Permission(None),
            e0,
        ),
        row(
            "json with signal death applied",
            PRE,
            sh(r#"echo '{"decision":"block","reason":"R"}'; kill -9 $$"#),
            C,
            Blocking("R"),
            WantOutput::Permission(Some(HookPermission::Deny)),
            sig9,
        ),
        row(
            "async marker",
            PRE,
            sh(r#"echo '{"async":true,"asyncTimeout":1000}'"#),
            C,
            Success(None),
            WantOutput::Backgrounded,
            e0,
        ),
        // --- invalid JSON ---
        row(
            "schema: bad enum",
            PRE,
            sh(
                r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"maybe"}}'"#,
            ),
            C,
            NonBlockingPrefix(
                "Hook JSON output validation failed — hookSpecificOutput.permissionDecision: Invalid option: expected one of \"allow\"|\"deny\"|\"ask\"|\"defer\"\n\nThe hook's output was: {\n  \"hookSpecificOutput\": {\n    \"hookEventName\": \"PreToolUse\",\n    \"permissionDecision\": \"maybe\"\n  }\n}\n\nExpected schema:\n{",
            ),
            none,
            e0,
        ),
        row(
            "schema: wrong type",
            PRE,
            sh(r#"echo '{"continue":"no"}'"#),
            C,
            NonBlockingPrefix(
                "Hook JSON output validation failed — continue: Invalid input: expected boolean, received string",
            ),
            none,
            e0,
        ),
        row(
            "schema: bad enum + exit 2 blocks from stderr",
            PRE,
            sh(r#"echo '{"decision":"maybe"}'; echo E >&2; exit 2"#),
            C,
            Blocking("[echo '{\"decision\":\"maybe\"}'; echo E >&2; exit 2]: E\n"),
            none,
            e2,
        ),
        row(
            "schema: bad enum exit 1",
            PRE,
            sh(r#"echo '{"decision":"maybe"}'; exit 1"#),
            C,
            NonBlockingPrefix(
                "Hook JSON output validation failed — decision: Invalid option: expected one of \"approve\"|\"block\"",
            ),
            none,
            e1,
        ),
        row(
            "invalid JSON",
            PRE,
            sh(r#"echo '{"decision": approve}'"#),
            C,
            NonBlockingPrefix(
                "Hook JSON output validation failed — (root): looks like a JSON object but is not valid JSON: ",
            ),
            none,
            e0,
        ),
        row(
            "invalid JSON + exit 2",
            PRE,
            sh(r#"echo '{"decision": approve}'; echo E >&2; exit 2"#),
            C,
            Blocking("[echo '{\"decision\": approve}'; echo E >&2; exit 2]: E\n"),
            none,
            e2,
        ),
        row(
            "leading text = plain",
            PRE,
            sh(r#"echo 'note: {"decision":"block"}'"#),
            C,
            Success(Some(r#"note: {"decision":"block"}"#)),
            none,
            e0,
        ),
        row(
            "trailing text = plain",
            PRE,
            sh(r#"printf '{"decision":"block"}\ntrailing\n'"#),
            C,
            Success(Some("{\"decision\":\"block\"}\ntrailing")),
            none,
            e0,
        ),
        row(
            "two {} lines = plain",
            PRE,
            sh(r#"printf '{}\n{}\n'"#),
            C,
            Success(Some("{}\n{}")),
            none,
            e0,
        ),
        row(
            "two invalid-output lines = plain",
            PRE,
            sh(r#"printf '{"decision":"x"}\n{}\n'"#),
            C,
            Success(Some("{\"decision\":\"x\"}\n{}")),
            none,
            e0,
        ),
        row(
            "two lines, one a valid output = invalid",
            PRE,
            sh(r#"printf '{"decision":"block"}\n{"a":1}\n'"#),
            C,
            NonBlockingPrefix(
                "Hook JSON output validation failed — (root): looks like a JSON object",
            ),
            none,
            e0,
        ),
        row(
            "wrong event name voids output",
            PRE,
            sh(
                r#"echo '{"decision":"block","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}'"#,
            ),
            C,
            NonBlocking(
                "Hook returned incorrect event name: expected 'PreToolUse' but got 'PostToolUse'. Full stdout: {\"decision\":\"block\",\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"x\"}}",
            ),
            none,
            e0,
        ),
        // --- onFailure: block ---
        row(
            "block: exit 1",
            PRE,
            sh("echo err >&2; exit 1"),
            B,
            Blocking(
                "[echo err >&2; exit 1]: failed; blocking because onFailure is \"block\"\nerr",
            ),
            none,
            e1,
        ),
        row(
            "block: signal",
            PRE,
            sh("kill -9 $$"),
            B,
            Blocking("[kill -9 $$]: failed; blocking because onFailure is \"block\"\n"),
            none,
            sig9,
        ),
        row(
            "block: exit 1 ignores JSON",
            PRE,
            sh(r#"echo '{"decision":"approve"}'; exit 1"#),
            B,
            Blocking(
                "[echo '{\"decision\":\"approve\"}'; exit 1]: failed; blocking because onFailure is \"block\"\n",
            ),
            none,
            e1,
        ),
        row(
            "block: exit 127",
            PRE,
            sh("./missing.sh"),
            B,
            Blocking(
                "[./missing.sh]: failed; blocking because onFailure is \"block\"\n/bin/sh: 1: ./missing.sh: not found",
            ),
            none,
            e127,
        ),
        row(
            "block: timeout",
            PRE,
            sh("sleep 5"),
            B,
            Blocking("[sleep 5]: timed out; blocking because onFailure is \"block\""),
            none,
            timed_out,
        ),
        row(
            "block: spawn failure",
            PRE,
            Form::MissingProgram,
            B,
            BlockingPrefix(
                "[/nonexistent/hook-program]: failed; blocking because onFailure is \"block\"\nError occurred while executing hook command: cannot start /nonexistent/hook-program: ",
            ),
            none,
            spawn_failed,
        ),
        row(
            "block: invalid JSON exit 0",
            PRE,
            sh(r#"echo '{"decision":"maybe"}'"#),
            B,
            BlockingPrefix(
                "[echo '{\"decision\":\"maybe\"}']: failed; blocking because onFailure is \"block\"\nHook JSON output validation failed — decision: ",
            ),
            none,
            e0,
        ),
        row(
            "block: exit 2 as usual",
            PRE,
            sh("echo E >&2; exit 2"),
            B,
            Blocking("[echo E >&2; exit 2]: E\n"),
            none,
            e2,
        ),
        row(
            "block: exit 0 plain success",
            PRE,
            sh("echo ok"),
            B,
            Success(Some("ok")),
            none,
            e0,
        ),
        row(
            "block: exit 0 JSON applied",
            PRE,
            sh(r#"echo '{"decision":"approve"}'"#),
            B,
            Success(None),
            WantOutput::Permission(Some(HookPermission::Allow)),
            e0,
        ),
        row(
            "block ignored on Stop",
            HookEvent::Stop,
            sh("echo err >&2; exit 1"),
            B,
            NonBlocking("Failed with non-blocking status code: err"),
            none,
            e1,
        ),
        row(
            "block ignored on Stop: timeout",
            HookEvent::Stop,
            sh("sleep 5"),
            B,
            Cancelled,
            none,
            timed_out,
        ),
        // --- Stop "script missing" downgrade ---
        row(
            "Stop: missing script downgraded",
            HookEvent::Stop,
            sh("sh ./missing-stop.sh"),
            C,
            NonBlocking(
                "Hook script appears to be missing: sh: 0: cannot open ./missing-stop.sh: No such file",
            ),
            none,
            e2,
        ),
        row(
            "PreToolUse: missing script via sh blocks",
            PRE,
            sh("sh ./missing-stop.sh"),
            C,
            Blocking(
                "[sh ./missing-stop.sh]: sh: 0: cannot open ./missing-stop.sh: No such file\n",
            ),
            none,
            e2,
        ),
        row(
            "Stop: real exit 2 blocks",
            HookEvent::Stop,
            sh("echo 'keep going' >&2; exit 2"),
            C,
            Blocking("[echo 'keep going' >&2; exit 2]: keep going\n"),
            none,
            e2,
        ),
    ]
}

fn check_want(name: &str, got: &Interpreted, want: Want) {
    match (want, &got.outcome) {
        (Want::Success(plain), OutcomeKind::Success) => {
            assert_eq!(got.plain_stdout.as_deref(), plain, "{name}: plain stdout");
        }
        (Want::Blocking(text), OutcomeKind::Blocking(reason)) => {
            assert_eq!(reason, text, "{name}");
        }
        (Want::BlockingPrefix(text), OutcomeKind::Blocking(reason)) => {
            assert!(
                reason.starts_with(text),
                "{name}: {reason:?}\n  wanted prefix {text:?}"
            );
        }
        (Want::NonBlocking(text), OutcomeKind::NonBlocking(reason)) => {
            assert_eq!(reason, text, "{name}");
        }
        (Want::NonBlockingPrefix(text), OutcomeKind::NonBlocking(reason)) => {
            assert!(
                reason.starts_with(text),
                "{name}: {reason:?}\n  wanted prefix {text:?}"
            );
        }
        (Want::Cancelled, OutcomeKind::Cancelled) => {}
        (want, outcome) => panic!("{name}: wanted {want:?}, got {outcome:?}"),
    }
}

fn check_output(name: &str, got: &Interpreted, want: WantOutput) {
    match want {
        WantOutput::None => {
            assert!(
                got.output.is_none(),
                "{name}: output applied: {:?}",
                got.output
            );
            assert!(!got.backgrounded, "{name}");
        }
        WantOutput::Permission(permission) => {
            let output = got
                .output
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: no JSON output applied"));
            assert_eq!(
                self::permission(output).map(|(p, _)| p),
                permission,
                "{name}"
            );
            assert!(got.json.is_some(), "{name}");
        }
        WantOutput::Backgrounded => {
            assert!(got.backgrounded, "{name}");
            assert!(got.output.is_none(), "{name}");
        }
    }
}

/// Every row of spec §4.1 (and the JSON-recognition rules of §4.2 that decide between rows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decision_table() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("not-executable.sh"), "echo hi\n").unwrap();
    // Rows that must time out sleep 5 s against 400 ms; every other row gets a timeout it can
    // never hit, so a loaded CI machine cannot turn them into timeouts.
    let short = Duration::from_millis(400);
    let timeout = Duration::from_secs(30);
    let rows = rows();
    let runs = rows.iter().map(|row| {
        let (spec, text) = match row.form {
            Form::Shell(command) => {
                let timeout = if command.contains("sleep 5") {
                    short
                } else {
                    timeout
                };
                (shell(dir.path(), command, timeout), command.to_string())
            }
            Form::MissingProgram => {
                let form = CommandForm::Exec {
                    program: "/nonexistent/hook-program".to_string(),
                    args: Vec::new(),
                };
                let text = form.display_text();
                (
                    CommandSpec::new(form, dir.path().to_path_buf(), timeout),
                    text,
                )
            }
            Form::MissingCwd(command) => (
                shell(&dir.path().join("gone"), command, timeout),
                command.to_string(),
            ),
        };
        async move {
            let raw = command::run(&spec, STDIN).await;
            let got = interpret(row.event, &text, &raw, row.on_failure);
            (raw, got)
        }
    });
    let results = futures_util::future::join_all(runs).await;
    for (row, (raw, got)) in rows.iter().zip(results) {
        assert!(
            (row.status)(&raw.status),
            "{}: status {:?}",
            row.name,
            raw.status
        );
        check_want(row.name, &got, row.want);
        check_output(row.name, &got, row.output);
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_a_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let timeout = Duration::from_millis(500);
    let raw = command::run(&shell(dir.path(), &command, timeout), STDIN).await;
    assert_eq!(raw.status, RunStatus::TimedOut);
    let grandchild = read_pid(&pidfile).await;
    assert!(
        wait_gone(grandchild, Duration::from_secs(2)).await,
        "grandchild {grandchild} survived the timeout"
    );
    assert!(raw.pid.is_some_and(process_gone));
}

#[tokio::test]
async fn timeout_escalates_to_sigkill_when_sigterm_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The trap is inherited by the background sleep too: only SIGKILL ends either.
    let command = format!(
        "trap '' TERM; sleep 30 & echo $! > {}; wait; sleep 30",
        pidfile.display()
    );
    let raw = command::run(
        &shell(dir.path(), &command, Duration::from_millis(300)),
        STDIN,
    )
    .await;
    assert_eq!(raw.status, RunStatus::TimedOut);
    let grandchild = read_pid(&pidfile).await;
    assert!(wait_gone(grandchild, Duration::from_secs(2)).await);
    eprintln!(
        "TERM-ignoring hook, 300 ms timeout: ended after {:?}",
        raw.duration
    );
    // Ended long before the 30 s the script wanted: the group really was killed.
    assert!(
        raw.duration < Duration::from_secs(30) / 5,
        "{:?}",
        raw.duration
    );
}

#[tokio::test]
async fn a_grandchild_holding_the_pipes_does_not_hold_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!("sleep 30 & echo $! > {}; echo done", pidfile.display());
    let timeout = Duration::from_secs(20);
    let raw = command::run(&shell(dir.path(), &command, timeout), STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert!(raw.lingering_killed);
    assert_eq!(raw.stdout, b"done\n");
    eprintln!("linger: run returned after {:?}", raw.duration);
    assert!(
        raw.duration < timeout / 4,
        "run took {:?} of a {:?} timeout",
        raw.duration,
        timeout
    );
    let grandchild = read_pid(&pidfile).await;
    assert!(wait_gone(grandchild, Duration::from_secs(2)).await);
    let got = interpret(HookEvent::PreToolUse, &command, &raw, OnFailure::Continue);
    assert_eq!(got.outcome, OutcomeKind::Success);
    assert!(
        got.notices
            .iter()
            .any(|n| n.contains("kept stdout/stderr open"))
    );
}

#[tokio::test]
async fn a_detached_daemon_that_closed_its_pipes_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!(
        "sleep 30 >/dev/null 2>&1 </dev/null & echo $! > {}; echo started",
        pidfile.display()
    );
    let raw = command::run(&shell(dir.path(), &command, Duration::from_secs(20)), STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert!(!raw.lingering_killed);
    let daemon = read_pid(&pidfile).await;
    // Give a wrongly sent SIGKILL time to land before looking.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !process_gone(daemon),
        "daemon was killed although it released the pipes"
    );
    // Clean up through the public group killer (the daemon is in the hook's group).
    let pgid = raw.pid.unwrap();
    assert!(signal_group(pgid, libc::SIGKILL));
    assert!(wait_gone(daemon, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn dropping_the_run_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let spec = shell(dir.path(), &command, Duration::from_secs(20));
    let result = tokio::time::timeout(Duration::from_millis(300), command::run(&spec, STDIN)).await;
    assert!(result.is_err(), "the hook should still have been running");
    let grandchild = read_pid(&pidfile).await;
    assert!(wait_gone(grandchild, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn cancel_kills_the_group_and_reads_as_cancelled_even_with_on_failure_block() {
    let dir = tempfile::tempdir().unwrap();
    let spec = shell(dir.path(), "sleep 30", Duration::from_secs(20));
    let raw =
        command::run_until(&spec, STDIN, tokio::time::sleep(Duration::from_millis(200))).await;
    assert_eq!(raw.status, RunStatus::TimedOut);
    assert!(raw.cancelled);
    assert!(raw.duration < Duration::from_secs(20) / 4);
    let got = interpret(HookEvent::PreToolUse, "sleep 30", &raw, OnFailure::Block);
    assert_eq!(got.outcome, OutcomeKind::Cancelled);
}

#[tokio::test]
async fn one_mib_stdin_to_a_hook_that_never_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let payload = vec![b'x'; 1024 * 1024];
    // Writes 1 MiB to each of stdout and stderr before exiting, never reading stdin: a runner
    // that writes stdin before draining would deadlock here.
    let command = "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2";
    let timeout = Duration::from_secs(20);
    let raw = command::run(&shell(dir.path(), command, timeout), &payload).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert_eq!(raw.stdout_bytes, 1024 * 1024);
    assert_eq!(raw.stdout.len(), 1024 * 1024);
    assert_eq!(raw.stderr_bytes, 1024 * 1024);
    assert_eq!(raw.stdin_error.as_deref(), Some(STDIN_EPIPE_TEXT));
    assert!(raw.duration < timeout / 4);
}

#[tokio::test]
async fn a_hook_that_reads_stdin_gets_every_byte_then_eof() {
    let dir = tempfile::tempdir().unwrap();
    let mut payload = vec![b'y'; 1024 * 1024];
    payload.push(b'\n');
    let raw = command::run(
        &shell(dir.path(), "wc -c", Duration::from_secs(20)),
        &payload,
    )
    .await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert_eq!(String::from_utf8_lossy(&raw.stdout).trim(), "1048577");
    assert_eq!(raw.stdin_error, None);
}

#[tokio::test]
async fn hundred_mib_of_stdout_is_capped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let command = "head -c 104857600 /dev/zero";
    let raw = command::run(&shell(dir.path(), command, Duration::from_secs(60)), STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert_eq!(raw.stdout_bytes, 104_857_600);
    eprintln!("100 MiB stdout drained in {:?}", raw.duration);
    assert!(raw.stdout_capped);
    assert_eq!(raw.stdout.len(), STDOUT_CAP);
    assert!(
        raw.stdout.capacity() <= STDOUT_CAP,
        "{}",
        raw.stdout.capacity()
    );
    let got = interpret(HookEvent::PreToolUse, command, &raw, OnFailure::Continue);
    assert!(
        got.notices
            .iter()
            .any(|n| n.contains("stdout was 104857600 bytes; only the first 10485760 were kept")),
        "{:?}",
        got.notices
    );
}

#[tokio::test]
async fn capped_json_is_never_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let command = r#"printf '{"decision":"approve","reason":"'; head -c 5000 /dev/zero | tr '\0' a; printf '"}'"#;
    let mut spec = shell(dir.path(), command, Duration::from_secs(20));
    spec.stdout_cap = 1024;
    let raw = command::run(&spec, STDIN).await;
    assert!(raw.stdout_capped);
    assert_eq!(raw.stdout.len(), 1024);
    let got = interpret(HookEvent::PreToolUse, command, &raw, OnFailure::Continue);
    assert!(got.output.is_none());
    match &got.outcome {
        OutcomeKind::NonBlocking(text) => {
            assert!(text.contains("more than the 1024-byte cap"), "{text}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn invalid_utf8_json_is_not_an_allow() {
    let dir = tempfile::tempdir().unwrap();
    let command = r#"printf '{"decision":"approve","reason":"\377"}'"#;
    let raw = command::run(&shell(dir.path(), command, Duration::from_secs(20)), STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    let got = interpret(HookEvent::PreToolUse, command, &raw, OnFailure::Continue);
    assert!(got.output.is_none());
    match &got.outcome {
        OutcomeKind::NonBlocking(text) => {
            assert!(
                text.contains("stdout is not valid UTF-8 (first bad byte at offset 32)"),
                "{text}"
            )
        }
        other => panic!("{other:?}"),
    }
    let blocked = interpret(HookEvent::PreToolUse, command, &raw, OnFailure::Block);
    assert!(matches!(blocked.outcome, OutcomeKind::Blocking(_)));
}

#[tokio::test]
async fn hundred_thousand_levels_of_nesting_do_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 100_000;
    let mut doc = String::from("{\"reason\":");
    doc.push_str(&"[".repeat(depth));
    doc.push_str(&"]".repeat(depth));
    doc.push('}');
    std::fs::write(dir.path().join("deep.json"), &doc).unwrap();
    let mut objects = "{\"a\":".repeat(depth);
    objects.push('1');
    objects.push_str(&"}".repeat(depth));
    std::fs::write(dir.path().join("deep-objects.json"), &objects).unwrap();

    for (file, levels) in [("deep.json", depth + 1), ("deep-objects.json", depth)] {
        let command = format!("cat {file}");
        let raw = command::run(&shell(dir.path(), &command, Duration::from_secs(20)), STDIN).await;
        let got = interpret(HookEvent::PreToolUse, &command, &raw, OnFailure::Continue);
        assert!(got.output.is_none());
        match &got.outcome {
            OutcomeKind::NonBlocking(text) => {
                assert!(
                    text.starts_with(&format!(
                        "Hook JSON output validation failed — (root): JSON is nested {levels} \
                         levels deep; at most 128 are accepted"
                    )),
                    "{}",
                    &text[..200.min(text.len())]
                );
                assert!(
                    text.len() < 4096,
                    "the error must not echo 200 KB of brackets"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn exec_form_args_arrive_literally() {
    let dir = tempfile::tempdir().unwrap();
    let form = CommandForm::Exec {
        program: "printf".to_string(),
        args: vec![
            "%s|".to_string(),
            "a b".to_string(),
            "$HOME".to_string(),
            "~".to_string(),
            "*".to_string(),
            "'q'".to_string(),
        ],
    };
    assert_eq!(form.display_text(), "printf %s| a b $HOME ~ * 'q'");
    let spec = CommandSpec::new(form, dir.path().to_path_buf(), Duration::from_secs(20));
    let raw = command::run(&spec, STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    assert_eq!(String::from_utf8_lossy(&raw.stdout), "a b|$HOME|~|*|'q'|");
}

#[tokio::test]
async fn shell_form_is_posix_sh_not_bash() {
    let dir = tempfile::tempdir().unwrap();
    let spec = shell(
        dir.path(),
        "echo \"bash=${BASH_VERSION:-none}\"; echo $0",
        Duration::from_secs(20),
    );
    let raw = command::run(&spec, STDIN).await;
    assert_eq!(String::from_utf8_lossy(&raw.stdout), "bash=none\n/bin/sh\n");
}

#[tokio::test]
async fn env_cwd_and_own_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(
        dir.path(),
        "pwd; echo \"$REIN_TEST_SET|${HOME:-unset}\"; ps -o pgid= -p $$ | tr -d ' '; echo $$",
        Duration::from_secs(20),
    );
    spec.env
        .push(("REIN_TEST_SET".to_string(), "v a l".to_string()));
    spec.env_remove.push("HOME".to_string());
    let raw = command::run(&spec, STDIN).await;
    let text = String::from_utf8_lossy(&raw.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    assert_eq!(lines[1], "v a l|unset");
    // pgid == pid of the sh: it leads its own group.
    assert_eq!(lines[2], lines[3]);
    assert_eq!(raw.pid.map(|p| p.to_string()).as_deref(), Some(lines[3]));
}

#[tokio::test]
async fn python_hooks_read_stdin_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "guard.py",
        r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": data["hook_event_name"],
        "permissionDecision": "deny",
        "permissionDecisionReason": "no " + data["tool_name"],
        "additionalContext": "seen",
    }
}))
"#,
    );
    let command = script.display().to_string();
    let raw = command::run(&shell(dir.path(), &command, Duration::from_secs(20)), STDIN).await;
    let got = interpret(HookEvent::PreToolUse, &command, &raw, OnFailure::Continue);
    assert_eq!(got.outcome, OutcomeKind::Success);
    let output = got.output.unwrap();
    assert_eq!(
        permission(&output),
        Some((HookPermission::Deny, Some("no Bash".to_string())))
    );
    assert_eq!(
        typed::<PreToolUseOutput>(&output)
            .additional_context
            .as_deref(),
        Some("seen")
    );

    // A python Stop hook pointing at a file that is gone: python exits 2 with "can't open file".
    let command = "python3 ./gone.py";
    let raw = command::run(&shell(dir.path(), command, Duration::from_secs(20)), STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(2));
    let got = interpret(HookEvent::Stop, command, &raw, OnFailure::Continue);
    match &got.outcome {
        OutcomeKind::NonBlocking(text) => {
            assert!(
                text.starts_with("Hook script appears to be missing: "),
                "{text}"
            );
            assert!(text.contains("can't open file"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn per_event_specific_outputs_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(HookEvent, &str)> = vec![
        (
            HookEvent::PermissionRequest,
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"nope","interrupt":true}}}"#,
        ),
        (
            HookEvent::SessionStart,
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx","watchPaths":["a","b"],"sessionTitle":"T"}}"#,
        ),
        (
            HookEvent::PostToolUse,
            r#"{"decision":"block","reason":"r","hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"X"},"additionalContext":"c"}}"#,
        ),
        (
            HookEvent::UserPromptSubmit,
            r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","suppressOriginalPrompt":true},"extra":1}"#,
        ),
    ];
    for (event, json) in cases {
        let dir_path = dir.path().to_path_buf();
        let file = dir_path.join(format!("{event}.json"));
        std::fs::write(&file, json).unwrap();
        let command = format!("cat '{}'", file.display());
        let raw = command::run(&shell(&dir_path, &command, Duration::from_secs(20)), STDIN).await;
        let got = interpret(event, &command, &raw, OnFailure::Continue);
        let output = got
            .output
            .clone()
            .unwrap_or_else(|| panic!("{event}: {:?}", got.outcome));
        assert!(output.hook_specific.is_some(), "{event}");
        match event {
            HookEvent::PermissionRequest => {
                let PermissionRequestOutput {
                    decision: Some(PermissionRequestAnswer::Deny { message, interrupt }),
                } = typed(&output)
                else {
                    panic!("{event}: {output:?}")
                };
                assert_eq!(message.as_deref(), Some("nope"));
                assert!(interrupt);
                assert_eq!(got.outcome, OutcomeKind::Success);
            }
            HookEvent::SessionStart => {
                let SessionStartOutput {
                    additional_context,
                    watch_paths,
                    session_title,
                    ..
                } = typed(&output);
                assert_eq!(additional_context.as_deref(), Some("ctx"));
                assert_eq!(watch_paths, Some(vec!["a".to_string(), "b".to_string()]));
                assert_eq!(session_title.as_deref(), Some("T"));
            }
            HookEvent::PostToolUse => {
                let PostToolUseOutput {
                    updated_tool_output,
                    additional_context,
                } = typed(&output);
                assert_eq!(
                    updated_tool_output,
                    Some(serde_json::json!({"stdout": "X"}))
                );
                assert_eq!(additional_context.as_deref(), Some("c"));
                assert_eq!(got.outcome, OutcomeKind::Blocking("r".to_string()));
            }
            HookEvent::UserPromptSubmit => {
                let UserPromptSubmitOutput {
                    suppress_original_prompt,
                    ..
                } = typed(&output);
                assert_eq!(suppress_original_prompt, Some(true));
                assert!(
                    got.notices
                        .iter()
                        .any(|n| n.contains("`extra` is not read"))
                );
            }
            other => panic!("{other}: unexpected"),
        }
    }
}

#[test]
fn permission_request_without_decision_is_a_schema_error() {
    let raw = RawRun {
        status: RunStatus::Exited(0),
        stdout: br#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest"}}"#.to_vec(),
        stderr: Vec::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_capped: false,
        stderr_capped: false,
        duration: Duration::ZERO,
        stdin_error: None,
        pid: None,
        cancelled: false,
        lingering_killed: false,
        warm: false,
    };
    let got = interpret(
        HookEvent::PermissionRequest,
        "hook",
        &raw,
        OnFailure::Continue,
    );
    match got.outcome {
        OutcomeKind::NonBlocking(text) => assert!(
            text.starts_with(
                "Hook JSON output validation failed — hookSpecificOutput.decision: required field \
                 is missing"
            ),
            "{text}"
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_hook_can_switch_itself_to_async_at_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    // Prints the marker, then waits for the test to open the gate, then reports.
    let command = format!(
        r#"echo '{{"async":true,"asyncTimeout":10000}}'; while [ ! -e {gate} ]; do sleep 0.02; done; echo '{{"systemMessage":"later"}}'"#,
        gate = gate.display()
    );
    let spec = shell(dir.path(), &command, Duration::from_secs(20));
    let end = command::run_detecting_async(spec, STDIN.to_vec()).await;
    let command::RunEnd::Backgrounded { raw, background } = end else {
        panic!("not backgrounded: {end:?}");
    };
    // The foreground result is "success, nothing else processed".
    assert_eq!(raw.status, RunStatus::Backgrounded);
    let got = interpret(HookEvent::PostToolUse, &command, &raw, OnFailure::Block);
    assert_eq!(got.outcome, OutcomeKind::Success);
    assert!(got.backgrounded);
    assert_eq!(background.marker["asyncTimeout"], 10000);
    // It really is still running: it cannot finish before the gate exists.
    let pid = background.pid.unwrap();
    assert!(!process_gone(pid));
    std::fs::write(&gate, "").unwrap();
    let later = background.wait().await;
    assert_eq!(later.status, RunStatus::Exited(0));
    assert_eq!(
        String::from_utf8_lossy(&later.stdout).trim(),
        r#"{"systemMessage":"later"}"#
    );
    let got = interpret(
        HookEvent::PostToolUse,
        &command,
        &later,
        OnFailure::Continue,
    );
    assert_eq!(
        got.output.and_then(|o| o.system_message).as_deref(),
        Some("later")
    );
}

#[tokio::test]
async fn async_detection_leaves_ordinary_runs_alone_and_cancel_kills_background() {
    let dir = tempfile::tempdir().unwrap();
    // A normal JSON answer is not a marker: the run finishes as usual.
    let spec = shell(
        dir.path(),
        r#"echo '{"decision":"block"}'; sleep 0.1; echo E >&2; exit 2"#,
        Duration::from_secs(20),
    );
    match command::run_detecting_async(spec, STDIN.to_vec()).await {
        command::RunEnd::Finished(raw) => {
            assert_eq!(raw.status, RunStatus::Exited(2));
            assert_eq!(raw.stderr, b"E\n");
        }
        other => panic!("{other:?}"),
    }
    // A backgrounded hook that never ends is killed by cancel().
    let pidfile = dir.path().join("pid");
    let command = format!(
        r#"echo '{{"async":true}}'; sleep 30 & echo $! > {}; wait"#,
        pidfile.display()
    );
    let spec = shell(dir.path(), &command, Duration::from_secs(20));
    let command::RunEnd::Backgrounded { background, .. } =
        command::run_detecting_async(spec, STDIN.to_vec()).await
    else {
        panic!("not backgrounded");
    };
    let grandchild = read_pid(&pidfile).await;
    let raw = background.cancel().await;
    assert!(raw.cancelled);
    assert!(wait_gone(grandchild, Duration::from_secs(2)).await);
}

fn raw_with_stdout(code: i32, stdout: &[u8], stderr: &[u8]) -> RawRun {
    RawRun {
        status: RunStatus::Exited(code),
        stdout: stdout.to_vec(),
        stderr: stderr.to_vec(),
        stdout_bytes: stdout.len() as u64,
        stderr_bytes: stderr.len() as u64,
        stdout_capped: false,
        stderr_capped: false,
        duration: Duration::ZERO,
        stdin_error: None,
        pid: None,
        cancelled: false,
        lingering_killed: false,
        warm: false,
    }
}

#[test]
fn terminal_sequence_is_validated() {
    let ok = [
        r#"{"terminalSequence":"\u001b]0;title\u0007"}"#,
        r#"{"terminalSequence":"\u0007"}"#,
        r#"{"terminalSequence":"\u001b]9;4;1;50\u001b\\"}"#,
    ];
    for json in ok {
        let got = interpret(
            PRE,
            "h",
            &raw_with_stdout(0, json.as_bytes(), b""),
            OnFailure::Continue,
        );
        assert_eq!(got.outcome, OutcomeKind::Success, "{json}");
        assert!(got.output.is_some(), "{json}");
    }
    let bad = [
        r#"{"terminalSequence":"\u001b[31m"}"#,
        r#"{"terminalSequence":"\u001b]8;;http://x\u0007"}"#,
        r#"{"terminalSequence":"\u001b]9;1 digit\u0007"}"#,
    ];
    for json in bad {
        let got = interpret(
            PRE,
            "h",
            &raw_with_stdout(0, json.as_bytes(), b""),
            OnFailure::Continue,
        );
        match &got.outcome {
            OutcomeKind::NonBlocking(text) => assert!(
                text.starts_with("Hook JSON output validation failed — terminalSequence: "),
                "{text}"
            ),
            other => panic!("{json}: {other:?}"),
        }
    }
}

proptest::proptest! {
    /// Whatever a hook prints, interpretation never panics, and an output is only ever applied
    /// from strict UTF-8 stdout that is one JSON object.
    #[test]
    fn interpretation_is_total_and_strict(
        stdout in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        jsonish in "[ \n{}\\[\\]\":,a-z0-9\u{00e9}]{0,48}",
        use_jsonish in proptest::prelude::any::<bool>(),
        code in proptest::sample::select(vec![0, 1, 2, 3, 127]),
        block in proptest::prelude::any::<bool>(),
    ) {
        let bytes = if use_jsonish { jsonish.into_bytes() } else { stdout };
        let on_failure = if block { OnFailure::Block } else { OnFailure::Continue };
        for event in [PRE, HookEvent::Stop, HookEvent::PermissionRequest, HookEvent::SessionStart] {
            let got = interpret(event, "h", &raw_with_stdout(code, &bytes, b"e"), on_failure);
            if got.output.is_some() {
                let text = std::str::from_utf8(&bytes);
                proptest::prop_assert!(text.is_ok());
                let value: serde_json::Value = serde_json::from_str(text.unwrap().trim()).unwrap();
                proptest::prop_assert!(value.is_object());
            }
            if code == 2 {
                let blocks_or_refuses = matches!(got.outcome, OutcomeKind::Blocking(_))
                    || got.output.as_ref().is_some_and(|o| o.refuses())
                    || got.backgrounded;
                proptest::prop_assert!(blocks_or_refuses, "exit 2 did not block: {:?}", got.outcome);
            }
        }
    }
}

#[test]
fn a_huge_invalid_output_is_echoed_only_in_part() {
    let mut json = String::from(r#"{"decision":"maybe","reason":""#);
    json.push_str(&"r".repeat(100_000));
    json.push_str(r#""}"#);
    let got = interpret(
        PRE,
        "h",
        &raw_with_stdout(0, json.as_bytes(), b""),
        OnFailure::Continue,
    );
    match &got.outcome {
        OutcomeKind::NonBlocking(text) => {
            assert!(text.starts_with("Hook JSON output validation failed — decision: "));
            assert!(text.len() < 12_000, "{} bytes echoed", text.len());
            assert!(text.contains("… (100"), "the size of the rest is stated");
        }
        other => panic!("{other:?}"),
    }
}

/// An exec-form hook leads a session (and group) of its own, as Claude Code 2.1.328 starts it
/// (fixture `tests/fixtures/cc-2.1.328/exec_form`: the hook's pid is its group and session
/// id); before, rein gave it a group only, in rein's session.
#[tokio::test]
async fn exec_form_leads_a_session_of_its_own_as_in_claude_code() {
    let dir = tempfile::tempdir().unwrap();
    let form = CommandForm::Exec {
        program: "/bin/sh".to_string(),
        args: vec![
            "-c".to_string(),
            "echo $$ $(ps -o sid= -p $$) $(ps -o pgid= -p $$)".to_string(),
        ],
    };
    let spec = CommandSpec::new(form, dir.path().to_path_buf(), Duration::from_secs(20));
    let raw = command::run(&spec, STDIN).await;
    assert_eq!(raw.status, RunStatus::Exited(0));
    let out = String::from_utf8_lossy(&raw.stdout);
    let ids: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(ids.len(), 3, "{out}");
    assert_eq!(ids[0], ids[1], "session id: {out}");
    assert_eq!(ids[0], ids[2], "group id: {out}");
}

/// The timeout still ends everything an exec-form hook started: its session leader leads the
/// group too, so the group kill reaches a child that ignores SIGTERM.
#[tokio::test]
async fn exec_form_timeout_kills_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let form = CommandForm::Exec {
        program: "/bin/sh".to_string(),
        args: vec![
            "-c".to_string(),
            format!(
                "(trap '' TERM; sleep 300) & echo $! > '{}'; wait",
                pidfile.display()
            ),
        ],
    };
    let spec = CommandSpec::new(form, dir.path().to_path_buf(), Duration::from_millis(500));
    let raw = command::run(&spec, STDIN).await;
    assert_eq!(raw.status, RunStatus::TimedOut);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Gone, or a zombie waiting for whoever inherited it to reap it; a loaded machine may take
    // a moment to finish a SIGKILLed process, so look for a while.
    let state = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(") ").next().and_then(|r| r.chars().next()))
    };
    let since = std::time::Instant::now();
    while !matches!(state(), None | Some('Z')) && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        matches!(state(), None | Some('Z')),
        "the child {pid} outlived the timeout: {:?}",
        state()
    );
}

/// An exec-form program that cannot start is still a spawn failure, not setsid's exit code.
#[tokio::test]
async fn exec_form_missing_program_is_a_spawn_failure() {
    let dir = tempfile::tempdir().unwrap();
    for program in [
        "/nonexistent/hook",
        "no-such-hook-program-i24",
        "./missing.sh",
    ] {
        let form = CommandForm::Exec {
            program: program.to_string(),
            args: Vec::new(),
        };
        let spec = CommandSpec::new(form, dir.path().to_path_buf(), Duration::from_secs(5));
        let raw = command::run(&spec, STDIN).await;
        assert!(
            matches!(raw.status, RunStatus::SpawnFailed(_)),
            "{program}: {:?}",
            raw.status
        );
    }
}
