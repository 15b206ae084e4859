//! How a session shows up on the terminal: readable progress on stderr (`text`), one JSON line
//! per message or event on stdout (`stream-json`), and the final `result` object (`json`,
//! `stream-json`).

use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{Map, Value, json};

use crate::agent::session::{Denial, TurnEnd, TurnOutcome};
use crate::agent::transcript::{bounded_stream, timestamp_now};
use crate::hooks::spec::HookEvent;
use crate::id::uuid_v4;
use crate::model::{ContentBlock, ModelResponse, StopReason, Usage};
use crate::pipeline::CallStatus;
use crate::progress::{HookRunEnd, HookRunOutcome, Observer, Progress};

/// Glyphs for the text renderer; ASCII when the locale is not UTF-8.
#[derive(Debug, Clone, Copy)]
pub struct Glyphs {
    pub call: &'static str,
    pub result: &'static str,
}

impl Glyphs {
    pub fn detect() -> Glyphs {
        let utf8 = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|v| !v.is_empty())
            .map(|v| {
                let v = v.to_ascii_lowercase();
                v.contains("utf-8") || v.contains("utf8")
            })
            .unwrap_or(false);
        if utf8 {
            Glyphs {
                call: "⏺",
                result: "  ⎿ ",
            }
        } else {
            Glyphs {
                call: "*",
                result: "  -> ",
            }
        }
    }
}

/// A one-line summary of a tool input: the command, path or pattern.
pub fn input_summary(input: &Value) -> String {
    let keys = ["command", "file_path", "pattern", "path", "url", "query"];
    let text = keys
        .iter()
        .find_map(|k| input.get(k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| input.to_string());
    first_line(&text, 120)
}

/// The first line of `text`, at most `max` characters, with `…` when anything was left out.
pub(crate) fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// Human-readable progress on stderr; in interactive mode also the assistant's text on stdout,
/// streamed as it arrives.
#[derive(Debug)]
pub struct TextRenderer {
    pub glyphs: Glyphs,
    /// Print assistant text as it arrives (interactive sessions).
    pub interactive: bool,
    /// Colour (a terminal, no `NO_COLOR`).
    pub color: bool,
    /// Text of the current reply was streamed already.
    pub streamed: AtomicBool,
}

impl TextRenderer {
    pub fn new(glyphs: Glyphs, interactive: bool, color: bool) -> TextRenderer {
        TextRenderer {
            glyphs,
            interactive,
            color,
            streamed: AtomicBool::new(false),
        }
    }
}

impl Observer for TextRenderer {
    fn observe(&self, progress: Progress<'_>) {
        let g = self.glyphs;
        let mut err = std::io::stderr().lock();
        match progress {
            Progress::ToolStart { name, input, .. } => {
                // The name comes from the model: an unknown one may be any length.
                let name = first_line(name, 120);
                let line = format!("{} {name}({})", g.call, input_summary(input));
                let _ = writeln!(
                    err,
                    "{}",
                    crate::cli::terminal::paint(self.color, "36", &line)
                );
            }
            Progress::ToolResult {
                content, status, ..
            } => {
                let line = match status {
                    CallStatus::Refused => format!("blocked: {}", first_line(content, 200)),
                    CallStatus::Deferred => format!("deferred: {}", first_line(content, 200)),
                    CallStatus::Invalid | CallStatus::Failed => {
                        format!("Error: {}", first_line(content, 200))
                    }
                    CallStatus::Succeeded => first_line(content, 200),
                    CallStatus::Interrupted => "interrupted".to_string(),
                };
                let _ = writeln!(err, "{} {line}", g.result);
            }
            Progress::Notice { text } => {
                let _ = writeln!(
                    err,
                    "{}",
                    crate::cli::terminal::paint(self.color, "33", text)
                );
            }
            Progress::TextDelta { text } if self.interactive => {
                self.streamed.store(true, Ordering::Relaxed);
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            Progress::Assistant { response, .. } if self.interactive => {
                let mut out = std::io::stdout().lock();
                if self.streamed.swap(false, Ordering::Relaxed) {
                    let _ = writeln!(out);
                } else {
                    let text = crate::agent::session::response_text(response);
                    if !text.is_empty() {
                        let _ = writeln!(out, "{text}");
                    }
                }
                let _ = out.flush();
            }
            Progress::Assistant { .. }
            | Progress::TextDelta { .. }
            | Progress::RequestStarted
            | Progress::StreamEvent { .. }
            | Progress::SessionStarted { .. }
            | Progress::Prompt { .. }
            | Progress::Hook { .. }
            | Progress::Feedback { .. } => {}
        }
    }
}

/// `--output-format json`: stdout holds only the result object, so user-facing notices
/// (`systemMessage`, hook errors) go to stderr.
#[derive(Debug, Default)]
pub struct NoticesToStderr;

impl Observer for NoticesToStderr {
    fn observe(&self, progress: Progress<'_>) {
        if let Progress::Notice { text } = progress {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    }
}

/// `--output-format stream-json`: one JSON object per line on stdout.
#[derive(Debug)]
pub struct StreamJson {
    pub session_id: String,
    pub cwd: String,
    /// The permission mode `init` lines name (the Agent SDK's `set_permission_mode` changes
    /// it).
    pub permission_mode: Mutex<String>,
    pub tools: Vec<String>,
    pub mcp_servers: Vec<Value>,
    /// `slash_commands`, `skills` and `plugins` of `init` (see [`StreamJson::with_catalog`]).
    pub catalog: (Vec<String>, Vec<String>, Vec<Value>),
    /// `output_style`: [`crate::cli::output_style_setting`].
    pub output_style: String,
    /// `--include-hook-events`: a `hook_started` and a `hook_response` line per hook run
    /// (SessionStart's are written without it too).
    pub include_hook_events: bool,
    /// `--include-partial-messages`: a `status` line before each model request and a
    /// `stream_event` line per event of the reply.
    pub include_partial_messages: bool,
    /// `--input-format stream-json`: the `init` line comes before each turn (as Claude Code
    /// writes it; see [`StreamJson::emit_turn_init`]), not once at the start.
    pub init_per_prompt: bool,
    /// The model, kept for `init` lines written later.
    model: Mutex<String>,
    /// The current turn's `init` line was written (by [`StreamJson::emit_turn_init`]); a turn
    /// that starts without it (a background command's follow-up) gets its `init` at its
    /// prompt.
    turn_init: AtomicBool,
    /// The current reply's message id (`api_message_id` of its `stream_event` lines) and when
    /// its request was sent (`ttft_ms`).
    reply: Mutex<(Option<String>, Option<Instant>)>,
    broken: AtomicBool,
}

impl StreamJson {
    pub fn new(session_id: &str, cwd: &str, permission_mode: &str, tools: Vec<String>) -> Self {
        StreamJson {
            session_id: session_id.to_string(),
            cwd: cwd.to_string(),
            permission_mode: Mutex::new(permission_mode.to_string()),
            tools,
            mcp_servers: Vec::new(),
            catalog: Default::default(),
            output_style: crate::agent::output_style::DEFAULT.to_string(),
            include_hook_events: false,
            include_partial_messages: false,
            init_per_prompt: false,
            model: Mutex::new(String::new()),
            turn_init: AtomicBool::new(false),
            reply: Mutex::new((None, None)),
            broken: AtomicBool::new(false),
        }
    }

    /// The `system`/`init` line.
    fn init_line(&self, session_id: &str, model: &str) -> Value {
        json!({
            "type": "system",
            "subtype": "init",
            "cwd": self.cwd,
            "session_id": session_id,
            "tools": self.tools,
            "mcp_servers": self.mcp_servers,
            "model": model,
            "permissionMode": self.permission_mode.lock().map(|m| m.clone()).unwrap_or_default(),
            "slash_commands": self.catalog.0,
            "claude_code_version": crate::cli::sdk::SPEAKS_CLAUDE_CODE,
            "output_style": self.output_style,
            "skills": self.catalog.1,
            "plugins": self.catalog.2,
            "rein_version": env!("CARGO_PKG_VERSION"),
            "uuid": uuid_v4(),
        })
    }

    /// A `stream_event` line (Claude Code 2.1.328's shape, fixture
    /// `tests/fixtures/cc-2.1.328/stream_io/partial_text_tool`): the event as the API sent it,
    /// the session, `parent_tool_use_id`, a `uuid`; `message_start` adds `ttft_ms` (from the
    /// request to this first event); every line names the reply's `api_message_id`.
    fn stream_event_line(&self, event: &Value) -> Value {
        let mut reply = match self.reply.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut line = Map::new();
        line.insert("type".into(), json!("stream_event"));
        line.insert("event".into(), event.clone());
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("parent_tool_use_id".into(), Value::Null);
        line.insert("uuid".into(), json!(uuid_v4()));
        if event.get("type").and_then(Value::as_str) == Some("message_start") {
            reply.0 = event
                .pointer("/message/id")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(sent) = reply.1.take() {
                line.insert("ttft_ms".into(), json!(sent.elapsed().as_millis() as u64));
            }
        }
        if let Some(id) = &reply.0 {
            line.insert("api_message_id".into(), json!(id));
        }
        Value::Object(line)
    }

    /// The `init` line of a turn, when `init_per_prompt` (Claude Code writes one before each
    /// message read from stdin, ahead of its echo).
    pub fn emit_turn_init(&self) {
        self.turn_init.store(true, Ordering::Relaxed);
        let model = self.model.lock().map(|m| m.clone()).unwrap_or_default();
        self.emit(&self.init_line(&self.session_id, &model));
    }

    /// The current turn ended: the next one needs its own `init`.
    pub fn turn_done(&self) {
        self.turn_init.store(false, Ordering::Relaxed);
    }

    /// The `task_started` / `task_notification` line of a background command (Claude Code
    /// 2.1.328's shapes, fixture `stream_io/input_eof_background`, without its internal
    /// `run_id`); the Agent SDKs track running tasks by them.
    pub fn task_line(&self, event: crate::tools::background::TaskEvent<'_>) -> Value {
        use crate::tools::background::TaskEvent;
        match event {
            TaskEvent::Started(task) => json!({
                "type": "system",
                "subtype": "task_started",
                "task_id": task.id,
                "tool_use_id": task.tool_use_id,
                "description": task.label(),
                "is_backgrounded": true,
                "task_type": "local_bash",
                "uuid": uuid_v4(),
                "session_id": self.session_id,
            }),
            TaskEvent::Ended(task) => {
                let (status, summary) = task.outcome().unwrap_or((
                    "failed",
                    format!("Background command \"{}\" ended", task.label()),
                ));
                json!({
                    "type": "system",
                    "subtype": "task_notification",
                    "task_id": task.id,
                    "tool_use_id": task.tool_use_id,
                    "status": status,
                    "output_file": task.log.to_string_lossy(),
                    "summary": summary,
                    "uuid": uuid_v4(),
                    "session_id": self.session_id,
                })
            }
        }
    }

    /// The `user` line that echoes a message read from stdin (`--replay-user-messages`).
    pub fn replay_line(&self, message: &Value) -> Value {
        json!({
            "type": "user",
            "message": message,
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": uuid_v4(),
            "timestamp": timestamp_now(),
            "isReplay": true,
        })
    }

    /// A `user` line of one text block that rein adds itself (`[Request interrupted by
    /// user]`).
    pub fn user_text_line(&self, text: &str) -> Value {
        json!({
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": uuid_v4(),
            "timestamp": timestamp_now(),
        })
    }

    /// The `mcp_servers` of `init`: `{name, status, source}` per configured server.
    pub fn with_mcp_servers(mut self, servers: Vec<Value>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// The session's commands and skills (`slash_commands`: every name `/name` runs; `skills`:
    /// the skills) and plugins (`{name, path, source}`), as Claude Code's `init` lists them.
    pub fn with_catalog(
        mut self,
        catalog: &crate::commands::Catalog,
        plugins: &[crate::settings::plugins::Plugin],
    ) -> Self {
        let names = |skills_only: bool| {
            catalog
                .entries
                .iter()
                .filter(|e| !skills_only || e.kind == crate::commands::Kind::Skill)
                .map(|e| e.name.clone())
                .collect()
        };
        self.catalog = (
            names(false),
            names(true),
            plugins
                .iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "path": p.reference.root.to_string_lossy(),
                        "source": p.reference.id,
                    })
                })
                .collect(),
        );
        self
    }

    /// Writes one line; after a closed stdout, nothing more is written.
    pub fn emit(&self, value: &Value) {
        write_line(value, &self.broken);
    }
}

/// Writes `value` as one line on stdout, whole, under stdout's lock (every stream-json line goes
/// through here, so lines from different threads never interleave). After a failed write
/// (`broken` set: the reader went away) nothing more is written.
pub(crate) fn write_line(value: &Value, broken: &AtomicBool) {
    if broken.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let ok = serde_json::to_writer(&mut out, value).is_ok()
        && out.write_all(b"\n").is_ok()
        && out.flush().is_ok();
    if !ok {
        broken.store(true, Ordering::Relaxed);
    }
}

/// One stream shared by the observer list and the `--input-format stream-json` loop (which
/// writes the lines no progress stands for: echoes, control responses, results).
impl Observer for Arc<StreamJson> {
    fn observe(&self, progress: Progress<'_>) {
        self.as_ref().observe(progress);
    }
}

/// The API-shaped message of a response, as stream-json and the transcript show it.
pub fn assistant_message_json(response: &ModelResponse) -> Value {
    let stop = match response.stop_reason {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::Other => "stop_sequence",
    };
    let mut message = json!({
        "id": response.id,
        "type": "message",
        "role": "assistant",
        "model": response.model,
        "content": response.content,
        "stop_reason": stop,
    });
    if let Some(usage) = &response.usage {
        message["usage"] = usage_json(usage);
    }
    message
}

/// A `usage` object in Claude Code's key order.
pub fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
    })
}

/// `modelUsage`: per model, Claude Code's camelCase counts. `costUSD` is only what the user's
/// configured prices give (`REIN_PRICES`); rein invents no prices.
pub fn model_usage_json(by_model: &[(String, Usage)]) -> Value {
    let mut map = Map::new();
    for (model, usage) in by_model {
        let mut entry = Map::new();
        entry.insert("inputTokens".into(), json!(usage.input_tokens));
        entry.insert("outputTokens".into(), json!(usage.output_tokens));
        entry.insert(
            "cacheReadInputTokens".into(),
            json!(usage.cache_read_input_tokens),
        );
        entry.insert(
            "cacheCreationInputTokens".into(),
            json!(usage.cache_creation_input_tokens),
        );
        entry.insert("webSearchRequests".into(), json!(0));
        entry.insert(
            "costUSD".into(),
            json!(crate::agent::cost::cost_usd(model, usage).unwrap_or(0.0)),
        );
        map.insert(model.clone(), Value::Object(entry));
    }
    Value::Object(map)
}

impl Observer for StreamJson {
    fn observe(&self, progress: Progress<'_>) {
        let sid = &self.session_id;
        match progress {
            // Claude Code 2.1.328's shapes (fixture `tests/fixtures/cc-2.1.328/*/stream.jsonl`):
            // every line carries a `uuid`; messages also `parent_tool_use_id` and `timestamp`.
            // rein names its own version (`rein_version`) where Claude Code has
            // `claude_code_version`, and lists no MCP servers or slash commands (it has none).
            Progress::SessionStarted { session_id, model } => {
                if self.init_per_prompt {
                    if let Ok(mut m) = self.model.lock() {
                        *m = model.to_string();
                    }
                } else {
                    self.emit(&self.init_line(session_id, model));
                }
            }
            Progress::Prompt { .. }
                if self.init_per_prompt && !self.turn_init.swap(true, Ordering::Relaxed) =>
            {
                let model = self.model.lock().map(|m| m.clone()).unwrap_or_default();
                self.emit(&self.init_line(sid, &model));
            }
            Progress::RequestStarted if self.include_partial_messages => {
                if let Ok(mut reply) = self.reply.lock() {
                    *reply = (None, Some(Instant::now()));
                }
                self.emit(&json!({
                    "type": "system",
                    "subtype": "status",
                    "status": "requesting",
                    "session_id": sid,
                    "uuid": uuid_v4(),
                }));
            }
            Progress::StreamEvent { event } if self.include_partial_messages => {
                self.emit(&self.stream_event_line(event));
            }
            Progress::Assistant { response, display } => self.emit(&json!({
                "type": "assistant",
                "message": match display {
                    Some(text) => assistant_message_json(&shown_as(response, text)),
                    None => assistant_message_json(response),
                },
                "parent_tool_use_id": null,
                "session_id": sid,
                "uuid": uuid_v4(),
                "timestamp": timestamp_now(),
            })),
            Progress::ToolResult {
                tool_use_id,
                content,
                is_error,
                response,
                ..
            } => {
                let block = ContentBlock::ToolResult {
                    tool_use_id: tool_use_id.to_string(),
                    content: content.to_string(),
                    is_error,
                };
                let mut line = Map::new();
                line.insert("type".into(), json!("user"));
                let mut block = serde_json::to_value(&block).unwrap_or(Value::Null);
                // Claude Code states `is_error` on every tool result line, `false` included.
                if let Some(map) = block.as_object_mut() {
                    map.insert("is_error".into(), json!(is_error));
                }
                line.insert(
                    "message".into(),
                    json!({"role": "user", "content": [block]}),
                );
                line.insert("parent_tool_use_id".into(), Value::Null);
                line.insert("session_id".into(), json!(sid));
                line.insert("uuid".into(), json!(uuid_v4()));
                line.insert("timestamp".into(), json!(timestamp_now()));
                if let Some(r) = response {
                    line.insert("tool_use_result".into(), r.clone());
                }
                self.emit(&Value::Object(line));
            }
            Progress::Feedback { message } => {
                // System notes are not the user message's: Claude Code's stream shows the
                // Stop feedback text alone (fixture `stop_cap`).
                let mut message = (*message).clone();
                message
                    .content
                    .retain(|b| !matches!(b, ContentBlock::SystemNote { .. }));
                if !message.content.is_empty() {
                    self.emit(&json!({
                        "type": "user",
                        "message": message,
                        "parent_tool_use_id": null,
                        "session_id": sid,
                        "uuid": uuid_v4(),
                        "timestamp": timestamp_now(),
                    }))
                }
            }
            Progress::Hook(report) => {
                let event = report.event;
                let hook_name = &report.hook_name;
                // Claude Code writes SessionStart's runs even without
                // `--include-hook-events`, and no other event's (fixture
                // `tests/fixtures/cc-2.1.328/stream_io/hooks_without_flag`).
                if !self.include_hook_events && event != HookEvent::SessionStart.as_str() {
                    return;
                }
                for run in &report.runs {
                    let outcome = match &run.outcome {
                        HookRunOutcome::Success => "success",
                        HookRunOutcome::Blocking(_) => "blocking_error",
                        HookRunOutcome::NonBlocking(_) => "non_blocking_error",
                        HookRunOutcome::Cancelled => "cancelled",
                    };
                    let exit_code = match run.end {
                        HookRunEnd::Exited(c) => json!(c),
                        HookRunEnd::Signaled | HookRunEnd::Other => Value::Null,
                    };
                    // rein reports a run when it has ended, so its `hook_started` line comes
                    // right before its `hook_response`.
                    let hook_id = uuid_v4();
                    self.emit(&json!({
                        "type": "system",
                        "subtype": "hook_started",
                        "hook_id": hook_id,
                        "hook_name": hook_name,
                        "hook_event": event,
                        "uuid": uuid_v4(),
                        "session_id": sid,
                    }));
                    let stdout = bounded_stream(&run.stdout, run.stdout_bytes);
                    let stderr = bounded_stream(&run.stderr, run.stderr_bytes);
                    let mut response = json!({
                        "type": "system",
                        "subtype": "hook_response",
                        "hook_id": hook_id,
                        "hook_name": hook_name,
                        "hook_event": event,
                        "output": format!("{stdout}{stderr}"),
                        "stdout": stdout,
                        "stderr": stderr,
                        "exit_code": exit_code,
                        "outcome": outcome,
                        "uuid": uuid_v4(),
                        "session_id": sid,
                    });
                    // rein's shadow mode: what the hook would have done and was not applied.
                    if run.shadow
                        && let Some(obj) = response.as_object_mut()
                    {
                        obj.insert("shadow".to_string(), json!(true));
                        obj.insert("would_have".to_string(), json!(run.withheld));
                    }
                    self.emit(&response);
                }
            }
            Progress::Notice { text } => self.emit(&json!({
                "type": "system",
                "subtype": "notice",
                "text": text,
                "uuid": uuid_v4(),
                "session_id": sid,
            })),
            Progress::Prompt { .. }
            | Progress::ToolStart { .. }
            | Progress::TextDelta { .. }
            | Progress::RequestStarted
            | Progress::StreamEvent { .. } => {}
        }
    }
}

/// The `{type: "result", …}` object of `json` / `stream-json` output.
pub fn result_json(
    outcome: &TurnOutcome,
    session_id: &str,
    duration_ms: u64,
    error: Option<&str>,
) -> Value {
    // Claude Code 2.1.328's fields (fixtures `tests/fixtures/cc-2.1.328/{max_turns,stop_cap,
    // continue_false}`): `terminal_reason` says why the loop ended, `stop_reason` is the last
    // model reply's own; a loop cut short (max turns, `continue: false`, the Stop-block cap)
    // counts the turn it would have gone on to; the result is `null` at max turns and empty
    // after the Stop-block cap.
    // A prompt a UserPromptSubmit hook refused never entered the loop: no `terminal_reason`
    // (fixtures `prompt_blocked`, `prompt_blocked_json`). A deferred call ends the loop with
    // `stop_reason` `tool_deferred`, not the reply's `tool_use` (fixture `defer`).
    let (subtype, is_error, terminal_reason) = match &outcome.end {
        TurnEnd::Completed => ("success", false, Some("completed")),
        TurnEnd::PromptBlocked { .. } => ("success", false, None),
        TurnEnd::Stopped { .. } => ("success", false, Some("hook_stopped")),
        TurnEnd::Deferred => ("success", false, Some("tool_deferred")),
        TurnEnd::MaxTurns => ("error_max_turns", true, Some("max_turns")),
        TurnEnd::ModelFailed(_) => ("error_during_execution", true, Some("model_error")),
        // Fixture `agent_sdk/max_budget`.
        TurnEnd::BudgetReached(_) => ("error_max_budget_usd", true, Some("budget_exhausted")),
    };
    let cut_short =
        matches!(outcome.end, TurnEnd::MaxTurns | TurnEnd::Stopped { .. }) || outcome.stop_capped;
    let num_turns = outcome.num_turns + u32::from(cut_short && outcome.num_turns > 0);
    let result = match &outcome.end {
        TurnEnd::MaxTurns | TurnEnd::BudgetReached(_) => Value::Null,
        _ if outcome.stop_capped => json!(""),
        _ => json!(outcome.result),
    };
    let stop_reason = match outcome.model_stop_reason {
        _ if outcome.end == TurnEnd::Deferred => json!("tool_deferred"),
        Some(StopReason::EndTurn) => json!("end_turn"),
        Some(StopReason::ToolUse) => json!("tool_use"),
        Some(StopReason::MaxTokens) => json!("max_tokens"),
        Some(StopReason::Other) | None => Value::Null,
    };
    let denials: Vec<Value> = outcome.denials.iter().map(denial_json).collect();
    let mut obj = Map::new();
    obj.insert("type".into(), json!("result"));
    obj.insert("subtype".into(), json!(subtype));
    obj.insert("is_error".into(), json!(is_error));
    obj.insert("duration_ms".into(), json!(duration_ms));
    obj.insert("duration_api_ms".into(), json!(outcome.api_ms));
    obj.insert("num_turns".into(), json!(num_turns));
    obj.insert("result".into(), result);
    obj.insert("stop_reason".into(), stop_reason);
    obj.insert("terminal_reason".into(), json!(terminal_reason));
    if let TurnEnd::Stopped { reason: Some(r) } = &outcome.end {
        obj.insert("hook_stop_reason".into(), json!(r));
    }
    if let Some(e) = error {
        obj.insert("error".into(), json!(e));
    }
    if let TurnEnd::BudgetReached(usd) = &outcome.end {
        obj.insert(
            "errors".into(),
            json!([format!("Reached maximum budget (${usd})")]),
        );
    }
    obj.insert("session_id".into(), json!(session_id));
    let cost = crate::agent::cost::total_usd(&outcome.model_usage);
    obj.insert("total_cost_usd".into(), json!(cost));
    obj.insert("usage".into(), usage_json(&outcome.usage));
    obj.insert("modelUsage".into(), model_usage_json(&outcome.model_usage));
    obj.insert("permission_denials".into(), json!(denials));
    number_result(&mut obj);
    Value::Object(obj)
}

/// How many `result` objects this process has numbered (see [`number_result`]).
static RESULTS_NUMBERED: AtomicU64 = AtomicU64::new(0);

/// Ends a `result` object with Claude Code 2.1.328's `queued_turn_count` and `result_index`,
/// in its order (fixtures `tests/fixtures/cc-2.1.328/stream_io/{input_two_turns,
/// input_interrupt,json_output_result}`: every `json` and `stream-json` result has them, after
/// the keys rein shares with it). `result_index` counts the process's results from 0, taken
/// before the line is written, so a lost write leaves a gap as in Claude Code.
/// `queued_turn_count` counts the prompts a user queued behind the turn; Claude Code counts
/// only prompts whose origin an SDK host stamped user-driven (it writes 0 even when a second
/// stdin message was already waiting, fixture `input_two_turns`), which rein's headless
/// modes have no way to receive, so rein's count is 0.
pub fn number_result(obj: &mut Map<String, Value>) {
    obj.insert("queued_turn_count".into(), json!(0));
    let index = RESULTS_NUMBERED.fetch_add(1, Ordering::Relaxed);
    obj.insert("result_index".into(), json!(index));
}

fn denial_json(d: &Denial) -> Value {
    json!({"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input})
}

/// `response` with its text as MessageDisplay hooks want it shown: the first text block holds
/// `text`, the other text blocks are left out (Claude Code 2.1.328 replaces the text of the
/// `assistant` line: fixture `message_display_json`; several text blocks were not measured).
fn shown_as(response: &ModelResponse, text: &str) -> ModelResponse {
    let mut shown = response.clone();
    let mut first = true;
    shown.content.retain_mut(|block| match block {
        ContentBlock::Text { text: t } => {
            let keep = first;
            if first {
                *t = text.to_string();
                first = false;
            }
            keep
        }
        ContentBlock::ToolUse { .. }
        | ContentBlock::SystemNote { .. }
        | ContentBlock::ToolResult { .. } => true,
    });
    shown
}
