//! The Claude Agent SDK's control protocol: rein as the binary behind `claude-agent-sdk`
//! (Python) and `@anthropic-ai/claude-agent-sdk` (TypeScript).
//!
//! The SDK starts rein with `--output-format stream-json --input-format stream-json` and talks
//! to it in JSON lines both ways (shapes measured against Claude Code 2.1.328, fixture
//! `tests/fixtures/cc-2.1.328/agent_sdk/`):
//! - the SDK sends `control_request`s (`initialize`, `interrupt`, `set_permission_mode`, …;
//!   answered in [`requests`]) and user messages;
//! - rein sends `control_request`s of its own ([`Control::request`]): `hook_callback` for a hook
//!   the SDK registered in `initialize` ([`register_hooks`]), `can_use_tool` where a person would
//!   be prompted ([`SdkPermissions`]) and `mcp_message` for the SDK's in-process MCP servers
//!   ([`SdkMcp`]); the SDK answers each with a `control_response` carrying its `request_id`,
//!   routed here by the stdin reader ([`Control::deliver`]) whatever the session is doing.
//!
//! Rules rein adds where Claude Code says nothing: a response to a request rein never sent (or
//! already gave up on) is reported on stderr and ignored; when stdin ends every request still
//! waiting fails at once (a hook callback then costs its own result, a `can_use_tool` refuses
//! the call); a request rein stops waiting for (its hook timed out, the turn was interrupted)
//! is withdrawn with a `control_cancel_request`, which the SDKs honour.

pub mod flags;
pub mod requests;
pub mod startup;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::hooks::events::permission_request::PermissionRequestDecision;
use crate::hooks::registry::{JsonHandler, Registry, Unregister};
use crate::hooks::spec::HookEvent;
use crate::mcp::sdk_transport::SdkBridge;
use crate::pipeline::{HostQuestion, PermissionHost};
use crate::tools::BoxFuture;

/// The version of Claude Code whose protocol rein speaks to the SDK (`claude_code_version` of
/// `init` and of the `initialize` answer; the SDKs compare it with their minimum).
pub const SPEAKS_CLAUDE_CODE: &str = "2.1.328";

type Waiting = oneshot::Sender<Result<Value, String>>;

/// rein's side of the control protocol: the requests it sent and waits for.
pub struct Control {
    pending: Mutex<HashMap<String, Waiting>>,
    /// `CLAUDE_CODE_SDK_READS_SESSION_STATE=1` (the SDKs set it): `session_state_changed`
    /// lines are written ([`Control::session_state`]).
    states: bool,
    /// The session's id, for those lines.
    session_id: Mutex<String>,
    /// stdin ended (or the SDK went away): no answer can come any more.
    closed: AtomicBool,
    broken: AtomicBool,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("pending", &self.waiting())
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Control {
    pub fn new() -> Arc<Control> {
        Arc::new(Control {
            pending: Mutex::new(HashMap::new()),
            states: std::env::var("CLAUDE_CODE_SDK_READS_SESSION_STATE").is_ok_and(|v| v == "1"),
            session_id: Mutex::new(String::new()),
            closed: AtomicBool::new(false),
            broken: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's id, once it is known.
    pub fn set_session_id(&self, id: &str) {
        if let Ok(mut s) = self.session_id.lock() {
            *s = id.to_string();
        }
    }

    /// A `session_state_changed` line (`running`, `requires_action`, `idle`), when the SDK
    /// asked for them, as Claude Code 2.1.328 writes them (fixture `agent_sdk/measure`):
    /// `running` when a turn starts, `requires_action` while a `can_use_tool` waits, `idle`
    /// when nothing is owed any more. The SDKs keep stdin open until `idle`.
    pub fn session_state(&self, state: &str) {
        if !self.states {
            return;
        }
        let session_id = self
            .session_id
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        self.emit(
            &json!({"type": "system", "subtype": "session_state_changed", "state": state,
            "sdk_host_only": true, "uuid": crate::id::uuid_v4(), "session_id": session_id}),
        );
    }

    /// How many requests wait for their answer.
    pub fn waiting(&self) -> usize {
        self.lock().len()
    }

    /// Writes one line on stdout ([`crate::cli::render::write_line`]).
    pub fn emit(&self, value: &Value) {
        crate::cli::render::write_line(value, &self.broken);
    }

    /// Sends `request` (a `control_request`'s `request` object) to the SDK and waits for its
    /// answer: the `response` object of a `success`, or the `error` text. Dropping the future
    /// withdraws the request (`control_cancel_request`).
    pub async fn request(&self, request: Value) -> Result<Value, String> {
        let id = crate::id::uuid_v4();
        let (tx, rx) = oneshot::channel();
        {
            // Checked under the lock `close` drains under, after it sets `closed`: a request
            // is either refused here or failed by `close`, never left waiting.
            let mut pending = self.lock();
            if self.closed.load(Ordering::SeqCst) {
                return Err("the SDK closed rein's stdin, so it cannot answer".to_string());
            }
            pending.insert(id.clone(), tx);
        }
        let mut withdraw = Withdraw {
            control: self,
            id: Some(id.clone()),
        };
        self.emit(&json!({"type": "control_request", "request_id": id, "request": request}));
        let answer = rx.await;
        withdraw.id = None;
        match answer {
            Ok(answer) => answer,
            Err(_) => Err("the SDK closed rein's stdin before answering".to_string()),
        }
    }

    /// A `control_response` read from stdin: the answer of one of rein's requests. `Err` says
    /// why it answers nothing (no such request).
    pub fn deliver(&self, response: &Value) -> Result<(), String> {
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            return Err("a control_response without a request_id".to_string());
        };
        let Some(waiting) = self.lock().remove(id) else {
            return Err(format!(
                "a control_response for request {id:?}, which rein never sent or no longer waits for"
            ));
        };
        let answer = match response.get("subtype").and_then(Value::as_str) {
            Some("success") => Ok(match response.get("response") {
                Some(Value::Null) | None => json!({}),
                Some(v) => v.clone(),
            }),
            Some("error") => Err(response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the SDK answered with an error and no text")
                .to_string()),
            other => Err(format!(
                "the SDK's answer has subtype {}, not success or error",
                other.map_or("(none)".to_string(), |s| format!("{s:?}"))
            )),
        };
        let _ = waiting.send(answer);
        Ok(())
    }

    /// stdin ended: every waiting request fails now, and later ones at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let waiting: Vec<Waiting> = self.lock().drain().map(|(_, w)| w).collect();
        for w in waiting {
            let _ = w.send(Err(
                "the SDK closed rein's stdin before answering".to_string()
            ));
        }
    }
}

/// Withdraws a request whose waiter went away before the answer came.
struct Withdraw<'a> {
    control: &'a Control,
    id: Option<String>,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && self.control.lock().remove(&id).is_some()
            && !self.control.closed.load(Ordering::Relaxed)
        {
            self.control
                .emit(&json!({"type": "control_cancel_request", "request_id": id}));
        }
    }
}

/// The hooks of an `initialize` request, registered as in-process hooks: each callback id is
/// one handler whose input is the hook input a command hook would read on stdin and whose
/// answer (the SDK callback's return value) is judged as that hook's stdout JSON. Returns the
/// registrations (dropping them unregisters) and what was wrong with the request's `hooks`.
pub fn register_hooks(
    control: &Arc<Control>,
    registry: &Registry,
    hooks: &Value,
) -> (Vec<Unregister>, Vec<String>) {
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    let Some(events) = hooks.as_object() else {
        if !hooks.is_null() {
            problems.push(format!(
                "initialize: \"hooks\" is {}, not an object",
                crate::json_kind::with_article(hooks)
            ));
        }
        return (kept, problems);
    };
    for (event_name, matchers) in events {
        let Some(event) = HookEvent::parse(event_name) else {
            problems.push(format!(
                "initialize: hooks for unknown event {event_name:?} are not registered"
            ));
            continue;
        };
        for (m, matcher) in matchers.as_array().into_iter().flatten().enumerate() {
            let text = matcher
                .get("matcher")
                .and_then(Value::as_str)
                .unwrap_or("*");
            let text = if text.is_empty() { "*" } else { text };
            // An event with nothing to match (Stop, UserPromptSubmit, …): Claude Code ignores
            // the matcher and always calls; so does rein, saying so.
            let text = if event.spec().matcher == crate::hooks::spec::MatcherClass::NoTarget
                && text != "*"
            {
                problems.push(format!(
                    "initialize: {event_name} has nothing to match, so matcher {text:?} is ignored (the callback always runs)"
                ));
                "*"
            } else {
                text
            };
            let timeout = matcher.get("timeout").and_then(Value::as_f64);
            if matcher.get("onFailure").is_some() {
                problems.push(format!(
                    "initialize: {event_name} matcher {m}: onFailure is not supported by rein (a failed callback never blocks); the answer says hook_on_failure_supported: false"
                ));
            }
            for id in matcher
                .get("hookCallbackIds")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let handler = callback_handler(control, id);
                match registry.on_json(event, text, timeout, &format!("sdk callback {id}"), handler)
                {
                    Ok(handle) => kept.push(handle),
                    Err(e) => problems.push(format!("initialize: callback {id}: {e}")),
                }
            }
        }
    }
    (kept, problems)
}

fn callback_handler(control: &Arc<Control>, callback_id: &str) -> Arc<JsonHandler> {
    let control = Arc::clone(control);
    let callback_id = callback_id.to_string();
    Arc::new(move |input: Value| {
        let control = Arc::clone(&control);
        let callback_id = callback_id.clone();
        let call: BoxFuture<'static, Result<Value, String>> = Box::pin(async move {
            // Claude Code's `tool_use_id`: the call's on tool events, else a fresh id.
            let tool_use_id = input
                .get("tool_use_id")
                .cloned()
                .unwrap_or_else(|| json!(crate::id::uuid_v4()));
            let answer = control
                .request(
                    json!({"subtype": "hook_callback", "callback_id": callback_id,
                    "input": input, "tool_use_id": tool_use_id}),
                )
                .await
                .map_err(|e| format!("SDK hook callback {callback_id}: {e}"))?;
            if answer.is_object() {
                Ok(answer)
            } else {
                Err(format!(
                    "SDK hook callback {callback_id} answered {}, not a JSON object",
                    crate::json_kind::with_article(&answer)
                ))
            }
        });
        call
    })
}

/// `--permission-prompt-tool stdio`: the SDK's `can_use_tool` answers where a person would be
/// prompted.
pub struct SdkPermissions(pub Arc<Control>);

impl PermissionHost for SdkPermissions {
    fn can_use_tool(
        &self,
        q: HostQuestion,
    ) -> BoxFuture<'static, Result<PermissionRequestDecision, String>> {
        let control = Arc::clone(&self.0);
        Box::pin(async move {
            let mut request = serde_json::Map::new();
            request.insert("subtype".into(), json!("can_use_tool"));
            request.insert("tool_name".into(), json!(q.tool_name));
            if let Some(server) = &q.mcp_server {
                request.insert("mcp_server".into(), json!(server));
            }
            request.insert("display_name".into(), json!(display_name(&q.tool_name)));
            request.insert("input".into(), q.input.clone());
            if let Some(d) = q.input.get("description").and_then(Value::as_str) {
                request.insert("description".into(), json!(d));
            }
            request.insert("permission_suggestions".into(), json!(q.suggestions));
            if let Some(p) = &q.blocked_path {
                request.insert("blocked_path".into(), json!(p));
            }
            request.insert("decision_reason".into(), json!(q.reason));
            request.insert("tool_use_id".into(), json!(q.tool_use_id));
            if let Some(a) = &q.agent_id {
                request.insert("agent_id".into(), json!(a));
            }
            control.session_state("requires_action");
            let answer = control.request(Value::Object(request)).await;
            control.session_state("running");
            permission_answer(&answer?)
        })
    }
}

/// The name Claude Code shows for a tool: an MCP tool's own name, capitalized.
fn display_name(tool: &str) -> String {
    match tool.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
        Some((_, name)) => {
            let mut c = name.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        }
        None => tool.to_string(),
    }
}

/// A `can_use_tool` answer as a decision: `{behavior: "allow", updatedInput?,
/// updatedPermissions?}` or `{behavior: "deny", message?, interrupt?}`.
pub fn permission_answer(answer: &Value) -> Result<PermissionRequestDecision, String> {
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let updated_input = match answer.get("updatedInput") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v.clone()),
                Some(other) => {
                    return Err(format!(
                        "its updatedInput is {}, not an object",
                        crate::json_kind::with_article(other)
                    ));
                }
            };
            let updated_permissions = match answer.get("updatedPermissions") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(other) => {
                    return Err(format!(
                        "its updatedPermissions is {}, not an array",
                        crate::json_kind::with_article(other)
                    ));
                }
            };
            Ok(PermissionRequestDecision::Allow {
                updated_input,
                updated_permissions,
            })
        }
        Some("deny") => Ok(PermissionRequestDecision::Deny {
            message: answer
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or("The SDK's can_use_tool callback denied this call")
                .to_string(),
            interrupt: answer.get("interrupt").and_then(Value::as_bool) == Some(true),
        }),
        _ => Err(format!(
            "the SDK's can_use_tool answer has no behavior \"allow\" or \"deny\": {}",
            crate::cli::render::first_line(&answer.to_string(), 200)
        )),
    }
}

/// `type: "sdk"` MCP servers: each JSON-RPC message is an `mcp_message` control request.
pub struct SdkMcp(pub Arc<Control>);

impl SdkBridge for SdkMcp {
    fn send(
        &self,
        server: &str,
        message: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, String>> + Send>> {
        let control = Arc::clone(&self.0);
        let server = server.to_string();
        Box::pin(async move {
            let answer = control
                .request(json!({"subtype": "mcp_message", "server_name": server,
                    "message": message}))
                .await?;
            match answer.get("mcp_response") {
                Some(v) if v.is_object() => Ok(v.clone()),
                _ => Err(format!(
                    "the SDK's answer to an mcp_message has no mcp_response object: {}",
                    crate::cli::render::first_line(&answer.to_string(), 200)
                )),
            }
        })
    }
}
