//! A loopback model provider for the agent tests: answers each request (one per connection)
//! with the next scripted reply, streamed as the real API streams (Anthropic Messages SSE or
//! OpenAI chat-completion chunks), and records every request body.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Which API the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
}

impl Api {
    pub const BOTH: [Api; 2] = [Api::Anthropic, Api::OpenAi];

    pub fn provider(self) -> &'static str {
        match self {
            Api::Anthropic => "anthropic",
            Api::OpenAi => "openai",
        }
    }

    /// The request's system prompt (Anthropic `system`; OpenAI's leading system message).
    pub fn system_of(self, body: &Value) -> String {
        match self {
            Api::Anthropic => body["system"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            Api::OpenAi => {
                let first = &body["messages"][0];
                if first["role"] == "system" {
                    first["content"].as_str().unwrap_or_default().to_string()
                } else {
                    String::new()
                }
            }
        }
    }

    /// The request's conversation, without OpenAI's system message.
    pub fn messages_of(self, body: &Value) -> Vec<Value> {
        let all = crate::harness::without_cache_control(
            body["messages"].as_array().map_or(&[][..], Vec::as_slice),
        );
        match self {
            Api::Anthropic => all,
            Api::OpenAi => all.into_iter().filter(|m| m["role"] != "system").collect(),
        }
    }

    /// Sets the `rein` command's provider variables to point at `url`.
    pub fn point(self, cmd: &mut std::process::Command, url: &str) {
        cmd.arg("--provider").arg(self.provider());
        match self {
            Api::Anthropic => cmd
                .env("ANTHROPIC_BASE_URL", url)
                .env("ANTHROPIC_API_KEY", "test-key"),
            Api::OpenAi => cmd
                .env("OPENAI_BASE_URL", format!("{url}/v1"))
                .env("OPENAI_API_KEY", "test-key"),
        };
        cmd.env_remove("ANTHROPIC_MODEL")
            .env_remove("OPENAI_MODEL")
            .env("REIN_MAX_RETRIES", "0");
    }
}

/// One scripted model turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Text parts, streamed one event each.
    pub text: Vec<String>,
    /// `(id, name, input)` tool calls.
    pub calls: Vec<(String, String, Value)>,
    /// `(prompt tokens, output tokens)` reported, if any.
    pub usage: Option<(u64, u64)>,
    /// Pause between streamed events.
    pub pause: Duration,
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        Turn {
            text: vec![text.to_string()],
            calls: Vec::new(),
            usage: Some((10, 2)),
            pause: Duration::ZERO,
        }
    }

    pub fn call(id: &str, name: &str, input: Value) -> Turn {
        Turn {
            text: Vec::new(),
            calls: vec![(id.to_string(), name.to_string(), input)],
            usage: Some((10, 2)),
            pause: Duration::ZERO,
        }
    }

    pub fn usage(mut self, usage: Option<(u64, u64)>) -> Turn {
        self.usage = usage;
        self
    }

    fn events(&self, api: Api) -> Vec<String> {
        match api {
            Api::Anthropic => self.anthropic_events(),
            Api::OpenAi => self.openai_events(),
        }
    }

    fn anthropic_events(&self) -> Vec<String> {
        let ev = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
        let mut start = json!({"type": "message_start", "message": {"id": "msg_lb", "type": "message",
            "role": "assistant", "model": "claude-loopback", "content": [], "stop_reason": null}});
        if let Some((input, _)) = self.usage {
            start["message"]["usage"] = json!({"input_tokens": input, "output_tokens": 1,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
        }
        let mut out = vec![ev(start)];
        let mut index = 0;
        if !self.text.is_empty() {
            out.push(ev(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})));
            for part in &self.text {
                out.push(ev(json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": part}})));
            }
            out.push(ev(json!({"type": "content_block_stop", "index": 0})));
            index = 1;
        }
        for (id, name, input) in &self.calls {
            out.push(ev(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
            out.push(ev(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": input.to_string()}})));
            out.push(ev(json!({"type": "content_block_stop", "index": index})));
            index += 1;
        }
        let reason = if self.calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": reason}});
        if let Some((_, output)) = self.usage {
            delta["usage"] = json!({"output_tokens": output});
        }
        out.push(ev(delta));
        out.push(ev(json!({"type": "message_stop"})));
        out
    }

    fn openai_events(&self) -> Vec<String> {
        let chunk = |delta: Value, finish: Value| {
            let v = json!({"id": "chatcmpl-lb", "object": "chat.completion.chunk",
                "model": "gpt-loopback", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            format!("data: {v}\n\n")
        };
        let mut out = vec![chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )];
        for part in &self.text {
            out.push(chunk(json!({"content": part}), Value::Null));
        }
        for (i, (id, name, input)) in self.calls.iter().enumerate() {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                Value::Null,
            ));
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": input.to_string()}}]}),
                Value::Null,
            ));
        }
        let reason = if self.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        out.push(chunk(json!({}), json!(reason)));
        if let Some((input, output)) = self.usage {
            let v = json!({"id": "chatcmpl-lb", "object": "chat.completion.chunk",
                "model": "gpt-loopback", "choices": [],
                "usage": {"prompt_tokens": input, "completion_tokens": output,
                    "total_tokens": input + output}});
            out.push(format!("data: {v}\n\n"));
        }
        out.push("data: [DONE]\n\n".to_string());
        out
    }
}

/// The server; dropping it stops accepting.
pub struct Loopback {
    pub url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    refused: Arc<Mutex<Vec<String>>>,
}

impl Loopback {
    /// Serves `turns` in order (then a short text) for `api`.
    pub fn start(api: Api, turns: Vec<Turn>) -> Loopback {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let refused = Arc::new(Mutex::new(Vec::new()));
        let refusing = Arc::clone(&refused);
        let turns = Arc::new(Mutex::new(turns.into_iter()));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (recorded, turns, refusing) = (
                    Arc::clone(&recorded),
                    Arc::clone(&turns),
                    Arc::clone(&refusing),
                );
                std::thread::spawn(move || serve(stream, api, &recorded, &turns, &refusing));
            }
        });
        Loopback {
            url,
            requests,
            refused,
        }
    }

    /// Answers requests for `model` with 404 `not_found_error` (as the API answers an unknown
    /// model id) without taking a turn; they are recorded all the same.
    pub fn refuse_model(&self, model: &str) {
        self.refused.lock().unwrap().push(model.to_string());
    }

    /// Every request body so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    mut stream: TcpStream,
    api: Api,
    recorded: &Mutex<Vec<Value>>,
    turns: &Mutex<std::vec::IntoIter<Turn>>,
    refused: &Mutex<Vec<String>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
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
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    let model = body["model"].as_str().unwrap_or_default().to_string();
    if refused.lock().unwrap().contains(&model) {
        recorded.lock().unwrap().push(body);
        let error = json!({"type": "error", "error": {"type": "not_found_error",
            "message": format!("model: {model}")}})
        .to_string();
        let _ = stream.write_all(
            format!(
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{error}",
                error.len()
            )
            .as_bytes(),
        );
        return;
    }
    // The turn is taken while the request is recorded, so turns follow request order.
    let turn = {
        let mut recorded = recorded.lock().unwrap();
        recorded.push(body);
        turns.lock().unwrap().next()
    };
    let turn = turn.unwrap_or_else(|| Turn::text("(loopback: no more turns)"));
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    );
    for event in turn.events(api) {
        if stream.write_all(event.as_bytes()).is_err() {
            return;
        }
        let _ = stream.flush();
        if !turn.pause.is_zero() {
            std::thread::sleep(turn.pause);
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}
