//! The pure parts of http hooks, mcp_tool hooks and MCP configuration: URL patterns, header
//! substitution, credential names, `input` templating, `${VAR}` expansion, config errors.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;

use crate::hooks::http::{HttpHookPolicy, interpolate_header, is_credential, url_matches};
use crate::hooks::mcp_tool::template;
use crate::mcp::config::{Scope, Transport, expand_vars, parse_text};

#[test]
fn allowed_url_patterns_match_the_whole_url_with_star_wildcards() {
    assert!(url_matches(
        "https://p.example.com/v1/decide",
        "https://p.example.com/*"
    ));
    assert!(url_matches(
        "https://p.example.com/",
        "https://p.example.com/*"
    ));
    assert!(!url_matches(
        "https://p.example.com.evil.net/x",
        "https://p.example.com/*"
    ));
    assert!(!url_matches(
        "http://p.example.com/x",
        "https://p.example.com/*"
    ));
    assert!(url_matches(
        "https://a.example.com/x",
        "https://*.example.com/*"
    ));
    assert!(url_matches("https://exact/", "https://exact/"));
    assert!(!url_matches("https://exact/more", "https://exact/"));
    assert!(url_matches(
        "http://127.0.0.1:8080/h",
        "http://127.0.0.1:*/h"
    ));
    let none = HttpHookPolicy {
        allowed_urls: Some(Vec::new()),
        allowed_env_vars: None,
    };
    assert!(
        none.url_refusal("https://x/").is_some(),
        "[] allows nothing"
    );
    assert!(
        HttpHookPolicy::default()
            .url_refusal("https://x/")
            .is_none()
    );
}

#[test]
fn headers_substitute_only_allowed_names_and_strip_line_breaks() {
    let allowed: HashSet<String> = ["TOKEN", "ANTHROPIC_API_KEY", "NL"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let env = |name: &str| match name {
        "TOKEN" => Some("t0k".to_string()),
        "ANTHROPIC_API_KEY" => Some("sk-secret".to_string()),
        "OTHER" => Some("nope".to_string()),
        "NL" => Some("a\r\nb\0c".to_string()),
        _ => None,
    };
    assert_eq!(
        interpolate_header("Bearer $TOKEN", &allowed, env),
        "Bearer t0k"
    );
    assert_eq!(
        interpolate_header("${TOKEN}-${TOKEN}", &allowed, env),
        "t0k-t0k"
    );
    assert_eq!(interpolate_header("$ANTHROPIC_API_KEY", &allowed, env), "");
    assert_eq!(interpolate_header("[$OTHER]", &allowed, env), "[]");
    assert_eq!(interpolate_header("$NL", &allowed, env), "abc");
    // Lower-case names are not variables; a lone `$` or an unclosed brace stays.
    assert_eq!(
        interpolate_header("$token $ ${TOKEN", &allowed, env),
        "$token $ ${TOKEN"
    );
    assert_eq!(interpolate_header("$UNSET_BUT_ALLOWED", &allowed, env), "");
}

#[test]
fn credential_names() {
    for name in [
        "ANTHROPIC_API_KEY",
        "INPUT_ANTHROPIC_API_KEY",
        "openai_api_key",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_VALUE_0",
        "CARGO_REGISTRIES_MY_REG_TOKEN",
    ] {
        assert!(is_credential(name), "{name}");
    }
    for name in [
        "POLICY_TOKEN",
        "HOME",
        "GIT_CONFIG_KEY_",
        "CARGO_REGISTRIES__TOKEN",
    ] {
        assert!(!is_credential(name), "{name}");
    }
}

#[test]
fn mcp_tool_input_templating() {
    let hook_input = json!({
        "cwd": "/p",
        "tool_input": {"file_path": "/p/a.rs", "n": 3, "obj": {"k": [1, 2]}, "nothing": null},
    });
    let input = json!({
        "path": "${tool_input.file_path}",
        "mixed": "in ${cwd}: ${tool_input.n} ${tool_input.obj} [${tool_input.missing}] [${tool_input.nothing}]",
        "nested": [{"deep": "${cwd}"}],
        "number": 7,
        "broken": "${not closed",
    });
    assert_eq!(
        template(&input, &hook_input),
        json!({
            "path": "/p/a.rs",
            "mixed": "in /p: 3 {\"k\":[1,2]} [] []",
            "nested": [{"deep": "/p"}],
            "number": 7,
            "broken": "${not closed",
        })
    );
}

#[test]
fn config_variables_expand_with_defaults_and_missing_ones_are_kept_and_reported() {
    let env = |name: &str| (name == "SET").then(|| "v".to_string());
    let mut missing = Vec::new();
    assert_eq!(
        expand_vars("${SET}/${UNSET:-d}/${GONE}/$SET", &env, &mut missing),
        "v/d/${GONE}/$SET"
    );
    assert_eq!(missing, ["GONE"]);
}

#[test]
fn an_mcp_json_syntax_error_has_its_position() {
    let mut problems = Vec::new();
    let doc = parse_text(
        "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}",
        Arc::from(".mcp.json"),
        &mut problems,
    );
    assert!(doc.is_none());
    assert_eq!(problems.len(), 1);
    let text = problems[0].to_string();
    assert!(text.starts_with(".mcp.json:2:"), "{text}");
}

#[test]
fn server_entries_are_checked_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        json!({"mcpServers": {
            "ok": {"command": "srv", "args": ["--x"], "env": {"A": "1"}},
            "web": {"type": "http", "url": "https://h/mcp", "headers": {"X": "y"}},
            "old": {"type": "sse", "url": "https://h/sse"},
            "nocmd": {"args": []},
            "urlonly": {"url": "https://h"},
            "weird": {"type": "ws", "url": "wss://h"},
            "badargs": {"command": "x", "args": "not a list"},
        }})
        .to_string(),
    )
    .unwrap();
    let sources = crate::mcp::config::Sources {
        project_dir: dir.path().to_path_buf(),
        user_file: dir.path().join("no-claude.json"),
        flag_configs: Vec::new(),
        strict: false,
    };
    let loaded = crate::mcp::config::load(&sources, &|_| None);
    let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok", "web", "old"]);
    assert!(loaded.servers.iter().all(|s| s.scope == Scope::Project));
    assert!(matches!(
        loaded.servers[2].transport,
        Transport::Http { sse: true, .. }
    ));
    let problems: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"nocmd\" skipped: a stdio server needs a \"command\""))
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"urlonly\" skipped: it has a \"url\" but no \"type\""))
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"weird\" skipped: unknown transport \"ws\""))
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"badargs\" skipped: \"args\" must be an array of strings"))
    );

    // --strict-mcp-config: only the flag's servers.
    let strict = crate::mcp::config::Sources {
        flag_configs: vec![json!({"mcpServers": {"f": {"command": "y"}}}).to_string()],
        strict: true,
        ..sources
    };
    let loaded = crate::mcp::config::load(&strict, &|_| None);
    let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["f"]);
    assert_eq!(loaded.servers[0].scope, Scope::Dynamic);
}
