//! The transcript rein writes, line by line against the one Claude Code 2.1.328 wrote on the
//! same scenario (`tests/fixtures/cc-2.1.328/transcripts/`, see its README): the same lines in
//! the same order, each with the same keys in the same order and values of the same types;
//! the values that do not vary between runs are equal. Claude Code's own machinery lines
//! (api-request, cost-state, …) are not in the fixtures. The differences that remain are
//! listed in [`KNOWN`], each with its reason.

use std::path::Path;

use serde_json::Value;

use super::replay::{Replay, run};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/cc-2.1.328/transcripts"
);

/// Differences left on purpose: `(where, what)`. `where` is a path as [`compare`] reports it,
/// `[*]` standing for a line number.
const KNOWN: &[(&str, &str)] = &[
    // Request bookkeeping of Claude Code's own: the index of the content block group, the
    // API's `request-id` header, a reference to its `api-request` line (which rein does not
    // write), its prompt-cache TTL and how long the tool input streamed. rein keeps none of
    // them.
    ("[*]", "missing apiBlockIndex"),
    ("[*]", "missing requestId"),
    ("[*]", "missing requestRef"),
    ("[*]", "missing promptCacheRequested"),
    ("[*]", "missing toolInputStreamMs"),
    // The API's `stop_details` is not read by rein's provider.
    ("[*].message", "missing stop_details"),
    // rein records the token counts the provider reported; Claude Code fills further fields
    // with its own defaults when the API leaves them out.
    ("[*].message.usage", "missing output_tokens_details"),
    ("[*].message.usage", "missing server_tool_use"),
    ("[*].message.usage", "missing service_tier"),
    ("[*].message.usage", "missing cache_creation"),
    ("[*].message.usage", "missing inference_geo"),
    ("[*].message.usage", "missing iterations"),
    ("[*].message.usage", "missing speed"),
    ("[*].message.usage", "missing fallback_credit"),
    // Stop feedback: rein records the exact blocks the model was sent (the feedback and the
    // reminder in one message), so that a resumed session sends them again unchanged; Claude
    // Code records the feedback text alone and the reminder in the attachment that follows.
    ("[*].message.content", "type string vs array"),
];

/// Values compared by type only: they differ from run to run or between the agents.
fn volatile(path: &str) -> bool {
    const KEYS: &[&str] = &[
        ".version",
        ".durationMs",
        ".message.id",
        ".message.model",
        ".requestedModel",
        // The branch `git init` made here (checked against git in `check`; the fixture's is
        // `master`, a machine's `init.defaultBranch` may say otherwise).
        ".gitBranch",
    ];
    KEYS.iter().any(|k| path.ends_with(k)) || path.contains(".message.usage.")
}

fn load(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// rein's transcript of the replay, normalized like the fixture.
fn ours(r: &Replay) -> Vec<Value> {
    let dir = r.sandbox.home.join(".claude/projects");
    let file = std::fs::read_dir(&dir)
        .expect("projects dir")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    let text = r.normalize(&std::fs::read_to_string(&file).unwrap());
    // ISO-8601 UTC with milliseconds, as Claude Code writes them.
    let ts = regex::Regex::new(r#""\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z""#).unwrap();
    let text = ts.replace_all(&text, "\"<TS>\"");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// `<UUID_7>` → `<UUID>`: the two runs number their uuids differently; the chain is checked
/// on its own.
fn unnumbered(v: &Value) -> Value {
    let re = regex::Regex::new(r"<UUID_\d+>").unwrap();
    serde_json::from_str(&re.replace_all(&v.to_string(), "<UUID>")).unwrap()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every difference between `cc` and `ours` under `path`: `(path, what)`.
fn compare(path: &str, cc: &Value, ours: &Value, out: &mut Vec<(String, String)>) {
    match (cc, ours) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                out.push((path.to_string(), format!("missing {k}")));
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push((path.to_string(), format!("extra {k}")));
            }
            let common_a: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
            let common_b: Vec<&String> = b.keys().filter(|k| a.contains_key(*k)).collect();
            if common_a != common_b {
                out.push((
                    path.to_string(),
                    format!("key order {common_a:?} vs {common_b:?}"),
                ));
            }
            for k in common_a {
                compare(&format!("{path}.{k}"), &a[k], &b[k], out);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push((
                    path.to_string(),
                    format!("length {} vs {}", a.len(), b.len()),
                ));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ if kind(cc) != kind(ours) => {
            out.push((
                path.to_string(),
                format!("type {} vs {}", kind(cc), kind(ours)),
            ));
        }
        _ if !volatile(path) && cc != ours => {
            out.push((path.to_string(), format!("value {cc} vs {ours}")));
        }
        _ => {}
    }
}

/// Each line's `parentUuid` is the uuid of the line before it (null on the first), and a
/// tool-result line's `sourceToolAssistantUUID` is the uuid of the assistant line that asked.
fn assert_chain(name: &str, who: &str, lines: &[Value]) {
    for (i, line) in lines.iter().enumerate() {
        let expected = if i == 0 {
            Value::Null
        } else {
            lines[i - 1]["uuid"].clone()
        };
        assert_eq!(line["parentUuid"], expected, "{name} {who} line {i}: chain");
        if let Some(source) = line.get("sourceToolAssistantUUID") {
            let id = &line["message"]["content"][0]["tool_use_id"];
            let asked = lines[..i].iter().rev().find(|l| {
                l["type"] == "assistant"
                    && l["message"]["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["id"] == *id))
            });
            assert_eq!(
                Some(source),
                asked.map(|l| &l["uuid"]),
                "{name} {who} line {i}: sourceToolAssistantUUID"
            );
        }
    }
}

fn check(name: &str) {
    let cc = load(&Path::new(FIXTURES).join(format!("{name}.jsonl")));
    let r = run(name, &[]);
    assert!(
        r.output.status.success(),
        "{}",
        String::from_utf8_lossy(&r.output.stderr)
    );
    let ours = ours(&r);
    let branch = std::process::Command::new("git")
        .args(["symbolic-ref", "--short", "HEAD"])
        .current_dir(&r.sandbox.project)
        .output()
        .expect("git");
    let branch = String::from_utf8_lossy(&branch.stdout).trim().to_string();
    assert!(!branch.is_empty());
    for (i, line) in ours.iter().enumerate() {
        assert_eq!(
            line["gitBranch"],
            branch.as_str(),
            "{name} line {i}: gitBranch"
        );
    }
    assert!(cc.iter().all(|l| l["gitBranch"] == "master"));
    assert_chain(name, "Claude Code", &cc);
    assert_chain(name, "rein", &ours);
    let label = |v: &Value| {
        format!(
            "{} {}",
            v["type"].as_str().unwrap_or("?"),
            v["attachment"]["type"]
                .as_str()
                .or(v["subtype"].as_str())
                .unwrap_or("")
        )
    };
    assert_eq!(
        cc.iter().map(label).collect::<Vec<_>>(),
        ours.iter().map(label).collect::<Vec<_>>(),
        "{name}: the lines and their order"
    );
    let mut diffs = Vec::new();
    for (i, (a, b)) in cc.iter().zip(&ours).enumerate() {
        compare(
            &format!("[{i}]"),
            &unnumbered(a),
            &unnumbered(b),
            &mut diffs,
        );
    }
    let star = regex::Regex::new(r"\[\d+\]").unwrap();
    let unexpected: Vec<String> = diffs
        .iter()
        .filter(|(path, what)| {
            let general = star.replace_all(path, "[*]");
            let what = what.split(" \"").next().unwrap_or(what);
            !KNOWN
                .iter()
                .any(|(p, w)| *p == general && what.starts_with(w))
        })
        .map(|(p, w)| format!("{p}: {w}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{name}: differences from Claude Code 2.1.328 not listed as known:\n{}",
        unexpected.join("\n")
    );
}

/// A prompt and a text reply in a fresh git repository.
#[test]
fn transcript_plain_prompt_and_reply() {
    check("tr_plain");
}

/// Context from SessionStart, UserPromptSubmit and PostToolUse hooks, a Bash call and its
/// result, a Stop hook that blocks once.
#[test]
fn transcript_context_hooks_tool_call_and_stop_block() {
    check("tr_hooks");
}

/// A UserPromptSubmit hook's plain stdout, a PreToolUse hook that blocks (exit 2), a quiet
/// PreToolUse hook, a Read call.
#[test]
fn transcript_blocking_hook_and_read() {
    check("tr_block");
}
