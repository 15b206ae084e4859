//! The transport of `type: "sdk"` MCP servers: the Agent SDK that started rein serves them
//! in-process, and each JSON-RPC message travels as an `mcp_message` control request
//! ([`SdkBridge`], implemented by the CLI's control protocol). rmcp talks to one end of an
//! in-memory pipe; [`carry`] takes its lines to the SDK and writes the answers back.

use std::sync::Arc;

use serde_json::Value;

/// The program driving rein that serves `type: "sdk"` servers in-process (the Agent SDK): one
/// JSON-RPC message to server `server`, and what it answered (for a notification, an
/// acknowledgement to ignore).
pub trait SdkBridge: Send + Sync {
    fn send(
        &self,
        server: &str,
        message: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, String>> + Send>>;
}

/// [`SdkBridge`], when there is one.
#[derive(Clone, Default)]
pub struct SdkLink(pub Option<Arc<dyn SdkBridge>>);

impl std::fmt::Debug for SdkLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "SdkLink(connected)"
        } else {
            "SdkLink(none)"
        })
    }
}

/// The largest answer rein takes from an `sdk` server (bytes of JSON); a larger one is turned
/// into a JSON-RPC error saying so (rmcp would otherwise drop it without a word and the call
/// would wait for its timeout).
pub(crate) const SDK_MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// Carries the JSON-RPC lines rmcp writes for an `sdk` server to the SDK, one control request
/// each (concurrently: a slow tool call does not hold up the next message), and writes each
/// request's answer back. Ends when rmcp closes its side.
pub(crate) async fn carry(
    bridge: Arc<dyn SdkBridge>,
    server: String,
    pipe: tokio::io::DuplexStream,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (read, write) = tokio::io::split(pipe);
    let write = Arc::new(tokio::sync::Mutex::new(write));
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message.get("id").cloned();
        let is_request = id.is_some() && message.get("method").is_some();
        let (bridge, server, write) = (Arc::clone(&bridge), server.clone(), Arc::clone(&write));
        tokio::spawn(async move {
            let answer = bridge.send(&server, message).await;
            // A notification's acknowledgement (and an answer to a response) goes nowhere.
            let Some(id) = id.filter(|_| is_request) else {
                return;
            };
            let reply = match answer {
                Ok(reply) if reply.get("result").is_some() || reply.get("error").is_some() => {
                    let mut reply = reply;
                    if let Some(obj) = reply.as_object_mut() {
                        obj.insert("jsonrpc".into(), Value::from("2.0"));
                        obj.insert("id".into(), id);
                    }
                    reply
                }
                Ok(other) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603,
                    "message": format!("the SDK answered without a result or an error: {}",
                        shorten(&other.to_string())),
                }}),
                Err(why) => serde_json::json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32603, "message": why}}),
            };
            let mut text = reply.to_string();
            if text.len() > SDK_MAX_MESSAGE {
                text = serde_json::json!({"jsonrpc": "2.0", "id": reply.get("id"), "error": {
                    "code": -32603,
                    "message": format!("the SDK's answer is {} bytes, more than rein takes from an MCP server ({SDK_MAX_MESSAGE} bytes)", text.len()),
                }})
                .to_string();
            }
            text.push('\n');
            let mut w = write.lock().await;
            let _ = w.write_all(text.as_bytes()).await;
            let _ = w.flush().await;
        });
    }
}

/// The first 200 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
