//! The `Tool` trait and the built-in tools with Claude Code's names and JSON shapes (spec §7).

pub mod ask_user;
pub(crate) mod atomic_write;
pub(crate) mod background;
pub mod bash;
pub(crate) mod bounded_read;
pub(crate) mod device_guard;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod input;
mod newest;
pub mod notebook_edit;
pub mod patch;
pub mod plan_mode;
pub mod read;
pub mod skill;
pub mod structured_output;
pub mod task_stop;
pub mod tool_search;
pub mod web;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// The paragraph every built-in tool's description ends with: what a refusal by a hook, a
/// permission rule or the permission mode looks like to the model, and what to do about it.
/// A macro so each description stays one `concat!`-ed constant.
macro_rules! refusal_note {
    () => {
        "\n\nHooks and permissions: the user's hooks and permission rules check every call \
         before it runs, and a hook may rewrite the input first (the result is for the call as \
         it ran). A refused call did not run; its result is an error that says who refused it \
         and why. Do not send the same call again: respect the reason, do the task another way, \
         or ask the user."
    };
}
pub(crate) use refusal_note;

/// The JSON Schema dialect of the built-in tools' input schemas (Claude Code 2.1.328 sends the
/// same `$schema`).
pub const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A boxed future, so tools can live behind `dyn Tool`.
pub use crate::future::BoxFuture;

tokio::task_local! {
    /// The id of the tool call being executed: the pipeline sets it around
    /// [`Tool::execute`], so a tool can name the call that started something it keeps
    /// (a background command's `<tool-use-id>`).
    static CALL_ID: String;
}

/// Runs `work` (a tool's execution) as the call `id`; see [`current_call_id`].
pub(crate) async fn as_call<F: std::future::Future>(id: String, work: F) -> F::Output {
    CALL_ID.scope(id, work).await
}

/// The id of the tool call being executed, when running inside the pipeline.
pub(crate) fn current_call_id() -> Option<String> {
    CALL_ID.try_with(Clone::clone).ok()
}

/// Session state a tool may read or change.
#[derive(Debug)]
pub struct ToolContext {
    /// The project root.
    pub project_dir: PathBuf,
    /// The working directory; the Bash tool persists `cd` here between calls.
    pub cwd: Mutex<PathBuf>,
    /// Files written by SessionStart hooks through `CLAUDE_ENV_FILE`; Bash sources them first.
    pub env_files: Mutex<Vec<PathBuf>>,
    /// Extra environment for commands (settings `env`, then the session's variables; see
    /// [`crate::hooks::environment::bash_env`]).
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment before `env` is applied.
    pub env_remove: Vec<String>,
    /// Files whose current content the model has been shown this session (read, or written
    /// whole); an Edit of any other file reports `contentNotInModelContext`, as Claude Code
    /// does. Shared by the context's snapshots (the set is the session's, not a value).
    pub in_context: Arc<Mutex<std::collections::HashSet<PathBuf>>>,
    /// The session's background commands (Bash `run_in_background`), shared with `TaskStop`
    /// and with whoever ends the session.
    pub background: Arc<background::BackgroundTasks>,
    /// Where a Bash output over the inline cap is saved (the session's `tool-results`
    /// directory); the system temp directory when `None`.
    pub output_dir: Option<PathBuf>,
    /// The id of the prompt being processed (the session sets it; a subagent's hooks carry
    /// its parent's).
    pub prompt_id: Mutex<Option<String>>,
    /// Files the permission rules forbid reading (`true`: denied): Grep and Glob leave them
    /// out of what they return. `None`: nothing is filtered.
    pub read_filter: Option<ReadFilter>,
    /// Text blocks a tool sends the model right after its result (the Skill tool's
    /// instructions), by call id; the session takes them when it writes the results.
    follow_ups: Mutex<Vec<(String, String)>>,
    /// The deferred tools the model has loaded with ToolSearch (shared by the snapshots: a
    /// tool loaded once is loaded for the session).
    pub loaded_tools: tool_search::Loaded,
    /// The session's permission mode now (the session keeps it; shared by the snapshots).
    pub permission_mode: Arc<Mutex<String>>,
    /// The file plan mode's plan is written to (`<session dir>/plan.md`); `None`: no plan mode
    /// tools in this session.
    pub plan_file: Option<PathBuf>,
    /// A mode a tool's call switches the session to (EnterPlanMode, ExitPlanMode); the
    /// pipeline applies it before PostToolUse.
    mode_request: Mutex<Option<String>>,
}

/// Whether a path is denied to read (see [`ToolContext::read_filter`]).
#[derive(Clone)]
pub struct ReadFilter(pub Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl ReadFilter {
    /// Whether `path` is denied.
    pub fn denies(&self, path: &Path) -> bool {
        (self.0)(path)
    }
}

impl std::fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadFilter")
    }
}

impl ToolContext {
    pub fn new(project_dir: PathBuf) -> ToolContext {
        ToolContext {
            cwd: Mutex::new(project_dir.clone()),
            project_dir,
            env_files: Mutex::new(Vec::new()),
            env: Vec::new(),
            env_remove: Vec::new(),
            in_context: Arc::default(),
            background: Arc::new(background::BackgroundTasks::new()),
            output_dir: None,
            prompt_id: Mutex::new(None),
            read_filter: None,
            follow_ups: Mutex::new(Vec::new()),
            loaded_tools: tool_search::Loaded::default(),
            permission_mode: Arc::new(Mutex::new("default".to_string())),
            plan_file: None,
            mode_request: Mutex::new(None),
        }
    }

    /// The session's permission mode now.
    pub fn mode(&self) -> String {
        match self.permission_mode.lock() {
            Ok(m) => m.clone(),
            Err(_) => "default".to_string(),
        }
    }

    /// Records the session's permission mode (the session calls it whenever it changes).
    pub fn set_mode(&self, mode: &str) {
        if let Ok(mut m) = self.permission_mode.lock() {
            *m = mode.to_string();
        }
    }

    /// Asks that the session go on in `mode` once the running call is done.
    pub fn request_mode(&self, mode: &str) {
        if let Ok(mut r) = self.mode_request.lock() {
            *r = Some(mode.to_string());
        }
    }

    /// The mode a call asked for, taken.
    pub fn take_mode_request(&self) -> Option<String> {
        self.mode_request.lock().ok().and_then(|mut r| r.take())
    }

    /// A copy for work that must own its context (a tool's `prepare` on a blocking thread, a
    /// subagent): the same values, the same background commands and read set. Paid on every
    /// tool call, so what grows with the session is shared, not copied.
    pub fn snapshot(&self) -> ToolContext {
        ToolContext {
            project_dir: self.project_dir.clone(),
            cwd: Mutex::new(self.current_dir()),
            env_files: Mutex::new(match self.env_files.lock() {
                Ok(files) => files.clone(),
                Err(_) => Vec::new(),
            }),
            env: self.env.clone(),
            env_remove: self.env_remove.clone(),
            in_context: Arc::clone(&self.in_context),
            background: Arc::clone(&self.background),
            output_dir: self.output_dir.clone(),
            prompt_id: Mutex::new(match self.prompt_id.lock() {
                Ok(id) => id.clone(),
                Err(_) => None,
            }),
            read_filter: self.read_filter.clone(),
            // A copy's tools answer for their own calls.
            follow_ups: Mutex::new(Vec::new()),
            loaded_tools: Arc::clone(&self.loaded_tools),
            permission_mode: Arc::clone(&self.permission_mode),
            plan_file: self.plan_file.clone(),
            mode_request: Mutex::new(None),
        }
    }

    /// Whether a deferred tool has been loaded this session.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.loaded_tools
            .lock()
            .map(|set| set.contains(name))
            .unwrap_or(false)
    }

    /// Sends `text` to the model as a text block right after the result of the call being
    /// executed (outside the pipeline: dropped).
    pub fn follow_up(&self, text: String) {
        if let (Some(id), Ok(mut list)) = (current_call_id(), self.follow_ups.lock()) {
            list.push((id, text));
        }
    }

    /// The follow-up texts of `call_id`, taken.
    pub fn take_follow_ups(&self, call_id: &str) -> Vec<String> {
        let Ok(mut list) = self.follow_ups.lock() else {
            return Vec::new();
        };
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *list)
            .into_iter()
            .partition(|(id, _)| id == call_id);
        *list = rest;
        mine.into_iter().map(|(_, text)| text).collect()
    }

    /// Records that the model has seen the current content of `path`.
    pub fn mark_in_context(&self, path: &str) {
        if let Ok(mut set) = self.in_context.lock() {
            set.insert(PathBuf::from(path));
        }
    }

    /// Whether the model has seen the current content of `path` this session.
    pub fn is_in_context(&self, path: &str) -> bool {
        self.in_context
            .lock()
            .map(|set| set.contains(std::path::Path::new(path)))
            .unwrap_or(false)
    }

    /// The current working directory (the project dir if the lock was poisoned).
    pub fn current_dir(&self) -> PathBuf {
        match self.cwd.lock() {
            Ok(cwd) => cwd.clone(),
            Err(_) => self.project_dir.clone(),
        }
    }
}

/// How a tool call ended. Never a panic, never an `Err` that unwinds into the loop.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// `response` is the structured `tool_response` hooks see; `content` what the model sees.
    Success { response: Value, content: String },
    /// `error` is both PostToolUseFailure's `error` and the model-facing error text.
    Failure { error: String, is_interrupt: bool },
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model and matchers see (`Bash`, `Read`, …).
    fn name(&self) -> &str;
    /// Former names a model may still call it by (`KillShell` for `TaskStop`); hooks and
    /// rules see [`Tool::name`].
    fn aliases(&self) -> &[&str] {
        &[]
    }
    /// The description sent to the model.
    fn description(&self) -> &str;
    /// JSON Schema of the input, sent to the model.
    fn input_schema(&self) -> Value;
    /// Validates and normalises a model-sent input (absolute `file_path`, schema defaults such
    /// as Edit's `replace_all: false`). `Err` is the model-facing error; no hook fires for it.
    fn prepare(&self, input: Value, ctx: &ToolContext) -> Result<Value, String>;
    /// Whether [`Tool::prepare`] may touch the file system (stat, open, read). Such a prepare
    /// runs on a blocking thread, so a hung file system cannot hold the session; one that only
    /// checks the JSON it was given runs in place and saves the thread hop on every call.
    fn prepare_touches_files(&self) -> bool {
        true
    }
    /// Runs the call with a prepared input.
    fn execute<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome>;
    /// The model-facing content derived from a `tool_response` of this tool's shape (used for
    /// `updatedToolOutput`); `None` if `response` does not have the shape.
    fn render(&self, response: &Value) -> Option<String>;
    /// The MCP server behind this tool (the tool events' `mcp_server`); `None` for built-ins.
    fn mcp_server(&self) -> Option<crate::origin::McpServerRef> {
        None
    }
    /// Whether the tool is offered to the model now (an MCP tool whose server died is not).
    fn available(&self) -> bool {
        true
    }
    /// Whether the tool is deferred: named to the model, but sent with the requests only once
    /// the model loads it with ToolSearch ([`tool_search`]), as Claude Code defers it.
    fn deferred(&self) -> bool {
        false
    }
    /// A tool a person answers (AskUserQuestion, ExitPlanMode): its permission step is
    /// [`Tool::ask_person`] instead of a yes/no prompt, and this is the `permission_prompt`
    /// Notification's message. `None` (the default): an ordinary tool.
    fn asks_person(&self) -> Option<&str> {
        None
    }
    /// Shows the person the call's question (see [`Tool::asks_person`]); the answer's input
    /// is the one that runs.
    fn ask_person<'a>(
        &'a self,
        input: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ask_user::PersonAnswer> {
        Box::pin(async move { ask_user::PersonAnswer::Proceed(input) })
    }
    /// Whether only the main agent has the tool (a subagent cannot ask the person, nor change
    /// the session's permission mode).
    fn main_agent_only(&self) -> bool {
        false
    }
    /// The `tool_input` PostToolUse sees: the prepared input (the default), or for a tool
    /// whose input rein fills in, what the model sent (ExitPlanMode: Claude Code 2.1.328 shows
    /// PreToolUse and the permission step the plan it adds, PostToolUse the model's input;
    /// fixture interactive/run11).
    fn post_tool_input(&self, prepared: &Value, _sent: &Value) -> Value {
        prepared.clone()
    }
    /// Shell lines the call runs before it executes (a skill's `` !`command` `` lines): the
    /// pipeline runs each as a Bash call through the whole gate, with the lines' extra allow
    /// rules, and hands their outputs to [`Tool::execute_with_outputs`]. `None` (the default):
    /// none.
    fn shell_lines(&self, _input: &Value) -> Option<ShellLines> {
        None
    }
    /// Runs the call with the outputs of its [`Tool::shell_lines`], in order.
    fn execute_with_outputs<'a>(
        &'a self,
        input: Value,
        _outputs: Vec<String>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        self.execute(input, ctx)
    }
}

/// What [`Tool::shell_lines`] asks the pipeline to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellLines {
    /// The commands, in order.
    pub commands: Vec<String>,
    /// Permission rules that let them run without a prompt (a skill's `allowed-tools`).
    pub allow: Vec<String>,
    /// The Bash call's `description` for each (hooks see it).
    pub description: String,
}

/// The built-in tools in the order they are offered to the model: Bash, Read, Write, Edit,
/// Glob, Grep, TaskStop, then the deferred NotebookEdit, WebFetch and WebSearch (no search
/// provider) and the ToolSearch that loads them.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    with_tool_search(vec![
        Arc::new(bash::BashTool),
        Arc::new(read::ReadTool),
        Arc::new(write::WriteTool),
        Arc::new(edit::EditTool),
        Arc::new(glob::GlobTool),
        Arc::new(grep::GrepTool),
        Arc::new(task_stop::TaskStopTool),
        Arc::new(notebook_edit::NotebookEditTool),
        Arc::new(web::WebFetchTool),
        Arc::new(web::WebSearchTool::new(None)),
    ])
}

/// `tools` with a ToolSearch over its deferred ones (none: unchanged).
pub fn with_tool_search(mut tools: Vec<Arc<dyn Tool>>) -> Vec<Arc<dyn Tool>> {
    tools.retain(|t| t.name() != "ToolSearch");
    let deferred: Vec<tool_search::Deferred> = tools
        .iter()
        .filter(|t| t.deferred())
        .map(|t| tool_search::Deferred {
            name: t.name().to_string(),
            description: t.description().to_string(),
            schema: t.input_schema(),
        })
        .collect();
    if !deferred.is_empty() {
        tools.push(Arc::new(tool_search::ToolSearchTool::new(deferred)));
    }
    tools
}
