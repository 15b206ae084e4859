//! Bash: persistent cwd, env files, settings env, timeout and process-group kill, output cap,
//! exit codes.

use std::time::{Duration, Instant};

use crate::tools::bash::{BashTool, MAX_OUTPUT_CHARS};
use crate::tools::{Tool, ToolOutcome};
use serde_json::json;

use super::{call, failure, project, success};
use crate::tests::harness::write;

#[tokio::test]
async fn cd_persists_between_calls() {
    let (_dir, root, ctx) = project();
    std::fs::create_dir(root.join("sub")).expect("mkdir");
    let (_, out) = success(&BashTool, json!({"command": "cd sub"}), &ctx).await;
    assert_eq!(out, crate::tools::bash::NO_OUTPUT_TEXT);
    assert_eq!(ctx.current_dir(), root.join("sub"));
    let (resp, out) = success(&BashTool, json!({"command": "pwd"}), &ctx).await;
    assert_eq!(out, root.join("sub").to_string_lossy());
    assert_eq!(resp["stdout"], out);
    // A failing command that changed directory still moves the session.
    let err = failure(&BashTool, json!({"command": "cd .. && exit 3"}), &ctx).await;
    assert_eq!(err, "Exit code 3");
    assert_eq!(ctx.current_dir(), root);
}

#[tokio::test]
async fn env_files_are_sourced_and_settings_env_applied() {
    let (_dir, root, mut ctx) = project();
    ctx.env.push(("FROM_SETTINGS".into(), "s-value".into()));
    let env_file = root.join("sessionstart-hook-0.sh");
    write(
        &env_file,
        "export FROM_HOOK=bar\necho noise-from-env-file\n",
    );
    let second = root.join("it's-hook-1.sh");
    write(&second, "export SECOND=two\n");
    ctx.env_files
        .lock()
        .expect("lock")
        .extend([env_file, second]);
    let (_, out) = success(
        &BashTool,
        json!({"command": "echo \"$FROM_HOOK $SECOND $FROM_SETTINGS\""}),
        &ctx,
    )
    .await;
    assert_eq!(out, "bar two s-value");
}

#[tokio::test]
async fn stderr_is_folded_into_stdout_in_write_order() {
    let (_dir, _root, ctx) = project();
    let (resp, _) = success(
        &BashTool,
        json!({"command": "echo a; echo b >&2; echo c"}),
        &ctx,
    )
    .await;
    assert_eq!(resp["stdout"], "a\nb\nc");
    assert_eq!(resp["stderr"], "");
}

#[tokio::test]
async fn non_zero_exit_is_a_failure_with_code_and_output() {
    let (_dir, _root, ctx) = project();
    let err = failure(
        &BashTool,
        json!({"command": "printf 'x\\n\\n'; exit 7"}),
        &ctx,
    )
    .await;
    assert_eq!(err, "Exit code 7\nx");
    let err = failure(&BashTool, json!({"command": "kill -9 $$"}), &ctx).await;
    assert_eq!(err, "Exit code 137");
}

#[tokio::test]
async fn stdin_is_dev_null() {
    let (_dir, _root, ctx) = project();
    let (_, out) = success(&BashTool, json!({"command": "cat; echo done"}), &ctx).await;
    assert_eq!(out, "done");
}

fn alive(pid: i32) -> bool {
    // A zombie counts as gone: it no longer runs.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let (_dir, root, ctx) = project();
    let pid_file = root.join("grandchild.pid");
    let command = format!(
        "echo started; (trap '' TERM; sleep 60) & echo $! > {}; sleep 60",
        pid_file.display()
    );
    let err = failure(&BashTool, json!({"command": command, "timeout": 300}), &ctx).await;
    assert_eq!(err, "Command timed out after 300ms\nstarted");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    // SIGKILL went to the group before execute returned; allow the kernel to finish reaping.
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "grandchild {pid} survived the timeout");
}

#[tokio::test]
async fn a_cancelled_call_kills_its_process_group() {
    let (_dir, root, ctx) = project();
    let pid_file = root.join("child.pid");
    let command = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
    let prepared = BashTool
        .prepare(json!({"command": command}), &ctx)
        .expect("prepare");
    let run = BashTool.execute(prepared, &ctx);
    // Cancel the call (drop its future) once the child has started.
    let watch = async {
        while !pid_file.exists()
            || std::fs::read_to_string(&pid_file)
                .unwrap_or_default()
                .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        _ = run => panic!("the command finished"),
        () = watch => {}
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "child {pid} survived the cancelled call");
}

#[tokio::test]
async fn backgrounded_grandchild_does_not_hold_the_call() {
    let (_dir, _root, ctx) = project();
    let started = Instant::now();
    let (_, out) = success(&BashTool, json!({"command": "sleep 30 & echo quick"}), &ctx).await;
    assert_eq!(out, "quick");
    // Ratio, not an absolute: far below the 30 s the grandchild holds the pipe.
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn long_output_is_saved_to_a_file_with_a_preview() {
    let (_dir, root, mut ctx) = project();
    ctx.output_dir = Some(root.join("tool-results"));
    // 5000 lines of 9 chars + newline = 50000 chars, over the 30000 inline.
    let (resp, out) = success(
        &BashTool,
        json!({"command": "for i in $(seq 1 5000); do echo 123456789; done"}),
        &ctx,
    )
    .await;
    let path = resp["persistedOutputPath"]
        .as_str()
        .expect("path")
        .to_string();
    assert!(path.starts_with(&root.join("tool-results").display().to_string()));
    assert_eq!(resp["persistedOutputSize"], 50000);
    // Claude Code's name for it: 9 characters of [a-z0-9], `.txt`.
    let name = std::path::Path::new(&path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.len() == 13
            && name.ends_with(".txt")
            && name[..9]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        "{name}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("saved").len(), 50000);
    let preview = "123456789\n".repeat(200);
    assert_eq!(
        out,
        format!(
            "<persisted-output>\nOutput too large (48.8KB). Full output saved to: {path}\n\n\
             Preview (first 2KB):\n{}\n...\n</persisted-output>",
            preview.trim_end()
        )
    );
    assert!(out.chars().count() < MAX_OUTPUT_CHARS);
}

#[tokio::test]
async fn long_output_of_a_failed_command_is_truncated_with_a_note() {
    let (_dir, _root, ctx) = project();
    let err = failure(
        &BashTool,
        json!({"command": "for i in $(seq 1 5000); do echo 123456789; done; exit 1"}),
        &ctx,
    )
    .await;
    let (head, note) = err.split_once("\n\n... [").expect("truncation note");
    assert_eq!(
        head.chars().count(),
        MAX_OUTPUT_CHARS + "Exit code 1\n".len()
    );
    assert_eq!(note, "2000 lines truncated] ...");
}

#[tokio::test]
async fn huge_output_does_not_block_the_child() {
    let (_dir, _root, ctx) = project();
    let err = failure(
        &BashTool,
        json!({"command": "head -c 5000000 /dev/zero | tr '\\0' 'a'; echo; exit 4"}),
        &ctx,
    )
    .await;
    assert!(err.starts_with("Exit code 4\naaaa"), "{}", &err[..40]);
    assert!(err.ends_with("lines truncated] ..."));
}

#[tokio::test]
async fn prepare_validates_and_orders_keys() {
    let (_dir, _root, ctx) = project();
    let prepared = BashTool
        .prepare(
            json!({"run_in_background": "false", "description": "d", "dangerouslyDisableSandbox": true, "timeout": 5000, "command": "true"}),
            &ctx,
        )
        .expect("prepare");
    assert_eq!(
        serde_json::to_string(&prepared).expect("json"),
        r#"{"command":"true","timeout":5000,"description":"d","run_in_background":false}"#
    );
    // Claude Code's schemas are strict: a parameter the tool does not take is refused.
    assert_eq!(
        BashTool
            .prepare(json!({"command": "true", "extra": true}), &ctx)
            .expect_err("unexpected"),
        "InputValidationError: Bash failed due to the following issue:\nAn unexpected parameter `extra` was provided"
    );
    let err = BashTool
        .prepare(json!({"description": "x"}), &ctx)
        .expect_err("missing");
    assert_eq!(
        err,
        "InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing"
    );
    let err = BashTool
        .prepare(json!({"command": 3}), &ctx)
        .expect_err("type");
    assert!(
        err.ends_with(
            "The parameter `command` type is expected as `string` but provided as `number`"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn run_in_background_returns_at_once_with_a_log() {
    let (_dir, _root, ctx) = project();
    let outcome = call(
        &BashTool,
        json!({"command": "echo bg-out; sleep 1", "run_in_background": true}),
        &ctx,
    )
    .await
    .expect("prepare");
    let ToolOutcome::Success { response, content } = outcome else {
        panic!("background failed");
    };
    let id = response["backgroundTaskId"]
        .as_str()
        .expect("id")
        .to_string();
    assert!(content.starts_with(&format!("Command running in background with ID: {id}")));
    let log = content
        .split("Output is being written to: ")
        .nth(1)
        .and_then(|rest| rest.split(". rein tells you").next())
        .expect("log path")
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&log).unwrap_or_default() != "bg-out\n"
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(std::fs::read_to_string(&log).expect("log"), "bg-out\n");
    let _ = std::fs::remove_file(log);
}

#[test]
fn render_uses_a_replaced_stdout() {
    let tool = BashTool;
    let replaced = json!({"stdout": "from hook", "stderr": "", "interrupted": false});
    assert_eq!(tool.render(&replaced).as_deref(), Some("from hook"));
    assert_eq!(tool.render(&json!("bare string")), None);
}

#[tokio::test]
async fn task_stop_kills_a_background_commands_group() {
    use crate::tools::task_stop::TaskStopTool;
    let (_dir, root, ctx) = project();
    let pid_file = root.join("bg.pid");
    let command = format!("echo $$ > {}; trap '' TERM; sleep 60", pid_file.display());
    let (response, _) = success(
        &BashTool,
        json!({"command": command, "run_in_background": true}),
        &ctx,
    )
    .await;
    let id = response["backgroundTaskId"]
        .as_str()
        .expect("id")
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&pid_file)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    let stopped = Instant::now();
    let (response, content) = success(&TaskStopTool, json!({"task_id": id}), &ctx).await;
    assert!(stopped.elapsed() < Duration::from_secs(3));
    assert_eq!(response["task_type"], "local_bash");
    assert_eq!(
        response["message"],
        format!("Successfully stopped task: {id} ({command})")
    );
    assert_eq!(content, response.to_string());
    assert!(!alive(pid), "{pid} survived TaskStop");
    let err = failure(&TaskStopTool, json!({"shell_id": id}), &ctx).await;
    assert_eq!(err, format!("Task {id} is not running (status: completed)"));
}

#[tokio::test]
async fn timeout_accepts_fractional_milliseconds_and_numeric_strings() {
    let (_dir, _root, ctx) = project();
    let err = failure(
        &BashTool,
        json!({"command": "sleep 5", "timeout": 300.5}),
        &ctx,
    )
    .await;
    assert_eq!(err, "Command timed out after 300.5ms");
    let prepared = BashTool
        .prepare(json!({"command": "true", "timeout": "1500.5"}), &ctx)
        .expect("prepare");
    assert_eq!(prepared["timeout"], 1500.5);
}

/// `noOutputExpected` for each command Claude Code 2.1.328 ran in the fixture
/// `no_output_expected` (and the earlier `rm`/`cd` ones), read from the fixture itself.
#[test]
fn no_output_expected_is_claude_codes_for_every_measured_command() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cc-2.1.328/no_output_expected/summary.json"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut seen = 0;
    for hook in summary["hooks"].as_array().unwrap() {
        let stdin = &hook["stdin"];
        if stdin["hook_event_name"] != "PostToolUse" {
            continue;
        }
        let command = stdin["tool_input"]["command"].as_str().unwrap();
        let theirs = stdin["tool_response"]["noOutputExpected"]
            .as_bool()
            .unwrap();
        assert_eq!(
            crate::tools::bash::no_output_expected(command),
            theirs,
            "{command}"
        );
        seen += 1;
    }
    assert_eq!(seen, 17, "every command of the fixture");
    assert!(!crate::tools::bash::no_output_expected("echo hi > f"));
    assert!(!crate::tools::bash::no_output_expected(""));
}
