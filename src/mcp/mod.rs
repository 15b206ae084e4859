//! MCP servers as tools: where they are configured ([`config`]), the connections
//! ([`client`], on the official Rust SDK `rmcp`), each server tool as a session tool
//! ([`tool`]), and the session's set of them ([`McpSession`]), which also answers `mcp_tool`
//! hooks through [`crate::hooks::mcp_tool::McpCaller`].
//!
//! Which servers start: user, local and `--mcp-config` servers always; a project (`.mcp.json`)
//! server only when approved (`enabledMcpjsonServers` or `enableAllProjectMcpServers` in user
//! or local settings, or a yes at the interactive prompt), never when listed in
//! `disabledMcpjsonServers`. An unapproved one is `pending`: cloning a repository never starts
//! its processes.

pub mod client;
pub mod config;
pub mod sdk_transport;
pub mod sse;
pub mod tool;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::hooks::mcp_tool::{McpCallFailure, McpCaller};
use crate::mcp::client::{Limits, Plan, Servers, Status};
use crate::mcp::config::{Approval, ApprovalState, Loaded, Scope};
use crate::tools::{BoxFuture, Tool};

/// What to do with each configured server, given approval: start it, or hold it as
/// `pending` / `disabled`.
pub fn plan(loaded: &Loaded, approval: &Approval) -> Vec<Plan> {
    loaded
        .servers
        .iter()
        .map(|config| {
            let hold = match config.scope {
                Scope::Project => match approval.state(&config.name) {
                    ApprovalState::Approved => None,
                    ApprovalState::Rejected => Some(Status::Disabled),
                    ApprovalState::Pending => Some(Status::Pending),
                },
                // Served by the program that started rein, not by anything the repository runs.
                Scope::User | Scope::Local | Scope::Dynamic | Scope::Sdk => None,
            };
            Plan {
                config: config.clone(),
                hold,
            }
        })
        .collect()
}

/// The session's MCP servers.
#[derive(Debug, Default)]
pub struct McpSession {
    servers: Servers,
    max_output_tokens: usize,
    /// How the servers were started, to start one again ([`McpSession::reconnect`]).
    started_with: Option<StartedWith>,
}

/// The limits, project directory and extra environment the servers were started with.
#[derive(Debug)]
struct StartedWith {
    limits: Limits,
    project_dir: std::path::PathBuf,
    extra_env: Vec<(String, String)>,
}

impl McpSession {
    /// Starts `plans` in parallel (see [`Servers::start`]).
    pub async fn start(
        plans: Vec<Plan>,
        limits: &Limits,
        project_dir: &std::path::Path,
        extra_env: &[(String, String)],
        max_output_tokens: usize,
    ) -> McpSession {
        McpSession {
            servers: Servers::start(plans, limits, project_dir, extra_env).await,
            max_output_tokens,
            started_with: Some(StartedWith {
                limits: limits.clone(),
                project_dir: project_dir.to_path_buf(),
                extra_env: extra_env.to_vec(),
            }),
        }
    }

    /// Starts server `name` again as it was started (see [`client::Server::reconnect`]).
    pub async fn reconnect(&self, name: &str) -> Result<(), String> {
        let Some(server) = self.servers.get(name) else {
            return Err(format!("Server not found: {name}"));
        };
        match &self.started_with {
            Some(w) => {
                server
                    .reconnect(&w.limits, &w.project_dir, &w.extra_env)
                    .await
            }
            None => Err(format!("MCP server \"{name}\" was never started")),
        }
    }

    pub fn servers(&self) -> &Servers {
        &self.servers
    }

    /// One session tool per tool of every connected server, in configuration order. Two tools
    /// whose names collide after normalisation: the first wins, the other is reported.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for server in self.servers.servers() {
            for def in server.tools() {
                let t = tool::McpTool::new(Arc::clone(server), def.clone(), self.max_output_tokens);
                if out.iter().any(|o| o.name() == t.name()) {
                    tracing::warn!(target: "rein::mcp", tool = t.name(), "two MCP tools have this name; the second is not offered");
                    continue;
                }
                out.push(Arc::new(t));
            }
        }
        out
    }

    /// `{name, status, source}` per server, for stream-json's `init`.
    pub fn init_entries(&self) -> Vec<Value> {
        self.servers
            .servers()
            .iter()
            .map(|s| {
                json!({
                    "name": s.config.name,
                    "status": s.status().word(),
                    "source": s.config.scope.as_str(),
                })
            })
            .collect()
    }

    /// Ends every server and its children.
    pub async fn shutdown(&self) {
        self.servers.shutdown().await;
    }
}

/// `MAX_MCP_OUTPUT_TOKENS` from `lookup`, else the default.
pub fn max_output_tokens(lookup: &dyn Fn(&str) -> Option<String>) -> usize {
    lookup("MAX_MCP_OUTPUT_TOKENS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(tool::DEFAULT_MAX_OUTPUT_TOKENS)
}

impl McpCaller for McpSession {
    fn knows(&self, server: &str) -> bool {
        self.servers.get(server).is_some()
    }

    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<String, McpCallFailure>> {
        Box::pin(async move {
            let Some(s) = self.servers.get(server) else {
                return Err(McpCallFailure::Unavailable(format!(
                    "MCP server '{server}' not connected"
                )));
            };
            if !s.is_connected() {
                return Err(McpCallFailure::Unavailable(format!(
                    "MCP server '{server}' not connected"
                )));
            }
            match s.call_with_timeout(tool, arguments, timeout).await {
                Ok(result) => {
                    if result.get("isError").and_then(Value::as_bool) == Some(true) {
                        let text =
                            tool::content_text(result.get("content").unwrap_or(&Value::Null));
                        return Err(McpCallFailure::ToolError(text));
                    }
                    Ok(tool::content_text(
                        result.get("content").unwrap_or(&Value::Null),
                    ))
                }
                Err(client::CallError::Timeout(_)) => Err(McpCallFailure::TimedOut),
                Err(e) => Err(McpCallFailure::Unavailable(e.to_string())),
            }
        })
    }
}
