//! The one door every hook point goes through: select handlers (event, matcher, `if`), dedup,
//! run them concurrently, fold their answers into the event's typed outcome.
//!
//! The dispatcher is generic over [`Event`] only at its two ends: [`Dispatcher::fire`] takes an
//! `E::Input` and returns an `E::Outcome`. Between them everything is event-agnostic: a
//! [`Target`] (event, match value, tool, cwd) for selection, stdin bytes for the runners, and
//! one [`Answer`] per handler for the event's fold ([`crate::hooks::events::merge`]).
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
//! 4. **Merge** the answers in *configuration order*, never completion order: see
//!    [`crate::hooks::events::merge`] and each event's `fold`.
//!
//! Every run is appended to the run log and gets a `tracing` span.

use std::any::Any;
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
use crate::hooks::config::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, OnFailure,
};
use crate::hooks::events::{Answer, Event, merge, stdin_bytes};
use crate::hooks::matcher::{self, Matcher};
use crate::hooks::output::{self, Interpreted};
use crate::hooks::registry::{InProcessHook, Registry};
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::spec::HookEvent;
use crate::hooks::timeout;
use crate::origin::{Location, SourceKind};
use crate::permissions::rule::RuleContext;

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
    handlers: Vec<ConfiguredHandler>,
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

/// What selection needs to know about one firing: the event-agnostic view of an input.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The event.
    pub event: HookEvent,
    /// What `matcher` is tested against; `None`: every matcher accepts.
    pub match_value: Option<&'a str>,
    /// Tool name and input, on tool events (for `if`).
    pub tool: Option<(&'a str, &'a Value)>,
    /// The input's `cwd`.
    pub cwd: &'a str,
}

impl<'a> Target<'a> {
    /// The target of an input of `E`.
    pub fn of<E: Event>(input: &'a E::Input) -> Target<'a> {
        Target {
            event: E::EVENT,
            match_value: E::match_value(input),
            tool: E::tool(input),
            cwd: &E::base(input).cwd,
        }
    }

    /// `"<Event>"` or `"<Event>:<match value>"`.
    pub fn hook_name(&self) -> String {
        match self.match_value {
            Some(v) => format!("{}:{v}", self.event),
            None => self.event.to_string(),
        }
    }
}

fn matcher_accepts(matcher: &Matcher, target: &Target<'_>) -> bool {
    let Some(value) = target.match_value else {
        return true;
    };
    if target.event.is_tool_event() {
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

/// Where a handler runs and with what (spec §5.3–5.4).
struct Plan {
    spec: CommandSpec,
    on_failure: OnFailure,
}

impl Dispatcher {
    /// A dispatcher over `handlers` (in configuration order, as the settings loader produces
    /// them), with an empty in-process registry.
    pub fn new(handlers: Vec<ConfiguredHandler>, env: HookEnvironment) -> Dispatcher {
        Dispatcher::with_registry(handlers, env, Registry::new())
    }

    /// A dispatcher that also runs the in-process hooks of `registry` (shared: hooks added or
    /// removed later take effect at the next firing).
    pub fn with_registry(
        handlers: Vec<ConfiguredHandler>,
        env: HookEnvironment,
        registry: Registry,
    ) -> Dispatcher {
        let (cancel, _) = tokio::sync::watch::channel(false);
        Dispatcher {
            handlers,
            registry,
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

    /// The configured handlers, in configuration order.
    pub fn handlers(&self) -> &[ConfiguredHandler] {
        &self.handlers
    }

    pub fn environment(&self) -> &HookEnvironment {
        &self.shared.env
    }

    /// The in-process handlers; register with `dispatcher.registry().hook(…)`.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The handlers that would run for `target`, deduplicated, in configuration order
    /// (configured handlers first, then in-process ones).
    pub fn select(&self, target: &Target<'_>) -> Vec<SelectedHandler<'_>> {
        let event = target.event;
        let env = &self.shared.env;
        let home = env.home_dir();
        let cwd = PathBuf::from(target.cwd);
        let ctx = RuleContext {
            cwd: &cwd,
            project_dir: &env.project_dir,
            home: &home,
        };
        let mut selected = Vec::new();
        for handler in &self.handlers {
            if handler.event != Some(event) || handler.inactive.is_some() {
                continue;
            }
            let HandlerKind::Command(command) = &handler.kind else {
                // Non-command types are marked inactive by the loader; this is the backstop.
                continue;
            };
            if !matcher_accepts(&handler.matcher, target) {
                continue;
            }
            if handler.if_text.is_some() || handler.if_condition.is_some() {
                // `if` is only evaluated on tool events; elsewhere the handler never runs.
                let (Some((tool, tool_input)), Some(cond)) = (target.tool, &handler.if_condition)
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
            if matcher_accepts(&hook.matcher, target) {
                selected.push(SelectedHandler::InProcess(hook));
            }
        }
        dedup(selected)
    }

    /// Fires one event: every selected handler runs concurrently, and their answers fold into
    /// the event's outcome in configuration order. Never fails: a handler that cannot start,
    /// crashes or hangs costs its own answer only.
    pub async fn fire<E: Event>(&self, input: &E::Input) -> E::Outcome {
        let target = Target::of::<E>(input);
        let selected = self.select(&target);
        if selected.is_empty() {
            return E::Outcome::default();
        }
        let stdin = Arc::new(stdin_bytes(input));
        let answers = self.run_all(&target, &selected, stdin, input).await;
        merge::<E>(input, answers)
    }

    /// Runs every selected handler concurrently; the answers come back in the order of
    /// `selected` (configuration order), large texts spilled.
    async fn run_all(
        &self,
        target: &Target<'_>,
        selected: &[SelectedHandler<'_>],
        stdin: Arc<Vec<u8>>,
        input: &(dyn Any + Send + Sync),
    ) -> Vec<Answer> {
        let event = target.event;
        let session_end_budget = self.session_end_budget(selected);
        let mut env_file_index = 0usize;
        let mut futures = Vec::with_capacity(selected.len());
        for sel in selected {
            let env_file = match sel {
                SelectedHandler::Command { .. } if event == HookEvent::SessionStart => {
                    let path = self.prepare_env_file(env_file_index);
                    env_file_index += 1;
                    Some(path)
                }
                SelectedHandler::Command { .. } | SelectedHandler::InProcess(_) => None,
            };
            let span = tracing::info_span!(
                "hook",
                event = %event,
                command = %sel.command_text(),
                origin = %sel.origin(),
            );
            let fut = self
                .run_selected(
                    sel,
                    target,
                    input,
                    Arc::clone(&stdin),
                    env_file,
                    session_end_budget,
                )
                .instrument(span);
            futures.push(fut);
        }
        let answers = futures_util::future::join_all(futures).await;
        answers
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
            .collect()
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

    /// The SessionEnd phase budget ([`timeout::session_end_budget`]) over `selected`;
    /// `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS` is read from settings `env` first, then from
    /// rein's environment.
    fn session_end_budget(&self, selected: &[SelectedHandler<'_>]) -> Duration {
        timeout::session_end_budget(
            selected.iter().map(|sel| match sel {
                SelectedHandler::Command { handler, .. } => handler.timeout,
                SelectedHandler::InProcess(_) => None,
            }),
            self.session_end_override().as_deref(),
        )
    }

    /// The budget of the whole SessionEnd phase as the session waits for it: over every active
    /// SessionEnd handler that runs a process or a request.
    pub fn session_end_phase_budget(&self) -> Duration {
        timeout::session_end_budget(
            self.handlers
                .iter()
                .filter(|h| h.event == Some(HookEvent::SessionEnd) && h.inactive.is_none())
                .filter(|h| match h.kind {
                    HandlerKind::Command(_) | HandlerKind::Http(_) => true,
                    HandlerKind::Prompt(_) | HandlerKind::Agent(_) | HandlerKind::McpTool(_) => {
                        false
                    }
                })
                .map(|h| h.timeout),
            self.session_end_override().as_deref(),
        )
    }

    fn session_end_override(&self) -> Option<String> {
        self.shared
            .env
            .extra_env
            .iter()
            .rev()
            .find(|(k, _)| k == timeout::SESSION_END_TIMEOUT_VAR)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(timeout::SESSION_END_TIMEOUT_VAR).ok())
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
        target: &Target<'_>,
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
        let cwd = hook_cwd(Path::new(target.cwd), &env.project_dir, &env.home_dir());
        let timeout = timeout::effective(target.event, handler.timeout, session_end);
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
        target: &Target<'_>,
        input: &(dyn Any + Send + Sync),
        stdin: Arc<Vec<u8>>,
        env_file: Option<PathBuf>,
        session_end: Duration,
    ) -> Answer {
        let answer = match sel {
            SelectedHandler::Command { handler, command } => {
                let plan = self.plan(handler, command, target, env_file.as_deref(), session_end);
                let text = command_display(command);
                if command.is_async || command.async_rewake {
                    self.spawn_background(
                        target,
                        handler.origin.clone(),
                        text,
                        plan,
                        Arc::clone(&stdin),
                    )
                } else {
                    self.run_foreground(target, handler.origin.clone(), text, plan, &stdin)
                        .await
                }
            }
            SelectedHandler::InProcess(hook) => {
                let timeout = timeout::effective(target.event, None, session_end);
                run_in_process(
                    hook,
                    sel.origin(),
                    sel.command_text(),
                    target.event,
                    input,
                    timeout,
                )
                .await
            }
        };
        log_run(&self.shared.env, target.event, stdin.len(), &answer);
        answer
    }

    /// Runs a synchronous handler. If it switches itself to async at runtime (its stdout
    /// starts with `{"async": true}`, spec §5.5) it counts as success now and finishes in the
    /// background like a configured `async` handler.
    async fn run_foreground(
        &self,
        target: &Target<'_>,
        origin: HandlerOrigin,
        text: String,
        plan: Plan,
        stdin: &[u8],
    ) -> Answer {
        let event = target.event;
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
                self.finish_later(target, origin, text, stdin.len(), finished);
                answer
            }
        }
    }

    /// Starts a configured `async` handler in the background; it counts as success now.
    fn spawn_background(
        &self,
        target: &Target<'_>,
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
        self.finish_later(target, origin.clone(), text.clone(), stdin_len, finished);
        bare(HandlerRun {
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
        target: &Target<'_>,
        origin: HandlerOrigin,
        text: String,
        stdin_len: usize,
        finished: impl Future<Output = RawRun> + Send + 'static,
    ) {
        let shared = Arc::clone(&self.shared);
        let event = target.event;
        let hook_name = target.hook_name();
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
    event: HookEvent,
    input: &(dyn Any + Send + Sync),
    timeout: Duration,
) -> Answer {
    let started = Instant::now();
    let run = |status: RunStatus, outcome: OutcomeKind, duration: Duration| HandlerRun {
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
        json: None,
    };
    let crashed = |why: String, duration: Duration| {
        bare(run(
            RunStatus::Crashed(why.clone()),
            OutcomeKind::NonBlocking(why),
            duration,
        ))
    };
    let Some(call) = (hook.handler)(input) else {
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
            let mut answer = interpret(event, origin.clone(), &text, &raw, OnFailure::Continue);
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

/// An answer with nothing but its run.
fn bare(run: HandlerRun) -> Answer {
    Answer {
        run,
        output: None,
        additional_context: None,
        system_message: None,
        success_text: None,
    }
}

fn answer_from(event: HookEvent, interpreted: Interpreted, run: HandlerRun) -> Answer {
    let mut answer = bare(run);
    answer.success_text = interpreted.plain_stdout.filter(|s| !s.is_empty());
    let Some(out) = interpreted.output else {
        return answer;
    };
    let reads_context = event
        .spec()
        .output
        .iter()
        .any(|f| f.name == "additionalContext");
    if reads_context {
        answer.additional_context = out
            .hook_specific
            .as_ref()
            .and_then(|hso| hso.get("additionalContext"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    answer.system_message = out.system_message.clone();
    answer.output = Some(out);
    answer
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

/// The permission answer of an output, in one word, for the run log: PreToolUse's
/// `permissionDecision` (or the legacy `decision: approve`), PermissionRequest's
/// `decision.behavior`.
fn decision_word(event: HookEvent, output: &output::HookJsonOutput) -> Option<&'static str> {
    let hso = output.hook_specific.as_ref();
    let word = |v: Option<&Value>| match v.and_then(Value::as_str) {
        Some("allow") => Some("allow"),
        Some("deny") => Some("deny"),
        Some("ask") => Some("ask"),
        Some("defer") => Some("defer"),
        Some(_) | None => None,
    };
    word(hso.and_then(|h| h.get("permissionDecision")))
        .or_else(|| (event == HookEvent::PreToolUse && output.approves()).then_some("allow"))
        .or_else(|| {
            word(
                hso.and_then(|h| h.get("decision"))
                    .and_then(|d| d.get("behavior")),
            )
        })
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
    let decision = match &run.outcome {
        OutcomeKind::Blocking(_) => Some("block"),
        OutcomeKind::Success | OutcomeKind::NonBlocking(_) | OutcomeKind::Cancelled => {
            answer.output.as_ref().and_then(|o| decision_word(event, o))
        }
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
