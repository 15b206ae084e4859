//! The one door every hook point goes through: select handlers (event, matcher, `if`), dedup,
//! run them concurrently, merge their outcomes into a [`Decision`].
//!
//! Flow of one [`Dispatcher::fire`]:
//!
//! 1. **Select** ([`Dispatcher::select`]): the configured handlers of the event that are active
//!    (`inactive == None`, which the loader already set for `disableAllHooks`, unsupported
//!    types, …), whose matcher accepts the event's match value or one of its former names
//!    (spec §3.3), and whose `if` holds (never, on a non-tool event). Then the in-process
//!    handlers of the [`Registry`], in registration order.
//! 2. **Dedup** (spec §5.2): see [`dedup`].
//! 3. **Run** every selected handler concurrently (`join_all`), each under its own timeout
//!    (spec §5.3); `async` handlers are moved to the background and count as success now.
//! 4. **Merge** the answers in *configuration order*, never completion order: see [`merge`].
//!
//! Every run is appended to the run log and gets a `tracing` span.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::hooks::command::{self, CommandForm, CommandSpec, RawRun, RunEnd};
use crate::hooks::decision::{
    Decision, HandlerRun, OutcomeKind, PermissionDecision, PermissionRequestDecision, RunStatus,
};
use crate::hooks::event::{HookEvent, HookInput};
use crate::hooks::matcher::{self, Matcher};
use crate::hooks::output::{
    self, HookPermission, HookSpecificOutput, Interpreted, PermissionRequestAnswer,
};
use crate::hooks::registry::{InProcessHook, Registry};
use crate::permissions::rule::RuleContext;
use crate::settings::schema::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, Location, OnFailure, Settings,
    SourceKind,
};

/// Default timeout of a command hook (spec §5.3).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default timeout of a UserPromptSubmit hook.
pub const USER_PROMPT_SUBMIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole SessionEnd phase's budget when nothing raises it.
pub const SESSION_END_BUDGET: Duration = Duration::from_millis(1500);
/// Upper bound of the SessionEnd budget raised by a handler's `timeout`.
pub const SESSION_END_HANDLER_CAP: Duration = Duration::from_secs(60);
/// Upper bound of the SessionEnd budget set by `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`.
pub const SESSION_END_ENV_CAP: Duration = Duration::from_secs(3600);
/// Env var that sets the SessionEnd budget in milliseconds.
pub const SESSION_END_TIMEOUT_VAR: &str = "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS";
/// Texts longer than this many characters are spilled to a file (spec §4.5).
pub const SPILL_THRESHOLD: usize = 10_000;
/// Size of the preview kept in a `<persisted-output>` notice.
pub const SPILL_PREVIEW_BYTES: usize = 2048;

/// What the dispatcher needs to know about the session to run hooks (spec §5.4).
#[derive(Debug, Clone)]
pub struct HookEnvironment {
    /// `CLAUDE_PROJECT_DIR`; also the fallback cwd.
    pub project_dir: PathBuf,
    /// `CLAUDE_CODE_SESSION_ID`.
    pub session_id: String,
    /// Directory for `CLAUDE_ENV_FILE`s (`<rein home>/session-env/<session>/`).
    pub env_file_dir: PathBuf,
    /// Settings `env`, applied on top of rein's own environment.
    pub extra_env: Vec<(String, String)>,
    /// Append one JSON line per hook run here (`~/.rein/logs/<session>.jsonl`), if set.
    pub run_log: Option<PathBuf>,
    /// `--debug hooks`: print each run to stderr as it happens.
    pub debug: bool,
    /// Where texts over [`SPILL_THRESHOLD`] characters are written
    /// (`~/.rein/projects/<slug>/<session>/tool-results/`). `None`: a `rein-hook-output/<session>`
    /// directory under the system temp dir. (Added to the skeleton contract.)
    pub output_dir: Option<PathBuf>,
    /// `CLAUDE_CODE_SESSION_ATTENDED`: whether a person is attending (false for headless runs).
    /// (Added to the skeleton contract.)
    pub attended: bool,
    /// The home directory (last-resort cwd, `~` in `if` rules). `None`: `$HOME`.
    /// (Added to the skeleton contract.)
    pub home: Option<PathBuf>,
}

impl HookEnvironment {
    /// An environment with no extra env, no run log, not attended, default output dir.
    pub fn new(
        project_dir: impl Into<PathBuf>,
        session_id: impl Into<String>,
        env_file_dir: impl Into<PathBuf>,
    ) -> HookEnvironment {
        HookEnvironment {
            project_dir: project_dir.into(),
            session_id: session_id.into(),
            env_file_dir: env_file_dir.into(),
            extra_env: Vec::new(),
            run_log: None,
            debug: false,
            output_dir: None,
            attended: false,
            home: None,
        }
    }

    fn home_dir(&self) -> PathBuf {
        match &self.home {
            Some(home) => home.clone(),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        }
    }

    fn spill_dir(&self) -> PathBuf {
        match &self.output_dir {
            Some(dir) => dir.clone(),
            None => std::env::temp_dir()
                .join("rein-hook-output")
                .join(&self.session_id),
        }
    }
}

/// State shared with background (`async`) hook tasks.
#[derive(Debug)]
struct Shared {
    env: HookEnvironment,
    env_files: Mutex<Vec<PathBuf>>,
    async_context: Mutex<Vec<String>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    cancel: tokio::sync::watch::Sender<bool>,
    spill_counter: AtomicU64,
}

/// Locks a mutex even if poisoned: every value guarded here is a plain list that a panic
/// cannot leave half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Selects, runs and merges hooks.
#[derive(Debug)]
pub struct Dispatcher {
    settings: Settings,
    registry: Registry,
    shared: Arc<Shared>,
}

/// A handler chosen to run for one firing.
#[derive(Debug, Clone)]
pub enum SelectedHandler<'a> {
    /// A `type: "command"` handler from the settings.
    Command {
        handler: &'a ConfiguredHandler,
        command: &'a CommandHandler,
    },
    /// A closure from the [`Registry`].
    InProcess(InProcessHook),
}

impl SelectedHandler<'_> {
    /// The command as shown in texts: shell string, or exec form joined by spaces; for
    /// in-process handlers `in-process:<id>`.
    pub fn command_text(&self) -> String {
        match self {
            SelectedHandler::Command { command, .. } => command_display(command),
            SelectedHandler::InProcess(hook) => format!("in-process:{}", hook.id),
        }
    }

    /// Where the handler was configured. In-process handlers report the file
    /// `<in-process>`, line = registration id, source [`SourceKind::Flag`] (programmatic,
    /// like `--settings`).
    pub fn origin(&self) -> HandlerOrigin {
        match self {
            SelectedHandler::Command { handler, .. } => handler.origin.clone(),
            SelectedHandler::InProcess(hook) => HandlerOrigin {
                source: SourceKind::Flag,
                event_key: hook.event.as_str().to_string(),
                group: 0,
                index: usize::try_from(hook.id).unwrap_or(usize::MAX),
                location: Location {
                    file: Arc::from("<in-process>"),
                    line: u32::try_from(hook.id).unwrap_or(u32::MAX),
                    col: 0,
                },
            },
        }
    }
}

fn command_display(command: &CommandHandler) -> String {
    match &command.args {
        None => command.command.clone(),
        Some(args) => CommandForm::Exec {
            program: command.command.clone(),
            args: args.clone(),
        }
        .display_text(),
    }
}

/// The names a tool is known by: itself, then its former/current names (spec §3.3).
pub fn tool_names(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    names.extend_from_slice(matcher::tool_aliases(tool));
    names
}

/// [`tool_names`] without the allocation: this runs once per configured handler per event.
fn each_tool_name(tool: &str) -> impl Iterator<Item = &str> {
    std::iter::once(tool).chain(matcher::tool_aliases(tool).iter().copied())
}

fn matcher_accepts(matcher: &Matcher, input: &HookInput) -> bool {
    let Some(value) = input.match_value() else {
        return true;
    };
    if input.event().is_tool_event() {
        each_tool_name(value).any(|name| matcher.matches(name))
    } else {
        matcher.matches(value)
    }
}

/// The identity key of a command handler (spec §5.2): type, shell, command, `JSON(args)`, `if`,
/// NUL-joined. Ordinary settings files share one origin, so the source is not part of it.
pub fn dedup_key(handler: &ConfiguredHandler, command: &CommandHandler) -> String {
    let args = match &command.args {
        Some(args) => serde_json::to_string(args).unwrap_or_default(),
        None => "null".to_string(),
    };
    [
        "command",
        command.shell.as_deref().unwrap_or("bash"),
        &command.command,
        &args,
        handler.if_text.as_deref().unwrap_or(""),
    ]
    .join("\0")
}

/// Collapses identical command handlers to one (spec §5.2).
///
/// Which copy survives: the **last** copy from a `policy` or `flag` (`--settings`) source if
/// there is one, otherwise the **last** copy in configuration order. The survivor keeps its
/// own fields (timeout, async, …) and runs at its **own position** in configuration order, so
/// the result is a subsequence of the input. In-process handlers are never deduplicated.
pub fn dedup(selected: Vec<SelectedHandler<'_>>) -> Vec<SelectedHandler<'_>> {
    let mut survivor: HashMap<String, (usize, bool)> = HashMap::new();
    for (i, sel) in selected.iter().enumerate() {
        if let SelectedHandler::Command { handler, command } = sel {
            let key = dedup_key(handler, command);
            let preferred = matches!(handler.origin.source, SourceKind::Policy | SourceKind::Flag);
            match survivor.get(&key) {
                Some((_, true)) if !preferred => {}
                Some(_) | None => {
                    survivor.insert(key, (i, preferred));
                }
            }
        }
    }
    selected
        .into_iter()
        .enumerate()
        .filter(|(i, sel)| match sel {
            SelectedHandler::Command { handler, command } => survivor
                .get(&dedup_key(handler, command))
                .is_some_and(|(kept, _)| kept == i),
            SelectedHandler::InProcess(_) => true,
        })
        .map(|(_, sel)| sel)
        .collect()
}

/// What one handler answered, interpreted; the unit [`merge`] folds.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub run: HandlerRun,
    /// Whether the blocking outcome (if any) came from JSON (`decision: block`) rather than
    /// exit code 2 / `onFailure`; Stop renders the two differently.
    pub block_from_json: bool,
    /// PreToolUse permission answer of this handler (JSON `permissionDecision`, legacy
    /// `decision`); a blocking outcome is turned into deny by [`merge`].
    pub permission: Option<PermissionDecision>,
    pub updated_input: Option<Value>,
    pub additional_context: Option<String>,
    pub updated_tool_output: Option<Value>,
    pub system_message: Option<String>,
    /// `continue: false`, with its `stopReason`.
    pub stop: Option<Option<String>>,
    pub suppress_original_prompt: bool,
    pub retry: bool,
    pub permission_request: Option<PermissionRequestDecision>,
    /// Plain stdout of a successful exit 0, trimmed (context only on SessionStart and
    /// UserPromptSubmit).
    pub success_text: Option<String>,
}

impl Answer {
    fn bare(run: HandlerRun) -> Answer {
        Answer {
            run,
            block_from_json: false,
            permission: None,
            updated_input: None,
            additional_context: None,
            updated_tool_output: None,
            system_message: None,
            stop: None,
            suppress_original_prompt: false,
            retry: false,
            permission_request: None,
            success_text: None,
        }
    }
}

/// Where a handler runs and with what (spec §5.3–5.4).
struct Plan {
    spec: CommandSpec,
    on_failure: OnFailure,
}

impl Dispatcher {
    pub fn new(settings: Settings, env: HookEnvironment) -> Dispatcher {
        let (cancel, _) = tokio::sync::watch::channel(false);
        Dispatcher {
            settings,
            registry: Registry::new(),
            shared: Arc::new(Shared {
                env,
                env_files: Mutex::new(Vec::new()),
                async_context: Mutex::new(Vec::new()),
                background: Mutex::new(Vec::new()),
                cancel,
                spill_counter: AtomicU64::new(0),
            }),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn environment(&self) -> &HookEnvironment {
        &self.shared.env
    }

    /// The in-process handlers; register with `dispatcher.registry().hook(…)`.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The handlers that would run for `input`, deduplicated, in configuration order
    /// (configured handlers first, then in-process ones).
    pub fn select(&self, input: &HookInput) -> Vec<SelectedHandler<'_>> {
        let event = input.event();
        let env = &self.shared.env;
        let home = env.home_dir();
        let cwd = PathBuf::from(&input.base().cwd);
        let ctx = RuleContext {
            cwd: &cwd,
            project_dir: &env.project_dir,
            home: &home,
        };
        let mut selected = Vec::new();
        for handler in &self.settings.handlers {
            if handler.event != Some(event) || handler.inactive.is_some() {
                continue;
            }
            let HandlerKind::Command(command) = &handler.kind else {
                // Non-command types are marked inactive by the loader; this is the backstop.
                continue;
            };
            if !matcher_accepts(&handler.matcher, input) {
                continue;
            }
            if handler.if_text.is_some() || handler.if_condition.is_some() {
                // `if` is only evaluated on tool events; elsewhere the handler never runs.
                let (Some((tool, tool_input)), Some(cond)) = (input.tool(), &handler.if_condition)
                else {
                    continue;
                };
                if !each_tool_name(tool).any(|name| cond.matches(name, tool_input, &ctx)) {
                    continue;
                }
            }
            selected.push(SelectedHandler::Command { handler, command });
        }
        for hook in self.registry.for_event(event) {
            if matcher_accepts(&hook.matcher, input) {
                selected.push(SelectedHandler::InProcess(hook));
            }
        }
        dedup(selected)
    }

    /// Fires one event: every selected handler runs concurrently; never fails.
    pub async fn fire(&self, input: &HookInput) -> Decision {
        let selected = self.select(input);
        if selected.is_empty() {
            return Decision::empty(input.event());
        }
        let stdin = Arc::new(input.to_stdin_bytes());
        let session_end_budget = self.session_end_budget(&selected);
        let mut env_file_index = 0usize;
        let mut futures = Vec::with_capacity(selected.len());
        for sel in &selected {
            let env_file = match sel {
                SelectedHandler::Command { .. } if input.event() == HookEvent::SessionStart => {
                    let path = self.prepare_env_file(env_file_index);
                    env_file_index += 1;
                    Some(path)
                }
                SelectedHandler::Command { .. } | SelectedHandler::InProcess(_) => None,
            };
            let span = tracing::info_span!(
                "hook",
                event = %input.event(),
                command = %sel.command_text(),
                origin = %sel.origin(),
            );
            let fut = self
                .run_selected(sel, input, Arc::clone(&stdin), env_file, session_end_budget)
                .instrument(span);
            futures.push(fut);
        }
        let answers = futures_util::future::join_all(futures).await;
        let event = input.event();
        let answers = answers
            .into_iter()
            .map(|mut a| {
                a.additional_context = a
                    .additional_context
                    .map(|t| spill(&self.shared, event, "additionalContext", t));
                a.success_text = a
                    .success_text
                    .map(|t| spill(&self.shared, event, "stdout", t));
                a.system_message = a
                    .system_message
                    .map(|t| spill(&self.shared, event, "systemMessage", t));
                a
            })
            .collect();
        merge(input, answers)
    }

    /// `CLAUDE_ENV_FILE`s written so far by SessionStart hooks, in configuration order; the
    /// Bash tool sources them before each command.
    pub fn env_files(&self) -> Vec<PathBuf> {
        lock(&self.shared.env_files).clone()
    }

    /// Context produced by background (`async`) hooks that finished since the last call;
    /// delivered with the next model request.
    pub fn take_async_context(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.async_context))
    }

    /// Ends background hooks still running (SIGTERM, grace, SIGKILL to their groups).
    pub async fn shutdown(&self) {
        let _ = self.shared.cancel.send(true);
        let handles = std::mem::take(&mut *lock(&self.shared.background));
        for handle in handles {
            let _ = handle.await;
        }
    }

    /// Waits until every background hook started so far has finished on its own (tests and
    /// `-p` runs that want their output).
    pub async fn wait_background(&self) {
        let handles = std::mem::take(&mut *lock(&self.shared.background));
        for handle in handles {
            let _ = handle.await;
        }
    }

    /// The SessionEnd phase budget (spec §5.3): 1.5 s, raised to the largest `timeout` of a
    /// selected SessionEnd handler (capped at 60 s); `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`
    /// (settings `env` first, then rein's environment; capped at 1 h) replaces it.
    fn session_end_budget(&self, selected: &[SelectedHandler<'_>]) -> Duration {
        let from_env = self
            .shared
            .env
            .extra_env
            .iter()
            .rev()
            .find(|(k, _)| k == SESSION_END_TIMEOUT_VAR)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(SESSION_END_TIMEOUT_VAR).ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(ms) = from_env {
            return Duration::from_millis(ms).min(SESSION_END_ENV_CAP);
        }
        let largest = selected
            .iter()
            .filter_map(|sel| match sel {
                SelectedHandler::Command { handler, .. } => handler.timeout,
                SelectedHandler::InProcess(_) => None,
            })
            .filter_map(seconds)
            .max()
            .unwrap_or(Duration::ZERO)
            .min(SESSION_END_HANDLER_CAP);
        largest.max(SESSION_END_BUDGET)
    }

    fn timeout_for(
        &self,
        event: HookEvent,
        configured: Option<f64>,
        session_end: Duration,
    ) -> Duration {
        let own = configured.and_then(seconds);
        match event {
            HookEvent::SessionEnd => own.unwrap_or(session_end).min(session_end),
            HookEvent::UserPromptSubmit => own.unwrap_or(USER_PROMPT_SUBMIT_TIMEOUT),
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PostToolBatch
            | HookEvent::Notification
            | HookEvent::UserPromptExpansion
            | HookEvent::SessionStart
            | HookEvent::Stop
            | HookEvent::StopFailure
            | HookEvent::SubagentStart
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::PreModelSwitch
            | HookEvent::PostModelSwitch
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult
            | HookEvent::ConfigChange
            | HookEvent::WorktreeCreate
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded
            | HookEvent::MessageDisplay => own.unwrap_or(DEFAULT_TIMEOUT),
        }
    }

    /// Creates `<env_file_dir>/sessionstart-hook-<n>.sh` (empty) and records it.
    fn prepare_env_file(&self, index: usize) -> PathBuf {
        let dir = &self.shared.env.env_file_dir;
        let path = dir.join(format!("sessionstart-hook-{index}.sh"));
        let created = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, b""));
        if let Err(err) = created {
            tracing::warn!(path = %path.display(), %err, "cannot create CLAUDE_ENV_FILE");
        }
        let mut files = lock(&self.shared.env_files);
        if !files.contains(&path) {
            files.push(path.clone());
        }
        path
    }

    /// Builds the process spec of a command handler (spec §5.4).
    fn plan(
        &self,
        handler: &ConfiguredHandler,
        command: &CommandHandler,
        input: &HookInput,
        env_file: Option<&Path>,
        session_end: Duration,
    ) -> Plan {
        let env = &self.shared.env;
        let project = env.project_dir.to_string_lossy().into_owned();
        let form = match &command.args {
            None => CommandForm::Shell(command.command.clone()),
            Some(args) => CommandForm::Exec {
                program: substitute_project_dir(&command.command, &project),
                args: args
                    .iter()
                    .map(|a| substitute_project_dir(a, &project))
                    .collect(),
            },
        };
        let cwd = hook_cwd(
            Path::new(&input.base().cwd),
            &env.project_dir,
            &env.home_dir(),
        );
        let timeout = self.timeout_for(input.event(), handler.timeout, session_end);
        let mut spec = CommandSpec::new(form, cwd, timeout);
        spec.env = hook_env(env, env_file);
        spec.env_remove = removed_env();
        // onFailure is ignored for async hooks (spec §1.6); `output::interpret` itself ignores
        // it on Stop and the other events where it has no meaning.
        let on_failure = if command.is_async || command.async_rewake {
            OnFailure::Continue
        } else {
            handler.on_failure
        };
        Plan { spec, on_failure }
    }

    async fn run_selected(
        &self,
        sel: &SelectedHandler<'_>,
        input: &HookInput,
        stdin: Arc<Vec<u8>>,
        env_file: Option<PathBuf>,
        session_end: Duration,
    ) -> Answer {
        let answer = match sel {
            SelectedHandler::Command { handler, command } => {
                let plan = self.plan(handler, command, input, env_file.as_deref(), session_end);
                let text = command_display(command);
                if command.is_async || command.async_rewake {
                    self.spawn_background(
                        input,
                        handler.origin.clone(),
                        text,
                        plan,
                        Arc::clone(&stdin),
                    )
                } else {
                    self.run_foreground(input, handler.origin.clone(), text, plan, &stdin)
                        .await
                }
            }
            SelectedHandler::InProcess(hook) => {
                let timeout = self.timeout_for(input.event(), None, session_end);
                run_in_process(hook, sel.origin(), sel.command_text(), input, timeout).await
            }
        };
        log_run(&self.shared.env, input.event(), stdin.len(), &answer);
        answer
    }

    /// Runs a synchronous handler. If it switches itself to async at runtime (its stdout
    /// starts with `{"async": true}`, spec §5.5) it counts as success now and finishes in the
    /// background like a configured `async` handler.
    async fn run_foreground(
        &self,
        input: &HookInput,
        origin: HandlerOrigin,
        text: String,
        plan: Plan,
        stdin: &[u8],
    ) -> Answer {
        let event = input.event();
        match command::run_detecting_async(plan.spec, stdin.to_vec()).await {
            RunEnd::Finished(raw) => interpret(event, origin, &text, &raw, plan.on_failure),
            RunEnd::Backgrounded { raw, background } => {
                let answer = interpret(event, origin.clone(), &text, &raw, OnFailure::Continue);
                let mut cancel = self.shared.cancel.subscribe();
                let pid = background.pid;
                let finished = async move {
                    let wait = background.wait();
                    tokio::pin!(wait);
                    let stop = async move {
                        let _ = cancel.wait_for(|stop| *stop).await;
                    };
                    tokio::select! {
                        raw = &mut wait => raw,
                        () = stop => {
                            if let Some(pid) = pid {
                                command::kill_group(pid).await;
                            }
                            wait.await
                        }
                    }
                };
                self.finish_later(input, origin, text, stdin.len(), finished);
                answer
            }
        }
    }

    /// Starts a configured `async` handler in the background; it counts as success now.
    fn spawn_background(
        &self,
        input: &HookInput,
        origin: HandlerOrigin,
        text: String,
        plan: Plan,
        stdin: Arc<Vec<u8>>,
    ) -> Answer {
        let mut cancel = self.shared.cancel.subscribe();
        let stdin_len = stdin.len();
        let finished = async move {
            let cancelled = async move {
                let _ = cancel.wait_for(|stop| *stop).await;
            };
            command::run_until(&plan.spec, &stdin, cancelled).await
        };
        self.finish_later(input, origin.clone(), text.clone(), stdin_len, finished);
        Answer::bare(HandlerRun {
            origin,
            command: text,
            status: RunStatus::Backgrounded,
            outcome: OutcomeKind::Success,
            duration: Duration::ZERO,
            stdout: String::new(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_capped: false,
            stderr_capped: false,
            json: None,
        })
    }

    /// Awaits a background run in a task: logs it, and queues its `additionalContext` and
    /// `systemMessage` for [`Dispatcher::take_async_context`].
    fn finish_later(
        &self,
        input: &HookInput,
        origin: HandlerOrigin,
        text: String,
        stdin_len: usize,
        finished: impl Future<Output = RawRun> + Send + 'static,
    ) {
        let shared = Arc::clone(&self.shared);
        let event = input.event();
        let hook_name = input.hook_name();
        let handle = tokio::spawn(async move {
            let raw = finished.await;
            let answer = interpret(event, origin, &text, &raw, OnFailure::Continue);
            log_run(&shared.env, event, stdin_len, &answer);
            let mut out = Vec::new();
            if let Some(ctx) = answer.additional_context {
                out.push(format!(
                    "{} hook additional context: {}",
                    context_name(event, &hook_name),
                    spill(&shared, event, "additionalContext", ctx)
                ));
            }
            if let Some(msg) = answer.system_message {
                let msg = spill(&shared, event, "systemMessage", msg);
                out.push(format!("{hook_name} says: {msg}"));
            }
            lock(&shared.async_context).extend(out);
        });
        lock(&self.shared.background).push(handle);
    }
}

fn seconds(s: f64) -> Option<Duration> {
    if s.is_finite() && s > 0.0 {
        // 2^31-1 ms is Claude Code's effective maximum.
        Some(Duration::from_secs_f64(s.min(2_147_483.647)))
    } else {
        None
    }
}

fn substitute_project_dir(text: &str, project: &str) -> String {
    text.replace("${CLAUDE_PROJECT_DIR}", project)
}

/// The hook's working directory: the input's cwd if it exists, else the project dir, else
/// home (spec §5.4).
fn hook_cwd(cwd: &Path, project: &Path, home: &Path) -> PathBuf {
    [cwd, project]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or(home)
        .to_path_buf()
}

/// Variables set for every command hook on top of rein's environment and settings `env`.
/// `CLAUDECODE` is deliberately not set: rein is not Claude Code, and scripts use it to detect
/// Claude Code itself.
fn hook_env(env: &HookEnvironment, env_file: Option<&Path>) -> Vec<(String, String)> {
    // Why OTEL_* from settings `env` is dropped too: Claude Code applies settings `env` to its
    // own process, whose OTEL_* its subprocesses then do not inherit.
    let mut vars: Vec<(String, String)> = env
        .extra_env
        .iter()
        .filter(|(k, _)| !k.starts_with("OTEL_"))
        .cloned()
        .collect();
    vars.push((
        "CLAUDE_PROJECT_DIR".into(),
        env.project_dir.to_string_lossy().into_owned(),
    ));
    vars.push(("CLAUDE_CODE_SESSION_ID".into(), env.session_id.clone()));
    vars.push((
        "AI_AGENT".into(),
        format!("rein_{}", env!("CARGO_PKG_VERSION")),
    ));
    vars.push((
        "CLAUDE_CODE_SESSION_ATTENDED".into(),
        if env.attended { "1" } else { "0" }.into(),
    ));
    vars.push(("CLAUDE_PID".into(), std::process::id().to_string()));
    if let Some(file) = env_file {
        vars.push((
            "CLAUDE_ENV_FILE".into(),
            file.to_string_lossy().into_owned(),
        ));
    }
    vars
}

/// Variables removed from the inherited environment: every `OTEL_*` (spec §5.4), and a
/// `CLAUDECODE`/`CLAUDE_ENV_FILE` inherited from an enclosing Claude Code session.
fn removed_env() -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("OTEL_"))
        .collect();
    names.push("CLAUDECODE".into());
    names.push("CLAUDE_ENV_FILE".into());
    names
}

/// Context-entry name for `additionalContext`: `<Event>:<Tool>` on tool events, the bare event
/// name elsewhere (observed: `SessionStart hook additional context: …`).
fn context_name(event: HookEvent, hook_name: &str) -> String {
    if event.is_tool_event() {
        hook_name.to_string()
    } else {
        event.as_str().to_string()
    }
}

async fn run_in_process(
    hook: &InProcessHook,
    origin: HandlerOrigin,
    text: String,
    input: &HookInput,
    timeout: Duration,
) -> Answer {
    let started = Instant::now();
    let f = Arc::clone(&hook.handler);
    let owned = input.clone();
    // Why spawn_blocking: the closure is synchronous and may block; a panic surfaces as a
    // JoinError instead of unwinding into the agent loop.
    let task = tokio::task::spawn_blocking(move || f(&owned));
    let result = tokio::time::timeout(timeout, task).await;
    let duration = started.elapsed();
    let run = |status: RunStatus, outcome: OutcomeKind, json: Option<Value>| HandlerRun {
        origin: origin.clone(),
        command: text.clone(),
        status,
        outcome,
        duration,
        stdout: String::new(),
        stderr: String::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_capped: false,
        stderr_capped: false,
        json,
    };
    match result {
        Err(_) => Answer::bare(run(RunStatus::TimedOut, OutcomeKind::Cancelled, None)),
        Ok(Err(join_err)) => {
            let why = match join_err.try_into_panic() {
                Ok(payload) => panic_text(payload.as_ref()),
                Err(err) => err.to_string(),
            };
            let why = format!("in-process hook panicked: {why}");
            Answer::bare(run(
                RunStatus::Crashed(why.clone()),
                OutcomeKind::NonBlocking(why),
                None,
            ))
        }
        Ok(Ok(Err(err))) => Answer::bare(run(
            RunStatus::Crashed(err.clone()),
            OutcomeKind::NonBlocking(err),
            None,
        )),
        Ok(Ok(Ok(value))) => {
            // The closure's JSON goes through the very same recognition and validation as a
            // command's stdout, as if the hook had printed it and exited 0.
            let stdout = serde_json::to_vec(&value).unwrap_or_default();
            let raw = RawRun {
                status: RunStatus::Exited(0),
                stdout_bytes: stdout.len() as u64,
                stdout,
                stderr: Vec::new(),
                stderr_bytes: 0,
                stdout_capped: false,
                stderr_capped: false,
                duration,
                stdin_error: None,
                pid: None,
                cancelled: false,
                lingering_killed: false,
            };
            let mut answer = interpret(
                input.event(),
                origin.clone(),
                &text,
                &raw,
                OnFailure::Continue,
            );
            if let OutcomeKind::NonBlocking(why) = &answer.run.outcome {
                answer.run.status = RunStatus::Crashed(why.clone());
            }
            answer
        }
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Interprets one command run with [`output::interpret`] (spec §4.1–4.4) and extracts what
/// [`merge`] needs.
fn interpret(
    event: HookEvent,
    origin: HandlerOrigin,
    text: &str,
    raw: &RawRun,
    on_failure: OnFailure,
) -> Answer {
    let mut interpreted = output::interpret(event, text, raw, on_failure);
    if let (RunStatus::Exited(126 | 127), OutcomeKind::NonBlocking(message)) =
        (&raw.status, &mut interpreted.outcome)
        && let Some(hint) = crlf_hint(text)
    {
        message.push('\n');
        message.push_str(&hint);
    }
    for notice in &interpreted.notices {
        tracing::debug!(target: "rein::hooks", command = text, notice = %notice, "hook notice");
    }
    let run = interpreted.to_handler_run(origin, text, raw);
    answer_from(event, interpreted, run)
}

/// A hint for a script whose `#!` line ends in a carriage return (CRLF line endings): the
/// kernel then looks for an interpreter named `/bin/sh\r` and the shell says "not found" about
/// a file that plainly exists. `None` unless the command's first word is such a file.
fn crlf_hint(command: &str) -> Option<String> {
    let first = command.split_whitespace().next()?;
    let path = first.trim_matches(|c| c == '\'' || c == '"');
    if !path.starts_with('/') {
        return None;
    }
    let mut head = [0u8; 256];
    let n = std::io::Read::read(&mut std::fs::File::open(path).ok()?, &mut head).ok()?;
    let line = head[..n].split(|b| *b == b'\n').next()?;
    (line.starts_with(b"#!") && line.ends_with(b"\r")).then(|| {
        format!(
            "hint: {path} has Windows (CRLF) line endings, so its #! interpreter is not found; \
             convert it with: sed -i 's/\\r$//' {path}"
        )
    })
}

fn answer_from(event: HookEvent, interpreted: Interpreted, run: HandlerRun) -> Answer {
    let mut answer = Answer::bare(run);
    answer.success_text = interpreted.plain_stdout.filter(|s| !s.is_empty());
    let Some(out) = interpreted.output else {
        return answer;
    };
    answer.block_from_json = out.block_reason().is_some();
    if event == HookEvent::PreToolUse {
        answer.permission = out.permission().map(|(p, reason)| match p {
            HookPermission::Allow => PermissionDecision::Allow { reason },
            HookPermission::Ask => PermissionDecision::Ask { reason },
            HookPermission::Defer => PermissionDecision::Defer { reason },
            HookPermission::Deny => PermissionDecision::Deny {
                reason: reason.unwrap_or_else(|| "Blocked by hook".to_string()),
                text: String::new(),
            },
        });
    }
    answer.additional_context = out.additional_context().map(str::to_string);
    answer.system_message = out.system_message.clone();
    if out.stops_loop() {
        answer.stop = Some(out.stop_reason.clone());
    }
    match out.hook_specific {
        Some(HookSpecificOutput::PreToolUse { updated_input, .. }) => {
            answer.updated_input = updated_input.map(Value::Object);
        }
        Some(HookSpecificOutput::PermissionRequest { decision }) => {
            answer.permission_request = Some(match decision {
                PermissionRequestAnswer::Allow {
                    updated_input,
                    updated_permissions,
                } => PermissionRequestDecision::Allow {
                    updated_input: updated_input.map(Value::Object),
                    updated_permissions,
                },
                PermissionRequestAnswer::Deny { message, interrupt } => {
                    PermissionRequestDecision::Deny {
                        message: message
                            .or_else(|| out.reason.clone())
                            .unwrap_or_else(|| "Permission denied by hook".to_string()),
                        interrupt,
                    }
                }
            });
        }
        Some(HookSpecificOutput::PermissionDenied { retry }) => {
            answer.retry = retry.unwrap_or(false);
        }
        Some(HookSpecificOutput::PostToolUse {
            updated_tool_output,
            ..
        }) => {
            answer.updated_tool_output = updated_tool_output;
        }
        Some(HookSpecificOutput::UserPromptSubmit {
            suppress_original_prompt,
            ..
        }) => {
            answer.suppress_original_prompt = suppress_original_prompt.unwrap_or(false);
        }
        Some(
            HookSpecificOutput::PostToolUseFailure { .. }
            | HookSpecificOutput::PostToolBatch { .. }
            | HookSpecificOutput::SessionStart { .. }
            | HookSpecificOutput::SessionEnd
            | HookSpecificOutput::Stop { .. }
            | HookSpecificOutput::StopFailure
            | HookSpecificOutput::Notification { .. }
            | HookSpecificOutput::NotFired { .. },
        )
        | None => {}
    }
    answer
}

fn rank(p: &PermissionDecision) -> u8 {
    match p {
        PermissionDecision::Deny { .. } => 4,
        PermissionDecision::Defer { .. } => 3,
        PermissionDecision::Ask { .. } => 2,
        PermissionDecision::Allow { .. } => 1,
    }
}

/// Folds the answers of one firing, given in **configuration order**, into a [`Decision`].
///
/// rein's rule (deterministic; Claude Code folds in completion order, spec §4.6):
///
/// 1. **Permission** (PreToolUse): deny > defer > ask > allow. A blocking error (exit 2,
///    `decision: block`, `onFailure: block`) counts as deny. Among answers of the winning rank
///    the **first** in configuration order supplies the reason. A deny carries its
///    model-facing text `PreToolUse:<Tool> hook error: <reason>`.
/// 2. **PermissionRequest**: deny > allow (a blocking error is a deny with message
///    `[cmd]: stderr`); the first deny's message wins; an allow takes the `updatedInput` of the
///    last allowing answer that has one and the `updatedPermissions` of all allowing answers.
/// 3. **updatedInput** (PreToolUse): the **last** answer in configuration order that has one and
///    whose own decision is allow, ask or absent (not deny/defer, not blocking).
/// 4. **additionalContext**: every answer's, in configuration order, joined with `\n` into ONE
///    context entry `<hookName> hook additional context: …` (Stop: a
///    `<system-reminder>`-wrapped `Stop hook additional context: …`), placed after the
///    per-handler entries of rule 5.
/// 5. **Per-handler context entries**, in configuration order: plain stdout of exit 0 on
///    SessionStart / UserPromptSubmit (`<hookName> hook success: …`); blocking errors on
///    PostToolUse/PostToolUseFailure (`… hook blocking error from command: "<cmd>": …`) and
///    JSON blocks on Stop (`Stop hook blocking error from command: …`).
/// 6. **Blocking errors** elsewhere: all reasons, in configuration order, joined with `\n` into
///    `block` (Stop also gets `stop_feedback = "Stop hook feedback:\n<reasons>"`;
///    UserPromptSubmit gets `prompt_blocked_text`). On SessionStart, Notification, SessionEnd,
///    StopFailure, PermissionDenied a block stops nothing and only becomes a user message.
/// 7. **updatedToolOutput**: the last answer in configuration order that has one.
/// 8. **continue: false** from any answer stops the loop; the first `stopReason` is kept.
/// 9. **systemMessage**: all shown, in configuration order (`<hookName> says: …`); non-blocking
///    errors and timeouts become user messages too. `suppressOriginalPrompt` and `retry`: any.
pub fn merge(input: &HookInput, answers: Vec<Answer>) -> Decision {
    let event = input.event();
    let hook_name = input.hook_name();
    let mut d = Decision::empty(event);
    let mut best: Option<PermissionDecision> = None;
    let mut contexts: Vec<String> = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    let mut pr_deny: Option<PermissionRequestDecision> = None;
    let mut pr_allow: Option<(Option<Value>, Vec<Value>)> = None;

    for answer in answers {
        let cmd = answer.run.command.clone();
        let blocking = match &answer.run.outcome {
            OutcomeKind::Blocking(reason) => Some(reason.clone()),
            OutcomeKind::Success | OutcomeKind::NonBlocking(_) | OutcomeKind::Cancelled => None,
        };
        // Rule 1: this answer's own permission.
        let own = match &blocking {
            Some(reason) if event == HookEvent::PreToolUse => Some(PermissionDecision::Deny {
                reason: reason.clone(),
                text: String::new(),
            }),
            Some(_) | None => answer.permission.clone(),
        };
        if let Some(p) = &own
            && best.as_ref().is_none_or(|b| rank(p) > rank(b))
        {
            best = Some(p.clone());
        }
        // Rule 3.
        if event == HookEvent::PreToolUse
            && let Some(ui) = &answer.updated_input
            && matches!(
                own,
                None | Some(PermissionDecision::Allow { .. })
                    | Some(PermissionDecision::Ask { .. })
            )
        {
            d.updated_input = Some(ui.clone());
        }
        // Rule 2.
        if event == HookEvent::PermissionRequest {
            let pr = match &blocking {
                Some(reason) => Some(PermissionRequestDecision::Deny {
                    message: reason.clone(),
                    interrupt: false,
                }),
                None => answer.permission_request.clone(),
            };
            match pr {
                Some(deny @ PermissionRequestDecision::Deny { .. }) if pr_deny.is_none() => {
                    pr_deny = Some(deny);
                }
                Some(PermissionRequestDecision::Deny { .. }) => {}
                Some(PermissionRequestDecision::Allow {
                    updated_input,
                    updated_permissions,
                }) => {
                    let entry = pr_allow.get_or_insert((None, Vec::new()));
                    if updated_input.is_some() {
                        entry.0 = updated_input;
                    }
                    entry.1.extend(updated_permissions);
                }
                None => {}
            }
        }
        // Rule 5 and 6.
        if let Some(ctx) = &answer.success_text
            && matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
        {
            d.context.push(format!("{hook_name} hook success: {ctx}"));
        }
        if let Some(reason) = &blocking {
            match event {
                HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
                    d.context.push(format!(
                        "{hook_name} hook blocking error from command: \"{cmd}\": {reason}"
                    ));
                    blocks.push(reason.clone());
                }
                HookEvent::Stop | HookEvent::SubagentStop => {
                    if answer.block_from_json {
                        d.context.push(format!(
                            "{} hook blocking error from command: \"{cmd}\": {reason}",
                            event.as_str()
                        ));
                    }
                    blocks.push(reason.clone());
                }
                HookEvent::UserPromptSubmit | HookEvent::PostToolBatch => {
                    blocks.push(reason.clone());
                }
                HookEvent::PreToolUse | HookEvent::PermissionRequest => {}
                HookEvent::SessionEnd => {}
                HookEvent::Notification
                | HookEvent::UserPromptExpansion
                | HookEvent::SessionStart
                | HookEvent::StopFailure
                | HookEvent::SubagentStart
                | HookEvent::PreCompact
                | HookEvent::PostCompact
                | HookEvent::PreModelSwitch
                | HookEvent::PostModelSwitch
                | HookEvent::PermissionDenied
                | HookEvent::Setup
                | HookEvent::TeammateIdle
                | HookEvent::TaskCreated
                | HookEvent::TaskCompleted
                | HookEvent::Elicitation
                | HookEvent::ElicitationResult
                | HookEvent::ConfigChange
                | HookEvent::WorktreeCreate
                | HookEvent::WorktreeRemove
                | HookEvent::InstructionsLoaded
                | HookEvent::CwdChanged
                | HookEvent::FileChanged
                | HookEvent::DirectoryAdded
                | HookEvent::MessageDisplay => {
                    d.user_messages
                        .push(format!("{hook_name} hook error: {reason}"));
                }
            }
        }
        // Rule 9: user-facing notices.
        if event == HookEvent::SessionEnd {
            let failed = match &answer.run.status {
                RunStatus::Exited(code) => *code != 0,
                RunStatus::Signaled(_) | RunStatus::SpawnFailed(_) | RunStatus::Crashed(_) => true,
                RunStatus::TimedOut | RunStatus::Backgrounded => false,
            };
            if failed {
                d.user_messages.push(format!(
                    "SessionEnd hook [{cmd}] failed: {}",
                    answer.run.stderr
                ));
            } else if answer.run.status == RunStatus::TimedOut {
                d.user_messages.push(format!(
                    "SessionEnd hook [{cmd}] was cancelled: the SessionEnd time budget ran out"
                ));
            }
        } else {
            match &answer.run.outcome {
                OutcomeKind::NonBlocking(text) => d
                    .user_messages
                    .push(format!("{hook_name} hook error: {text}")),
                OutcomeKind::Cancelled => d.user_messages.push(if event == HookEvent::PreToolUse {
                    "A hook didn't answer in time, so it didn't check this action.".to_string()
                } else {
                    format!("{hook_name} hook [{cmd}] timed out and was cancelled")
                }),
                OutcomeKind::Success | OutcomeKind::Blocking(_) => {}
            }
        }
        if let Some(msg) = &answer.system_message {
            d.user_messages.push(format!("{hook_name} says: {msg}"));
        }
        // Rule 4, 7, 8, 9.
        if let Some(ctx) = &answer.additional_context {
            contexts.push(ctx.clone());
        }
        if answer.updated_tool_output.is_some() {
            d.updated_tool_output = answer.updated_tool_output.clone();
        }
        if let Some(reason) = &answer.stop {
            if d.stop_reason.is_none() {
                d.stop_reason = reason.clone();
            }
            d.stop_loop = true;
        }
        d.suppress_original_prompt |= answer.suppress_original_prompt;
        d.retry |= answer.retry;
        d.runs.push(answer.run);
    }

    if !contexts.is_empty() {
        let joined = contexts.join("\n");
        d.context.push(
            if matches!(event, HookEvent::Stop | HookEvent::SubagentStop) {
                format!(
                    "<system-reminder>\n{} hook additional context: {joined}\n</system-reminder>",
                    event.as_str()
                )
            } else {
                format!(
                    "{} hook additional context: {joined}",
                    context_name(event, &hook_name)
                )
            },
        );
    }
    d.permission = best.map(|p| match p {
        PermissionDecision::Deny { reason, .. } => PermissionDecision::Deny {
            text: format!("{hook_name} hook error: {reason}"),
            reason,
        },
        other @ (PermissionDecision::Allow { .. }
        | PermissionDecision::Ask { .. }
        | PermissionDecision::Defer { .. }) => other,
    });
    if event == HookEvent::PermissionRequest {
        d.permission_request = match (pr_deny, pr_allow) {
            (Some(deny), _) => Some(deny),
            (None, Some((updated_input, updated_permissions))) => {
                d.updated_input = updated_input.clone();
                Some(PermissionRequestDecision::Allow {
                    updated_input,
                    updated_permissions,
                })
            }
            (None, None) => None,
        };
    }
    if !blocks.is_empty() {
        let joined = blocks.join("\n");
        if matches!(event, HookEvent::Stop | HookEvent::SubagentStop) {
            d.stop_feedback = Some(format!("Stop hook feedback:\n{joined}"));
        }
        if let HookInput::UserPromptSubmit(i) = input {
            d.prompt_blocked_text = Some(if d.suppress_original_prompt {
                format!("UserPromptSubmit operation blocked by hook:\n{joined}")
            } else {
                format!(
                    "UserPromptSubmit operation blocked by hook:\n{joined}\n\nOriginal prompt: {}",
                    i.prompt
                )
            });
        }
        d.block = Some(joined);
    }
    d
}

/// Replaces a text over [`SPILL_THRESHOLD`] characters by a `<persisted-output>` notice with a
/// 2 KB preview; the full text goes to a file in the output dir. If the file cannot be
/// written the text is kept whole (losing context would be worse than a long message).
fn spill(shared: &Shared, event: HookEvent, field: &str, text: String) -> String {
    if text.chars().count() <= SPILL_THRESHOLD {
        return text;
    }
    let dir = shared.env.spill_dir();
    let n = shared.spill_counter.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(
        "hook-{n}-{}-{:016x}-{field}.txt",
        event.as_str(),
        fnv1a(text.as_bytes())
    ));
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &text));
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), %err, "cannot spill large hook output");
        return text;
    }
    let mut end = SPILL_PREVIEW_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "<persisted-output>\nOutput too large ({:.1}KB). Full output saved to: {}\n\nPreview (first 2KB):\n{}\n...\n</persisted-output>",
        text.len() as f64 / 1024.0,
        path.display(),
        &text[..end]
    )
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn outcome_word(outcome: &OutcomeKind) -> &'static str {
    match outcome {
        OutcomeKind::Success => "success",
        OutcomeKind::Blocking(_) => "blocking",
        OutcomeKind::NonBlocking(_) => "non_blocking",
        OutcomeKind::Cancelled => "cancelled",
    }
}

/// The run-log record of one handler run.
fn run_record(event: HookEvent, stdin_bytes: usize, answer: &Answer) -> Value {
    let run = &answer.run;
    let (status, exit_code, signal) = match &run.status {
        RunStatus::Exited(code) => ("exited", Some(*code), None),
        RunStatus::Signaled(sig) => ("signaled", None, Some(*sig)),
        RunStatus::TimedOut => ("timed_out", None, None),
        RunStatus::SpawnFailed(_) => ("spawn_failed", None, None),
        RunStatus::Backgrounded => ("backgrounded", None, None),
        RunStatus::Crashed(_) => ("crashed", None, None),
    };
    let error = match &run.status {
        RunStatus::SpawnFailed(e) | RunStatus::Crashed(e) => Some(e.clone()),
        RunStatus::Exited(_)
        | RunStatus::Signaled(_)
        | RunStatus::TimedOut
        | RunStatus::Backgrounded => None,
    };
    let decision = match (&run.outcome, &answer.permission, &answer.permission_request) {
        (OutcomeKind::Blocking(_), _, _) => Some("block"),
        (_, Some(PermissionDecision::Deny { .. }), _) => Some("deny"),
        (_, Some(PermissionDecision::Defer { .. }), _) => Some("defer"),
        (_, Some(PermissionDecision::Ask { .. }), _) => Some("ask"),
        (_, Some(PermissionDecision::Allow { .. }), _) => Some("allow"),
        (_, None, Some(PermissionRequestDecision::Allow { .. })) => Some("allow"),
        (_, None, Some(PermissionRequestDecision::Deny { .. })) => Some("deny"),
        (_, None, None) => None,
    };
    json!({
        "event": event.as_str(),
        "origin": run.origin.location.to_string(),
        "source": run.origin.source.as_str(),
        "event_key": run.origin.event_key,
        "group": run.origin.group,
        "index": run.origin.index,
        "command": run.command,
        "duration_ms": u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        "status": status,
        "exit_code": exit_code,
        "signal": signal,
        "timed_out": run.status == RunStatus::TimedOut,
        "error": error,
        "stdin_bytes": stdin_bytes,
        "stdout_bytes": run.stdout_bytes,
        "stderr_bytes": run.stderr_bytes,
        "stdout_capped": run.stdout_capped,
        "stderr_capped": run.stderr_capped,
        "outcome": outcome_word(&run.outcome),
        "decision": decision,
    })
}

/// Appends one JSON line per run to the run log (`O_APPEND`, one write + flush per line, so
/// concurrent runs never interleave inside a line) and echoes it to stderr under `debug`.
/// A background (`async`) hook gets two lines: `"status": "backgrounded"` when the event
/// proceeds, and its real end (exit, timeout, cancel at shutdown) when it finishes.
fn log_run(env: &HookEnvironment, event: HookEvent, stdin_bytes: usize, answer: &Answer) {
    let record = run_record(event, stdin_bytes, answer);
    let line = format!("{record}\n");
    tracing::debug!(target: "rein::hooks", run = %record, "hook run");
    if env.debug {
        eprint!("[hook] {line}");
    }
    if let Some(path) = &env.run_log {
        let result = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| OpenOptions::new().create(true).append(true).open(path))
            .and_then(|mut f| {
                f.write_all(line.as_bytes())?;
                f.flush()
            });
        if let Err(err) = result {
            tracing::warn!(path = %path.display(), %err, "cannot write the hook run log");
        }
    }
}
