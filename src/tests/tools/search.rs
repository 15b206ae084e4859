//! Glob and Grep on real directory trees.

use std::time::{Duration, SystemTime};

use crate::tools::Tool;
use crate::tools::glob::GlobTool;
use crate::tools::grep::GrepTool;
use serde_json::{Value, json};

use super::{failure, project, success};
use crate::tests::harness::write;

fn set_mtime(path: &std::path::Path, secs_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .expect("set mtime");
}

fn names(resp: &Value) -> Vec<String> {
    resp["filenames"]
        .as_array()
        .expect("filenames")
        .iter()
        .map(|v| v.as_str().expect("str").to_string())
        .collect()
}

#[tokio::test]
async fn glob_sorts_newest_first_and_respects_gitignore() {
    let (_dir, root, ctx) = project();
    for (name, age) in [
        ("src/old.rs", 300),
        ("src/new.rs", 10),
        ("src/mid/m.rs", 100),
        ("top.rs", 200),
    ] {
        write(&root.join(name), "x");
        set_mtime(&root.join(name), age);
    }
    write(&root.join("target/gen.rs"), "x");
    write(&root.join(".gitignore"), "target/\n");
    write(&root.join(".hidden/h.rs"), "x");
    let (resp, content) = success(&GlobTool, json!({"pattern": "**/*.rs"}), &ctx).await;
    assert_eq!(
        names(&resp),
        ["src/new.rs", "src/mid/m.rs", "top.rs", "src/old.rs"]
    );
    assert_eq!(content, "src/new.rs\nsrc/mid/m.rs\ntop.rs\nsrc/old.rs");
    assert_eq!(resp["numFiles"], 4);
    assert_eq!(resp["truncated"], false);
    let keys: Vec<&str> = resp
        .as_object()
        .expect("obj")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["durationMs", "numFiles", "filenames", "truncated"]);
    // `*` stays in one directory; a literal prefix narrows the walk; `path` is absolutised.
    let (resp, _) = success(&GlobTool, json!({"pattern": "*.rs"}), &ctx).await;
    assert_eq!(names(&resp), ["top.rs"]);
    let (resp, _) = success(&GlobTool, json!({"pattern": "*.rs", "path": "src"}), &ctx).await;
    assert_eq!(names(&resp), ["src/new.rs", "src/old.rs"]);
    // A pattern that names a hidden directory finds it.
    let (resp, _) = success(&GlobTool, json!({"pattern": ".hidden/*.rs"}), &ctx).await;
    assert_eq!(names(&resp), [".hidden/h.rs"]);
    let (_, content) = success(&GlobTool, json!({"pattern": "**/*.none"}), &ctx).await;
    assert_eq!(content, "No files found");
}

#[tokio::test]
async fn glob_caps_at_100_and_normalises_input() {
    let (_dir, root, ctx) = project();
    for i in 0..105 {
        write(&root.join(format!("f{i:03}.txt")), "x");
    }
    let (resp, content) = success(&GlobTool, json!({"pattern": "*.txt"}), &ctx).await;
    assert_eq!(resp["numFiles"], 100);
    assert_eq!(resp["truncated"], true);
    assert!(content.ends_with(crate::tools::glob::TRUNCATED_NOTE));
    let prepared = GlobTool
        .prepare(json!({"path": "sub", "pattern": "*"}), &ctx)
        .expect("prepare");
    assert_eq!(
        serde_json::to_string(&prepared).expect("json"),
        format!(r#"{{"pattern":"*","path":"{}/sub"}}"#, root.display())
    );
    let err = failure(&GlobTool, json!({"pattern": "*", "path": "nowhere"}), &ctx).await;
    assert!(err.starts_with("Directory does not exist:"), "{err}");
}

fn tree() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    crate::tools::ToolContext,
) {
    let (dir, root, ctx) = project();
    write(&root.join("a.rs"), "fn main() {\n    let Needle = 1;\n}\n");
    write(
        &root.join("b.py"),
        "one\ntwo\nneedle here\nthree\nfour\nfive\nsix\nneedle again\nseven\n",
    );
    write(&root.join("docs/c.md"), "no match\n");
    write(&root.join("ignored/d.rs"), "needle\n");
    write(&root.join(".gitignore"), "ignored/\n");
    set_mtime(&root.join("a.rs"), 100);
    set_mtime(&root.join("b.py"), 10);
    (dir, root, ctx)
}

#[tokio::test]
async fn grep_files_with_matches_is_the_default() {
    let (_dir, _root, ctx) = tree();
    let (resp, content) = success(&GrepTool, json!({"pattern": "needle", "-i": true}), &ctx).await;
    assert_eq!(
        serde_json::to_string(&resp).expect("json"),
        r#"{"mode":"files_with_matches","numFiles":2,"filenames":["b.py","a.rs"]}"#
    );
    assert_eq!(content, "Found 2 files\nb.py\na.rs");
    let (resp, _) = success(&GrepTool, json!({"pattern": "needle"}), &ctx).await;
    assert_eq!(names(&resp), ["b.py"]);
    let (_, content) = success(&GrepTool, json!({"pattern": "absent"}), &ctx).await;
    assert_eq!(content, "No files found");
}

#[tokio::test]
async fn grep_content_mode_with_line_numbers_and_context() {
    let (_dir, _root, ctx) = tree();
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "content"}),
        &ctx,
    )
    .await;
    assert_eq!(
        serde_json::to_string(&resp).expect("json"),
        r#"{"mode":"content","numFiles":0,"filenames":[],"content":"b.py:3:needle here\nb.py:8:needle again","numLines":2}"#
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "content", "-n": false}),
        &ctx,
    )
    .await;
    assert_eq!(resp["content"], "b.py:needle here\nb.py:needle again");
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "content", "-C": 1}),
        &ctx,
    )
    .await;
    assert_eq!(
        resp["content"],
        "b.py-2-two\nb.py:3:needle here\nb.py-4-three\n--\nb.py-7-six\nb.py:8:needle again\nb.py-9-seven"
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "content", "-B": 2, "-A": 0}),
        &ctx,
    )
    .await;
    assert_eq!(
        resp["content"],
        "b.py-1-one\nb.py-2-two\nb.py:3:needle here\n--\nb.py-6-five\nb.py-7-six\nb.py:8:needle again"
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "content", "-A": 1}),
        &ctx,
    )
    .await;
    assert_eq!(
        resp["content"],
        "b.py:3:needle here\nb.py-4-three\n--\nb.py:8:needle again\nb.py-9-seven"
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "ne+dle \\w+", "output_mode": "content", "-o": true}),
        &ctx,
    )
    .await;
    assert_eq!(resp["content"], "b.py:3:needle here\nb.py:8:needle again");
}

#[tokio::test]
async fn grep_count_glob_type_and_head_limit() {
    let (_dir, _root, ctx) = tree();
    let (resp, content) = success(
        &GrepTool,
        json!({"pattern": "needle", "output_mode": "count", "-i": true}),
        &ctx,
    )
    .await;
    assert_eq!(
        serde_json::to_string(&resp).expect("json"),
        r#"{"mode":"count","numFiles":2,"filenames":[],"content":"a.rs:1\nb.py:2","numMatches":3}"#
    );
    assert_eq!(
        content,
        "a.rs:1\nb.py:2\n\nFound 3 total occurrences across 2 files."
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "-i": true, "glob": "*.rs"}),
        &ctx,
    )
    .await;
    assert_eq!(names(&resp), ["a.rs"]);
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "needle", "-i": true, "type": "py"}),
        &ctx,
    )
    .await;
    assert_eq!(names(&resp), ["b.py"]);
    let err = failure(
        &GrepTool,
        json!({"pattern": "x", "type": "nosuchtype"}),
        &ctx,
    )
    .await;
    assert!(err.contains("nosuchtype"), "{err}");
    let (resp, content) = success(
        &GrepTool,
        json!({"pattern": "e", "output_mode": "content", "head_limit": 2, "offset": 1}),
        &ctx,
    )
    .await;
    // `.gitignore:1:ignored/` is skipped by the offset.
    assert_eq!(resp["content"], "a.rs:2:    let Needle = 1;\nb.py:1:one");
    assert_eq!(resp["appliedLimit"], 2);
    assert_eq!(resp["appliedOffset"], 1);
    assert!(content.ends_with("[Showing results with pagination = limit: 2, offset: 1]"));
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "e", "output_mode": "content", "head_limit": 0}),
        &ctx,
    )
    .await;
    // .gitignore:1, a.rs:2 and b.py lines 1, 3, 4, 6, 8, 9.
    assert_eq!(resp["numLines"], 8);
    assert!(resp.get("appliedLimit").is_none());
}

#[tokio::test]
async fn grep_multiline_and_single_file_path() {
    let (_dir, _root, ctx) = tree();
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "two.*?needle", "multiline": true, "output_mode": "content", "path": "b.py"}),
        &ctx,
    )
    .await;
    assert_eq!(resp["content"], "b.py:2:two\nb.py:3:needle here");
    let err = GrepTool
        .prepare(json!({"pattern": "x", "output_mode": "lines"}), &ctx)
        .expect_err("enum");
    assert!(err.contains("must be one of"), "{err}");
}

#[tokio::test]
async fn grep_comma_globs_and_long_lines() {
    let (_dir, root, ctx) = project();
    write(&root.join("a.ts"), "hit\n");
    write(&root.join("b.tsx"), "hit\n");
    write(&root.join("c.js"), "hit\n");
    write(
        &root.join("min.css"),
        &format!("{}\nctx\n", "hit ".repeat(200)),
    );
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "hit", "glob": "*.ts,*.tsx"}),
        &ctx,
    )
    .await;
    let mut got = names(&resp);
    got.sort();
    assert_eq!(got, ["a.ts", "b.tsx"]);
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "hit", "glob": "*.{ts,js}"}),
        &ctx,
    )
    .await;
    let mut got = names(&resp);
    got.sort();
    assert_eq!(got, ["a.ts", "c.js"]);
    let (resp, _) = success(
        &GrepTool,
        json!({"pattern": "hit", "glob": "*.css", "output_mode": "content"}),
        &ctx,
    )
    .await;
    assert_eq!(
        resp["content"],
        "min.css:1:[Omitted long line with 200 matches]"
    );
}

#[test]
fn builtin_tools_are_the_eleven_in_order() {
    let tools = crate::tools::builtin_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "Bash",
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "TaskStop",
            "NotebookEdit",
            "WebFetch",
            "WebSearch",
            "ToolSearch"
        ]
    );
    let deferred: Vec<&str> = tools
        .iter()
        .filter(|t| t.deferred())
        .map(|t| t.name())
        .collect();
    // Claude Code 2.1.328 defers these (fixture tools_deferred).
    assert_eq!(deferred, ["NotebookEdit", "WebFetch", "WebSearch"]);
    for tool in &tools {
        assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name());
    }
}

#[tokio::test]
async fn grep_searches_hidden_files_but_not_vcs_dirs() {
    let (_dir, root, ctx) = project();
    write(&root.join(".github/ci.yml"), "token\n");
    write(&root.join(".git/config"), "token\n");
    write(&root.join("src/.env.example"), "token\n");
    let (resp, _) = success(&GrepTool, json!({"pattern": "token"}), &ctx).await;
    let mut got = names(&resp);
    got.sort();
    assert_eq!(got, [".github/ci.yml", "src/.env.example"]);
}
