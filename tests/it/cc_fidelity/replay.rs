//! Replays one oracle scenario (`tests/fixtures/cc-2.1.328/scenarios/<name>.json`) against the
//! built rein: a scripted fake Anthropic Messages API on loopback serves the scenario's turns
//! and records every request; each configured command hook is wrapped by a recorder that keeps
//! its stdin, environment, working directory and session/group ids, then `exec`s the original
//! command (same pid, so signals and process relations are the hook's own). Everything recorded
//! is normalized the way the oracle normalizes Claude Code's run (`<PROJECT>`, `<SESSION>`,
//! `<TOOL_USE_ID_i_j>`, …), so it compares with the fixture `<name>/summary.json` directly.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::harness::{LEAKY_VARS, Sandbox, home_vars, rein_bin, write, write_executable};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cc-2.1.328");

/// The fixture of `name`: what Claude Code 2.1.328 did in that scenario.
pub fn fixture(name: &str) -> Value {
    let path = format!("{FIXTURES}/{name}/summary.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
}

/// The fixture's stream-json output of `name`, one JSON value per line.
pub fn fixture_stream(name: &str) -> Vec<Value> {
    let path = format!("{FIXTURES}/{name}/stream.jsonl");
    std::fs::read_to_string(&path)
        .expect("fixture stream")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn scenario(name: &str) -> Value {
    let path = format!("{FIXTURES}/scenarios/{name}.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("scenario")).expect("JSON")
}

/// One hook run as rein made it.
#[derive(Debug, Clone)]
pub struct HookRun {
    /// `hook_event_name` of its stdin.
    pub event: String,
    /// Its stdin, normalized (key order kept).
    pub stdin: Value,
    /// Its environment (values normalized).
    pub env: HashMap<String, String>,
    /// Its working directory, normalized.
    pub cwd: String,
    /// Whether the hook's shell led its own session (sid == pgid).
    pub session_leader: bool,
}

/// What one replay produced.
pub struct Replay {
    pub hooks: Vec<HookRun>,
    /// Every `tool_result` block the model was sent, in order, normalized.
    pub tool_results: Vec<Value>,
    /// The body of every main-loop request, its messages' `cache_control` keys left out as the
    /// recordings leave them out (the oracle strips them).
    pub requests: Vec<Value>,
    /// rein's stdout lines as JSON (stream-json), normalized.
    pub stream: Vec<Value>,
    pub output: Output,
    pub sandbox: Sandbox,
    norm: Normalizer,
}

impl Replay {
    /// The hooks of `event`, in order.
    pub fn of(&self, event: &str) -> Vec<&HookRun> {
        self.hooks.iter().filter(|h| h.event == event).collect()
    }

    /// A normalized text of the run (paths and ids replaced).
    pub fn normalize(&self, text: &str) -> String {
        self.norm.text(text)
    }
}

/// Runs scenario `name` with rein; `extra` are more rein arguments.
pub fn run(name: &str, extra: &[&str]) -> Replay {
    let sc = scenario(name);
    let sandbox = Sandbox::new("project", &[]);
    let project = sandbox.project.clone();
    let rec = sandbox.root.join("rec");
    std::fs::create_dir_all(&rec).unwrap();

    for (rel, text) in sc["files"].as_object().into_iter().flatten() {
        let path = project.join(rel);
        let text = text.as_str().unwrap();
        if rel.starts_with("hooks/") {
            write_executable(&path, text.as_bytes());
        } else {
            write(&path, text);
        }
    }
    if sc["git_init"].as_bool() == Some(true) {
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git init");
    }
    let recorder = rec.join("rec.sh");
    write_executable(
        &recorder,
        format!(
            "#!/bin/bash\n\
             f='{dir}'/$(date +%s%N)-$$\n\
             cat > \"$f.stdin\"\n\
             env -0 > \"$f.env\"\n\
             pwd > \"$f.cwd\"\n\
             ps -o sid=,pgid= -p $$ > \"$f.ids\"\n\
             exec /bin/sh -c \"$(cat '{dir}'/cmd-$1)\" < \"$f.stdin\"\n",
            dir = rec.display()
        )
        .as_bytes(),
    );
    let mut settings = sc["settings"].clone();
    let mut n = 0;
    let mut wrapped = Vec::new();
    if let Some(events) = settings.get_mut("hooks").and_then(Value::as_object_mut) {
        for groups in events.values_mut() {
            for group in groups.as_array_mut().into_iter().flatten() {
                for hook in group["hooks"].as_array_mut().into_iter().flatten() {
                    if hook["type"] == "command" {
                        let original = hook["command"].as_str().unwrap().to_string();
                        std::fs::write(rec.join(format!("cmd-{n}")), &original).unwrap();
                        let command = format!("'{}' {n}", recorder.display());
                        hook["command"] = json!(command);
                        wrapped.push((command, original));
                        n += 1;
                    }
                }
            }
        }
    }
    sandbox.settings(settings);
    if let Some(local) = sc.get("local_settings") {
        sandbox.write_json(".claude/settings.local.json", local);
    }
    if let Some(user) = sc.get("user_settings") {
        let dir = sandbox.home.join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), user.to_string()).unwrap();
    }

    let api = FakeApi::start(&sc, &project);
    let mut cmd = Command::new(rein_bin());
    cmd.current_dir(&project)
        .envs(home_vars(&sandbox.home))
        .stdin(Stdio::null());
    for var in LEAKY_VARS {
        cmd.env_remove(var);
    }
    let transcripts = sandbox.home.join(".claude/projects");
    cmd.env("ANTHROPIC_BASE_URL", &api.base)
        .env("ANTHROPIC_API_KEY", "sk-fake")
        .env("IS_SANDBOX", "1")
        .env("REIN_MAX_RETRIES", "0")
        .env_remove("CLAUDE_CODE_ENTRYPOINT")
        .env_remove("CLAUDECODE")
        .args(["-p", sc["prompt"].as_str().unwrap_or("")])
        .args(["--provider", "anthropic"])
        .args(["--output-format", "stream-json", "--verbose"])
        .arg("--include-hook-events")
        .arg("--transcript-dir")
        .arg(&transcripts);
    let cli: Vec<String> = match sc.get("cli_args").and_then(Value::as_array) {
        Some(args) => args
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect(),
        None => vec!["--permission-mode".into(), "bypassPermissions".into()],
    };
    cmd.args(&cli);
    for a in sc["agent_args"]["rein"].as_array().into_iter().flatten() {
        cmd.arg(a.as_str().unwrap());
    }
    if !extra.contains(&"--model") {
        // The model the oracle's fake API names (one that takes an effort level).
        cmd.args(["--model", "claude-opus-5-5"]);
    }
    cmd.args(extra);
    let output = cmd.output().expect("run rein");
    if let Some(settle) = sc["settle_s"].as_f64() {
        std::thread::sleep(std::time::Duration::from_secs_f64(settle.min(2.5)));
    }

    let mut requests = api.requests();
    for body in &mut requests {
        for block in body["messages"]
            .as_array_mut()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array_mut())
            .flatten()
        {
            if let Some(block) = block.as_object_mut() {
                block.remove("cache_control");
            }
        }
    }
    let mut norm = Normalizer::new(&project, &sandbox.home);
    // Longest first: `'…' 1` is a prefix of `'…' 10`.
    wrapped.sort_by_key(|(w, _): &(String, String)| std::cmp::Reverse(w.len()));
    norm.commands = wrapped;
    let mut tool_results = Vec::new();
    let mut seen = 0usize;
    for body in &requests {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        for m in messages.iter().skip(seen) {
            for block in m["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    tool_results.push(block.clone());
                }
            }
        }
        seen = messages.len();
    }
    let stream: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // Ids in order of appearance: the session first, then prompt ids.
    if let Some(id) = stream
        .iter()
        .find_map(|v| v["session_id"].as_str().map(str::to_string))
    {
        norm.session = Some(id);
    }

    let mut names: Vec<String> = std::fs::read_dir(&rec)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".stdin"))
        .map(|n| n.trim_end_matches(".stdin").to_string())
        .collect();
    names.sort_by_key(|n| {
        n.split('-')
            .next()
            .unwrap_or("")
            .parse::<u128>()
            .unwrap_or(0)
    });
    let mut hooks = Vec::new();
    for base in names {
        let read = |ext: &str| std::fs::read(rec.join(format!("{base}.{ext}"))).unwrap_or_default();
        let raw = String::from_utf8_lossy(&read("stdin")).into_owned();
        if norm.session.is_none()
            && let Ok(v) = serde_json::from_str::<Value>(&raw)
        {
            norm.session = v["session_id"].as_str().map(str::to_string);
        }
        let stdin: Value = serde_json::from_str(&norm.text(&raw)).unwrap_or(Value::String(raw));
        let stdin = norm.numbers(stdin);
        let env = read("env")
            .split(|b| *b == 0)
            .filter_map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), norm.text(v)))
            })
            .collect();
        let ids = String::from_utf8_lossy(&read("ids")).into_owned();
        let ids: Vec<&str> = ids.split_whitespace().collect();
        hooks.push(HookRun {
            event: stdin["hook_event_name"].as_str().unwrap_or("").to_string(),
            stdin,
            env,
            cwd: norm.text(String::from_utf8_lossy(&read("cwd")).trim()),
            session_leader: ids.len() == 2 && ids[0] == ids[1],
        });
    }
    let tool_results = tool_results.into_iter().map(|v| norm.value(v)).collect();
    let stream = stream.into_iter().map(|v| norm.value(v)).collect();
    Replay {
        hooks,
        tool_results,
        requests,
        stream,
        output,
        sandbox,
        norm,
    }
}

/// Replaces what varies between runs with the oracle's placeholders.
pub struct Normalizer {
    /// `'<recorder>' <n>` → the hook command it stands for.
    commands: Vec<(String, String)>,
    project: String,
    slug: String,
    home: String,
    pub session: Option<String>,
    uuids: Mutex<Vec<String>>,
}

impl Normalizer {
    pub fn new(project: &Path, home: &Path) -> Normalizer {
        let project = project.to_string_lossy().into_owned();
        let slug: String = project
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        Normalizer {
            commands: Vec::new(),
            project,
            slug,
            home: home.to_string_lossy().into_owned(),
            session: None,
            uuids: Mutex::new(Vec::new()),
        }
    }

    pub fn text(&self, text: &str) -> String {
        let mut t = text.to_string();
        for (wrapped, original) in &self.commands {
            t = t.replace(wrapped.as_str(), original);
        }
        t = t.replace(&self.slug, "<PROJECT_SLUG>");
        t = t
            .replace(&self.project, "<PROJECT>")
            .replace(&self.home, "<HOME>");
        if let Some(s) = &self.session {
            t = t.replace(s.as_str(), "<SESSION>");
        }
        let ids = regex::Regex::new(r"toolu_fid_(\d+)_(\d+)").unwrap();
        t = ids.replace_all(&t, "<TOOL_USE_ID_${1}_${2}>").into_owned();
        let uuid =
            regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                .unwrap();
        let mut seen = self.uuids.lock().unwrap();
        uuid.replace_all(&t, |c: &regex::Captures<'_>| {
            let id = c[0].to_string();
            let n = match seen.iter().position(|s| *s == id) {
                Some(i) => i + 1,
                None => {
                    seen.push(id);
                    seen.len()
                }
            };
            format!("<UUID_{n}>")
        })
        .into_owned()
    }

    pub fn value(&self, v: Value) -> Value {
        let text = self.text(&v.to_string());
        serde_json::from_str(&text).unwrap_or(v)
    }

    /// `duration_ms` values become `"<NUM>"`, as in the fixtures.
    fn numbers(&self, mut v: Value) -> Value {
        if let Some(map) = v.as_object_mut()
            && map.get("duration_ms").is_some_and(Value::is_number)
        {
            map.insert("duration_ms".into(), json!("<NUM>"));
        }
        v
    }
}

/// A scripted Anthropic Messages API on loopback: each main-loop request (one that offers
/// three or more tools, as in the oracle) gets the scenario's next turn as an SSE stream; any
/// other request gets a short text.
pub struct FakeApi {
    pub base: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeApi {
    pub fn start(sc: &Value, project: &Path) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let turns: Vec<Value> = sc["turns"].as_array().cloned().unwrap_or_default();
        let project = project.to_string_lossy().into_owned();
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            let mut served = 0usize;
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let Some(body) = read_request(&stream) else {
                    continue;
                };
                let main = body["tools"].as_array().is_some_and(|t| t.len() >= 3);
                let turn = if main {
                    seen.lock().unwrap().push(body.clone());
                    let t = turns
                        .get(served)
                        .cloned()
                        .unwrap_or(json!({"text": "done"}));
                    served += 1;
                    t
                } else {
                    json!({"text": "ok"})
                };
                let sse = sse_for(&turn, served.saturating_sub(1), &project);
                let _ = respond(stream, &sse);
            }
        });
        FakeApi { base, requests }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Value> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn respond(mut stream: TcpStream, sse: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
        sse.len()
    )?;
    stream.flush()
}

fn sse_for(turn: &Value, index: usize, project: &str) -> String {
    let subst = |v: &Value| -> Value {
        serde_json::from_str(&v.to_string().replace("$PROJECT", project)).unwrap()
    };
    let mut events: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_fid_{index}"), "type": "message",
            "role": "assistant", "model": "claude-opus-5-5", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 1,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    )];
    // As the oracle's fake server streams (`fake_server.py`): a `ping`, text in pieces of 40
    // characters, tool arguments in pieces of 30.
    events.push(("ping", json!({"type": "ping"})));
    let mut blocks: Vec<Value> = Vec::new();
    if let Some(text) = turn["text"].as_str() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    let mut uses = 0;
    for (k, call) in turn["tool_use"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = call["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("toolu_fid_{index}_{k}"));
        blocks.push(json!({"type": "tool_use", "id": id, "name": call["name"], "input": subst(&call["input"])}));
        uses += 1;
    }
    let pieces = |text: &str, n: usize| -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars
            .chunks(n)
            .map(|c| c.iter().collect::<String>())
            .collect()
    };
    for (i, block) in blocks.iter().enumerate() {
        let (start, deltas) = if block["type"] == "text" {
            let text = block["text"].as_str().unwrap_or("");
            let mut parts = pieces(text, 40);
            if parts.is_empty() {
                parts.push(String::new());
            }
            (
                json!({"type": "text", "text": ""}),
                parts
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect::<Vec<_>>(),
            )
        } else {
            // Python's `json.dumps` spacing, as the oracle sends the arguments.
            let args = python_json(&block["input"]);
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                pieces(&args, 30)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect(),
            )
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": delta}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    let stop =
        turn["stop_reason"]
            .as_str()
            .unwrap_or(if uses > 0 { "tool_use" } else { "end_turn" });
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .into_iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// `value` as Python's `json.dumps` writes it (`", "` and `": "` separators), ASCII only.
fn python_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_json(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The fixture's hook runs of `event`: their normalized stdin, in order.
pub fn fixture_stdins(fx: &Value, event: &str) -> Vec<Value> {
    fx["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["event"] == event)
        .map(|h| h["stdin"].clone())
        .collect()
}

/// `value` with the keys in `drop` removed (top level), for comparing all but a known
/// difference.
pub fn without(value: &Value, drop: &[&str]) -> Value {
    match value.as_object() {
        Some(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !drop.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<String, Value>>(),
        ),
        None => value.clone(),
    }
}
