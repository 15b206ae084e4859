//! Broken model providers through the built binary: `rein -p go --provider openai|anthropic`
//! against a loopback HTTP server of this module that answers each request with a scripted reply
//! (OpenAI Chat Completions JSON, Anthropic Messages SSE) and records what rein sent.
//!
//! What must hold: a bad tool call (malformed arguments, unknown tool, no id) costs an error
//! tool_result and no hook; a cut connection, a 429 and a server that never answers are retried
//! within the request timeout and the retry policy; when the retries are used up the run ends
//! with one clear `Error:` line naming the URL, exit 1 and a StopFailure hook; an empty or huge
//! or undecodable reply never crashes rein; the transcript is complete JSON lines throughout.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Env, GRACE, Run, TOOL_RAN, assert_within, env, handler, run, tool_results, transcript_call_ids,
};

// ---------------------------------------------------------------------------------------------
// The server: one scripted reply per connection (the last one repeats), every request recorded.

/// What the server does with one request.
#[derive(Debug, Clone)]
enum Reply {
    /// These bytes (a whole or deliberately broken HTTP response), then the connection closes.
    Raw(Vec<u8>),
    /// Nothing is ever written; the connection is held until the client closes it (or 60 s).
    Hang,
    /// These pieces with a pause after each (so they arrive as separate reads), then close.
    Pieces(Vec<Vec<u8>>),
    /// These bytes, then the connection is held open without another byte, like [`Reply::Hang`].
    PartThenHang(Vec<u8>),
}

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    headers: HashMap<String, String>,
    body: Value,
    /// When the request had been read completely.
    at: Instant,
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// [`Reply::Hang`] connections the client has not closed yet.
    hung_open: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Server {
    fn start(replies: Vec<Reply>) -> Server {
        assert!(!replies.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let hung_open = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (recorded, hung, stopping) = (
            Arc::clone(&requests),
            Arc::clone(&hung_open),
            Arc::clone(&stop),
        );
        std::thread::spawn(move || {
            let mut n = 0usize;
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let reply = replies[n.min(replies.len() - 1)].clone();
                n += 1;
                let (recorded, hung) = (Arc::clone(&recorded), Arc::clone(&hung));
                std::thread::spawn(move || serve(stream, reply, &recorded, &hung));
            }
        });
        Server {
            url: format!("http://{addr}"),
            requests,
            hung_open,
            stop,
            addr,
        }
    }

    /// What rein sent, each request checked against the rules the real APIs enforce.
    fn requests(&self) -> Vec<Recorded> {
        let requests = self.requests.lock().unwrap().clone();
        for request in &requests {
            assert_api_shaped(request);
        }
        requests
    }

    /// Waits (up to 3 s) until the client has closed every held connection; false if not.
    fn hung_connections_closed(&self) -> bool {
        let started = Instant::now();
        while self.hung_open.load(Ordering::SeqCst) > 0 {
            if started.elapsed() > Duration::from_secs(3) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Wakes the accept loop so it sees the flag and ends.
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut stream: TcpStream, reply: Reply, recorded: &Mutex<Vec<Recorded>>, hung: &AtomicUsize) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_default()
        .to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    recorded.lock().unwrap().push(Recorded {
        path,
        headers,
        body,
        at: Instant::now(),
    });
    match reply {
        Reply::Raw(bytes) => {
            let _ = stream.write_all(&bytes);
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Reply::Pieces(pieces) => {
            for piece in pieces {
                let _ = stream.write_all(&piece);
                let _ = stream.flush();
                std::thread::sleep(Duration::from_millis(30));
            }
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Reply::Hang | Reply::PartThenHang(_) => {
            if let Reply::PartThenHang(bytes) = &reply {
                let _ = stream.write_all(bytes);
                let _ = stream.flush();
            }
            hung.fetch_add(1, Ordering::SeqCst);
            // Ends when rein closes its side (EOF) or after the 60 s read timeout.
            while matches!(stream.read(&mut chunk), Ok(n) if n > 0) {}
            hung.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Fails unless the request's history is one the real API accepts (the rules it answers 400
/// for): OpenAI takes `null` assistant content only beside `tool_calls`; Anthropic wants
/// non-empty content on every message, no empty text block, roles alternating from `user`, and
/// the tool results first in their user message.
fn assert_api_shaped(request: &Recorded) {
    let body = &request.body;
    let messages = body["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {body}"));
    if request.path.ends_with("/chat/completions") {
        for m in messages.iter().filter(|m| m["role"] == "assistant") {
            let has_calls = m["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
            assert!(
                m["content"].is_string() || (m["content"].is_null() && has_calls),
                "OpenAI rejects this assistant message: {m}"
            );
        }
        return;
    }
    assert!(request.path.ends_with("/messages"), "{}", request.path);
    for (i, m) in messages.iter().enumerate() {
        let want = if i % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(m["role"], want, "roles must alternate from user: {body}");
        let blocks = m["content"].as_array().unwrap_or_else(|| panic!("{m}"));
        assert!(!blocks.is_empty(), "empty content: {m}");
        assert!(
            blocks
                .iter()
                .all(|b| b["type"] != "text" || b["text"].as_str().is_some_and(|t| !t.is_empty())),
            "empty text block: {m}"
        );
        let first_other = blocks
            .iter()
            .position(|b| b["type"] != "tool_result")
            .unwrap_or(blocks.len());
        assert!(
            blocks[first_other..]
                .iter()
                .all(|b| b["type"] != "tool_result"),
            "tool_result after other content: {m}"
        );
    }
}

/// A complete HTTP/1.1 response with a `content-length`.
fn http(status: &str, headers: &[(&str, &str)], content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn ok_json(body: &Value) -> Reply {
    Reply::Raw(http(
        "200 OK",
        &[],
        "application/json",
        body.to_string().as_bytes(),
    ))
}

/// An SSE response without a length: the body ends when the connection closes.
fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".to_vec();
    for event in events {
        out.extend_from_slice(sse_event(event).as_bytes());
    }
    out
}

fn sse_event(event: &Value) -> String {
    format!(
        "event: {}\ndata: {event}\n\n",
        event["type"].as_str().unwrap()
    )
}

// ---------------------------------------------------------------------------------------------
// The two providers: reply shapes and where the tool results sit in the next request.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    OpenAi,
    Anthropic,
}

/// One tool call in a scripted reply; `args` is the raw JSON text the model streams.
struct Call<'a> {
    id: Option<&'a str>,
    name: &'a str,
    args: &'a str,
}

/// A tool result as rein sent it back to the model.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    id: String,
    content: String,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The endpoint rein posts to (and names in its errors).
    fn endpoint(self, server: &Server) -> String {
        match self {
            Provider::OpenAi => format!("{}/v1/chat/completions", server.url),
            Provider::Anthropic => format!("{}/v1/messages", server.url),
        }
    }

    fn message_start() -> Value {
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 3, "output_tokens": 1}}})
    }

    fn anthropic_end(reason: &str) -> [Value; 2] {
        [
            json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}}),
            json!({"type": "message_stop"}),
        ]
    }

    /// The Anthropic events of a text reply streamed as `parts`.
    fn text_events(parts: &[&str]) -> Vec<Value> {
        let mut events = vec![
            Provider::message_start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "ping"}),
        ];
        for part in parts {
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": part}}));
        }
        events.push(json!({"type": "content_block_stop", "index": 0}));
        events.extend(Provider::anthropic_end("end_turn"));
        events
    }

    fn openai_text(text: &str) -> Value {
        json!({"id": "chatcmpl-1", "model": "gpt-test", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
    }

    /// A final text answer.
    fn text(self, text: &str) -> Reply {
        match self {
            Provider::OpenAi => ok_json(&Provider::openai_text(text)),
            Provider::Anthropic => Reply::Raw(sse(&Provider::text_events(&[text]))),
        }
    }

    /// A reply holding only `calls`.
    fn calls(self, calls: &[Call]) -> Reply {
        match self {
            Provider::OpenAi => {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        let mut call = json!({"type": "function",
                            "function": {"name": c.name, "arguments": c.args}});
                        if let Some(id) = c.id {
                            call["id"] = json!(id);
                        }
                        call
                    })
                    .collect();
                ok_json(
                    &json!({"id": "chatcmpl-2", "model": "gpt-test", "choices": [{"index": 0,
                    "message": {"role": "assistant", "content": null, "tool_calls": calls},
                    "finish_reason": "tool_calls"}]}),
                )
            }
            Provider::Anthropic => {
                let mut events = vec![Provider::message_start()];
                for (index, c) in calls.iter().enumerate() {
                    let mut block = json!({"type": "tool_use", "name": c.name, "input": {}});
                    if let Some(id) = c.id {
                        block["id"] = json!(id);
                    }
                    events.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
                    // The arguments arrive in two pieces, as the API streams them.
                    let half = c.args.len() / 2;
                    for part in [&c.args[..half], &c.args[half..]] {
                        events.push(json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part}}));
                    }
                    events.push(json!({"type": "content_block_stop", "index": index}));
                }
                events.extend(Provider::anthropic_end("tool_use"));
                Reply::Raw(sse(&events))
            }
        }
    }

    /// A well-formed reply with no text and no tool calls.
    fn empty(self) -> Reply {
        match self {
            Provider::OpenAi => ok_json(&json!({"id": "chatcmpl-3", "model": "gpt-test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": null},
                "finish_reason": "stop"}]})),
            Provider::Anthropic => {
                let mut events = vec![Provider::message_start()];
                events.extend(Provider::anthropic_end("end_turn"));
                Reply::Raw(sse(&events))
            }
        }
    }

    /// A reply whose connection is closed in the middle: Anthropic right after `message_start`,
    /// OpenAI halfway through a body whose `content-length` promised all of it.
    fn cut(self) -> Reply {
        match self {
            Provider::OpenAi => {
                let whole = http(
                    "200 OK",
                    &[],
                    "application/json",
                    Provider::openai_text("never seen").to_string().as_bytes(),
                );
                let head = whole.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                let cut = head + (whole.len() - head) / 2;
                Reply::Raw(whole[..cut].to_vec())
            }
            Provider::Anthropic => Reply::Raw(sse(&[Provider::message_start()])),
        }
    }

    /// The first half of [`Provider::cut`]'s bytes, then silence with the connection open.
    fn stall(self) -> Reply {
        match self.cut() {
            Reply::Raw(bytes) => Reply::PartThenHang(bytes),
            Reply::Hang | Reply::PartThenHang(_) | Reply::Pieces(_) => {
                unreachable!("cut() is raw bytes")
            }
        }
    }

    /// 429 with a `retry-after` in seconds and the provider's error body.
    fn rate_limited(self, retry_after_s: &str) -> Reply {
        let body = match self {
            Provider::OpenAi => {
                json!({"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}})
            }
            Provider::Anthropic => {
                json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}})
            }
        };
        Reply::Raw(http(
            "429 Too Many Requests",
            &[("retry-after", retry_after_s)],
            "application/json",
            body.to_string().as_bytes(),
        ))
    }

    /// The credential header rein sent.
    fn key_sent(self, request: &Recorded) -> Option<&str> {
        let (name, prefix) = match self {
            Provider::OpenAi => ("authorization", "Bearer "),
            Provider::Anthropic => ("x-api-key", ""),
        };
        request.headers.get(name)?.strip_prefix(prefix)
    }

    /// The ids of the tool calls in the last assistant message of a request body.
    fn sent_call_ids(self, body: &Value) -> Vec<String> {
        let messages = body["messages"].as_array().unwrap();
        let last = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .unwrap_or_else(|| panic!("no assistant message in {body}"));
        let ids: Vec<&Value> = match self {
            Provider::OpenAi => last["tool_calls"]
                .as_array()
                .map(|calls| calls.iter().map(|c| &c["id"]).collect())
                .unwrap_or_default(),
            Provider::Anthropic => last["content"]
                .as_array()
                .map(|blocks| {
                    blocks
                        .iter()
                        .filter(|b| b["type"] == "tool_use")
                        .map(|b| &b["id"])
                        .collect()
                })
                .unwrap_or_default(),
        };
        ids.into_iter()
            .map(|id| id.as_str().unwrap_or_else(|| panic!("id {id}")).to_string())
            .collect()
    }

    /// The tool results a request body carries, in order. Anthropic results must be flagged
    /// `is_error` exactly when `errors` names them.
    fn sent_results(self, body: &Value, errors: &[&str]) -> Vec<Sent> {
        let messages = body["messages"].as_array().unwrap();
        match self {
            Provider::OpenAi => messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| Sent {
                    id: m["tool_call_id"].as_str().unwrap().to_string(),
                    content: m["content"].as_str().unwrap().to_string(),
                })
                .collect(),
            Provider::Anthropic => messages
                .iter()
                .filter(|m| m["role"] == "user")
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| {
                    let id = b["tool_use_id"].as_str().unwrap().to_string();
                    let flagged = b["is_error"] == true;
                    assert_eq!(
                        flagged,
                        errors.contains(&id.as_str()),
                        "is_error of {id}: {b}"
                    );
                    Sent {
                        id,
                        content: b["content"].as_str().unwrap().to_string(),
                    }
                })
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running rein against the server.

/// Retries and timeouts of every run unless a case overrides them: quick backoff, 2 retries.
const MAX_RETRIES: u32 = 2;

/// Hooks of every case: PreToolUse on every tool, Stop and StopFailure, each appending its
/// stdin as one line to `pre.jsonl`, `stop.jsonl`, `stopfailure.jsonl`.
fn install_hooks(e: &Env) {
    let record = |name: &str, file: &str| {
        let path = e.path(file).display().to_string();
        e.script(name, &format!("cat >> '{path}'\necho >> '{path}'"))
    };
    let pre = record("pre.sh", "pre.jsonl");
    // Blocks once (exit 2, "say something") when the case created `continue-once`.
    let stop = e.script(
        "stop.sh",
        &format!(
            "cat >> '{log}'\necho >> '{log}'\n\
             if [ -e '{flag}' ]; then rm '{flag}'; echo 'say something' >&2; exit 2; fi",
            log = e.path("stop.jsonl").display(),
            flag = e.path("continue-once").display(),
        ),
    );
    let failure = record("stopfailure.sh", "stopfailure.jsonl");
    e.hooks(json!({
        "PreToolUse": [{"matcher": "*", "hooks": [handler(&pre, 30)]}],
        "Stop": [{"hooks": [handler(&stop, 30)]}],
        "StopFailure": [{"hooks": [handler(&failure, 30)]}],
    }));
}

/// The JSON lines a recording hook wrote.
fn hook_lines(e: &Env, file: &str) -> Vec<Value> {
    e.read(file)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|err| panic!("{file}: {l}: {err}")))
        .collect()
}

/// `rein -p go --provider <p> --allowedTools Bash` pointed at `server`, hooks installed, with
/// `vars` on top of the defaults.
fn rein(e: &Env, p: Provider, server: &Server, vars: &[(&str, &str)]) -> Run {
    install_hooks(e);
    let mut c = e.cmd();
    c.args(["-p", "go", "--provider", p.name(), "--allowedTools", "Bash"]);
    for var in [
        "OPENAI_MODEL",
        "ANTHROPIC_MODEL",
        "REIN_SYSTEM_PROMPT",
        "REIN_MAX_TOKENS",
    ] {
        c.env_remove(var);
    }
    match p {
        Provider::OpenAi => c
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", "test-key"),
        Provider::Anthropic => c
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "test-key"),
    };
    c.env("REIN_REQUEST_TIMEOUT_MS", "10000")
        .env("REIN_MAX_RETRIES", MAX_RETRIES.to_string())
        .env("REIN_RETRY_BASE_MS", "10")
        .env("REIN_RETRY_MAX_DELAY_MS", "1000");
    for (name, value) in vars {
        c.env(name, value);
    }
    run(c)
}

/// Exit 0 with `text` as the whole stdout; no StopFailure, one Stop; nothing panicked.
fn assert_succeeded(e: &Env, run: &Run, text: &str) {
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert_eq!(run.stdout, format!("{text}\n"));
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(hook_lines(e, "stopfailure.jsonl").is_empty());
    let stops = hook_lines(e, "stop.jsonl");
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_eq!(stops[0]["last_assistant_message"], text);
}

/// Exit 1, `Error: model request failed: <provider>: <message>` as one stderr line, the
/// StopFailure hook saw `kind` and the same message, no Stop hook, a complete transcript.
fn assert_failed(e: &Env, p: Provider, run: &Run, kind: &str, message: &str) {
    assert_eq!(run.code, Some(1), "stderr: {:.3000}", run.stderr);
    let line = format!("Error: model request failed: {}: {message}", p.name());
    assert!(
        run.stderr.lines().any(|l| l == line),
        "want line {line:?}\nstderr: {:.3000}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let failures = hook_lines(e, "stopfailure.jsonl");
    assert_eq!(failures.len(), 1, "StopFailure runs: {failures:?}");
    assert_eq!(failures[0]["hook_event_name"], "StopFailure");
    assert_eq!(failures[0]["error"], kind);
    assert_eq!(failures[0]["error_details"], message);
    assert!(hook_lines(e, "stop.jsonl").is_empty(), "Stop ran too");
    let lines = e.transcript();
    assert_eq!(lines[0]["type"], "user", "{lines:?}");
    assert_eq!(lines[0]["message"]["content"], "go");
}

/// The tool_result rein reports for arguments that are not JSON (Claude Code's wording).
const NOT_AN_OBJECT: &str = "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe input is expected as `object` but provided as `string`</tool_use_error>";

/// A valid Bash call next to the bad one: proves PreToolUse hooks do run for good calls, so
/// their absence for the bad one is the protection and not a broken hook.
const GOOD_ARGS: &str = "{\"command\": \"echo ran > tool-ran.flag\"}";

// ---------------------------------------------------------------------------------------------
// Bad tool calls: an error tool_result, no hook, the loop goes on.

/// Runs `bad` next to a valid call, then a final text; checks what went back to the model.
fn bad_call_costs_only_its_result(p: Provider, bad: Call, want: &str) {
    let e = env();
    let bad_id = bad.id.unwrap();
    let server = Server::start(vec![
        p.calls(&[
            bad,
            Call {
                id: Some("call_ok"),
                name: "Bash",
                args: GOOD_ARGS,
            },
        ]),
        p.text("done"),
    ]);
    let run = rein(&e, p, &server, &[]);
    assert_succeeded(&e, &run, "done");
    assert!(e.exists(TOOL_RAN), "the valid call did not run");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = p.sent_results(&requests[1].body, &[bad_id]);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(
        sent[0],
        Sent {
            id: bad_id.to_string(),
            content: want.to_string()
        }
    );
    assert_eq!(sent[1].id, "call_ok");

    let pre = hook_lines(&e, "pre.jsonl");
    let seen: Vec<&Value> = pre.iter().map(|l| &l["tool_use_id"]).collect();
    assert_eq!(seen, [&json!("call_ok")], "PreToolUse ran for: {seen:?}");

    let results = tool_results(&e.transcript());
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["tool_use_id"], bad_id);
    assert_eq!(results[0]["content"], want);
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[1]["tool_use_id"], "call_ok");
}

fn malformed_arguments(p: Provider) {
    let bad = Call {
        id: Some("call_bad"),
        name: "Bash",
        args: "{\"command\": \"echo hi",
    };
    bad_call_costs_only_its_result(p, bad, NOT_AN_OBJECT);
}

#[test]
fn openai_malformed_tool_arguments_are_an_error_result_without_hooks() {
    malformed_arguments(Provider::OpenAi);
}

#[test]
fn anthropic_malformed_tool_arguments_are_an_error_result_without_hooks() {
    malformed_arguments(Provider::Anthropic);
}

fn unknown_tool(p: Provider) {
    let bad = Call {
        id: Some("call_unknown"),
        name: "NoSuchTool",
        args: "{\"x\": 1}",
    };
    bad_call_costs_only_its_result(
        p,
        bad,
        "<tool_use_error>Error: No such tool available: NoSuchTool</tool_use_error>",
    );
}

#[test]
fn openai_unknown_tool_is_an_error_result_naming_it() {
    unknown_tool(Provider::OpenAi);
}

#[test]
fn anthropic_unknown_tool_is_an_error_result_naming_it() {
    unknown_tool(Provider::Anthropic);
}

/// Two calls without ids: rein makes up distinct ids (`toolu_rein_<n>`) and uses each one for
/// the call it sent back, its result, the hook input and the transcript.
fn missing_ids(p: Provider) {
    let e = env();
    let server = Server::start(vec![
        p.calls(&[
            Call {
                id: None,
                name: "Bash",
                args: "{\"command\": \"echo one >> order.txt\"}",
            },
            Call {
                id: None,
                name: "Bash",
                args: "{\"command\": \"echo two >> order.txt\"}",
            },
        ]),
        p.text("done"),
    ]);
    let run = rein(&e, p, &server, &[]);
    assert_succeeded(&e, &run, "done");
    assert_eq!(e.read("order.txt"), "one\ntwo\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let ids = p.sent_call_ids(&requests[1].body);
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    for id in &ids {
        assert!(id.starts_with("toolu_rein_"), "{id}");
    }
    let sent: Vec<String> = p
        .sent_results(&requests[1].body, &[])
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(sent, ids);

    let hook_ids: Vec<String> = hook_lines(&e, "pre.jsonl")
        .iter()
        .map(|l| l["tool_use_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hook_ids, ids);

    let lines = e.transcript();
    assert_eq!(transcript_call_ids(&lines), ids);
    let result_ids: Vec<Value> = tool_results(&lines)
        .iter()
        .map(|r| r["tool_use_id"].clone())
        .collect();
    assert_eq!(result_ids, [json!(ids[0]), json!(ids[1])]);
}

#[test]
fn openai_tool_calls_without_id_get_distinct_ids_used_throughout() {
    missing_ids(Provider::OpenAi);
}

#[test]
fn anthropic_tool_calls_without_id_get_distinct_ids_used_throughout() {
    missing_ids(Provider::Anthropic);
}

// ---------------------------------------------------------------------------------------------
// Empty replies.

/// A well-formed reply with nothing in it ends the turn like any final answer: Stop runs (with
/// an empty `last_assistant_message`), exit 0, nothing on stdout, and stderr says why.
fn empty_reply(p: Provider) {
    let e = env();
    let server = Server::start(vec![p.empty()]);
    let run = rein(&e, p, &server, &[]);
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.lines().any(|l| l == empty_notice(p)),
        "stderr: {:.3000}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1, "an empty answer is not retried");
    assert!(hook_lines(&e, "stopfailure.jsonl").is_empty());
    let stops = hook_lines(&e, "stop.jsonl");
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_eq!(stops[0]["last_assistant_message"], "");
    let lines = e.transcript();
    let assistant: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
    assert_eq!(assistant.len(), 1, "{lines:?}");
    assert_eq!(assistant[0]["message"]["content"], json!([]));
    assert_eq!(assistant[0]["message"]["stop_reason"], "end_turn");
}

/// An empty reply that a Stop hook continues stays in the history, and the next request is
/// still one the API accepts (checked by [`Server::requests`]): OpenAI gets `content: ""`,
/// Anthropic gets no empty message and the prompt and the hook's feedback as one user turn.
fn empty_reply_continued(p: Provider) {
    let e = env();
    e.write("continue-once", "");
    let server = Server::start(vec![p.empty(), p.text("second")]);
    let run = rein(&e, p, &server, &[]);
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert_eq!(run.stdout, "second\n");
    let stops = hook_lines(&e, "stop.jsonl");
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[1]["stop_hook_active"], true);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The system prompt (OpenAI's leading system message) is not part of the conversation.
    let messages: Vec<Value> =
        crate::harness::without_cache_control(requests[1].body["messages"].as_array().unwrap())
            .into_iter()
            .filter(|m| m["role"] != "system")
            .collect();
    let feedback = format!(
        "Stop hook feedback:\n[{}]: say something\n",
        e.path("hooks/stop.sh").display()
    );
    match p {
        Provider::OpenAi => assert_eq!(
            messages,
            [
                json!({"role": "user", "content": "go"}),
                json!({"role": "assistant", "content": ""}),
                json!({"role": "user", "content": feedback}),
            ]
        ),
        Provider::Anthropic => assert_eq!(
            messages,
            [json!({"role": "user", "content": [
                {"type": "text", "text": "go"},
                {"type": "text", "text": feedback},
            ]})]
        ),
    }
    // The transcript keeps the empty reply as it came.
    let lines = e.transcript();
    let assistant: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
    assert_eq!(assistant.len(), 2, "{lines:?}");
    assert_eq!(assistant[0]["message"]["content"], json!([]));
}

#[test]
fn openai_empty_reply_continued_by_a_stop_hook_sends_empty_content() {
    empty_reply_continued(Provider::OpenAi);
}

#[test]
fn anthropic_empty_reply_continued_by_a_stop_hook_merges_the_user_turns() {
    empty_reply_continued(Provider::Anthropic);
}

/// What rein says on stderr about an empty reply (`gpt-test`/`claude-test` are the models the
/// replies name; rein reports the configured one).
fn empty_notice(p: Provider) -> String {
    let model = match p {
        Provider::OpenAi => "gpt-4o-mini",
        Provider::Anthropic => "claude-sonnet-4-5",
    };
    format!("The model ({model}) sent an empty reply: no text and no tool calls.")
}

#[test]
fn openai_empty_reply_ends_the_turn_and_says_so() {
    empty_reply(Provider::OpenAi);
}

#[test]
fn anthropic_empty_reply_ends_the_turn_and_says_so() {
    empty_reply(Provider::Anthropic);
}

/// A 2xx body that is not a response at all is a clear error, not retried (the same request
/// would get the same body), with StopFailure `unknown`.
fn malformed_body(p: Provider, body: &[u8], what: &str) {
    let e = env();
    let server = Server::start(vec![Reply::Raw(http(
        "200 OK",
        &[],
        "application/json",
        body,
    ))]);
    let run = rein(&e, p, &server, &[]);
    let message = format!("malformed response from {} {what}", p.endpoint(&server));
    assert_failed(&e, p, &run, "unknown", &message);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn openai_empty_object_body_is_a_clear_error() {
    malformed_body(Provider::OpenAi, b"{}", "(no choices[0]): {}");
}

#[test]
fn anthropic_empty_object_body_is_a_clear_error() {
    malformed_body(Provider::Anthropic, b"{}", "(no content array): {}");
}

#[test]
fn openai_empty_body_is_a_clear_error() {
    malformed_body(
        Provider::OpenAi,
        b"",
        "(invalid JSON: EOF while parsing a value at line 1 column 0): (empty body)",
    );
}

// ---------------------------------------------------------------------------------------------
// Cut connections, silence, rate limits.

/// One cut reply, then a good one: retried, the session succeeds.
fn cut_once(p: Provider) {
    let e = env();
    let server = Server::start(vec![p.cut(), p.text("recovered")]);
    let run = rein(&e, p, &server, &[]);
    assert_succeeded(&e, &run, "recovered");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the cut reply was not retried");
    // The retry is the same request.
    assert_eq!(requests[0].body, requests[1].body);
    assert_eq!(requests[1].path, requests[0].path);
    for request in &requests {
        assert_eq!(p.key_sent(request), Some("test-key"));
    }
}

#[test]
fn openai_connection_cut_mid_body_is_retried() {
    cut_once(Provider::OpenAi);
}

#[test]
fn anthropic_stream_cut_after_message_start_is_retried() {
    cut_once(Provider::Anthropic);
}

/// A body without `content-length` ends where the connection closes: cut halfway it is JSON
/// that stops early, which is a broken connection (retried), not a malformed answer.
#[test]
fn openai_close_delimited_body_cut_halfway_is_retried() {
    let e = env();
    let body = Provider::openai_text("never seen").to_string();
    let mut cut =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n".to_vec();
    cut.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
    let server = Server::start(vec![
        Reply::Raw(cut.clone()),
        Provider::OpenAi.text("recovered"),
    ]);
    let run = rein(&e, Provider::OpenAi, &server, &[]);
    assert_succeeded(&e, &run, "recovered");
    assert_eq!(server.requests().len(), 2, "the cut body was not retried");

    // Cut every time: the retries are used up and the error says what happened.
    let e = env();
    let server = Server::start(vec![Reply::Raw(cut)]);
    let run = rein(&e, Provider::OpenAi, &server, &[]);
    assert_eq!(server.requests().len(), 1 + MAX_RETRIES as usize);
    let message = format!(
        "connection broke while reading the response from {}: the body stopped after {} bytes, \
         in the middle of its JSON (EOF while parsing",
        Provider::OpenAi.endpoint(&server),
        body.len() / 2
    );
    assert!(run.stderr.contains(&message), "{:.3000}", run.stderr);
    assert_eq!(run.code, Some(1));
}

/// Every reply cut: 1 + REIN_MAX_RETRIES attempts, then a clear error and StopFailure.
fn always_cut(p: Provider, kind: &str, prefix: &str) {
    let e = env();
    let server = Server::start(vec![p.cut()]);
    let run = rein(&e, p, &server, &[]);
    assert_eq!(server.requests().len(), 1 + MAX_RETRIES as usize);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("Error: model request failed: "))
        .unwrap_or_else(|| panic!("no error line: {:.3000}", run.stderr))
        .to_string();
    let message = line
        .strip_prefix(&format!("Error: model request failed: {}: ", p.name()))
        .unwrap_or_else(|| panic!("{line}"));
    let url = p.endpoint(&server);
    assert!(
        message.starts_with(&prefix.replace("{url}", &url)),
        "{message}"
    );
    assert!(
        message.ends_with(&format!(" (gave up after {} attempts)", 1 + MAX_RETRIES)),
        "{message}"
    );
    assert_failed(&e, p, &run, kind, message);
    e.assert_no_leftovers();
}

#[test]
fn openai_connection_always_cut_gives_up_with_stop_failure() {
    always_cut(
        Provider::OpenAi,
        "unknown",
        "connection broke while reading the response from {url}: ",
    );
}

#[test]
fn anthropic_stream_always_cut_gives_up_with_stop_failure() {
    always_cut(
        Provider::Anthropic,
        "server_error",
        "stream from {url} ended before message_stop",
    );
}

/// A server that accepts and never answers (or stalls mid-reply): each attempt ends at
/// REIN_REQUEST_TIMEOUT_MS, rein gives up after the retries with the URL and the variable named,
/// far sooner than the server's 60 s, and closes every connection it opened.
fn silent(p: Provider, reply: Reply, waiting_for: &str) {
    let e = env();
    let server = Server::start(vec![reply]);
    let run = rein(
        &e,
        p,
        &server,
        &[
            ("REIN_REQUEST_TIMEOUT_MS", "300"),
            ("REIN_MAX_RETRIES", "1"),
        ],
    );
    let message = format!(
        "request to {} timed out: no {waiting_for} within 300 ms (REIN_REQUEST_TIMEOUT_MS) (gave up after 2 attempts)",
        p.endpoint(&server)
    );
    assert_failed(&e, p, &run, "unknown", &message);
    assert_eq!(server.requests().len(), 2, "a timeout is retried once");
    // Two attempts of 300 ms each at least; far below the 60 s the server would hold them.
    assert!(
        run.elapsed >= Duration::from_millis(600),
        "{:?}",
        run.elapsed
    );
    assert_within(&run, Duration::from_millis(600) + GRACE);
    assert!(
        server.hung_connections_closed(),
        "rein left a connection open"
    );
    e.assert_no_leftovers();
}

#[test]
fn openai_server_that_never_answers_times_out_naming_url_and_variable() {
    silent(Provider::OpenAi, Reply::Hang, "response");
}

#[test]
fn anthropic_server_that_never_answers_times_out_naming_url_and_variable() {
    silent(Provider::Anthropic, Reply::Hang, "response");
}

#[test]
fn openai_body_that_stalls_halfway_times_out() {
    silent(
        Provider::OpenAi,
        Provider::OpenAi.stall(),
        "complete response body",
    );
}

#[test]
fn anthropic_stream_that_stalls_after_message_start_times_out() {
    silent(
        Provider::Anthropic,
        Provider::Anthropic.stall(),
        "stream event",
    );
}

/// 429 with `retry-after: 1`, then success: the retry waits the server's second, not the 10 ms
/// backoff.
fn rate_limited_then_ok(p: Provider) {
    let e = env();
    let server = Server::start(vec![p.rate_limited("1"), p.text("ok")]);
    let run = rein(&e, p, &server, &[("REIN_RETRY_MAX_DELAY_MS", "5000")]);
    assert_succeeded(&e, &run, "ok");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let gap = requests[1].at - requests[0].at;
    assert!(gap >= Duration::from_secs(1), "retried after {gap:?}");
}

#[test]
fn openai_429_is_retried_after_retry_after() {
    rate_limited_then_ok(Provider::OpenAi);
}

#[test]
fn anthropic_429_is_retried_after_retry_after() {
    rate_limited_then_ok(Provider::Anthropic);
}

/// `retry-after: 30` is capped by REIN_RETRY_MAX_DELAY_MS=300: the retry comes after the cap,
/// long before the 30 s, and once the retries are used up the 429 is the error.
fn rate_limited_always(p: Provider) {
    let e = env();
    let server = Server::start(vec![p.rate_limited("30")]);
    let run = rein(
        &e,
        p,
        &server,
        &[
            ("REIN_RETRY_MAX_DELAY_MS", "300"),
            ("REIN_MAX_RETRIES", "1"),
        ],
    );
    let detail = match p {
        Provider::OpenAi => "Rate limit reached (rate_limit_exceeded)",
        Provider::Anthropic => "Rate limit reached (rate_limit_error)",
    };
    let message = format!(
        "HTTP 429 Too Many Requests from {}: {detail} (gave up after 2 attempts)",
        p.endpoint(&server)
    );
    assert_failed(&e, p, &run, "rate_limit", &message);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let gap = requests[1].at - requests[0].at;
    assert!(gap >= Duration::from_millis(300), "retried after {gap:?}");
    assert_within(&run, Duration::from_secs(30) / 2);
}

#[test]
fn openai_retry_after_is_capped_by_rein_retry_max_delay() {
    rate_limited_always(Provider::OpenAi);
}

#[test]
fn anthropic_retry_after_is_capped_by_rein_retry_max_delay() {
    rate_limited_always(Provider::Anthropic);
}

// ---------------------------------------------------------------------------------------------
// Huge and undecodable replies.

/// Peak RSS allowed for a 10 MB answer: measured ~72 MiB alone (several copies: body, parsed
/// value, history, transcript line, stdout), up to 160 MiB with 2 cores busy (malloc arenas).
const HUGE_RSS_LIMIT_KIB: i64 = 256 * 1024;

/// 10 MB of text (lines of 99 characters; Anthropic streams it as 1,000 deltas) is printed
/// whole, recorded whole, and costs a bounded amount of memory.
fn huge_reply(p: Provider) {
    let e = env();
    let line = format!("{}\n", "0123456789".repeat(10).split_at(99).0);
    let piece = line.repeat(100); // 10,000 bytes
    let reply = match p {
        Provider::OpenAi => p.text(&piece.repeat(1000)),
        Provider::Anthropic => {
            let parts: Vec<&str> = std::iter::repeat_n(piece.as_str(), 1000).collect();
            Reply::Raw(sse(&Provider::text_events(&parts)))
        }
    };
    let text = piece.repeat(1000);
    let server = Server::start(vec![reply]);
    let run = rein(&e, p, &server, &[]);
    assert_eq!(run.code, Some(0), "stderr: {:.3000}", run.stderr);
    assert_eq!(run.stdout.len(), text.len() + 1);
    assert!(run.stdout == format!("{text}\n"), "stdout differs");
    assert!(
        run.max_rss_kib < HUGE_RSS_LIMIT_KIB,
        "peak RSS {} KiB for a 10 MB reply",
        run.max_rss_kib
    );
    let lines = e.transcript();
    let recorded = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .map(|l| l["message"]["content"][0]["text"].as_str().unwrap().len());
    assert_eq!(recorded, Some(text.len()));
    eprintln!("{}: peak RSS {} KiB", p.name(), run.max_rss_kib);
}

#[test]
fn openai_ten_mb_reply_is_printed_whole_with_bounded_memory() {
    huge_reply(Provider::OpenAi);
}

#[test]
fn anthropic_ten_mb_stream_is_printed_whole_with_bounded_memory() {
    huge_reply(Provider::Anthropic);
}

/// Invalid UTF-8 inside the answer costs the bad bytes (each becomes U+FFFD), not the turn;
/// a character split between two network reads survives whole.
fn invalid_utf8(p: Provider, reply: Reply) {
    let e = env();
    let server = Server::start(vec![reply]);
    let run = rein(&e, p, &server, &[]);
    let want = "caf\u{FFFD} ok \u{e9}t\u{e9}";
    assert_succeeded(&e, &run, want);
    assert_eq!(
        server.requests().len(),
        1,
        "a decodable reply is not retried"
    );
    let lines = e.transcript();
    let text = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .map(|l| l["message"]["content"][0]["text"].clone());
    assert_eq!(text, Some(json!(want)));
}

/// `caf<FF> ok été` as raw bytes, for splicing into a JSON string.
const BAD_TEXT: &[u8] = b"caf\xff ok \xc3\xa9t\xc3\xa9";

#[test]
fn openai_invalid_utf8_in_the_answer_is_replaced_not_fatal() {
    let mut body = br#"{"id":"chatcmpl-1","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":""#.to_vec();
    body.extend_from_slice(BAD_TEXT);
    body.extend_from_slice(br#""},"finish_reason":"stop"}]}"#);
    let reply = Reply::Raw(http("200 OK", &[], "application/json", &body));
    invalid_utf8(Provider::OpenAi, reply);
}

#[test]
fn anthropic_invalid_utf8_in_the_stream_is_replaced_not_fatal() {
    let events = Provider::text_events(&["@@"]);
    let whole = sse(&events);
    let at = whole.windows(2).position(|w| w == b"@@").unwrap();
    // The head and events up to the text; the bad text split inside the first `é`; the rest.
    let split = 9;
    let pieces = vec![
        [&whole[..at], &BAD_TEXT[..split]].concat(),
        [&BAD_TEXT[split..], &whole[at + 2..]].concat(),
    ];
    assert_eq!(&BAD_TEXT[split - 1..split + 1], b"\xc3\xa9");
    invalid_utf8(Provider::Anthropic, Reply::Pieces(pieces));
}
