//! A session: its id, SessionStart/SessionEnd, and the turn loop for each prompt —
//! UserPromptSubmit, model requests, the tool pipeline, Stop (with its block cap) and
//! StopFailure.
//!
//! Model-facing hook texts are system notes ([`ContentBlock::SystemNote`]) of the next user
//! message, sent after its prompt or tool results, where Claude Code 2.1.328 sends its
//! system-role entries. Other harness texts (background notices, Stop's additional context,
//! a command's files) are `<system-reminder>` texts in their place in the user message, as
//! Claude Code sends those.

mod command;
mod compaction;
mod interruption;
mod lifecycle;
mod model_switch;
mod sink;
mod switching;
mod tool_round;
mod turn;

use sink::{Held, Sink};

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
use crate::hooks::events::message_display::MessageDisplayInput;
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
use crate::hooks::events::{
    MessageDisplay, PostCompact, PostModelSwitch, PreCompact, PreModelSwitch,
};
use crate::hooks::host::{HookHost, fire_observed};
use crate::hooks::spec::HookEvent;
use crate::id::uuid_v4;
use crate::model::{
    ContentBlock, Message, Model, ModelError, ModelResponse, Request, Role, StopReason, ToolSpec,
    Usage,
};
use crate::pipeline::{CallStatus, PermissionGate, ToolCall, ToolPipeline};
use crate::progress::{HookReport, Observer, Progress};
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
    /// The session's cost reached `--max-budget-usd` (this many dollars).
    BudgetReached(f64),
}

/// The result of one prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// Why the turn ended.
    pub end: TurnEnd,
    /// The last assistant text.
    pub result: String,
    /// Turns as Claude Code 2.1.328 counts them in its `result`: one per assistant message, and
    /// one per tool call for a message with several (fixtures `two_calls`, `three_rounds`,
    /// `text_and_call` in `tests/fixtures/cc-2.1.328/`), less one per Stop continuation that
    /// brought context only, no feedback (fixture `ctx_place2`: Claude Code counts the user
    /// lines of the conversation, and that context is an attachment).
    pub num_turns: u32,
    /// Model requests made for this prompt (what `--max-turns` limits, as in Claude Code:
    /// fixture `two_calls_max2`).
    pub requests: u32,
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
    /// Time spent waiting for the model's replies, milliseconds (`duration_api_ms`).
    pub api_ms: u64,
}

impl TurnOutcome {
    /// A turn that has not yet made a request: completed, nothing said, nothing spent.
    pub(super) fn begun() -> TurnOutcome {
        TurnOutcome {
            end: TurnEnd::Completed,
            result: String::new(),
            num_turns: 0,
            requests: 0,
            model_stop_reason: None,
            stop_capped: false,
            denials: Vec::new(),
            usage: Usage::default(),
            model_usage: Vec::new(),
            api_ms: 0,
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
    /// The last request's tokens, when its provider reported them.
    pub last: Option<Usage>,
    /// Time spent waiting for the model's replies, milliseconds.
    pub api_ms: u64,
    /// Lines the file tools added and removed ([`changed_lines`]).
    pub lines_added: u64,
    pub lines_removed: u64,
}

impl SessionUsage {
    pub(super) fn record(&mut self, model: &str, usage: Option<&Usage>) {
        self.requests += 1;
        let Some(usage) = usage else {
            self.unreported += 1;
            return;
        };
        self.total.add(usage);
        self.last = Some(*usage);
        add_model_usage(&mut self.by_model, model, usage);
        self.context_tokens = Some(usage.prompt_tokens() + usage.output_tokens);
    }
}

/// The lines a successful file tool call added and removed, from its `tool_response`: the
/// `+`/`-` lines of `structuredPatch`, or every line of a new file's `content` (Write's
/// `create`). Other tools change none.
pub fn changed_lines(tool_name: &str, response: &serde_json::Value) -> (u64, u64) {
    if !matches!(tool_name, "Edit" | "Write" | "MultiEdit") {
        return (0, 0);
    }
    if response.get("type").and_then(serde_json::Value::as_str) == Some("create") {
        let content = response
            .get("content")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        return (content.lines().count() as u64, 0);
    }
    let (mut added, mut removed) = (0, 0);
    let hunks = response
        .get("structuredPatch")
        .and_then(serde_json::Value::as_array);
    for line in hunks
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("lines").and_then(serde_json::Value::as_array))
        .flatten()
        .filter_map(serde_json::Value::as_str)
    {
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

fn add_model_usage(list: &mut Vec<(String, Usage)>, model: &str, usage: &Usage) {
    match list.iter_mut().find(|(m, _)| m == model) {
        Some((_, u)) => u.add(usage),
        None => list.push((model.to_string(), *usage)),
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
    /// Allow rules of this turn: the `allowed-tools` of the command that started it and of
    /// each skill the model started in it (Claude Code 2.1.328 lets them allow the model's
    /// later calls: fixtures `cmd_allowed`, `sk_allowed`). Cleared when a prompt begins.
    turn_grants: Vec<String>,
    prompt_id: Option<String>,
    /// The prompt's turn as MessageDisplay hooks know it (`turn_id`: one UUID per prompt).
    turn_id: String,
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
    /// `--max-budget-usd`: the session stops asking the model once its cost reaches this.
    max_budget_usd: Option<f64>,
    /// `--fallback-model`: taken (once) when the model is overloaded.
    fallback: Option<Arc<dyn Model>>,
    /// The slash commands and skills a prompt `/name` runs ([`crate::commands`]).
    catalog: Option<Arc<crate::commands::Catalog>>,
    /// Builds the provider with another model id: a command's `model` runs its turn on it.
    model_factory: Option<crate::agent::subagent::ModelFactory>,
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
    /// The session's permission mode is `mode` from now on (the Agent SDK's
    /// `set_permission_mode`).
    fn permission_mode_changed(&self, mode: &str) {
        let _ = mode;
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

/// A hook's model-facing text (its context, a blocking error the model is told about), sent in
/// the system role: see [`ContentBlock::SystemNote`].
pub fn system_note(text: &str) -> ContentBlock {
    ContentBlock::SystemNote {
        text: text.to_string(),
    }
}

/// Wraps a model-facing harness text in the user message (a background command's notice, a
/// file a command mentions, an agent's instructions), as Claude Code 2.1.328 sends those.
pub fn system_reminder(text: &str) -> ContentBlock {
    ContentBlock::Text {
        text: crate::model::reminder_text(text),
    }
}

/// All text blocks of a response, joined by newlines.
pub fn response_text(response: &ModelResponse) -> String {
    let parts: Vec<&str> = response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolUse { .. }
            | ContentBlock::SystemNote { .. }
            | ContentBlock::ToolResult { .. } => None,
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
        ctx.set_mode(&config.permission_mode);
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
            turn_grants: Vec::new(),
            prompt_id: None,
            turn_id: String::new(),
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
            max_budget_usd: None,
            fallback: None,
            catalog: None,
            model_factory: None,
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
            // The subagent's transcript keeps SubagentStart's context as the reminders an
            // isMeta line holds (no hook attachment of its own records it there).
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
            .chain(context.iter().map(|t| system_note(t)))
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

    /// The id of the prompt being (or last) run; `None` before the first.
    pub fn prompt_id(&self) -> Option<&str> {
        self.prompt_id.as_deref()
    }

    /// The effort level sent to the model, if any.
    pub fn effort(&self) -> Option<&str> {
        self.model.effort()
    }

    /// The context window the session compacts by, in tokens.
    pub fn context_window(&self) -> u64 {
        self.compaction.window
    }

    /// The working directory the tools are in now (a Bash `cd` moves it).
    pub fn current_dir(&self) -> PathBuf {
        self.ctx.current_dir()
    }

    /// Whether the context reached the auto-compaction threshold.
    pub(super) fn context_full(&self) -> bool {
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

    /// The slash commands and skills of this session: a prompt `/name args` runs one (the
    /// Skill tool's description tells the model which it may run).
    pub(crate) fn set_commands(&mut self, catalog: Arc<crate::commands::Catalog>) {
        self.catalog = Some(catalog);
    }

    /// The session's system prompt and memory files from their parts, which the session keeps
    /// to build the prompt again when the model changes.
    pub(crate) fn set_prompt(&mut self, prompt: crate::agent::instructions::Prompt) {
        self.system = Some(prompt.text());
        self.memory = prompt.memory.files.clone();
        self.prompt = Some(prompt);
    }

    /// How to build the provider with another model id (`None`, the mock: one model only).
    pub(crate) fn set_model_factory(
        &mut self,
        factory: Option<crate::agent::subagent::ModelFactory>,
    ) {
        self.model_factory = factory;
    }

    /// The output style for the following requests (`None`: rein's own prompt alone);
    /// `false` when the session was given its whole system prompt, which no style changes.
    pub(crate) fn set_output_style(
        &mut self,
        style: Option<crate::agent::output_style::OutputStyle>,
    ) -> bool {
        let Some(prompt) = self.prompt.as_mut() else {
            return false;
        };
        if prompt.options.replace.is_some() {
            return false;
        }
        prompt.options.output_style = style;
        self.system = Some(prompt.text());
        true
    }

    /// The output style the following requests use.
    pub(crate) fn output_style(&self) -> Option<&crate::agent::output_style::OutputStyle> {
        self.prompt.as_ref()?.options.output_style.as_ref()
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
    pub(super) fn offered_specs(&self) -> std::borrow::Cow<'_, [ToolSpec]> {
        let offered =
            |t: &Arc<dyn Tool>| t.available() && (!t.deferred() || self.ctx.is_loaded(t.name()));
        if self.tools.iter().all(offered) {
            return std::borrow::Cow::Borrowed(&self.specs);
        }
        std::borrow::Cow::Owned(
            self.tools
                .iter()
                .zip(&self.specs)
                .filter(|(t, _)| offered(t))
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

    /// Stops the session's turns once its model cost reaches `usd` (`--max-budget-usd`, the
    /// Agent SDK's `max_budget_usd`): checked after each reply, before its tool calls run, and
    /// before each request. A model without prices costs nothing here.
    pub fn set_max_budget_usd(&mut self, usd: Option<f64>) {
        self.max_budget_usd = usd;
    }

    /// The budget, when the session's cost has reached it.
    pub(super) fn budget_reached(&self) -> Option<f64> {
        let budget = self.max_budget_usd?;
        let spent = crate::agent::cost::total_usd(&self.usage.by_model);
        (spent >= budget).then_some(budget)
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
    pub(super) fn base(&self, event: HookEvent) -> BaseInput {
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

    pub(super) async fn fire<E: Event>(&self, input: E::Input) -> E::Outcome {
        fire_observed::<E>(self.hooks.as_ref(), input, &self.sink, None).await
    }
}
