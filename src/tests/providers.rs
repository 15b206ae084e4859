//! Providers against real loopback HTTP servers (OpenAI Chat Completions, Anthropic Messages
//! SSE), the mock model's prompt understanding and scripts, and provider configuration.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::agent::providers::{self, ModelConfigError, ProviderConfig, ProviderKind};
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelErrorKind, ModelResponse, Role, StopReason,
    ToolSpec, Usage,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------------------------
// A minimal HTTP/1.1 server: one canned reply per connection, every request recorded.

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: Value,
}

#[derive(Debug, Clone)]
enum Reply {
    /// Raw bytes written, then the connection is closed.
    Raw(String),
    /// Raw bytes written, then the connection is held open without another byte.
    RawThenHang(String),
    /// Nothing is ever written.
    Hang,
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// Serves `replies` in order; the last one repeats.
    async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            let mut n = 0usize;
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let reply = replies[n.min(replies.len() - 1)].clone();
                n += 1;
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move { serve(stream, reply, recorded).await });
            }
        });
        Server { url, requests }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, reply: Reply, recorded: Arc<Mutex<Vec<Recorded>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let mut headers = HashMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    let mut parts = request_line.split(' ');
    recorded.lock().unwrap().push(Recorded {
        method: parts.next().unwrap_or_default().to_string(),
        path: parts.next().unwrap_or_default().to_string(),
        headers,
        body,
    });
    match reply {
        Reply::Raw(bytes) => {
            let _ = stream.write_all(bytes.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
        Reply::RawThenHang(bytes) => {
            let _ = stream.write_all(bytes.as_bytes()).await;
            let _ = stream.flush().await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        Reply::Hang => tokio::time::sleep(Duration::from_secs(60)).await,
    }
}

fn http(status: &str, headers: &[(&str, &str)], content_type: &str, body: &str) -> String {
    let mut out = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out
}

fn json_reply(status: &str, body: &Value) -> Reply {
    Reply::Raw(http(status, &[], "application/json", &body.to_string()))
}

/// SSE head (no length: the body ends when the connection closes) plus events.
fn sse_bytes(events: &[Value]) -> String {
    let mut out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".to_string();
    for event in events {
        let name = event["type"].as_str().unwrap();
        out.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    out
}

fn config(kind: ProviderKind, server: &Server) -> ProviderConfig {
    let mut cfg = ProviderConfig::new(kind);
    cfg.base_url = Some(match kind {
        ProviderKind::OpenAi => format!("{}/v1", server.url),
        ProviderKind::Anthropic | ProviderKind::Mock => server.url.clone(),
    });
    cfg.api_key = Some("test-key".to_string());
    cfg.request_timeout = Duration::from_secs(5);
    cfg.max_retries = 2;
    cfg.retry_base = Duration::from_millis(5);
    cfg
}

fn model(cfg: &ProviderConfig) -> Box<dyn Model> {
    providers::from_config(cfg).unwrap()
}

fn bash_tool() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "Bash".to_string(),
        description: "Run a shell command".to_string(),
        input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    }]
}

/// user prompt → assistant Bash call → user error result: the shape of a tool round trip.
fn round_trip_history() -> Vec<Message> {
    vec![
        Message::user_text("list the files"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Text {
                    text: "Listing.".to_string(),
                },
                ContentBlock::ToolUse {
                    id: "call_1".to_string(),
                    name: "Bash".to_string(),
                    input: json!({"command": "ls"}),
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".to_string(),
                content: "PreToolUse:Bash hook error: no".to_string(),
                is_error: true,
            }],
        },
    ]
}

async fn complete(model: &dyn Model, messages: &[Message]) -> Result<ModelResponse, ModelError> {
    model.complete(messages, &bash_tool()).await
}

fn text_of(response: &ModelResponse) -> String {
    response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolUse { .. }
            | ContentBlock::SystemNote { .. }
            | ContentBlock::ToolResult { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------------
// OpenAI

fn openai_text(text: &str) -> Value {
    json!({"id": "chatcmpl-1", "model": "gpt-test", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
}

#[tokio::test]
async fn openai_text_answer() {
    let server = Server::start(vec![json_reply("200 OK", &openai_text("Hello there"))]).await;
    let mut cfg = config(ProviderKind::OpenAi, &server);
    cfg.model = Some("gpt-test".to_string());
    cfg.system = Some("Be brief.".to_string());
    let model = model(&cfg);
    assert_eq!(model.name(), "gpt-test");
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(
        response,
        ModelResponse {
            id: Some("chatcmpl-1".to_string()),
            model: "gpt-test".to_string(),
            content: vec![ContentBlock::Text {
                text: "Hello there".to_string()
            }],
            stop_reason: StopReason::EndTurn,
            usage: None,
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer test-key");
    assert_eq!(
        requests[0].body["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(requests[0].body["model"], "gpt-test");
}

#[tokio::test]
async fn openai_tool_call_round_trip() {
    let reply = json!({"id": "chatcmpl-2", "model": "gpt-test", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls -a\"}"}},
            {"id": "call_3", "type": "function", "function": {"name": "NoSuchTool", "arguments": "{}"}}
        ]}, "finish_reason": "tool_calls"}]});
    let server = Server::start(vec![json_reply("200 OK", &reply)]).await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let response = complete(&*model, &round_trip_history()).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolUse {
                id: "call_2".to_string(),
                name: "Bash".to_string(),
                input: json!({"command": "ls -a"}),
            },
            ContentBlock::ToolUse {
                id: "call_3".to_string(),
                name: "NoSuchTool".to_string(),
                input: json!({}),
            },
        ]
    );
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "Bash", "description": "Run a shell command",
            "parameters": bash_tool()[0].input_schema}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": "Listing.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "PreToolUse:Bash hook error: no"}
        ])
    );
}

#[tokio::test]
async fn openai_malformed_arguments_and_missing_ids() {
    let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "Bash", "arguments": "{not json"}},
        {"type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"pwd\"}"}}
    ]}, "finish_reason": "stop"}]});
    let server = Server::start(vec![json_reply("200 OK", &reply)]).await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let response = complete(&*model, &[Message::user_text("go")])
        .await
        .unwrap();
    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolUse {
                id: "toolu_rein_1".to_string(),
                name: "Bash".to_string(),
                input: Value::String("{not json".to_string()),
            },
            ContentBlock::ToolUse {
                id: "toolu_rein_2".to_string(),
                name: "Bash".to_string(),
                input: json!({"command": "pwd"}),
            },
        ]
    );
    // "stop" with tool calls still means the loop must run them.
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    // The configured model name stands in when the response has none.
    assert_eq!(response.model, providers::DEFAULT_OPENAI_MODEL);
}

#[tokio::test]
async fn openai_429_is_retried_after_retry_after() {
    let limited = Reply::Raw(http(
        "429 Too Many Requests",
        &[("retry-after-ms", "300")],
        "application/json",
        r#"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#,
    ));
    let server = Server::start(vec![limited, json_reply("200 OK", &openai_text("ok"))]).await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let started = Instant::now();
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(text_of(&response), "ok");
    assert_eq!(server.requests().len(), 2);
    // The server's retry-after-ms (300) beats the 5 ms backoff.
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn openai_401_is_not_retried_and_says_why() {
    let denied = Reply::Raw(http(
        "401 Unauthorized",
        &[],
        "application/json",
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    ));
    let server = Server::start(vec![denied]).await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(err.kind, ModelErrorKind::AuthenticationFailed);
    assert_eq!(
        err.to_string(),
        format!(
            "openai: HTTP 401 Unauthorized from {}/v1/chat/completions: Incorrect API key provided (invalid_request_error); check OPENAI_API_KEY",
            server.url
        )
    );
}

#[tokio::test]
async fn openai_404_is_model_not_found() {
    let missing = json_reply(
        "404 Not Found",
        &json!({"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}),
    );
    let server = Server::start(vec![missing]).await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::ModelNotFound);
    assert!(
        err.message.contains("The model `nope` does not exist"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn openai_500_gives_up_after_retries() {
    let server = Server::start(vec![Reply::Raw(http(
        "500 Internal Server Error",
        &[],
        "text/plain",
        "boom",
    ))])
    .await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(server.requests().len(), 3, "1 attempt + 2 retries");
    assert_eq!(err.kind, ModelErrorKind::ServerError);
    assert_eq!(
        err.message,
        format!(
            "HTTP 500 Internal Server Error from {}/v1/chat/completions: boom (gave up after 3 attempts)",
            server.url
        )
    );
}

#[tokio::test]
async fn openai_malformed_body_quotes_it() {
    let server = Server::start(vec![Reply::Raw(http(
        "200 OK",
        &[],
        "application/json",
        "<html>not json</html>",
    ))])
    .await;
    let model = model(&config(ProviderKind::OpenAi, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Unknown);
    assert!(err.message.starts_with("malformed response from"), "{err}");
    assert!(err.message.ends_with("<html>not json</html>"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn openai_server_that_never_answers_times_out() {
    let server = Server::start(vec![Reply::Hang]).await;
    let mut cfg = config(ProviderKind::OpenAi, &server);
    cfg.request_timeout = Duration::from_millis(300);
    cfg.max_retries = 1;
    let model = model(&cfg);
    let started = Instant::now();
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(server.requests().len(), 2, "a timeout is retried");
    assert!(err.message.contains("timed out"), "{err}");
    assert!(err.message.contains("300 ms"), "{err}");
    // Two attempts of 300 ms each plus a 5 ms backoff; generous slack for a loaded CI box.
    let budget = cfg.request_timeout * 2;
    assert!(elapsed >= budget, "{elapsed:?}");
    assert!(elapsed < budget * 4, "{elapsed:?}");
}

#[tokio::test]
async fn openai_refused_connection_names_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
    cfg.base_url = Some(format!("{url}/v1"));
    cfg.max_retries = 1;
    cfg.retry_base = Duration::from_millis(1);
    let model = model(&cfg);
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Unknown);
    assert!(
        err.message
            .starts_with(&format!("cannot connect to {url}/v1/chat/completions")),
        "{err}"
    );
    assert!(err.message.ends_with("(gave up after 2 attempts)"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Anthropic

fn message_start() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 3, "output_tokens": 1}}})
}

fn text_stream(text_parts: &[&str]) -> Vec<Value> {
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
    ];
    for part in text_parts {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": part}}));
    }
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]);
    events
}

fn tool_stream(id: Option<&str>, json_parts: &[&str]) -> Vec<Value> {
    let mut block = json!({"type": "tool_use", "name": "Bash", "input": {}});
    if let Some(id) = id {
        block["id"] = json!(id);
    }
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": block}),
    ];
    for part in json_parts {
        events.push(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": part}}));
    }
    events.extend([
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ]);
    events
}

#[tokio::test]
async fn anthropic_streamed_text_answer() {
    let server = Server::start(vec![Reply::Raw(sse_bytes(&text_stream(&["Hel", "lo"])))]).await;
    let mut cfg = config(ProviderKind::Anthropic, &server);
    cfg.system = Some("Be brief.".to_string());
    let model = model(&cfg);
    assert_eq!(model.name(), providers::DEFAULT_ANTHROPIC_MODEL);
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(
        response,
        ModelResponse {
            id: Some("msg_1".to_string()),
            model: "claude-test".to_string(),
            content: vec![ContentBlock::Text {
                text: "Hello".to_string()
            }],
            stop_reason: StopReason::EndTurn,
            // message_start's input count, message_delta's final output count.
            usage: Some(Usage {
                input_tokens: 3,
                output_tokens: 5,
                ..Usage::default()
            }),
        }
    );
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "test-key");
    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
    assert_eq!(request.body["stream"], true);
    assert_eq!(
        request.body["system"],
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(request.body["max_tokens"], providers::DEFAULT_MAX_TOKENS);
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi",
            "cache_control": {"type": "ephemeral"}}]}])
    );
}

#[tokio::test]
async fn anthropic_tool_call_round_trip() {
    let server = Server::start(vec![Reply::Raw(sse_bytes(&tool_stream(
        Some("toolu_9"),
        &["{\"comm", "and\": \"ls", " -a\"}"],
    )))])
    .await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &round_trip_history()).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Text {
                text: "Let me look.".to_string()
            },
            ContentBlock::ToolUse {
                id: "toolu_9".to_string(),
                name: "Bash".to_string(),
                input: json!({"command": "ls -a"}),
            },
        ]
    );
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"],
        json!([{"name": "Bash", "description": "Run a shell command", "input_schema": bash_tool()[0].input_schema}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                "content": "PreToolUse:Bash hook error: no", "is_error": true,
                "cache_control": {"type": "ephemeral"}}]}
        ])
    );
}

#[tokio::test]
async fn anthropic_malformed_arguments_and_missing_id() {
    let server = Server::start(vec![Reply::Raw(sse_bytes(&tool_stream(
        None,
        &["{not json"],
    )))])
    .await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &[Message::user_text("go")])
        .await
        .unwrap();
    assert_eq!(
        response.content[1],
        ContentBlock::ToolUse {
            id: "toolu_rein_1".to_string(),
            name: "Bash".to_string(),
            input: Value::String("{not json".to_string()),
        }
    );
}

#[tokio::test]
async fn anthropic_stream_cut_midway_is_retried() {
    let full = text_stream(&["Hel", "lo"]);
    let cut = Reply::Raw(sse_bytes(&full[..4]));
    let server = Server::start(vec![cut, Reply::Raw(sse_bytes(&full))]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(text_of(&response), "Hello");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_stream_always_cut_is_an_error() {
    let full = text_stream(&["Hel", "lo"]);
    let server = Server::start(vec![Reply::Raw(sse_bytes(&full[..4]))]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::ServerError);
    assert_eq!(
        err.to_string(),
        format!(
            "anthropic: stream from {}/v1/messages ended before message_stop (gave up after 3 attempts)",
            server.url
        )
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn anthropic_429_then_success() {
    let limited = json_reply(
        "429 Too Many Requests",
        &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"}}),
    );
    let server = Server::start(vec![limited, Reply::Raw(sse_bytes(&text_stream(&["ok"])))]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(text_of(&response), "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_401_is_not_retried() {
    let denied = json_reply(
        "401 Unauthorized",
        &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    );
    let server = Server::start(vec![denied]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(err.kind, ModelErrorKind::AuthenticationFailed);
    assert_eq!(
        err.to_string(),
        format!(
            "anthropic: HTTP 401 Unauthorized from {}/v1/messages: invalid x-api-key (authentication_error); check ANTHROPIC_API_KEY",
            server.url
        )
    );
}

#[tokio::test]
async fn anthropic_529_overloaded_after_retries() {
    let overloaded = json_reply(
        "529 Overloaded",
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = Server::start(vec![overloaded]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Overloaded);
    assert_eq!(server.requests().len(), 3);
    assert!(err.message.contains("HTTP 529"), "{err}");
}

#[tokio::test]
async fn anthropic_error_event_mid_stream_is_retried() {
    let mut events = text_stream(&["Hel"]);
    events.truncate(3);
    events.push(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = Server::start(vec![
        Reply::Raw(sse_bytes(&events)),
        Reply::Raw(sse_bytes(&text_stream(&["fine"]))),
    ])
    .await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(text_of(&response), "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn anthropic_silent_stream_times_out() {
    let head = sse_bytes(&[message_start()]);
    let server = Server::start(vec![Reply::RawThenHang(head)]).await;
    let mut cfg = config(ProviderKind::Anthropic, &server);
    cfg.request_timeout = Duration::from_millis(300);
    cfg.max_retries = 0;
    let model = model(&cfg);
    let started = Instant::now();
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(
        err.message,
        format!(
            "request to {}/v1/messages timed out: no stream event within 300 ms (REIN_REQUEST_TIMEOUT_MS)",
            server.url
        )
    );
    assert!(elapsed >= cfg.request_timeout, "{elapsed:?}");
    assert!(elapsed < cfg.request_timeout * 4, "{elapsed:?}");
}

#[tokio::test]
async fn anthropic_malformed_json_body() {
    let server = Server::start(vec![Reply::Raw(http(
        "200 OK",
        &[],
        "application/json",
        "{\"content\": tru}",
    ))])
    .await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let err = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Unknown);
    assert!(err.message.contains("invalid JSON"), "{err}");
    assert!(err.message.ends_with("{\"content\": tru}"), "{err}");
}

/// A whole (non-streamed) reply cut in the middle of its JSON is a broken read, retried, with
/// both providers (they share the path since the assembler was folded).
#[tokio::test]
async fn a_whole_reply_cut_mid_json_is_retried_with_both_providers() {
    for kind in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
        let cut = || {
            Reply::Raw(http(
                "200 OK",
                &[],
                "application/json",
                "{\"content\": [tru",
            ))
        };
        let server = Server::start(vec![cut(), cut(), cut(), cut()]).await;
        let mut cfg = config(kind, &server);
        cfg.max_retries = 1;
        let model = model(&cfg);
        let err = complete(&*model, &[Message::user_text("hi")])
            .await
            .unwrap_err();
        assert!(
            err.message.contains("in the middle of its JSON"),
            "{kind:?}: {err}"
        );
        assert_eq!(
            server.requests().len(),
            2,
            "{kind:?}: one try and one retry"
        );
    }
}

#[tokio::test]
async fn anthropic_non_streamed_json_answer_is_accepted() {
    let body = json!({"id": "msg_2", "model": "claude-test", "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]});
    let server = Server::start(vec![json_reply("200 OK", &body)]).await;
    let model = model(&config(ProviderKind::Anthropic, &server));
    let response = complete(&*model, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.content,
        vec![ContentBlock::ToolUse {
            id: "toolu_1".to_string(),
            name: "Bash".to_string(),
            input: json!({"command": "ls"}),
        }]
    );
}

// ---------------------------------------------------------------------------------------------
// Mock

fn mock() -> Box<dyn Model> {
    model(&ProviderConfig::new(ProviderKind::Mock))
}

fn all_tools() -> Vec<ToolSpec> {
    ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]
        .iter()
        .map(|name| ToolSpec {
            name: name.to_string(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
        })
        .collect()
}

fn tool_uses(response: &ModelResponse) -> Vec<(String, String, Value)> {
    response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => {
                Some((id.clone(), name.clone(), input.clone()))
            }
            ContentBlock::Text { .. }
            | ContentBlock::SystemNote { .. }
            | ContentBlock::ToolResult { .. } => None,
        })
        .collect()
}

/// Plays a prompt to the end, answering each call with `results[i]` (content, is_error).
async fn play(model: &dyn Model, prompt: &str, results: &[(&str, bool)]) -> Vec<ModelResponse> {
    let mut messages = vec![Message::user_text(prompt)];
    let mut responses = Vec::new();
    let mut pending = results.iter();
    loop {
        let response = model.complete(&messages, &all_tools()).await.unwrap();
        messages.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
        });
        let calls = tool_uses(&response);
        responses.push(response);
        if calls.is_empty() {
            break;
        }
        let &(content, is_error) = pending
            .next()
            .expect("more tool calls than scripted results");
        messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: calls[0].0.clone(),
                content: content.to_string(),
                is_error,
            }],
        });
    }
    responses
}

#[tokio::test]
async fn mock_understands_english_and_chinese() {
    let cases = [
        (
            "read file package.json",
            "Read",
            json!({"file_path": "package.json"}),
        ),
        (
            "请读取文件 src/lib.rs",
            "Read",
            json!({"file_path": "src/lib.rs"}),
        ),
        (
            "run command rm -rf /",
            "Bash",
            json!({"command": "rm -rf /"}),
        ),
        ("执行命令 whoami", "Bash", json!({"command": "whoami"})),
        (
            "写入 你好 到 a.txt",
            "Write",
            json!({"file_path": "a.txt", "content": "你好"}),
        ),
        (
            "write \"two\\nlines\" to b.txt",
            "Write",
            json!({"file_path": "b.txt", "content": "two\nlines"}),
        ),
        (
            "edit a.txt replace old text with new text",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "old text", "new_string": "new text"}),
        ),
        ("list files **/*.rs", "Glob", json!({"pattern": "**/*.rs"})),
        ("grep fn\\s+main", "Grep", json!({"pattern": "fn\\s+main"})),
    ];
    let model = mock();
    for (prompt, name, input) in cases {
        let response = model
            .complete(&[Message::user_text(prompt)], &all_tools())
            .await
            .unwrap();
        assert_eq!(response.stop_reason, StopReason::ToolUse, "{prompt}");
        assert_eq!(
            tool_uses(&response),
            vec![("toolu_mock_1_0".to_string(), name.to_string(), input)],
            "{prompt}"
        );
    }
}

#[tokio::test]
async fn mock_plays_clauses_one_per_turn_and_summarises() {
    let model = mock();
    let responses = play(
        &*model,
        "读文件 ./Cargo.toml；执行命令 whoami；执行命令 rm -rf /",
        &[
            (
                "     1\t[package]\n     2\tname = \"rein\"\n     3\t",
                false,
            ),
            ("root\n", false),
            (
                "PreToolUse:Bash hook error: [./hooks/guard.sh]: rm -rf is not allowed\n",
                true,
            ),
        ],
    )
    .await;
    assert_eq!(responses.len(), 4);
    let calls: Vec<_> = responses.iter().flat_map(tool_uses).collect();
    assert_eq!(
        calls,
        vec![
            (
                "toolu_mock_1_0".to_string(),
                "Read".to_string(),
                json!({"file_path": "./Cargo.toml"})
            ),
            (
                "toolu_mock_2_0".to_string(),
                "Bash".to_string(),
                json!({"command": "whoami"})
            ),
            (
                "toolu_mock_3_0".to_string(),
                "Bash".to_string(),
                json!({"command": "rm -rf /"})
            ),
        ]
    );
    let last = &responses[3];
    assert_eq!(last.stop_reason, StopReason::EndTurn);
    assert_eq!(
        text_of(last),
        "./Cargo.toml：共 3 行；第一行：[package]\n\
         `whoami` 的输出：\nroot\n\
         工具调用被拒绝：Bash `rm -rf /` 被阻止：PreToolUse:Bash hook error: [./hooks/guard.sh]: rm -rf is not allowed"
    );
}

#[tokio::test]
async fn mock_changes_course_after_a_refusal() {
    let model = mock();
    let responses = play(
        &*model,
        "run command rm -rf /, then read file notes.txt",
        &[
            (
                "PreToolUse:Bash hook error: JSON-DENY-REASON: writes are forbidden",
                true,
            ),
            ("     1\tline one", false),
        ],
    )
    .await;
    assert_eq!(responses.len(), 3);
    assert_eq!(
        text_of(&responses[1]),
        "The tool call was refused: Bash `rm -rf /` was blocked: PreToolUse:Bash hook error: JSON-DENY-REASON: writes are forbidden\nMoving on to the next step."
    );
    assert_eq!(tool_uses(&responses[1])[0].1, "Read");
    assert!(text_of(&responses[2]).ends_with("notes.txt: 1 line; first line: line one"));
}

#[tokio::test]
async fn mock_without_understanding_explains_itself() {
    let model = mock();
    let en = model
        .complete(&[Message::user_text("tell me a joke")], &all_tools())
        .await
        .unwrap();
    assert_eq!(en.stop_reason, StopReason::EndTurn);
    assert!(text_of(&en).starts_with("I'm rein's offline mock model. I can read files"));
    let zh = model
        .complete(&[Message::user_text("讲个笑话")], &all_tools())
        .await
        .unwrap();
    assert!(text_of(&zh).starts_with("我是 rein 的离线模拟模型"));
}

#[tokio::test]
async fn mock_skips_tools_that_are_not_offered() {
    let model = mock();
    let read_only = vec![all_tools()[1].clone()];
    let response = model
        .complete(
            &[Message::user_text("run command ls; read file a")],
            &read_only,
        )
        .await
        .unwrap();
    assert_eq!(tool_uses(&response)[0].1, "Read");
}

#[tokio::test]
async fn mock_ignores_hook_context_when_finding_the_prompt() {
    let model = mock();
    let messages = vec![
        Message::user_text("read file a.txt"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "toolu_mock_1_0".to_string(),
                name: "Read".to_string(),
                input: json!({"file_path": "a.txt"}),
            }],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_mock_1_0".to_string(),
                content: "     1\thello".to_string(),
                is_error: false,
            }],
        },
        Message::user_text(
            "<system-reminder>PostToolUse:Read hook additional context: CHECKED</system-reminder>",
        ),
    ];
    let response = model.complete(&messages, &all_tools()).await.unwrap();
    assert_eq!(
        text_of(&response),
        "a.txt: 1 line; first line: hello\nHook feedback noted: PostToolUse:Read hook additional context: CHECKED"
    );
}

fn write_script(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn script_model(path: &std::path::Path) -> Result<Box<dyn Model>, ModelConfigError> {
    let mut cfg = ProviderConfig::new(ProviderKind::Mock);
    cfg.mock_script = Some(path.to_path_buf());
    providers::from_config(&cfg)
}

#[tokio::test]
async fn mock_script_plays_turns_in_order() {
    let (_dir, path) = write_script(
        r#"[
  {"tool_use": [{"name": "Bash", "input": {"command": "echo hi"}},
                {"name": "Read", "id": "custom", "input_raw": "{not json"}]},
  {"error": "rate_limit", "message": "scripted slow down"},
  {"text": "done"}
]"#,
    );
    let model = script_model(&path).unwrap();
    let prompt = [Message::user_text("anything")];
    let first = model.complete(&prompt, &[]).await.unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(
        tool_uses(&first),
        vec![
            (
                "toolu_mock_1_0".to_string(),
                "Bash".to_string(),
                json!({"command": "echo hi"})
            ),
            (
                "custom".to_string(),
                "Read".to_string(),
                Value::String("{not json".to_string())
            ),
        ]
    );
    let err = model.complete(&prompt, &[]).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::RateLimit);
    assert_eq!(err.to_string(), "mock: scripted slow down");
    assert_eq!(
        text_of(&model.complete(&prompt, &[]).await.unwrap()),
        "done"
    );
    let after = model.complete(&prompt, &[]).await.unwrap();
    assert_eq!(after.stop_reason, StopReason::EndTurn);
    assert!(text_of(&after).contains("has no more turns"));
}

#[test]
fn mock_script_errors_name_the_file_and_place() {
    let (_dir, path) = write_script("[\n  {\"text\": \"a\"},\n  {\"text\": }\n]");
    let err = script_model(&path).err().unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "mock script {}:3:12: invalid JSON: expected value",
            path.display()
        )
    );

    let cases = [
        (
            r#"{"text": "a"}"#,
            "unknown key \"text\" (an object script has \"turns\", \"agents\" and \"hooks\")",
        ),
        (
            r#"[{"text": "a"}, {"tool_use": []}]"#,
            "element 1: \"tool_use\" is an empty array",
        ),
        (
            r#"[{"tool_use": [{"input": {}}]}]"#,
            "element 0: tool_use[0]: missing \"name\"",
        ),
        (
            r#"[{"text": "a", "error": "rate_limit"}]"#,
            "element 0: has text and error",
        ),
        (
            r#"[{"error": "teapot"}]"#,
            "element 0: unknown error kind \"teapot\"",
        ),
        (r#"[{"txt": "a"}]"#, "element 0: expected one of"),
    ];
    for (text, expected) in cases {
        let (_dir, path) = write_script(text);
        let err = script_model(&path).err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("mock script {}: {expected}", path.display())),
            "{text}: {err}"
        );
    }

    let missing = std::path::Path::new("/nonexistent/rein-script.json");
    let err = script_model(missing).err().unwrap().to_string();
    assert!(
        err.starts_with("cannot read mock script /nonexistent/rein-script.json: "),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn provider_precedence() {
    let pick = |flag: Option<&str>, script: bool, env: &[(&str, &str)]| {
        ProviderConfig::from_lookup(flag, None, script.then(|| "s.json".into()), lookup(env))
            .unwrap()
            .provider
    };
    let both = [("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a")];
    assert_eq!(pick(None, false, &[]), ProviderKind::Mock);
    assert_eq!(
        pick(None, false, &[("OPENAI_API_KEY", "o")]),
        ProviderKind::OpenAi
    );
    assert_eq!(
        pick(None, false, &[("ANTHROPIC_API_KEY", "a")]),
        ProviderKind::Anthropic
    );
    assert_eq!(pick(None, false, &both), ProviderKind::Anthropic);
    assert_eq!(
        pick(None, false, &[("OPENAI_API_KEY", "")]),
        ProviderKind::Mock
    );
    assert_eq!(pick(None, true, &both), ProviderKind::Mock);
    assert_eq!(pick(Some("openai"), false, &both), ProviderKind::OpenAi);
    assert_eq!(pick(Some("MOCK"), false, &both), ProviderKind::Mock);
    let mut env = both.to_vec();
    env.push(("REIN_PROVIDER", "openai"));
    assert_eq!(pick(None, false, &env), ProviderKind::OpenAi);
}

#[test]
fn config_reads_models_keys_and_timeouts() {
    let cfg = ProviderConfig::from_lookup(
        None,
        None,
        None,
        lookup(&[
            ("OPENAI_API_KEY", "sk-secret"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_MODEL", "gpt-env"),
            ("REIN_REQUEST_TIMEOUT_MS", "250"),
            ("REIN_MAX_RETRIES", "0"),
        ]),
    )
    .unwrap();
    assert_eq!(cfg.model.as_deref(), Some("gpt-env"));
    assert_eq!(cfg.api_key.as_deref(), Some("sk-secret"));
    assert_eq!(cfg.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert_eq!(cfg.request_timeout, Duration::from_millis(250));
    assert_eq!(cfg.max_retries, 0);
    assert!(!format!("{cfg:?}").contains("sk-secret"));

    let flagged = ProviderConfig::from_lookup(
        None,
        Some("gpt-flag"),
        None,
        lookup(&[("OPENAI_API_KEY", "k"), ("OPENAI_MODEL", "gpt-env")]),
    )
    .unwrap();
    assert_eq!(flagged.model.as_deref(), Some("gpt-flag"));

    let err = ProviderConfig::from_lookup(
        None,
        None,
        None,
        lookup(&[("REIN_REQUEST_TIMEOUT_MS", "soon")]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "environment variable REIN_REQUEST_TIMEOUT_MS=\"soon\" is invalid: expected a non-negative integer"
    );
    let err = ProviderConfig::from_lookup(Some("gemini"), None, None, lookup(&[])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown provider 'gemini' (from --provider); expected mock, openai or anthropic"
    );
}

#[test]
fn real_providers_need_a_key_for_public_endpoints() {
    let err = providers::from_config(&ProviderConfig::new(ProviderKind::Anthropic))
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "provider anthropic needs an API key: set ANTHROPIC_API_KEY (or point ANTHROPIC_BASE_URL at a server that needs none)"
    );
    let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
    cfg.api_key = Some("k".to_string());
    cfg.mock_script = Some("s.json".into());
    let err = providers::from_config(&cfg).err().unwrap();
    assert_eq!(
        err.to_string(),
        "--mock-script only works with the mock provider, not openai"
    );
    cfg.mock_script = None;
    cfg.base_url = Some("ftp://example.com".to_string());
    let err = providers::from_config(&cfg).err().unwrap();
    assert!(
        err.to_string()
            .contains("scheme 'ftp' is not http or https")
    );
}

#[tokio::test]
async fn mock_acts_on_stop_hook_feedback() {
    let model = mock();
    let history = |feedback: &str| {
        vec![
            Message::user_text("hello"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: "hi".to_string(),
                }],
            },
            Message::user_text(feedback),
        ]
    };
    let actionable = model
        .complete(
            &history("Stop hook feedback:\nSTOP-BLOCK-REASON: run command cargo test"),
            &all_tools(),
        )
        .await
        .unwrap();
    assert_eq!(
        tool_uses(&actionable),
        vec![(
            "toolu_mock_2_0".to_string(),
            "Bash".to_string(),
            json!({"command": "cargo test"})
        )]
    );
    let vague = model
        .complete(
            &history("Stop hook feedback:\n[./stop.sh]: STOP-EXIT2-STDERR: keep going\n"),
            &all_tools(),
        )
        .await
        .unwrap();
    assert_eq!(vague.stop_reason, StopReason::EndTurn);
    assert_eq!(
        text_of(&vague),
        "Stop hook feedback received: [./stop.sh]: STOP-EXIT2-STDERR: keep going. There is nothing more I can do offline."
    );
}

#[tokio::test]
async fn mock_treats_unwrapped_hook_context_as_context() {
    let model = mock();
    let messages = vec![
        Message::user_text("run command ls"),
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "toolu_mock_1_0".to_string(),
                name: "Bash".to_string(),
                input: json!({"command": "ls"}),
            }],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_mock_1_0".to_string(),
                content: String::new(),
                is_error: false,
            }],
        },
        Message::user_text(
            "PostToolUse:Bash hook blocking error from command: \"post.sh\": output looked wrong",
        ),
    ];
    let response = model.complete(&messages, &all_tools()).await.unwrap();
    assert_eq!(
        text_of(&response),
        "`ls` finished with no output.\nHook feedback noted: PostToolUse:Bash hook blocking error from command: \"post.sh\": output looked wrong"
    );
}

#[tokio::test]
async fn mock_tells_a_failure_from_a_refusal() {
    let model = mock();
    let responses = play(
        &*model,
        "run command ls secret",
        &[(
            "Exit code 2\nls: cannot open directory 'secret': Permission denied",
            true,
        )],
    )
    .await;
    assert_eq!(
        text_of(&responses[1]),
        "The Bash call `ls secret` failed: Exit code 2\nls: cannot open directory 'secret': Permission denied"
    );
}

/// System notes follow their message's other blocks as `<system-reminder>` texts, in both
/// providers (the public APIs take no system role inside the conversation); the Anthropic
/// request's last block carries the cache breakpoint.
#[test]
fn system_notes_follow_their_message_as_reminders() {
    let note = |t: &str| ContentBlock::SystemNote { text: t.into() };
    let r = |t: &str| format!("<system-reminder>\n{t}\n</system-reminder>");
    let messages = vec![
        Message {
            role: Role::User,
            content: vec![
                note("SS"),
                ContentBlock::Text { text: "go".into() },
                note("UPS"),
            ],
        },
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "t1".into(),
                name: "Bash".into(),
                input: json!({"command": "true"}),
            }],
        },
        Message {
            role: Role::User,
            content: vec![
                note("POST"),
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "ok".into(),
                    is_error: false,
                },
            ],
        },
    ];
    let body = crate::agent::providers::anthropic::request_body("m", None, 10, &messages, &[]);
    let shape: Vec<(String, Value)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (
                "user".into(),
                json!([
                    {"type": "text", "text": "go"},
                    {"type": "text", "text": r("SS")},
                    {"type": "text", "text": r("UPS")},
                ])
            ),
            (
                "assistant".into(),
                json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "true"}}])
            ),
            (
                "user".into(),
                json!([
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": false},
                    {"type": "text", "text": r("POST"), "cache_control": {"type": "ephemeral"}},
                ])
            ),
        ]
    );
    let body = crate::agent::providers::openai::request_body("m", None, &messages, &[]);
    assert_eq!(
        body["messages"][0]["content"],
        format!("go\n\n{}\n\n{}", r("SS"), r("UPS"))
    );
}
