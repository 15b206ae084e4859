//! `type: "prompt"` and `type: "agent"` hooks (spec §5.7): a model judges the event.
//!
//! The hook's `prompt` with `$ARGUMENTS` replaced by the event's stdin JSON is put to the
//! session's model (a prompt hook: one request, no tools; an agent hook: a subagent with
//! read-only tools), which must answer `{"ok": true}` or `{"ok": false, "reason": "…"}`. The
//! verdict maps as Claude Code 2.1.328 maps it (measured: `tests/fixtures/subagents/`):
//!
//! - `ok: true` → success;
//! - `ok: false` → a blocking error `[<prompt>]: <reason>` (so PreToolUse denies the call with
//!   `PreToolUse:Bash hook error: [<prompt>]: <reason>`, Stop/SubagentStop continue with
//!   `Stop hook feedback:\n[<prompt>]: <reason>`), and on every event but Stop/SubagentStop it
//!   also ends the turn (`continue: false`) unless the hook sets `continueOnBlock: true`; on
//!   Stop/SubagentStop `impossible: true` lets the turn end;
//! - a timeout, a provider error or an answer that is not such JSON → a non-blocking error
//!   (the first 200 characters of the answer are shown), blocking under `onFailure: "block"`.
//!
//! The model calls are behind [`ModelHooks`], which the agent module implements: the hook
//! engine knows no models.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::future::BoxFuture;
use crate::hooks::answer::{bare, interpret};
use crate::hooks::command::RawRun;
use crate::hooks::config::{ConfiguredHandler, HandlerKind, OnFailure, PromptHandler};
use crate::hooks::events::Answer;
use crate::hooks::output::HookJsonOutput;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

tokio::task_local! {
    /// Set while an agent hook's own subagent runs: its tool calls fire the configured command
    /// and in-process hooks like every call, but no prompt or agent hook (which would judge the
    /// judge's own reads, without end).
    pub static MODEL_HOOKS_OFF: ();
}

/// Whether prompt and agent hooks are switched off for the current task.
pub fn model_hooks_off() -> bool {
    MODEL_HOOKS_OFF.try_with(|_| ()).is_ok()
}

/// Default timeout of a prompt hook.
pub const PROMPT_HOOK_TIMEOUT: Duration = Duration::from_secs(30);
/// Default timeout of an agent hook.
pub const AGENT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The timeout `rein hooks list` shows for a handler: a prompt or agent hook without its own
/// has 30 s or 60 s, every other type the event's default.
pub fn listed_seconds(handler: &ConfiguredHandler) -> f64 {
    match (&handler.kind, handler.timeout) {
        (HandlerKind::Prompt(_), None) => PROMPT_HOOK_TIMEOUT.as_secs_f64(),
        (HandlerKind::Agent(_), None) => AGENT_HOOK_TIMEOUT.as_secs_f64(),
        _ => crate::hooks::timeout::listed_seconds(handler.event, handler.timeout),
    }
}

/// [`crate::hooks::timeout::describe`] for a handler, knowing the prompt/agent defaults.
pub fn describe_timeout(handler: &ConfiguredHandler) -> String {
    match (&handler.kind, handler.timeout) {
        (HandlerKind::Prompt(_), None) => "30 s (prompt hook default)".to_string(),
        (HandlerKind::Agent(_), None) => "60 s (agent hook default)".to_string(),
        _ => crate::hooks::timeout::describe(handler.event, handler.timeout),
    }
}

/// What a model-evaluated hook asks.
#[derive(Debug, Clone)]
pub struct HookQuestion {
    /// The event.
    pub event: HookEvent,
    /// The hook's prompt with `$ARGUMENTS` replaced.
    pub question: String,
    /// The hook's `model`, if any.
    pub model: Option<String>,
    /// The session's transcript (an agent hook may read it).
    pub transcript_path: String,
    /// Where the session is.
    pub cwd: String,
}

/// The models behind prompt and agent hooks. `Ok` is the model's final text, `Err` a
/// provider error.
pub trait ModelHooks: Send + Sync + std::fmt::Debug {
    /// One request without tools.
    fn ask_prompt(&self, question: HookQuestion) -> BoxFuture<'_, Result<String, String>>;
    /// A read-only subagent's final answer.
    fn ask_agent(&self, question: HookQuestion) -> BoxFuture<'_, Result<String, String>>;
}

/// A parsed verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub ok: bool,
    pub reason: Option<String>,
    pub impossible: bool,
}

/// Reads `{"ok": bool, "reason"?: string, "impossible"?: bool}` from a model's answer (a
/// ```` ```json ```` fence around it is accepted). `Err` says what is wrong.
pub fn parse_verdict(answer: &str) -> Result<Verdict, String> {
    let mut text = answer.trim();
    if let Some(inner) = text.strip_prefix("```") {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        text = inner.strip_suffix("```").unwrap_or(inner).trim();
    }
    let value: Value = serde_json::from_str(text).map_err(|_| "not JSON".to_string())?;
    let Value::Object(map) = value else {
        return Err("not a JSON object".to_string());
    };
    let Some(ok) = map.get("ok").and_then(Value::as_bool) else {
        return Err("no boolean \"ok\"".to_string());
    };
    Ok(Verdict {
        ok,
        reason: map
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        impossible: map.get("impossible").and_then(Value::as_bool) == Some(true),
    })
}

/// The first 200 characters of a text.
fn first_200(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Runs one prompt or agent hook and judges its verdict into an [`Answer`].
pub(crate) async fn run(
    models: &dyn ModelHooks,
    handler: &ConfiguredHandler,
    prompt: &PromptHandler,
    agent: bool,
    event: HookEvent,
    stdin: &[u8],
    (transcript_path, cwd): (String, String),
) -> Answer {
    let started = Instant::now();
    let arguments = String::from_utf8_lossy(stdin).trim_end().to_string();
    let question = HookQuestion {
        event,
        question: prompt.prompt.replace("$ARGUMENTS", &arguments),
        model: prompt.model.clone(),
        transcript_path,
        cwd,
    };
    let default = if agent {
        AGENT_HOOK_TIMEOUT
    } else {
        PROMPT_HOOK_TIMEOUT
    };
    let timeout = handler
        .timeout
        .filter(|t| *t > 0.0 && t.is_finite())
        .map(Duration::from_secs_f64)
        .unwrap_or(default);
    let ask = if agent {
        models.ask_agent(question)
    } else {
        models.ask_prompt(question)
    };
    let text = prompt.prompt.as_str();
    let block_on_failure = handler.on_failure == OnFailure::Block && event.spec().on_failure;
    let failed = |status: RunStatus, why: String| {
        let outcome = if block_on_failure {
            OutcomeKind::Blocking(format!("[{text}]: {why}"))
        } else {
            OutcomeKind::NonBlocking(why)
        };
        bare(HandlerRun::without_output(
            handler.origin.clone(),
            text.to_string(),
            status,
            outcome,
            started.elapsed(),
        ))
    };
    let answer = match tokio::time::timeout(timeout, ask).await {
        Err(_) => {
            if block_on_failure {
                return failed(
                    RunStatus::TimedOut,
                    format!("timed out after {} ms", timeout.as_millis()),
                );
            }
            return bare(HandlerRun::without_output(
                handler.origin.clone(),
                text.to_string(),
                RunStatus::TimedOut,
                OutcomeKind::Cancelled,
                started.elapsed(),
            ));
        }
        Ok(Err(error)) => {
            return failed(
                RunStatus::Crashed(error.clone()),
                format!("Hook evaluator API error: {error}"),
            );
        }
        Ok(Ok(answer)) => answer,
    };
    let verdict = match parse_verdict(&answer) {
        Ok(v) => v,
        Err(what) => {
            let why = format!(
                "the model's answer is not {{\"ok\": true|false, \"reason\": …}} JSON ({what}): {}",
                first_200(answer.trim())
            );
            return failed(RunStatus::Crashed(why.clone()), why);
        }
    };
    let stop_event = matches!(event, HookEvent::Stop | HookEvent::SubagentStop);
    // `impossible: true` on Stop/SubagentStop lets the turn end.
    let blocks = !(verdict.ok || (stop_event && verdict.impossible));
    let reason = verdict
        .reason
        .clone()
        .unwrap_or_else(|| "No reason given".to_string());
    let raw = RawRun {
        status: RunStatus::Exited(if blocks { 2 } else { 0 }),
        stdout: Vec::new(),
        stdout_bytes: 0,
        stderr: if blocks {
            reason.clone().into_bytes()
        } else {
            Vec::new()
        },
        stderr_bytes: if blocks { reason.len() as u64 } else { 0 },
        stdout_capped: false,
        stderr_capped: false,
        duration: started.elapsed(),
        stdin_error: None,
        pid: None,
        cancelled: false,
        lingering_killed: false,
        warm: false,
    };
    let mut judged = interpret(
        event,
        handler.origin.clone(),
        text,
        &raw,
        OnFailure::Continue,
    );
    judged.run.stdout = answer;
    if blocks && !stop_event && !prompt.continue_on_block {
        // Claude Code ends the turn after a "not ok" verdict (terminal_reason hook_stopped).
        judged.output = Some(HookJsonOutput {
            continue_: Some(false),
            ..HookJsonOutput::default()
        });
    }
    judged
}
