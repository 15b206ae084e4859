//! Background Bash commands (`run_in_background`) never outlive rein: a signal stops their
//! process groups, a `-p` session waits for them (up to Claude Code's ceiling) and then stops
//! what is left, TaskStop stops one, and a SIGKILLed rein is followed by its watchdog.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Env, assert_group_gone, env, live_members, record_pgid, run_with, say};

/// A `run_in_background` Bash call.
fn background(command: &str) -> Value {
    json!({"tool_use": [{"name": "Bash", "input": {
        "command": command, "run_in_background": true, "description": "long job"}}]})
}

/// A background command that records its group, ignores SIGTERM, marks that it started and
/// runs for 60 s.
fn stubborn(e: &Env) -> String {
    format!(
        "{}; trap '' TERM; touch started.flag; sleep 60",
        record_pgid(e)
    )
}

/// Runs `rein -p go` on `turns` with `extra` environment, sending `signal` to rein once
/// `started.flag` exists; returns the run and the time from the signal to rein's exit.
fn signalled(e: &Env, turns: Value, signal: i32) -> (super::Run, Duration) {
    let mut c = e.mock_cmd(turns, &[]);
    let flag = e.path("started.flag");
    let sent = std::sync::Arc::new(std::sync::Mutex::new(None));
    let sent_by_thread = std::sync::Arc::clone(&sent);
    c.env("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", "0");
    let run = run_with(c, move |pid| {
        let waiting = Instant::now();
        while !flag.exists() {
            assert!(waiting.elapsed() < Duration::from_secs(30), "never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Let rein reach the end-of-session wait.
        std::thread::sleep(Duration::from_millis(300));
        *sent_by_thread.lock().unwrap() = Some(Instant::now());
        // SAFETY: kill(2) on the pid of the rein child this test spawned.
        unsafe {
            libc::kill(pid as i32, signal);
        }
    });
    let took = sent.lock().unwrap().expect("signal sent").elapsed();
    (run, took)
}

#[test]
fn sigterm_to_rein_kills_background_commands_that_ignore_sigterm() {
    let e = env();
    let (run, took) = signalled(
        &e,
        json!([background(&stubborn(&e)), say("started it")]),
        libc::SIGTERM,
    );
    eprintln!("SIGTERM → exit in {took:?}");
    assert_eq!(run.code, Some(143), "stderr: {}", run.stderr);
    // The hooks' grace (0.5 s) plus SessionEnd, far below the 60 s the command would run.
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(e.pgids().len(), 1);
    // Checked through /proc right away: rein killed the group before exiting.
    for pgid in e.pgids() {
        assert_eq!(live_members(pgid), Vec::new(), "group {pgid} outlived rein");
    }
}

#[test]
fn sigint_to_rein_kills_background_commands() {
    let e = env();
    let (run, _) = signalled(
        &e,
        json!([background(&stubborn(&e)), say("started it")]),
        libc::SIGINT,
    );
    assert_eq!(run.code, Some(130), "stderr: {}", run.stderr);
    e.assert_no_leftovers();
}

#[test]
fn print_mode_waits_for_a_background_command_before_ending() {
    let e = env();
    let command = format!("{}; sleep 2; echo finished > bg-done.txt", record_pgid(&e));
    let run = e.run_mock(
        json!([background(&command), say("answer"), say("it finished")]),
        &[],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    // The follow-up turn's answer is the session's result, as in Claude Code.
    assert_eq!(run.stdout, "it finished\n");
    assert_eq!(
        e.read("bg-done.txt"),
        "finished\n",
        "rein did not wait for it"
    );
    assert!(run.elapsed >= Duration::from_secs(2), "{:?}", run.elapsed);
    // Not a terminal: Claude Code prints no waiting notice then.
    assert!(
        !run.stderr.contains("Waiting for background work"),
        "{}",
        run.stderr
    );
    e.assert_no_leftovers();
}

#[test]
fn print_mode_stops_background_commands_at_the_wait_ceiling_with_claude_codes_notice() {
    let e = env();
    let mut c = e.mock_cmd(json!([background(&stubborn(&e)), say("answer")]), &[]);
    c.env("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", "1500");
    let run = super::run(c);
    eprintln!("ceiling 1.5 s: rein took {:?}", run.elapsed);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "answer\n");
    assert!(
        run.stderr.contains(
            "Background tasks still running 1.5s after the last turn (shell \"long job\"); \
             stopping them. Set CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=0 to wait indefinitely."
        ),
        "stderr: {}",
        run.stderr
    );
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
    for pgid in e.pgids() {
        assert_eq!(live_members(pgid), Vec::new(), "group {pgid} outlived rein");
    }
}

#[test]
fn task_stop_answers_an_unknown_id_with_claude_codes_text() {
    let e = env();
    // The model learns a task's id (`bash_<rein pid>_<n>`) from the Bash result, which a mock
    // script cannot read; stopping a real one is tested on the library (tests/it/tools/bash.rs).
    let run = e.run_mock(
        json!([
            {"tool_use": [{"name": "TaskStop", "input": {"task_id": "nope"}}]},
            say("done")
        ]),
        &["--allowedTools", "TaskStop"],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let lines = e.transcript();
    let results = super::tool_results(&lines);
    assert_eq!(
        results[0]["content"],
        "<tool_use_error>No task found with ID: nope</tool_use_error>"
    );
    assert_eq!(results[0]["is_error"], true);
}

#[test]
fn a_sigkilled_rein_is_followed_by_its_background_commands() {
    let e = env();
    let mut c = e.mock_cmd(json!([background(&stubborn(&e)), say("answer")]), &[]);
    c.env("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", "0");
    let flag = e.path("started.flag");
    let run = run_with(c, move |pid| {
        while !flag.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill(2) on the pid of the rein child this test spawned.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    });
    assert_eq!(run.code, None);
    let pgid = e.pgids()[0];
    let killed = Instant::now();
    // The watchdog: SIGTERM at once, SIGKILL 2 s later (the command ignores SIGTERM).
    while !live_members(pgid).is_empty() && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "group gone {:?} after rein's SIGKILL was reaped",
        killed.elapsed()
    );
    assert_group_gone(pgid);
}

/// A background command that has finished leaves only its watchdog in the group; when rein
/// exits, the watchdog sends its SIGTERM, finds the group otherwise empty and exits at once
/// (it used to sleep its 2 s grace first, a rein process outliving rein).
#[test]
fn the_watchdog_of_a_finished_command_exits_with_rein() {
    let e = env();
    let command = format!("{}; touch started.flag", record_pgid(&e));
    let run = e.run_mock(json!([background(&command), say("answer")]), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let pgid = e.pgids()[0];
    let exited = Instant::now();
    while !live_members(pgid).is_empty() && exited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = exited.elapsed();
    eprintln!("group gone {took:?} after rein exited");
    assert_group_gone(pgid);
    // The old watchdog slept 2 s whatever the group held; the new one looks every 0.1 s.
    assert!(took < Duration::from_millis(1500), "{took:?}");
}

#[test]
fn bash_timeout_takes_fractional_milliseconds() {
    let e = env();
    let run = e.run_mock(
        json!([
            {"tool_use": [{"name": "Bash", "input": {"command": "sleep 5", "timeout": 1500.5}}]},
            say("done")
        ]),
        &[],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let lines = e.transcript();
    let results = super::tool_results(&lines);
    assert_eq!(results[0]["content"], "Command timed out after 1500.5ms");
    assert!(run.elapsed < Duration::from_secs(5), "{:?}", run.elapsed);
}

/// The `prompt`s of UserPromptSubmit and the `background_tasks` of Stop, in firing order, from
/// the hook log `events.jsonl`, with the volatile parts of a `<task-notification>` (task id,
/// tool-use id, output file) replaced by placeholders.
fn logged_events(e: &Env) -> Vec<Value> {
    let text = e.read("events.jsonl");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        out.push(event_digest(&v));
    }
    out
}

fn event_digest(v: &Value) -> Value {
    let volatile = regex::Regex::new(
        r"<task-id>.*?</task-id>|<tool-use-id>.*?</tool-use-id>|<output-file>.*?</output-file>",
    )
    .unwrap();
    let placeholder = |m: &regex::Captures| {
        let tag = &m[0][1..m[0].find('>').unwrap()];
        format!("<{tag}>*</{tag}>")
    };
    match v["hook_event_name"].as_str().unwrap() {
        "UserPromptSubmit" => {
            let prompt = v["prompt"].as_str().unwrap();
            json!({"event": "UserPromptSubmit",
                   "prompt": volatile.replace_all(prompt, placeholder).into_owned()})
        }
        "Stop" => {
            let tasks: Vec<Value> = v["background_tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    t["id"] = json!("*");
                    t
                })
                .collect();
            json!({"event": "Stop", "background_tasks": tasks,
                   "last_assistant_message": v["last_assistant_message"]})
        }
        other => json!({"event": other}),
    }
}

#[test]
fn print_mode_gives_each_ended_background_command_a_turn_as_claude_code_does() {
    let e = env();
    let log = e.script(
        "log.sh",
        "cat >> \"$CLAUDE_PROJECT_DIR/events.jsonl\"\necho >> \"$CLAUDE_PROJECT_DIR/events.jsonl\"",
    );
    let hook = json!([{"hooks": [{"type": "command", "command": log}]}]);
    e.hooks(json!({"UserPromptSubmit": hook, "Stop": hook}));
    // The turns of tests/fixtures/cc-2.1.328/background/scenario.json.
    let run = e.run_mock(
        json!([
            {"tool_use": [
                {"name": "Bash", "input": {"command": "sleep 1; echo one",
                    "run_in_background": true, "description": "first job"}},
                {"name": "Bash", "input": {"command": "sleep 2; echo two; exit 3",
                    "run_in_background": true}}
            ]},
            say("started them"),
            say("after first"),
            say("after second"),
        ]),
        &[],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "after second\n");

    let fixture: Value = serde_json::from_str(include_str!(
        "../../fixtures/cc-2.1.328/background/summary.json"
    ))
    .unwrap();
    let expected: Vec<Value> = fixture["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["event"] != "SessionEnd")
        .map(|h| event_digest(&h["stdin"]))
        .collect();
    assert_eq!(expected.len(), 6, "fixture: {expected:#?}");
    // The fixture's own prompt was "start background jobs"; this run's is "go".
    let mut expected = expected;
    expected[0]["prompt"] = json!("go");
    assert_eq!(logged_events(&e), expected);

    // The tool-use ids name the calls that started them.
    let lines = e.transcript();
    let ids = super::transcript_call_ids(&lines);
    let text = e.read("events.jsonl");
    assert!(
        text.contains(&format!("<tool-use-id>{}</tool-use-id>", ids[0])),
        "{text}"
    );
    assert!(
        text.contains(&format!("<tool-use-id>{}</tool-use-id>", ids[1])),
        "{text}"
    );
    e.assert_no_leftovers();
}

#[test]
fn a_background_command_that_ends_during_a_turn_is_told_at_the_next_request() {
    let e = env();
    let log = e.script(
        "log.sh",
        "cat >> \"$CLAUDE_PROJECT_DIR/events.jsonl\"\necho >> \"$CLAUDE_PROJECT_DIR/events.jsonl\"",
    );
    e.hooks(json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": log}]}]}));
    let run = e.run_mock(
        json!([
            {"tool_use": [{"name": "Bash", "input": {"command": "echo quick",
                "run_in_background": true, "description": "quick job"}}]},
            {"tool_use": [{"name": "Bash", "input": {"command": "sleep 1"}}]},
            say("done"),
        ]),
        &[],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    // It ended while the second call ran: told in that turn, so no follow-up turn.
    assert_eq!(run.stdout, "done\n");
    let prompts: Vec<Value> = logged_events(&e);
    assert_eq!(
        prompts,
        vec![json!({"event": "UserPromptSubmit", "prompt": "go"})]
    );
}

#[test]
fn task_stop_is_found_by_its_former_names() {
    let e = env();
    let run = e.run_mock(
        json!([
            {"tool_use": [{"name": "KillShell", "input": {"shell_id": "nope"}}]},
            {"tool_use": [{"name": "KillBash", "input": {"shell_id": "nope"}}]},
            say("done")
        ]),
        &["--allowedTools", "TaskStop"],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let lines = e.transcript();
    let results = super::tool_results(&lines);
    // Claude Code's answer (tests/fixtures/cc-2.1.328/background/killshell-summary.json).
    let text = "<tool_use_error>No task found with ID: nope</tool_use_error>";
    assert_eq!(results[0]["content"], text);
    assert_eq!(results[1]["content"], text);
}
