//! Session integrity under SIGINT / SIGTERM (spec §5.3 SessionEnd budget): rein killed in the
//! middle of a tool call or of a hook still runs its SessionEnd hooks within their budget, kills
//! every process group it started, answers the interrupted `tool_use` in the transcript, and
//! leaves a transcript whose every line — the last one included — is complete JSON.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Env, GRACE, Run, bash, env, handler, on, record_pgid, run_with, say, tool_results,
    transcript_call_ids,
};

/// What the model sees for a call cut short by the signal (Claude Code's wording).
const INTERRUPTED: &str = "[Request interrupted by user for tool use]";

/// A Bash command that records its process group, leaves a background grandchild in it, marks
/// that it started, and would run for 30 s.
fn long_tool(e: &Env) -> String {
    format!(
        "{}; sleep 30 & touch started.flag; sleep 30",
        record_pgid(e)
    )
}

/// Runs `rein -p go` on `turns`, sends `signal` once `<project>/started.flag` exists, and
/// returns the run plus the instant the signal was sent.
fn interrupt(e: &Env, turns: Value, signal: i32) -> (Run, Instant) {
    let (run, sent) = signals(e, turns, &[("started.flag", signal)]);
    (run, sent[0])
}

/// Runs `rein -p go` on `turns`; for each step in order, waits (≤ 30 s) until the file exists
/// under the project, then sends the signal. Returns the run and when each signal was sent.
fn signals(e: &Env, turns: Value, steps: &[(&str, i32)]) -> (Run, Vec<Instant>) {
    let script = e.mock(turns);
    let mut c = e.cmd();
    c.args(["-p", "go", "--allowedTools", "Bash", "--mock-script"])
        .arg(&script);
    let steps: Vec<(std::path::PathBuf, i32)> =
        steps.iter().map(|(f, s)| (e.path(f), *s)).collect();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let sent_by_thread = Arc::clone(&sent);
    let run = run_with(c, move |pid| {
        for (flag, signal) in &steps {
            let waiting = Instant::now();
            while !flag.exists() {
                assert!(
                    waiting.elapsed() < Duration::from_secs(30),
                    "{} never appeared",
                    flag.display()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            sent_by_thread.lock().unwrap().push(Instant::now());
            // SAFETY: kill(2) on the pid of the rein child this test spawned.
            unsafe {
                libc::kill(pid as i32, *signal);
            }
        }
    });
    let sent = sent.lock().unwrap().clone();
    (run, sent)
}

/// SessionEnd hook that records its group and copies its stdin to `end.json`.
fn session_end_marker(e: &Env) -> String {
    e.script(
        "end.sh",
        &format!("cat > '{}'", e.path("end.json").display()),
    )
}

/// Asserts the transcript is complete JSON to its last line and that every `tool_use` has a
/// result; returns the tool results.
fn assert_transcript_whole(e: &Env) -> Vec<Value> {
    let lines = e.transcript();
    let uses = transcript_call_ids(&lines);
    let results = tool_results(&lines);
    for id in &uses {
        assert!(
            results.iter().any(|r| r["tool_use_id"] == id.as_str()),
            "tool_use {id} has no result in the transcript: {results:?}"
        );
    }
    results
}

fn signal_mid_tool_call(signal: i32, code: i32) {
    let e = env();
    let end = session_end_marker(&e);
    e.hooks(json!({"SessionEnd": on("", &end, 5)}));
    let (run, sent) = interrupt(&e, json!([bash(&long_tool(&e)), say("never")]), signal);

    assert_eq!(run.code, Some(code), "stderr: {}", run.stderr);
    // Far below the 30 s the tool would take: cancelling is immediate, SessionEnd is quick.
    assert!(
        sent.elapsed() < GRACE,
        "exit took {:?} after the signal",
        sent.elapsed()
    );
    let ended: Value = serde_json::from_str(&e.read("end.json")).expect("SessionEnd ran");
    assert_eq!(ended["hook_event_name"], "SessionEnd");
    assert_eq!(ended["reason"], "other");

    let results = assert_transcript_whole(&e);
    let last = results.last().expect("a result for the interrupted call");
    assert_eq!(last["content"], INTERRUPTED);
    assert_eq!(last["is_error"], true);
    assert!(
        !run.stdout.contains("never"),
        "the loop went on: {}",
        run.stdout
    );
    // Both the tool's group (with its background grandchild) and the hook's group are gone.
    assert_eq!(e.pgids().len(), 2, "{:?}", e.read("pgids.txt"));
    e.assert_no_leftovers();
}

#[test]
fn sigint_mid_tool_call_runs_session_end_answers_the_call_and_leaves_no_process() {
    signal_mid_tool_call(libc::SIGINT, 130);
}

#[test]
fn sigterm_mid_tool_call_runs_session_end_answers_the_call_and_leaves_no_process() {
    signal_mid_tool_call(libc::SIGTERM, 143);
}

#[test]
fn signal_while_a_pre_tool_use_hook_hangs_kills_the_hook_and_the_tool_never_runs() {
    let e = env();
    let end = session_end_marker(&e);
    let pre = e.script("pre-hang.sh", "touch started.flag\nsleep 30 &\nsleep 30");
    e.hooks(json!({
        "PreToolUse": on("Bash", &pre, 60),
        "SessionEnd": on("", &end, 5),
    }));
    let (run, sent) = interrupt(
        &e,
        json!([bash("echo ran > tool-ran.flag"), say("never")]),
        libc::SIGINT,
    );
    assert_eq!(run.code, Some(130), "stderr: {}", run.stderr);
    assert!(sent.elapsed() < GRACE, "exit took {:?}", sent.elapsed());
    assert!(!e.exists("tool-ran.flag"), "the call ran after the signal");
    assert!(e.exists("end.json"), "SessionEnd did not run");
    let results = assert_transcript_whole(&e);
    assert_eq!(results.last().unwrap()["content"], INTERRUPTED);
    e.assert_no_leftovers();
}

#[test]
fn a_hanging_session_end_hook_is_cancelled_at_the_budget_and_the_others_still_run() {
    let e = env();
    let end = session_end_marker(&e);
    let slow = e.script("end-hang.sh", "sleep 30 &\nsleep 30");
    // Budget = the largest SessionEnd timeout (2 s) since it exceeds the 1.5 s default.
    e.hooks(json!({
        "SessionEnd": [{"hooks": [handler(&end, 2), handler(&slow, 2)]}],
    }));
    let (run, sent) = interrupt(
        &e,
        json!([bash(&long_tool(&e)), say("never")]),
        libc::SIGTERM,
    );
    assert_eq!(run.code, Some(143), "stderr: {}", run.stderr);
    let took = sent.elapsed();
    assert!(
        took < Duration::from_secs(2) + GRACE,
        "exit took {took:?}, budget 2 s"
    );
    assert!(
        e.exists("end.json"),
        "the quick SessionEnd hook did not run"
    );
    assert!(
        run.stderr
            .contains("SessionEnd hooks did not finish within 2000 ms and were cancelled"),
        "the cancelled SessionEnd hook was not reported: {}",
        run.stderr
    );
    assert_transcript_whole(&e);
    // Tool group, quick hook, slow hook (with its grandchild): all gone.
    assert_eq!(e.pgids().len(), 3, "{:?}", e.read("pgids.txt"));
    e.assert_no_leftovers();
}

/// SessionEnd hooks with a 60 s timeout (so a 60 s budget): the quick marker, and one that
/// waits until the marker has started (`end.json` exists), marks `end-started.flag`, leaves a
/// grandchild and would run for 30 s.
fn hanging_session_end(e: &Env) -> Value {
    let end = session_end_marker(e);
    let slow = e.script(
        "end-hang.sh",
        &format!(
            "while [ ! -e '{}' ]; do sleep 0.01; done\ntouch end-started.flag\nsleep 30 &\nsleep 30",
            e.path("end.json").display()
        ),
    );
    json!({"SessionEnd": [{"hooks": [handler(&end, 60), handler(&slow, 60)]}]})
}

/// rein exited within [`GRACE`] of the signal sent at `sent` (the budget is 60 s) and said on
/// stderr that the SessionEnd hooks `were cancelled by <by>`.
fn assert_cut_short(run: &Run, sent: Instant, by: &str) {
    assert!(
        sent.elapsed() < GRACE,
        "exit took {:?} after the signal (budget 60 s)",
        sent.elapsed()
    );
    let notice = format!("SessionEnd hooks were cancelled by {by}");
    assert!(
        run.stderr.lines().any(|l| l.ends_with(&notice)),
        "no `{notice}` in stderr: {}",
        run.stderr
    );
}

/// Ctrl-C twice: the first interrupts the tool call and starts SessionEnd, the second cancels
/// the SessionEnd hooks at once instead of waiting out their 60 s budget.
#[test]
fn a_second_sigint_cancels_hanging_session_end_hooks_at_once() {
    let e = env();
    e.hooks(hanging_session_end(&e));
    let (run, sent) = signals(
        &e,
        json!([bash(&long_tool(&e)), say("never")]),
        &[
            ("started.flag", libc::SIGINT),
            ("end-started.flag", libc::SIGINT),
        ],
    );
    assert_eq!(sent.len(), 2);
    assert_eq!(run.code, Some(130), "stderr: {}", run.stderr);
    assert_cut_short(&run, sent[1], "a second SIGINT");
    assert!(
        e.exists("end.json"),
        "the quick SessionEnd hook did not run"
    );
    let results = assert_transcript_whole(&e);
    assert_eq!(results.last().unwrap()["content"], INTERRUPTED);
    // Tool group, quick hook, slow hook (with its grandchild): all gone.
    assert_eq!(e.pgids().len(), 3, "{:?}", e.read("pgids.txt"));
    e.assert_no_leftovers();
}

/// A signal that arrives while SessionEnd runs after a finished turn cancels the hooks, keeps
/// the answer on stdout, and exits with the signal's code.
#[test]
fn a_signal_during_session_end_after_the_answer_cancels_it_and_keeps_the_answer() {
    let e = env();
    e.hooks(hanging_session_end(&e));
    let (run, sent) = signals(
        &e,
        json!([say("the answer")]),
        &[("end-started.flag", libc::SIGTERM)],
    );
    assert_eq!(run.code, Some(143), "stderr: {}", run.stderr);
    assert_cut_short(&run, sent[0], "SIGTERM");
    assert_eq!(run.stdout, "the answer\n");
    assert_transcript_whole(&e);
    assert_eq!(e.pgids().len(), 2, "{:?}", e.read("pgids.txt"));
    e.assert_no_leftovers();
}
