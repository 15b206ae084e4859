//! The legacy HTTP+SSE transport (`type: "sse"`, MCP 2024-11-05), which `rmcp` no longer
//! ships: `GET <url>` opens an event stream whose first `endpoint` event names the URL to POST
//! JSON-RPC messages to; the server's messages arrive as `message` events on the stream.
//!
//! Bounded like the rest: one event over [`MAX_EVENT_BYTES`] ends the stream (the server then
//! counts as disconnected), a POST that is not answered 2xx is a send error.

use std::collections::HashMap;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// Largest event accepted from the stream (the SDK's cap for streamable HTTP events).
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why the SSE transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    #[error("{0}")]
    Http(String),
}

pub struct LegacySse {
    client: reqwest::Client,
    post_url: String,
    headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl LegacySse {
    /// Opens the event stream and waits for its `endpoint` event.
    pub async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> Result<LegacySse, String> {
        let mut req = client
            .get(url)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        for (k, v) in &headers {
            req = req.header(k, v);
        }
        let response = req.send().await.map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: HTTP {}", response.status().as_u16()));
        }
        let mut events = response.bytes_stream().eventsource();
        let post_url = loop {
            match events.next().await {
                None => return Err(format!("{url}: the event stream ended before its endpoint")),
                Some(Err(e)) => return Err(format!("{url}: {e}")),
                Some(Ok(ev)) if ev.event == "endpoint" => {
                    let base = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
                    let joined = base
                        .join(ev.data.trim())
                        .map_err(|e| format!("{url}: bad endpoint {:?}: {e}", ev.data))?;
                    break joined.to_string();
                }
                Some(Ok(_)) => {}
            }
        };
        let (tx, rx) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                let Ok(ev) = ev else { break };
                if ev.data.len() > MAX_EVENT_BYTES {
                    tracing::warn!(target: "rein::mcp", "an SSE event over {MAX_EVENT_BYTES} bytes; closing the stream");
                    break;
                }
                if !(ev.event.is_empty() || ev.event == "message") {
                    continue;
                }
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&ev.data) {
                    Ok(msg) => {
                        if tx.send(msg).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::debug!(target: "rein::mcp", "not a JSON-RPC message on the SSE stream: {e}");
                    }
                }
            }
        });
        Ok(LegacySse {
            client,
            post_url,
            headers,
            rx,
            reader,
        })
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut req = self.client.post(&self.post_url).json(&item);
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let url = self.post_url.clone();
        async move {
            let response = req
                .send()
                .await
                .map_err(|e| SseError::Http(format!("POST {url}: {e}")))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Http(format!(
                    "POST {url}: HTTP {}",
                    response.status().as_u16()
                )))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}
