//! Hostile and broken command hooks on PreToolUse (spec §4.1, §5.3, §5.4): each costs its own
//! result and nothing else — the Bash call still runs (or is blocked, where the hook blocked on
//! purpose), the run ends within the hook's timeout plus a grace, its process group is gone and
//! rein's memory stays bounded.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Env, GRACE, Run, TOOL_RAN, assert_within, env, handler, on, record_pgid, tool_results,
    tool_then_done,
};

/// Runs the standard Bash call with one PreToolUse hook on `Bash`.
fn pre_tool(e: &Env, command: &str, timeout_s: u64, extra: &[&str]) -> Run {
    e.hooks(json!({"PreToolUse": on("Bash", command, timeout_s)}));
    e.run_mock(tool_then_done(), extra)
}

/// The session went on: exit 0, the tool ran, the final text was printed.
fn assert_session_went_on(e: &Env, run: &Run) {
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert!(
        e.exists(TOOL_RAN),
        "the tool did not run: {:.3000}",
        run.stderr
    );
    assert!(run.stdout.contains("done"), "stdout: {:.500}", run.stdout);
    // Every transcript line is complete JSON (checked by `transcript()`).
    assert!(!e.transcript().is_empty());
    // Whatever the hook did, rein's own memory stays far below what it was sent.
    assert!(
        run.max_rss_kib < RSS_CEILING_KIB,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
}

/// For a hook that ends by itself at once: the call is not held anywhere near the hook's 30 s
/// timeout (what waiting on a pipe or on a lost child would cost), and nothing is left behind.
fn assert_prompt_and_clean(e: &Env, run: &Run) {
    assert_within(run, GRACE);
    if !e.pgids().is_empty() {
        e.assert_no_leftovers();
    }
}

const TIMED_OUT: &str = "A hook didn't answer in time, so it didn't check this action.";

/// 100 MiB is what a runaway hook writes here; rein must stay far below holding it.
const RSS_LIMIT_KIB: i64 = 100 * 1024;

/// Ceiling for every case, the 10 MB JSON document included (it is parsed once, whole).
const RSS_CEILING_KIB: i64 = 200 * 1024;

#[test]
fn hook_that_hangs_forever_is_cancelled_at_its_timeout() {
    let e = env();
    let hook = e.script("hang.sh", "sleep 60");
    let run = pre_tool(&e, &hook, 1, &[]);
    assert_session_went_on(&e, &run);
    assert!(run.stderr.contains(TIMED_OUT), "{}", run.stderr);
    assert_within(&run, Duration::from_secs(1) + GRACE);
    e.assert_no_leftovers();
}

#[test]
fn hung_hook_with_a_grandchild_holding_the_pipes_is_killed_as_a_group() {
    let e = env();
    let hook = e.script("fork-hang.sh", "sleep 60 &\nsleep 60");
    let run = pre_tool(&e, &hook, 1, &[]);
    assert_session_went_on(&e, &run);
    assert!(run.stderr.contains(TIMED_OUT), "{}", run.stderr);
    assert_within(&run, Duration::from_secs(1) + GRACE);
    e.assert_no_leftovers();
}

#[test]
fn hook_that_exits_leaving_a_grandchild_on_its_pipes_does_not_hold_the_call() {
    let e = env();
    let hook = e.script("leave-child.sh", "sleep 60 &\necho left a child\nexit 0");
    let run = pre_tool(&e, &hook, 60, &[]);
    assert_session_went_on(&e, &run);
    assert!(!run.stderr.contains(TIMED_OUT), "{}", run.stderr);
    // Waiting for the pipes to close would take the whole 60 s timeout.
    assert_within(&run, Duration::from_secs(20));
    e.assert_no_leftovers();
}

#[test]
fn hook_ignoring_sigterm_is_sigkilled() {
    let e = env();
    // SIG_IGN is inherited across exec, so the `sleep`s ignore SIGTERM too.
    let hook = e.script("stubborn.sh", "trap '' TERM\nsleep 60 &\nsleep 60");
    let run = pre_tool(&e, &hook, 1, &[]);
    assert_session_went_on(&e, &run);
    assert!(run.stderr.contains(TIMED_OUT), "{}", run.stderr);
    assert_within(&run, Duration::from_secs(1) + GRACE);
    e.assert_no_leftovers();
}

fn dies_by(signal: &str) {
    let e = env();
    let hook = e.script(&format!("die-{signal}.sh"), &format!("kill -{signal} $$"));
    // `exec` makes the script the direct child, so rein sees the death by signal itself.
    let run = pre_tool(&e, &format!("exec {hook}"), 30, &["--debug", "hooks"]);
    assert_session_went_on(&e, &run);
    assert!(
        run.stderr
            .contains("PreToolUse:Bash hook error: Failed with non-blocking status code"),
        "{}",
        run.stderr
    );
    assert_prompt_and_clean(&e, &run);
    e.assert_no_leftovers();
}

#[test]
fn hook_killed_by_sigkill_is_a_non_blocking_error() {
    dies_by("KILL");
}

#[test]
fn hook_dying_of_sigsegv_is_a_non_blocking_error() {
    dies_by("SEGV");
}

#[test]
fn hundred_mib_on_stdout_is_capped_and_memory_stays_bounded() {
    let e = env();
    let hook = e.script("flood-out.sh", "head -c 104857600 /dev/zero\nexit 0");
    let run = pre_tool(&e, &hook, 60, &[]);
    assert_session_went_on(&e, &run);
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak RSS {} KiB for a 100 MiB flood",
        run.max_rss_kib
    );
    // The transcript records the run, not the flood (NUL bytes escape to six bytes each).
    let bytes = e.transcript_bytes();
    assert!(bytes < 1024 * 1024, "transcript is {bytes} bytes");
    e.assert_no_leftovers();
}

#[test]
fn hundred_mib_on_stderr_with_exit_2_blocks_with_a_bounded_reason() {
    let e = env();
    let hook = e.script("flood-err.sh", "head -c 104857600 /dev/zero >&2\nexit 2");
    let run = pre_tool(&e, &hook, 60, &[]);
    assert_eq!(run.code, Some(0), "{:.2000}", run.stderr);
    assert!(!e.exists(TOOL_RAN), "a blocking hook let the tool run");
    assert!(run.stdout.contains("done"));
    assert!(
        run.max_rss_kib < RSS_LIMIT_KIB,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["is_error"], true);
    let content = results[0]["content"].as_str().unwrap_or_default();
    assert!(content.contains(&format!("[{hook}]: ")), "{content:.300}");
    // The reason carries at most the 1 MiB stderr cap, not 100 MiB.
    assert!(
        content.len() <= 1024 * 1024 + 4096,
        "{} bytes",
        content.len()
    );
    e.assert_no_leftovers();
}

/// A Write call whose `tool_input.content` is 5 MiB, so the hook's stdin is over 5 MiB.
fn big_write() -> Value {
    json!([
        {"tool_use": [{"name": "Write", "input": {
            "file_path": "/PROJECT/big.txt", "content": "x".repeat(5 * 1024 * 1024)
        }}]},
        {"text": "done"}
    ])
}

fn big_write_in(e: &Env) -> Value {
    let text = big_write()
        .to_string()
        .replace("/PROJECT", &e.project.display().to_string());
    serde_json::from_str(&text).unwrap()
}

#[test]
fn hook_that_never_reads_5_mib_of_stdin_but_writes_1_mib_does_not_deadlock() {
    let e = env();
    // Never reads stdin and fills its stdout pipe: rein must drain stdout while it writes.
    let hook = e.script(
        "no-read.sh",
        "head -c 1048576 /dev/zero | tr '\\0' y\nexit 0",
    );
    e.hooks(json!({"PreToolUse": on("Write", &hook, 60)}));
    let run = e.run_mock(big_write_in(&e), &[]);
    assert_eq!(run.code, Some(0), "{:.2000}", run.stderr);
    assert!(!run.stderr.contains(TIMED_OUT), "{:.2000}", run.stderr);
    let written = std::fs::metadata(e.path("big.txt")).map(|m| m.len());
    assert_eq!(written.ok(), Some(5 * 1024 * 1024));
    assert_within(&run, Duration::from_secs(30));
    e.assert_no_leftovers();
}

#[test]
fn hook_reading_stdin_one_byte_a_second_is_cut_off_at_its_timeout() {
    let e = env();
    let hook = e.script(
        "slow-read.sh",
        "while dd bs=1 count=1 of=/dev/null 2>/dev/null; do sleep 1; done",
    );
    e.hooks(json!({"PreToolUse": on("Write", &hook, 2)}));
    let run = e.run_mock(big_write_in(&e), &[]);
    assert_eq!(run.code, Some(0), "{:.2000}", run.stderr);
    assert!(run.stderr.contains(TIMED_OUT), "{:.2000}", run.stderr);
    assert!(e.exists("big.txt"));
    assert_within(&run, Duration::from_secs(2) + GRACE);
    e.assert_no_leftovers();
}

#[test]
fn invalid_utf8_plain_stdout_is_harmless() {
    let e = env();
    let hook = e.script(
        "garbage.sh",
        "printf '\\377\\376\\375 not text \\300\\n'\nexit 0",
    );
    let run = pre_tool(&e, &hook, 30, &[]);
    assert_session_went_on(&e, &run);
    assert!(!run.stderr.contains("hook error"), "{}", run.stderr);
    assert_prompt_and_clean(&e, &run);
}

#[test]
fn json_with_invalid_utf8_is_never_applied() {
    let e = env();
    // Lossy decoding would make this a valid answer whose updatedInput hijacks the call.
    let hook = e.script(
        "bad-utf8-json.sh",
        r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"\377","updatedInput":{"command":"echo hijacked > hijack.flag"}}}'"#,
    );
    let run = pre_tool(&e, &hook, 30, &[]);
    assert_session_went_on(&e, &run);
    assert!(!e.exists("hijack.flag"), "invalid UTF-8 JSON was applied");
    assert!(
        run.stderr.contains("PreToolUse:Bash hook error") && run.stderr.contains("UTF-8"),
        "{}",
        run.stderr
    );
    assert_prompt_and_clean(&e, &run);
}

#[test]
fn ten_mb_json_document_is_applied_and_its_context_spilled_to_a_file() {
    let e = env();
    let hook = e.script(
        "big-json.sh",
        r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"'
head -c 10000000 /dev/zero | tr '\0' a
printf '"}}'"#,
    );
    let run = pre_tool(&e, &hook, 60, &[]);
    assert_session_went_on(&e, &run);
    assert!(
        run.max_rss_kib < 200 * 1024,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
    let lines = e.transcript();
    let context = lines
        .iter()
        .find(|l| l["attachment"]["type"] == "hook_additional_context")
        .map(|l| l["attachment"]["content"].to_string())
        .unwrap_or_default();
    assert!(context.contains("<persisted-output>"), "{context:.500}");
    assert!(
        context.len() < 16 * 1024,
        "context entry is {} bytes",
        context.len()
    );
    let spilled = walk_files(&e.home.join(".rein"))
        .into_iter()
        .find(|p| p.to_string_lossy().contains("additionalContext"))
        .expect("spill file");
    assert_eq!(std::fs::metadata(spilled).unwrap().len(), 10_000_000);
    let bytes = e.transcript_bytes();
    assert!(bytes < 1024 * 1024, "transcript is {bytes} bytes");
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn hundred_thousand_levels_of_nesting_are_a_non_blocking_error_not_a_crash() {
    let e = env();
    let hook = e.script(
        "deep.sh",
        r#"printf '{"a":'
head -c 100000 /dev/zero | tr '\0' '['
head -c 100000 /dev/zero | tr '\0' ']'
printf '}'"#,
    );
    let run = pre_tool(&e, &hook, 30, &[]);
    assert_session_went_on(&e, &run);
    assert!(
        run.stderr.contains("PreToolUse:Bash hook error"),
        "{}",
        run.stderr
    );
    assert_prompt_and_clean(&e, &run);
}

#[test]
fn hook_closing_stdout_then_running_on_is_cancelled_at_its_timeout() {
    for (name, body) in [
        ("close-out.sh", "exec >&-\nsleep 60"),
        ("close-both.sh", "exec >&- 2>&-\nsleep 60"),
    ] {
        let e = env();
        let hook = e.script(name, body);
        let run = pre_tool(&e, &hook, 1, &[]);
        assert_session_went_on(&e, &run);
        assert!(run.stderr.contains(TIMED_OUT), "{name}: {}", run.stderr);
        assert_within(&run, Duration::from_secs(1) + GRACE);
        e.assert_no_leftovers();
    }
}

/// A hook that cannot run is a non-blocking error naming the script and why.
fn cannot_run(e: &Env, command: &str, why: &str) {
    let run = pre_tool(e, command, 30, &[]);
    assert_session_went_on(e, &run);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("PreToolUse:Bash hook error"))
        .unwrap_or_else(|| panic!("no error shown: {}", run.stderr));
    assert!(line.contains(command) && line.contains(why), "{line}");
    assert_prompt_and_clean(e, &run);
}

#[test]
fn missing_script_is_reported_as_not_found() {
    let e = env();
    let path = e.path("hooks/missing.sh").display().to_string();
    cannot_run(&e, &path, "not found");
}

#[test]
fn script_without_execute_permission_is_reported() {
    let e = env();
    let path = e.path("hooks/plain.sh");
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    cannot_run(&e, &path.display().to_string(), "Permission denied");
}

#[test]
fn directory_as_a_hook_is_reported() {
    let e = env();
    let dir = e.path("hooks/adir");
    std::fs::create_dir_all(&dir).unwrap();
    cannot_run(&e, &dir.display().to_string(), "Permission denied");
}

#[test]
fn crlf_shebang_is_reported_with_a_hint() {
    let e = env();
    let path = e.raw_script("crlf.sh", b"#!/bin/sh\r\necho hi\r\nexit 0\r\n");
    cannot_run(&e, &path, "not found");
    let run = pre_tool(&e, &path, 30, &[]);
    assert!(run.stderr.contains("CRLF"), "{}", run.stderr);
}

#[test]
fn sixty_four_hooks_on_one_event_all_run_once_and_concurrently() {
    let e = env();
    let log = e.path("ran.log").display().to_string();
    let handlers: Vec<Value> = (0..64)
        .map(|i| {
            let hook = e.script(
                &format!("h{i}.sh"),
                &format!("echo {i} >> '{log}'\nsleep 1"),
            );
            handler(&hook, 30)
        })
        .collect();
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}));
    let run = e.run_mock(tool_then_done(), &[]);
    assert_session_went_on(&e, &run);
    let mut ran: Vec<u32> = e
        .read("ran.log")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    ran.sort_unstable();
    assert_eq!(ran, (0..64).collect::<Vec<u32>>());
    // One after another they would take 64 s.
    assert_within(&run, Duration::from_secs(16));
    assert_eq!(e.pgids().len(), 64);
    e.assert_no_leftovers();
}

#[test]
fn the_same_hook_in_three_settings_files_runs_once() {
    let e = env();
    let log = e.path("ran.log").display().to_string();
    let hook = e.script("once.sh", &format!("echo ran >> '{log}'"));
    let settings = json!({"hooks": {"PreToolUse": on("Bash", &hook, 30)}});
    e.write_json(".claude/settings.json", &settings);
    e.write_json(".claude/settings.local.json", &settings);
    std::fs::write(
        e.home.join(".claude/settings.json"),
        serde_json::to_string(&settings).unwrap(),
    )
    .unwrap();
    let run = e.run_mock(tool_then_done(), &[]);
    assert_session_went_on(&e, &run);
    assert_eq!(
        e.read("ran.log").lines().count(),
        1,
        "{}",
        e.read("ran.log")
    );
    assert_prompt_and_clean(&e, &run);
}

#[test]
fn a_hook_fault_on_one_call_leaves_the_next_call_checked() {
    // The hung hook times out on the first call only; the second call is still checked by
    // the same configuration (a blocking hook), so nothing is left in a broken state.
    let e = env();
    let pgid = record_pgid(&e);
    let hook = e.script(
        "first-hangs.sh",
        &format!(
            "{pgid}\nif [ ! -f '{flag}' ]; then touch '{flag}'; sleep 60; fi\n\
             echo 'second call blocked' >&2\nexit 2",
            flag = e.path("first.flag").display()
        ),
    );
    e.hooks(json!({"PreToolUse": on("Bash", &hook, 1)}));
    let run = e.run_mock(
        json!([
            super::bash("echo one > one.flag"),
            super::bash("echo two > two.flag"),
            super::say("done")
        ]),
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        e.exists("one.flag"),
        "timed-out hook should let the call proceed"
    );
    assert!(!e.exists("two.flag"), "the second call was not checked");
    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 2);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("second call blocked")
    );
    e.assert_no_leftovers();
}

/// An exec-form hook (`command` + `args`, no shell) leads a session and a group of its own, as
/// Claude Code 2.1.328 starts it (fixture `tests/fixtures/cc-2.1.328/exec_form`: pid = pgid =
/// sid); before, rein left it in rein's session.
#[test]
fn an_exec_form_hook_leads_its_own_session() {
    let e = env();
    let ids = e.path("ids.txt");
    e.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command",
        "command": "/bin/sh",
        "args": ["-c", format!("cat >/dev/null; echo $$ $(ps -o sid= -p $$) $(ps -o pgid= -p $$) > '{}'", ids.display())],
    }]}]}));
    let run = e.run_mock(tool_then_done(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = std::fs::read_to_string(&ids).unwrap();
    let ids: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(ids.len(), 3, "{text}");
    assert_eq!(ids[0], ids[1], "session: {text}");
    assert_eq!(ids[0], ids[2], "group: {text}");
}
