//! The runner of in-process hooks: the handler runs in a task of its own under the event's
//! timeout; its reply goes through the same judgement as a command's stdout.

use std::any::Any;
use std::time::{Duration, Instant};

use crate::hooks::answer::{bare, interpret};
use crate::hooks::command::RawRun;
use crate::hooks::config::{HandlerOrigin, OnFailure};
use crate::hooks::events::Answer;
use crate::hooks::registry::InProcessHook;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;

pub(crate) async fn run_in_process(
    hook: &InProcessHook,
    origin: HandlerOrigin,
    text: String,
    event: HookEvent,
    input: &(dyn Any + Send + Sync),
    stdin: &[u8],
    timeout: Duration,
) -> Answer {
    let started = Instant::now();
    let run = |status: RunStatus, outcome: OutcomeKind, duration: Duration| {
        HandlerRun::without_output(origin.clone(), text.clone(), status, outcome, duration)
    };
    let crashed = |why: String, duration: Duration| {
        bare(run(
            RunStatus::Crashed(why.clone()),
            OutcomeKind::NonBlocking(why),
            duration,
        ))
    };
    let Some(call) = (hook.handler)(input, stdin) else {
        // Why this cannot be the caller's fault: the registry files a handler under the event
        // its input type belongs to, and the dispatcher only hands it that event's inputs.
        return crashed(
            format!("in-process hook for {} got a {event} input", hook.event),
            Duration::ZERO,
        );
    };
    // Why a task of its own: a panic in the handler surfaces as a JoinError instead of
    // unwinding into the agent loop, and a timeout can abort it.
    let task = tokio::spawn(call);
    let abort = task.abort_handle();
    let result = tokio::time::timeout(timeout, task).await;
    let duration = started.elapsed();
    match result {
        Err(_) => {
            abort.abort();
            bare(run(RunStatus::TimedOut, OutcomeKind::Cancelled, duration))
        }
        Ok(Err(join_err)) => {
            let why = match join_err.try_into_panic() {
                Ok(payload) => panic_text(payload.as_ref()),
                Err(err) => err.to_string(),
            };
            crashed(format!("in-process hook panicked: {why}"), duration)
        }
        Ok(Ok(Err(err))) => crashed(err, duration),
        Ok(Ok(Ok(value))) => {
            // The handler's JSON goes through the very same recognition and validation as a
            // command's stdout, as if the hook had printed it and exited 0.
            let stdout = serde_json::to_vec(&value).unwrap_or_default();
            let raw = RawRun::answered(stdout, duration);
            let mut answer = interpret(event, origin.clone(), &text, &raw, OnFailure::Continue);
            if let OutcomeKind::NonBlocking(why) = &answer.run.outcome {
                answer.run.status = RunStatus::Crashed(why.clone());
            }
            answer
        }
    }
}

pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
