//! Subagent definitions (front matter, `--agents`, discovery order) and prompt-hook verdicts.

use std::path::Path;
use std::time::Duration;

use crate::agent::subagent::{DefinitionSource, discover, parse_agents_flag, parse_definition};
use crate::hooks::prompt_hook::parse_verdict;

fn parse(text: &str) -> Result<crate::agent::subagent::AgentDefinition, String> {
    parse_definition(Path::new("/p/a.md"), text).map_err(|e| e.to_string())
}

#[test]
fn front_matter_forms_claude_code_users_write() {
    let d = parse("---\nname: rev\ndescription: \"Reviews: diffs\"\ntools: Read, Grep\nmodel: inherit\ncolor: blue\n---\n\nBody line.\n")
        .unwrap();
    assert_eq!(d.name, "rev");
    assert_eq!(d.description, "Reviews: diffs");
    assert_eq!(d.tools, Some(vec!["Read".to_string(), "Grep".to_string()]));
    assert_eq!(d.model, None, "inherit means the session's model");
    assert_eq!(d.prompt, "Body line.");
    assert_eq!(d.source, DefinitionSource::File("/p/a.md".into()));

    let d = parse("---\nname: x\ndescription: d\ntools:\n  - Bash\n  - Read\ntimeout: 1.5\n---\n")
        .unwrap();
    assert_eq!(d.tools, Some(vec!["Bash".to_string(), "Read".to_string()]));
    assert_eq!(d.timeout, Some(Duration::from_millis(1500)));

    let d = parse("---\nname: x\ndescription: d\ntools: [Read, 'Glob']\n---\n").unwrap();
    assert_eq!(d.tools, Some(vec!["Read".to_string(), "Glob".to_string()]));
    let d = parse("---\nname: x\ndescription: d\ntools: \"*\"\n---\n").unwrap();
    assert_eq!(d.tools, None);
}

#[test]
fn bad_front_matter_names_the_line() {
    let cases = [
        (
            "name: x\n",
            "/p/a.md:1: expected front matter starting with a `---` line",
        ),
        (
            "---\nname: x\ndescription: d\n",
            "/p/a.md:3: front matter is not closed",
        ),
        (
            "---\nname x\n---\n",
            "/p/a.md:2: expected `key: value`, found `name x`",
        ),
        (
            "---\ndescription: d\n---\n",
            "/p/a.md:1: front matter has no `name`",
        ),
        (
            "---\nname: x\n---\n",
            "/p/a.md:1: front matter has no `description`",
        ),
        (
            "---\nname: x\ndescription: d\ntimeout: soon\n---\n",
            "/p/a.md:4: `timeout` must be a positive number",
        ),
        (
            "---\nname: x\n- stray\ndescription: d\n---\n",
            "/p/a.md:3: a list item",
        ),
    ];
    for (text, expected) in cases {
        let err = parse(text).unwrap_err();
        assert!(err.starts_with(expected), "{text:?}: {err}");
        assert!(err.ends_with("agent definition skipped"), "{err}");
    }
}

#[test]
fn agents_flag_and_discovery_order() {
    let defs = parse_agents_flag(
        r#"{"a": {"description": "d", "prompt": "p", "tools": ["Read"], "model": "m"}}"#,
    )
    .unwrap();
    assert_eq!(defs[0].name, "a");
    assert_eq!(defs[0].model.as_deref(), Some("m"));
    assert_eq!(defs[0].source, DefinitionSource::Flag);
    assert!(
        parse_agents_flag(r#"{"a": {"prompt": "p"}}"#)
            .unwrap_err()
            .to_string()
            .contains("`description`")
    );
    assert!(parse_agents_flag("[1]").is_err());
    assert!(
        parse_agents_flag("{")
            .unwrap_err()
            .to_string()
            .starts_with("--agents:1: invalid JSON")
    );

    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let write = |dir: &Path, name: &str, desc: &str| {
        let d = dir.join(".claude/agents");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(format!("{name}.md")),
            format!("---\nname: {name}\ndescription: {desc}\n---\n"),
        )
        .unwrap();
    };
    write(home.path(), "same", "from home");
    write(home.path(), "homeonly", "h");
    write(project.path(), "same", "from project");
    let (defs, errors) = discover(
        home.path(),
        project.path(),
        &[],
        Some(r#"{"Explore": {"description": "mine", "prompt": "p"}}"#),
    );
    assert!(errors.is_empty(), "{errors:?}");
    let find = |n: &str| defs.iter().find(|d| d.name == n).unwrap();
    assert_eq!(find("same").description, "from project");
    assert_eq!(find("homeonly").description, "h");
    assert_eq!(
        find("Explore").description,
        "mine",
        "the flag replaces a built-in"
    );
    assert_eq!(defs.iter().filter(|d| d.name == "same").count(), 1);
}

#[test]
fn verdicts_are_read_strictly() {
    let v = parse_verdict(r#"{"ok": false, "reason": "no"}"#).unwrap();
    assert!(!v.ok);
    assert_eq!(v.reason.as_deref(), Some("no"));
    assert!(parse_verdict("```json\n{\"ok\": true}\n```").unwrap().ok);
    assert!(
        parse_verdict(r#"{"ok": false, "impossible": true}"#)
            .unwrap()
            .impossible
    );
    assert_eq!(parse_verdict("Sure, fine.").unwrap_err(), "not JSON");
    assert_eq!(
        parse_verdict(r#"{"ok": "yes"}"#).unwrap_err(),
        "no boolean \"ok\""
    );
    assert_eq!(parse_verdict("[true]").unwrap_err(), "not a JSON object");
}
