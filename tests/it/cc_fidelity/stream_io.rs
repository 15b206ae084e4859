//! `--include-partial-messages` and `--input-format stream-json` against Claude Code 2.1.328.
//! Each case of `tests/fixtures/cc-2.1.328/stream_io/cases.json` was run against the real
//! Claude Code by `record.py` there (its header says how); `<case>/` holds what it wrote
//! (stdout lines, stderr, exit code, the UserPromptSubmit stdins, the main-loop requests). The
//! tests run rein with the same arguments, stdin and scripted model turns (the replay's fake
//! Anthropic API, streaming as the oracle's does) and compare.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::replay::{FakeApi, Normalizer};
use crate::harness::{LEAKY_VARS, Sandbox, home_vars, rein_bin};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/cc-2.1.328/stream_io"
);

/// The recording hook command of `cases.json` and `record.py`.
const CASE_RECORDER: &str =
    r#"cat >> "$CLAUDE_PROJECT_DIR"/ups.jsonl; echo >> "$CLAUDE_PROJECT_DIR"/ups.jsonl"#;

/// What Claude Code did in one case.
struct Recorded {
    lines: Vec<Value>,
    stderr: String,
    code: i32,
    ups: Vec<Value>,
    requests: Vec<Value>,
}

fn case(name: &str) -> Value {
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/cases.json")).unwrap())
            .unwrap();
    cases
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}"))
        .clone()
}

fn recorded(name: &str) -> Recorded {
    let read = |file: &str| std::fs::read_to_string(format!("{DIR}/{name}/{file}")).unwrap();
    let jsonl = |text: String| -> Vec<Value> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    Recorded {
        lines: jsonl(read("stdout.jsonl")),
        stderr: read("stderr.txt"),
        code: read("exit_code").trim().parse().unwrap(),
        ups: jsonl(read("ups.jsonl")),
        requests: serde_json::from_str::<Value>(&read("requests.json"))
            .unwrap()
            .as_array()
            .cloned()
            .unwrap_or_default(),
    }
}

/// One thing written to rein's stdin.
enum Feed {
    /// A line (a JSON value, or raw text).
    Line(String),
    /// Wait until a stdout line contains this text (at most 30 s).
    WaitFor(&'static str),
    /// Wait this long.
    Sleep(Duration),
}

/// What rein did.
struct Ran {
    lines: Vec<Value>,
    stderr: String,
    code: i32,
    /// stdin of every hook run (UserPromptSubmit, SessionStart, SessionEnd), in order.
    hooks: Vec<Value>,
    requests: Vec<Value>,
}

impl Ran {
    fn ups(&self) -> Vec<&Value> {
        self.hooks
            .iter()
            .filter(|h| h["hook_event_name"] == "UserPromptSubmit")
            .collect()
    }
}

/// The case's stdin, as `Feed`s (its `sleep` items become waits).
fn case_feed(c: &Value) -> Vec<Feed> {
    c["stdin"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| match item {
            Value::String(s) => Feed::Line(s.clone()),
            Value::Object(m) if m.contains_key("sleep") => {
                Feed::Sleep(Duration::from_secs_f64(m["sleep"].as_f64().unwrap()))
            }
            other => Feed::Line(other.to_string()),
        })
        .collect()
}

/// Runs rein with case `name`'s arguments (Claude Code's; rein takes them all) and model
/// turns, feeding `feed` to its stdin, then closing it.
fn run(name: &str, feed: Vec<Feed>, extra: &[&str]) -> Ran {
    let c = case(name);
    let sandbox = Sandbox::new("project", &[]);
    let project = sandbox.project.clone();
    let log = project.join("hooks.jsonl");
    let record = format!(
        "cat >> '{0}'; echo >> '{0}'",
        log.to_string_lossy().replace('\'', "'\\''")
    );
    // The case's hooks (record.py's UserPromptSubmit recorder unless the case replaces them),
    // with `log` in place of the case's `ups.jsonl`.
    let mut hooks = c.pointer("/settings/hooks").cloned().unwrap_or_else(|| {
        json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": CASE_RECORDER}]}]})
    });
    for groups in hooks.as_object_mut().unwrap().values_mut() {
        for group in groups.as_array_mut().unwrap() {
            for hook in group["hooks"].as_array_mut().unwrap() {
                let command = hook["command"]
                    .as_str()
                    .unwrap()
                    .replace(CASE_RECORDER, &record);
                hook["command"] = json!(command);
            }
        }
    }
    sandbox.settings(json!({ "hooks": hooks }));
    let api = FakeApi::start(&json!({"turns": c["turns"]}), &project);
    let mut cmd = Command::new(rein_bin());
    cmd.current_dir(&project)
        .envs(home_vars(&sandbox.home))
        .stdin(if c.get("stdin").is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in LEAKY_VARS {
        cmd.env_remove(var);
    }
    cmd.env("ANTHROPIC_BASE_URL", &api.base)
        .env("ANTHROPIC_API_KEY", "sk-fake")
        .env("IS_SANDBOX", "1")
        .env("REIN_MAX_RETRIES", "0")
        .env_remove("CLAUDECODE")
        .env_remove("CLAUDE_CODE_ENTRYPOINT");
    for a in c["args"].as_array().unwrap() {
        cmd.arg(a.as_str().unwrap());
    }
    cmd.args(["--provider", "anthropic", "--model", "claude-opus-5-5"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(extra);
    let mut child = cmd.spawn().expect("run rein");
    let out = Arc::new((Mutex::new(Vec::<String>::new()), Condvar::new()));
    let reader = {
        let out = Arc::clone(&out);
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                out.0.lock().unwrap().push(line);
                out.1.notify_all();
            }
        })
    };
    let err_reader = {
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
            text
        })
    };
    if let Some(mut stdin) = child.stdin.take() {
        for item in feed {
            match item {
                Feed::Line(line) => {
                    // rein may have ended already (a bad line before): not this test's failure.
                    let _ = writeln!(stdin, "{line}");
                    let _ = stdin.flush();
                }
                Feed::Sleep(d) => std::thread::sleep(d),
                Feed::WaitFor(text) => {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    let mut lines = out.0.lock().unwrap();
                    while !lines.iter().any(|l| l.contains(text)) {
                        let left = deadline.saturating_duration_since(Instant::now());
                        assert!(!left.is_zero(), "no stdout line with {text:?}: {lines:#?}");
                        lines = out.1.wait_timeout(lines, left).unwrap().0;
                    }
                }
            }
        }
        drop(stdin);
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let mut norm = Normalizer::new(&project, &sandbox.home);
    let raw = out.0.lock().unwrap().clone();
    let parsed: Vec<Value> = raw
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| Value::String(l.clone())))
        .collect();
    let hooks_raw: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    norm.session = parsed
        .iter()
        .chain(&hooks_raw)
        .find_map(|v| v["session_id"].as_str().map(str::to_string));
    let fix = |v: Value| -> Value {
        let text = norm.text(&v.to_string());
        let text = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
            .unwrap()
            .replace_all(&text, "<TS>")
            .into_owned();
        let text = regex::Regex::new(r"msg_fid_\d+")
            .unwrap()
            .replace_all(&text, "<MSG_ID>")
            .into_owned();
        serde_json::from_str(&text).unwrap()
    };
    Ran {
        lines: parsed.into_iter().map(fix).collect(),
        stderr,
        code: status.code().unwrap_or(-1),
        hooks: hooks_raw.into_iter().map(fix).collect(),
        requests: api.requests(),
    }
}

/// `type`, `type:subtype`, or `stream_event:<event type>` of a line.
fn kind(v: &Value) -> String {
    let t = v["type"].as_str().unwrap_or("?");
    if t == "stream_event" {
        return format!(
            "stream_event:{}",
            v["event"]["type"].as_str().unwrap_or("?")
        );
    }
    match v["subtype"].as_str() {
        Some(s) => format!("{t}:{s}"),
        None => t.to_string(),
    }
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The kinds of lines, hook event lines included (SessionStart's come without
/// `--include-hook-events`, as in Claude Code).
fn kinds(lines: &[Value]) -> Vec<String> {
    lines.iter().map(kind).collect()
}

/// The `(subtype, is_error, num_turns, result)` of each result line.
fn results(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "result")
        .map(|l| json!([l["subtype"], l["is_error"], l["num_turns"], l["result"]]))
        .collect()
}

/// Each result line's numbering (`[queued_turn_count, result_index]`) is Claude Code's, and
/// its keys after `permission_denials` (the last key the two order alike) come in Claude
/// Code's order.
fn assert_numbered(ours: &[Value], cc: &[Value]) {
    let numbering = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "result")
            .map(|l| json!([l["queued_turn_count"], l["result_index"]]))
            .collect()
    };
    let (a, b) = (numbering(ours), numbering(cc));
    assert!(
        !b.is_empty() && b.iter().all(|n| n[0].is_u64() && n[1].is_u64()),
        "{b:?}"
    );
    assert_eq!(a, b);
    let results = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "result")
            .cloned()
            .collect()
    };
    for (o, c) in results(ours).iter().zip(&results(cc)) {
        let ours_keys = keys(o);
        let after = ours_keys
            .iter()
            .position(|k| k == "permission_denials")
            .map_or(&ours_keys[..], |i| &ours_keys[i + 1..]);
        let theirs: Vec<String> = keys(c).into_iter().filter(|k| after.contains(k)).collect();
        assert_eq!(after, &theirs[..], "{o}");
    }
}

/// The user and assistant texts of a request's messages, in order (tool blocks by type;
/// reminders, system messages and empty texts left out).
fn conversation(messages: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        let role = m["role"].as_str().unwrap_or("");
        if role == "system" {
            continue;
        }
        let blocks = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(b) => b.clone(),
            _ => Vec::new(),
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("text") => {
                    let t = b["text"].as_str().unwrap_or("").trim();
                    if !t.is_empty() && !t.starts_with("<system-reminder>") {
                        out.push(format!("{role}: {t}"));
                    }
                }
                Some(other) => out.push(format!("{role}: [{other}]")),
                None => {}
            }
        }
    }
    out
}

/// The `event` of each `stream_event` line.
fn events(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "stream_event")
        .map(|l| l["event"].clone())
        .collect()
}

/// `--include-partial-messages`: rein writes Claude Code's `status` line before each request
/// and a `stream_event` line per event of the reply — the same events, in the same order, with
/// the same keys (`ttft_ms` on `message_start`, `api_message_id` on every one); `ping` is not
/// passed on. Text and tool-use deltas both.
#[test]
fn partial_messages_match_claude_code() {
    let cc = recorded("partial_text_tool");
    let c = case("partial_text_tool");
    let ours = run("partial_text_tool", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    assert_numbered(&ours.lines, &cc.lines);
    assert_eq!(events(&ours.lines), events(&cc.lines));
    let deltas: Vec<Value> = events(&cc.lines)
        .into_iter()
        .filter(|e| e["type"] == "content_block_delta")
        .map(|e| e["delta"]["type"].clone())
        .collect();
    assert!(deltas.contains(&json!("text_delta")) && deltas.contains(&json!("input_json_delta")));
    // Claude Code's keys of each line kind; `thinking_display` (how Claude Code shows
    // thinking) has no counterpart in rein.
    for line in &cc.lines {
        let k = kind(line);
        if !(k.starts_with("stream_event") || k == "system:status") {
            continue;
        }
        let mut want = keys(line);
        want.retain(|key| key != "thinking_display");
        let ours_line = ours
            .lines
            .iter()
            .find(|l| kind(l) == k)
            .unwrap_or_else(|| panic!("rein wrote no {k}"));
        assert_eq!(keys(ours_line), want, "{k}");
        assert_eq!(ours_line["parent_tool_use_id"], line["parent_tool_use_id"]);
    }
    let status = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| kind(l) == "system:status")
            .map(|l| l["status"].clone())
            .collect()
    };
    assert_eq!(status(&ours.lines), status(&cc.lines));
    // Each request's status line comes before its events.
    let order: Vec<String> = ours
        .lines
        .iter()
        .map(kind)
        .filter(|k| k == "system:status" || k == "stream_event:message_start")
        .collect();
    assert_eq!(
        order,
        [
            "system:status",
            "stream_event:message_start",
            "system:status",
            "stream_event:message_start"
        ]
    );
    assert_eq!(results(&ours.lines), results(&cc.lines));
}

/// Without the flag, no `stream_event` or `status` line (as in every other fixture).
#[test]
fn no_partial_messages_without_the_flag() {
    let ours = run(
        "input_two_turns",
        vec![Feed::Line(
            json!({"type": "user", "message": {"role": "user", "content": "go"}}).to_string(),
        )],
        &[],
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert!(
        ours.lines
            .iter()
            .all(|l| l["type"] != "stream_event" && l["subtype"] != "status"),
        "{:#?}",
        ours.lines
    );
}

/// The flag checks Claude Code makes, with its texts and exit code 1: partial messages need
/// `-p` and stream-json output; stream-json input needs stream-json output.
#[test]
fn flag_errors_match_claude_code() {
    for name in [
        "partial_text_format",
        "partial_json_format",
        "input_needs_stream_output",
        "input_json_output",
    ] {
        let cc = recorded(name);
        let c = case(name);
        let ours = run(name, case_feed(&c), &[]);
        assert_eq!(ours.code, cc.code, "{name}");
        assert_eq!(ours.stderr, cc.stderr, "{name}");
        assert!(ours.lines.is_empty(), "{name}: {:?}", ours.lines);
    }
}

/// `--replay-user-messages` without stream-json input: Claude Code's error (its text from
/// its binary, `strings.txt`).
#[test]
fn replay_needs_stream_json_both_ways() {
    let ours = run(
        "partial_text_format",
        Vec::new(),
        &["--replay-user-messages"],
    );
    // The partial-messages check comes after the replay check in Claude Code.
    assert_eq!(ours.code, 1);
    assert_eq!(
        ours.stderr,
        "Error: --replay-user-messages requires both --input-format=stream-json and --output-format=stream-json.\n"
    );
}

/// Claude Code requires `--verbose` with `-p --output-format stream-json`; rein does not
/// (docs/differences.md): the same command line without it streams.
#[test]
fn partial_messages_without_verbose_work_in_rein() {
    let cc = recorded("partial_no_verbose");
    assert_eq!(cc.code, 1);
    assert!(cc.stderr.contains("requires --verbose"));
    let ours = run("partial_no_verbose", Vec::new(), &[]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert!(ours.lines.iter().any(|l| l["type"] == "stream_event"));
}

/// Two user messages on stdin (content as a string, then as blocks): two turns of one
/// session — `init`, `assistant`, `result` each, UserPromptSubmit once per message with the
/// message's text, the second request holds the whole conversation, SessionStart once and
/// SessionEnd (`other`) at the end of stdin.
#[test]
fn stream_json_input_runs_a_turn_per_message() {
    let cc = recorded("input_two_turns");
    let c = case("input_two_turns");
    let ours = run("input_two_turns", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    assert_eq!(kinds(&ours.lines), kinds(&cc.lines));
    assert_eq!(results(&ours.lines), results(&cc.lines));
    assert_numbered(&ours.lines, &cc.lines);
    let events = |hooks: &[Value]| -> Vec<String> {
        hooks
            .iter()
            .map(|h| {
                format!(
                    "{} {}",
                    h["hook_event_name"].as_str().unwrap_or(""),
                    h.get("prompt")
                        .or(h.get("source"))
                        .or(h.get("reason"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            })
            .collect()
    };
    assert_eq!(events(&ours.hooks), events(&cc.ups));
    let last = ours.requests.last().unwrap()["messages"]
        .as_array()
        .cloned()
        .unwrap();
    let cc_last = cc.requests.last().unwrap().as_array().cloned().unwrap();
    assert_eq!(conversation(&last), conversation(&cc_last));
    // One session: every line and hook names the same one.
    assert!(
        ours.lines
            .iter()
            .filter_map(|l| l["session_id"].as_str())
            .all(|s| s == "<SESSION>")
    );
    assert_eq!(ours.ups().len(), 2);
}

/// `--replay-user-messages`: each message comes back as a `user` line with `isReplay`, after
/// the turn's `init` and before its reply, with Claude Code's keys.
#[test]
fn replayed_user_messages_match_claude_code() {
    let cc = recorded("input_replay");
    let c = case("input_replay");
    let ours = run("input_replay", case_feed(&c), &[]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(kinds(&ours.lines), kinds(&cc.lines));
    assert_numbered(&ours.lines, &cc.lines);
    let replays = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["isReplay"] == true)
            .cloned()
            .collect()
    };
    let (a, b) = (replays(&ours.lines), replays(&cc.lines));
    assert_eq!(a.len(), 2);
    for (ours, cc) in a.iter().zip(&b) {
        assert_eq!(keys(ours), keys(cc));
        assert_eq!(ours["message"], cc["message"]);
    }
}

/// Lines rein and Claude Code both pass over: blank lines, an unknown `type`, a message whose
/// content is neither a string nor blocks (rein says so on stderr); the other messages each
/// get their turn.
#[test]
fn ignored_lines_match_claude_code() {
    for name in [
        "input_blank_line",
        "input_unknown_type",
        "input_content_number",
    ] {
        let cc = recorded(name);
        let c = case(name);
        let ours = run(name, case_feed(&c), &[]);
        assert_eq!(ours.code, cc.code, "{name}: {}", ours.stderr);
        assert_eq!(kinds(&ours.lines), kinds(&cc.lines), "{name}");
        assert_eq!(results(&ours.lines), results(&cc.lines), "{name}");
        assert_numbered(&ours.lines, &cc.lines);
        let prompts =
            |ups: Vec<&Value>| -> Vec<Value> { ups.iter().map(|h| h["prompt"].clone()).collect() };
        assert_eq!(
            prompts(ours.ups()),
            prompts(cc.ups.iter().collect()),
            "{name}"
        );
    }
    let ours = run(
        "input_content_number",
        case_feed(&case("input_content_number")),
        &[],
    );
    assert!(
        ours.stderr.contains("stdin line 1:") && ours.stderr.contains("skipped"),
        "{}",
        ours.stderr
    );
}

/// A line that is not JSON: Claude Code exits 1; so does rein, naming the stdin line and what
/// is wrong — but the turn of the message before it finishes and keeps its output (Claude
/// Code's is lost), and no later message runs.
#[test]
fn a_malformed_line_is_an_error_naming_the_line_and_nothing_before_it_is_lost() {
    let cc = recorded("input_malformed");
    assert_eq!(cc.code, 1);
    assert!(cc.lines.is_empty());
    let c = case("input_malformed");
    let ours = run("input_malformed", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code);
    assert!(
        ours.stderr.contains("Error: stdin line 2: not valid JSON"),
        "{}",
        ours.stderr
    );
    assert!(!ours.stderr.contains("panicked"));
    assert_eq!(
        results(&ours.lines),
        [json!(["success", false, 1, "answer one"])]
    );
    let prompts: Vec<&Value> = ours.ups().iter().map(|h| &h["prompt"]).collect();
    assert_eq!(prompts, [&json!("first prompt")]);
}

/// A user message without `role: "user"` (none, or another): Claude Code's error text, exit
/// 1, no turn; rein adds the stdin line.
#[test]
fn a_message_without_the_user_role_is_an_error() {
    for name in ["input_no_role", "input_no_message", "input_assistant_role"] {
        let cc = recorded(name);
        let c = case(name);
        let ours = run(name, case_feed(&c), &[]);
        assert_eq!(ours.code, cc.code, "{name}");
        let cc_text = cc.stderr.trim().trim_start_matches("Error: ");
        assert_eq!(
            ours.stderr.trim(),
            format!("Error: stdin line 1: {cc_text}"),
            "{name}"
        );
        assert!(ours.ups().is_empty(), "{name}");
        assert!(results(&ours.lines).is_empty(), "{name}");
    }
}

/// No message at all: no output line, SessionStart and SessionEnd still fire, exit 0.
#[test]
fn empty_stdin_runs_no_turn() {
    let cc = recorded("input_empty");
    let ours = run("input_empty", Vec::new(), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    assert_eq!(kinds(&ours.lines), kinds(&cc.lines));
    let events: Vec<&Value> = ours.hooks.iter().map(|h| &h["hook_event_name"]).collect();
    assert_eq!(events, [&json!("SessionStart"), &json!("SessionEnd")]);
    assert_eq!(ours.hooks[1]["reason"], cc.ups[1]["reason"]);
}

/// stdin closes while the turn's Bash call still runs: the turn finishes (the call's output
/// reaches the model, the reply and the result are written), exit 0.
#[test]
fn end_of_stdin_mid_turn_lets_the_turn_finish() {
    let cc = recorded("input_eof_mid_turn");
    let c = case("input_eof_mid_turn");
    let ours = run("input_eof_mid_turn", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    // Claude Code's `task_*` lines (its background-task bookkeeping) have no counterpart.
    let without_tasks = |lines: &[Value]| -> Vec<String> {
        kinds(lines)
            .into_iter()
            .filter(|k| !k.starts_with("system:task_"))
            .collect()
    };
    assert_eq!(without_tasks(&ours.lines), without_tasks(&cc.lines));
    assert_eq!(results(&ours.lines), results(&cc.lines));
    let tool_result = |lines: &[Value]| -> Value {
        lines
            .iter()
            .find(|l| l["type"] == "user")
            .map(|l| l["message"]["content"][0]["content"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(tool_result(&ours.lines), tool_result(&cc.lines));
}

/// The prompt argument is not a turn with stream-json input (Claude Code ignores it; rein
/// says so on stderr): only stdin's message runs.
#[test]
fn a_prompt_argument_is_ignored_with_stream_json_input() {
    let cc = recorded("input_with_prompt_arg");
    let c = case("input_with_prompt_arg");
    let ours = run("input_with_prompt_arg", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    assert_eq!(results(&ours.lines), results(&cc.lines));
    let prompts =
        |ups: Vec<&Value>| -> Vec<Value> { ups.iter().map(|h| h["prompt"].clone()).collect() };
    assert_eq!(prompts(ours.ups()), prompts(cc.ups.iter().collect()));
    assert!(ours.stderr.contains("prompt argument is ignored"));
}

/// An `interrupt` control request while the turn's Bash call runs: answered at once with
/// Claude Code's `control_response`; the call is stopped (`sleep 8; echo slept` never gets to
/// say `slept`, and the run ends long before 8 s), the turn ends with Claude Code's interrupted `user` line and an
/// `error_during_execution` result (`aborted_tools`); the next message then runs normally and
/// the model sees the interruption.
#[test]
fn an_interrupt_stops_the_running_turn_and_the_next_message_runs() {
    let cc = recorded("input_interrupt");
    let user = |text: &str| {
        Feed::Line(
            json!({"type": "user", "message": {"role": "user", "content": text}}).to_string(),
        )
    };
    let interrupt = json!({"type": "control_request", "request_id": "req_int_1",
        "request": {"subtype": "interrupt"}});
    let ours = run(
        "input_interrupt",
        vec![
            user("first prompt"),
            Feed::WaitFor("\"name\":\"Bash\""),
            Feed::Sleep(Duration::from_millis(500)),
            Feed::Line(interrupt.to_string()),
            Feed::WaitFor("\"subtype\":\"error_during_execution\""),
            user("second prompt"),
        ],
        &[],
    );
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    let responses = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "control_response")
            .cloned()
            .collect()
    };
    assert_eq!(responses(&ours.lines), responses(&cc.lines));
    let notes = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "user" && l["message"]["content"][0]["type"] == "text")
            .map(|l| l["message"]["content"][0]["text"].clone())
            .collect()
    };
    assert_eq!(notes(&ours.lines), notes(&cc.lines));
    let ends = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "result")
            .map(|l| {
                json!([
                    l["subtype"],
                    l["is_error"],
                    l["terminal_reason"],
                    l["result"]
                ])
            })
            .collect()
    };
    assert_eq!(ends(&ours.lines), ends(&cc.lines));
    assert_numbered(&ours.lines, &cc.lines);
    // The interrupted turn's result line has Claude Code's keys where rein has the value.
    let cut = |lines: &[Value]| {
        lines
            .iter()
            .find(|l| l["subtype"] == "error_during_execution")
            .cloned()
            .unwrap()
    };
    for key in keys(&cut(&ours.lines)) {
        assert!(cut(&cc.lines).get(&key).is_some(), "{key}");
    }
    // The command never finished (`sleep 8; echo slept`): nothing said `slept`.
    assert!(
        !ours
            .lines
            .iter()
            .any(|l| l["message"]["content"][0]["content"] == "slept"),
        "{:#?}",
        ours.lines
    );
    // The second request tells the model the first turn was interrupted.
    let last = ours.requests.last().unwrap()["messages"]
        .as_array()
        .cloned()
        .unwrap();
    let said = conversation(&last).join("\n");
    assert!(
        said.contains("[Request interrupted by user for tool use]"),
        "{said}"
    );
    assert!(said.contains("second prompt"), "{said}");
}

/// A control request rein does not support: Claude Code's error response, and the session
/// goes on.
#[test]
fn an_unsupported_control_request_gets_claude_codes_error() {
    let cc = recorded("input_unknown_control");
    let c = case("input_unknown_control");
    let ours = run("input_unknown_control", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    let first = |lines: &[Value]| {
        lines
            .iter()
            .find(|l| l["type"] == "control_response")
            .cloned()
    };
    assert_eq!(first(&ours.lines), first(&cc.lines));
    assert_eq!(results(&ours.lines), results(&cc.lines));
}

/// `--include-partial-messages` through the OpenAI-compatible provider (a loopback server
/// streaming `chat.completion.chunk`s): rein builds the Messages API's events from the
/// chunks — one text block with a delta per chunk of text, a `tool_use` block opened with
/// the call's id and name and an `input_json_delta` per piece of its arguments, the stop reason
/// and usage at the end — and through the Anthropic provider passes the server's own events
/// on unchanged.
#[test]
fn partial_messages_from_both_providers_over_loopback() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let turn = || Turn {
        text: vec!["Let me ".to_string(), "look.".to_string()],
        calls: vec![(
            "call_1".to_string(),
            "Bash".to_string(),
            json!({"command": "echo hi"}),
        )],
        usage: Some((10, 2)),
        pause: Duration::ZERO,
    };
    for api in Api::BOTH {
        let server = Loopback::start(api, vec![turn(), Turn::text("done")]);
        let sandbox = Sandbox::new("project", &[]);
        let mut cmd = sandbox.rein();
        api.point(&mut cmd, &server.url);
        let out = cmd
            .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
            .args([
                "--include-partial-messages",
                "--permission-mode",
                "bypassPermissions",
            ])
            .env("IS_SANDBOX", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{api:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let first: Vec<Value> = events(&lines)
            .into_iter()
            .take_while(|e| e["type"] != "message_stop")
            .collect();
        let (id, model) = match api {
            Api::OpenAi => ("chatcmpl-lb", "gpt-loopback"),
            Api::Anthropic => ("msg_lb", "claude-loopback"),
        };
        let start = &first[0];
        assert_eq!(start["type"], "message_start", "{api:?}");
        assert_eq!(start["message"]["id"], id);
        assert_eq!(start["message"]["model"], model);
        let rest: Vec<Value> = first[1..].to_vec();
        let usage = match api {
            Api::OpenAi => json!({"input_tokens": 10, "output_tokens": 2}),
            Api::Anthropic => json!({"output_tokens": 2}),
        };
        let mut stop = json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
            "usage": usage});
        if api == Api::OpenAi {
            stop["delta"]["stop_sequence"] = Value::Null;
        }
        assert_eq!(
            rest,
            vec![
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "look."}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {}}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\":\"echo hi\"}"}}),
                json!({"type": "content_block_stop", "index": 1}),
                stop,
            ],
            "{api:?}"
        );
        // Every line names the reply it belongs to; the whole reply follows its events.
        for line in lines
            .iter()
            .filter(|l| l["type"] == "stream_event")
            .take(first.len() + 1)
        {
            assert_eq!(line["api_message_id"], id, "{api:?}");
        }
        let stop_at = lines
            .iter()
            .position(|l| l["event"]["type"] == "message_stop")
            .unwrap();
        assert_eq!(lines[stop_at + 1]["type"], "assistant", "{api:?}");
        assert_eq!(
            lines[stop_at + 1]["message"]["content"][1]["input"],
            json!({"command": "echo hi"})
        );
    }
}

/// The mock model does not stream: its replies' events are built whole, in the same shape.
#[test]
fn partial_messages_from_the_mock_model() {
    let sandbox = Sandbox::new("project", &[]);
    let script = sandbox.mock(json!([
        {"tool_use": [{"name": "Bash", "input": {"command": "echo hi"}}]},
        {"text": "all done"}
    ]));
    let out = sandbox
        .rein()
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args([
            "--include-partial-messages",
            "--permission-mode",
            "bypassPermissions",
        ])
        .arg("--mock-script")
        .arg(&script)
        .env("IS_SANDBOX", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = events(&lines)
        .iter()
        .map(|e| {
            let what = e["delta"]["type"]
                .as_str()
                .or(e["content_block"]["type"].as_str())
                .unwrap_or("");
            format!("{} {what}", e["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message_start ",
            "content_block_start tool_use",
            "content_block_delta input_json_delta",
            "content_block_stop ",
            "message_delta ",
            "message_stop ",
            "message_start ",
            "content_block_start text",
            "content_block_delta text_delta",
            "content_block_stop ",
            "message_delta ",
            "message_stop ",
        ]
    );
    let text = events(&lines)
        .into_iter()
        .find(|e| e["delta"]["type"] == "text_delta")
        .unwrap();
    assert_eq!(text["delta"]["text"], "all done");
}

/// stdin closes while a background command the turn started still runs: as after a `-p`
/// prompt, rein waits for it, then gives it a turn of its own (UserPromptSubmit sees the
/// `<task-notification>`), with its own `init` and `result` lines, before the session ends.
#[test]
fn end_of_stdin_waits_for_background_commands() {
    let cc = recorded("input_eof_background");
    let c = case("input_eof_background");
    let ours = run("input_eof_background", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    // A task's start and end are reported as Claude Code reports them (`task_started`,
    // `task_notification`, which the Agent SDKs track tasks by); its internal bookkeeping
    // lines (`task_updated`, `background_tasks_changed`) have no counterpart in rein.
    let main = |lines: &[Value]| -> Vec<String> {
        kinds(lines)
            .into_iter()
            .filter(|k| k != "system:task_updated" && k != "system:background_tasks_changed")
            .collect()
    };
    assert_eq!(main(&ours.lines), main(&cc.lines));
    assert_eq!(results(&ours.lines), results(&cc.lines));
    let starts = |ups: Vec<&Value>| -> Vec<bool> {
        ups.iter()
            .map(|h| {
                h["prompt"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("<task-notification>")
            })
            .collect()
    };
    assert_eq!(starts(ours.ups()), starts(cc.ups.iter().collect()));
}

/// An `interrupt` while the model's reply is still streaming (no tool running): the request is
/// dropped at once, the turn ends with `[Request interrupted by user]` and an
/// `error_during_execution` result (`aborted_streaming`), as Claude Code ended its turn when
/// the interrupt came before the reply (fixture `input_interrupt_early`); the next message
/// runs in the same session, the model told of the interruption.
#[test]
fn an_interrupt_while_the_reply_streams_drops_the_request() {
    use crate::agent::loopback::{Api, Loopback, Turn};
    let slow = Turn {
        text: (0..20).map(|i| format!("part {i} ")).collect(),
        calls: Vec::new(),
        usage: Some((10, 2)),
        pause: Duration::from_millis(500),
    };
    let server = Loopback::start(Api::Anthropic, vec![slow, Turn::text("after")]);
    let sandbox = Sandbox::new("project", &[]);
    let mut cmd = sandbox.rein();
    Api::Anthropic.point(&mut cmd, &server.url);
    let mut child = cmd
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args(["--verbose", "--include-partial-messages"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines: Vec<Value> = Vec::new();
    let mut read_until = |what: &str, lines: &mut Vec<Value>| loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no {what}: {lines:#?}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        let hit = line.contains(what);
        lines.push(v);
        if hit {
            return;
        }
    };
    let user = |text: &str| json!({"type": "user", "message": {"role": "user", "content": text}});
    writeln!(stdin, "{}", user("first")).unwrap();
    // The reply has begun streaming (its first text delta arrived).
    read_until("text_delta", &mut lines);
    writeln!(
        stdin,
        "{}",
        json!({"type": "control_request", "request_id": "i1", "request": {"subtype": "interrupt"}})
    )
    .unwrap();
    read_until("\"type\":\"result\"", &mut lines);
    writeln!(stdin, "{}", user("second")).unwrap();
    drop(stdin);
    read_until("\"type\":\"result\"", &mut lines);
    let status = child.wait().unwrap();
    assert!(status.success());
    // The slow reply would take 10 s to finish streaming.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let cc = recorded("input_interrupt_early");
    let response = |lines: &[Value]| {
        let mut r = lines
            .iter()
            .find(|l| l["type"] == "control_response")
            .unwrap()["response"]
            .clone();
        r["request_id"] = json!("<ID>");
        r
    };
    assert_eq!(response(&lines), response(&cc.lines));
    let note = |lines: &[Value]| {
        lines
            .iter()
            .find(|l| l["type"] == "user")
            .expect("the interrupted note")["message"]
            .clone()
    };
    assert_eq!(note(&lines), note(&cc.lines));
    let ends = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "result")
            .map(|l| {
                json!([
                    l["subtype"],
                    l["is_error"],
                    l["terminal_reason"],
                    l.get("result").is_some()
                ])
            })
            .collect()
    };
    assert_eq!(ends(&lines), ends(&cc.lines));
    assert_eq!(lines.last().unwrap()["result"], "after");
    // No whole assistant message for the dropped reply.
    assert_eq!(lines.iter().filter(|l| l["type"] == "assistant").count(), 1);
    let second = &server.requests()[1];
    let said = conversation(second["messages"].as_array().unwrap()).join("\n");
    assert!(said.contains("user: first"), "{said}");
    assert!(said.contains("[Request interrupted by user]"), "{said}");
    assert!(said.contains("user: second"), "{said}");
}

/// `-p --output-format json`: the one result object is numbered as Claude Code numbers it
/// (`queued_turn_count` 0, `result_index` 0), at the end of the keys rein shares with it.
#[test]
fn a_json_result_is_numbered_as_claude_code_numbers_it() {
    let cc = recorded("json_output_result");
    let ours = run("json_output_result", Vec::new(), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    assert_eq!(ours.lines.len(), 1, "{:#?}", ours.lines);
    assert_numbered(&ours.lines, &cc.lines);
}

/// Without `--include-hook-events`, stream-json output still has SessionStart's
/// `hook_started`/`hook_response` lines — before `init`, with Claude Code's keys and the run's
/// stdout — and no other event's (PreToolUse, PostToolUse, Stop, UserPromptSubmit and
/// SessionEnd hooks run unseen), as in Claude Code.
#[test]
fn session_start_hook_lines_come_without_include_hook_events() {
    let cc = recorded("hooks_without_flag");
    let c = case("hooks_without_flag");
    let ours = run("hooks_without_flag", case_feed(&c), &[]);
    assert_eq!(ours.code, cc.code, "{}", ours.stderr);
    // `system` and `result` lines (Claude Code writes an `assistant` line per content block,
    // rein one per reply).
    let outline = |lines: &[Value]| -> Vec<String> {
        kinds(lines)
            .into_iter()
            .filter(|k| k.starts_with("system") || k.starts_with("result"))
            .collect()
    };
    assert_eq!(outline(&ours.lines), outline(&cc.lines));
    let hook_lines = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| kind(l).starts_with("system:hook_"))
            .cloned()
            .collect()
    };
    let (a, b) = (hook_lines(&ours.lines), hook_lines(&cc.lines));
    assert_eq!(b.len(), 2);
    assert_eq!(a.len(), b.len(), "{a:#?}");
    for (o, c) in a.iter().zip(&b) {
        assert_eq!(keys(o), keys(c));
        for key in [
            "subtype",
            "hook_name",
            "hook_event",
            "output",
            "stdout",
            "stderr",
            "exit_code",
            "outcome",
            "session_id",
        ] {
            assert_eq!(o.get(key), c.get(key), "{key}");
        }
    }
    assert_eq!(a[0]["hook_id"], a[1]["hook_id"]);
    // The other hooks did run (each recorded its stdin, or its output reached the model).
    let ran: Vec<&Value> = ours.hooks.iter().map(|h| &h["hook_event_name"]).collect();
    assert_eq!(
        ran,
        [
            &json!("SessionStart"),
            &json!("UserPromptSubmit"),
            &json!("SessionEnd")
        ]
    );
    assert_numbered(&ours.lines, &cc.lines);
}
