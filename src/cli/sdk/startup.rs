//! The start of a session the SDK drives: its `initialize` request, read before the session is
//! built (it carries subagents, a system prompt and in-process MCP servers the session is
//! built with), and the answer to it.
//!
//! Both SDKs send `initialize` as their first line and wait for its answer before they send
//! anything else. rein therefore reads the first stdin line before it builds the session; a
//! first line that is not `initialize` (a plain stream-json user) is kept for the loop.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::cli::RunArgs;
use crate::cli::sdk::Control;
use crate::cli::stream_input::{Input, Inputs, spawn_reader};

/// What the SDK said before the session was built.
pub struct Opening {
    pub control: Arc<Control>,
    pub inputs: Inputs,
    /// The `initialize` request's id and request.
    pub initialize: Option<(Value, Value)>,
}

impl Opening {
    /// Registers the hooks of `initialize` (see [`crate::cli::sdk::register_hooks`]), saying on
    /// stderr what was wrong with them; dropping the result unregisters them.
    pub fn register_hooks(
        &self,
        registry: &crate::hooks::registry::Registry,
    ) -> Vec<crate::hooks::registry::Unregister> {
        let Some((_, request)) = &self.initialize else {
            return Vec::new();
        };
        let hooks = request.get("hooks").cloned().unwrap_or(Value::Null);
        let (kept, problems) = crate::cli::sdk::register_hooks(&self.control, registry, &hooks);
        for p in problems {
            eprintln!("rein: warning: {p}");
        }
        kept
    }

    /// Answers `initialize`, once the session's subagents and mode are known.
    pub fn answer(
        &self,
        definitions: &[crate::agent::subagent::AgentDefinition],
        permission_mode: &str,
        applied: &Applied,
        (style, styles): (&str, &[String]),
    ) {
        let Some((id, _)) = &self.initialize else {
            return;
        };
        let agents: Vec<_> = definitions
            .iter()
            .map(|d| (d.name.clone(), d.description.clone(), d.model.clone()))
            .collect();
        let answer = answer(&agents, permission_mode, applied, (style, styles));
        self.control
            .emit(&crate::cli::sdk::requests::response_line(id, Ok(answer)));
    }
}

/// Starts reading stdin and waits for its first line.
pub async fn open() -> Opening {
    let control = Control::new();
    let mut rx = spawn_reader(Arc::clone(&control));
    let mut queue = VecDeque::new();
    let initialize = match rx.recv().await {
        Some(Input::Control {
            request_id: Some(id),
            subtype,
            request,
            ..
        }) if subtype == "initialize" => Some((id, request)),
        Some(other) => {
            queue.push_back(other);
            None
        }
        None => None,
    };
    Opening {
        control,
        inputs: Inputs { rx, queue },
        initialize,
    }
}

/// What of `initialize` was applied, for the answer's `*_applied` keys (the TypeScript SDK
/// ends the session when a delivery it sent is not confirmed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    pub mcp_servers: Option<bool>,
    pub settings: Option<bool>,
    pub disallowed_tools: Option<bool>,
    pub additional_directories: Option<bool>,
    pub managed_settings: Option<bool>,
}

/// Applies what `initialize` carries for the session's build to `args`: its `agents` (added to
/// `--agents`, the request's winning on a name both define), `systemPrompt` and
/// `appendSystemPrompt` (the TypeScript SDK sends them here; a flag given too wins),
/// `jsonSchema` (its structured output), `sdkMcpServers` (served in-process, as `type: "sdk"`
/// servers), and what the TypeScript SDK delivers here instead of on the command line:
/// `mcpServers` (its default for external servers), `settings`, `disallowedTools`,
/// `additionalDirectories`. `managedSettings` is not applied (rein reads managed settings
/// from the machine only), and the answer says so, so the SDK refuses to go on. Returns what
/// was applied and one line per key rein reads but does not act on.
pub fn apply(request: &Value, args: &mut RunArgs) -> (Applied, Vec<String>) {
    let mut ignored = Vec::new();
    let mut applied = Applied::default();
    if let Some(servers) = request.get("mcpServers").filter(|v| !v.is_null()) {
        let ok = servers.is_object();
        if ok {
            args.mcp_config
                .push(json!({"mcpServers": servers}).to_string());
        } else {
            ignored.push("initialize: mcpServers is not an object; not applied".to_string());
        }
        applied.mcp_servers = Some(ok);
    }
    match request.get("settings") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            args.settings.push(s.clone());
            applied.settings = Some(true);
        }
        Some(v @ Value::Object(_)) => {
            args.settings.push(v.to_string());
            applied.settings = Some(true);
        }
        Some(_) => applied.settings = Some(false),
    }
    if let Some(tools) = request.get("disallowedTools").and_then(Value::as_array) {
        args.disallowed_tools
            .extend(tools.iter().filter_map(Value::as_str).map(str::to_string));
        applied.disallowed_tools = Some(true);
    }
    if let Some(dirs) = request
        .get("additionalDirectories")
        .and_then(Value::as_array)
    {
        args.add_dir.extend(
            dirs.iter()
                .filter_map(Value::as_str)
                .map(std::path::PathBuf::from),
        );
        applied.additional_directories = Some(true);
    }
    if request.get("managedSettings").is_some_and(|v| !v.is_null()) {
        ignored.push(
            "initialize: managedSettings is not applied (rein reads managed settings from the machine only); the SDK is told so"
                .to_string(),
        );
        applied.managed_settings = Some(false);
    }
    if let Some(agents) = request.get("agents").and_then(Value::as_object) {
        let mut all: Map<String, Value> = args
            .agents
            .as_deref()
            .and_then(|a| serde_json::from_str::<Value>(a).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        for (name, def) in agents {
            all.insert(name.clone(), def.clone());
        }
        args.agents = Some(Value::Object(all).to_string());
    }
    if args.system_prompt.is_none() && args.system_prompt_file.is_none() {
        match request.get("systemPrompt") {
            Some(Value::String(s)) => args.system_prompt = Some(s.clone()),
            Some(Value::Array(parts)) => {
                let texts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
                args.system_prompt = Some(texts.join("\n\n"));
            }
            _ => {}
        }
    }
    if args.append_system_prompt.is_none()
        && let Some(Value::String(s)) = request.get("appendSystemPrompt")
    {
        args.append_system_prompt = Some(s.clone());
    }
    let sdk_servers: Map<String, Value> = request
        .get("sdkMcpServers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| (name.to_string(), json!({"type": "sdk", "name": name})))
        .collect();
    if !sdk_servers.is_empty() {
        args.mcp_config
            .push(json!({"mcpServers": sdk_servers}).to_string());
    }
    if args.json_schema.is_none()
        && let Some(schema) = request.get("jsonSchema").filter(|v| v.is_object())
    {
        args.json_schema = Some(schema.to_string());
    }
    for key in [
        "planModeInstructions",
        "appendSubagentSystemPrompt",
        "toolAliases",
        "codeRunningMcpTools",
        "excludeDynamicSections",
        "skills",
        "title",
        "forwardSubagentText",
        "systemPromptSnapshot",
        "plugins",
        "promptSuggestions",
        "agentProgressSummaries",
        "webSearchIsolationExemptMcpServers",
    ] {
        if request.get(key).is_some_and(|v| !v.is_null()) {
            ignored.push(format!(
                "initialize: {key} has no effect in rein (see the README's Agent SDK section)"
            ));
        }
    }
    (applied, ignored)
}

/// What rein answers to `initialize` (`styles`: the `outputStyle` setting, and every style's
/// name) (Claude Code 2.1.328's keys the SDKs read: commands,
/// agents, output styles, models, account, pid, versions, the permission mode, whether the
/// hooks were registered and what they support).
pub fn answer(
    agents: &[(String, String, Option<String>)],
    permission_mode: &str,
    applied: &Applied,
    (style, styles): (&str, &[String]),
) -> Value {
    let mut answer = json!({
        "commands": [],
        "agents": agents.iter().map(|(name, description, model)| {
            let mut a = json!({"name": name, "description": description});
            if let (Some(m), Some(obj)) = (model, a.as_object_mut()) {
                obj.insert("model".into(), json!(m));
            }
            a
        }).collect::<Vec<_>>(),
        "output_style": style,
        "available_output_styles": styles,
        "models": [],
        "account": {},
        "pid": std::process::id(),
        "claude_code_version": crate::cli::sdk::SPEAKS_CLAUDE_CODE,
        "rein_version": env!("CARGO_PKG_VERSION"),
        "current_permission_mode": permission_mode,
        "hooks_applied": true,
        "hook_on_failure_supported": false,
        "session_state": "idle",
    });
    if let Some(obj) = answer.as_object_mut() {
        for (key, value) in [
            ("mcp_servers_applied", applied.mcp_servers),
            ("settings_applied", applied.settings),
            ("disallowed_tools_applied", applied.disallowed_tools),
            (
                "additional_directories_applied",
                applied.additional_directories,
            ),
            ("managed_settings_applied", applied.managed_settings),
        ] {
            if let Some(v) = value {
                obj.insert(key.into(), json!(v));
            }
        }
    }
    answer
}
