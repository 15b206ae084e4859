//! Each tool's normalised `tool_input` and its `tool_response` (or error) compared byte for
//! byte with what Claude Code 2.1.328 sent to hooks (tests/fixtures/golden).

use std::path::Path;

use crate::tools::bash::BashTool;
use crate::tools::edit::EditTool;
use crate::tools::read::ReadTool;
use crate::tools::write::WriteTool;
use crate::tools::{Tool, ToolOutcome};
use serde_json::{Value, json};

use super::project;
use crate::tests::harness::write;

/// The golden sample with `<PROJECT>` replaced by `root`.
fn golden(name: &str, root: &Path) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(name);
    let text = std::fs::read_to_string(path).expect("fixture");
    let text = text.replace("<PROJECT>", &root.to_string_lossy());
    serde_json::from_str(&text).expect("fixture json")
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("serialise")
}

/// Prepares `model_input`, checks it against the sample's `tool_input`, runs it and returns
/// the outcome.
async fn run_against(
    tool: &dyn Tool,
    model_input: Value,
    sample: &Value,
    ctx: &crate::tools::ToolContext,
) -> ToolOutcome {
    let prepared = tool.prepare(model_input, ctx).expect("prepare");
    assert_eq!(compact(&prepared), compact(&sample["tool_input"]));
    tool.execute(prepared, ctx).await
}

fn expect_response(outcome: ToolOutcome, sample: &Value) -> String {
    match outcome {
        ToolOutcome::Success { response, content } => {
            assert_eq!(compact(&response), compact(&sample["tool_response"]));
            content
        }
        ToolOutcome::Failure { error, .. } => panic!("tool failed: {error}"),
    }
}

#[tokio::test]
async fn bash_echo_to_file_matches_golden() {
    let (_dir, root, ctx) = project();
    let sample = golden("stdin-PostToolUse-Bash.json", &root);
    let input = json!({"description": "rewritten by hook", "command": "echo rewritten-one > rewritten_one.txt"});
    let content = expect_response(run_against(&BashTool, input, &sample, &ctx).await, &sample);
    assert_eq!(content, crate::tools::bash::NO_OUTPUT_TEXT);
    assert_eq!(
        std::fs::read_to_string(root.join("rewritten_one.txt")).expect("file"),
        "rewritten-one\n"
    );
}

#[tokio::test]
async fn bash_failure_error_matches_golden() {
    let (_dir, root, ctx) = project();
    let sample = golden("stdin-PostToolUseFailure-Bash.json", &root);
    let input =
        json!({"command": "echo some-output; echo some-err >&2; exit 1", "description": "fail"});
    match run_against(&BashTool, input, &sample, &ctx).await {
        ToolOutcome::Failure {
            error,
            is_interrupt,
        } => {
            assert_eq!(error, sample["error"].as_str().expect("error"));
            assert_eq!(
                is_interrupt,
                sample["is_interrupt"].as_bool().expect("bool")
            );
        }
        ToolOutcome::Success { content, .. } => panic!("succeeded: {content}"),
    }
}

#[tokio::test]
async fn read_full_file_matches_golden() {
    let (_dir, root, ctx) = project();
    write(&root.join("notes.txt"), "line one\nline two\n");
    let sample = golden("stdin-PostToolUse-Read.json", &root);
    let content = expect_response(
        run_against(&ReadTool, json!({"file_path": "notes.txt"}), &sample, &ctx).await,
        &sample,
    );
    assert_eq!(content, "1\tline one\n2\tline two\n3\t");
    // The PreToolUse sample has the same normalised input.
    let pre = golden("stdin-PreToolUse-Read.json", &root);
    let prepared = ReadTool
        .prepare(json!({"file_path": "notes.txt"}), &ctx)
        .expect("prepare");
    assert_eq!(compact(&prepared), compact(&pre["tool_input"]));
}

#[tokio::test]
async fn read_offset_limit_matches_golden() {
    let (_dir, root, ctx) = project();
    write(&root.join("notes.txt"), "one\ntwo\nthree\nfour\nfive\n");
    let sample = golden("stdin-PostToolUse-Read-offset.json", &root);
    let input = json!({"limit": "2", "file_path": root.join("notes.txt"), "offset": 2});
    let content = expect_response(run_against(&ReadTool, input, &sample, &ctx).await, &sample);
    assert_eq!(content, "2\ttwo\n3\tthree");
}

#[tokio::test]
async fn read_missing_file_matches_golden() {
    let (_dir, root, ctx) = project();
    let sample = golden("stdin-PostToolUseFailure-Read.json", &root);
    match run_against(
        &ReadTool,
        json!({"file_path": "missing.txt"}),
        &sample,
        &ctx,
    )
    .await
    {
        ToolOutcome::Failure {
            error,
            is_interrupt,
        } => {
            assert_eq!(error, sample["error"].as_str().expect("error"));
            assert!(!is_interrupt);
        }
        ToolOutcome::Success { content, .. } => panic!("succeeded: {content}"),
    }
}

#[tokio::test]
async fn write_create_matches_golden() {
    let (_dir, root, ctx) = project();
    let sample = golden("stdin-PostToolUse-Write.json", &root);
    let input = json!({"content": "alpha\nbeta\n", "file_path": "new.txt"});
    let content = expect_response(run_against(&WriteTool, input, &sample, &ctx).await, &sample);
    let batch = golden("stdin-PostToolBatch.json", &root);
    let expected = batch["tool_calls"][0]["tool_response"]
        .as_str()
        .expect("text")
        .replace("final.txt", "new.txt");
    assert_eq!(content, expected);
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).expect("file"),
        "alpha\nbeta\n"
    );
}

#[tokio::test]
async fn write_batch_text_matches_golden() {
    let (_dir, root, ctx) = project();
    let batch = golden("stdin-PostToolBatch.json", &root);
    let pre = golden("stdin-PreToolUse-Write.json", &root);
    let call0 = &batch["tool_calls"][0];
    let prepared = WriteTool
        .prepare(
            json!({"file_path": "final.txt", "content": "final\n"}),
            &ctx,
        )
        .expect("prepare");
    assert_eq!(compact(&prepared), compact(&call0["tool_input"]));
    assert_eq!(compact(&prepared), compact(&pre["tool_input"]));
    match WriteTool.execute(prepared, &ctx).await {
        ToolOutcome::Success { content, .. } => {
            assert_eq!(content, call0["tool_response"].as_str().expect("text"))
        }
        ToolOutcome::Failure { error, .. } => panic!("failed: {error}"),
    }
}

#[tokio::test]
async fn edit_matches_golden() {
    let (_dir, root, ctx) = project();
    write(&root.join("notes.txt"), "line one\nline two\n");
    let sample = golden("stdin-PostToolUse-Edit.json", &root);
    // The golden session read the file first (its tool_response has no
    // `contentNotInModelContext`).
    let read = crate::tools::read::ReadTool
        .prepare(json!({"file_path": "notes.txt"}), &ctx)
        .expect("prepare");
    assert!(matches!(
        crate::tools::read::ReadTool.execute(read, &ctx).await,
        ToolOutcome::Success { .. }
    ));
    let input = json!({"new_string": "line 2", "file_path": "notes.txt", "old_string": "line two"});
    let content = expect_response(run_against(&EditTool, input, &sample, &ctx).await, &sample);
    assert_eq!(
        content,
        format!(
            "The file {}/notes.txt has been updated successfully. (file state is current in your context \u{2014} no need to Read it back)",
            root.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).expect("file"),
        "line one\nline 2\n"
    );
}

#[tokio::test]
async fn edit_pre_tool_use_input_matches_golden() {
    let (_dir, root, ctx) = project();
    write(&root.join("notes.txt"), "hello world\n");
    let pre = golden("stdin-PreToolUse-Edit.json", &root);
    let prepared = EditTool
        .prepare(
            json!({"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"}),
            &ctx,
        )
        .expect("prepare");
    assert_eq!(compact(&prepared), compact(&pre["tool_input"]));
}
