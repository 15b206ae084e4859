//! A session: its id, SessionStart/SessionEnd, and the turn loop for each prompt —
//! UserPromptSubmit, model requests, the tool pipeline, Stop (with its block cap) and
//! StopFailure.
//!
//! Model-facing hook texts are delivered as user-role text blocks wrapped in
//! `<system-reminder>` tags, merged into the next user message next to its tool results
//! (the Messages API needs alternating roles).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::compact::{self, CompactPolicy};
use crate::agent::instructions::MemoryFile;
use crate::agent::transcript::{
    LineContext, ToolDecision, ToolResultLine, Transcript, TranscriptFault,
};
use crate::hooks::events::InstructionsLoaded;
use crate::hooks::events::instructions_loaded::InstructionsLoadedInput;
use crate::hooks::events::post_compact::PostCompactInput;
use crate::hooks::events::post_model_switch::PostModelSwitchInput;
use crate::hooks::events::pre_compact::PreCompactInput;
use crate::hooks::events::pre_model_switch::PreModelSwitchInput;
use crate::hooks::events::session_end::SessionEndInput;
use crate::hooks::events::session_start::SessionStartInput;
use crate::hooks::events::stop::StopInput;
use crate::hooks::events::stop_failure::StopFailureInput;
use crate::hooks::events::subagent_stop::SubagentStopInput;
use crate::hooks::events::user_prompt_submit::UserPromptSubmitInput;
use crate::hooks::events::{
    BaseInput, Effort, Event, SessionEnd, SessionStart, Stop, StopFailure, SubagentStop,
    UserPromptSubmit,
};
use crate::hooks::events::{PostCompact, PostModelSwitch, PreCompact, PreModelSwitch};
use crate::hooks::host::{HookHost, fire_observed};
use crate::hooks::spec::HookEvent;
use crate::id::uuid_v4;
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelResponse, Request, Role, StopReason, ToolSpec,
    Usage,
};
use crate::pipeline::{CallStatus, PermissionGate, ToolCall, ToolPipeline};
use crate::progress::{Observer, Progress};
use crate::tools::{Tool, ToolContext};

/// Consecutive Stop-hook blocks honoured in one turn unless `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`
/// says otherwise.
pub const DEFAULT_STOP_BLOCK_CAP: u32 = 8;

/// The permission modes `permission_mode` can carry (spec §2.2, §6.3).
pub const PERMISSION_MODES: [&str; 6] = [
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
];

/// How a session is set up.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub session_id: String,
    pub project_dir: PathBuf,
    pub transcript_path: PathBuf,
    /// One of [`PERMISSION_MODES`].
    pub permission_mode: String,
    /// Model requests allowed per prompt; `None` = unlimited.
    pub max_turns: Option<u32>,
    pub stop_block_cap: u32,
    /// Time the SessionEnd phase may take
    /// ([`crate::hooks::dispatch::Dispatcher::session_end_phase_budget`]).
    pub session_end_budget: Duration,
}

/// Reads `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` (a non-negative integer), else the default.
pub fn stop_block_cap_from_env() -> u32 {
    std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_STOP_BLOCK_CAP)
}

/// A tool call that was refused (by a hook, a rule or a person) and never ran; `rein -p
/// --output-format json` lists them as `permission_denials`.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// The tool's name.
    pub tool_name: String,
    /// The call's id.
    pub tool_use_id: String,
    /// The arguments of the call.
    pub tool_input: serde_json::Value,
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// The model ended its turn and the Stop hooks let it (or the block cap was reached).
    Completed,
    /// A UserPromptSubmit hook refused the prompt.
    PromptBlocked {
        /// What the user is shown.
        text: String,
    },
    /// The limit of model requests per prompt (`--max-turns`) was reached.
    MaxTurns,
    /// A hook answered `continue: false`.
    Stopped {
        /// Its `stopReason`.
        reason: Option<String>,
    },
    /// A PreToolUse hook deferred a call.
    Deferred,
    /// The model request failed (after the provider's retries).
    ModelFailed(ModelError),
}

/// The result of one prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// Why the turn ended.
    pub end: TurnEnd,
    /// The last assistant text.
    pub result: String,
    /// Model requests made for this prompt.
    pub num_turns: u32,
    /// The last model reply's stop reason (`None`: no request was made).
    pub model_stop_reason: Option<StopReason>,
    /// The turn ended because Stop hooks reached the block cap.
    pub stop_capped: bool,
    /// The tool calls that were refused, in order.
    pub denials: Vec<Denial>,
    /// Tokens this prompt's model requests took, summed (zero when the provider reported none).
    pub usage: Usage,
    /// The same, per model that answered, in the order they first answered.
    pub model_usage: Vec<(String, Usage)>,
}

impl TurnOutcome {
    /// A turn that has not yet made a request: completed, nothing said, nothing spent.
    fn begun() -> TurnOutcome {
        TurnOutcome {
            end: TurnEnd::Completed,
            result: String::new(),
            num_turns: 0,
            model_stop_reason: None,
            stop_capped: false,
            denials: Vec::new(),
            usage: Usage::default(),
            model_usage: Vec::new(),
        }
    }
}

/// Tokens a whole session took, and how full the context was at the last request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionUsage {
    /// Every request's tokens, summed.
    pub total: Usage,
    /// Per model, in the order they first answered.
    pub by_model: Vec<(String, Usage)>,
    /// Model requests made.
    pub requests: u64,
    /// Prompt plus reply tokens of the last request that reported usage: the size of the
    /// context the next request starts from.
    pub context_tokens: Option<u64>,
    /// Requests whose provider reported no usage.
    pub unreported: u64,
}

impl SessionUsage {
    fn record(&mut self, model: &str, usage: Option<&Usage>) {
        self.requests += 1;
        let Some(usage) = usage else {
            self.unreported += 1;
            return;
        };
        self.total.add(usage);
        add_model_usage(&mut self.by_model, model, usage);
        self.context_tokens = Some(usage.prompt_tokens() + usage.output_tokens);
    }
}

fn add_model_usage(list: &mut Vec<(String, Usage)>, model: &str, usage: &Usage) {
    match list.iter_mut().find(|(m, _)| m == model) {
        Some((_, u)) => u.add(usage),
        None => list.push((model.to_string(), *usage)),
    }
}

/// Writes progress to the transcript, then passes it on.
struct Sink {
    transcript: Transcript,
    line: Mutex<LineContext>,
    /// `(id, name)` of the last assistant message's tool calls that have no result yet, so an
    /// interruption can still answer each one (a transcript never ends on an unanswered
    /// `tool_use`).
    outstanding: Mutex<Vec<(String, String)>>,
    /// The text the model has streamed so far of the reply being received (`None` while no
    /// request is under way), so a turn stopped mid-reply can keep what the person saw.
    streaming: Mutex<Option<String>>,
    /// Hook firings whose lines Claude Code writes after the line they are about.
    held: Mutex<Held>,
    next: Box<dyn Observer>,
}

/// One hook firing, kept until its lines may be written.
struct Firing {
    event: HookEvent,
    common: crate::hooks::events::Common,
    hook_name: String,
    tool_use_id: Option<String>,
}

/// Claude Code writes a UserPromptSubmit firing after the prompt line, a PostToolUse firing
/// after its tool-result line, and a blocking Stop firing after the feedback line; rein fires
/// them before, so their lines wait here.
#[derive(Default)]
struct Held {
    prompt: Vec<Firing>,
    tool: Vec<Firing>,
    stop: Vec<Firing>,
    /// Tool calls a PreToolUse hook refused (their result line names the hook).
    refused_by_hook: std::collections::HashSet<String>,
}

impl Sink {
    fn set_streaming(&self, value: Option<String>) {
        if let Ok(mut streaming) = self.streaming.lock() {
            *streaming = value;
        }
    }

    fn line(&self) -> LineContext {
        match self.line.lock() {
            Ok(l) => l.clone(),
            Err(_) => LineContext::default(),
        }
    }

    fn write_firing(&self, ctx: &LineContext, f: &Firing) {
        if matches!(f.event, HookEvent::Stop | HookEvent::SubagentStop) {
            self.transcript.stop_hooks(ctx, f.event, &f.common);
        } else {
            self.transcript.hook_decision(
                f.event,
                &f.common,
                &f.hook_name,
                f.tool_use_id.as_deref(),
            );
        }
    }

    /// Writes the held firings `pick` selects, in the order they fired.
    fn release(&self, ctx: &LineContext, pick: impl Fn(&mut Held) -> Vec<Firing>) {
        let firings = match self.held.lock() {
            Ok(mut held) => pick(&mut held),
            Err(_) => Vec::new(),
        };
        for f in &firings {
            self.write_firing(ctx, f);
        }
    }

    fn release_all(&self, ctx: &LineContext) {
        self.release(ctx, |h| {
            let mut all = std::mem::take(&mut h.prompt);
            all.append(&mut h.tool);
            all.append(&mut h.stop);
            all
        });
    }

    fn transcribe(&self, ctx: &LineContext, progress: &Progress<'_>) {
        match *progress {
            Progress::RequestStarted => self.set_streaming(Some(String::new())),
            Progress::TextDelta { text } => {
                if let Ok(mut streaming) = self.streaming.lock()
                    && let Some(so_far) = streaming.as_mut()
                {
                    so_far.push_str(text);
                }
            }
            Progress::SessionStarted { .. }
            | Progress::ToolStart { .. }
            | Progress::StreamEvent { .. }
            | Progress::Notice { .. } => {}
            Progress::Prompt { text, .. } => {
                self.set_streaming(None);
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.tool);
                    all.append(&mut h.stop);
                    all
                });
                self.transcript.user_prompt(ctx, text);
                self.release(ctx, |h| std::mem::take(&mut h.prompt));
            }
            Progress::Assistant { response } => {
                self.set_streaming(None);
                self.release_all(ctx);
                let calls = response.content.iter().filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, .. } => Some((id.clone(), name.clone())),
                    ContentBlock::Text { .. } | ContentBlock::ToolResult { .. } => None,
                });
                if let Ok(mut outstanding) = self.outstanding.lock() {
                    *outstanding = calls.collect();
                }
                self.transcript.assistant(ctx, response)
            }
            Progress::ToolResult {
                tool_use_id,
                name,
                content,
                is_error,
                status,
                response,
            } => {
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.prompt);
                    all.append(&mut h.stop);
                    all
                });
                if let Ok(mut outstanding) = self.outstanding.lock() {
                    outstanding.retain(|(id, _)| id != tool_use_id);
                }
                let by_hook = self
                    .held
                    .lock()
                    .is_ok_and(|mut h| h.refused_by_hook.remove(tool_use_id));
                let decision = match status {
                    CallStatus::Refused if by_hook => ToolDecision::RejectedByHook,
                    CallStatus::Succeeded | CallStatus::Failed
                        if ctx.permission_mode.as_deref() == Some("bypassPermissions") =>
                    {
                        ToolDecision::AcceptedByMode
                    }
                    _ => ToolDecision::Unrecorded,
                };
                self.transcript.tool_result(
                    ctx,
                    &ToolResultLine {
                        tool_use_id,
                        tool_name: name,
                        content,
                        is_error,
                        tool_use_result: response,
                        decision,
                    },
                );
                self.release(ctx, |h| {
                    let (mine, rest) = std::mem::take(&mut h.tool)
                        .into_iter()
                        .partition(|f| f.tool_use_id.as_deref() == Some(tool_use_id));
                    h.tool = rest;
                    mine
                });
            }
            Progress::Hook {
                event,
                common,
                hook_name,
                tool_use_id,
            } => {
                let firing = Firing {
                    event,
                    common: common.clone(),
                    hook_name: hook_name.to_string(),
                    tool_use_id: tool_use_id.map(str::to_string),
                };
                let Ok(mut held) = self.held.lock() else {
                    return;
                };
                match event {
                    HookEvent::UserPromptSubmit => held.prompt.push(firing),
                    HookEvent::PostToolUse | HookEvent::PostToolUseFailure
                        if firing.tool_use_id.is_some() =>
                    {
                        held.tool.push(firing)
                    }
                    HookEvent::Stop | HookEvent::SubagentStop
                        if common.runs.iter().any(|r| {
                            matches!(r.outcome, crate::hooks::run::OutcomeKind::Blocking(_))
                        }) || !common.context.is_empty() =>
                    {
                        held.stop.push(firing)
                    }
                    _ => {
                        if event == HookEvent::PreToolUse
                            && let Some(id) = tool_use_id
                            && common.runs.iter().any(|r| {
                                matches!(r.outcome, crate::hooks::run::OutcomeKind::Blocking(_))
                            })
                        {
                            held.refused_by_hook.insert(id.to_string());
                        }
                        drop(held);
                        self.write_firing(ctx, &firing);
                    }
                }
            }
            Progress::Feedback { message } => {
                self.release(ctx, |h| {
                    let mut all = std::mem::take(&mut h.prompt);
                    all.append(&mut h.tool);
                    all
                });
                self.transcript.user_blocks(ctx, &message.content);
                self.release(ctx, |h| std::mem::take(&mut h.stop));
            }
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let ctx = self.line();
        self.release_all(&ctx);
    }
}

impl Observer for Sink {
    fn observe(&self, progress: Progress<'_>) {
        let ctx = self.line();
        self.transcribe(&ctx, &progress);
        if let Some(text) = self.transcript.take_new_fault_notice() {
            self.next.observe(Progress::Notice { text: &text });
        }
        self.next.observe(progress);
    }
}

/// The result text of a tool call cut short by SIGINT/SIGTERM (Claude Code's wording for an
/// interrupted tool use).
pub const INTERRUPTED_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// The note Claude Code 2.1.328 adds when the person stops the model's reply (Esc or Ctrl+C
/// while it streams, no tool running; fixture `tests/fixtures/cc-2.1.328/interactive`, run5).
pub const INTERRUPTED_BY_USER: &str = "[Request interrupted by user]";

/// The result Claude Code 2.1.328 gives a tool call the person stopped with Esc or Ctrl+C in
/// an interactive session (fixture `tests/fixtures/cc-2.1.328/interactive`, run2/run3); a text
/// block [`INTERRUPTED_TOOL_USE`] follows the results in the same user message.
pub const STOPPED_TOOL_RESULT: &str = "The user doesn't want to proceed with this tool use. The \
tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). \
STOP what you are doing and wait for the user to tell you how to proceed.";

/// Seconds a prompt cache lives (Anthropic's default TTL, the `cache_ttl` `5m` Claude Code
/// reports).
const PROMPT_CACHE_TTL_SECS: u64 = 300;

/// One agent session: a conversation with the model, its tool calls and their hooks, recorded
/// in a transcript. Get one from [`crate::Engine::session`]; call [`Session::start`], then
/// [`Session::run_prompt`] as often as needed, then [`Session::end`];
/// [`Session::transcript_fault`] says whether the transcript lost lines.
pub struct Session {
    config: SessionConfig,
    hooks: Box<dyn HookHost>,
    model: Arc<dyn Model>,
    tools: Vec<Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
    gate: Box<dyn PermissionGate>,
    ctx: ToolContext,
    sink: Sink,
    messages: Vec<Message>,
    /// Model-facing entries not yet delivered.
    pending: Vec<String>,
    prompt_id: Option<String>,
    ended: bool,
    /// Set when this session is a subagent's loop (see [`crate::agent::subagent`]).
    subagent: Option<SubagentIdentity>,
    /// The system prompt sent with every request.
    system: Option<String>,
    /// What `system` was built from, when the session may build it again (`/model`).
    prompt: Option<crate::agent::instructions::Prompt>,
    /// Memory files in the system prompt, announced with InstructionsLoaded at start.
    memory: Vec<MemoryFile>,
    usage: SessionUsage,
    compaction: CompactPolicy,
    /// The notice that the provider reports no usage was given.
    blind_noticed: bool,
    /// Whether transcripts are written (`--no-session-persistence` turns it off).
    persist: bool,
    /// Parts outside the session that follow `/clear`, `/resume` and `/model`.
    followers: Vec<Arc<dyn Follows>>,
    /// Whether the observer gets [`Progress::StreamEvent`]s (`--include-partial-messages`).
    /// Off by default: building every event of every reply costs a call that nobody reads.
    stream_events: bool,
}

/// A part outside the session (the subagents' runtime, prompt hooks' model) that must follow
/// when `/clear` or `/resume` changes the session's id and transcript, or `/model` its model.
pub(crate) trait Follows: Send + Sync {
    /// The session is now `session_id`, recorded in `transcript_path`.
    fn session_changed(&self, session_id: &str, transcript_path: &std::path::Path) {
        let _ = (session_id, transcript_path);
    }
    /// The session's requests go to `model` from now on.
    fn model_changed(&self, model: &Arc<dyn Model>) {
        let _ = model;
    }
}

/// What a resumed transcript says about the session's last moments, for SessionStart
/// `resume` (Claude Code 2.1.328 sends these fields when `/resume` switches sessions).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ResumeFacts {
    /// Seconds since the last assistant reply was written.
    pub seconds_since_last_response: Option<u64>,
    /// Prompt plus reply tokens of the last reply that reported usage.
    pub context_tokens: Option<u64>,
}

/// Who a subagent session is: what its hooks' stdin carries besides the parent's base fields.
#[derive(Debug, Clone)]
pub(crate) struct SubagentIdentity {
    pub agent_id: String,
    pub agent_type: String,
    /// The parent session's transcript (the `transcript_path` hooks see); the subagent's own
    /// is the session's `config.transcript_path` (`agent_transcript_path`).
    pub parent_transcript: PathBuf,
}

/// Whether a call names the Agent tool (`Task` is its former name).
fn is_agent_call(name: &str) -> bool {
    name == "Agent" || name == "Task"
}

/// How a compaction went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compacted {
    /// The history was replaced by a summary.
    Done {
        /// The summary.
        summary: String,
    },
    /// A PreCompact hook refused.
    Blocked(String),
    /// Nothing to summarise.
    TooShort,
    /// The summary request failed or came back empty.
    Failed(String),
}

/// The first lines of the system reminder that carries a background command's
/// `<task-notification>`: rein's words for the fact Claude Code also states, that the message
/// comes from the harness and no person approved anything in it.
pub const BACKGROUND_NOTICE: &str = "Notice from rein, not from the user: a background command \
you started has ended. Nobody has written since the user's last message, so this is not an \
answer, an approval or a confirmation of anything.";

/// Whether `message` is the user message [`Session::stopped_by_user`] leaves: tool results and
/// the interruption note last.
pub(crate) fn ends_in_interruption(message: &Message) -> bool {
    message.role == Role::User
        && matches!(message.content.last(), Some(ContentBlock::Text { text })
            if matches!(text.strip_suffix('\n'), Some(INTERRUPTED_TOOL_USE | INTERRUPTED_BY_USER)))
}

/// Wraps a model-facing hook text for the Messages API.
pub fn system_reminder(text: &str) -> ContentBlock {
    ContentBlock::Text {
        text: format!("<system-reminder>\n{text}\n</system-reminder>"),
    }
}

/// All text blocks of a response, joined by newlines.
pub fn response_text(response: &ModelResponse) -> String {
    let parts: Vec<&str> = response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => None,
        })
        .collect();
    parts.join("\n")
}

impl Session {
    /// A session over its parts. `ctx` is the tool context (its env files are filled after
    /// SessionStart). `observer` receives every [`Progress`] after the transcript.
    pub(crate) fn new(
        config: SessionConfig,
        hooks: Box<dyn HookHost>,
        model: Arc<dyn Model>,
        tools: Vec<Arc<dyn Tool>>,
        gate: Box<dyn PermissionGate>,
        ctx: ToolContext,
        observer: Box<dyn Observer>,
    ) -> Session {
        let specs = tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: t.input_schema(),
            })
            .collect();
        let compaction = CompactPolicy::from_env(model.name());
        let transcript = Transcript::new(
            config.transcript_path.clone(),
            &config.session_id,
            &config.project_dir,
        );
        Session {
            sink: Sink {
                transcript,
                line: Mutex::new(LineContext::default()),
                outstanding: Mutex::new(Vec::new()),
                streaming: Mutex::new(None),
                held: Mutex::new(Held::default()),
                next: observer,
            },
            config,
            hooks,
            model,
            tools,
            specs,
            gate,
            ctx,
            messages: Vec::new(),
            pending: Vec::new(),
            prompt_id: None,
            ended: false,
            subagent: None,
            system: None,
            prompt: None,
            memory: Vec::new(),
            usage: SessionUsage::default(),
            compaction,
            blind_noticed: false,
            persist: true,
            followers: Vec::new(),
            stream_events: false,
        }
    }

    /// Makes this session a subagent's loop: its hooks carry `agent_id`/`agent_type` and the
    /// parent's `transcript_path` and `prompt_id`, and it fires SubagentStop where a session
    /// fires Stop.
    pub(crate) fn into_subagent(
        mut self,
        identity: SubagentIdentity,
        prompt_id: Option<String>,
    ) -> Session {
        self.subagent = Some(identity);
        self.prompt_id = prompt_id;
        self.set_line_context();
        self
    }

    /// The tools this session's model called, in first-use order with how often, over the
    /// whole history.
    pub(crate) fn tool_use_summary(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for message in self.messages.iter().filter(|m| m.role == Role::Assistant) {
            for block in &message.content {
                if let ContentBlock::ToolUse { name, .. } = block {
                    match counts.iter_mut().find(|(n, _)| n == name) {
                        Some((_, c)) => *c += 1,
                        None => counts.push((name.clone(), 1)),
                    }
                }
            }
        }
        counts
    }

    /// Runs a subagent's task (no UserPromptSubmit: the task comes from the parent model, and
    /// its Agent call already passed the parent's gate). `instructions` (its definition's body)
    /// and `context` (SubagentStart hook entries) go in front of the task, each wrapped as a
    /// system reminder, so the task stays the message's one plain text (the transcript records
    /// the task as the prompt, as Claude Code does).
    pub(crate) async fn run_task(
        &mut self,
        instructions: Option<&str>,
        task: &str,
        context: Vec<String>,
    ) -> TurnOutcome {
        let mut outcome = TurnOutcome::begun();
        let prompt_id = self.prompt_id.clone().unwrap_or_default();
        self.sink.observe(Progress::Prompt {
            prompt_id: &prompt_id,
            text: task,
        });
        if !context.is_empty() {
            let message = Message {
                role: Role::User,
                content: context.iter().map(|t| system_reminder(t)).collect(),
            };
            self.sink.observe(Progress::Feedback { message: &message });
        }
        let mut content: Vec<ContentBlock> = instructions
            .filter(|i| !i.is_empty())
            .map(system_reminder)
            .into_iter()
            .chain(context.iter().map(|t| system_reminder(t)))
            .collect();
        content.push(ContentBlock::Text {
            text: task.to_string(),
        });
        self.messages.push(Message {
            role: Role::User,
            content,
        });
        self.turn_loop(&mut outcome).await;
        outcome
    }

    /// Replaces the auto-compaction policy.
    #[allow(dead_code)] // for embedders and tests that set a window of their own
    pub(crate) fn set_compaction(&mut self, policy: CompactPolicy) {
        self.compaction = policy;
    }

    /// Summarises the conversation and continues from the summary (see
    /// [`crate::agent::compact`]): PreCompact (which may block), the summary request,
    /// PostCompact, SessionStart `compact`.
    pub async fn compact(&mut self, trigger: &str, custom: Option<&str>) -> Compacted {
        let pre = self
            .fire::<PreCompact>(PreCompactInput {
                base: self.base(HookEvent::PreCompact),
                hook_event_name: HookEvent::PreCompact,
                trigger: trigger.to_string(),
                custom_instructions: custom.map(str::to_string),
            })
            .await;
        if let Some(reason) = pre.block {
            self.notice(&format!(
                "Compaction blocked by a PreCompact hook: {reason}"
            ));
            return Compacted::Blocked(reason);
        }
        let (older, kept) = compact::split(&self.messages);
        if older.len() < 2 {
            self.notice("Not enough messages to compact.");
            return Compacted::TooShort;
        }
        let kept = kept.cloned();
        let mid_turn = kept.is_none() && self.messages.last().is_some_and(|m| m.role == Role::User);
        let mut request_messages = older.to_vec();
        let ask = ContentBlock::Text {
            text: compact::summary_request(custom, &pre.instructions),
        };
        match request_messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(ask),
            Some(_) | None => request_messages.push(Message {
                role: Role::User,
                content: vec![ask],
            }),
        }
        let pre_tokens = self.usage.context_tokens;
        self.notice("Compacting the conversation…");
        let response = self
            .model
            .respond(Request {
                system: self.system.as_deref(),
                ..Request::new(&request_messages, &self.specs)
            })
            .await;
        let response = match response {
            Ok(r) => r,
            Err(err) => {
                let text = format!("Compaction failed: {err}");
                self.notice(&text);
                return Compacted::Failed(text);
            }
        };
        self.usage.record(&response.model, response.usage.as_ref());
        let summary = response_text(&response);
        if summary.trim().is_empty() {
            let text = "Compaction failed: the model returned no summary".to_string();
            self.notice(&text);
            return Compacted::Failed(text);
        }
        let mut content = vec![ContentBlock::Text {
            text: compact::summary_message(&summary, mid_turn),
        }];
        if let Some(kept) = kept {
            content.extend(kept.content);
        }
        let first = Message {
            role: Role::User,
            content,
        };
        self.sink.transcript.compact_boundary(
            &self.sink.line(),
            trigger,
            pre_tokens,
            &first.content,
        );
        self.messages = vec![first];
        self.usage.context_tokens = None;
        self.fire::<PostCompact>(PostCompactInput {
            base: self.base(HookEvent::PostCompact),
            hook_event_name: HookEvent::PostCompact,
            trigger: trigger.to_string(),
            compact_summary: summary.clone(),
        })
        .await;
        self.start_as("compact").await;
        Compacted::Done { summary }
    }

    /// The model's name.
    pub fn model_name(&self) -> &str {
        self.model.name()
    }

    /// Lets `follower` follow this session's id, transcript and model.
    pub(crate) fn follow(&mut self, follower: Arc<dyn Follows>) {
        self.followers.push(follower);
    }

    /// A slash command was entered: like a prompt, it gets a `prompt_id` of its own, which the
    /// hooks it fires carry (Claude Code 2.1.328 does the same).
    pub(crate) fn begin_command(&mut self) {
        let prompt_id = uuid_v4();
        self.prompt_id = Some(prompt_id.clone());
        if let Ok(mut current) = self.ctx.prompt_id.lock() {
            *current = Some(prompt_id);
        }
        self.set_line_context();
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.config.session_id
    }

    /// The session's transcript.
    pub fn transcript_path(&self) -> &std::path::Path {
        &self.config.transcript_path
    }

    /// Makes this session `session_id`, recorded in `transcript_path`: a new transcript, hooks
    /// and tools told the new id, an empty history and usage, no prompt yet.
    fn switch_to(&mut self, session_id: String, transcript_path: PathBuf) {
        let transcript = Transcript::new(
            transcript_path.clone(),
            &session_id,
            &self.config.project_dir,
        );
        if !self.persist {
            transcript.disable();
        }
        self.sink.transcript = transcript;
        if let Ok(mut outstanding) = self.sink.outstanding.lock() {
            outstanding.clear();
        }
        for (key, value) in &mut self.ctx.env {
            if key == "CLAUDE_CODE_SESSION_ID" {
                *value = session_id.clone();
            }
        }
        let output_dir = self
            .ctx
            .output_dir
            .as_ref()
            .map(|_| transcript_path.with_extension("").join("tool-results"));
        self.ctx.output_dir = output_dir.clone();
        // The model of the new conversation has read nothing yet.
        if let Ok(mut read) = self.ctx.in_context.lock() {
            read.clear();
        }
        self.hooks.switch_session(&session_id, output_dir);
        for follower in &self.followers {
            follower.session_changed(&session_id, &transcript_path);
        }
        self.config.session_id = session_id;
        self.config.transcript_path = transcript_path;
        self.messages.clear();
        self.pending.clear();
        self.usage = SessionUsage::default();
        self.prompt_id = None;
        if let Ok(mut current) = self.ctx.prompt_id.lock() {
            *current = None;
        }
        self.set_line_context();
    }

    /// `/clear`, as Claude Code 2.1.328 does it: SessionEnd (`reason: clear`) for this
    /// session, then a new session — a new id and transcript, an empty conversation — and
    /// SessionStart (`source: clear`) with the new id.
    pub(crate) async fn clear(&mut self) {
        self.fire::<SessionEnd>(SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: "clear".to_string(),
        })
        .await;
        let id = uuid_v4();
        let path = self
            .config
            .transcript_path
            .with_file_name(format!("{id}.jsonl"));
        self.switch_to(id, path);
        self.touch_transcript();
        self.start_as("clear").await;
    }

    /// `/resume ID` inside a running session: SessionEnd (`reason: resume`) for this session,
    /// then session `session_id` goes on from `rebuilt` (its transcript is appended to), and
    /// SessionStart (`source: resume`) fires with its id, the command's `prompt_id`, the model
    /// and `facts`, as Claude Code 2.1.328 does.
    pub(crate) async fn resume_session(
        &mut self,
        session_id: String,
        transcript_path: PathBuf,
        rebuilt: crate::agent::resume::Rebuilt,
        facts: ResumeFacts,
    ) {
        let prompt_id = self.prompt_id.clone();
        self.fire::<SessionEnd>(SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: "resume".to_string(),
        })
        .await;
        self.switch_to(session_id, transcript_path);
        self.resume_from(rebuilt);
        self.usage.context_tokens = facts.context_tokens;
        self.prompt_id = prompt_id;
        self.set_line_context();
        let mut base = self.base(HookEvent::SessionStart);
        base.prompt_id = self.prompt_id.clone();
        let estimated_cache_write_usd = facts
            .context_tokens
            .and_then(|tokens| crate::agent::cost::cache_write_usd(self.model.name(), tokens));
        self.start_with(SessionStartInput {
            base,
            hook_event_name: HookEvent::SessionStart,
            source: "resume".to_string(),
            model: Some(self.model.name().to_string()),
            seconds_since_last_response: facts.seconds_since_last_response,
            context_tokens: facts.context_tokens,
            prompt_cache_likely_expired: facts
                .seconds_since_last_response
                .map(|s| s >= PROMPT_CACHE_TTL_SECS),
            estimated_cache_write_usd,
        })
        .await;
    }

    /// Creates the (empty) transcript of a session that has written nothing yet, so a hook
    /// told its `transcript_path` finds the file, as it does with Claude Code.
    fn touch_transcript(&self) {
        if !self.persist {
            return;
        }
        let path = &self.config.transcript_path;
        let made = path
            .parent()
            .map_or(Ok(()), crate::private_fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map(|_| ())
            });
        if let Err(e) = made {
            self.notice(&format!(
                "cannot create the transcript {}: {e}",
                path.display()
            ));
        }
    }

    /// `/model NAME`: the following requests go to `model`. Fires PreModelSwitch (a hook may
    /// deny the switch) and, once switched, PostModelSwitch, with `requested` as the name the
    /// user typed. `Err` names why the model stays.
    pub(crate) async fn switch_model(
        &mut self,
        model: Arc<dyn Model>,
        requested: &str,
    ) -> Result<(), String> {
        let input = self.model_switch_input(model.name(), requested);
        let pre = self.fire::<PreModelSwitch>(input.clone()).await;
        if let Some(reason) = pre.denied {
            return Err(if reason.is_empty() {
                "a PreModelSwitch hook denied the switch".to_string()
            } else {
                format!("a PreModelSwitch hook denied the switch: {reason}")
            });
        }
        if let Some(prompt) = self.prompt.as_mut() {
            prompt.environment.model = model.name().to_string();
            self.system = Some(prompt.text());
        }
        self.model = Arc::clone(&model);
        self.compaction = CompactPolicy::from_env(model.name());
        for follower in &self.followers {
            follower.model_changed(&model);
        }
        let post = self
            .fire::<PostModelSwitch>(PostModelSwitchInput {
                base: self.base(HookEvent::PostModelSwitch),
                hook_event_name: HookEvent::PostModelSwitch,
                ..input
            })
            .await;
        self.pending.extend(post.common.context);
        Ok(())
    }

    /// The stdin of PreModelSwitch/PostModelSwitch for a switch to `to_model`.
    fn model_switch_input(&self, to_model: &str, requested: &str) -> PreModelSwitchInput {
        let context_tokens = self.usage.context_tokens.unwrap_or(0);
        let estimated_cache_write_usd =
            crate::agent::cost::cache_write_usd(to_model, context_tokens);
        PreModelSwitchInput {
            base: self.base(HookEvent::PreModelSwitch),
            hook_event_name: HookEvent::PreModelSwitch,
            from_model: self.model.name().to_string(),
            to_model: to_model.to_string(),
            requested_model: Some(requested.to_string()),
            source: "command".to_string(),
            context_tokens,
            prompt_cache_warm: self.usage.requests > 0,
            cache_ttl: "5m".to_string(),
            estimated_cache_write_usd,
            pricing: if estimated_cache_write_usd.is_some() {
                "configured"
            } else {
                "default"
            }
            .to_string(),
        }
    }

    /// Whether the context reached the auto-compaction threshold.
    fn context_full(&self) -> bool {
        self.compaction.auto
            && self
                .usage
                .context_tokens
                .is_some_and(|t| t >= self.compaction.threshold())
    }

    /// Sets the system prompt, and the memory files it holds (InstructionsLoaded fires for
    /// each at [`Session::start`]).
    pub(crate) fn set_instructions(&mut self, system: Option<String>, memory: Vec<MemoryFile>) {
        self.system = system;
        self.memory = memory;
    }

    /// The session's system prompt and memory files from their parts, which the session keeps
    /// to build the prompt again when the model changes.
    pub(crate) fn set_prompt(&mut self, prompt: crate::agent::instructions::Prompt) {
        self.system = Some(prompt.text());
        self.memory = prompt.memory.files.clone();
        self.prompt = Some(prompt);
    }

    /// Continues a conversation rebuilt from a transcript: its messages become the history,
    /// its undelivered context is pending, and new transcript lines chain after its last one.
    /// Call before [`Session::start_as`]`("resume")`.
    pub(crate) fn resume_from(&mut self, rebuilt: crate::agent::resume::Rebuilt) {
        self.messages = rebuilt.messages;
        self.pending = rebuilt.pending;
        self.sink.transcript.continue_after(rebuilt.last_uuid);
    }

    /// Writes no transcript (`--no-session-persistence`).
    pub(crate) fn without_transcript(&mut self) {
        self.persist = false;
        self.sink.transcript.disable();
    }

    /// The system prompt, if any.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The conversation so far, as the next request would send it.
    pub fn history(&self) -> &[Message] {
        &self.messages
    }

    /// Tokens the session took so far.
    pub fn usage(&self) -> &SessionUsage {
        &self.usage
    }

    /// The tools offered to the model now: every tool that is available (an MCP tool whose
    /// server died is left out, so the model stops calling it).
    fn offered_specs(&self) -> std::borrow::Cow<'_, [ToolSpec]> {
        if self.tools.iter().all(|t| t.available()) {
            return std::borrow::Cow::Borrowed(&self.specs);
        }
        std::borrow::Cow::Owned(
            self.tools
                .iter()
                .zip(&self.specs)
                .filter(|(t, _)| t.available())
                .map(|(_, s)| s.clone())
                .collect(),
        )
    }

    /// The session's background commands.
    #[cfg(test)]
    pub(crate) fn background_tasks(&self) -> &Arc<crate::tools::background::BackgroundTasks> {
        &self.ctx.background
    }

    /// Whether the observer gets every event of the model's replies as
    /// [`Progress::StreamEvent`] (default off).
    pub fn set_stream_events(&mut self, on: bool) {
        self.stream_events = on;
    }

    /// A person is at the terminal: the transcript's `entrypoint` is `cli` (else `sdk-cli`).
    pub fn set_attended(&self, attended: bool) {
        self.sink.transcript.set_attended(attended);
    }

    /// Lines the transcript is missing (a full disk, an I/O error), if any: the caller reports
    /// it and exits non-zero.
    pub fn transcript_fault(&self) -> Option<TranscriptFault> {
        self.sink.transcript.fault()
    }

    /// The base fields of `event`'s stdin: which optional ones it carries is a column of the
    /// spec table (`prompt_id`, `permission_mode`; spec §2.4). The tool events of the pipeline
    /// use PreToolUse's.
    fn base(&self, event: HookEvent) -> BaseInput {
        let spec = event.spec();
        let transcript = match &self.subagent {
            Some(identity) => &identity.parent_transcript,
            None => &self.config.transcript_path,
        };
        BaseInput {
            session_id: self.config.session_id.clone(),
            transcript_path: transcript.to_string_lossy().into_owned(),
            cwd: self.ctx.current_dir().to_string_lossy().into_owned(),
            prompt_id: if spec.prompt_id {
                self.prompt_id.clone()
            } else {
                None
            },
            permission_mode: spec
                .permission_mode
                .then(|| self.config.permission_mode.clone()),
            agent_id: self.subagent.as_ref().map(|s| s.agent_id.clone()),
            agent_type: self.subagent.as_ref().map(|s| s.agent_type.clone()),
            effort: spec
                .effort
                .then(|| self.model.effort())
                .flatten()
                .map(|level| Effort {
                    level: level.to_string(),
                }),
        }
    }

    async fn fire<E: Event>(&self, input: E::Input) -> E::Outcome {
        fire_observed::<E>(self.hooks.as_ref(), input, &self.sink, None).await
    }

    fn notice(&self, text: &str) {
        self.sink.observe(Progress::Notice { text });
    }

    /// Fires SessionStart (`source: startup`); its context goes in front of the first prompt,
    /// and the env files its hooks wrote are handed to the Bash tool.
    pub async fn start(&mut self) {
        self.start_as("startup").await;
    }

    /// The first SessionStart of a run, as Claude Code 2.1.328 sends it
    /// (fixtures `tests/fixtures/cc-2.1.328/interactive/`): an interactive `startup` names the
    /// model (a `-p` one does not); a `resume` (`-c`, `-r ID`) or `fork` (with
    /// `--fork-session`) carries `facts` about the resumed conversation and no model.
    pub(crate) async fn open(&mut self, source: &str, interactive: bool, facts: ResumeFacts) {
        let resumed = source == "resume" || source == "fork";
        let estimated_cache_write_usd = if resumed {
            facts
                .context_tokens
                .and_then(|tokens| crate::agent::cost::cache_write_usd(self.model.name(), tokens))
        } else {
            None
        };
        if resumed {
            self.usage.context_tokens = facts.context_tokens;
        }
        self.start_with(SessionStartInput {
            base: self.base(HookEvent::SessionStart),
            hook_event_name: HookEvent::SessionStart,
            source: source.to_string(),
            model: (interactive && source == "startup").then(|| self.model.name().to_string()),
            seconds_since_last_response: facts.seconds_since_last_response.filter(|_| resumed),
            context_tokens: facts.context_tokens.filter(|_| resumed),
            prompt_cache_likely_expired: facts
                .seconds_since_last_response
                .filter(|_| resumed)
                .map(|s| s >= PROMPT_CACHE_TTL_SECS),
            estimated_cache_write_usd,
        })
        .await;
    }

    /// [`Session::start`] with another `source`: `resume` after [`Session::resume_from`],
    /// `clear`, `compact`.
    pub(crate) async fn start_as(&mut self, source: &str) {
        self.start_with(SessionStartInput {
            base: self.base(HookEvent::SessionStart),
            hook_event_name: HookEvent::SessionStart,
            source: source.to_string(),
            model: None,
            seconds_since_last_response: None,
            context_tokens: None,
            prompt_cache_likely_expired: None,
            estimated_cache_write_usd: None,
        })
        .await;
    }

    /// Fires SessionStart with `input`, then what follows it (see [`Session::start`]).
    async fn start_with(&mut self, input: SessionStartInput) {
        let source = input.source.clone();
        let outcome = self.fire::<SessionStart>(input).await;
        self.pending.extend(outcome.common.context);
        if let Ok(mut files) = self.ctx.env_files.lock() {
            *files = self.hooks.env_files();
        }
        let reason = if source == "compact" {
            "compact"
        } else {
            "session_start"
        };
        self.announce_memory(reason).await;
        self.sink.observe(Progress::SessionStarted {
            session_id: &self.config.session_id,
            model: self.model.name(),
        });
    }

    /// Fires InstructionsLoaded for each memory file (`reason` replaces `session_start` for
    /// top-level files, e.g. `compact`; imports keep `include`).
    async fn announce_memory(&self, reason: &str) {
        for file in &self.memory {
            let load_reason = if file.load_reason == "include" {
                "include"
            } else {
                reason
            };
            self.fire::<InstructionsLoaded>(InstructionsLoadedInput {
                base: self.base(HookEvent::InstructionsLoaded),
                hook_event_name: HookEvent::InstructionsLoaded,
                file_path: file.path.to_string_lossy().into_owned(),
                memory_type: file.memory_type.to_string(),
                load_reason: load_reason.to_string(),
                parent_file_path: file
                    .parent
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
            })
            .await;
        }
    }

    fn set_line_context(&self) {
        if let Ok(mut line) = self.sink.line.lock() {
            line.prompt_id = self.prompt_id.clone();
            line.permission_mode = Some(self.config.permission_mode.clone());
            line.agent_id = self.subagent.as_ref().map(|s| s.agent_id.clone());
            line.requested_model = Some(self.model.name().to_string());
            line.effort = self.model.effort().map(str::to_string);
        }
    }

    /// Runs one prompt to the end of its turn.
    pub async fn run_prompt(&mut self, prompt: &str) -> TurnOutcome {
        self.run_turn(prompt, None).await
    }

    /// Runs a turn that tells the model how background commands ended (the `-p` session's
    /// follow-up, as Claude Code runs one per finished command): `UserPromptSubmit` sees the
    /// `<task-notification>` blocks as the prompt, the model sees them in a system reminder
    /// that says no person wrote them. `None` when no command has ended unannounced.
    pub async fn run_background_notification(&mut self) -> Option<TurnOutcome> {
        let task = self.ctx.background.take_unannounced().into_iter().next()?;
        let notification = task.notification()?;
        let text = format!("{BACKGROUND_NOTICE}\n\n{notification}");
        Some(
            self.run_turn(&notification, Some(system_reminder(&text)))
                .await,
        )
    }

    /// One turn: `prompt` is what UserPromptSubmit and the transcript see; `for_model`, when
    /// given, replaces it in the request.
    async fn run_turn(&mut self, prompt: &str, for_model: Option<ContentBlock>) -> TurnOutcome {
        let prompt_id = uuid_v4();
        self.prompt_id = Some(prompt_id.clone());
        if let Ok(mut current) = self.ctx.prompt_id.lock() {
            *current = Some(prompt_id.clone());
        }
        self.set_line_context();
        let mut outcome = TurnOutcome::begun();

        let ups = self
            .fire::<UserPromptSubmit>(UserPromptSubmitInput {
                base: self.base(HookEvent::UserPromptSubmit),
                hook_event_name: HookEvent::UserPromptSubmit,
                prompt: prompt.to_string(),
            })
            .await;
        if ups.blocked_text.is_some() || ups.block.is_some() {
            let text = ups.blocked_text.clone().unwrap_or_else(|| {
                format!(
                    "UserPromptSubmit operation blocked by hook:\n{}\n\nOriginal prompt: {prompt}",
                    ups.block.clone().unwrap_or_default()
                )
            });
            outcome.result = text.clone();
            outcome.end = TurnEnd::PromptBlocked { text };
            return outcome;
        }
        if ups.common.stop_loop {
            outcome.end = TurnEnd::Stopped {
                reason: ups.common.stop_reason.clone(),
            };
            return outcome;
        }

        self.sink.observe(Progress::Prompt {
            prompt_id: &prompt_id,
            text: prompt,
        });
        let mut content: Vec<ContentBlock> = self
            .pending
            .drain(..)
            .map(|t| system_reminder(&t))
            .collect();
        content.push(for_model.unwrap_or_else(|| ContentBlock::Text {
            text: prompt.to_string(),
        }));
        content.extend(ups.common.context.iter().map(|t| system_reminder(t)));
        match self.messages.last_mut() {
            // After a stopped tool call the prompt joins the user message of its results, as
            // Claude Code sends it.
            Some(last) if ends_in_interruption(last) => last.content.extend(content),
            Some(_) | None => self.messages.push(Message {
                role: Role::User,
                content,
            }),
        }

        self.turn_loop(&mut outcome).await;
        outcome
    }

    /// Pending and async context, merged into the last user message.
    fn deliver_pending(&mut self) {
        let mut entries: Vec<String> = self.pending.drain(..).collect();
        entries.extend(self.hooks.take_async_context());
        // Background commands that ended while the model was working (or, interactively,
        // while the person was typing): told at the next request.
        entries.extend(
            self.ctx
                .background
                .take_unannounced()
                .iter()
                .filter_map(|t| t.notification())
                .map(|n| format!("{BACKGROUND_NOTICE}\n\n{n}")),
        );
        if entries.is_empty() {
            return;
        }
        let blocks = entries.iter().map(|t| system_reminder(t));
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(blocks),
            Some(_) | None => self.messages.push(Message {
                role: Role::User,
                content: blocks.collect(),
            }),
        }
    }

    async fn turn_loop(&mut self, outcome: &mut TurnOutcome) {
        let mut stop_hook_active = false;
        let mut stop_blocks: u32 = 0;
        loop {
            if let Some(max) = self.config.max_turns
                && outcome.num_turns >= max
            {
                outcome.end = TurnEnd::MaxTurns;
                return;
            }
            if self.context_full() {
                self.compact("auto", None).await;
            }
            self.deliver_pending();
            let specs = self.offered_specs();
            let sink = &self.sink;
            let on_text = move |text: &str| sink.observe(Progress::TextDelta { text });
            let streamed = std::sync::atomic::AtomicBool::new(false);
            let on_event = |event: &serde_json::Value| {
                streamed.store(true, std::sync::atomic::Ordering::Relaxed);
                sink.observe(Progress::StreamEvent { event });
            };
            let request = Request {
                system: self.system.as_deref(),
                messages: &self.messages,
                tools: &specs,
                on_text: Some(&on_text),
                on_event: if self.stream_events {
                    Some(&on_event)
                } else {
                    None
                },
            };
            self.sink.observe(Progress::RequestStarted);
            let response = match self.model.respond(request).await {
                Ok(r) => {
                    // A model that does not stream (the mock, an embedder's own): its reply's
                    // events, built whole, before the reply.
                    if self.stream_events && !streamed.load(std::sync::atomic::Ordering::Relaxed) {
                        crate::agent::providers::events::replay(&r, &|event| {
                            sink.observe(Progress::StreamEvent { event })
                        });
                    }
                    r
                }
                Err(err) => {
                    self.fire::<StopFailure>(StopFailureInput {
                        base: self.base(HookEvent::StopFailure),
                        hook_event_name: HookEvent::StopFailure,
                        error: err.kind.as_str().to_string(),
                        error_details: Some(err.message.clone()),
                        last_assistant_message: if outcome.result.is_empty() {
                            None
                        } else {
                            Some(outcome.result.clone())
                        },
                    })
                    .await;
                    outcome.end = TurnEnd::ModelFailed(err);
                    return;
                }
            };
            outcome.num_turns += 1;
            outcome.model_stop_reason = Some(response.stop_reason);
            self.usage.record(&response.model, response.usage.as_ref());
            if response.usage.is_none() && self.compaction.auto && !self.blind_noticed {
                self.blind_noticed = true;
                self.notice(&format!(
                    "The model provider reported no token usage, so rein cannot tell how full \
                     the context of {} is: automatic compaction is off for this session \
                     (/compact still works).",
                    response.model
                ));
            }
            if let Some(usage) = &response.usage {
                outcome.usage.add(usage);
                add_model_usage(&mut outcome.model_usage, &response.model, usage);
            }
            self.sink.observe(Progress::Assistant {
                response: &response,
            });
            let text = response_text(&response);
            if !text.is_empty() {
                outcome.result = text.clone();
            }
            let calls: Vec<ToolCall> = response
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    }),
                    ContentBlock::Text { .. } | ContentBlock::ToolResult { .. } => None,
                })
                .collect();
            self.messages.push(Message {
                role: Role::Assistant,
                content: response.content.clone(),
            });

            if !calls.is_empty() {
                if let Some(end) = self.run_calls(&calls, outcome).await {
                    outcome.end = end;
                    return;
                }
                continue;
            }
            if text.trim().is_empty() {
                // Why: exit 0 with nothing printed would otherwise look like rein lost the answer.
                self.notice(&format!(
                    "The model ({}) sent an empty reply: no text and no tool calls.",
                    self.model.name()
                ));
            }

            let (common, feedback) = self.fire_stop(stop_hook_active, text).await;
            if common.stop_loop {
                outcome.end = TurnEnd::Stopped {
                    reason: common.stop_reason.clone(),
                };
                return;
            }
            if feedback.is_none() && common.context.is_empty() {
                outcome.end = TurnEnd::Completed;
                return;
            }
            if stop_blocks >= self.config.stop_block_cap {
                let event = if self.subagent.is_some() {
                    "SubagentStop"
                } else {
                    "Stop"
                };
                self.notice(&format!(
                    "{event} hooks kept the turn going {} times in a row; ending the turn \
                     (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises the limit)",
                    self.config.stop_block_cap
                ));
                outcome.end = TurnEnd::Completed;
                outcome.stop_capped = true;
                return;
            }
            stop_blocks += 1;
            stop_hook_active = true;
            let mut content = Vec::new();
            if let Some(text) = feedback {
                content.push(ContentBlock::Text { text });
            }
            content.extend(common.context.iter().map(|t| system_reminder(t)));
            let message = Message {
                role: Role::User,
                content,
            };
            self.sink.observe(Progress::Feedback { message: &message });
            self.messages.push(message);
        }
    }

    /// Stop's `background_tasks`: the background commands still running.
    fn running_background(&self) -> Vec<serde_json::Value> {
        self.ctx
            .background
            .running()
            .iter()
            .map(|t| t.stop_entry())
            .collect()
    }

    /// Fires Stop, or SubagentStop in a subagent; the shared part of the outcome and the
    /// feedback the turn continues with, if any.
    async fn fire_stop(
        &self,
        stop_hook_active: bool,
        text: String,
    ) -> (crate::hooks::events::Common, Option<String>) {
        if let Some(identity) = &self.subagent {
            let stop = self
                .fire::<SubagentStop>(SubagentStopInput {
                    base: self.base(HookEvent::SubagentStop),
                    hook_event_name: HookEvent::SubagentStop,
                    stop_hook_active,
                    agent_transcript_path: self
                        .config
                        .transcript_path
                        .to_string_lossy()
                        .into_owned(),
                    last_assistant_message: Some(text),
                    background_tasks: self.running_background(),
                    session_crons: Vec::new(),
                })
                .await;
            let _ = identity;
            return (stop.common, stop.feedback);
        }
        let stop = self
            .fire::<Stop>(StopInput {
                base: self.base(HookEvent::Stop),
                hook_event_name: HookEvent::Stop,
                stop_hook_active,
                last_assistant_message: Some(text),
                background_tasks: self.running_background(),
                session_crons: Vec::new(),
            })
            .await;
        let feedback = stop.feedback.clone().or_else(|| {
            stop.block
                .as_ref()
                .map(|b| format!("Stop hook feedback:\n{b}"))
        });
        (stop.common, feedback)
    }

    /// Runs one assistant message's calls in order, then PostToolBatch; appends the results.
    /// `Some(end)` when the loop must stop.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        outcome: &mut TurnOutcome,
    ) -> Option<TurnEnd> {
        let base = self.base(HookEvent::PreToolUse);
        let pipeline = ToolPipeline {
            hooks: self.hooks.as_ref(),
            tools: &self.tools,
            gate: self.gate.as_ref(),
            ctx: &self.ctx,
            observer: &self.sink,
        };
        let mut reports = Vec::with_capacity(calls.len());
        let mut end = None;
        let mut next = 0;
        'calls: while next < calls.len() {
            // Consecutive Agent calls run concurrently (each subagent isolated, each through
            // the whole gate); every other call runs alone, in order.
            let group = if is_agent_call(&calls[next].name) {
                calls[next..]
                    .iter()
                    .take_while(|c| is_agent_call(&c.name))
                    .count()
            } else {
                1
            };
            // The base is rebuilt per call: a Bash `cd` changes the `cwd` later hooks see.
            let mut call_base = base.clone();
            call_base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
            let group_reports = futures_util::future::join_all(
                calls[next..next + group]
                    .iter()
                    .map(|call| pipeline.run(call, &call_base)),
            )
            .await;
            next += group;
            for report in group_reports {
                if report.status == CallStatus::Refused {
                    outcome.denials.push(Denial {
                        tool_name: report.tool_name.clone(),
                        tool_use_id: report.tool_use_id.clone(),
                        tool_input: report.input.clone(),
                    });
                }
                let deferred = report.status == CallStatus::Deferred;
                let stop = report.stop_loop;
                let reason = report.stop_reason.clone();
                reports.push(report);
                if deferred {
                    end = Some(TurnEnd::Deferred);
                    break 'calls;
                }
                if stop && end.is_none() {
                    end = Some(TurnEnd::Stopped { reason });
                }
            }
        }
        let batch = if matches!(end, Some(TurnEnd::Deferred)) {
            None
        } else {
            let mut batch_base = base;
            batch_base.cwd = self.ctx.current_dir().to_string_lossy().into_owned();
            Some(pipeline.batch(&reports, &batch_base).await)
        };

        let mut content: Vec<ContentBlock> = reports
            .iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.tool_use_id.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            })
            .collect();
        // Calls after a deferred one never ran; the API still needs a result for each.
        for call in calls.iter().skip(reports.len()) {
            content.push(ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                content: "Not run: an earlier tool call in this message was deferred".to_string(),
                is_error: true,
            });
        }
        for r in &reports {
            self.pending.extend(r.context.iter().cloned());
        }
        if let Some(batch) = batch {
            self.pending.extend(batch.context);
            if batch.stop_loop && end.is_none() {
                end = Some(TurnEnd::Stopped {
                    reason: batch.stop_reason,
                });
            }
        }
        self.messages.push(Message {
            role: Role::User,
            content,
        });
        if let Some(TurnEnd::Deferred) = end {
            outcome.result = String::new();
        }
        end
    }

    /// Records that rein was interrupted (SIGINT/SIGTERM) while the turn was running: each tool
    /// call of the last assistant message that has no result yet gets an error result
    /// [`INTERRUPTED_TOOL_USE`] — in the transcript and in the history — so the record never
    /// ends on an unanswered `tool_use`. The call's future was already dropped, which killed its
    /// process group; no PostToolUse/PostToolUseFailure hook fires for it (rule documented in
    /// docs/reliability.md). Call it before [`Session::end`].
    /// Returns how many calls it answered so.
    pub(crate) fn interrupted(&mut self) -> usize {
        let outstanding = match self.sink.outstanding.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(_) => Vec::new(),
        };
        if outstanding.is_empty() {
            return 0;
        }
        let mut content = Vec::with_capacity(outstanding.len());
        for (id, name) in &outstanding {
            self.sink.observe(Progress::ToolResult {
                tool_use_id: id,
                name,
                content: INTERRUPTED_TOOL_USE,
                is_error: true,
                status: CallStatus::Interrupted,
                response: None,
            });
            content.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: INTERRUPTED_TOOL_USE.to_string(),
                is_error: true,
            });
        }
        self.messages.push(Message {
            role: Role::User,
            content,
        });
        outstanding.len()
    }

    /// Adds `text` to the conversation as the user's (after an interrupted turn, the note the
    /// model reads next time), without a transcript line.
    pub(crate) fn note_for_model(&mut self, text: &str) {
        let block = ContentBlock::Text {
            text: text.to_string(),
        };
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(block),
            Some(_) | None => self.messages.push(Message {
                role: Role::User,
                content: vec![block],
            }),
        }
    }

    /// The person stopped the turn (Ctrl+C at the terminal) while tool calls ran: as Claude
    /// Code 2.1.328 does, no hook fires for them (their process groups are already gone);
    /// each unanswered call gets the result [`STOPPED_TOOL_RESULT`] and a text block
    /// `[Request interrupted by user for tool use]` follows in the same user message (in the
    /// transcript too). The next prompt joins that message.
    ///
    /// Stopped while the model's reply streamed and no tool ran (run5 of the fixture): no hook
    /// fires (no Stop, no StopFailure); the text streamed so far stays in the conversation as
    /// the assistant's (its transcript line has `stop_reason: null`), then a user text
    /// `[Request interrupted by user]` that the next prompt joins.
    pub(crate) fn stopped_by_user(&mut self) {
        let outstanding = match self.sink.outstanding.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(_) => Vec::new(),
        };
        let streaming = match self.sink.streaming.lock() {
            Ok(mut s) => s.take(),
            Err(_) => None,
        };
        if outstanding.is_empty() {
            if let Some(partial) = streaming {
                self.stopped_while_streaming(partial);
            }
            return;
        }
        let mut content = Vec::with_capacity(outstanding.len() + 1);
        for (id, name) in &outstanding {
            self.sink.observe(Progress::ToolResult {
                tool_use_id: id,
                name,
                content: STOPPED_TOOL_RESULT,
                is_error: true,
                status: CallStatus::Interrupted,
                response: None,
            });
            content.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: STOPPED_TOOL_RESULT.to_string(),
                is_error: true,
            });
        }
        let note = format!("{INTERRUPTED_TOOL_USE}\n");
        self.sink.transcript.user_text(&self.sink.line(), &note);
        content.push(ContentBlock::Text { text: note });
        self.messages.push(Message {
            role: Role::User,
            content,
        });
    }

    /// See [`Session::stopped_by_user`]: `partial` is the reply's text streamed so far.
    fn stopped_while_streaming(&mut self, partial: String) {
        let ctx = self.sink.line();
        if !partial.is_empty() {
            let content = vec![ContentBlock::Text { text: partial }];
            self.sink.transcript.interrupted_assistant(
                &ctx,
                &ModelResponse {
                    id: None,
                    model: self.model.name().to_string(),
                    content: content.clone(),
                    stop_reason: StopReason::EndTurn,
                    usage: None,
                },
            );
            self.messages.push(Message {
                role: Role::Assistant,
                content,
            });
        }
        let note = format!("{INTERRUPTED_BY_USER}\n");
        self.sink.transcript.user_text(&ctx, &note);
        self.note_for_model(&note);
    }

    /// Fires SessionEnd with `reason` as its input's `reason` (`other`, `logout`,
    /// `prompt_input_exit`, …) within its time budget, then ends the hooks still running in
    /// the background. Runs once; later calls do nothing.
    pub async fn end(&mut self, reason: &str) {
        self.end_unless(reason, std::future::pending::<String>())
            .await;
    }

    /// [`Session::end`], cut short when `cancel` completes first: the SessionEnd hooks still
    /// running are cancelled at once (their process groups killed) and the notice names what
    /// `cancel` returned (`a second SIGINT`, say).
    pub(crate) async fn end_unless(&mut self, reason: &str, cancel: impl Future<Output = String>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let budget = self.config.session_end_budget;
        let input = SessionEndInput {
            base: self.base(HookEvent::SessionEnd),
            hook_event_name: HookEvent::SessionEnd,
            reason: reason.to_string(),
        };
        // Why no own failure text: the engine renders `SessionEnd hook [<cmd>] failed: …` into
        // the decision's user messages, which `fire` already shows.
        let cut_short = tokio::select! {
            finished = tokio::time::timeout(budget, self.fire::<SessionEnd>(input)) => finished.err().map(|_| {
                format!(
                    "SessionEnd hooks did not finish within {} ms and were cancelled",
                    budget.as_millis()
                )
            }),
            what = cancel => Some(format!("SessionEnd hooks were cancelled by {what}")),
        };
        if let Some(notice) = cut_short {
            self.notice(&notice);
        }
        // Background commands end with their session (the CLI has already waited for them
        // where Claude Code does); a library caller gets the same.
        self.ctx.background.stop_all().await;
        self.hooks.shutdown().await;
    }
}
