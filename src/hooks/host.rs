//! The seam between the hook engine and its callers (the tool pipeline, the session): a
//! [`HookHost`] answers firings of any event, and [`fire_observed`] keeps the caller typed.
//!
//! [`crate::hooks::dispatch::Dispatcher`] is the real host. The seam exists so the loop's
//! rules can be tested against scripted outcomes: a test host answers [`Firing`]s with boxed
//! outcomes of the right event.

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use crate::future::BoxFuture;
use crate::hooks::dispatch::Dispatcher;
use crate::hooks::events::{Common, Event, Firing, Typed};
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;
use crate::progress::{HookReport, HookRunEnd, HookRunOutcome, HookRunReport, Observer, Progress};

/// The hook engine as the pipeline and the session use it.
pub trait HookHost: Send + Sync {
    /// Fires one event; the box holds that event's `Outcome`.
    fn fire_erased<'a>(&'a self, firing: &'a dyn Firing) -> BoxFuture<'a, Box<dyn Any + Send>>;
    /// `CLAUDE_ENV_FILE`s written so far (see [`Dispatcher::env_files`]).
    fn env_files(&self) -> Vec<PathBuf>;
    /// Context from finished background hooks (see [`Dispatcher::take_async_context`]).
    fn take_async_context(&self) -> Vec<String>;
    /// Ends background hooks (see [`Dispatcher::shutdown`]).
    fn shutdown(&self) -> BoxFuture<'_, ()>;
    /// Later hooks run for session `session_id` (see [`Dispatcher::switch_session`]); a host
    /// that keeps no per-session environment ignores it.
    fn switch_session(&self, session_id: &str, output_dir: Option<PathBuf>) {
        let _ = (session_id, output_dir);
    }
}

impl HookHost for Dispatcher {
    fn fire_erased<'a>(&'a self, firing: &'a dyn Firing) -> BoxFuture<'a, Box<dyn Any + Send>> {
        firing.fire_on(self)
    }

    fn env_files(&self) -> Vec<PathBuf> {
        Dispatcher::env_files(self)
    }

    fn take_async_context(&self) -> Vec<String> {
        Dispatcher::take_async_context(self)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(Dispatcher::shutdown(self))
    }

    fn switch_session(&self, session_id: &str, output_dir: Option<PathBuf>) {
        Dispatcher::switch_session(self, session_id, output_dir)
    }
}

/// Fires `E` on `host` and reports the firing to `observer`: the handlers that ran (only when some did)
/// and every user-facing notice. The hook's name is built only when there is something to
/// report, so a call with no hooks configured pays no allocation for it.
pub async fn fire_observed<E: Event>(
    host: &dyn HookHost,
    input: E::Input,
    observer: &dyn Observer,
    tool_use_id: Option<&str>,
) -> E::Outcome {
    let firing = Typed::<E>(input);
    let mut outcome = downcast::<E>(host.fire_erased(&firing).await);
    let common = E::common(&mut outcome);
    if !common.runs.is_empty() {
        let report = Arc::new(report(E::EVENT, common, &firing.hook_name(), tool_use_id));
        observer.observe(Progress::Hook(&report));
    }
    for text in &common.user_messages {
        observer.observe(Progress::Notice { text });
    }
    outcome
}

/// The host's answer as `E`'s outcome.
fn downcast<E: Event>(outcome: Box<dyn Any + Send>) -> E::Outcome {
    match outcome.downcast::<E::Outcome>() {
        Ok(outcome) => *outcome,
        Err(_) => {
            tracing::error!(event = %E::EVENT, "hook host answered with another event's outcome");
            E::Outcome::default()
        }
    }
}

/// What observers are told of a firing whose handlers ran.
fn report(
    event: HookEvent,
    common: &Common,
    hook_name: &str,
    tool_use_id: Option<&str>,
) -> HookReport {
    HookReport {
        event: event.as_str(),
        tool_event: event.is_tool_event(),
        hook_name: hook_name.to_string(),
        tool_use_id: tool_use_id.map(str::to_string),
        context: common.context.clone(),
        user_messages: common.user_messages.clone(),
        stop_loop: common.stop_loop,
        stop_reason: common.stop_reason.clone(),
        runs: common.runs.iter().map(run_report).collect(),
    }
}

fn run_report(run: &HandlerRun) -> HookRunReport {
    HookRunReport {
        command: run.command.clone(),
        origin: run.origin.location.to_string(),
        outcome: match &run.outcome {
            OutcomeKind::Success => HookRunOutcome::Success,
            OutcomeKind::Blocking(reason) => HookRunOutcome::Blocking(reason.clone()),
            OutcomeKind::NonBlocking(text) => HookRunOutcome::NonBlocking(text.clone()),
            OutcomeKind::Cancelled => HookRunOutcome::Cancelled,
        },
        end: match &run.status {
            RunStatus::Exited(code) => HookRunEnd::Exited(*code),
            RunStatus::Signaled(_) => HookRunEnd::Signaled,
            RunStatus::TimedOut
            | RunStatus::SpawnFailed(_)
            | RunStatus::Backgrounded
            | RunStatus::Crashed(_)
            | RunStatus::RequestFailed(_) => HookRunEnd::Other,
        },
        duration: run.duration,
        stdout: run.stdout.clone(),
        stderr: run.stderr.clone(),
        stdout_bytes: run.stdout_bytes,
        stderr_bytes: run.stderr_bytes,
        json: run.json.clone(),
        matcher: run.matcher.clone(),
        warm: run.warm,
        decision: run.decision,
        shadow: run.shadow,
        withheld: run.withheld.clone(),
    }
}
