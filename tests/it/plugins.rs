//! Plugins through the built binary: installed from a local marketplace with `rein plugin`,
//! enabled in the user settings, guarding a real `rm`; what a repository may not switch off;
//! bad plugin files named with file:line while the rest of the plugin still guards.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::harness::{Sandbox, bash, say, write, write_executable};

/// A plugin folder whose PreToolUse hook refuses every Bash call (exit 2).
fn guard_plugin(dir: &Path, manifest: &str) {
    write(&dir.join(".claude-plugin/plugin.json"), manifest);
    write_executable(
        &dir.join("hooks/deny.sh"),
        b"#!/bin/sh\ncat > /dev/null\necho \"$CLAUDE_PLUGIN_ROOT\" > \"$CLAUDE_PLUGIN_DATA/seen\"\necho 'the guard plugin refuses Bash' >&2\nexit 2\n",
    );
    write(
        &dir.join("hooks/hooks.json"),
        &json!({"description": "guard", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]}]}})
        .to_string(),
    );
}

fn rm_victim(sb: &Sandbox, extra: &[&str]) -> Output {
    sb.write("victim.txt", "precious\n");
    let mock = sb.mock(json!([bash("rm victim.txt"), say("done")]));
    sb.rein()
        .args([
            "-p",
            "go",
            "--permission-mode",
            "bypassPermissions",
            "--mock-script",
        ])
        .arg(&mock)
        .args(extra)
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap()
}

fn plugin_cmd(sb: &Sandbox, args: &[&str]) -> Output {
    let out = sb.rein().arg("plugin").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rein plugin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn an_installed_plugin_guards_until_the_user_disables_it() {
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    let mkt = sb.root.join("mkt");
    write(
        &mkt.join(".claude-plugin/marketplace.json"),
        &json!({"name": "localmkt", "owner": {"name": "t"}, "plugins": [
            {"name": "guard", "source": "./guard", "description": "refuses Bash"}]})
        .to_string(),
    );
    guard_plugin(
        &mkt.join("guard"),
        r#"{"name": "guard", "version": "1.2.0"}"#,
    );
    // The user's settings hold other keys, which the install keeps.
    let user_settings = sb.home.join(".claude/settings.json");
    write(&user_settings, r#"{"model": "x", "env": {"A": "1"}}"#);
    plugin_cmd(&sb, &["marketplace-add", mkt.to_str().unwrap()]);
    plugin_cmd(&sb, &["install", "guard@localmkt"]);
    let cached = sb.home.join(".claude/plugins/cache/localmkt/guard/1.2.0");
    assert!(
        cached.join("hooks/hooks.json").is_file(),
        "copied into the cache"
    );
    let installed: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.home.join(".claude/plugins/installed_plugins.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        installed["plugins"]["guard@localmkt"][0]["installPath"],
        json!(cached.to_string_lossy())
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&user_settings).unwrap()).unwrap();
    assert_eq!(settings["enabledPlugins"], json!({"guard@localmkt": true}));
    assert_eq!(settings["env"], json!({"A": "1"}), "other keys kept");
    let list = plugin_cmd(&sb, &["list"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("guard@localmkt"));

    let out = rm_victim(&sb, &[]);
    assert!(
        sb.exists("victim.txt"),
        "the installed plugin refused the rm: {out:?}"
    );
    let data = sb.home.join(".claude/plugins/data/guard-localmkt");
    assert_eq!(
        std::fs::read_to_string(data.join("seen")).unwrap().trim(),
        cached.to_string_lossy(),
        "the hook ran from the cache with its own CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA"
    );

    // A cloned repository may not switch the user's guard off.
    sb.settings(json!({"enabledPlugins": {"guard@localmkt": false}}));
    let out = rm_victim(&sb, &[]);
    assert!(
        sb.exists("victim.txt"),
        "a repository file cannot silence it"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("\"guard@localmkt\": false from this repository-controlled file is ignored"),
        "{stderr}"
    );
    // With the folder trusted, the project's word counts, as in Claude Code.
    let out = rm_victim(&sb, &["--trust"]);
    assert!(
        !sb.exists("victim.txt"),
        "trusted project switched it off: {out:?}"
    );

    // The user's own switch: disabled, the same call runs (the guard was what stopped it).
    std::fs::remove_file(sb.path(".claude/settings.json")).unwrap();
    plugin_cmd(&sb, &["disable", "guard@localmkt"]);
    rm_victim(&sb, &[]);
    assert!(!sb.exists("victim.txt"), "disabled: the rm runs");
    plugin_cmd(&sb, &["enable", "guard@localmkt"]);
    rm_victim(&sb, &[]);
    assert!(sb.exists("victim.txt"), "enabled again");
}

#[test]
fn an_enabled_plugin_that_is_not_installed_is_named() {
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    sb.settings(json!({"enabledPlugins": {"ghost@nowhere": true}}));
    let out = sb.rein().args(["hooks", "validate"]).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("settings.json:"), "{text}");
    assert!(
        text.contains("\"ghost@nowhere\", which is not installed"),
        "{text}"
    );
}

#[test]
fn bad_plugin_files_are_named_and_the_rest_still_guards() {
    let sb = Sandbox::new("proj", &["proj/.claude"]);
    let plug = sb.path("plug");
    guard_plugin(&plug, "{\n  \"name\": \"guard\",\n  oops\n}\n");
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}]}],
        "PostToolUse": [{"hooks": [
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/missing.sh"}]}]}});
    write(
        &plug.join("hooks/hooks.json"),
        &serde_json::to_string_pretty(&hooks).unwrap(),
    );
    let out = sb
        .rein()
        .args(["hooks", "validate", "--plugin-dir", "plug"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "errors fail validate: {text}");
    let manifest = plug.join(".claude-plugin/plugin.json");
    assert!(
        text.contains(&format!(
            "{}:3:3: error: not valid JSON",
            manifest.display()
        )),
        "{text}"
    );
    assert!(text.contains("missing.sh does not exist"), "{text}");
    let listed = sb
        .rein()
        .args(["hooks", "list", "--plugin-dir", "plug"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&format!("{}:", plug.join("hooks/hooks.json").display()))
            && listed.contains("(plugin plug@inline)"),
        "listed with its plugin and file (named after its folder): {listed}"
    );
    rm_victim(&sb, &["--plugin-dir", "plug"]);
    assert!(sb.exists("victim.txt"), "the guard still runs");
}
