//! What a subagent shares with its parent: the hook host and permission gate (by `Arc`, so its
//! calls take the same gate), and the observers that decide what of its progress the parent shows.

use super::*;

/// Shares one permission gate between a session and its subagents.
///
/// Every method is forwarded (a default left in place would silently skip a check). Each
/// session has its own working directory, so relative rules resolve where that session's shell
/// is: the cwd is set and the rules evaluated as one step under a lock shared by all the
/// session's gates. Interactive prompts are taken one at a time: parallel subagents may ask at
/// once, and a person answers one question after the other.
pub(crate) struct SharedGate {
    pub(super) gate: Arc<dyn PermissionGate>,
    pub(super) prompt_lock: Arc<tokio::sync::Mutex<()>>,
    pub(super) rules_lock: Arc<std::sync::Mutex<()>>,
    pub(super) cwd: std::sync::Mutex<Option<PathBuf>>,
}

impl SharedGate {
    /// Runs `f` on the gate with this session's working directory in place.
    fn at_cwd<T>(&self, f: impl FnOnce(&dyn PermissionGate) -> T) -> T {
        let _one_at_a_time = self
            .rules_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let cwd = self
            .cwd
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        if let Some(cwd) = cwd {
            self.gate.follow_cwd(&cwd);
        }
        f(self.gate.as_ref())
    }
}

impl PermissionGate for SharedGate {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        self.at_cwd(|g| g.evaluate(tool, input, hook))
    }
    fn evaluate_with_allow(
        &self,
        tool: &str,
        input: &Value,
        hook: Option<&HookAnswer>,
        allow: &[String],
    ) -> Option<GateVerdict> {
        self.at_cwd(|g| g.evaluate_with_allow(tool, input, hook, allow))
    }
    fn check_deny(&self, tool: &str, input: &Value) -> Option<String> {
        self.at_cwd(|g| g.check_deny(tool, input))
    }
    fn suggestions(&self, tool: &str, input: &Value) -> Vec<Value> {
        self.at_cwd(|g| g.suggestions(tool, input))
    }
    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.at_cwd(|g| g.check_ask(tool, input))
    }
    fn apply_hook_updates(&self, updates: &[Value]) -> Vec<String> {
        self.at_cwd(|g| g.apply_hook_updates(updates))
    }
    fn prompt<'a>(
        &'a self,
        tool: &'a str,
        input: &'a Value,
        reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async move {
            let _one_at_a_time = self.prompt_lock.lock().await;
            self.gate.prompt(tool, input, reason).await
        })
    }
    fn follow_cwd(&self, cwd: &std::path::Path) {
        *self
            .cwd
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(cwd.to_path_buf());
    }
    fn follow_plan_file(&self, path: Option<&std::path::Path>) {
        self.gate.follow_plan_file(path);
    }
    fn can_prompt(&self) -> bool {
        self.gate.can_prompt()
    }
    fn host(&self) -> Option<Arc<dyn crate::pipeline::PermissionHost>> {
        self.gate.host()
    }
    fn blocked_path(&self, tool: &str, input: &Value) -> Option<String> {
        self.at_cwd(|g| g.blocked_path(tool, input))
    }
    fn set_mode(&self, mode: &str) -> Result<(), String> {
        self.gate.set_mode(mode)
    }
}

/// Shares one hook host between a session and its subagents. Only the session's own handle
/// (`owner`) takes the context of finished background hooks and shuts the host down at the
/// session's end; a subagent's handle leaves both to the parent (a subagent ending must not
/// end the session's background hooks, nor swallow context meant for the parent).
pub(crate) struct SharedHost {
    pub(super) host: Arc<dyn HookHost>,
    pub(super) owner: bool,
}

impl SharedHost {
    /// A subagent's (or agent hook's) handle on the session's host.
    pub(crate) fn borrowed(host: &Arc<dyn HookHost>) -> SharedHost {
        SharedHost {
            host: Arc::clone(host),
            owner: false,
        }
    }
}

impl HookHost for SharedHost {
    fn fire_erased<'a>(
        &'a self,
        firing: &'a dyn crate::hooks::events::Firing,
    ) -> BoxFuture<'a, Box<dyn std::any::Any + Send>> {
        self.host.fire_erased(firing)
    }
    fn env_files(&self) -> Vec<PathBuf> {
        self.host.env_files()
    }
    fn take_async_context(&self) -> Vec<String> {
        if self.owner {
            self.host.take_async_context()
        } else {
            Vec::new()
        }
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        if self.owner {
            self.host.shutdown()
        } else {
            Box::pin(async {})
        }
    }
    fn switch_session(&self, session_id: &str, output_dir: Option<PathBuf>) {
        if self.owner {
            self.host.switch_session(session_id, output_dir);
        }
    }
}

/// An observer that drops everything (a subagent's progress goes to its own transcript only).
pub(crate) struct Quiet;

impl Observer for Quiet {
    fn observe(&self, _progress: Progress<'_>) {}
}

/// Passes every progress event on to a shared observer (the session's, also reached by its
/// subagents).
pub(crate) struct SharedObserver(pub Arc<dyn Observer>);

impl Observer for SharedObserver {
    fn observe(&self, progress: Progress<'_>) {
        self.0.observe(progress);
    }
}

/// A subagent's view of the parent's observer: only user-facing notices (a hook's error, the
/// SubagentStop cap) reach the user; the subagent's conversation stays in its transcript.
pub(super) struct NoticesOnly(pub(super) Arc<dyn Observer>);

impl Observer for NoticesOnly {
    fn observe(&self, progress: Progress<'_>) {
        if let Progress::Notice { .. } = progress {
            self.0.observe(progress);
        }
    }
}
