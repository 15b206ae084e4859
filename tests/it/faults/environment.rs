//! Environment faults fail closed: what the machine rein runs on does to a hook — a project path
//! that is not UTF-8, a command too long for `execve` (`E2BIG`), a script-path variable that is
//! not set — never lets a call run that the hook exists to deny, unnoticed.
//!
//! * A project dir that is not UTF-8 is refused at start, as Claude Code refuses it.
//! * A hook the environment keeps from starting is reported ahead by `rein hooks validate`
//!   (with `file:line:col`), and at run time counts as a hook that could not start: it blocks
//!   the call with `onFailure: "block"`, and is otherwise shown to the user on stderr.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Env, Run, env, run};

/// The victim of every denied call: it must survive.
const VICTIM: &str = "victim.txt";

/// A Bash call that deletes [`VICTIM`], then a final text.
fn delete_victim() -> Value {
    json!([super::bash(&format!("rm {VICTIM}")), super::say("done")])
}

/// `[{matcher: "Bash", hooks: [{command, onFailure?}]}]` on PreToolUse.
fn guard(command: &str, block_on_failure: bool) -> Value {
    let mut handler = json!({"type": "command", "command": command});
    if block_on_failure {
        handler["onFailure"] = json!("block");
    }
    json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]})
}

fn validate(e: &Env) -> Run {
    let mut c = e.cmd();
    c.args(["hooks", "validate"]);
    run(c)
}

// ---------------------------------------------------------------------------------------------
// a project path that is not UTF-8

/// A project dir named `proj-\xff\xfe` next to the sandbox's, holding a deny guard that a
/// garbled `CLAUDE_PROJECT_DIR` would make "not found", and the victim.
fn non_utf8_project(e: &Env) -> PathBuf {
    let dir = e.root.join(OsStr::from_bytes(b"proj-\xff\xfe"));
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    crate::harness::write_executable(
        &dir.join("hooks/deny.sh"),
        "#!/bin/sh\necho 'denied by the guard' >&2\nexit 2\n",
    );
    let settings = json!({"hooks": guard("\"$CLAUDE_PROJECT_DIR\"/hooks/deny.sh", false)});
    std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).unwrap();
    std::fs::write(dir.join(VICTIM), "keep me").unwrap();
    dir
}

fn assert_refused(run: &Run, dir: &std::path::Path) {
    assert_eq!(run.code, Some(1), "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("Can't access working directory")
            && run.stderr.contains("is not valid UTF-8")
            && run.stderr.contains(r"proj-\xFF\xFE"),
        "no clear refusal: {}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(VICTIM)).unwrap(),
        "keep me",
        "the denied call ran"
    );
}

#[test]
fn a_project_dir_that_is_not_utf8_is_refused_at_start_and_no_denied_call_runs() {
    let e = env();
    let dir = non_utf8_project(&e);
    let script = e.mock(delete_victim());

    // Started in it.
    let mut c = e.cmd();
    c.current_dir(&dir)
        .args(["-p", "go", "--allowedTools", "Bash", "--mock-script"])
        .arg(&script);
    let started_in = run(c);
    assert_refused(&started_in, &dir);
    assert!(started_in.stdout.is_empty(), "{}", started_in.stdout);
    assert!(e.transcript_files().is_empty(), "a session was started");

    // Named by --cwd.
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", "Bash", "--mock-script"])
        .arg(&script)
        .arg("--cwd")
        .arg(&dir);
    assert_refused(&run(c), &dir);

    // `rein hooks` too: its `test` would run the hooks with the same garbled variable.
    let mut c = e.cmd();
    c.current_dir(&dir).args(["hooks", "validate"]);
    assert_refused(&run(c), &dir);
}

// ---------------------------------------------------------------------------------------------
// a hook command over 128 KiB (E2BIG)

/// A guard that denies every call — if it could start: its command is 140 000 bytes, over the
/// 128 KiB Linux allows one argument (`sh -c <command>`).
fn oversized_guard() -> String {
    format!(
        "echo 'denied by the guard' >&2; exit 2 # {}",
        "x".repeat(140_000)
    )
}

/// What rein says about [`oversized_guard`].
fn too_long() -> String {
    format!(
        "the command is {} bytes, over Linux's limit of 131071 bytes (128 KiB) for one \
         argument, so it cannot be started (E2BIG)",
        oversized_guard().len()
    )
}

#[test]
fn hooks_validate_reports_a_command_over_128_kib_as_an_error_with_its_place() {
    let e = env();
    e.hooks(guard(&oversized_guard(), false));
    let run = validate(&e);
    assert_eq!(run.code, Some(1), "stdout: {}", run.stdout);
    let settings = e.path(".claude/settings.json").display().to_string();
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains(&too_long()))
        .unwrap_or_else(|| panic!("not reported: {}", run.stdout));
    // `<file>:<line>:<col>: error: …`, at the handler object.
    let place = line
        .strip_prefix(&format!("{settings}:"))
        .unwrap_or_else(|| panic!("no file:line: {line}"));
    let (line_no, rest) = place.split_once(':').unwrap();
    assert!(line_no.parse::<u32>().is_ok(), "{line}");
    assert!(rest.contains(": error: "), "{line}");
}

#[test]
fn a_command_over_128_kib_with_on_failure_block_refuses_the_call() {
    let e = env();
    e.write(VICTIM, "keep me");
    e.hooks(guard(&oversized_guard(), true));
    let run = e.run_mock(delete_victim(), &[]);
    assert_eq!(e.read(VICTIM), "keep me", "the call ran: {}", run.stderr);
    assert!(
        run.stderr
            .contains("blocked: PreToolUse:Bash hook error: [echo 'denied by the guard'"),
        "{:.3000}",
        run.stderr
    );
    // The model is told why (the reason names the hook, the onFailure rule and E2BIG).
    let result = super::tool_results(&e.transcript()).pop().unwrap();
    let content = result["content"].as_str().unwrap();
    assert!(
        content.contains("failed; blocking because onFailure is \"block\"")
            && content.contains(&too_long()),
        "{:.300}",
        content
    );
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert_eq!(run.stdout, "done\n");
}

#[test]
fn a_command_over_128_kib_without_on_failure_is_shown_to_the_user() {
    let e = env();
    e.write(VICTIM, "keep me");
    e.hooks(guard(&oversized_guard(), false));
    let run = e.run_mock(delete_victim(), &[]);
    // As in Claude Code, a hook that cannot start does not block by itself…
    assert!(!e.exists(VICTIM), "the call did not run: {}", run.stderr);
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    // …but the user is told, without --debug.
    let notice = format!(
        "PreToolUse:Bash hook error: Error occurred while executing hook command: cannot start \
         /bin/sh: {}",
        too_long()
    );
    assert!(
        run.stderr.contains(&notice),
        "not shown: {:.3000}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// a settings-level variable in the script path that expands to nothing

/// A guard named through `$REIN_TEST_GUARD_DIR`, which nobody sets: `/bin/sh` would run
/// `/deny.sh`, "not found" (exit 127, non-blocking).
const UNSET_GUARD: &str = "\"$REIN_TEST_GUARD_DIR\"/deny.sh";

#[test]
fn hooks_validate_warns_about_a_script_path_variable_that_is_not_set() {
    let e = env();
    e.hooks(guard(UNSET_GUARD, true));
    let run = validate(&e);
    let settings = e.path(".claude/settings.json").display().to_string();
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with(&format!("{settings}:"))
                && l.contains(": warning: $REIN_TEST_GUARD_DIR in the script path")
                && l.contains("is not set")),
        "{}",
        run.stdout
    );

    // Set in settings `env`: nothing to say.
    e.settings(json!({
        "env": {"REIN_TEST_GUARD_DIR": e.project.join("hooks").display().to_string()},
        "hooks": guard(UNSET_GUARD, true),
    }));
    let run = validate(&e);
    assert!(
        !run.stdout.contains("REIN_TEST_GUARD_DIR"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_script_path_variable_that_is_not_set_blocks_with_on_failure_block_and_is_shown_otherwise() {
    let e = env();
    e.write(VICTIM, "keep me");
    e.hooks(guard(UNSET_GUARD, true));
    let run = e.run_mock(delete_victim(), &[]);
    assert_eq!(e.read(VICTIM), "keep me", "the call ran: {}", run.stderr);
    assert!(
        run.stderr
            .contains("blocking because onFailure is \"block\""),
        "{}",
        run.stderr
    );

    let e = env();
    e.write(VICTIM, "keep me");
    e.hooks(guard(UNSET_GUARD, false));
    let run = e.run_mock(delete_victim(), &[]);
    assert!(!e.exists(VICTIM), "the call did not run: {}", run.stderr);
    assert!(
        run.stderr.contains(
            "PreToolUse:Bash hook error: Error occurred while executing hook command: not \
             started: $REIN_TEST_GUARD_DIR in the script path \"$REIN_TEST_GUARD_DIR\"/deny.sh \
             is not set"
        ),
        "{}",
        run.stderr
    );
}
