//! The control requests the SDK sends, answered in Claude Code 2.1.328's shapes (fixture
//! `tests/fixtures/cc-2.1.328/agent_sdk/measure`).
//!
//! Answered at once, even while a turn runs: `interrupt` (in `stream_input`), `mcp_status`,
//! `mcp_toggle`, `stop_task`, a second `initialize`, and every request rein cannot honour (an
//! error naming it: `rewind_files`, unknown subtypes). Answered between turns — at once when
//! no turn runs, else as soon as the running turn ends, in the order they came:
//! `set_permission_mode`, `set_model`, `get_context_usage` (they change or read the session,
//! which a running turn holds) and `mcp_reconnect` (a server's start may take `MCP_TIMEOUT`,
//! which a running turn would wait out). Claude Code applies them mid-turn; rein's rule keeps
//! a turn's hook inputs and permission decisions on one mode and one model from start to end.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent::session::Session;
use crate::agent::subagent::ModelFactory;
use crate::cli::sdk::Control;
use crate::mcp::McpSession;
use crate::mcp::client::Status;
use crate::tools::background::BackgroundTasks;

/// What the request loop needs to answer the SDK.
pub struct Sdk {
    pub control: Arc<Control>,
    /// The stdout stream (its `init` lines name the permission mode).
    pub stream: Arc<crate::cli::render::StreamJson>,
    pub mcp: Arc<McpSession>,
    pub background: Arc<BackgroundTasks>,
    /// Builds another model of the provider (`None`: the mock, which has one).
    pub models: Option<ModelFactory>,
    /// The model the session started with (`set_model` with no model goes back to it).
    pub first_model: String,
}

/// How a request is answered.
pub enum Answer {
    /// The `response` of a `success`.
    Done(Value),
    /// An `error` with this text (and Claude Code's `error_code`, when it has one).
    Failed(String, Option<&'static str>),
    /// Needs the session: answered between turns ([`Sdk::answer_with_session`]).
    Later,
}

/// The `control_response` line for `answer` to request `request_id`.
pub fn response_line(request_id: &Value, answer: Result<Value, (String, Option<&str>)>) -> Value {
    match answer {
        Ok(response) => json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": request_id, "response": response}}),
        Err((error, code)) => {
            let mut r = json!({"subtype": "error", "request_id": request_id, "error": error});
            if let (Some(code), Some(obj)) = (code, r.as_object_mut()) {
                obj.insert("error_code".into(), json!(code));
            }
            json!({"type": "control_response", "response": r})
        }
    }
}

/// Claude Code's words for a subtype it does not know.
pub fn unsupported(subtype: &str) -> Answer {
    Answer::Failed(
        format!("Unsupported control request subtype: {subtype}"),
        Some("unsupported_request"),
    )
}

impl Sdk {
    /// Answers what needs no session; [`Answer::Later`] for the rest.
    pub async fn answer_now(&self, subtype: &str, request: &Value) -> Answer {
        match subtype {
            "initialize" => Answer::Failed(
                "rein was already initialized: initialize comes once, first".to_string(),
                None,
            ),
            "mcp_status" => Answer::Done(json!({"mcpServers": self.mcp_status()})),
            "stop_task" => {
                let Some(id) = request.get("task_id").and_then(Value::as_str) else {
                    return Answer::Failed("stop_task needs a task_id".to_string(), None);
                };
                match self.background.get(id) {
                    Some(task) => {
                        task.stop().await;
                        Answer::Done(json!({}))
                    }
                    None => Answer::Failed(
                        format!(
                            "No task found with ID: {id} (rein's tasks are its background commands)"
                        ),
                        None,
                    ),
                }
            }
            "set_permission_mode" | "set_model" | "get_context_usage" => Answer::Later,
            "mcp_toggle" => {
                let (Some(name), Some(enabled)) = (
                    request.get("serverName").and_then(Value::as_str),
                    request.get("enabled").and_then(Value::as_bool),
                ) else {
                    return Answer::Failed(
                        "mcp_toggle needs serverName and enabled".to_string(),
                        None,
                    );
                };
                match self.mcp.servers().get(name) {
                    None => Answer::Failed(format!("Server not found: {name}"), None),
                    Some(server) => match server.set_enabled(enabled) {
                        Ok(()) => Answer::Done(json!({})),
                        Err(why) => Answer::Failed(why, None),
                    },
                }
            }
            "mcp_reconnect" => Answer::Later,
            "rewind_files" => Answer::Failed(
                "rewind_files is not supported by rein: it keeps no checkpoints of the files its tools change"
                    .to_string(),
                None,
            ),
            other => unsupported(other),
        }
    }

    /// Answers a request that needs the session (no turn is running).
    pub async fn answer_with_session(
        &self,
        session: &mut Session,
        subtype: &str,
        request: &Value,
    ) -> Answer {
        match subtype {
            "set_permission_mode" => {
                let Some(mode) = request.get("mode").and_then(Value::as_str) else {
                    return Answer::Failed("set_permission_mode needs a mode".to_string(), None);
                };
                match session.set_permission_mode(mode) {
                    Ok(()) => {
                        if let Ok(mut m) = self.stream.permission_mode.lock() {
                            *m = mode.to_string();
                        }
                        self.control
                            .emit(&json!({"type": "system", "subtype": "status",
                            "status": null, "permissionMode": mode,
                            "uuid": crate::id::uuid_v4(), "session_id": session.session_id()}));
                        Answer::Done(json!({"mode": mode}))
                    }
                    Err(why) => Answer::Failed(why, None),
                }
            }
            "set_model" => {
                let name = match request.get("model") {
                    Some(Value::String(m)) if !m.is_empty() => m.clone(),
                    _ => self.first_model.clone(),
                };
                // Claude Code 2.1.328 echoes the switch as a replayed user line before its
                // answer (fixture `agent_sdk/measure`).
                let echo = |name: &str| {
                    self.stream.emit(&self.stream.replay_line(&json!({"role": "user",
                        "content": format!("<local-command-stdout>Set model to `{name}`</local-command-stdout>")})));
                };
                if name == session.model_name() {
                    echo(&name);
                    return Answer::Done(json!({"model": name}));
                }
                let Some(model) = self.models.as_ref().and_then(|f| f(&name)) else {
                    return Answer::Failed(
                        format!(
                            "set_model {name}: {} cannot switch to this model",
                            if self.models.is_none() {
                                "the mock provider has one model and"
                            } else {
                                "the provider"
                            }
                        ),
                        None,
                    );
                };
                match session.switch_model(model, &name).await {
                    Ok(()) => {
                        echo(&name);
                        Answer::Done(json!({"model": name}))
                    }
                    Err(why) => Answer::Failed(why, None),
                }
            }
            "get_context_usage" => Answer::Done(context_usage(session)),
            "mcp_reconnect" => {
                let Some(name) = request.get("serverName").and_then(Value::as_str) else {
                    return Answer::Failed("mcp_reconnect needs serverName".to_string(), None);
                };
                match self.mcp.reconnect(name).await {
                    Ok(()) => Answer::Done(json!({})),
                    Err(why) => Answer::Failed(why, None),
                }
            }
            other => unsupported(other),
        }
    }

    /// One entry per MCP server (the SDK's `McpServerStatus`).
    fn mcp_status(&self) -> Vec<Value> {
        self.mcp
            .servers()
            .servers()
            .iter()
            .map(|s| {
                let mut entry = json!({
                    "name": s.config.name,
                    "status": s.status().word(),
                    "scope": s.config.scope.as_str(),
                    "config": {"type": s.config.transport.type_name()},
                    "tools": s.tools().iter().map(|t| json!({"name": t.name})).collect::<Vec<_>>(),
                });
                if let (Status::Failed(why), Some(obj)) = (s.status(), entry.as_object_mut()) {
                    obj.insert("error".into(), json!(why));
                }
                entry
            })
            .collect()
    }
}

/// `get_context_usage`: how full the context is, by the last request's count.
fn context_usage(session: &Session) -> Value {
    let model = session.model_name().to_string();
    let used = session.usage().context_tokens.unwrap_or(0);
    let max = crate::agent::compact::context_window(&model);
    let percentage = if max == 0 {
        0.0
    } else {
        (used as f64 * 100.0 / max as f64 * 10.0).round() / 10.0
    };
    json!({
        "categories": [
            {"name": "Messages", "tokens": used, "color": "purple"},
            {"name": "Free space", "tokens": max.saturating_sub(used), "color": "promptBorder"},
        ],
        "totalTokens": used,
        "maxTokens": max,
        "rawMaxTokens": max,
        "percentage": percentage,
        "gridRows": [],
        "model": model,
        "memoryFiles": [],
        "mcpTools": [],
        "agents": [],
        "isAutoCompactEnabled": crate::agent::compact::CompactPolicy::from_env(&model).auto,
    })
}
