//! Output styles: what `outputStyle` puts in the system prompt (both providers), where styles
//! are read from (project over user, a plugin's under `<plugin>:<name>`), what `init` and
//! `initialize` report, and how a wrong name or a broken file is reported (measured against
//! Claude Code 2.1.328: `tests/fixtures/cc-2.1.328/output_style*`).

use serde_json::{Value, json};

use super::loopback::{Api, Loopback, Turn};
use crate::harness::{Sandbox, write};

/// Runs `-p hi` against a loopback `api`; returns the first request's system prompt and stderr.
fn system_prompt(s: &Sandbox, api: Api, extra: &[&str]) -> (String, String) {
    let server = Loopback::start(api, vec![Turn::text("ok")]);
    let mut cmd = s.rein();
    cmd.args(["-p", "hi"]).args(extra);
    api.point(&mut cmd, &server.url);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{api:?}: {stderr}");
    let requests = server.requests();
    (api.system_of(&requests[0]), stderr)
}

#[test]
fn a_project_style_replaces_the_coding_guidance_unless_it_keeps_it_on_both_providers() {
    for api in Api::BOTH {
        let s = Sandbox::new("project", &[]);
        // The user's style of the same name loses to the project's.
        write(
            &s.home.join(".claude/output-styles/terse.md"),
            "---\nname: Terse\n---\nUSER-TERSE-BODY\n",
        );
        s.write(
            ".claude/output-styles/terse.md",
            "---\nname: Terse\ndescription: Short answers\n---\nTERSE-BODY one line answers.\n",
        );
        s.settings(json!({"outputStyle": "Terse"}));
        let (system, stderr) = system_prompt(&s, api, &[]);
        assert!(
            system.contains("# Output style: Terse\nTERSE-BODY one line answers."),
            "{api:?}: {system}"
        );
        assert!(!system.contains("USER-TERSE-BODY"), "{api:?}: {system}");
        assert!(!system.contains("# How to work"), "{api:?}: {system}");
        assert!(system.contains("# Environment"), "{api:?}: {system}");
        assert!(!stderr.contains("outputStyle"), "{api:?}: {stderr}");

        s.write(
            ".claude/output-styles/terse.md",
            "---\nname: Terse\nkeep-coding-instructions: true\n---\nTERSE-BODY kept.\n",
        );
        let (system, _) = system_prompt(&s, api, &[]);
        assert!(system.contains("TERSE-BODY kept."), "{api:?}: {system}");
        assert!(system.contains("# How to work"), "{api:?}: {system}");

        // Without the setting, rein's own prompt alone.
        s.settings(json!({}));
        let (system, _) = system_prompt(&s, api, &[]);
        assert!(!system.contains("Output style"), "{api:?}: {system}");
        assert!(system.contains("# How to work"), "{api:?}: {system}");
    }
}

#[test]
fn a_plugin_style_is_named_with_its_plugin_and_a_wrong_name_is_said_with_its_line() {
    let s = Sandbox::new("project", &[]);
    s.write(
        "plug/.claude-plugin/plugin.json",
        r#"{"name": "guard", "version": "1.0.0"}"#,
    );
    s.write(
        "plug/output-styles/loud.md",
        "---\nname: Loud\ndescription: Shouts\n---\nLOUD-STYLE-BODY answer in capitals.\n",
    );
    s.settings(json!({"outputStyle": "guard:Loud"}));
    let (system, _) = system_prompt(&s, Api::Anthropic, &["--plugin-dir", "plug"]);
    assert!(
        system.contains("# Output style: guard:Loud\nLOUD-STYLE-BODY"),
        "{system}"
    );

    // Claude Code 2.1.328 does not find it by its bare name either, and says nothing; rein
    // names the setting's file and line.
    s.write(
        ".claude/settings.json",
        "{\n  \"model\": \"x\",\n  \"outputStyle\": \"Loud\"\n}\n",
    );
    let (system, stderr) = system_prompt(&s, Api::Anthropic, &["--plugin-dir", "plug"]);
    assert!(!system.contains("LOUD-STYLE-BODY"), "{system}");
    let settings = s.path(".claude/settings.json");
    assert!(
        stderr.contains(&format!("{}:3", settings.display()))
            && stderr.contains("\"outputStyle\" names \"Loud\"")
            && stderr.contains("guard:Loud"),
        "{stderr}"
    );
}

#[test]
fn built_in_styles_keep_the_guidance_and_stream_json_reports_the_style() {
    let s = Sandbox::new("project", &[]);
    s.settings(json!({"outputStyle": "Explanatory"}));
    let (system, _) = system_prompt(&s, Api::Anthropic, &[]);
    assert!(system.contains("# Output style: Explanatory\n"), "{system}");
    assert!(system.contains("# How to work"), "{system}");

    // `init` reports the setting as written (Claude Code's `output_style`).
    let server = Loopback::start(Api::Anthropic, vec![Turn::text("ok")]);
    let mut cmd = s.rein();
    cmd.args(["-p", "hi", "--output-format", "stream-json", "--verbose"]);
    Api::Anthropic.point(&mut cmd, &server.url);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let init: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init line: {stdout}"));
    assert_eq!(init["output_style"], "Explanatory", "{init}");
}

#[test]
fn a_broken_style_file_is_named_by_validate_and_the_others_still_load() {
    let s = Sandbox::new("project", &[]);
    s.write(
        ".claude/output-styles/bad.md",
        "---\nname: Bad\nthis line is wrong\n---\nBody\n",
    );
    s.write(".claude/output-styles/good.md", "GOOD-BODY\n");
    s.settings(json!({"outputStyle": "good"}));
    let (system, stderr) = system_prompt(&s, Api::Anthropic, &[]);
    assert!(
        system.contains("# Output style: good\nGOOD-BODY"),
        "{system}"
    );
    let bad = s.path(".claude/output-styles/bad.md");
    assert!(stderr.contains(&format!("{}:3", bad.display())), "{stderr}");
    let out = s.rein().args(["hooks", "validate"]).output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains(&format!("{}:3", bad.display())) && all.contains("output style is skipped"),
        "{all}"
    );
}

/// For each recorded scenario: the same files and settings, then whether a style is on, its
/// name and body, and `init`'s `output_style` are Claude Code 2.1.328's.
#[test]
fn the_recorded_scenarios_choose_the_style_claude_code_chose() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cc-2.1.328");
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("output_styles.json")).unwrap())
            .unwrap();
    let scenarios = facts["scenarios"].as_object().unwrap();
    assert_eq!(scenarios.len(), 5);
    for (name, cc) in scenarios {
        let scenario: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("scenarios/{name}.json"))).unwrap(),
        )
        .unwrap();
        let s = Sandbox::new("project", &[]);
        for (rel, text) in scenario["files"].as_object().unwrap() {
            s.write(rel, text.as_str().unwrap());
        }
        s.settings(scenario["settings"].clone());
        let args: Vec<&str> = scenario["agent_args"]["rein"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let (system, _) = system_prompt(&s, Api::Anthropic, &args);
        let ours = system.find("# Output style: ").map(|i| {
            let rest = &system[i + "# Output style: ".len()..];
            rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
        });
        let theirs = cc["style_section"]
            .as_str()
            .map(|t| t.trim_start_matches("# Output Style: ").to_string());
        match (&ours, &theirs) {
            // A built-in style's body is rein's own text: the names agree.
            (Some(o), Some(t)) if name == "output_style_builtin" => {
                assert_eq!(o.lines().next(), t.lines().next(), "{name}")
            }
            _ => assert_eq!(ours, theirs, "{name}: {system}"),
        }

        let server = Loopback::start(Api::Anthropic, vec![Turn::text("ok")]);
        let mut cmd = s.rein();
        cmd.args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
            .args(&args);
        Api::Anthropic.point(&mut cmd, &server.url);
        let out = cmd.output().unwrap();
        let init = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["subtype"] == "init")
            .unwrap();
        assert_eq!(init["output_style"], cc["init_output_style"], "{name}");
    }
}
