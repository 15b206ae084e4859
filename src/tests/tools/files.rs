//! Read, Write and Edit beyond the golden samples.

use crate::tools::edit::EditTool;
use crate::tools::read::ReadTool;
use crate::tools::write::WriteTool;
use crate::tools::{Tool, ToolOutcome};
use serde_json::json;

use super::{failure, project, success};
use crate::tests::harness::write;

#[tokio::test]
async fn read_default_limit_and_long_lines() {
    let (_dir, root, ctx) = project();
    let long = "x".repeat(2500);
    let mut text = format!("{long}\n");
    for i in 2..=2500 {
        text.push_str(&format!("l{i}\n"));
    }
    write(&root.join("big.txt"), &text);
    let (resp, content) = success(&ReadTool, json!({"file_path": "big.txt"}), &ctx).await;
    assert_eq!(resp["file"]["numLines"], 2000);
    assert_eq!(resp["file"]["totalLines"], 2501);
    let first = content.lines().next().expect("line");
    assert_eq!(first.chars().count(), 1 + 1 + 2000);
    assert!(content.ends_with("\n2000\tl2000"));
}

#[tokio::test]
async fn read_refuses_directories_binaries_and_bad_input() {
    let (_dir, root, ctx) = project();
    std::fs::create_dir(root.join("d")).expect("mkdir");
    let err = failure(&ReadTool, json!({"file_path": "d"}), &ctx).await;
    assert_eq!(
        err,
        format!(
            "EISDIR: illegal operation on a directory, read '{}/d'",
            root.display()
        )
    );
    std::fs::write(root.join("b.bin"), [0u8, 1, 2, 3]).expect("write");
    let err = failure(&ReadTool, json!({"file_path": "b.bin"}), &ctx).await;
    assert!(
        err.starts_with("This tool cannot read binary files"),
        "{err}"
    );
    let err = ReadTool.prepare(json!({}), &ctx).expect_err("missing");
    assert_eq!(
        err,
        "InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing"
    );
    let err = ReadTool
        .prepare(json!({"file_path": "a", "offset": "x"}), &ctx)
        .expect_err("type");
    assert!(
        err.ends_with(
            "The parameter `offset` type is expected as `number` but provided as `string`"
        )
    );
}

#[tokio::test]
async fn read_empty_and_past_the_end() {
    let (_dir, root, ctx) = project();
    write(&root.join("e.txt"), "");
    let (_, content) = success(&ReadTool, json!({"file_path": "e.txt"}), &ctx).await;
    assert!(content.contains("the file exists but the contents are empty"));
    write(&root.join("s.txt"), "a\nb");
    let (resp, content) =
        success(&ReadTool, json!({"file_path": "s.txt", "offset": 9}), &ctx).await;
    assert_eq!(resp["file"]["numLines"], 0);
    assert!(content.contains("shorter than the provided offset (9). The file has 2 lines."));
}

#[tokio::test]
async fn write_update_reports_the_patch_and_creates_parents() {
    let (_dir, root, ctx) = project();
    write(&root.join("f.txt"), "a\nb\nc\n");
    let (resp, content) = success(
        &WriteTool,
        json!({"file_path": "f.txt", "content": "a\nB\nc\n"}),
        &ctx,
    )
    .await;
    assert_eq!(
        serde_json::to_string(&resp).expect("json"),
        format!(
            r#"{{"type":"update","filePath":"{0}/f.txt","content":"a\nB\nc\n","structuredPatch":[{{"oldStart":1,"oldLines":3,"newStart":1,"newLines":3,"lines":[" a","-b","+B"," c"]}}],"originalFile":"a\nb\nc\n","userModified":false}}"#,
            root.display()
        )
    );
    assert_eq!(
        content,
        format!(
            "The file {}/f.txt has been updated successfully. (file state is current in your context \u{2014} no need to Read it back)",
            root.display()
        )
    );
    let (resp, _) = success(
        &WriteTool,
        json!({"file_path": "x/y/z.txt", "content": "deep"}),
        &ctx,
    )
    .await;
    assert_eq!(resp["type"], "create");
    assert_eq!(
        std::fs::read_to_string(root.join("x/y/z.txt")).expect("file"),
        "deep"
    );
}

#[tokio::test]
async fn edit_refuses_ambiguous_missing_and_no_op_edits() {
    let (_dir, root, ctx) = project();
    write(&root.join("a.txt"), "foo foo foo\n");
    let err = EditTool
        .prepare(
            json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}),
            &ctx,
        )
        .expect_err("ambiguous");
    assert!(
        err.starts_with("Found 3 matches of the string to replace, but replace_all is false."),
        "{err}"
    );
    assert!(err.ends_with("\nString: foo"));
    let err = EditTool
        .prepare(
            json!({"file_path": "a.txt", "old_string": "nope", "new_string": "bar"}),
            &ctx,
        )
        .expect_err("not found");
    assert_eq!(err, "String to replace not found in file.\nString: nope");
    let err = EditTool
        .prepare(
            json!({"file_path": "a.txt", "old_string": "foo", "new_string": "foo"}),
            &ctx,
        )
        .expect_err("same");
    assert_eq!(
        err,
        "No changes to make: old_string and new_string are exactly the same."
    );
    let err = EditTool
        .prepare(
            json!({"file_path": "gone.txt", "old_string": "a", "new_string": "b"}),
            &ctx,
        )
        .expect_err("missing");
    assert_eq!(
        err,
        format!(
            "File does not exist. Note: your current working directory is {}.",
            root.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("file"),
        "foo foo foo\n"
    );
}

#[tokio::test]
async fn edit_replace_all_replaces_every_occurrence() {
    let (_dir, root, ctx) = project();
    write(&root.join("a.txt"), "foo\nkeep\nfoo\n");
    let (resp, _) = success(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "foo", "new_string": "bar", "replace_all": true}),
        &ctx,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("file"),
        "bar\nkeep\nbar\n"
    );
    assert_eq!(resp["replaceAll"], true);
    assert_eq!(
        resp["structuredPatch"],
        json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3, "lines": ["-foo", "+bar", " keep", "-foo", "+bar"]}])
    );
}

#[tokio::test]
async fn edit_rechecks_at_execute_and_creates_with_empty_old_string() {
    let (_dir, root, ctx) = project();
    write(&root.join("a.txt"), "one\n");
    let prepared = EditTool
        .prepare(
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
            &ctx,
        )
        .expect("prepare");
    // The file changes between prepare and execute (a PreToolUse hook could do this).
    write(&root.join("a.txt"), "changed\n");
    match EditTool.execute(prepared, &ctx).await {
        ToolOutcome::Failure { error, .. } => {
            assert_eq!(error, "String to replace not found in file.\nString: one")
        }
        ToolOutcome::Success { .. } => panic!("edit applied to a changed file"),
    }
    let (resp, _) = success(
        &EditTool,
        json!({"file_path": "new.txt", "old_string": "", "new_string": "hi\n"}),
        &ctx,
    )
    .await;
    assert_eq!(resp["originalFile"], "");
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).expect("file"),
        "hi\n"
    );
}

#[test]
fn hunks_far_apart_are_separate_with_three_lines_of_context() {
    let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
    let new: String = (1..=20)
        .map(|i| match i {
            2 => "two\n".to_string(),
            18 => "eighteen\n".to_string(),
            _ => format!("{i}\n"),
        })
        .collect();
    let patch = crate::tools::patch::structured_patch(&old, &new);
    assert_eq!(
        patch,
        json!([
            {"oldStart": 1, "oldLines": 5, "newStart": 1, "newLines": 5, "lines": [" 1", "-2", "+two", " 3", " 4", " 5"]},
            {"oldStart": 15, "oldLines": 6, "newStart": 15, "newLines": 6, "lines": [" 15", " 16", " 17", "-18", "+eighteen", " 19", " 20"]}
        ])
    );
}

#[test]
fn paths_are_made_absolute_without_cleaning() {
    use crate::tools::input::{absolutise, display_path};
    use std::path::Path;
    let cwd = Path::new("/proj/sub");
    // Hooks see the model's path made absolute; cleaning `./` and `..` is a hook's job
    // (hooks/normalize-paths.py), so the strings stay as written.
    assert_eq!(
        absolutise("./b.txt", cwd).to_str(),
        Some("/proj/sub/./b.txt")
    );
    assert_eq!(
        absolutise("../x.txt", cwd).to_str(),
        Some("/proj/sub/../x.txt")
    );
    assert_eq!(absolutise("/etc/../abs", cwd).to_str(), Some("/etc/../abs"));
    if let Some(home) = std::env::var_os("HOME") {
        assert_eq!(absolutise("~/f", cwd), Path::new(&home).join("f"));
    }
    assert_eq!(display_path(Path::new("/proj/sub/a.rs"), cwd), "a.rs");
    assert_eq!(
        display_path(Path::new("/elsewhere/a.rs"), cwd),
        "/elsewhere/a.rs"
    );
}

#[tokio::test]
async fn edit_deleting_a_line_takes_its_newline() {
    let (_dir, root, ctx) = project();
    write(&root.join("a.txt"), "keep\ndrop me\nkeep too\n");
    let (resp, _) = success(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "drop me", "new_string": ""}),
        &ctx,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).expect("file"),
        "keep\nkeep too\n"
    );
    assert_eq!(
        resp["structuredPatch"][0]["lines"],
        json!([" keep", "-drop me", " keep too"])
    );
}
