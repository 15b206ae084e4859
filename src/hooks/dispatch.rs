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
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::hooks::answer::{bare, interpret};
use crate::hooks::command::{self, CommandForm, CommandSpec, RawRun, RunEnd};
use crate::hooks::config::{
    CommandHandler, ConfiguredHandler, HandlerKind, HandlerOrigin, OnFailure,
};
use crate::hooks::environment::{hook_cwd, hook_env, removed_env, substitute_project_dir};
use crate::hooks::events::{Answer, Event, merge, stdin_bytes};
use crate::hooks::http::{self as http_hook, HttpHookClient, HttpRun};
use crate::hooks::in_process::run_in_process;
use crate::hooks::mcp_tool::{self, McpCaller, McpToolRun};
use crate::hooks::preflight;
use crate::hooks::prompt_hook::{self, ModelHooks};
use crate::hooks::registry::Registry;
use crate::hooks::run::{HandlerRun, OutcomeKind, RunStatus};
use crate::hooks::select::{command_display, each_tool_name, matcher_accepts};
use crate::hooks::shadow::ShadowLog;
use crate::hooks::spec::{EnvFile, HookEvent};
use crate::hooks::spill::spill;
use crate::hooks::timeout;
use crate::permissions::rule::RuleContext;

pub use crate::hooks::environment::HookEnvironment;
pub use crate::hooks::select::{SelectedHandler, Target, dedup, tool_names};

/// State shared with background (`async`) hook tasks.
#[derive(Debug)]
struct Shared {
    /// Replaced whole when the session changes (`/clear`, `/resume`): see
    /// [`Dispatcher::switch_session`].
    env: std::sync::RwLock<Arc<HookEnvironment>>,
    env_files: Mutex<Vec<PathBuf>>,
    async_context: Mutex<Vec<String>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    cancel: tokio::sync::watch::Sender<bool>,
    /// One connection pool for every http hook of the session, built at the first http hook:
    /// loading the system's root certificates would cost every session ~10 ms of start-up.
    http: std::sync::OnceLock<HttpHookClient>,
    /// The session's MCP servers, for mcp_tool hooks (set once they have started).
    mcp: std::sync::OnceLock<Arc<dyn McpCaller>>,
    /// Decisions shadow mode withheld ([`Dispatcher::shadow_log`]).
    shadowed: ShadowLog,
}

impl Shared {
    /// The hook environment of the current session.
    fn env(&self) -> Arc<HookEnvironment> {
        match self.env.read() {
            Ok(env) => Arc::clone(&env),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }
}

impl std::fmt::Debug for dyn McpCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpCaller")
    }
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
    /// What runs prompt and agent hooks; without it they are skipped.
    models: Option<Arc<dyn ModelHooks>>,
    status: Option<StatusSink>,
}

/// Receives the `statusMessage` of running hooks ([`Dispatcher::set_status_sink`]).
#[derive(Clone)]
pub struct StatusSink(pub Arc<StatusFn>);

/// What a [`StatusSink`] calls.
pub type StatusFn = dyn Fn(Option<&str>) + Send + Sync;

impl std::fmt::Debug for StatusSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StatusSink")
    }
}

/// Where a handler runs and with what (spec §5.3–5.4).
pub(crate) struct Plan {
    pub(crate) spec: CommandSpec,
    on_failure: OnFailure,
    /// Why it cannot be started as configured although the hook itself is fine
    /// ([`preflight::environment_fault`], a project dir that is not UTF-8): it is not started
    /// and counts as a hook that could not start.
    environment_fault: Option<String>,
    /// The handler runs in shadow mode ([`crate::hooks::shadow`]).
    shadow: bool,
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
            models: None,
            handlers,
            registry,
            shared: Arc::new(Shared {
                env: std::sync::RwLock::new(Arc::new(env)),
                env_files: Mutex::new(Vec::new()),
                async_context: Mutex::new(Vec::new()),
                background: Mutex::new(Vec::new()),
                cancel,
                http: std::sync::OnceLock::new(),
                mcp: std::sync::OnceLock::new(),
                shadowed: ShadowLog::default(),
            }),
            status: None,
        }
    }

    /// Lets prompt and agent hooks run, judged by `models`.
    pub fn set_model_hooks(&mut self, models: Arc<dyn ModelHooks>) {
        self.models = Some(models);
    }

    /// Where the `statusMessage` of the handlers about to run goes (joined by ` · `), and
    /// `None` once they finished: the interactive terminal shows it in its spinner.
    pub fn set_status_sink(&mut self, sink: StatusSink) {
        self.status = Some(sink);
    }

    fn status_of(&self, selected: &[SelectedHandler<'_>]) -> Option<String> {
        self.status.as_ref()?;
        let texts: Vec<&str> = selected
            .iter()
            .filter_map(|sel| match sel {
                SelectedHandler::Command { handler, .. }
                | SelectedHandler::Http { handler, .. }
                | SelectedHandler::McpTool { handler, .. }
                | SelectedHandler::Model { handler, .. } => handler.status_message.as_deref(),
                SelectedHandler::InProcess(_) => None,
            })
            .collect();
        (!texts.is_empty()).then(|| texts.join(" · "))
    }

    /// Gives mcp_tool hooks the session's MCP servers (once; later calls are ignored).
    pub fn set_mcp_caller(&self, caller: Arc<dyn McpCaller>) {
        let _ = self.shared.mcp.set(caller);
    }

    /// The configured handlers, in configuration order.
    pub fn handlers(&self) -> &[ConfiguredHandler] {
        &self.handlers
    }

    pub fn environment(&self) -> Arc<HookEnvironment> {
        self.shared.env()
    }

    /// Runs later hooks for session `session_id` (`/clear`, `/resume`): its
    /// `CLAUDE_CODE_SESSION_ID`, its `CLAUDE_ENV_FILE` directory and run log, and `output_dir`
    /// for texts spilled to files. The env files of the session left are forgotten.
    pub fn switch_session(&self, session_id: &str, output_dir: Option<PathBuf>) {
        let current = self.shared.env();
        let next = current.for_session(session_id, output_dir);
        match self.shared.env.write() {
            Ok(mut env) => *env = Arc::new(next),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(next),
        }
        lock(&self.shared.env_files).clear();
    }

    /// Starts, in the background, one pre-started interpreter for each command handler that
    /// runs warm ([`crate::hooks::warm::warm_up`]).
    pub fn warm_up(&self) {
        crate::hooks::warm::warm_up(self);
    }

    /// The in-process handlers; register with `dispatcher.registry().hook(…)`.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The handlers that would run for `target`, deduplicated, in configuration order
    /// (configured handlers first, then in-process ones).
    pub fn select(&self, target: &Target<'_>) -> Vec<SelectedHandler<'_>> {
        let event = target.event;
        let env = self.shared.env();
        let home = env.home_dir();
        let cwd = PathBuf::from(target.cwd);
        let ctx = RuleContext {
            cwd: &cwd,
            project_dir: &env.project_dir,
            home: &home,
        };
        let mut selected = Vec::new();
        let model_hooks_off = prompt_hook::model_hooks_off();
        for handler in &self.handlers {
            if handler.event != Some(event) || handler.inactive.is_some() {
                continue;
            }
            let chosen = match &handler.kind {
                HandlerKind::Prompt(prompt) | HandlerKind::Agent(prompt) => {
                    if self.models.is_none() || model_hooks_off {
                        continue;
                    }
                    SelectedHandler::Model {
                        handler,
                        prompt,
                        agent: matches!(handler.kind, HandlerKind::Agent(_)),
                    }
                }
                // Types rein does not run are marked inactive by the loader; this is the
                // backstop.
                _ => match SelectedHandler::configured(handler) {
                    Some(chosen) => chosen,
                    None => continue,
                },
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
            selected.push(chosen);
        }
        for hook in self.registry.for_event(event) {
            if matcher_accepts(&hook.matcher, target) {
                selected.push(SelectedHandler::InProcess(Box::new(hook)));
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
        let status = self.status_of(&selected);
        if let (Some(sink), Some(text)) = (&self.status, &status) {
            (sink.0)(Some(text.as_str()));
        }
        let answers = self.run_all(&target, &selected, stdin, input).await;
        if let (Some(sink), Some(_)) = (&self.status, &status) {
            (sink.0)(None);
        }
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
                SelectedHandler::Command { .. } if event.spec().env_file != EnvFile::None => {
                    let path = self.prepare_env_file(event, env_file_index);
                    env_file_index += 1;
                    Some(path)
                }
                SelectedHandler::Command { .. }
                | SelectedHandler::Http { .. }
                | SelectedHandler::McpTool { .. }
                | SelectedHandler::Model { .. }
                | SelectedHandler::InProcess(_) => None,
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
                a.additional_context = a.additional_context.map(|t| {
                    spill(
                        &self.shared.env().spill_dir(),
                        target.tool_use_id,
                        event,
                        "additionalContext",
                        t,
                    )
                });
                a.success_text = a.success_text.map(|t| {
                    spill(
                        &self.shared.env().spill_dir(),
                        target.tool_use_id,
                        event,
                        "stdout",
                        t,
                    )
                });
                a.system_message = a.system_message.map(|t| {
                    spill(
                        &self.shared.env().spill_dir(),
                        target.tool_use_id,
                        event,
                        "systemMessage",
                        t,
                    )
                });
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
            selected
                .iter()
                .map(|sel| sel.handler().and_then(|h| h.timeout)),
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
                    HandlerKind::Command(_) | HandlerKind::Http(_) | HandlerKind::McpTool(_) => {
                        true
                    }
                    HandlerKind::Prompt(_) | HandlerKind::Agent(_) => false,
                })
                .map(|h| h.timeout),
            self.session_end_override().as_deref(),
        )
    }

    fn session_end_override(&self) -> Option<String> {
        self.shared
            .env()
            .extra_env
            .iter()
            .rev()
            .find(|(k, _)| k == timeout::SESSION_END_TIMEOUT_VAR)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(timeout::SESSION_END_TIMEOUT_VAR).ok())
    }

    /// Creates `<env_file_dir>/<event>-hook-<n>.sh` (empty: `sessionstart-hook-0.sh`,
    /// `cwdchanged-hook-0.sh`) and records it when the Bash tool sources it.
    fn prepare_env_file(&self, event: HookEvent, index: usize) -> PathBuf {
        let dir = self.shared.env().env_file_dir.clone();
        let name = event.as_str().to_ascii_lowercase();
        let path = dir.join(format!("{name}-hook-{index}.sh"));
        let created = crate::private_fs::write(&path, b"");
        if let Err(err) = created {
            tracing::warn!(path = %path.display(), %err, "cannot create CLAUDE_ENV_FILE");
        }
        if event.spec().env_file == EnvFile::Sourced {
            let mut files = lock(&self.shared.env_files);
            if !files.contains(&path) {
                files.push(path.clone());
            }
        }
        path
    }

    /// Builds the process spec of a command handler (spec §5.4).
    pub(crate) fn plan(
        &self,
        handler: &ConfiguredHandler,
        command: &CommandHandler,
        target: &Target<'_>,
        env_file: Option<&Path>,
        session_end: Duration,
    ) -> Plan {
        let env = self.shared.env();
        // Why refuse rather than pass a lossy copy: a garbled CLAUDE_PROJECT_DIR makes a guard
        // script "not found" (exit 127, non-blocking) and the call it should deny runs. The
        // CLI and `Engine` refuse such a project dir at start; this is the backstop.
        let project_fault = env.project_dir.to_str().is_none().then(|| {
            format!(
                "not started: the project directory {:?} is not valid UTF-8, so \
                 CLAUDE_PROJECT_DIR cannot be given to the hook unchanged",
                env.project_dir
            )
        });
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
        spec.env = hook_env(
            &env,
            env_file,
            target.effort,
            handler.origin.plugin.as_deref(),
        );
        spec.env_remove = removed_env();
        spec.warm = crate::hooks::warm::for_handler(handler, command, &spec, &project);
        // onFailure is ignored for async hooks (spec §1.6); `output::interpret` itself ignores
        // it on Stop and the other events where it has no meaning.
        let on_failure = if command.is_async || command.async_rewake {
            OnFailure::Continue
        } else {
            handler.on_failure
        };
        let environment_fault = project_fault.or_else(|| preflight::environment_fault(&spec));
        Plan {
            spec,
            on_failure,
            environment_fault,
            shadow: handler.shadow,
        }
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
                if let Some(fault) = plan.environment_fault {
                    let raw = RawRun::not_started(fault);
                    interpret(
                        target.event,
                        handler.origin.clone(),
                        &text,
                        &raw,
                        plan.on_failure,
                    )
                } else if command.is_async || command.async_rewake {
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
            SelectedHandler::Model {
                handler,
                prompt,
                agent,
            } => match &self.models {
                Some(models) => {
                    let transcript_path = serde_json::from_slice::<serde_json::Value>(&stdin)
                        .ok()
                        .and_then(|v| v.get("transcript_path")?.as_str().map(str::to_string))
                        .unwrap_or_default();
                    let cwd = target.cwd.to_string();
                    prompt_hook::run(
                        models.as_ref(),
                        handler,
                        prompt,
                        *agent,
                        target.event,
                        &stdin,
                        (transcript_path, cwd),
                    )
                    .await
                }
                None => bare(HandlerRun::without_output(
                    handler.origin.clone(),
                    prompt.prompt.clone(),
                    RunStatus::SpawnFailed("no model to evaluate the hook".to_string()),
                    OutcomeKind::NonBlocking("no model to evaluate the hook".to_string()),
                    Duration::ZERO,
                )),
            },
            SelectedHandler::Http { handler, http } => {
                let env = self.shared.env();
                let request = HttpRun {
                    event: target.event,
                    origin: handler.origin.clone(),
                    handler: http,
                    on_failure: handler.on_failure,
                    timeout: timeout::effective(target.event, handler.timeout, session_end),
                    policy: &env.http_policy,
                    extra_env: &env.extra_env,
                };
                // The POST body is the hook input without stdin's trailing newline.
                let body = stdin.strip_suffix(b"\n").unwrap_or(&stdin);
                http_hook::run(
                    self.shared.http.get_or_init(HttpHookClient::new),
                    request,
                    body,
                )
                .await
            }
            SelectedHandler::McpTool { handler, mcp } => {
                let request = McpToolRun {
                    event: target.event,
                    origin: handler.origin.clone(),
                    handler: mcp,
                    on_failure: handler.on_failure,
                    timeout: timeout::effective(target.event, handler.timeout, session_end),
                };
                let caller = self.shared.mcp.get().map(|c| c.as_ref());
                mcp_tool::run(caller, request, &stdin).await
            }
            SelectedHandler::InProcess(hook) => {
                let timeout = timeout::effective(target.event, hook.timeout, session_end);
                run_in_process(
                    hook,
                    sel.origin(),
                    sel.command_text(),
                    target.event,
                    input,
                    &stdin,
                    timeout,
                )
                .await
            }
        };
        let mut answer = answer;
        answer.run.matcher = sel.handler().and_then(|h| h.matcher_text.clone());
        let shadow = sel.handler().is_some_and(|h| h.shadow);
        crate::hooks::shadow::settle(
            &self.shared.env(),
            &self.shared.shadowed,
            target.event,
            stdin.len(),
            answer,
            shadow,
        )
    }

    /// The decisions shadow mode withholds, shared: keep it to read them after the dispatcher
    /// has been handed to a session.
    pub fn shadow_log(&self) -> ShadowLog {
        self.shared.shadowed.clone()
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
                self.finish_later(target, origin, text, stdin.len(), plan.shadow, finished);
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
        let mut plan = plan;
        plan.spec.kill_grace = command::SESSION_END_GRACE;
        let finished = async move {
            let cancelled = async move {
                let _ = cancel.wait_for(|stop| *stop).await;
            };
            command::run_until(&plan.spec, &stdin, cancelled).await
        };
        let shadow = plan.shadow;
        self.finish_later(
            target,
            origin.clone(),
            text.clone(),
            stdin_len,
            shadow,
            finished,
        );
        bare(HandlerRun::without_output(
            origin,
            text,
            RunStatus::Backgrounded,
            OutcomeKind::Success,
            Duration::ZERO,
        ))
    }

    /// Awaits a background run in a task: logs it, and queues its `additionalContext` and
    /// `systemMessage` for [`Dispatcher::take_async_context`].
    fn finish_later(
        &self,
        target: &Target<'_>,
        origin: HandlerOrigin,
        text: String,
        stdin_len: usize,
        shadow: bool,
        finished: impl Future<Output = RawRun> + Send + 'static,
    ) {
        let shared = Arc::clone(&self.shared);
        let event = target.event;
        let tool_use_id = target.tool_use_id.map(str::to_string);
        let handle = tokio::spawn(async move {
            let raw = finished.await;
            let answer = interpret(event, origin, &text, &raw, OnFailure::Continue);
            let answer = crate::hooks::shadow::settle(
                &shared.env(),
                &shared.shadowed,
                event,
                stdin_len,
                answer,
                shadow,
            );
            // Claude Code 2.1.328 hands a finished background hook's output to the model as one
            // bare text: `systemMessage`, then `additionalContext`, a newline between (fixture
            // `tests/fixtures/cc-2.1.328/async_end`).
            let spilled = |field: &str, text: String| {
                spill(
                    &shared.env().spill_dir(),
                    tool_use_id.as_deref(),
                    event,
                    field,
                    text,
                )
            };
            let parts: Vec<String> = [
                answer
                    .system_message
                    .map(|msg| spilled("systemMessage", msg)),
                answer
                    .additional_context
                    .map(|ctx| spilled("additionalContext", ctx)),
            ]
            .into_iter()
            .flatten()
            .collect();
            let out: Vec<String> = if parts.is_empty() {
                Vec::new()
            } else {
                vec![parts.join("\n")]
            };
            lock(&shared.async_context).extend(out);
        });
        lock(&self.shared.background).push(handle);
    }
}
