//! The seed demo, as a program that embeds rein would write it: two in-process hooks (a
//! path-normalising rewrite and a safety hook), the four scenarios against the offline mock
//! model, then the safety hook unregistered and the refused call passing.
//!
//! ```sh
//! cargo run --example seed_demo
//! ```
//!
//! It works in a fresh temporary project (nothing outside it is touched) and exits non-zero if
//! any scenario does not end as described.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rein::events::PreToolUse;
use rein::{Engine, HookReply, Observer, Progress};
use serde_json::Value;

/// Prints every tool call and its result as the session reports them.
struct Print;

impl Observer for Print {
    fn observe(&self, progress: Progress<'_>) {
        match progress {
            Progress::ToolStart { name, input, .. } => println!("  → {name} {input}"),
            Progress::ToolResult {
                content, is_error, ..
            } => {
                let first = content.lines().next().unwrap_or_default();
                println!(
                    "  ← {}{first}",
                    if is_error { "refused/failed: " } else { "" }
                );
            }
            Progress::Notice { text } => println!("  ! {text}"),
            _ => {}
        }
    }
}

/// `a/./b/../c` → `a/c`, without touching the filesystem.
fn normalize(path: &str) -> String {
    let mut out = PathBuf::new();
    for part in Path::new(path).components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.to_string_lossy().into_owned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile_dir()?;
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("scratch"))?;
    std::fs::write(project.join("notes.txt"), "rein embeds cleanly\n")?;

    let engine = Engine::builder(&project)
        .home(dir.join("home"))
        .read_settings_files(false)
        // The one command this demo lets through the permission step, once no hook objects.
        .allow("Bash(rm -rf scratch)")
        .observer(Arc::new(Print))
        .build()?;

    // A path-normalising rewrite: `<project>/./notes.txt` → `<project>/notes.txt`.
    let _normalize = engine.on::<PreToolUse, _, _>("Read|Write|Edit", |input| async move {
        let Some(path) = input.tool_input.get("file_path").and_then(Value::as_str) else {
            return HookReply::none();
        };
        let clean = normalize(path);
        if clean == path {
            return HookReply::none();
        }
        let mut rewritten = input.tool_input.as_object().cloned().unwrap_or_default();
        rewritten.insert("file_path".into(), Value::String(clean));
        PreToolUse::rewrite(rewritten)
    })?;

    // A safety hook: no `rm -rf`, whatever the rules allow.
    let safety = engine.on::<PreToolUse, _, _>("Bash", |input| async move {
        let command = input.tool_input["command"].as_str().unwrap_or_default();
        let words: Vec<&str> = command.split_whitespace().collect();
        if words.first() == Some(&"rm")
            && words
                .iter()
                .any(|w| w.starts_with('-') && w.contains('r') && w.contains('f'))
        {
            PreToolUse::deny(format!("blocked by the in-process safety hook: {command}"))
        } else {
            HookReply::none()
        }
    })?;

    println!("1. read a file through a rewritten path");
    let read = engine.run("读文件 ./notes.txt").await;
    println!("2. a command nobody approved (headless: the permission step refuses)");
    let touched = engine.run("执行命令 touch made.txt").await;
    println!("3. rm -rf, allowed by a rule but denied by the safety hook");
    let denied = engine.run("执行命令 rm -rf scratch").await;
    let survived = project.join("scratch").exists();
    println!("   scratch/ still exists: {survived}");

    println!("4. the safety hook unregistered: the same call passes");
    safety.unregister();
    let passed = engine.run("执行命令 rm -rf scratch").await;
    let gone = !project.join("scratch").exists();
    println!("   scratch/ removed: {gone}");

    let ok = read.denials.is_empty()
        && touched.denials.len() == 1
        && denied.denials.len() == 1
        && survived
        && passed.denials.is_empty()
        && gone;
    std::fs::remove_dir_all(&dir)?;
    if ok {
        println!("all four scenarios ended as described");
        Ok(())
    } else {
        Err("a scenario did not end as described".into())
    }
}

/// A fresh directory under the system temp dir.
fn tempfile_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("rein-seed-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
