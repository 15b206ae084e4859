//! Plugins against Claude Code 2.1.328 (fixtures `plugin_hooks`, `plugin_hook_nonl`): a plugin
//! given with `--plugin-dir` whose `hooks/hooks.json` records each run and refuses Bash.

use std::path::Path;

use serde_json::Value;

use super::replay::{fixture, run};

fn fixture_rec(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cc-2.1.328")
        .join(name)
        .join("rec")
}

/// The recorded runs of a plugin hook: `<n>-<Event>` in the order they ran.
fn runs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".stdin").map(str::to_string))
        .collect();
    names.sort_by_key(|n| n.split('-').next().unwrap().parse::<u32>().unwrap());
    names
}

/// A hook's stdin with the values that differ per run (ids, paths of the transcript, time)
/// blanked; everything else, key order included, must be Claude Code's.
fn comparable(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap();
    for key in [
        "session_id",
        "transcript_path",
        "prompt_id",
        "tool_use_id",
        "duration_ms",
    ] {
        if let Some(slot) = v.get_mut(key) {
            *slot = Value::String(format!("<{key}>"));
        }
    }
    v
}

#[test]
fn a_plugin_guard_refuses_the_call_with_claude_codes_stdin_env_and_text() {
    let fx = fixture("plugin_hooks");
    let r = run("plugin_hooks", &[]);
    let project = r.sandbox.project.clone();
    assert_eq!(
        std::fs::read_to_string(project.join("victim.txt")).unwrap(),
        "keep me\n",
        "the plugin's PreToolUse hook exits 2: the rm never runs"
    );
    let ours_dir = project.join("rec");
    let theirs_dir = fixture_rec("plugin_hooks");
    let ours = runs(&ours_dir);
    let theirs = runs(&theirs_dir);
    let events = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|n| n.split_once('-').unwrap().1.to_string())
            .collect()
    };
    assert_eq!(
        events(&ours),
        events(&theirs),
        "the plugin's hooks ran for the same events"
    );
    for (o, t) in ours.iter().zip(&theirs) {
        let read = |dir: &Path, base: &str, ext: &str| {
            std::fs::read_to_string(dir.join(format!("{base}.{ext}"))).unwrap()
        };
        let our_stdin = r.normalize(&read(&ours_dir, o, "stdin"));
        let their_stdin =
            read(&theirs_dir, t, "stdin").replace("<PROJECT>", &project.to_string_lossy());
        let their_stdin = r.normalize(&their_stdin);
        assert_eq!(
            serde_json::to_string(&comparable(&our_stdin)).unwrap(),
            serde_json::to_string(&comparable(&their_stdin)).unwrap(),
            "{o}: stdin"
        );
        let our_env = r.normalize(&read(&ours_dir, o, "env"));
        let plugin_vars = |env: &str| -> Vec<String> {
            env.lines()
                .filter(|l| l.starts_with("CLAUDE_PLUGIN_"))
                .map(|l| l.replace(&*project.to_string_lossy(), "<PROJECT>"))
                .collect()
        };
        assert_eq!(
            plugin_vars(&our_env),
            plugin_vars(&read(&theirs_dir, t, "env")),
            "{o}: CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA"
        );
        assert_eq!(
            r.normalize(&read(&ours_dir, o, "cwd")),
            read(&theirs_dir, t, "cwd"),
            "{o}: cwd"
        );
        // ${CLAUDE_PLUGIN_ROOT} was replaced in the command before the shell ran it.
        assert_eq!(
            read(&ours_dir, o, "argv").replace(&*project.to_string_lossy(), "<PROJECT>"),
            read(&theirs_dir, t, "argv"),
            "{o}: argv"
        );
    }
    assert!(
        r.sandbox
            .home
            .join(".claude/plugins/data/guard-inline")
            .is_dir(),
        "CLAUDE_PLUGIN_DATA is made"
    );
    assert_tool_result_text(&fx, &r);
    let settings_hook = std::fs::read_to_string(project.join("order.txt")).unwrap();
    assert_eq!(
        settings_hook, "settings-pre\n",
        "the settings hook ran beside it"
    );
}

fn assert_tool_result_text(fx: &Value, r: &super::replay::Replay) {
    let theirs = fx["model"]["turns"][1]["new_messages"][0]["content"][0]["content"]
        .as_str()
        .unwrap();
    let ours = r.tool_results[0]["content"]
        .as_str()
        .unwrap_or_else(|| r.tool_results[0]["content"][0]["text"].as_str().unwrap());
    assert_eq!(
        r.normalize(ours),
        theirs,
        "what the model is told of the refusal"
    );
}

/// Where the plugin's name goes when its stderr has no final newline.
#[test]
fn the_refusal_names_the_plugin_as_claude_code_does() {
    let fx = fixture("plugin_hook_nonl");
    let r = run("plugin_hook_nonl", &[]);
    assert!(r.sandbox.project.join("victim.txt").exists());
    assert_tool_result_text(&fx, &r);
}
