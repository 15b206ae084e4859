//! Connections to MCP servers over the official Rust SDK (`rmcp`): stdio children rein spawns
//! itself (own process group, stderr drained), streamable HTTP over reqwest.
//!
//! Faults stay with their server: every server starts in parallel under `MCP_TIMEOUT`; one
//! that cannot start, hangs during the handshake or dies later is reported by name and its
//! tools stop being offered; a call has `MCP_TOOL_TIMEOUT`; a line over rmcp's 16 MiB cap or
//! one that is not JSON-RPC is dropped by the SDK. At the end of the session (or when the
//! manager is dropped) every child's process group gets SIGTERM, then SIGKILL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use crate::mcp::config::{ServerConfig, Transport};

/// `MCP_TIMEOUT` default: how long a server may take to start and answer `initialize`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// `MCP_TOOL_TIMEOUT` default (Claude Code's: effectively none, 100 000 000 ms).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_millis(100_000_000);
/// How long a child's group has between SIGTERM and SIGKILL at shutdown.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// Bytes of a server's stderr kept to explain a failure.
const STDERR_TAIL: usize = 4096;

/// Timeouts and limits of a session's servers, and the link to the program serving
/// `type: "sdk"` servers.
#[derive(Debug, Clone)]
pub struct Limits {
    pub startup: Duration,
    pub tool_call: Duration,
    pub sdk: crate::mcp::sdk_transport::SdkLink,
}

impl Limits {
    /// `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` (milliseconds) from `lookup`, else the defaults.
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Limits {
        let ms = |name: &str| {
            lookup(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|v| *v > 0)
                .map(Duration::from_millis)
        };
        Limits {
            startup: ms("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            tool_call: ms("MCP_TOOL_TIMEOUT").unwrap_or(DEFAULT_TOOL_TIMEOUT),
            sdk: crate::mcp::sdk_transport::SdkLink::default(),
        }
    }
}

/// Where a server stands; its word is what stream-json's `init` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Connected,
    /// Could not start, or died; why.
    Failed(String),
    /// A `.mcp.json` server nobody approved: not started.
    Pending,
    /// Switched off by `disabledMcpjsonServers`.
    Disabled,
}

impl Status {
    /// `connected`, `failed`, `pending`, `disabled`.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::Failed(_) => "failed",
            Status::Pending => "pending",
            Status::Disabled => "disabled",
        }
    }
}

/// One tool a server offers, as listed.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Why a call gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The server answered with a JSON-RPC error: `MCP error <code>: <message>`.
    Rpc(String),
    /// No answer within the timeout.
    Timeout(Duration),
    /// The server is gone (crashed, closed its pipes, never started).
    Disconnected(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Rpc(text) | CallError::Disconnected(text) => f.write_str(text),
            CallError::Timeout(d) => write!(
                f,
                "MCP tool call timed out after {} ms (MCP_TOOL_TIMEOUT)",
                d.as_millis()
            ),
        }
    }
}

/// One server of the session.
pub struct Server {
    pub config: ServerConfig,
    status: Arc<Mutex<Status>>,
    tools: Vec<ToolDef>,
    peer: Mutex<Option<Peer<RoleClient>>>,
    running: Mutex<Option<RunningService<RoleClient, ()>>>,
    /// Process group of a stdio child.
    pgid: Mutex<Option<i32>>,
    /// Bumped by [`Server::reconnect`]: a child's reaper only marks the server failed while
    /// the connection it belongs to is the current one.
    generation: Arc<std::sync::atomic::AtomicU64>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    tool_timeout: Duration,
    /// Problems worth telling the user that did not stop the server (a tool skipped).
    notes: Vec<String>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.config.name)
            .field("status", &*lock(&self.status))
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    pub fn status(&self) -> Status {
        lock(&self.status).clone()
    }

    pub fn is_connected(&self) -> bool {
        matches!(*lock(&self.status), Status::Connected)
    }

    /// Switches the server's tools off for the session (`enabled: false`: they are no longer
    /// offered, calls fail as to a disconnected server) or back on (only a server that was
    /// connected when it was switched off). The Agent SDK's `mcp_toggle`. `Err` says why not.
    pub fn set_enabled(&self, enabled: bool) -> Result<(), String> {
        let name = &self.config.name;
        let mut status = lock(&self.status);
        match (enabled, &*status) {
            (false, Status::Connected) => {
                *status = Status::Disabled;
                Ok(())
            }
            (false, Status::Disabled) | (true, Status::Connected) => Ok(()),
            (true, Status::Disabled) if lock(&self.peer).is_some() => {
                *status = Status::Connected;
                Ok(())
            }
            (true, Status::Disabled | Status::Pending) => Err(format!(
                "MCP server \"{name}\" was not started when the session started, and rein starts servers only then"
            )),
            (_, Status::Failed(why)) => Err(format!("MCP server \"{name}\" failed: {why}")),
            (false, Status::Pending) => Ok(()),
        }
    }

    /// Problems that did not stop it (a tool with an unusable schema, skipped).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The tools it listed at start (empty unless it connected).
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stderr_tail))
            .trim()
            .to_string()
    }

    /// Calls `tool` with `arguments`; the result as the server sent it (`content`,
    /// `structuredContent`, `isError`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CallError> {
        self.call_with_timeout(tool, arguments, self.tool_timeout)
            .await
    }

    /// [`Server::call`] with its own timeout (mcp_tool hooks use the hook's).
    pub async fn call_with_timeout(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let name = &self.config.name;
        let peer = lock(&self.peer).clone();
        let (Some(peer), true) = (peer, self.is_connected()) else {
            return Err(CallError::Disconnected(format!(
                "MCP server \"{name}\" is not connected{}",
                match self.status() {
                    Status::Failed(why) => format!(": {why}"),
                    _ => String::new(),
                }
            )));
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Err(_) => Err(CallError::Timeout(timeout)),
            Ok(Ok(result)) => serde_json::to_value(&result)
                .map_err(|e| CallError::Rpc(format!("unreadable tool result: {e}"))),
            Ok(Err(ServiceError::McpError(e))) => Err(CallError::Rpc(format!(
                "MCP error {}: {}",
                e.code.0, e.message
            ))),
            Ok(Err(ServiceError::TransportClosed)) | Ok(Err(ServiceError::TransportSend(_))) => {
                let why = self.died("the connection closed during the call");
                Err(CallError::Disconnected(format!(
                    "MCP server \"{name}\" disconnected: {why}"
                )))
            }
            Ok(Err(other)) => Err(CallError::Rpc(format!("MCP error: {other}"))),
        }
    }

    /// Marks the server failed (its tools are no longer offered) and returns why.
    fn died(&self, what: &str) -> String {
        let tail = self.stderr_text();
        let why = if tail.is_empty() {
            what.to_string()
        } else {
            format!("{what}; its stderr ends with: {}", last_line(&tail))
        };
        let mut status = lock(&self.status);
        if *status == Status::Connected {
            *status = Status::Failed(why.clone());
        }
        why
    }

    /// Ends the connection and the child's process group.
    async fn shutdown(&self) {
        {
            let mut status = lock(&self.status);
            if *status == Status::Connected {
                *status = Status::Failed("the session ended".to_string());
            }
        }
        self.stop().await;
    }

    /// Ends the connection and the child's process group, leaving the status as it is.
    async fn stop(&self) {
        let running = lock(&self.running).take();
        if let Some(running) = running {
            let _ = tokio::time::timeout(KILL_GRACE, running.cancel()).await;
        }
        lock(&self.peer).take();
        let pgid = lock(&self.pgid).take();
        if let Some(pgid) = pgid {
            kill_group(pgid).await;
        }
    }

    /// Ends the connection (and child) and starts the server again as at the session's start,
    /// under the same limits. The tools offered stay the ones it listed then. The Agent SDK's
    /// `mcp_reconnect`. `Err` says why it is not connected afterwards.
    pub async fn reconnect(
        &self,
        limits: &Limits,
        project_dir: &std::path::Path,
        extra_env: &[(String, String)],
    ) -> Result<(), String> {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.stop().await;
        lock(&self.stderr_tail).clear();
        *lock(&self.status) = Status::Connected;
        let fresh = connect(
            self.config.clone(),
            limits,
            project_dir,
            extra_env,
            Some(Shared {
                status: Arc::clone(&self.status),
                stderr_tail: Arc::clone(&self.stderr_tail),
                generation: Arc::clone(&self.generation),
            }),
        )
        .await;
        *lock(&self.peer) = lock(&fresh.peer).take();
        *lock(&self.running) = lock(&fresh.running).take();
        *lock(&self.pgid) = lock(&fresh.pgid).take();
        match self.status() {
            Status::Connected => Ok(()),
            Status::Failed(why) => Err(format!(
                "MCP server \"{}\" failed to start again: {why}",
                self.config.name
            )),
            other => Err(format!(
                "MCP server \"{}\" is {}",
                self.config.name,
                other.word()
            )),
        }
    }
}

/// The state a reconnected server keeps: its status, stderr tail and generation.
struct Shared {
    status: Arc<Mutex<Status>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    generation: Arc<std::sync::atomic::AtomicU64>,
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
}

/// SIGTERM to the group, [`KILL_GRACE`], SIGKILL.
async fn kill_group(pgid: i32) {
    // SAFETY: kill(2) on a process group rein created for this child; no memory is involved.
    let alive = unsafe { libc::kill(-pgid, libc::SIGTERM) } == 0;
    if !alive {
        return;
    }
    let deadline = tokio::time::Instant::now() + KILL_GRACE;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        // SAFETY: signal 0 only probes whether the group still exists.
        if unsafe { libc::kill(-pgid, 0) } != 0 {
            return;
        }
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Every server of a session.
#[derive(Debug, Default)]
pub struct Servers {
    servers: Vec<Arc<Server>>,
}

/// What to start, and what not.
#[derive(Debug, Clone)]
pub struct Plan {
    pub config: ServerConfig,
    /// `None`: start it. `Some`: do not; this is its status.
    pub hold: Option<Status>,
}

impl Servers {
    /// Starts every planned server in parallel, each under `limits.startup`. Never fails: a
    /// server that cannot start is kept with its `Failed` status.
    pub async fn start(
        plans: Vec<Plan>,
        limits: &Limits,
        project_dir: &std::path::Path,
        extra_env: &[(String, String)],
    ) -> Servers {
        let futures = plans.into_iter().map(|plan| {
            let limits = limits.clone();
            async move {
                match plan.hold {
                    Some(status) => Arc::new(Server {
                        config: plan.config,
                        status: Arc::new(Mutex::new(status)),
                        tools: Vec::new(),
                        peer: Mutex::new(None),
                        running: Mutex::new(None),
                        pgid: Mutex::new(None),
                        generation: Arc::default(),
                        stderr_tail: Arc::new(Mutex::new(Vec::new())),
                        tool_timeout: limits.tool_call,
                        notes: Vec::new(),
                    }),
                    None => {
                        Arc::new(connect(plan.config, &limits, project_dir, extra_env, None).await)
                    }
                }
            }
        });
        let servers = futures_util::future::join_all(futures).await;
        for s in &servers {
            if let Status::Failed(why) = s.status() {
                tracing::warn!(target: "rein::mcp", server = %s.config.name, "failed to start: {why}");
            }
        }
        Servers { servers }
    }

    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.config.name == name)
    }

    /// Ends every server (SIGTERM, grace, SIGKILL to each child's group).
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.servers.iter().map(|s| s.shutdown())).await;
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        // The backstop for a session that ended without `shutdown` (an error path, a panic):
        // no child outlives rein's session.
        for s in &self.servers {
            if let Some(pgid) = *lock(&s.pgid) {
                // SAFETY: kill(2) on the group rein created for this child.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
    }
}

/// Starts one server and lists its tools; a failure is the server's status.
async fn connect(
    config: ServerConfig,
    limits: &Limits,
    project_dir: &std::path::Path,
    extra_env: &[(String, String)],
    shared: Option<Shared>,
) -> Server {
    let shared = shared.unwrap_or_else(|| Shared {
        status: Arc::new(Mutex::new(Status::Connected)),
        stderr_tail: Arc::new(Mutex::new(Vec::new())),
        generation: Arc::default(),
    });
    let stderr_tail = Arc::clone(&shared.stderr_tail);
    let mut server = Server {
        config,
        status: shared.status,
        tools: Vec::new(),
        peer: Mutex::new(None),
        running: Mutex::new(None),
        pgid: Mutex::new(None),
        generation: shared.generation,
        stderr_tail: Arc::clone(&stderr_tail),
        tool_timeout: limits.tool_call,
        notes: Vec::new(),
    };
    let started = match &server.config.transport {
        Transport::Stdio { command, args, env } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .envs(extra_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .env("CLAUDE_PROJECT_DIR", project_dir)
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .current_dir(project_dir)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            match cmd.spawn() {
                Err(e) => Err(format!("cannot start {command:?}: {e}")),
                Ok(mut child) => {
                    *lock(&server.pgid) = child.id().and_then(|id| i32::try_from(id).ok());
                    if let Some(mut err) = child.stderr.take() {
                        let tail = Arc::clone(&stderr_tail);
                        tokio::spawn(async move {
                            let mut buf = [0u8; 4096];
                            while let Ok(n) = err.read(&mut buf).await {
                                if n == 0 {
                                    break;
                                }
                                let mut t = lock(&tail);
                                t.extend_from_slice(&buf[..n]);
                                let excess = t.len().saturating_sub(STDERR_TAIL);
                                t.drain(..excess);
                            }
                        });
                    }
                    match (child.stdout.take(), child.stdin.take()) {
                        (Some(out), Some(inp)) => {
                            // The child is reaped by its own task; kill_on_drop stays armed
                            // until then.
                            let status = Arc::clone(&server.status);
                            let name = server.config.name.clone();
                            let generation = Arc::clone(&server.generation);
                            let born = generation.load(std::sync::atomic::Ordering::SeqCst);
                            tokio::spawn(async move {
                                let how = match child.wait().await {
                                    Ok(st) => st.to_string(),
                                    Err(e) => e.to_string(),
                                };
                                let mut status = lock(&status);
                                let current =
                                    generation.load(std::sync::atomic::Ordering::SeqCst) == born;
                                if current && *status == Status::Connected {
                                    tracing::warn!(target: "rein::mcp", server = %name, "MCP server exited ({how})");
                                    *status = Status::Failed(format!("the server exited ({how})"));
                                }
                            });
                            handshake(().serve((out, inp)), limits.startup).await
                        }
                        _ => Err("its stdio pipes could not be set up".to_string()),
                    }
                }
            }
        }
        Transport::Sdk => match &limits.sdk.0 {
            None => Err(
                "an \"sdk\" server is served by the Agent SDK that starts rein; no SDK is connected (rein was not started with --input-format stream-json)"
                    .to_string(),
            ),
            Some(bridge) => {
                let (ours, theirs) = tokio::io::duplex(1 << 16);
                tokio::spawn(crate::mcp::sdk_transport::carry(
                    Arc::clone(bridge),
                    server.config.name.clone(),
                    theirs,
                ));
                let (read, write) = tokio::io::split(ours);
                let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(read, write)
                    .with_max_line_length(crate::mcp::sdk_transport::SDK_MAX_MESSAGE);
                handshake(().serve(transport), limits.startup).await
            }
        },
        Transport::Http { url, headers, sse } => {
            let _already = rustls::crypto::ring::default_provider().install_default();
            let mut map = HashMap::new();
            let mut bad = None;
            for (k, v) in headers {
                match (
                    reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                    reqwest::header::HeaderValue::from_str(v),
                ) {
                    (Ok(k), Ok(v)) => {
                        map.insert(k, v);
                    }
                    _ => bad = Some(format!("header {k:?} is not a valid HTTP header")),
                }
            }
            match (bad, reqwest::Client::builder().build()) {
                (Some(b), _) => Err(b),
                (None, Err(e)) => Err(format!("no http client: {e}")),
                (None, Ok(client)) if *sse => {
                    let started = tokio::time::Instant::now();
                    match tokio::time::timeout(
                        limits.startup,
                        crate::mcp::sse::LegacySse::connect(client, url, map),
                    )
                    .await
                    {
                        Err(_) => Err(format!(
                            "connection timed out after {} ms (MCP_TIMEOUT)",
                            limits.startup.as_millis()
                        )),
                        Ok(Err(e)) => Err(e),
                        Ok(Ok(transport)) => {
                            let left = limits.startup.saturating_sub(started.elapsed());
                            handshake(().serve(transport), left).await
                        }
                    }
                }
                (None, Ok(client)) => {
                    let cfg = StreamableHttpClientTransportConfig::with_uri(url.clone())
                        .custom_headers(map);
                    let transport = StreamableHttpClientTransport::with_client(client, cfg);
                    handshake(().serve(transport), limits.startup).await
                }
            }
        }
    };
    match started {
        Err(why) => {
            let tail = lock(&stderr_tail).clone();
            let tail = String::from_utf8_lossy(&tail).trim().to_string();
            let why = if tail.is_empty() {
                why
            } else {
                format!("{why}; its stderr ends with: {}", last_line(&tail))
            };
            *lock(&server.status) = Status::Failed(why);
            let pgid = *lock(&server.pgid);
            if let Some(pgid) = pgid {
                kill_group(pgid).await;
            }
        }
        Ok(running) => {
            let peer = running.peer().clone();
            match tokio::time::timeout(limits.startup, peer.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    let mut skipped = Vec::new();
                    server.tools = tools
                        .into_iter()
                        .filter_map(|t| {
                            let name = t.name.to_string();
                            let schema = serde_json::to_value(&t)
                                .ok()
                                .and_then(|v| v.get("inputSchema").cloned())
                                .filter(|s| {
                                    s.is_object()
                                        && s.get("type").is_none_or(|ty| ty == "object")
                                });
                            let Some(input_schema) = schema else {
                                skipped.push(format!(
                                    "MCP server \"{}\": tool \"{name}\" skipped: its inputSchema is not a JSON Schema object",
                                    server.config.name
                                ));
                                return None;
                            };
                            Some(ToolDef {
                                name,
                                description: t
                                    .description
                                    .as_deref()
                                    .unwrap_or_default()
                                    .to_string(),
                                input_schema,
                            })
                        })
                        .collect();
                    server.notes = skipped;
                    *lock(&server.peer) = Some(peer);
                    *lock(&server.running) = Some(running);
                }
                Ok(Err(e)) => {
                    *lock(&server.status) = Status::Failed(format!("tools/list failed: {e}"));
                    let _ = running.cancel().await;
                }
                Err(_) => {
                    *lock(&server.status) = Status::Failed(format!(
                        "tools/list got no answer within {} ms (MCP_TIMEOUT)",
                        limits.startup.as_millis()
                    ));
                    let _ = running.cancel().await;
                }
            }
            let pgid = *lock(&server.pgid);
            if !server.is_connected()
                && let Some(pgid) = pgid
            {
                kill_group(pgid).await;
            }
        }
    }
    server
}

async fn handshake<F, E>(
    serve: F,
    timeout: Duration,
) -> Result<RunningService<RoleClient, ()>, String>
where
    F: std::future::Future<Output = Result<RunningService<RoleClient, ()>, E>>,
    E: std::fmt::Display,
{
    match tokio::time::timeout(timeout, serve).await {
        Err(_) => Err(format!(
            "connection timed out after {} ms (MCP_TIMEOUT)",
            timeout.as_millis()
        )),
        Ok(Err(e)) => Err(format!("the MCP handshake failed: {e}")),
        Ok(Ok(running)) => Ok(running),
    }
}

/// The path a server's child runs in, for messages.
pub fn describe(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, args, .. } => {
            let mut s = command.clone();
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        Transport::Http { url, .. } => url.clone(),
        Transport::Sdk => "(served by the Agent SDK)".to_string(),
    }
}
