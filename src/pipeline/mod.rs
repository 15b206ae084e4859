//! The tool-call pipeline: PreToolUse → permissions → execute → PostToolUse/PostToolUseFailure
//! (spec §6.4), and PostToolBatch once per assistant message.
//!
//! The pipeline knows each event's typed outcome, never how hooks run. Its rules, in order, for one call:
//! 1. Unknown tool → error result `Error: No such tool available: <name>`; `Tool::prepare`
//!    failing → its error as the result; both wrapped in `<tool_use_error>…</tool_use_error>`, as
//!    Claude Code 2.1.328 does. No hook fires for either (PostToolBatch still lists the call).
//!    A Read/Write/Edit of a path a deny rule covers is refused here too (Claude Code's
//!    `File is in a directory that is denied by your permission settings.`), a denial with no
//!    hook.
//! 2. PreToolUse. `deny` → the call never runs and the rendered hook text is the error result;
//!    `defer` → the call does not run and the turn ends (`tool_deferred`); `updatedInput` replaces
//!    the input after `prepare` validated it again (invalid → refused). `continue: false` does
//!    not block the call; it stops the loop after this step.
//! 3. The permission step ([`PermissionGate`]) on the possibly rewritten input. `Ask` →
//!    PermissionRequest hooks (`allow` + `updatedInput` is re-checked against deny rules);
//!    without a hook answer, the gate's interactive prompt, or a denial when there is none.
//! 4. Every refused call fires PermissionDenied with the reason.
//! 5. Execute, timing only the tool; PostToolUse (sees the rewritten input; `updatedToolOutput`
//!    is rendered by the tool, falling back to the real output) or PostToolUseFailure.
//!
//! Model-facing hook texts come back as [`CallReport::context`] for the session to deliver with
//! the next request.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::FutureExt;
use serde_json::Value;

use crate::hooks::events::McpServerRef;
use crate::hooks::events::cwd_changed::CwdChangedInput;
use crate::hooks::events::notification::NotificationInput;
use crate::hooks::events::permission_denied::{PermissionDeniedInput, retry_text};
use crate::hooks::events::permission_request::{PermissionRequestDecision, PermissionRequestInput};
use crate::hooks::events::post_tool_batch::{BatchToolCall, PostToolBatchInput};
use crate::hooks::events::post_tool_use::PostToolUseInput;
use crate::hooks::events::post_tool_use_failure::PostToolUseFailureInput;
use crate::hooks::events::pre_tool_use::{PermissionDecision, PreToolUseInput};
use crate::hooks::events::{
    BaseInput, Common, CwdChanged, Event, Notification, PermissionDenied, PermissionRequest,
    PostToolBatch, PostToolUse, PostToolUseFailure, PreToolUse,
};
use crate::hooks::host::{HookHost, fire_observed};
use crate::hooks::spec::HookEvent;
use crate::permissions::policy::{
    AskCause, HookAnswer, PermissionPolicy, Verdict, headless_denial,
};
use crate::permissions::prompt::{self, Prompter};
use crate::progress::{Observer, Progress};
use crate::tools::ask_user::PersonAnswer;
use crate::tools::{BoxFuture, Tool, ToolContext, ToolOutcome};
use std::path::Path;
use std::sync::Mutex;

mod gate;
mod lines;

pub use gate::*;
pub use lines::*;

static GATE_PASSES: AtomicU64 = AtomicU64::new(0);
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);

/// Proof that one call passed PreToolUse and the permission step. Only the pipeline makes one
/// (after the gate) and [`ToolPipeline::execute`] — the only caller of `Tool::execute` —
/// needs one, so no tool runs without a pass; the two counters let a test check that every
/// execution (main agent and subagents alike) spent a pass.
struct GatePass(());

impl GatePass {
    fn issue() -> GatePass {
        GATE_PASSES.fetch_add(1, Ordering::SeqCst);
        GatePass(())
    }

    fn spend(self) {
        EXECUTIONS.fetch_add(1, Ordering::SeqCst);
    }
}

/// `(passes issued, tool executions)` in this process so far (`REIN_GATE_LEDGER` writes them
/// at exit).
pub fn gate_ledger() -> (u64, u64) {
    (
        GATE_PASSES.load(Ordering::SeqCst),
        EXECUTIONS.load(Ordering::SeqCst),
    )
}

/// One tool call as the model sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

pub use crate::progress::CallStatus;

/// Everything the session needs from one call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReport {
    pub tool_use_id: String,
    pub tool_name: String,
    /// The input the call ended with (prepared, possibly rewritten by hooks).
    pub input: Value,
    pub status: CallStatus,
    /// The model-facing tool_result content.
    pub content: String,
    pub is_error: bool,
    /// The structured `tool_response` (PostToolUse's), when the tool succeeded.
    pub response: Option<Value>,
    /// Model-facing context entries to deliver with the next request.
    pub context: Vec<String>,
    /// `continue: false` from a hook: stop the loop after this step.
    pub stop_loop: bool,
    pub stop_reason: Option<String>,
    /// The refusal reason, when refused (for `permission_denials` in json output).
    pub denial: Option<String>,
    /// The permission mode the call switched the session to (EnterPlanMode, ExitPlanMode).
    pub mode_changed: Option<String>,
}

/// What a PostToolBatch firing decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchReport {
    pub context: Vec<String>,
    /// A blocking PostToolBatch hook or `continue: false`: stop the loop.
    pub stop_loop: bool,
    pub stop_reason: Option<String>,
}

/// Runs tool calls through hooks, permissions and the tools.
pub struct ToolPipeline<'a> {
    pub hooks: &'a dyn HookHost,
    pub tools: &'a [Arc<dyn Tool>],
    pub gate: &'a dyn PermissionGate,
    pub ctx: &'a ToolContext,
    pub observer: &'a dyn Observer,
}

/// Tools Claude Code 2.1.328 turns off in `-p` and SDK sessions, and so does rein: calling one
/// gets Claude Code's words (fixture `tests/fixtures/cc-2.1.328/tools_deferred`, `plan_mode`).
/// On the terminal AskUserQuestion is a tool of the session ([`crate::tools::ask_user`]), found
/// before this list is consulted.
pub const DISABLED_TOOLS: [&str; 3] = ["AskUserQuestion", "TodoWrite", "ExitPlanMode"];

/// The model-facing text for a call of a tool the session does not have.
pub fn unknown_tool_text(name: &str) -> String {
    if DISABLED_TOOLS.contains(&name) {
        format!(
            "Error: No such tool available: {name}. {name} is disabled for this session, in subagents as well as here."
        )
    } else {
        format!("Error: No such tool available: {name}")
    }
}

/// The text when a person answered "no" at the prompt.
pub const USER_REJECTED_TEXT: &str =
    "The user doesn't want to proceed with this tool use. The tool use was rejected.";

impl<'a> ToolPipeline<'a> {
    /// The tool offered under `name` or one of its former names, if any.
    pub fn find(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|t| t.name() == name || t.aliases().contains(&name))
    }

    /// The tool events' `mcp_server` for the tool offered under `name`.
    fn mcp_server_of(&self, name: &str) -> Option<McpServerRef> {
        self.find(name).and_then(|t| t.mcp_server())
    }

    async fn fire<E: Event>(&self, input: E::Input, tool_use_id: Option<&str>) -> E::Outcome {
        fire_observed::<E>(self.hooks, input, self.observer, tool_use_id).await
    }

    /// [`Tool::prepare`] on a blocking thread, over a snapshot of the context, when it may touch
    /// files: validation may stat or read a file, and a hung file system must not hold the
    /// session (and the signals it waits for beside its work) on a syscall. A prepare that only
    /// checks its JSON (Bash, TaskStop, MCP tools, Agent) runs in place.
    async fn prepare(&self, tool: &Arc<dyn Tool>, input: Value) -> Result<Value, String> {
        if !tool.prepare_touches_files() {
            return tool.prepare(input, self.ctx);
        }
        let tool = Arc::clone(tool);
        let ctx = self.ctx.snapshot();
        let name = tool.name().to_string();
        tokio::task::spawn_blocking(move || tool.prepare(input, &ctx))
            .await
            .unwrap_or_else(|_| Err(format!("{name} tool crashed while checking its input")))
    }

    /// Runs one call to its end. Never fails: every problem becomes an error result.
    pub async fn run(&self, call: &ToolCall, base: &BaseInput) -> CallReport {
        self.observer.observe(Progress::ToolStart {
            tool_use_id: &call.id,
            name: &call.name,
            input: &call.input,
        });
        let report = self.run_inner(call, base).await;
        self.observer.observe(Progress::ToolResult {
            tool_use_id: &report.tool_use_id,
            name: &report.tool_name,
            content: &report.content,
            is_error: report.is_error,
            status: report.status,
            response: report.response.as_ref(),
        });
        report
    }

    async fn run_inner(&self, call: &ToolCall, base: &BaseInput) -> CallReport {
        let mut report = CallReport {
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            input: call.input.clone(),
            status: CallStatus::Invalid,
            content: String::new(),
            is_error: true,
            response: None,
            context: Vec::new(),
            stop_loop: false,
            stop_reason: None,
            denial: None,
            mode_changed: None,
        };
        let Some(tool) = self.find(&call.name).cloned() else {
            report.content = tool_use_error(&unknown_tool_text(&call.name));
            return report;
        };
        // A call by a former name (`KillShell`) is the tool's call: hooks, rules and the
        // transcript's result see its current name (`TaskStop`).
        let renamed;
        let call = if tool.name() == call.name {
            call
        } else {
            renamed = ToolCall {
                name: tool.name().to_string(),
                ..call.clone()
            };
            report.tool_name = renamed.name.clone();
            &renamed
        };
        let mut input = match self.prepare(&tool, call.input.clone()).await {
            Ok(v) => v,
            Err(message) => {
                report.content = tool_use_error(&message);
                return report;
            }
        };
        report.input = input.clone();
        // Claude Code 2.1.328 refuses a file tool's path that a deny rule covers while it
        // validates the input: no hook fires, and the model gets its validation text (fixture
        // `tests/fixtures/cc-2.1.328/deny_paths`). The call is still a permission denial.
        if DENY_CHECKED_AT_VALIDATION.contains(&call.name.as_str())
            && self.gate.check_deny(&call.name, &input).is_some()
        {
            report.status = CallStatus::Refused;
            report.denial = Some(DENIED_PATH_TEXT.to_string());
            report.content = tool_use_error(DENIED_PATH_TEXT);
            return report;
        }

        let pre = self
            .fire::<PreToolUse>(
                PreToolUseInput {
                    base: base.clone(),
                    hook_event_name: HookEvent::PreToolUse,
                    tool_name: call.name.clone(),
                    tool_input: input.clone(),
                    tool_use_id: call.id.clone(),
                    mcp_server: self.mcp_server_of(&call.name),
                },
                Some(&call.id),
            )
            .await;
        absorb(&mut report, &pre.common);
        match &pre.permission {
            Some(PermissionDecision::Deny { text, .. }) => {
                let text = text.clone();
                return self.refuse(report, base, &input, text).await;
            }
            Some(PermissionDecision::Defer { reason }) => {
                report.status = CallStatus::Deferred;
                report.content = reason
                    .clone()
                    .unwrap_or_else(|| "Tool call deferred by a PreToolUse hook".to_string());
                report.stop_loop = true;
                report.stop_reason = Some("tool_deferred".to_string());
                return report;
            }
            Some(PermissionDecision::Allow { .. })
            | Some(PermissionDecision::Ask { .. })
            | None => {}
        }
        if let Some(updated) = &pre.updated_input {
            match self.prepare(&tool, updated.clone()).await {
                Ok(v) => {
                    input = v;
                    report.input = input.clone();
                }
                Err(message) => {
                    let text = format!(
                        "PreToolUse:{} hook returned an invalid updatedInput: {message}",
                        call.name
                    );
                    return self.refuse(report, base, &input, text).await;
                }
            }
        }

        if let Some(notice) = tool.asks_person() {
            match self
                .person_step(&tool, call, base, &mut input, notice)
                .await
            {
                Ok(()) => report.input = input.clone(),
                Err(Some(text)) => return self.refuse(report, base, &input, text).await,
                // The person stopped the turn: whoever shows the dialog drops this call's
                // future, as for Ctrl+C (no PostToolUse, no Stop; Claude Code's Esc).
                Err(None) => std::future::pending::<()>().await,
            }
            let pass = GatePass::issue();
            return self.execute(report, &tool, call, base, input, pass).await;
        }

        let hook_answer = pre.permission.as_ref().map(hook_answer);
        // Relative paths in a Bash line resolve where the shell really is (`cd` persists).
        self.gate.follow_cwd(&self.ctx.current_dir());
        if let Some(plan_file) = &self.ctx.plan_file {
            self.gate.follow_plan_file(Some(plan_file));
        }
        match self.gate.evaluate(&call.name, &input, hook_answer.as_ref()) {
            GateVerdict::Allow => {}
            GateVerdict::Deny { message } => {
                return self.refuse(report, base, &input, message).await;
            }
            GateVerdict::Ask { reason, denial } => {
                match self
                    .permission_request(&tool, call, base, &mut input, &reason, denial)
                    .await
                {
                    Approval::Approved => report.input = input.clone(),
                    Approval::Refused { text, interrupt } => {
                        if interrupt {
                            report.stop_loop = true;
                        }
                        return self.refuse(report, base, &input, text).await;
                    }
                }
            }
        }

        // The only place a pass is made: PreToolUse did not refuse and the permission step
        // allowed (or a person or PermissionRequest hook approved) this very input.
        let pass = GatePass::issue();
        self.execute(report, &tool, call, base, input, pass).await
    }

    /// The permission step of a tool a person answers ([`Tool::asks_person`]): a deny rule
    /// refuses; PermissionRequest hooks fire (Claude Code 2.1.328 sends no
    /// `permission_suggestions` for these) and their decision stands; otherwise the
    /// `permission_prompt` Notification fires and the person answers in the tool's dialog
    /// (an allow without the answers still shows it). `Err(Some(text))`: refused with that
    /// text; `Err(None)`: the person stopped the turn.
    async fn person_step(
        &self,
        tool: &Arc<dyn Tool>,
        call: &ToolCall,
        base: &BaseInput,
        input: &mut Value,
        notice: &str,
    ) -> Result<(), Option<String>> {
        if let Some(text) = self.gate.check_deny(&call.name, input) {
            return Err(Some(text));
        }
        let outcome = self
            .fire::<PermissionRequest>(
                PermissionRequestInput {
                    base: base.clone(),
                    hook_event_name: HookEvent::PermissionRequest,
                    tool_name: call.name.clone(),
                    tool_input: input.clone(),
                    permission_suggestions: None,
                    mcp_server: self.mcp_server_of(&call.name),
                },
                None,
            )
            .await;
        match outcome.decision {
            Some(decision) => match self.apply_decision(tool, call, input, decision).await {
                Approval::Approved => {}
                Approval::Refused { text, .. } => return Err(Some(text)),
            },
            None => {
                self.fire::<Notification>(
                    NotificationInput {
                        base: notification_base(base),
                        hook_event_name: HookEvent::Notification,
                        message: notice.to_string(),
                        title: None,
                        notification_type: "permission_prompt".to_string(),
                    },
                    None,
                )
                .await;
            }
        }
        let _terminal = crate::permissions::prompt::Prompting::begin();
        match tool.ask_person(input.clone(), self.ctx).await {
            PersonAnswer::Proceed(answered) => {
                *input = answered;
                Ok(())
            }
            PersonAnswer::Refuse(text) => Err(Some(text)),
            PersonAnswer::Stop => Err(None),
        }
    }

    /// PermissionRequest hooks, then the prompt, then the headless denial.
    async fn permission_request(
        &self,
        tool: &Arc<dyn Tool>,
        call: &ToolCall,
        base: &BaseInput,
        input: &mut Value,
        reason: &str,
        denial: String,
    ) -> Approval {
        let outcome = self
            .fire::<PermissionRequest>(
                PermissionRequestInput {
                    base: base.clone(),
                    hook_event_name: HookEvent::PermissionRequest,
                    tool_name: call.name.clone(),
                    tool_input: input.clone(),
                    // Always present, `[]` included, as Claude Code sends it (fixture
                    // `tests/fixtures/cc-2.1.328/read_only_bash`).
                    permission_suggestions: Some(self.gate.suggestions(&call.name, input)),
                    mcp_server: self.mcp_server_of(&call.name),
                },
                None,
            )
            .await;
        match outcome.decision {
            Some(decision) => self.apply_decision(tool, call, input, decision).await,
            None if self.gate.host().is_some() => {
                self.ask_host(tool, call, base, input, reason).await
            }
            None if self.gate.can_prompt() => {
                self.fire::<Notification>(
                    NotificationInput {
                        base: notification_base(base),
                        hook_event_name: HookEvent::Notification,
                        message: format!("rein needs your permission to use {}", call.name),
                        title: None,
                        notification_type: "permission_prompt".to_string(),
                    },
                    None,
                )
                .await;
                self.ask_person(call, input, reason, denial).await
            }
            None => self.ask_person(call, input, reason, denial).await,
        }
    }

    /// The program driving rein (the Agent SDK's `can_use_tool`) answers where a person would
    /// be prompted; its answer is applied as a PermissionRequest hook's is (a rewrite meets
    /// the deny and ask rules again). No answer, an unreadable one or a lost connection
    /// refuses the call.
    async fn ask_host(
        &self,
        tool: &Arc<dyn Tool>,
        call: &ToolCall,
        base: &BaseInput,
        input: &mut Value,
        reason: &str,
    ) -> Approval {
        let Some(host) = self.gate.host() else {
            return Approval::Refused {
                text: crate::permissions::headless_denial_text(&call.name),
                interrupt: false,
            };
        };
        let question = HostQuestion {
            tool_name: call.name.clone(),
            input: input.clone(),
            suggestions: self.gate.suggestions(&call.name, input),
            blocked_path: self.gate.blocked_path(&call.name, input),
            tool_use_id: call.id.clone(),
            agent_id: base.agent_id.clone(),
            reason: reason.to_string(),
            mcp_server: self.mcp_server_of(&call.name),
        };
        match host.can_use_tool(question).await {
            Ok(decision) => self.apply_decision(tool, call, input, decision).await,
            Err(why) => Approval::Refused {
                text: format!("Permission to use {} was not granted: {why}", call.name),
                interrupt: false,
            },
        }
    }

    /// A PermissionRequest hook's (or the host's) decision applied to the call.
    async fn apply_decision(
        &self,
        tool: &Arc<dyn Tool>,
        call: &ToolCall,
        input: &mut Value,
        decision: PermissionRequestDecision,
    ) -> Approval {
        match decision {
            PermissionRequestDecision::Allow {
                updated_input,
                updated_permissions,
            } => {
                let original = input.clone();
                if let Some(updated) = updated_input {
                    match self.prepare(tool, updated).await {
                        Ok(v) => *input = v,
                        Err(message) => {
                            return Approval::Refused {
                                text: format!(
                                    "PermissionRequest:{} hook returned an invalid updatedInput: {message}",
                                    call.name
                                ),
                                interrupt: false,
                            };
                        }
                    }
                }
                // Why: a hook's rewrite must not smuggle a call past a deny rule, nor past an
                // ask rule the call as asked about did not meet (the person, or the hook, was
                // asked about the original).
                if let Some(text) = self.gate.check_deny(&call.name, input) {
                    return Approval::Refused {
                        text,
                        interrupt: false,
                    };
                }
                if *input != original
                    && let Some(rule) = self.gate.check_ask(&call.name, input)
                    && self.gate.check_ask(&call.name, &original).as_ref() != Some(&rule)
                {
                    let reason = format!(
                        "A PermissionRequest hook rewrote this call, and the permission rule `{rule}` requires approval for the rewritten call"
                    );
                    let denial = crate::permissions::policy::headless_denial(
                        &call.name,
                        &reason,
                        &crate::permissions::policy::AskCause::AskRule(rule),
                    );
                    return self.ask_person(call, input, &reason, denial).await;
                }
                for refused in self.gate.apply_hook_updates(&updated_permissions) {
                    tracing::warn!("PermissionRequest:{}: {refused}", call.name);
                }
                Approval::Approved
            }
            PermissionRequestDecision::Deny { message, interrupt } => Approval::Refused {
                text: message,
                interrupt,
            },
        }
    }

    async fn ask_person(
        &self,
        call: &ToolCall,
        input: &Value,
        reason: &str,
        denial: String,
    ) -> Approval {
        match self.gate.prompt(&call.name, input, reason).await {
            PromptAnswer::Allow | PromptAnswer::AllowAlways => Approval::Approved,
            PromptAnswer::Deny => Approval::Refused {
                text: USER_REJECTED_TEXT.to_string(),
                interrupt: false,
            },
            PromptAnswer::Unavailable => Approval::Refused {
                text: denial,
                interrupt: false,
            },
        }
    }

    /// Ends a refused call: PermissionDenied fires with the reason; the text is the result.
    async fn refuse(
        &self,
        mut report: CallReport,
        base: &BaseInput,
        input: &Value,
        text: String,
    ) -> CallReport {
        let denied = self
            .fire::<PermissionDenied>(
                PermissionDeniedInput {
                    base: base.clone(),
                    hook_event_name: HookEvent::PermissionDenied,
                    tool_name: report.tool_name.clone(),
                    tool_input: input.clone(),
                    tool_use_id: report.tool_use_id.clone(),
                    reason: text.clone(),
                    mcp_server: self.mcp_server_of(&report.tool_name),
                },
                Some(&report.tool_use_id),
            )
            .await;
        absorb(&mut report, &denied.common);
        if denied.retry {
            report.context.push(retry_text(&report.tool_name));
        }
        report.status = CallStatus::Refused;
        report.denial = Some(text.clone());
        report.content = text;
        report.is_error = true;
        report.input = input.clone();
        report
    }

    async fn execute(
        &self,
        mut report: CallReport,
        tool: &Arc<dyn Tool>,
        call: &ToolCall,
        base: &BaseInput,
        input: Value,
        pass: GatePass,
    ) -> CallReport {
        pass.spend();
        let started = Instant::now();
        // Why catch_unwind: a panicking tool must become a failed call, not a dead session.
        // A skill's `!` lines run first, each a Bash call through this pipeline.
        let outputs = match tool.shell_lines(&input) {
            Some(lines) if !lines.commands.is_empty() => {
                Some(self.run_shell_lines(&lines, base).await)
            }
            _ => None,
        };
        let outcome = match outputs {
            Some(Err(line)) => ToolOutcome::Failure {
                error: line.skill_text(),
                is_interrupt: false,
            },
            outputs => {
                let run = match outputs {
                    Some(Ok(outputs)) => {
                        tool.execute_with_outputs(input.clone(), outputs, self.ctx)
                    }
                    _ => tool.execute(input.clone(), self.ctx),
                };
                crate::tools::as_call(call.id.clone(), AssertUnwindSafe(run).catch_unwind())
                    .await
                    .unwrap_or_else(|_| ToolOutcome::Failure {
                        error: format!("{} tool crashed", call.name),
                        is_interrupt: false,
                    })
            }
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        // A Bash `cd` moves the session at once: the call's own PostToolUse already runs in,
        // and is told, the new directory; CwdChanged fires first (Claude Code 2.1.328, fixture
        // `tests/fixtures/cc-2.1.328/env_cwd`).
        let new_cwd = self.ctx.current_dir().to_string_lossy().into_owned();
        let moved = (new_cwd != base.cwd).then(|| base.cwd.clone());
        // A call that switches the mode (EnterPlanMode, an approved ExitPlanMode) does so at
        // once: its own PostToolUse sees the new mode, as in Claude Code 2.1.328 (fixture
        // interactive/run10, run11), and so do the calls after it.
        let mut permission_mode = base.permission_mode.clone();
        if let Some(mode) = self.ctx.take_mode_request() {
            match self.gate.set_mode(&mode) {
                Ok(()) => {
                    self.ctx.set_mode(&mode);
                    report.mode_changed = Some(mode.clone());
                    if permission_mode.is_some() {
                        permission_mode = Some(mode);
                    }
                }
                Err(why) => tracing::warn!("{}: the mode stays: {why}", call.name),
            }
        }
        let base = &BaseInput {
            cwd: new_cwd.clone(),
            permission_mode,
            ..base.clone()
        };
        if let Some(old_cwd) = moved {
            let changed = self
                .fire::<CwdChanged>(
                    CwdChangedInput {
                        base: BaseInput {
                            permission_mode: None,
                            effort: None,
                            ..base.clone()
                        },
                        hook_event_name: HookEvent::CwdChanged,
                        old_cwd,
                        new_cwd: new_cwd.clone(),
                    },
                    None,
                )
                .await;
            absorb(&mut report, &changed.common);
        }
        match outcome {
            ToolOutcome::Success { response, content } => {
                let post = self
                    .fire::<PostToolUse>(
                        PostToolUseInput {
                            base: base.clone(),
                            hook_event_name: HookEvent::PostToolUse,
                            tool_name: call.name.clone(),
                            tool_input: tool.post_tool_input(&input, &call.input),
                            tool_response: response.clone(),
                            tool_use_id: call.id.clone(),
                            duration_ms,
                            mcp_server: self.mcp_server_of(&call.name),
                        },
                        Some(&call.id),
                    )
                    .await;
                absorb(&mut report, &post.common);
                report.content = post
                    .updated_tool_output
                    .as_ref()
                    .and_then(|v| tool.render(v))
                    .unwrap_or(content);
                report.status = CallStatus::Succeeded;
                report.is_error = false;
                report.response = Some(response);
            }
            ToolOutcome::Failure {
                error,
                is_interrupt,
            } => {
                let post = self
                    .fire::<PostToolUseFailure>(
                        PostToolUseFailureInput {
                            base: base.clone(),
                            hook_event_name: HookEvent::PostToolUseFailure,
                            tool_name: call.name.clone(),
                            tool_input: input.clone(),
                            tool_use_id: call.id.clone(),
                            error: error.clone(),
                            is_interrupt,
                            duration_ms,
                            mcp_server: self.mcp_server_of(&call.name),
                        },
                        Some(&call.id),
                    )
                    .await;
                absorb(&mut report, &post.common);
                report.content = error;
                report.status = CallStatus::Failed;
                report.is_error = true;
            }
        }
        report.input = input;
        report
    }

    /// Fires PostToolBatch once for the resolved calls of one assistant message.
    pub async fn batch(&self, reports: &[CallReport], base: &BaseInput) -> BatchReport {
        let tool_calls = reports
            .iter()
            .map(|r| BatchToolCall {
                tool_name: r.tool_name.clone(),
                tool_input: batch_input(&r.tool_name, &r.input),
                tool_use_id: r.tool_use_id.clone(),
                tool_response: Some(Value::String(r.content.clone())),
            })
            .collect();
        let outcome = self
            .fire::<PostToolBatch>(
                PostToolBatchInput {
                    base: base.clone(),
                    hook_event_name: HookEvent::PostToolBatch,
                    tool_calls,
                },
                None,
            )
            .await;
        BatchReport {
            stop_loop: outcome.common.stop_loop || outcome.block.is_some(),
            stop_reason: outcome.common.stop_reason.clone().or(outcome.block),
            context: outcome.common.context,
        }
    }
}

/// A call's `tool_input` as PostToolBatch shows it. Claude Code 2.1.328 lists Edit's with its
/// `replace_all` default first (`{"replace_all": false, "file_path": …}`), also for a call its
/// input validation refused (fixture `tests/fixtures/cc-2.1.328/texts_files`); every other
/// tool's input is the one the call ran with.
fn batch_input(tool: &str, input: &Value) -> Value {
    match input.as_object() {
        Some(map) if tool == "Edit" => {
            let mut out = serde_json::Map::new();
            out.insert(
                "replace_all".into(),
                map.get("replace_all")
                    .cloned()
                    .unwrap_or(Value::Bool(false)),
            );
            for (k, v) in map {
                if k != "replace_all" {
                    out.insert(k.clone(), v.clone());
                }
            }
            Value::Object(out)
        }
        _ => input.clone(),
    }
}

/// Claude Code 2.1.328's text for a Write/Edit nobody could approve (headless):
/// `Claude requested permissions to write to <path>, but you haven't granted it yet.` (fixture
/// `tests/fixtures/cc-2.1.328/deny_paths`). `None` for other tools and for a hook's `ask`.
fn headless_file_denial(tool: &str, input: &Value, cause: &AskCause) -> Option<String> {
    if matches!(cause, AskCause::Hook) || !matches!(tool, "Write" | "Edit") {
        return None;
    }
    let path = input.get("file_path")?.as_str()?;
    Some(format!(
        "Claude requested permissions to write to {path}, but you haven't granted it yet."
    ))
}

/// The tools whose path a deny rule refuses during input validation.
const DENY_CHECKED_AT_VALIDATION: &[&str] = &["Read", "Write", "Edit"];

/// Claude Code 2.1.328's validation text for a path a deny rule covers.
pub const DENIED_PATH_TEXT: &str =
    "File is in a directory that is denied by your permission settings.";

/// A refusal during input validation (unknown tool, invalid input, a check the tool makes
/// before any hook runs) as Claude Code 2.1.328 tells the model:
/// `<tool_use_error>…</tool_use_error>`.
pub fn tool_use_error(text: &str) -> String {
    format!("<tool_use_error>{text}</tool_use_error>")
}

/// Notification carries no `permission_mode` or `effort` (Claude Code fires it outside the
/// tool loop's context).
fn notification_base(base: &BaseInput) -> BaseInput {
    BaseInput {
        permission_mode: None,
        effort: None,
        ..base.clone()
    }
}

enum Approval {
    Approved,
    Refused { text: String, interrupt: bool },
}

/// Asks `prompter` on a thread of its own and waits for the answer without blocking.
///
/// Why a thread: the prompter blocks reading the terminal. Run inline (`block_in_place` on the
/// thread that drives the session), it would also hold up the future that watches for SIGINT
/// and SIGTERM, so a signal would wait for the user's answer. Here the session can drop this
/// future on a signal; the thread, still blocked on the terminal, ends with the process (a
/// plain thread, so the runtime's shutdown does not wait for it either). No thread → Deny.
async fn ask_on_a_thread(
    prompter: Arc<dyn Prompter>,
    tool: &str,
    input: &Value,
    reason: &str,
) -> prompt::PromptAnswer {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (tool, input, reason) = (tool.to_string(), input.clone(), reason.to_string());
    let spawned = std::thread::Builder::new()
        .name("rein-permission-prompt".to_string())
        .spawn(move || {
            let _ = tx.send(prompter.ask(&tool, &input, &reason));
        });
    match spawned {
        Ok(_) => rx.await.unwrap_or(prompt::PromptAnswer::Deny),
        Err(err) => {
            tracing::warn!(%err, "cannot start the permission prompt; denying");
            prompt::PromptAnswer::Deny
        }
    }
}

/// Takes an outcome's model-facing context and loop control into the report.
fn absorb(report: &mut CallReport, common: &Common) {
    report.context.extend(common.context.iter().cloned());
    if common.stop_loop {
        report.stop_loop = true;
        if report.stop_reason.is_none() {
            report.stop_reason = common.stop_reason.clone();
        }
    }
}

/// PreToolUse's merged permission answer as the permission step reads it.
fn hook_answer(permission: &PermissionDecision) -> HookAnswer {
    match permission {
        PermissionDecision::Allow { .. } => HookAnswer::Allow,
        PermissionDecision::Ask { reason } => HookAnswer::Ask {
            reason: reason.clone(),
        },
        PermissionDecision::Defer { reason } => HookAnswer::Defer {
            reason: reason.clone(),
        },
        PermissionDecision::Deny { text, .. } => HookAnswer::Deny {
            message: text.clone(),
        },
    }
}
