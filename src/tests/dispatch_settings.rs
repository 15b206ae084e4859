//! The dispatcher over settings read from real files by the loader: what a user drops in.

use super::dispatch_support::{FireInput, Fixture, read};
use crate::hooks::dispatch::Dispatcher;
use crate::settings::{LoadOptions, load};
use serde_json::json;

fn options(fx: &Fixture) -> LoadOptions {
    LoadOptions {
        project_dir: fx.project.clone(),
        cwd: fx.project.clone(),
        home: fx.home.clone(),
        config_dir: None,
        flag_settings: Vec::new(),
        setting_sources: None,
        managed_dir: fx.path("no-managed"),
        repo_trusted: true,
        plugin_dirs: Vec::new(),
    }
}

fn write(path: &std::path::Path, value: &serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

#[tokio::test]
async fn same_hook_in_user_project_and_local_settings_runs_once() {
    let fx = Fixture::new();
    let count = fx.path("count.log");
    let hooks = |matcher: &str| {
        json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [
            {"type": "command", "command": format!("echo run >> '{}'", count.display())}
        ]}]}})
    };
    write(&fx.home.join(".claude/settings.json"), &hooks("Bash"));
    write(
        &fx.project.join(".claude/settings.json"),
        &hooks("Bash|Read"),
    );
    write(&fx.project.join(".claude/settings.local.json"), &hooks("*"));
    let settings = load(&options(&fx));
    assert_eq!(settings.handlers.len(), 3, "{:?}", settings.diagnostics);
    let d = Dispatcher::new(settings.handlers, fx.env())
        .fire_input(&fx.bash("ls"))
        .await;
    assert_eq!(d.runs.len(), 1);
    assert_eq!(read(&count), "run\n");
}

#[tokio::test]
async fn disable_all_hooks_in_local_settings_stops_every_file() {
    let fx = Fixture::new();
    let marker = fx.path("ran");
    write(
        &fx.home.join(".claude/settings.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": format!("touch '{}'", marker.display())}
        ]}]}}),
    );
    write(
        &fx.project.join(".claude/settings.local.json"),
        &json!({"disableAllHooks": true}),
    );
    let d = Dispatcher::new(load(&options(&fx)).handlers, fx.env())
        .fire_input(&fx.prompt("hi"))
        .await;
    assert!(d.runs.is_empty());
    assert!(!marker.exists());
}
