//! Judging one recorded event with the current settings: a call goes through the very tool
//! pipeline a session uses (PreToolUse, the permission rules and mode, PermissionRequest,
//! PermissionDenied, PostToolUse with the recorded output), except that the tool is a
//! stand-in that hands back what the transcript recorded and nobody can be asked.

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::reader::{LineBase, Loc, Recorded, Then};

use crate::hooks::dispatch::Dispatcher;
use crate::hooks::events::McpServerRef;
use crate::hooks::events::{BaseInput, Firing, pre_tool_use::PreToolUseInput};
use crate::hooks::host::HookHost;
use crate::hooks::spec::HookEvent;
use crate::permissions::policy::HookAnswer;
use crate::pipeline::{
    CallStatus, GateVerdict, PermissionGate, PolicyGate, PromptAnswer, ToolCall, ToolPipeline,
};
use crate::progress::{HookReport, Observer, Progress};
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};

/// What the current settings decide about one recorded event.
#[derive(Debug, Clone, PartialEq, Eq, Copy)]
pub(crate) enum Now {
    /// The call runs (or the prompt goes to the model, the turn ends).
    Allow,
    /// A person would be asked (refused where nobody can answer).
    Ask,
    Deny,
    Defer,
    /// A prompt blocked, or a Stop that keeps the agent going.
    Block,
    /// `--dry-hooks`: no hook ran; the rules alone allow.
    Unjudged,
}

impl Now {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Now::Allow => "allow",
            Now::Ask => "ask",
            Now::Deny => "deny",
            Now::Defer => "defer",
            Now::Block => "block",
            Now::Unjudged => "not judged",
        }
    }

    /// Whether the event would now be refused or blocked (`rein hooks replay` exits 3).
    pub(crate) fn refuses(self) -> bool {
        matches!(self, Now::Ask | Now::Deny | Now::Defer | Now::Block)
    }
}

/// A handler that acted on the event (or, in shadow mode, would have).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Actor {
    /// `file:line:col` of its configuration.
    pub(crate) origin: String,
    pub(crate) command: String,
    /// What it did: `blocked: <reason>`, `deny: <reason>`, `rewrote the input`, …
    pub(crate) did: String,
    pub(crate) shadow: bool,
}

/// One judged event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judged {
    pub(crate) loc: Loc,
    pub(crate) event: HookEvent,
    pub(crate) tool: Option<String>,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) input: Option<Value>,
    /// How the call ended in the recorded session (calls only).
    pub(crate) then: Option<Then>,
    pub(crate) now: Now,
    /// The refusal text the model would get, or the block reason.
    pub(crate) reason: Option<String>,
    /// The input after hooks rewrote it, when they did.
    pub(crate) rewritten: Option<Value>,
    /// Model-facing context the hooks add.
    pub(crate) context: Vec<String>,
    pub(crate) actors: Vec<Actor>,
    /// How many handler runs the event took (every event of the call).
    pub(crate) hook_runs: usize,
    /// `--dry-hooks`: the handlers that would run (`file:line:col command`).
    pub(crate) would_run: Vec<String>,
    /// Why the permission rules alone would refuse (`--dry-hooks`), or the rule that did.
    pub(crate) rules: Option<String>,
}

/// The permission step of a replay: the session's gate over the current settings, with nobody
/// to ask; remembers whether it asked.
pub(crate) struct ReplayGate {
    inner: PolicyGate,
    asked: Mutex<Option<String>>,
}

impl ReplayGate {
    pub(crate) fn new(inner: PolicyGate) -> ReplayGate {
        ReplayGate {
            inner,
            asked: Mutex::new(None),
        }
    }

    fn take_asked(&self) -> Option<String> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl PermissionGate for ReplayGate {
    fn evaluate(&self, tool: &str, input: &Value, hook: Option<&HookAnswer>) -> GateVerdict {
        let verdict = self.inner.evaluate(tool, input, hook);
        if let GateVerdict::Ask { reason, .. } = &verdict {
            *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
        }
        verdict
    }

    fn evaluate_with_allow(
        &self,
        tool: &str,
        input: &Value,
        hook: Option<&HookAnswer>,
        allow: &[String],
    ) -> Option<GateVerdict> {
        let verdict = self.inner.evaluate_with_allow(tool, input, hook, allow)?;
        if let GateVerdict::Ask { reason, .. } = &verdict {
            *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
        }
        Some(verdict)
    }

    fn check_deny(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.check_deny(tool, input)
    }

    fn suggestions(&self, tool: &str, input: &Value) -> Vec<Value> {
        self.inner.suggestions(tool, input)
    }

    fn check_ask(&self, tool: &str, input: &Value) -> Option<String> {
        self.inner.check_ask(tool, input)
    }

    fn apply_hook_updates(&self, updates: &[Value]) -> Vec<String> {
        self.inner.apply_hook_updates(updates)
    }

    fn prompt<'a>(
        &'a self,
        _tool: &'a str,
        _input: &'a Value,
        _reason: &'a str,
    ) -> BoxFuture<'a, PromptAnswer> {
        Box::pin(async { PromptAnswer::Unavailable })
    }

    fn follow_cwd(&self, cwd: &Path) {
        self.inner.follow_cwd(cwd);
    }

    fn follow_plan_file(&self, path: Option<&Path>) {
        self.inner.follow_plan_file(path);
    }
}

/// The hooks of a replay: the dispatcher, skipping the post-call events of a call that has no
/// recorded output (it never ran then, so there is nothing true to give them).
struct ReplayHost<'a> {
    dispatcher: &'a Dispatcher,
    skip_post: bool,
}

impl HookHost for ReplayHost<'_> {
    fn fire_erased<'a>(&'a self, firing: &'a dyn Firing) -> BoxFuture<'a, Box<dyn Any + Send>> {
        if self.skip_post
            && matches!(
                firing.event(),
                HookEvent::PostToolUse | HookEvent::PostToolUseFailure
            )
        {
            return Box::pin(async move { firing.default_outcome() });
        }
        firing.fire_on(self.dispatcher)
    }

    fn env_files(&self) -> Vec<PathBuf> {
        self.dispatcher.env_files()
    }

    fn take_async_context(&self) -> Vec<String> {
        self.dispatcher.take_async_context()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.dispatcher.shutdown())
    }
}

/// Collects the hook reports of one event.
#[derive(Default)]
struct Collector(Mutex<Vec<Arc<HookReport>>>);

impl Observer for Collector {
    fn observe(&self, progress: Progress<'_>) {
        if let Progress::Hook(report) = progress {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Arc::clone(report));
        }
    }
}

impl Collector {
    fn take(&self) -> Vec<Arc<HookReport>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A stand-in for the recorded call's tool: takes the input as recorded (the files it was
/// checked against are long gone) and hands back the recorded output.
struct RecordedTool {
    name: String,
    outcome: Mutex<Option<ToolOutcome>>,
}

impl Tool for RecordedTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a recorded call"
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn prepare(&self, input: Value, _ctx: &ToolContext) -> Result<Value, String> {
        Ok(input)
    }

    fn execute<'a>(&'a self, _input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        let outcome = self
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        Box::pin(async move {
            outcome.unwrap_or_else(|| ToolOutcome::Failure {
                error: "no recorded output".to_string(),
                is_interrupt: false,
            })
        })
    }

    fn render(&self, _response: &Value) -> Option<String> {
        None
    }

    fn mcp_server(&self) -> Option<McpServerRef> {
        McpServerRef::sample(&self.name)
    }
}

/// Everything a replay keeps across events.
pub(crate) struct Replayer {
    pub(crate) dispatcher: Arc<Dispatcher>,
    pub(crate) gate: ReplayGate,
    pub(crate) ctx: ToolContext,
    pub(crate) project_dir: PathBuf,
    pub(crate) mode: String,
    pub(crate) dry: bool,
    session: Option<String>,
}

impl Replayer {
    pub(crate) fn new(
        dispatcher: Arc<Dispatcher>,
        gate: ReplayGate,
        project_dir: PathBuf,
        mode: String,
        dry: bool,
    ) -> Replayer {
        Replayer {
            dispatcher,
            gate,
            ctx: ToolContext::new(project_dir.clone()),
            project_dir,
            mode,
            dry,
            session: None,
        }
    }

    fn base(&mut self, base: &LineBase, transcript: &Path) -> BaseInput {
        let session_id = base
            .session_id
            .clone()
            .unwrap_or_else(|| "replay".to_string());
        if self.session.as_deref() != Some(session_id.as_str()) {
            self.dispatcher.switch_session(&session_id, None);
            self.session = Some(session_id.clone());
        }
        let cwd = base
            .cwd
            .clone()
            .filter(|c| Path::new(c).is_dir())
            .unwrap_or_else(|| self.project_dir.to_string_lossy().into_owned());
        BaseInput {
            session_id,
            transcript_path: transcript.to_string_lossy().into_owned(),
            cwd,
            prompt_id: base.prompt_id.clone(),
            permission_mode: Some(self.mode.clone()),
            agent_id: base.agent_id.clone(),
            agent_type: None,
            effort: None,
        }
    }

    /// Judges one event.
    pub(crate) async fn judge(&mut self, event: Recorded, transcript: &Path) -> Judged {
        match event {
            Recorded::Call {
                loc,
                base,
                id,
                name,
                input,
                then,
                response,
            } => {
                let base = self.base(&base, transcript);
                self.call(loc, base, id, name, input, then, response).await
            }
            Recorded::Prompt { loc, base, text } => {
                let base = self.base(&base, transcript);
                let fields = json!({"prompt": text});
                self.plain(loc, HookEvent::UserPromptSubmit, base, fields)
                    .await
            }
            Recorded::Stop {
                loc,
                base,
                last_message,
                stop_hook_active,
            } => {
                let base = self.base(&base, transcript);
                let fields = json!({
                    "stop_hook_active": stop_hook_active,
                    "last_assistant_message": last_message,
                });
                self.plain(loc, HookEvent::Stop, base, fields).await
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn call(
        &mut self,
        loc: Loc,
        base: BaseInput,
        id: String,
        name: String,
        input: Value,
        then: Then,
        response: Option<Value>,
    ) -> Judged {
        let mut judged = Judged {
            loc,
            event: HookEvent::PreToolUse,
            tool: Some(name.clone()),
            tool_use_id: Some(id.clone()),
            input: Some(input.clone()),
            then: Some(then.clone()),
            now: Now::Allow,
            reason: None,
            rewritten: None,
            context: Vec::new(),
            actors: Vec::new(),
            hook_runs: 0,
            would_run: Vec::new(),
            rules: None,
        };
        if let Ok(cwd) = std::fs::canonicalize(&base.cwd) {
            *self.ctx.cwd.lock().unwrap_or_else(PoisonError::into_inner) = cwd;
        }
        if self.dry {
            let firing =
                crate::hooks::events::Typed::<crate::hooks::events::PreToolUse>(PreToolUseInput {
                    base,
                    hook_event_name: HookEvent::PreToolUse,
                    tool_name: name.clone(),
                    tool_input: input.clone(),
                    tool_use_id: id,
                    mcp_server: McpServerRef::sample(&name),
                });
            judged.would_run = self.would_run(&firing);
            self.gate.follow_cwd(&self.ctx.current_dir());
            let (now, rules) = match self.gate.evaluate(&name, &input, None) {
                GateVerdict::Allow => (Now::Unjudged, None),
                GateVerdict::Deny { message } => (Now::Deny, Some(message)),
                GateVerdict::Ask { reason, .. } => (Now::Ask, Some(reason)),
            };
            self.gate.take_asked();
            judged.now = now;
            judged.rules = rules;
            return judged;
        }
        let outcome = match (&then, &response) {
            (Then::Succeeded(text), r) => Some(ToolOutcome::Success {
                response: r.clone().unwrap_or_else(|| Value::String(text.clone())),
                content: text.clone(),
            }),
            (Then::Failed(text), _) => Some(ToolOutcome::Failure {
                error: text.clone(),
                is_interrupt: false,
            }),
            (Then::Refused(_) | Then::NoResult, _) => None,
        };
        let skip_post = outcome.is_none();
        let tool: Arc<dyn Tool> = Arc::new(RecordedTool {
            name: name.clone(),
            outcome: Mutex::new(outcome),
        });
        let tools = [tool];
        let host = ReplayHost {
            dispatcher: &self.dispatcher,
            skip_post,
        };
        let collector = Collector::default();
        let pipeline = ToolPipeline {
            hooks: &host,
            tools: &tools,
            gate: &self.gate,
            ctx: &self.ctx,
            observer: &collector,
        };
        let report = pipeline
            .run(
                &ToolCall {
                    id,
                    name,
                    input: input.clone(),
                },
                &base,
            )
            .await;
        let asked = self.gate.take_asked();
        judged.now = match report.status {
            CallStatus::Refused if asked.is_some() => Now::Ask,
            CallStatus::Refused | CallStatus::Invalid => Now::Deny,
            CallStatus::Deferred => Now::Defer,
            CallStatus::Succeeded | CallStatus::Failed | CallStatus::Interrupted => Now::Allow,
        };
        if judged.now.refuses() {
            judged.reason = Some(report.content.clone());
        }
        if report.input != input {
            judged.rewritten = Some(report.input.clone());
        }
        judged.context = report.context.clone();
        self.absorb(&mut judged, collector.take());
        // An Agent call that goes ahead starts a subagent: SubagentStart, as in a session.
        if judged.now == Now::Allow && matches!(report.tool_name.as_str(), "Agent" | "Task") {
            let agent_type = report
                .input
                .get("subagent_type")
                .and_then(Value::as_str)
                .unwrap_or("general-purpose")
                .to_string();
            let agent_id = response
                .as_ref()
                .and_then(|r| r.get("agentId"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(crate::agent::subagent::new_agent_id);
            let mut start_base = BaseInput {
                agent_id: Some(agent_id.clone()),
                agent_type: Some(agent_type.clone()),
                ..base_of(&judged, &self.project_dir)
            };
            start_base.session_id = self.session.clone().unwrap_or_default();
            let fields = json!({"agent_id": agent_id, "agent_type": agent_type});
            if let Some(firing) = build_firing(HookEvent::SubagentStart, start_base, fields) {
                let outcome = firing.fire_on(&self.dispatcher).await;
                if let Some(explained) = firing.explain(outcome.as_ref()) {
                    judged
                        .context
                        .extend(explained.model.into_iter().map(|(_, text)| text));
                }
            }
        }
        judged
    }

    /// A prompt or a Stop: the event's hooks, judged as `rein hooks test` judges them.
    async fn plain(
        &mut self,
        loc: Loc,
        event: HookEvent,
        base: BaseInput,
        fields: Value,
    ) -> Judged {
        let mut judged = Judged {
            loc,
            event,
            tool: None,
            tool_use_id: None,
            input: None,
            then: None,
            now: Now::Allow,
            reason: None,
            rewritten: None,
            context: Vec::new(),
            actors: Vec::new(),
            hook_runs: 0,
            would_run: Vec::new(),
            rules: None,
        };
        let Some(firing) = build_firing(event, base, fields) else {
            return judged;
        };
        if self.dry {
            judged.would_run = self.would_run(firing.as_ref());
            judged.now = Now::Unjudged;
            return judged;
        }
        let mut outcome = firing.fire_on(&self.dispatcher).await;
        if let Some(explained) = firing.explain(outcome.as_ref()) {
            if explained.blocks {
                judged.now = Now::Block;
                judged.reason = Some(explained.summary.clone());
            }
            judged.context = explained.model.into_iter().map(|(_, t)| t).collect();
        }
        if let Some(common) = firing.common_of(outcome.as_mut()) {
            let runs: Vec<_> = common.runs.iter().collect();
            judged.hook_runs = runs.len();
            for run in runs {
                if let Some(did) = did_of_run(
                    match &run.outcome {
                        crate::hooks::run::OutcomeKind::Blocking(reason) => Some(reason.as_str()),
                        crate::hooks::run::OutcomeKind::Success
                        | crate::hooks::run::OutcomeKind::NonBlocking(_)
                        | crate::hooks::run::OutcomeKind::Cancelled => None,
                    },
                    run.json.as_ref(),
                    run.withheld.as_deref(),
                ) {
                    judged.actors.push(Actor {
                        origin: run.origin.location.to_string(),
                        command: run.command.clone(),
                        did,
                        shadow: run.shadow,
                    });
                }
            }
        }
        judged
    }

    fn would_run(&self, firing: &dyn Firing) -> Vec<String> {
        let target = firing.target();
        self.dispatcher
            .select(&target)
            .iter()
            .map(|s| format!("{} {}", s.origin(), s.command_text()))
            .collect()
    }

    fn absorb(&self, judged: &mut Judged, reports: Vec<Arc<HookReport>>) {
        for report in reports {
            for run in &report.runs {
                judged.hook_runs += 1;
                let blocking = match &run.outcome {
                    crate::progress::HookRunOutcome::Blocking(reason) => Some(reason.as_str()),
                    crate::progress::HookRunOutcome::Success
                    | crate::progress::HookRunOutcome::NonBlocking(_)
                    | crate::progress::HookRunOutcome::Cancelled => None,
                };
                if let Some(did) = did_of_run(blocking, run.json.as_ref(), run.withheld.as_deref())
                {
                    judged.actors.push(Actor {
                        origin: run.origin.clone(),
                        command: run.command.clone(),
                        did: format!("{}: {did}", report.event),
                        shadow: run.shadow,
                    });
                }
            }
        }
    }
}

/// The base of a SubagentStart fired for a judged call.
fn base_of(judged: &Judged, project_dir: &Path) -> BaseInput {
    BaseInput {
        session_id: String::new(),
        transcript_path: judged.loc.file.to_string(),
        cwd: project_dir.to_string_lossy().into_owned(),
        prompt_id: None,
        permission_mode: None,
        agent_id: None,
        agent_type: None,
        effort: None,
    }
}

/// The input of `event` as a session builds it: the event's defaults, then `fields`.
fn build_firing(event: HookEvent, base: BaseInput, fields: Value) -> Option<Box<dyn Firing>> {
    let fires = event.spec().fires?;
    let spec = event.spec();
    let base = BaseInput {
        prompt_id: if spec.prompt_id { base.prompt_id } else { None },
        permission_mode: if spec.permission_mode {
            base.permission_mode
        } else {
            None
        },
        ..base
    };
    let mut input = fires.sample_input(base, "");
    if let Value::Object(extra) = fields {
        input.extend(extra);
    }
    match fires.parse_input(Value::Object(input)) {
        Ok(firing) => Some(firing),
        Err(err) => {
            tracing::warn!(%event, %err, "replay could not build the event's input");
            None
        }
    }
}

/// What one run did, in a few words; `None` when it neither objected nor changed anything.
fn did_of_run(
    blocking: Option<&str>,
    json: Option<&Value>,
    withheld: Option<&str>,
) -> Option<String> {
    if let Some(text) = withheld {
        return Some(format!("(shadow) {text}"));
    }
    if let Some(reason) = blocking {
        return Some(format!("blocked: {}", super::one_line(reason)));
    }
    let hso = json?.get("hookSpecificOutput")?;
    let mut parts = Vec::new();
    if let Some(decision) = hso.get("permissionDecision").and_then(Value::as_str) {
        match hso
            .get("permissionDecisionReason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            Some(reason) => parts.push(format!("{decision}: {}", super::one_line(reason))),
            None => parts.push(decision.to_string()),
        }
    }
    if let Some(behavior) = hso
        .get("decision")
        .and_then(|d| d.get("behavior"))
        .and_then(Value::as_str)
    {
        parts.push(behavior.to_string());
    }
    if hso.get("updatedInput").is_some() {
        parts.push("rewrote the input".to_string());
    }
    if hso.get("additionalContext").is_some() {
        parts.push("added context".to_string());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}
