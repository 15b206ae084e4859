//! The permission step as the pipeline sees it: the [`PermissionGate`] trait, what it answers, and
//! the gate over a [`PermissionPolicy`] that prompts on a terminal or refuses headless.

use super::*;

/// What the permission step decided about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    Allow,
    /// Refused; `message` is the model-facing error text.
    Deny {
        message: String,
    },
    /// A person would have to approve. `reason` is shown to them; `denial` is the model-facing
    /// text when nobody can (headless, no PermissionRequest hook answer).
    Ask {
        reason: String,
        denial: String,
    },
}

/// What the program driving rein is asked where a person would be prompted (the Agent SDK's
/// `can_use_tool` request).
#[derive(Debug, Clone, PartialEq)]
pub struct HostQuestion {
    pub tool_name: String,
    pub input: Value,
    /// `PermissionUpdate` objects the host may apply with its answer.
    pub suggestions: Vec<Value>,
    /// The file the call edits, when it edits one.
    pub blocked_path: Option<String>,
    pub tool_use_id: String,
    /// The subagent whose call it is (`None`: the main agent's).
    pub agent_id: Option<String>,
    /// Why approval is needed.
    pub reason: String,
    /// The MCP server of an MCP tool.
    pub mcp_server: Option<crate::hooks::events::McpServerRef>,
}

/// The program driving rein, asked where a person would be prompted. Its answer is a
/// PermissionRequest decision and is applied as one; `Err` (no answer, a lost connection, an
/// unreadable answer) refuses the call with that reason.
pub trait PermissionHost: Send + Sync {
    fn can_use_tool(
        &self,
        question: HostQuestion,
    ) -> BoxFuture<'static, Result<PermissionRequestDecision, String>>;
}

/// The answer of an interactive approval prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptAnswer {
    Allow,
    /// Allow, and remember the approval for the rest of the session.
    AllowAlways,
    Deny,
    /// No one can be asked (headless): the call is denied.
    Unavailable,
}

/// The permission step as the pipeline sees it: rules + mode, the deny re-check after a
/// PermissionRequest rewrite, and the interactive prompt.
pub trait PermissionGate: Send + Sync {
    /// Evaluates a (prepared, possibly rewritten) call; `hook` is PreToolUse's decision.
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict;
    /// [`PermissionGate::evaluate`] with `allow` (permission rule texts: a command's or
    /// skill's `allowed-tools`) counted as allow rules of the session's for this one call.
    /// `None`: the gate has no rules of its own to add them to, and the caller matches them
    /// itself.
    fn evaluate_with_allow(
        &self,
        _tool: &str,
        _input: &Value,
        _hook: Option<&HookAnswer>,
        _allow: &[String],
    ) -> Option<GateVerdict> {
        None
    }
    /// Deny rules only: `Some(message)` if one matches.
    fn check_deny(&self, tool: &str, input: &Value) -> Option<String>;
    /// PermissionRequest's `permission_suggestions` for this call (SDK `PermissionUpdate`
    /// objects; possibly none).
    fn suggestions(&self, _tool: &str, _input: &Value) -> Vec<Value> {
        Vec::new()
    }
    /// Ask rules only: the matching rule's text.
    fn check_ask(&self, _tool: &str, _input: &Value) -> Option<String> {
        None
    }
    /// A PermissionRequest hook's `updatedPermissions`, for this session; returns what was
    /// refused.
    fn apply_hook_updates(&self, _updates: &[Value]) -> Vec<String> {
        Vec::new()
    }
    /// Asks a person, if one is attending. An `AllowAlways` answer is remembered by the gate.
    fn prompt<'a>(
        &'a self,
        tool: &'a str,
        input: &'a Value,
        reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer>;
    /// The session's working directory changed (relative rules resolve against it).
    fn follow_cwd(&self, _cwd: &Path) {}
    /// The session's plan file, which plan mode lets the model write.
    fn follow_plan_file(&self, _path: Option<&Path>) {}
    /// Whether [`PermissionGate::prompt`] can reach a person (then a `permission_prompt`
    /// Notification fires before it).
    fn can_prompt(&self) -> bool {
        false
    }
    /// The program driving rein that answers permission prompts, if there is one.
    fn host(&self) -> Option<Arc<dyn PermissionHost>> {
        None
    }
    /// The file a prompt about this call is about ([`HostQuestion::blocked_path`]).
    fn blocked_path(&self, _tool: &str, _input: &Value) -> Option<String> {
        None
    }
    /// Switches the permission mode (`set_permission_mode`); `Err` says why not.
    fn set_mode(&self, _mode: &str) -> Result<(), String> {
        Err("this permission step has no modes".to_string())
    }
}

/// The gate used until rules are configured: every call is allowed unless a PreToolUse hook
/// answered `ask`, and nobody can be prompted.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAllGate;

#[cfg(test)]
impl PermissionGate for AllowAllGate {
    fn evaluate(&self, tool: &str, _input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        match hook {
            Some(HookAnswer::Ask { reason }) => GateVerdict::Ask {
                reason: reason.clone().unwrap_or_default(),
                denial: reason
                    .clone()
                    .unwrap_or_else(|| crate::permissions::headless_denial_text(tool)),
            },
            Some(HookAnswer::Allow)
            | Some(HookAnswer::Defer { .. })
            | Some(HookAnswer::Deny { .. })
            | None => GateVerdict::Allow,
        }
    }

    fn check_deny(&self, _tool: &str, _input: &Value) -> Option<String> {
        None
    }

    fn prompt<'a>(
        &'a self,
        _tool: &'a str,
        _input: &'a Value,
        _reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async { PromptAnswer::Unavailable })
    }
}

/// The permission step over rein's [`PermissionPolicy`]: rules, mode and tiers; the prompt
/// through a [`Prompter`] when a person is attending (`None`: headless, asks are denied).
pub struct PolicyGate {
    pub(super) policy: Mutex<PermissionPolicy>,
    pub(super) prompter: Option<Arc<dyn Prompter>>,
    pub(super) host: Option<Arc<dyn PermissionHost>>,
}

impl PolicyGate {
    pub fn new(policy: PermissionPolicy, prompter: Option<Arc<dyn Prompter>>) -> PolicyGate {
        PolicyGate {
            policy: Mutex::new(policy),
            prompter,
            host: None,
        }
    }

    /// Prompts go to `host` (the Agent SDK's `can_use_tool`) instead of a person.
    pub fn with_host(mut self, host: Arc<dyn PermissionHost>) -> PolicyGate {
        self.host = Some(host);
        self
    }

    fn with_policy<T>(&self, f: impl FnOnce(&mut PermissionPolicy) -> T) -> T {
        let mut guard = self.policy.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

impl PolicyGate {
    fn verdict(tool: &str, input: &Value, verdict: Verdict) -> GateVerdict {
        match verdict {
            Verdict::Allow => GateVerdict::Allow,
            Verdict::Deny { message } => GateVerdict::Deny { message },
            Verdict::Ask { reason, cause } => GateVerdict::Ask {
                denial: headless_file_denial(tool, input, &cause)
                    .unwrap_or_else(|| headless_denial(tool, &reason, &cause)),
                reason,
            },
            // The pipeline ends the call on a PreToolUse `defer` before asking the gate; if a
            // defer still arrives here, refusing is the safe reading.
            Verdict::Defer { reason } => GateVerdict::Deny {
                message: reason.unwrap_or_else(|| "Tool call deferred by a hook".to_string()),
            },
        }
    }
}

impl PermissionGate for PolicyGate {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        let verdict = self.with_policy(|p| p.evaluate(tool, input, hook));
        PolicyGate::verdict(tool, input, verdict)
    }

    fn evaluate_with_allow(
        &self,
        tool: &str,
        input: &Value,
        hook: Option<&HookAnswer>,
        allow: &[String],
    ) -> Option<GateVerdict> {
        let verdict = self.with_policy(|p| p.evaluate_with_allow(tool, input, hook, allow));
        Some(PolicyGate::verdict(tool, input, verdict))
    }

    fn check_deny(&self, tool: &str, input: &Value) -> Option<String> {
        self.with_policy(|p| p.check_deny(tool, input))
    }

    fn suggestions(&self, tool: &str, input: &Value) -> Vec<Value> {
        self.with_policy(|p| p.permission_suggestions(tool, input))
    }

    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.with_policy(|p| p.check_ask(tool, input))
    }

    fn apply_hook_updates(&self, updates: &[Value]) -> Vec<String> {
        self.with_policy(|p| p.apply_hook_updates(updates))
    }

    fn prompt<'a>(
        &'a self,
        tool: &'a str,
        input: &'a Value,
        reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            let Some(prompter) = self.prompter.clone() else {
                return PromptAnswer::Unavailable;
            };
            let answer = ask_on_a_thread(prompter, tool, input, reason).await;
            match answer {
                prompt::PromptAnswer::AllowOnce => PromptAnswer::Allow,
                prompt::PromptAnswer::AllowAlways => {
                    self.with_policy(|p| p.remember_session_allow(tool, input));
                    PromptAnswer::AllowAlways
                }
                prompt::PromptAnswer::Deny => PromptAnswer::Deny,
            }
        })
    }

    fn follow_cwd(&self, cwd: &Path) {
        self.with_policy(|p| p.set_cwd(cwd.to_path_buf()));
    }

    fn follow_plan_file(&self, path: Option<&Path>) {
        self.with_policy(|p| p.set_plan_file(path.map(Path::to_path_buf)));
    }

    fn can_prompt(&self) -> bool {
        self.prompter.is_some()
    }

    fn host(&self) -> Option<Arc<dyn PermissionHost>> {
        self.host.clone()
    }

    fn blocked_path(&self, tool: &str, input: &Value) -> Option<String> {
        self.with_policy(|p| p.blocked_path(tool, input))
    }

    fn set_mode(&self, mode: &str) -> Result<(), String> {
        let (parsed, _) =
            crate::permissions::mode::PermissionMode::parse(mode).map_err(|e| e.to_string())?;
        self.with_policy(|p| p.switch_mode(parsed))
    }
}
