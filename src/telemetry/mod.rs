//! OpenTelemetry traces of a session: a span for the session, each turn, each tool call
//! (through the gate) and each hook run, exported over OTLP with the standard environment.
//!
//! Switched on as Claude Code's telemetry is: `CLAUDE_CODE_ENABLE_TELEMETRY=1`, with
//! `OTEL_TRACES_EXPORTER` unset or `otlp` (`none` switches traces off). The exporter reads
//! `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT` (default `http://localhost:4318`), `…_HEADERS`,
//! `…_TIMEOUT` and `…_PROTOCOL` (`http/protobuf`, the default, or `http/json`; `grpc` is not
//! built in and is reported); `OTEL_SERVICE_NAME` (default `rein`) and
//! `OTEL_RESOURCE_ATTRIBUTES` describe the resource. Prompts are exported only with
//! `OTEL_LOG_USER_PROMPTS=1`, tool inputs only with `OTEL_LOG_TOOL_DETAILS=1` (Claude Code's
//! names); otherwise their lengths.
//!
//! The spans are built by an [`Observer`] of the session's [`Progress`], so tracing touches no
//! part of the loop; export is off the session's path ([`export`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::progress::{
    CallStatus, HookReport, HookRunEnd, HookRunOutcome, HookRunReport, Observer, Progress,
};

mod export;

/// Why telemetry is off although it was asked for, or how it is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TelemetrySetup {
    /// Not asked for.
    Off,
    /// Asked for but cannot run; the message says why (shown once).
    Refused(String),
    /// On, over this protocol.
    On { protocol: &'static str },
}

/// Reads the environment: whether traces are wanted and over which protocol.
pub fn setup_from_env() -> TelemetrySetup {
    let var = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_string());
    let enabled = var("CLAUDE_CODE_ENABLE_TELEMETRY")
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    if !enabled {
        return TelemetrySetup::Off;
    }
    if let Some(exporters) = var("OTEL_TRACES_EXPORTER").filter(|v| !v.is_empty()) {
        let names: Vec<&str> = exporters.split(',').map(str::trim).collect();
        if names.contains(&"none") {
            return TelemetrySetup::Off;
        }
        if !names.contains(&"otlp") {
            return TelemetrySetup::Refused(format!(
                "OTEL_TRACES_EXPORTER={exporters}: rein exports traces over otlp only; no traces are exported"
            ));
        }
    }
    let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "http/protobuf".to_string());
    match protocol.as_str() {
        "http/protobuf" => TelemetrySetup::On {
            protocol: "http/protobuf",
        },
        "http/json" => TelemetrySetup::On {
            protocol: "http/json",
        },
        other => TelemetrySetup::Refused(format!(
            "OTLP protocol {other:?} is not built into rein (use http/protobuf or http/json); no traces are exported"
        )),
    }
}

/// The live trace of one session: an [`Observer`] to add to the session's, and
/// [`Telemetry::finish`] at its end.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    exporter: export::Exporter,
    state: Mutex<State>,
    log_prompts: bool,
    log_tool_details: bool,
}

#[derive(Default)]
struct State {
    session: Option<Context>,
    turn: Option<Context>,
    /// The open turn was started by its UserPromptSubmit hooks and awaits its prompt.
    turn_awaits_prompt: bool,
    tools: HashMap<String, Context>,
    session_id: Option<String>,
}

impl Telemetry {
    /// Starts tracing if the environment asks for it. `Err` is the one line to show when it
    /// was asked for and cannot run.
    pub fn from_env() -> Result<Option<Telemetry>, String> {
        let protocol = match setup_from_env() {
            TelemetrySetup::Off => return Ok(None),
            TelemetrySetup::Refused(why) => return Err(why),
            TelemetrySetup::On { protocol } => protocol,
        };
        let protocol = match protocol {
            "http/json" => opentelemetry_otlp::Protocol::HttpJson,
            _ => opentelemetry_otlp::Protocol::HttpBinary,
        };
        let service = std::env::var("OTEL_SERVICE_NAME")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "rein".to_string());
        let resource = Resource::builder()
            .with_service_name(service)
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let exporter = export::Exporter::start(protocol, resource.clone())?;
        let provider = SdkTracerProvider::builder()
            .with_span_processor(SharedProcessor(Arc::clone(&exporter.processor)))
            .with_resource(resource)
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "rein");
        let flag = |name: &str| {
            std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "TRUE" | "True"))
        };
        Ok(Some(Telemetry {
            provider,
            tracer,
            exporter,
            state: Mutex::new(State::default()),
            log_prompts: flag("OTEL_LOG_USER_PROMPTS"),
            log_tool_details: flag("OTEL_LOG_TOOL_DETAILS"),
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session span, started on first use.
    fn session_cx(&self, state: &mut State) -> Context {
        if let Some(cx) = &state.session {
            return cx.clone();
        }
        let span = self
            .tracer
            .span_builder("rein.session")
            .with_kind(SpanKind::Internal)
            .start_with_context(&self.tracer, &Context::new());
        let cx = Context::new().with_span(span);
        state.session = Some(cx.clone());
        cx
    }

    /// Ends every open span and sends what is queued (at most a short, fixed wait). Returns
    /// the line to show when spans could not be delivered.
    pub fn finish(&self, session_end: Option<&str>) -> Option<String> {
        {
            let mut state = self.state();
            for (_, cx) in state.tools.drain() {
                cx.span().end();
            }
            if let Some(turn) = state.turn.take() {
                turn.span().end();
            }
            let session = self.session_cx(&mut state);
            if let Some(reason) = session_end {
                session
                    .span()
                    .set_attribute(KeyValue::new("rein.session.end_reason", reason.to_string()));
            }
            session.span().end();
            state.session = None;
        }
        self.exporter.finish();
        let _ = self
            .provider
            .shutdown_with_timeout(Duration::from_millis(10));
        let d = &self.exporter.delivery;
        let dropped = d.dropped.load(Ordering::Relaxed);
        if dropped == 0 {
            return None;
        }
        let ended = d.ended.load(Ordering::Relaxed);
        let why = d
            .first_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        Some(format!(
            "telemetry: {dropped} of {ended} spans were not delivered ({why})"
        ))
    }

    /// Ends the open turn and starts the next (its UserPromptSubmit hooks run before its prompt
    /// is known).
    fn start_turn(&self, state: &mut State, attrs: Vec<KeyValue>) -> Context {
        if let Some(turn) = state.turn.take() {
            turn.span().end();
        }
        let session = self.session_cx(state);
        let mut attrs = attrs;
        if let Some(id) = &state.session_id {
            attrs.push(KeyValue::new("session.id", id.clone()));
        }
        let span = self
            .tracer
            .span_builder("rein.turn")
            .with_attributes(attrs)
            .start_with_context(&self.tracer, &session);
        let cx = session.with_span(span);
        state.turn = Some(cx.clone());
        cx
    }

    fn hook_spans(&self, report: &HookReport) {
        let mut state = self.state();
        if report.event == "UserPromptSubmit" {
            self.start_turn(&mut state, Vec::new());
            state.turn_awaits_prompt = true;
        }
        let parent = report
            .tool_use_id
            .as_ref()
            .and_then(|id| state.tools.get(id).cloned())
            .or_else(|| state.turn.clone())
            .unwrap_or_else(|| self.session_cx(&mut state));
        drop(state);
        let now = SystemTime::now();
        for run in &report.runs {
            let start = now.checked_sub(run.duration).unwrap_or(now);
            let mut span = self
                .tracer
                .span_builder(format!("rein.hook {}", report.event))
                .with_start_time(start)
                .with_attributes(hook_attributes(report, run))
                .start_with_context(&self.tracer, &parent);
            match &run.outcome {
                HookRunOutcome::NonBlocking(text) => {
                    span.set_status(Status::error(text.clone()));
                }
                HookRunOutcome::Cancelled => {
                    span.set_status(Status::error("cancelled or timed out"));
                }
                HookRunOutcome::Success | HookRunOutcome::Blocking(_) => {}
            }
            span.end_with_timestamp(now);
        }
    }
}

/// The hook run's attributes.
fn hook_attributes(report: &HookReport, run: &HookRunReport) -> Vec<KeyValue> {
    let mut attrs = vec![
        KeyValue::new("rein.hook.event", report.event),
        KeyValue::new("rein.hook.name", report.hook_name.clone()),
        KeyValue::new("rein.hook.command", run.command.clone()),
        KeyValue::new("rein.hook.source", run.origin.clone()),
        KeyValue::new(
            "rein.hook.duration_ms",
            i64::try_from(run.duration.as_millis()).unwrap_or(i64::MAX),
        ),
        KeyValue::new("rein.hook.outcome", outcome_word(&run.outcome)),
        KeyValue::new("rein.hook.warm", run.warm),
        KeyValue::new("rein.hook.shadow", run.shadow),
    ];
    if let Some(m) = &run.matcher {
        attrs.push(KeyValue::new("rein.hook.matcher", m.clone()));
    }
    if let HookRunEnd::Exited(code) = run.end {
        attrs.push(KeyValue::new("rein.hook.exit_code", i64::from(code)));
    }
    if let Some(decision) = run.decision {
        attrs.push(KeyValue::new("rein.hook.decision", decision));
    }
    if let Some(text) = &run.withheld {
        attrs.push(KeyValue::new("rein.hook.would_have", text.clone()));
    }
    if let Some(id) = &report.tool_use_id {
        attrs.push(KeyValue::new("rein.tool.use_id", id.clone()));
    }
    attrs
}

fn outcome_word(outcome: &HookRunOutcome) -> &'static str {
    match outcome {
        HookRunOutcome::Success => "success",
        HookRunOutcome::Blocking(_) => "blocking",
        HookRunOutcome::NonBlocking(_) => "non_blocking_error",
        HookRunOutcome::Cancelled => "cancelled",
    }
}

fn status_word(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Succeeded => "succeeded",
        CallStatus::Failed => "failed",
        CallStatus::Refused => "refused",
        CallStatus::Deferred => "deferred",
        CallStatus::Invalid => "invalid",
        CallStatus::Interrupted => "interrupted",
    }
}

impl Observer for Telemetry {
    fn observe(&self, progress: Progress<'_>) {
        match progress {
            Progress::SessionStarted { session_id, model } => {
                let mut state = self.state();
                let cx = self.session_cx(&mut state);
                cx.span()
                    .set_attribute(KeyValue::new("session.id", session_id.to_string()));
                cx.span()
                    .set_attribute(KeyValue::new("rein.model", model.to_string()));
                state.session_id = Some(session_id.to_string());
            }
            Progress::Prompt { prompt_id, text } => {
                let mut state = self.state();
                let mut attrs = vec![
                    KeyValue::new("rein.prompt.id", prompt_id.to_string()),
                    KeyValue::new("rein.prompt.length", text.chars().count() as i64),
                ];
                if self.log_prompts {
                    attrs.push(KeyValue::new("rein.prompt", text.to_string()));
                }
                match (&state.turn, state.turn_awaits_prompt) {
                    (Some(turn), true) => {
                        for kv in attrs {
                            turn.span().set_attribute(kv);
                        }
                    }
                    _ => {
                        self.start_turn(&mut state, attrs);
                    }
                }
                state.turn_awaits_prompt = false;
            }
            Progress::ToolStart {
                tool_use_id,
                name,
                input,
            } => {
                let mut state = self.state();
                let parent = match &state.turn {
                    Some(turn) => turn.clone(),
                    None => self.session_cx(&mut state),
                };
                let text = input.to_string();
                let mut attrs = vec![
                    KeyValue::new("rein.tool.name", name.to_string()),
                    KeyValue::new("rein.tool.use_id", tool_use_id.to_string()),
                    KeyValue::new("rein.tool.input_length", text.len() as i64),
                ];
                if self.log_tool_details {
                    attrs.push(KeyValue::new("rein.tool.input", text));
                }
                let span = self
                    .tracer
                    .span_builder(format!("rein.tool {name}"))
                    .with_attributes(attrs)
                    .start_with_context(&self.tracer, &parent);
                state
                    .tools
                    .insert(tool_use_id.to_string(), parent.with_span(span));
            }
            Progress::ToolResult {
                tool_use_id,
                is_error,
                status,
                content,
                ..
            } => {
                let Some(cx) = self.state().tools.remove(tool_use_id) else {
                    return;
                };
                let span = cx.span();
                span.set_attribute(KeyValue::new(
                    "rein.permission.outcome",
                    match status {
                        CallStatus::Refused => "denied",
                        CallStatus::Deferred => "deferred",
                        CallStatus::Succeeded | CallStatus::Failed | CallStatus::Interrupted => {
                            "allowed"
                        }
                        CallStatus::Invalid => "not_asked",
                    },
                ));
                span.set_attribute(KeyValue::new("rein.tool.status", status_word(status)));
                span.set_attribute(KeyValue::new("rein.tool.is_error", is_error));
                if matches!(
                    status,
                    CallStatus::Refused | CallStatus::Failed | CallStatus::Invalid
                ) {
                    let first: String = content
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(200)
                        .collect();
                    span.set_status(Status::error(first));
                }
                span.end();
            }
            Progress::Hook(report) => self.hook_spans(report),
            Progress::TextDelta { .. }
            | Progress::RequestStarted
            | Progress::StreamEvent { .. }
            | Progress::Assistant { .. }
            | Progress::Feedback { .. }
            | Progress::Notice { .. } => {}
        }
    }
}

impl Observer for Arc<Telemetry> {
    fn observe(&self, progress: Progress<'_>) {
        self.as_ref().observe(progress);
    }
}

/// The queue processor, shared between the SDK and the exporter's owner.
#[derive(Debug)]
struct SharedProcessor(Arc<export::QueueProcessor>);

impl opentelemetry_sdk::trace::SpanProcessor for SharedProcessor {
    fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &Context) {
        self.0.on_start(span, cx);
    }

    fn on_end(&self, span: opentelemetry_sdk::trace::SpanData) {
        self.0.on_end(span);
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }
}
